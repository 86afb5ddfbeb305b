"""Which count best prices ONNX Runtime's host time at batch 1: the predictor's ort-cuda kernels or eager's aten calls.

ORT at batch 1 is host-bound: the host issues each kernel slower than the GPU runs it, so the forward's time is
(kernels it issues) x (a price per kernel). The predictor counts ort-cuda's kernels from the static count's layers
and calibrate's kernels per layer (``Calibration.fusion["ort-cuda"]``). The twelfth held-out set suggested that
eager's kernel-launching aten calls (``CostReport.eager_ops.kernel_ops``) might track it better: over its four
host-bound transformers the measured time per predicted kernel spread 8.8-23.7 us, per aten call 9.9-14.6 us.

This script checks that on every model of sets 1-8 and the tenth set's H100 cases that ran ort-cuda fp32 at batch 1
host-bound on the H100 (re-predicted from calibration-1, benchmarks/results/residual_fit_2026-11-29/cal1): for each,
the measured time per predicted kernel and per aten call, and how far each spreads around its median (the smaller,
the better one price fits all). It counts each model statically on the meta device (no GPU needed; ~2 minutes).

    PYTHONPATH=. python3 benchmarks/ort_host_units_diag.py [--cases GLOB]
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_CASES = "benchmarks/results/residual_fit_2026-11-29/cal1/*/cases.jsonl"


def host_bound_ort_b1(pattern: str) -> dict[str, tuple[float, int]]:
    """model -> (measured ms, predicted ort-cuda kernels) of its ort-cuda fp32 batch-1 case, where host-bound."""
    found = {}
    for path in sorted(glob.glob(pattern)):
        for line in Path(path).read_text().splitlines():
            case = json.loads(line)
            if (case.get("backend"), case.get("precision"), case.get("batch"), case.get("bound")) == \
                    ("ort-cuda", "fp32", 1, "host") and case.get("measured_ms"):
                found[case["model"]] = (case["measured_ms"], case["kernels"])
    return found


def spread(values: list[float]) -> str:
    """'median X us, median |deviation| Y%, p10 / p90 as fractions of the median'."""
    med, ordered = statistics.median(values), sorted(values)
    dev = statistics.median(abs(v / med - 1) for v in values)
    p10, p90 = ordered[int(0.1 * len(ordered))], ordered[int(0.9 * len(ordered))]
    return f"median {med:.1f} us, median |deviation| {100 * dev:.0f}%, p10 {p10 / med:.2f}, p90 {p90 / med:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES)
    args = parser.parse_args()
    import predict_validate

    from modelcost import api

    cases = host_bound_ort_b1(args.cases)
    per_kernel, per_call = [], []
    for name, (ms, kernels) in sorted(cases.items()):
        source, spec = predict_validate.MODELS[name]
        calls = api.analyze_static(source, batch_size=1, input_shapes=[spec.replace("B", "1", 1)]).eager_ops.kernel_ops
        per_kernel.append(ms * 1e3 / kernels)
        per_call.append(ms * 1e3 / calls)
        print(f"{name:24s} {ms:7.2f} ms  {kernels:5d} ort kernels {per_kernel[-1]:5.1f} us  "
              f"{calls:5d} aten calls {per_call[-1]:5.1f} us", flush=True)
    print(f"{len(cases)} models")
    print(f"per predicted ort-cuda kernel: {spread(per_kernel)}")
    print(f"per eager aten call:           {spread(per_call)}")


if __name__ == "__main__":
    main()
