"""Images/sequences per second of every backend for ResNet-50 and a BERT-base-sized encoder (seq 128) at
batch 1, 8, 64 and 256, fastest first, as Markdown (and JSON) under --out.

Each invocation stays under about 9 minutes of GPU time: it stops starting new backends once --budget-s is
spent and says which were left out. torch.compile is slow to build (one compile per batch size and precision),
so the compiled backends are best run in invocations of their own; the lead's GPU runs (see BENCHMARKS.md):

    python3 benchmarks/ips_sweep.py --model resnet50  --group eager  --out reports/ips
    python3 benchmarks/ips_sweep.py --model resnet50  --group compile --out reports/ips
    python3 benchmarks/ips_sweep.py --model bert-base --group eager  --out reports/ips
    python3 benchmarks/ips_sweep.py --model bert-base --group compile --out reports/ips

``--group eager`` = torch-eager, torch-autocast, torch-half, torch-cudagraph, ort-cuda, ort-tensorrt, tensorrt;
``--group compile`` = torch-compile, torch-compile-cudagraph; ``--backends`` names any list instead. Backends
that cannot run here (TensorRT not installed, ...) are listed with their reason, never with a figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GROUPS = {
    "eager": ["torch-eager", "torch-autocast", "torch-half", "torch-cudagraph", "ort-cuda", "ort-tensorrt", "tensorrt"],
    "compile": ["torch-compile", "torch-compile-cudagraph"],
}
MODELS = {"resnet50": "zoo:resnet50", "bert-base": "zoo:bert-base"}


def markdown(model: str, results: list[Any], device: str, left_out: list[str], seconds: float) -> str:
    ok = [r for r in results if r.status == "ok"]
    batches = sorted({r.batch_size for r in ok})
    lines = [f"### {model} on {device}", "",
             "IPS = batch / median latency (GPU time by CUDA events, inputs already on the GPU); "
             f"run took {seconds:.0f} s.", ""]
    for batch in batches:
        rows = sorted((r for r in ok if r.batch_size == batch), key=lambda r: -r.throughput_ips)
        lines += [f"**batch {batch}** (fastest first)", "",
                  "| # | backend | precision | IPS | p50 ms | p99 ms | e2e p50 ms | accuracy (cosine vs fp32) |",
                  "|---|---|---|---|---|---|---|---|"]
        for i, r in enumerate(rows, 1):
            cos = "-" if r.accuracy is None else f"{r.accuracy.cosine:.6f}"
            lines.append(f"| {i} | {r.backend} | {r.precision} | {r.throughput_ips:,.1f} | {r.latency_ms.p50:.3f} | "
                         f"{r.latency_ms.p99:.3f} | {r.e2e_latency_ms.p50:.3f} | {cos} |")
        lines.append("")
    other = [r for r in results if r.status != "ok"]
    if other or left_out:
        lines += ["Not measured:", ""]
        seen = set()
        for r in other:
            key = (r.backend, r.precision, r.status, r.reason)
            if key not in seen:
                seen.add(key)
                where = f" at batch {r.batch_size}" if r.batch_size else ""
                lines.append(f"- {r.backend} {r.precision}{where}: {r.status} — {r.reason}")
        lines += [f"- {name}: not run, the invocation's --budget-s was spent" for name in left_out]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="resnet50")
    parser.add_argument("--group", choices=sorted(GROUPS), default="eager")
    parser.add_argument("--backends", help="comma list; overrides --group")
    parser.add_argument("--precisions", help="comma list (default: each backend's own)")
    parser.add_argument("--batch-sizes", default="1,8,64,256")
    parser.add_argument("--min-time-s", type=float, default=0.5)
    parser.add_argument("--min-iters", type=int, default=30)
    parser.add_argument("--max-time-s", type=float, default=3.0)
    parser.add_argument("--compile-mode", default="default")
    parser.add_argument("--budget-s", type=float, default=480.0, help="start no new backend after this many seconds")
    parser.add_argument("--out", type=Path, default=Path("reports/ips"))
    args = parser.parse_args()

    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.runner import run_benchmarks
    from modelcost.core.types import RunReport
    from modelcost.report.json_report import run_to_dict

    t0 = time.perf_counter()
    backends = args.backends.split(",") if args.backends else GROUPS[args.group]
    precisions = args.precisions.split(",") if args.precisions else None
    batches = [int(b) for b in args.batch_sizes.split(",")]
    config = BenchConfig(device="cuda", min_time_s=args.min_time_s, min_iters=args.min_iters,
                         max_time_s=args.max_time_s, warmup_max_s=1.0, e2e_min_iters=5, e2e_max_s=0.3,
                         compile_mode=args.compile_mode)
    model = api.bench_model(MODELS[args.model], batch_size=batches[0])
    results: list[Any] = []
    left_out: list[str] = []
    device_name = "?"
    for i, backend in enumerate(backends):
        if time.perf_counter() - t0 > args.budget_s:
            left_out = backends[i:]
            break
        print(f"[{time.perf_counter() - t0:6.0f} s] {args.model}: {backend}", flush=True)
        start = len(results)
        _, device = run_benchmarks(model, backends=[backend], precisions=precisions, batch_sizes=batches,
                                   config=config, results=results)
        device_name = device.name
        for r in results[start:]:
            ips = "-" if r.throughput_ips is None else f"{r.throughput_ips:,.1f}"
            print(f"    {r.precision:5s} batch {r.batch_size:4d}: {r.status:11s} IPS {ips} {r.reason or ''}",
                  flush=True)
    seconds = time.perf_counter() - t0
    group = args.group if not args.backends else "custom"
    text = markdown(f"{args.model} ({group})", results, device_name, left_out, seconds)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"ips_{args.model}_{group}"
    (args.out / f"{stem}.md").write_text(text + "\n")
    doc = run_to_dict(RunReport(benchmarks=results, command=" ".join(sys.argv)))
    (args.out / f"{stem}.json").write_text(json.dumps(doc, indent=1))
    print(f"written: {args.out / (stem + '.md')}, {args.out / (stem + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
