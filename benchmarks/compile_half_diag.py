"""Why does a model run slower under torch.compile than eagerly at the same precision? (issue 28, eighteenth session)

The seventh set measured the Audio Spectrogram Transformer (benchmarks/predict_models_fresh6.py:ast_audioset) at
batch 64 in fp16: torch-half (the cast model, eager) 46 ms, torch-compile-cudagraph 214 ms. This script times the
cast model eagerly and under torch.compile (static shapes, as the backend compiles one batch) with CUDA events, then
prints each one's ten costliest CUDA kernels from torch.profiler, so the two can be compared kernel by kernel.

    python3 benchmarks/compile_half_diag.py --model benchmarks/predict_models_fresh6.py:ast_audioset \
        --shape 64x1024x128 --name input_values   (on the GPU; prints JSON lines and two tables)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def load(spec: str):  # noqa: ANN201 - a torch module
    path, name = spec.split(":")
    mod_spec = importlib.util.spec_from_file_location("diag_models", path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return getattr(module, name)()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--shape", required=True, help="e.g. 64x1024x128")
    p.add_argument("--name", required=True, help="the forward's keyword for the input")
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    import torch

    from modelcost.bench.calibrate_host import host_us

    net = load(args.model).cuda().half().eval()
    x = torch.randn(*[int(d) for d in args.shape.split("x")], device="cuda", dtype=torch.half)
    compiled = torch.compile(net, dynamic=False)
    with torch.inference_mode():
        for label, fn in (("eager", lambda: net(**{args.name: x})), ("compile", lambda: compiled(**{args.name: x}))):
            fn()
            ms = host_us(torch, fn, args.runs) / 1e3
            print(json.dumps({"run": label, "median_ms": round(ms, 3)}), flush=True)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10, max_name_column_width=90),
                  flush=True)


if __name__ == "__main__":
    main()
