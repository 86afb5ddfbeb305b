"""Where a measured forward's GPU time goes, by kernel class (issue 28: which of the predictor's layer kinds is
wrong, and by how much).

    python3 benchmarks/kernel_mix.py --models fresh --batches 64 --configs torch-half:fp16,ort-cuda:fp16 --out DIR

Each model (benchmarks/predict_validate.py's MODELS) is loaded as modelcost benchmarks it, and each config's
session (the backend registry's runner, as ``modelcost bench`` builds it) is warmed up, then ``--calls`` forwards
run under torch.profiler. CUPTI records every CUDA kernel the process launches, ONNX Runtime's included, so the
kernels of one forward are sorted into classes by name (``CLASSES``: the first pattern that matches) and summed.
A CUDA-graph backend's kernels are not seen one by one, so the configs here are the host-issued ones
(torch-compile, not torch-compile-cudagraph). Profiling adds host time: the class sums are GPU time, and
``forward_ms`` (CUDA events around the same calls, unprofiled) is the figure to compare with a measurement.

Writes DIR/kernel_mix.jsonl: one line per (model, config, batch) with the class sums, the kernel count per
forward and the top kernels.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

# kernel class -> name pattern; the first that matches wins (a cuDNN layout transform is "layout", not "conv")
CLASSES = (
    ("attention", r"flash|fmha|attention|sdpa|mha_|Attention"),
    ("layout", r"nchwToNhwc|nhwcToNchw|[Tt]ranspose|permute"),
    ("conv", r"conv|Conv|implicit|fprop|dgrad|wgrad|winograd|cudnn|xmma_fprop|im2col"),
    ("gemm", r"gemm|Gemm|GEMM|sm90_xmma|sm80_xmma|cutlass|cublas|nvjet|s16816|s1688|gemv|splitK|triton_tem|mm_"),
    ("norm", r"norm|Norm|welford|Welford|rms|Rms"),
    ("reduce", r"reduce|Reduce|softmax|Softmax|triton_per|triton_red|mean|Mean|Pool|pool"),
    ("copy", r"copy|Copy|cat|Concat|Cast|cast|Gather|gather|index|Slice|Split|Expand|Pad"),
    ("elementwise", r"elementwise|vectorized|triton_poi|unrolled|Elementwise|Add|Mul|Relu|Sigmoid|Erf|Gelu|Tanh|"
                    r"Clip|Where|Sub|Div|Pow|Sqrt|fill|Fill"),
)


def kernel_class(name: str) -> str:
    for cls, pattern in CLASSES:
        if re.search(pattern, name):
            return cls
    return "other"


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="fresh", help="predict_validate's MODELS names or GROUPS, comma-separated")
    p.add_argument("--batches", default="64")
    p.add_argument("--configs", default="torch-half:fp16,torch-eager:fp32,ort-cuda:fp16")
    p.add_argument("--skip", default="", help="model:backend pairs to leave out, comma-separated")
    p.add_argument("--calls", type=int, default=5, help="profiled forwards per config")
    p.add_argument("--no-channels-last", action="store_true",
                   help="run the cast backends' conv nets in the contiguous layout (is channels_last what makes "
                        "torch-half slower than eager fp32 at batch 1?)")
    p.add_argument("--out", type=Path, required=True)
    return p.parse_args()


def profile_session(torch, session, calls: int) -> dict:
    from torch.profiler import ProfilerActivity, profile

    from modelcost.bench.timing import CudaEventClock, median_call_ms

    forward_ms = median_call_ms(session.run, CudaEventClock(torch).time_ms, 20, warmups=10,
                                settle=torch.cuda.synchronize)
    # the host's issue time: calls returned back to back, one synchronize at the end (a host-bound forward's GPU
    # waits for the host, so this is the host's time per forward; a device-bound one's is the queue's)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        session.run()
    host_ms = (time.perf_counter() - t0) * 1e3 / 20
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            session.run()
        torch.cuda.synchronize()
    by_class: dict[str, float] = {}
    by_name: dict[str, list[float]] = {}
    kernels = aten_calls = 0
    for evt in prof.events():
        parent = evt.cpu_parent
        if str(evt.device_type).rsplit(".", 1)[-1] == "CPU" and evt.name.startswith("aten::") \
                and (parent is None or not parent.name.startswith("aten::")):
            aten_calls += 1  # an aten call the host made, not one inside another's dispatch
        if str(evt.device_type).rsplit(".", 1)[-1] != "CUDA" or "Memcpy" in evt.name or "Memset" in evt.name:
            continue
        us = float(getattr(evt, "device_time", 0.0) or getattr(evt, "cuda_time", 0.0) or 0.0)
        kernels += 1
        cls = kernel_class(evt.name)
        by_class[cls] = by_class.get(cls, 0.0) + us / calls / 1e3
        by_name.setdefault(evt.name, [0.0, 0])
        by_name[evt.name][0] += us / calls / 1e3
        by_name[evt.name][1] += 1
    top = sorted(by_name.items(), key=lambda kv: -kv[1][0])[:25]
    return {"forward_ms": forward_ms, "host_ms": round(host_ms, 4), "kernel_ms": round(sum(by_class.values()), 4),
            "kernels_per_forward": kernels / calls, "aten_calls_per_forward": aten_calls / calls,
            "by_class_ms": {k: round(v, 4) for k, v in sorted(by_class.items(), key=lambda kv: -kv[1])},
            "top": [{"name": n[:160], "class": kernel_class(n), "ms": round(v[0], 4), "calls": v[1] // calls}
                    for n, v in top]}


def main() -> None:
    args = parse()
    import torch

    import transformers
    from predict_validate import GROUPS, MODELS

    from modelcost.bench import lifecycle, registry
    from modelcost.bench.base import BenchConfig
    from modelcost.runs.model import bench_model

    if args.no_channels_last:
        from modelcost.bench.model import BenchModel
        BenchModel.is_conv_net = lambda self: False
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{torch.cuda.get_device_name(0)}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    names = [n for part in args.models.split(",") for n in GROUPS.get(part, [part])]
    skip = set(args.skip.split(",")) - {""}
    configs = [c.split(":") for c in args.configs.split(",")]
    with open(args.out / "kernel_mix.jsonl", "a", encoding="utf-8") as out:
        for name in names:
            source, spec = MODELS[name]
            for batch in [int(b) for b in args.batches.split(",")]:
                model = bench_model(source, batch_size=batch, input_shapes=[spec.replace("B", str(batch), 1)])
                arrays, _ = model.host_inputs(batch)
                for backend, precision in configs:
                    if f"{name}:{backend}" in skip:
                        continue
                    t0 = time.perf_counter()
                    row = {"model": name, "backend": backend, "precision": precision, "batch": batch,
                           "channels_last_off": args.no_channels_last}
                    try:
                        runner = registry.get_backend(backend).prepare(model, precision, BenchConfig(device="cuda"))
                        with lifecycle.session(runner, batch, arrays) as session:
                            row.update(profile_session(torch, session, args.calls))
                        runner.close()
                    except Exception as exc:  # noqa: BLE001
                        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                    row["wall_s"] = round(time.perf_counter() - t0, 1)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    print(json.dumps({k: row.get(k) for k in ("model", "backend", "precision", "batch", "forward_ms",
                                                              "host_ms", "kernel_ms", "aten_calls_per_forward",
                                                              "kernels_per_forward", "by_class_ms",
                                                              "error", "wall_s")}), flush=True)
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
