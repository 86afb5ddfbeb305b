#!/usr/bin/env bash
# Issue 28 on a two-GPU machine of the lent kind: calibrate GPU 0, then measure a list of held-out models with
# --predict on both GPUs at once (one predict_validate.py process per GPU, each predicting from GPU 0's calibration),
# so one device call measures twice the models. The two processes share the host (32 cores): a batch-1 figure is a
# host-bound one, so the pair is a slightly busier host than one process alone; BENCHMARKS.md says which runs were
# made so.
#
#   bash .device/on-device.sh bash benchmarks/predict_validate_2gpu.sh "MODELS_GPU0" "MODELS_GPU1"
#
# MODELS_GPUn: predict_validate.py --models lists (comma separated; "none" leaves a GPU idle). Results in
# $OUT/pv.tgz (the device returns a limited number of files: the twelfth session lost a GPU's cases.jsonl to that),
# holding pv/: calibration-*.json, g0/ and g1/ (cases.jsonl and tables of each process), g0.log, g1.log. The
# calibration is made once per machine (kept in /tmp/mcc0 while the machine stays warm, so a second call measures
# more models without calibrating again). BUDGET_S (default 380) stops each process from starting a model after
# that many seconds. CALL_S (default 570, under the device's 600 s per call) ends both processes with `timeout` so
# that the tar always runs: cases.jsonl is appended per model, so a model cut off loses only itself (the thirteenth
# session lost a whole call's cases to a process that outran the call). CONFIGS, when set, is passed as --configs
# to both processes (e.g. the torch configs alone for a model whose ONNX export does not fit a call).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/pv_out}
WORK=$(mktemp -d /tmp/pv_work.XXXX)
PV=$WORK/pv
BUDGET_S=${BUDGET_S:-380}
mkdir -p "$PV/g0" "$PV/g1" /tmp/mcc0 /tmp/mcc1
t0=$(date +%s)
if ! ls /tmp/mcc0/calibration/*.json >/dev/null 2>&1; then
  CUDA_VISIBLE_DEVICES=0 python3 benchmarks/predict_validate.py --calibrate --models none --cache-dir /tmp/mcc0 \
    --out "$PV" > "$PV/calibrate.log" 2>&1
  tail -3 "$PV/calibrate.log"
fi
cal=$(ls /tmp/mcc0/calibration/*.json | head -1)
cp "$cal" "$PV/"
echo "calibration $cal after $(( $(date +%s) - t0 )) s"
CALL_S=${CALL_S:-570}
left_s=$(( CALL_S - ($(date +%s) - t0) ))
configs=()
[ -n "${CONFIGS:-}" ] && configs=(--configs "$CONFIGS")
for g in 0 1; do
  models=$([ "$g" = 0 ] && echo "$1" || echo "$2")
  [ "$models" = none ] && continue
  CUDA_VISIBLE_DEVICES=$g timeout "$left_s" python3 benchmarks/predict_validate.py --calibration "$cal" \
    --cache-dir /tmp/mcc$g --out "$PV/g$g" --models "$models" --budget-s "$BUDGET_S" "${configs[@]}" \
    > "$PV/g$g.log" 2>&1 &
done
wait
for g in 0 1; do echo "== GPU $g"; grep -E "rows in|budget|Error" "$PV/g$g.log" | tail -8; done
tar czf "$OUT/pv.tgz" -C "$WORK" pv
echo "done after $(( $(date +%s) - t0 )) s: $OUT/pv.tgz"
