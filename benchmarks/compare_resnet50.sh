#!/usr/bin/env bash
# ResNet-50 FP32 vs FP16 vs INT8 (static Q/DQ) on the GPU: the example report under reports/example/.
#
#   bash benchmarks/compare_resnet50.sh OUT_DIR [MODEL_DIR]
#   (on the GPU machine with onnxruntime-gpu: bash .device/on-device.sh bash benchmarks/compare_resnet50.sh OUT_DIR)
#
# 1. exports zoo:resnet50 (modelcost's own ResNet-50, seeded random weights; torchvision is not needed) to ONNX
#    with a dynamic batch, into MODEL_DIR (default /tmp/modelcost-resnet50: ~100 MB, not for the repository);
# 2. `modelcost quantize --int8 --fp16` makes resnet50.int8.onnx (ONNX Runtime static Q/DQ, calibrated on
#    generated data: with random weights there is no real data to calibrate on, and the report says so) and
#    resnet50.fp16.onnx (float32 I/O), then compares each with the FP32 model on the same GPU backends and
#    batch sizes, 10 interleaved block pairs each;
# 3. writes OUT_DIR/resnet50.int8/ and OUT_DIR/resnet50.fp16/ (report.json, report.md, report.html,
#    benchmarks.csv, plots/) and OUT_DIR/README.md linking both.
# TensorRT backends are asked for too: where TensorRT is not installed the reports list them as unavailable.
# Takes about 3-5 minutes on an H100 / H200 (mostly the INT8 calibration on the CPU and the cuDNN warm-up).
set -euo pipefail
OUT=${1:?usage: bash benchmarks/compare_resnet50.sh OUT_DIR [MODEL_DIR]}
MODELS=${2:-/tmp/modelcost-resnet50}
BATCHES=${BATCHES:-1,8,64}
BACKENDS=${BACKENDS:-ort-cuda,ort-tensorrt,tensorrt}
mkdir -p "$OUT" "$MODELS"
start=$(date +%s)

python3 - "$MODELS/resnet50.onnx" <<'PY'
import shutil, sys
from pathlib import Path
from modelcost import api
from modelcost.bench.base import BenchConfig

dest = Path(sys.argv[1])
if not dest.exists():
    model = api.bench_model("zoo:resnet50", batch_size=1)
    path = model.onnx_file(BenchConfig().cache_dir)
    shutil.copyfile(path, dest)
    print(f"exported zoo:resnet50 -> {dest} ({model.export_note or 'dynamic batch'})")
PY

python3 -m modelcost quantize "$MODELS/resnet50.onnx" --int8 --fp16 --model-dir "$MODELS" \
  --backends "$BACKENDS" --batch-sizes "$BATCHES" --rounds 10 --device cuda --out "$OUT"

python3 - "$OUT" "$BATCHES" "$BACKENDS" "$(( $(date +%s) - start ))" <<'PY'
import json, sys
from pathlib import Path

out, batches, backends, took = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
lines = ["# Example: ResNet-50 FP32 vs FP16 vs INT8", "",
         "Made by `bash benchmarks/compare_resnet50.sh` (modelcost's `zoo:resnet50`, seeded random weights, exported "
         f"to ONNX; backends {backends}; batch sizes {batches}; {took} s in all).", ""]
for name in ("resnet50.fp16", "resnet50.int8"):
    doc = json.loads((out / name / "report.json").read_text())
    cmp = doc["comparison"]
    dev = (doc.get("device") or {}).get("name", "?")
    lines += [f"## {name} vs resnet50 on {dev}", "", f"[report.md]({name}/report.md) · [report.html]({name}/report.html)", ""]
    lines += [f"- {s['backend']} batch {s['batch_size']}: {s['verdict']} ({s['base_ms']:.3f} ms -> {s['candidate_ms']:.3f} ms)"
              for s in cmp["speed"]]
    lines += [f"- not measured: {s}" for s in cmp["skipped"]]
    for a in cmp["accuracy"]:
        top1 = a.get("top1_agreement")
        lines.append(f"- accuracy on {a['backend']}: cosine {a['cosine']:.6f}"
                     + (f", top-1 agreement {top1 * 100:.1f}%" if top1 is not None else ""))
    lines.append("")
(out / "README.md").write_text("\n".join(lines))
print((out / "README.md").read_text())
PY
