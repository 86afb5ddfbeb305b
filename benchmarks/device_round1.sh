#!/bin/bash
# The device run of 2026-11-26 (issues 25, 26, 28): GPU training-peak tests, `modelcost calibrate`, and the
# default `analyze zoo:resnet50` console answer (its line count). Run by .device/on-device.sh on the lent GPU:
#   bash .device/on-device.sh bash benchmarks/device_round1.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export MODELCOST_CACHE_DIR=/tmp/mc-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
echo "== training peak (issue 25)"; date
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/bench/test_training_bench.py -k predicted_peak -rA -s \
  2>&1 | grep -E "predicted|passed|failed|PASS|FAIL|XFAIL|XPASS" | tee "$OUT/train_peak.txt"
echo "== calibrate (issue 28)"; date
/usr/bin/time -v timeout 300 python3 -m modelcost calibrate > "$OUT/calibrate.txt" 2> "$OUT/calibrate.err"
echo "rc $?"; tail -20 "$OUT/calibrate.txt"; grep -E "Elapsed|Maximum resident" "$OUT/calibrate.err"; tail -5 "$OUT/calibrate.err"
cp /tmp/mc-cache/calibration/*.json "$OUT/" 2>/dev/null
echo "== analyze zoo:resnet50, default (issue 26)"; date
COLUMNS=120 timeout 330 python3 -m modelcost analyze zoo:resnet50 --json "$OUT/analyze_resnet50.json" \
  > "$OUT/analyze_resnet50.txt" 2> "$OUT/analyze_resnet50.err"
echo "rc $?; lines: $(wc -l < "$OUT/analyze_resnet50.txt")"; cat "$OUT/analyze_resnet50.txt"; tail -3 "$OUT/analyze_resnet50.err"
date
