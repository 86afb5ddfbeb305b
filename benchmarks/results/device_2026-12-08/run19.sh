#!/bin/bash
# device script of the thirty-first session (not committed): stage 1 calibrates (the long grouped 1-D conv classes
# included) and measures the first models of the nineteenth set; later stages measure more models from the same
# calibration (kept in /tmp/mc80 while warm)
stage=$1; shift
W=/tmp/w$stage; mkdir -p $W
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee $W/gpu.txt
if [ "$stage" = 1 ]; then
  t0=$(date +%s)
  MODELCOST_CACHE_DIR=/tmp/mc80 timeout 240 python3 -m modelcost calibrate 2>&1 | grep -v "Warning\|warn" | tail -16
  echo "calibrate $(( $(date +%s) - t0 )) s" | tee -a $W/gpu.txt
  mkdir -p $W/cal; cp /tmp/mc80/calibration/*.json $W/cal/
fi
CAL=$(ls /tmp/mc80/calibration/*.json 2>/dev/null | head -1)
[ -z "$CAL" ] && CAL=benchmarks/results/device_2026-12-08/h100_cal/calibration-c13.json  # a later lease: C13
echo "calibration $CAL" | tee -a $W/gpu.txt
if [ -n "$1" ]; then
  t0=$(date +%s)
  timeout $3 python3 benchmarks/predict_validate.py --calibration $CAL --cache-dir /tmp/mc81 --out $W/set19 --models $1 --budget-s $2 2>&1 | grep -v "Warning\|warn" | tail -24
  echo "set19 $1 $(( $(date +%s) - t0 )) s" | tee -a $W/gpu.txt
fi
tar czf $OUT/stage$stage.tgz -C $W .
ls -la $OUT
