#!/usr/bin/env bash
# Issue 27's bars on the lent GPU machine: A/A pairs of the 24-config plan, a noise baseline, the power test.
#
#   bash .device/on-device.sh bash benchmarks/aa_gpu.sh [STEP...]     (default: pair1 pair2 pair3 power noise)
#
# STEP pairN  two sweeps of benchmarks/sweep_2gpu.toml (labels aaN-a, aaN-b: the same code, minutes apart, one GPU),
#             each --repeats $REPEATS, then 'results --compare aaN-a aaN-b' (the bar: 0 regressions, "too noisy to
#             judge" on at most 10% of the 24 configs). pair1 then stores the noise baseline of its own runs
#             ('results --noise --save-noise'): pairs 2 and 3 are judged with it pooled in. Run pair1 first.
# STEP power  benchmarks/aa_power.toml (an MLP; MODELCOST_AA_SLOWER=1 adds +15% FLOPs at batch 1, +5% at 64, same
#             name and file): a base sweep and two slowed ones, each --repeats $REPEATS, compared base vs slowed
#             twice (the bar: every slowed config a REGRESSION in 2 of 2), with the FLOPs added per config.
# STEP noise  'results --noise' over every run, and the sweep report (Markdown with its noise plot, and HTML).
# The database lives in $AA_DIR (default /tmp/aa_gpu, kept while the machine stays warm, so steps may be split over
# several device calls) and is copied to $OUT after each step with each step's log. Budget: a config's child
# process costs a few seconds on the H100 VM (process start, torch import, model build, static analysis, timing);
# a pair is 2 x $REPEATS x 24 of them. The script prints each step's wall time and the median config time, so
# the next call can be sized; on 2 GPUs, WORKERS=2 halves a sweep's wall time (one GPU per worker).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/aa_gpu_out}
AA_DIR=${AA_DIR:-/tmp/aa_gpu}
REPEATS=${REPEATS:-2}
WORKERS=${WORKERS:-1}
DB=$AA_DIR/aa.sqlite
mkdir -p "$OUT" "$AA_DIR"
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pyc} MODELCOST_CACHE_DIR=$AA_DIR/cache
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
unset PYTHONDONTWRITEBYTECODE
mc() { python3 -m modelcost "$@"; }
steps=${*:-pair1 pair2 pair3 power noise}

python3 -c "import torch, transformers, onnx, onnxruntime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'ort', onnxruntime.get_available_providers())" || exit 1
mc analyze zoo:resnet18 --static > /dev/null && echo "bytecode cache filled ($PYTHONPYCACHEPREFIX)"

sweep() {  # PLAN LABEL [VAR=VALUE]: one sweep of --repeats $REPEATS; --force (the same content is measured again)
  env ${3:-} timeout 590 python3 -m modelcost sweep "$1" --db "$DB" --label "$2" --repeats "$REPEATS" \
    --workers "$WORKERS" --force | grep -E "^(sweep run|run [0-9]+ |note:)|unstable|failed|oom"
  return 0  # a sweep that measured nothing says so above; the steps go on
}

compare() {  # A B EXPECT: 'results --compare' and its exit code beside what the bar expects
  mc results "$DB" --compare "$1" "$2"
  echo "=== compare $1 $2: exit $? (the bar expects $3)"
}

config_time() {
  python3 - "$DB" <<'PY'
import statistics, sys
from modelcost.sweep.db import ResultsDB
rows = ResultsDB(sys.argv[1], create=False).results()
d = [r["duration_s"] for r in rows if r["duration_s"]]
print(f"config child process: median {statistics.median(d):.1f} s over {len(d)} rows" if d else "no rows")
PY
}

for step in $steps; do
  t0=$(date +%s)
  echo "=== $step (repeats $REPEATS, workers $WORKERS)"
  case "$step" in
    pair[123])
      n=${step#pair}
      sweep benchmarks/sweep_2gpu.toml "aa$n-a"
      sweep benchmarks/sweep_2gpu.toml "aa$n-b"
      compare "aa$n-a" "aa$n-b" "0"
      if [ "$n" = 1 ]; then mc results "$DB" --noise --save-noise; fi ;;
    power)
      python3 benchmarks/aa_power.py flops
      sweep benchmarks/aa_power.toml power-base
      sweep benchmarks/aa_power.toml power-slow1 MODELCOST_AA_SLOWER=1
      sweep benchmarks/aa_power.toml power-slow2 MODELCOST_AA_SLOWER=1
      for slow in power-slow1 power-slow2; do
        python3 benchmarks/aa_power.py db "$DB" power-base "$slow"
        compare power-base "$slow" "1: every config a REGRESSION"
      done ;;
    noise)
      mc results "$DB" --noise
      mc results "$DB" --report "$OUT/aa_report.md" && mc results "$DB" --report "$OUT/aa_report.html" ;;
    *) echo "unknown step '$step': pair1, pair2, pair3, power or noise"; exit 2 ;;
  esac
  echo "=== $step took $(( $(date +%s) - t0 )) s; $(config_time)"
  cp "$DB" "$OUT/aa.sqlite"
done
