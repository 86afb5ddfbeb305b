"""The README's roofline worked example, from a real run on this machine's GPU (H100 / H200).

    python3 benchmarks/roofline_example.py --out reports/roofline-example

For ResNet-50 (224x224) and a BERT-base-sized encoder (seq 128) at batch 1 and 64 it:
  1. reads the GPU from NVML and measures its ceilings (matmul per precision, device copy; cached),
  2. benchmarks PyTorch eager fp32 / tf32, the bf16 / fp16 cast model, its CUDA-graph replay and ONNX Runtime
     CUDA fp32 / fp16 (``--with-compile`` adds torch.compile),
  3. places every config on the roofline (MFU against the spec peak of the precision used and against the
     measured ceiling, bound class, lower bound), profiles per layer (eager bf16 and ORT fp32 at batch 64),
  4. writes ``<out>/roofline_example.md`` (the README snippet), one roofline PNG and one JSON report per
     model, and ``console.txt`` (the terminal tables).
Every figure in the snippet is measured in this run or computed from the table; nothing is typed in.
Takes about 5 minutes on an H100 (ceilings ~30 s when not cached; ORT export and session builds included).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import time
from pathlib import Path

MODELS = {"resnet50": "zoo:resnet50", "bert-base": "zoo:bert-base"}
BACKENDS = ["torch-eager", "torch-half", "torch-cudagraph", "ort-cuda"]
WHAT_IF_GPUS = ["L4", "A100 SXM", "H100 SXM", "H200", "B200"]


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("reports/roofline-example"))
    ap.add_argument("--batch-sizes", default="1,64")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    ap.add_argument("--with-compile", action="store_true", help="also torch.compile (adds minutes of compile time)")
    ap.add_argument("--refresh-ceilings", action="store_true")
    return ap.parse_args()


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def pct(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if value >= 0.01 else f"{100 * value:.2g}%"


def gpu_markdown(gpu) -> list[str]:
    keys = [k for k in ("fp32", "tf32", "fp16", "bf16", "int8", "fp8") if k in gpu.peak_tflops]
    lines = [(f"GPU: **{gpu.name}** ({gpu.architecture}, {gpu.sm_count} SMs, driver {gpu.driver}); spec peaks at the "
             f"datasheet clocks (tensor {gpu.tensor_clock_mhz} MHz), bandwidth {gpu.bandwidth_gbps:,.0f} GB/s "
             f"(NVML max memory clock {gpu.memory_clock_mhz} MHz x {gpu.bus_width_bits}-bit bus x 2)."), "",
             "| precision | spec dense TFLOP/s | measured (8192^3 matmul) | % of spec |", "|---|---:|---:|---:|"]
    for k in keys:
        m = gpu.measured_tflops.get(k)
        lines.append(f"| {k} | {fmt(gpu.peak_tflops[k], 1)} | {fmt(m, 1)} | "
                     f"{pct(m / gpu.peak_tflops[k] if m else None)} |")
    if gpu.measured_gbps:
        lines.append(f"| copy GB/s | {gpu.bandwidth_gbps:,.0f} | {gpu.measured_gbps:,.0f} | "
                     f"{pct(gpu.measured_gbps / gpu.bandwidth_gbps)} |")
    throttles = sorted({t for m in gpu.measurements for t in m.throttle_reasons})
    lines += ["", f"Throttle reasons seen while measuring: {', '.join(throttles) or 'none'}.", ""]
    return lines


def model_markdown(name: str, run, layer_rows, profiled, what_ifs) -> list[str]:
    cost = run.cost
    lines = [(f"### {name}: {cost.compute.flops / cost_batch(cost) / 1e9:.2f} GFLOPs per sample "
              f"({cost.compute.macs / cost_batch(cost) / 1e9:.2f} GMACs), "
              f"{cost.params.total / 1e6:.1f} M parameters"), "",
             ("| backend | precision | batch | p50 ms | IPS | TFLOP/s | MFU (spec) | MFU (measured ceiling) | GB/s | "
             "FLOP/B | bound | lower bound ms | measured / bound |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    rows = sorted((r for r in run.benchmarks if r.roofline is not None), key=lambda r: (r.batch_size, r.latency_ms.p50))
    for r in rows:
        p = r.roofline
        lines.append(f"| {r.backend} | {r.precision} | {r.batch_size} | {r.latency_ms.p50:.3f} | "
                     f"{fmt(r.throughput_ips, 0)} | {fmt(p.achieved_tflops)} | {pct(p.mfu)} | {pct(p.mfu_measured)} | "
                     f"{fmt(p.achieved_gbps, 0)} | "
                     f"{fmt(p.intensity, 1)} | {p.bound} | {p.lower_bound_ms:.4f} | {p.measured_over_bound:.1f} |")
    missing = [f"{r.backend} {r.precision} b{r.batch_size}: {r.status} ({r.reason})" for r in run.benchmarks
               if r.status != "ok"]
    if missing:
        lines += ["", "Not measured: " + "; ".join(dict.fromkeys(missing)) + "."]
    if rows:
        lines += ["", (f"Bytes moved ({rows[-1].roofline.peak_key}, batch {rows[-1].batch_size}): "
                      f"{rows[-1].roofline.bytes_basis}.")]
    if profiled is not None and layer_rows:
        prof = profiled.layer_profile
        lines += ["", (f"Where the time goes vs where the FLOPs are ({profiled.backend} {profiled.precision}, batch "
                      f"{profiled.batch_size}; {prof.time_kind}, {prof.source}; top 8 of {len(layer_rows)}):"), "",
                  "| layer | op | % FLOPs | % time | ms | TFLOP/s | FLOP/B | bound |",
                  "|---|---|---:|---:|---:|---:|---:|---|"]
        for row in layer_rows[:8]:
            lines.append(f"| {row.name} | {row.op} | {pct(row.flops_share)} | {pct(row.time_share)} | "
                         f"{fmt(row.time_ms, 3)} | {fmt(row.achieved_tflops)} | {fmt(row.intensity, 1)} | "
                         f"{row.bound} |")
        lines += ["", f"({prof.notes[-1]})" if prof.notes else ""]
    if what_ifs:
        lines += ["", "What-if (lower bound max(FLOPs / peak, bytes / bandwidth) from the table; no run can beat it):",
                  "",
                  "| GPU | precision | batch | lower bound ms | bound | max IPS |", "|---|---|---:|---:|---|---:|"]
        for w in what_ifs:
            lines.append(f"| {w.gpu} | {w.precision} | {w.batch_size} | {w.lower_bound_ms:.4f} | {w.bound} | "
                         f"{fmt(w.max_throughput_ips, 0)} |")
    return lines + [""]


def cost_batch(cost) -> int:
    from modelcost.analysis.roofline import cost_batch_size

    return cost_batch_size(cost)


def run_model(name: str, source: str, batches: list[int], backends: list[str], gpu, config, console, out: Path):
    from modelcost import api, pipeline
    from modelcost.core.text import utc_timestamp
    from modelcost.core.types import RunReport
    from modelcost.report.console_gpu import print_run_gpu
    from modelcost.report.json_report import write_json
    from modelcost.report.roofline_plot import plot_roofline

    cost = api.analyze_static(source, batch_size=1)
    model = api.bench_model(source, batch_size=batches[0], seed=config.seed)
    try:
        results, device = api.run_benchmarks(model, backends=backends, batch_sizes=batches, config=config,
                                             progress=True)
        run = RunReport(cost=cost, benchmarks=results, device=device, gpu=gpu,
                        created=utc_timestamp(), command=" ".join(["python3", *sys.argv]))
        api.attach_roofline(run, gpu)
        api.attach_layer_profiles(model, run, backends=("torch-half", "ort-cuda"), runs=10, config=config)
    finally:
        model.close()
    run.layer_tables = pipeline.layer_tables(run)
    print_run_gpu(run, console=console)
    console.print(f"wrote {plot_roofline(gpu, run.benchmarks, out / f'roofline-{name}.png')}")
    write_json(run, out / f"{name}.json")
    profiled = next((r for r in run.benchmarks if r.layer_profile is not None and r.backend == "torch-half"
                     and r.precision == "bf16"), None) or next((r for r in run.benchmarks if r.layer_profile), None)
    layer_rows = (api.layer_roofline(cost, gpu, profiled.precision, profiled.batch_size, profiled.layer_profile)
                  if profiled is not None else [])
    big = max(batches)
    what_ifs = [api.what_if(cost, g, "bf16", big) for g in WHAT_IF_GPUS]
    return run, layer_rows, profiled, what_ifs


def main() -> int:
    args = parse_args()
    from rich.console import Console

    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.report.atomic import atomic_write_text
    from modelcost.report.console_gpu import print_gpu

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    console = Console(record=True, width=170)
    t0 = time.perf_counter()
    gpu = api.measure_ceilings(api.gpu_spec(cached_ceilings=False), refresh=args.refresh_ceilings,
                               progress=lambda what: console.print(f"[dim]ceilings: {what}[/]"))
    print_gpu(gpu, console)
    batches = [int(b) for b in args.batch_sizes.split(",")]
    backends = BACKENDS + (["torch-compile"] if args.with_compile else [])
    config = BenchConfig(device="cuda", min_time_s=0.5, max_time_s=3.0, warmup_max_s=2.0, min_iters=30, e2e_max_s=1.0)
    md = ["## Roofline worked example", "",
          (f"Measured with `python3 benchmarks/roofline_example.py --out {out}` on "
          f"{_dt.date.today().isoformat()} (modelcost, torch {torch_version()})."), ""]
    md += gpu_markdown(gpu)
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        console.rule(name)
        run, layer_rows, profiled, what_ifs = run_model(
            name, MODELS[name], batches, backends, gpu, config, console, out)
        md += model_markdown(name, run, layer_rows, profiled, what_ifs)
        md += [f"![roofline {name}](roofline-{name}.png)", ""]
    elapsed = time.perf_counter() - t0
    md += [f"Total wall time of the example: {elapsed / 60:.1f} min.", ""]
    atomic_write_text(out / "roofline_example.md", "\n".join(md))
    atomic_write_text(out / "console.txt", console.export_text())
    print(f"wrote {out / 'roofline_example.md'} ({elapsed:.0f} s)")
    return 0


def torch_version() -> str:
    import torch

    return f"{torch.__version__}, CUDA {torch.version.cuda}"


if __name__ == "__main__":
    raise SystemExit(main())
