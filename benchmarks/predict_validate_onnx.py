"""How far an ONNX file's own count moves the ort-cuda prediction (issue 28), on the CPU from stored measurements.

A user who runs ``modelcost analyze model.onnx --predict`` is predicted from the ONNX graph's nodes; the validation
table (predict_validate.py) predicted ort-cuda from the PyTorch count of the same model. This script exports each
held-out model of the fresh set to ONNX (TorchScript exporter, opset 17, dynamic batch), counts the file at the
batch each stored case measured, predicts its ort-cuda cases from the calibration given, and writes both
predictions beside the measurement:

    python3 benchmarks/predict_validate_onnx.py --cases benchmarks/results/device_2026-11-26d/final/h100/cases.jsonl \\
        --calibration benchmarks/results/device_2026-11-26d/h100/calibration-nvidia-h100-80gb-hbm3.json \\
        --out benchmarks/results/device_2026-11-26d/onnx_count

Outputs: <out>/onnx_count.json (one row per case: model, batch, precision, measured, predicted from the PyTorch
count, predicted from the ONNX count, both errors; and the medians) and <out>/onnx_count.md. Until the two agree,
modelcost says "error unknown" for a prediction from an ONNX count (analysis/predict_table.validated_row). Qwen2 is left
out: its 2 GB export is slow on the CPU, and its torch-side cases are only on the H100.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from predict_validate import GROUPS, MODELS  # noqa: E402 - the models' sources and input specs, in one place

NAMES = [n for n in GROUPS["fresh"] if n != "qwen2_05b"]


def export(name: str, folder: Path) -> Path:
    """``name`` exported at batch 1 with a dynamic batch, from its input spec in predict_validate.MODELS."""
    import torch

    import predict_models_fresh

    path = folder / f"{name}.onnx"
    if not path.exists():
        inp, rest = MODELS[name][1].split("=", 1)
        dims = [int(d) for d in rest.split(":")[0].split("x")[1:]]
        net = getattr(predict_models_fresh, name)().eval()
        x = torch.randint(0, 1000, (1, *dims)) if rest.endswith(":int64") else torch.randn(1, *dims)
        torch.onnx.export(net, (x,), str(path), input_names=[inp], dynamic_axes={inp: {0: "batch"}}, dynamo=False,
                          opset_version=17)
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=Path, required=True, help="a cases.jsonl with ort-cuda measurements")
    p.add_argument("--calibration", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    from modelcost import api
    from modelcost.analysis.predict import predict
    from modelcost.core import calibration

    cal = calibration.load(args.calibration)
    cases = [json.loads(line) for line in args.cases.read_text().splitlines() if '"predicted_ms"' in line]
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in NAMES:
        path = export(name, args.out)
        for batch in (1, 64):
            spec = MODELS[name][1].replace("B", str(batch), 1)
            cost = api.analyze_static(str(path), batch_size=batch, input_shapes=[spec])
            for c in cases:
                if (c["model"], c["batch"], c["backend"]) != (name, batch, "ort-cuda"):
                    continue
                onnx_ms = predict(cost, cal, "ort-cuda", c["precision"], batch).latency_ms
                rows.append({"model": name, "batch": batch, "precision": c["precision"],
                             "measured_ms": c["measured_ms"], "from_pytorch_ms": c["predicted_ms"],
                             "from_onnx_ms": onnx_ms, "pytorch_error_pct": c["error_pct"],
                             "onnx_error_pct": (onnx_ms - c["measured_ms"]) / c["measured_ms"] * 100})
                print(json.dumps(rows[-1]), flush=True)
        path.unlink()
    if not rows:
        sys.exit(f"predict_validate_onnx: {args.cases} has no ort-cuda case of {', '.join(NAMES)}")
    summary = {"cases": len(rows), "calibration": str(args.calibration.name),
               "median_pytorch_pct": round(statistics.median(abs(r["pytorch_error_pct"]) for r in rows), 2),
               "median_onnx_pct": round(statistics.median(abs(r["onnx_error_pct"]) for r in rows), 2), "rows": rows}
    (args.out / "onnx_count.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = ["# ort-cuda predicted from the PyTorch count and from the ONNX file's count", "",
             f"{summary['cases']} cases; median |error|: PyTorch count {summary['median_pytorch_pct']}%, ONNX count "
             f"{summary['median_onnx_pct']}%", "",
             "| model | batch | precision | measured ms | from PyTorch ms | error % | from ONNX ms | error % |",
             "|---" * 8 + "|"]
    lines += [f"| {r['model']} | {r['batch']} | {r['precision']} | {r['measured_ms']:.3f} | {r['from_pytorch_ms']:.3f} "
              f"| {r['pytorch_error_pct']:+.0f} | {r['from_onnx_ms']:.3f} | {r['onnx_error_pct']:+.0f} |" for r in rows]
    (args.out / "onnx_count.md").write_text("\n".join(lines) + "\n")
    print(f"median |error|: PyTorch count {summary['median_pytorch_pct']}%, ONNX count {summary['median_onnx_pct']}%")


if __name__ == "__main__":
    main()
