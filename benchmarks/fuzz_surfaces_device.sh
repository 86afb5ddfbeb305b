#!/bin/bash
# The long runs of tests/fuzz/fuzz_surfaces.py (issue 24), spread over the 16 cores of the lent GPU machine:
# 5,000 cases per surface in chunks of 1,000 (each chunk's summary is kept even if a later one runs out of time).
# Run from the repository root with the wheels of pydantic in .whl/ (the machine has no registry):
#   bash benchmarks/fuzz_surfaces_device.sh OUT_DIR
set -u
out=${1:-fuzz-out}; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
lane() {  # surface jobs: five chunks of 1,000 cases, one after the other
  for start in 0 1000 2000 3000 4000; do
    python3 tests/fuzz/fuzz_surfaces.py --surface "$1" --seed 1 --start $start --cases 1000 --jobs "$2" \
      --timeout-s 60 --mem-mb 16384 --json "$out/$1-$start.json" > "$out/$1-$start.log" 2>&1
    grep -m1 "cases (seed" "$out/$1-$start.log"
  done
}
lane plan 2 & lane db 1 & lane cli 5 & lane llm 8 &
wait
