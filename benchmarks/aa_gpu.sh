#!/usr/bin/env bash
# Issue 27's bars on the lent GPU machine: A/A pairs of the 24-config plan, a noise baseline, the power test.
#
#   bash .device/on-device.sh bash benchmarks/aa_gpu.sh [STEP...]     (default: pair1 pair2 pair3 power judge noise)
#
# STEP pairN  two sweeps of benchmarks/sweep_2gpu.toml (labels aaN-a, aaN-b: the same code, minutes apart, one GPU),
#             each --repeats $REPEATS (default 1).
# STEP judge  one noise baseline over every A/A run ('results --noise --save-noise --model ...' of the plan's three
#             models), then 'results --compare aaN-a aaN-b' for each pair that is there: each pair is judged by the
#             noise of the others (a baseline measured on a run being compared is worked out again without it).
#             The bar: 0 regressions, "too noisy to judge" on at most 10% of the 24 configs. Needs no GPU: it can
#             run on the database that comes back (AA_DIR=folder-holding-aa.sqlite bash benchmarks/aa_gpu.sh judge).
# STEP power  benchmarks/aa_power.toml (a GPU-bound MLP; MODELCOST_AA_SLOWER=1 adds +15% FLOPs at batch 1, +5% at
#             64, same name and file): a base sweep and two slowed ones, each --repeats $POWER_REPEATS (default 3),
#             compared base vs slowed twice (the bar: every slowed config a REGRESSION in 2 of 2), with the FLOPs
#             added per config.
# STEP noise  'results --noise' over every run, and the sweep report (Markdown with its noise plot, and HTML).
# The database lives in $AA_DIR (default /tmp/aa_gpu, kept while the machine stays warm, so steps may be split over
# several device calls) and is copied to $OUT after each step with each step's log. On a fresh machine, AA_SEED=FILE
# (a database an earlier call brought back, carried in the working tree) starts it. Budget: a config's child
# process costs a few seconds on the H100 VM (process start, torch import, model build, static analysis, timing);
# a pair is 2 x $REPEATS x 24 of them. The script prints each step's wall time and the median config time, so
# the next call can be sized; on 2 GPUs, WORKERS=2 halves a sweep's wall time (one GPU per worker).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/aa_gpu_out}
AA_DIR=${AA_DIR:-/tmp/aa_gpu}
REPEATS=${REPEATS:-1}
POWER_REPEATS=${POWER_REPEATS:-3}
WORKERS=${WORKERS:-1}
DB=$AA_DIR/aa.sqlite
mkdir -p "$OUT" "$AA_DIR"
# A fresh machine (the last one was given back): start from the database an earlier call brought back
if [ ! -f "$DB" ] && [ -n "${AA_SEED:-}" ] && [ -f "$AA_SEED" ]; then cp "$AA_SEED" "$DB" && echo "seeded $DB from $AA_SEED"; fi
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pyc} MODELCOST_CACHE_DIR=$AA_DIR/cache
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
unset PYTHONDONTWRITEBYTECODE
mc() { python3 -m modelcost "$@"; }
steps=${*:-pair1 pair2 pair3 power judge noise}

if [ "$steps" != judge ] && [ "$steps" != noise ]; then  # steps that measure: the GPU stack, a warm bytecode cache
  python3 -c "import torch, transformers, onnx, onnxruntime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'ort', onnxruntime.get_available_providers())" || exit 1
  mc analyze zoo:resnet18 --static > /dev/null && echo "bytecode cache filled ($PYTHONPYCACHEPREFIX)"
fi

sweep() {  # PLAN LABEL REPEATS [VAR=VALUE]: one sweep; --force (the same content is measured again)
  env ${4:-} timeout 590 python3 -m modelcost sweep "$1" --db "$DB" --label "$2" --repeats "$3" \
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
      sweep benchmarks/sweep_2gpu.toml "aa$n-a" "$REPEATS"
      sweep benchmarks/sweep_2gpu.toml "aa$n-b" "$REPEATS" ;;
    judge)
      for m in resnet50 bert-base mobilenet_v2; do mc results "$DB" --model "$m" --noise --save-noise > /dev/null; done
      for n in 1 2 3; do compare "aa$n-a" "aa$n-b" "0"; done ;;
    power)
      python3 benchmarks/aa_power.py flops
      sweep benchmarks/aa_power.toml power-base "$POWER_REPEATS"
      sweep benchmarks/aa_power.toml power-slow1 "$POWER_REPEATS" MODELCOST_AA_SLOWER=1
      sweep benchmarks/aa_power.toml power-slow2 "$POWER_REPEATS" MODELCOST_AA_SLOWER=1
      for slow in power-slow1 power-slow2; do
        python3 benchmarks/aa_power.py db "$DB" power-base "$slow"
        compare power-base "$slow" "1: every config a REGRESSION"
      done ;;
    noise)
      mc results "$DB" --noise
      mc results "$DB" --report "$OUT/aa_report.md" && mc results "$DB" --report "$OUT/aa_report.html" ;;
    *) echo "unknown step '$step': pair1, pair2, pair3, judge, power or noise"; exit 2 ;;
  esac
  echo "=== $step took $(( $(date +%s) - t0 )) s; $(config_time)"
  cp "$DB" "$OUT/aa.sqlite"
done
