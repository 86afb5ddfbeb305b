#!/bin/bash
# device script of the thirtieth session (not committed): stage 1 calibrates and measures the generation bar and
# the first models; later stages measure more models from the same calibration (kept in /tmp/mc70 while warm)
stage=$1; shift
W=/tmp/w$stage; mkdir -p $W
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee $W/gpu.txt
if [ "$stage" = 1 ]; then
  t0=$(date +%s)
  MODELCOST_CACHE_DIR=/tmp/mc70 timeout 230 python3 -m modelcost calibrate 2>&1 | grep -v "Warning\|warn" | tail -16
  echo "calibrate $(( $(date +%s) - t0 )) s" | tee -a $W/gpu.txt
  mkdir -p $W/cal; cp /tmp/mc70/calibration/*.json $W/cal/
  CAL=$(ls /tmp/mc70/calibration/*.json | head -1)
  t0=$(date +%s)
  timeout 150 python3 benchmarks/predict_validate_llm.py --calibration $CAL --cache-dir /tmp/mc72 --out $W/llm 2>&1 | grep -v "Warning\|warn" | tail -8
  echo "llm $(( $(date +%s) - t0 )) s" | tee -a $W/gpu.txt
fi
CAL=$(ls /tmp/mc70/calibration/*.json | head -1)
if [ -n "$1" ]; then
  t0=$(date +%s)
  timeout $3 python3 benchmarks/predict_validate.py --calibration $CAL --cache-dir /tmp/mc71 --out $W/set18 --models $1 --budget-s $2 2>&1 | grep -v "Warning\|warn" | tail -20
  echo "set18 $1 $(( $(date +%s) - t0 )) s" | tee -a $W/gpu.txt
fi
tar czf $OUT/stage$stage.tgz -C $W .
ls -la $OUT
