#!/usr/bin/env bash
# Issue 9's figures on the lent GPU machine, from one committed script (a device call should run a file that is in
# the repository, read before it is sent, not one written for the occasion).
#
#   bash .device/on-device.sh bash benchmarks/answer_time_device.sh STEP...
#
# STEP: a zoo model (resnet50, bert-base, ...) -> analyze cold, recommend --batch-sizes 1,64,256 cold and warm
#       (answer_time.py); exhaustive-MODEL -> recommend --exhaustive at batch 256 on that model's recommend cache
#       (run it after the model's own step, which fills that cache)
# Each step writes $OUT/answer_time_<step>.json (the summary) and $OUT/<step>.tgz (each command's report JSON and
# full log with MODELCOST_TRACE lines; packed, as the device tool brings back at most 8 files). Timeouts: TIMEOUT_S per command (default 170), EXHAUSTIVE_TIMEOUT_S (default 400). STEPS: which of a
# model's commands run (default analyze-cold,recommend-cold,recommend-warm).
#
# The lent machine's torch ships without bytecode caches and Python writes none (no __pycache__ in its
# site-packages): every process would compile torch's sources again (7-14 s, BENCHMARKS.md). A pip install compiles
# them once; here PYTHONPYCACHEPREFIX gives Python a place to keep them, filled once below before any timed command.
# "cold" still means empty modelcost and inductor caches (answer_time.py gives each model a fresh folder).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/answer_time_out}
TIMEOUT_S=${TIMEOUT_S:-170}
EXHAUSTIVE_TIMEOUT_S=${EXHAUSTIVE_TIMEOUT_S:-400}
STEPS=${STEPS:-analyze-cold,recommend-cold,recommend-warm}
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pyc}
unset PYTHONDONTWRITEBYTECODE
export MODELCOST_TRACE=1

if [ $# -eq 0 ]; then
  sed -n '2,13p' "$0"
  exit 2
fi
zoo=$(python3 -m modelcost zoo 2>/dev/null | grep -o 'zoo:[A-Za-z0-9_.-]*' | sed 's/^zoo://' | tr '\n' ' ')
for step in "$@"; do
  case " $zoo " in
    *" ${step#exhaustive-} "*) ;;
    *) echo "unknown step '$step': a zoo model or exhaustive-MODEL; the zoo has: $zoo"; exit 2 ;;
  esac
done

echo "python: $(python3 -c 'import sys; print(sys.version.split()[0], "bytecode writing", "off" if sys.dont_write_bytecode else "on")')"
python3 -c "import torch, torch._inductor.async_compile, transformers, onnx, onnxruntime" \
  && python3 -m modelcost analyze zoo:resnet18 --static > /dev/null \
  && echo "bytecode cache filled ($PYTHONPYCACHEPREFIX)"

for step in "$@"; do
  echo "=== $step"
  case "$step" in
    exhaustive-*)
      model=${step#exhaustive-}
      python3 benchmarks/answer_time.py "zoo:$model" --steps "" --exhaustive --exhaustive-batch-sizes 256 \
        --exhaustive-timeout-s "$EXHAUSTIVE_TIMEOUT_S" --cache "/tmp/at-$model" --out "$OUT/$step" ;;
    *)
      python3 benchmarks/answer_time.py "zoo:$step" --steps "$STEPS" \
        --timeout-s "$TIMEOUT_S" --cache "/tmp/at-$step" --out "$OUT/$step" ;;
  esac
  mv "$OUT/$step"/answer_time_*.json "$OUT/answer_time_$step.json" 2>/dev/null
  tar czf "$OUT/$step.tgz" -C "$OUT" "$step" && rm -rf "${OUT:?}/$step"
done
