"""Where a model's eager forward spends its time when the measured latency is far above what its kernels need
(issue 28's sixth held-out set: MPNet-base in eager PyTorch measured 265-310 ms at batch 1 and 64 alike, under ONNX
Runtime 2.2 ms). Runs one factory of a benchmarks/predict_models*.py file on the GPU, times the forward (synchronized,
median of 5 after 3 warm-ups), then profiles one forward with CPU and CUDA activities and prints the top ops by self
CPU time and by self CUDA time.

    python3 benchmarks/stall_diag.py benchmarks/predict_models_fresh5.py:mpnet_base --input input_ids=1x128:int64
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time

import torch

from modelcost.loaders.shapes import parse_input_specs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", help="FILE.py:FACTORY")
    p.add_argument("--input", required=True, help="NAME=AxBxC[:int64]")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--high", type=int, default=1000, help="integer inputs uniform in [0, HIGH) (modelcost: the vocab)")
    args = p.parse_args()
    path, factory = args.source.rsplit(":", 1)
    spec = importlib.util.spec_from_file_location("models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    net = getattr(module, factory)().to("cuda", getattr(torch, args.dtype))
    shapes, dtypes = parse_input_specs([args.input], "--input")  # modelcost's own NAME=DIMS[:DTYPE] reading
    [(name, size)] = shapes.items()
    x = torch.randint(0, args.high, size, device="cuda") if dtypes.get(name, "").startswith("int") else \
        torch.randn(size, device="cuda", dtype=getattr(torch, args.dtype))
    with torch.inference_mode():
        for _ in range(3):
            net(**{name: x})
        times = []
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            net(**{name: x})
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"forward: median {statistics.median(times):.3f} ms of {[round(t, 3) for t in times]}")
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            net(**{name: x})
            torch.cuda.synchronize()
    table = prof.key_averages()
    print(table.table(sort_by="self_cpu_time_total", row_limit=args.top))
    print(table.table(sort_by="self_cuda_time_total", row_limit=args.top))


if __name__ == "__main__":
    main()
