"""Rich tables for ``modelcost gpu`` and the roofline of a run. Sees only ``modelcost.core`` types."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from modelcost.core.types import (
    BenchResult,
    GpuSpec,
    LayerProfile,
    LayerRoofline,
    RunReport,
    WhatIf,
)
from modelcost.core.units import binary_bytes, number, si

LABELS = {
    "fp64": "FP64 (CUDA cores)", "fp64_tensor": "FP64 tensor", "fp32": "FP32 (CUDA cores, TF32 off)",
    "tf32": "TF32 tensor", "fp16": "FP16 tensor, FP32 acc", "bf16": "BF16 tensor, FP32 acc",
    "fp16_acc16": "FP16 tensor, FP16 acc", "fp8": "FP8 tensor, FP32 acc", "fp8_acc16": "FP8 tensor, FP16 acc",
    "int8": "INT8 tensor (TOPS)", "int4": "INT4 tensor (TOPS)", "fp4": "FP4 tensor",
}


def _f(value: float | None, digits: int = 1, suffix: str = "") -> str:
    return "-" if value is None else f"{value:,.{digits}f}{suffix}"


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if abs(value) >= 0.01 or value == 0 else f"{number(100 * value, 2)}%"


def _ms(value: float | None) -> str:
    return number(value)


def gpu_table(spec: GpuSpec) -> Table:
    """What the GPU is: identity, SMs, clocks, memory, power."""
    t = Table(title=f"{spec.name}  ({'this GPU, NVML' if spec.source == 'nvml' else 'from the table'})",
              show_header=False, title_justify="left")
    t.add_column("property", style="bold")
    t.add_column("value")
    rows = [
        ("architecture", spec.architecture), ("compute capability", spec.compute_capability),
        ("SMs", spec.sm_count),
        ("CUDA cores / tensor cores per SM", f"{spec.cuda_cores_per_sm or '-'} / {spec.tensor_cores_per_sm or '-'}"),
        ("SM clock base / boost / max", "/".join(
            str(c) if c else "-" for c in (spec.base_clock_mhz, spec.boost_clock_mhz, spec.max_clock_mhz)) + " MHz"),
        ("clock of the tensor peaks", f"{spec.tensor_clock_mhz} MHz" if spec.tensor_clock_mhz else None),
        ("memory",
         f"{spec.memory_bytes / 1e9:.1f} GB ({binary_bytes(spec.memory_bytes)})" if spec.memory_bytes else None),
        ("memory bus / clock", f"{spec.bus_width_bits or '-'} bit / {spec.memory_clock_mhz or '-'} MHz"),
        ("bandwidth (clock x bus x 2)", _f(spec.bandwidth_gbps, 0, " GB/s")),
        ("measured copy bandwidth", _f(spec.measured_gbps, 0, " GB/s") if spec.measured_gbps else None),
        ("L2 cache", binary_bytes(spec.l2_cache_bytes) if spec.l2_cache_bytes else None),
        ("power limit", _f(spec.power_limit_w, 0, " W") if spec.power_limit_w else None),
        ("driver", spec.driver),
    ]
    for key, value in rows:
        if value not in (None, ""):
            t.add_row(key, str(value))
    return t


def peaks_table(spec: GpuSpec) -> Table:
    """Dense and 2:4-sparse peaks by precision, with the measured ceiling where there is one."""
    t = Table(title="Peak throughput (dense; 2:4 sparse = 2x for tensor ops)", title_justify="left")
    for col, justify in (("precision", "left"), ("what", "left"), ("dense TFLOP/s", "right"),
                         ("sparse", "right"), ("measured", "right"), ("% of spec", "right")):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]
    for key, dense in spec.peak_tflops.items():
        measured = spec.measured_tflops.get(key)
        t.add_row(key, LABELS.get(key, key), _f(dense), _f(spec.sparse_peak_tflops.get(key)),
                  _f(measured), _pct(measured / dense if measured else None))
    return t


def gpu_list_table(specs: Iterable[GpuSpec]) -> Table:
    t = Table(title="Known GPUs: dense TFLOP/s at the datasheet clocks (INT8: TOPS)", title_justify="left")
    t.add_column("GPU", no_wrap=True)
    for col in ("SMs", "FP32", "TF32", "BF16", "FP8", "INT8", "GB/s", "GB"):
        t.add_column(col, justify="right", no_wrap=True)

    def num(value: float | None, digits: int = 0) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    for s in specs:
        p = s.peak_tflops
        t.add_row(s.name, str(s.sm_count), num(p.get("fp32"), 1), num(p.get("tf32")), num(p.get("bf16", p.get("fp16"))),
                  num(p.get("fp8")), num(p.get("int8")), num(s.bandwidth_gbps), num((s.memory_bytes or 0) / 1e9))
    return t


def ceilings_table(spec: GpuSpec) -> Table:
    t = Table(title="Measured ceilings (median block; clocks and throttle reasons seen while it ran)",
              title_justify="left")
    for col in ("what", "shape", "measured", "spec", "% of spec", "SM MHz min/mean", "mem MHz", "power W",
                "throttle"):
        t.add_column(col, justify="left" if col in ("what", "shape", "throttle") else "right")
    for m in spec.measurements:
        what = f"matmul {m.precision}" if m.kind == "matmul" else "device copy"
        value = f"{m.value:,.1f} {m.unit}" if m.value else f"[red]{m.error or 'failed'}[/]"
        clocks = f"{_f(m.sm_clock_mhz_min, 0)}/{_f(m.sm_clock_mhz_mean, 0)}"
        t.add_row(what, m.shape, value, _f(m.spec), _pct(m.fraction_of_spec), clocks, _f(m.mem_clock_mhz_mean, 0),
                  _f(m.power_w_mean, 0), ", ".join(m.throttle_reasons) or "none")
    return t


def roofline_table(results: Sequence[BenchResult], gpu: GpuSpec) -> Table:
    """One row per measured GPU config that has a roofline point."""
    t = Table(title=f"Roofline on {gpu.name}: achieved vs the roofs (MFU = achieved / spec peak of the precision used)",
              title_justify="left")
    for col in ("backend", "prec", "batch", "p50 ms", "TFLOP/s", "peak", "MFU", "MFU meas.", "GB/s", "FLOP/B",
                "ridge", "bound", "lower ms", "x bound"):
        t.add_column(col, justify="left" if col in ("backend", "prec", "bound") else "right")
    for r in results:
        p = r.roofline
        if p is None or r.latency_ms is None:
            continue
        bound = {"compute": "[green]compute[/]", "memory": "[cyan]memory[/]",
                 "overhead": "[yellow]overhead[/]"}[p.bound]
        t.add_row(r.backend, r.precision, str(r.batch_size), f"{r.latency_ms.p50:.3f}", _f(p.achieved_tflops, 2),
                  _f(p.peak_tflops), _pct(p.mfu), _pct(p.mfu_measured), _f(p.achieved_gbps, 0), _f(p.intensity, 1),
                  _f(p.ridge_point, 0), bound, _ms(p.lower_bound_ms), _f(p.measured_over_bound, 1))
    return t


def layer_table(rows: Sequence[LayerRoofline], title: str, profile: LayerProfile | None = None, top: int = 15) -> Table:
    """Where the time goes vs where the FLOPs are (or, without a profile, per-layer intensity and bound)."""
    timed = profile is not None
    caption = f"time: {profile.time_kind}, {profile.source}" if timed else "static analysis only (no profile)"
    t = Table(title=title, caption=caption, title_justify="left")
    cols = ["layer", "op", "% FLOPs", "FLOP/B", "bound"] + (["% time", "ms", "TFLOP/s"] if timed else ["lower ms"])
    for col in cols:
        t.add_column(col, justify="left" if col in ("layer", "op", "bound") else "right")
    for row in rows[:top]:
        cells = [escape(row.name), escape(row.op), _pct(row.flops_share), _f(row.intensity, 1), row.bound]
        if timed:
            cells += [_pct(row.time_share), _f(row.time_ms, 3), _f(row.achieved_tflops, 2)]
        else:
            cells += [_ms(row.lower_bound_ms)]
        t.add_row(*cells)
    if len(rows) > top:
        rest = rows[top:]
        share = sum(r.flops_share for r in rest)
        tshare = sum(r.time_share or 0.0 for r in rest)
        t.add_row(f"... {len(rest)} more", "", _pct(share), "", "", *([_pct(tshare), "", ""] if timed else [""]))
    return t


def layer_time_table(profile: LayerProfile, title: str, top: int = 15) -> Table:
    """Measured time per layer without a roofline (a CPU profile): the slowest ``top`` layers."""
    t = Table(title=title, caption=f"time: {profile.time_kind}, {profile.source}, {profile.runs} runs",
              title_justify="left")
    for col in ("layer", "op", "ms", "% time", "calls"):
        t.add_column(col, justify="left" if col in ("layer", "op") else "right")
    total = profile.total_ms or 1.0
    ranked = sorted(profile.layers, key=lambda lt: -lt.time_ms)
    for lt in ranked[:top]:
        t.add_row(lt.name, lt.op, _f(lt.time_ms, 3), _pct(lt.time_ms / total), str(lt.calls))
    if len(ranked) > top:
        rest = ranked[top:]
        t.add_row(f"... {len(rest)} more", "", _f(sum(lt.time_ms for lt in rest), 3),
                  _pct(sum(lt.time_ms for lt in rest) / total), "")
    return t


def what_if_table(estimates: Sequence[WhatIf]) -> Table:
    t = Table(title="What-if: the fastest each GPU could run this model (lower bound; no run can beat it)",
              title_justify="left")
    for col in ("GPU", "precision", "batch", "FLOPs", "bytes", "compute ms", "memory ms", "lower bound ms", "bound",
                "max IPS"):
        t.add_column(col, justify="left" if col in ("GPU", "precision", "bound") else "right")
    for w in estimates:
        t.add_row(w.gpu, w.precision, str(w.batch_size), si(w.flops), si(w.bytes_moved), _ms(w.compute_ms),
                  _ms(w.memory_ms), _ms(w.lower_bound_ms), w.bound, _f(w.max_throughput_ips, 0))
    return t


def print_gpu(spec: GpuSpec, console: Console | None = None, show_notes: bool = True) -> None:
    console = console or Console(emoji=False)
    console.print(gpu_table(spec))
    if spec.peak_tflops:
        console.print(peaks_table(spec))
    if spec.measurements:
        console.print(ceilings_table(spec))
    if show_notes:
        for note in spec.notes:
            console.print(f"[dim]note: {escape(note)}[/]", highlight=False)


def print_run_gpu(run: RunReport, console: Console | None = None, top_layers: int = 15) -> None:
    """What a finished run says about the GPU: the roofline table (or why there is none), its per-layer tables
    (``run.layer_tables``), the measured per-layer times of CPU profiles, and the what-if table."""
    console = console or Console(highlight=False)
    if run.gpu is not None and any(r.roofline for r in run.benchmarks):
        console.print(roofline_table(run.benchmarks, run.gpu))
        point = next(r.roofline for r in run.benchmarks if r.roofline)
        console.print(f"[dim]bytes moved ({point.peak_key} row): {point.bytes_basis}. Bound 'overhead': measured "
                      "latency > 10x the lower bound max(FLOPs / peak, bytes / bandwidth).[/]")
    for table in run.layer_tables:
        if table.profile is None:
            console.print(layer_table(table.rows, table.title, table.profile, top_layers))
    print_run_extras(run, console, top_layers)


def print_run_extras(run: RunReport, console: Console, top_layers: int = 15) -> None:
    """The GPU tables a user asked for, under the console answer of a run (``console_run.py``): why there is no
    roofline, the measured per-layer times (--profile-layers) and the what-if table (--target-gpu). The roofline
    table and the static per-layer intensity are in the report folder."""
    if run.benchmarks and not (run.gpu is not None and any(r.roofline for r in run.benchmarks)):
        why = run.no_roofline_reason or "no GPU result with a peak for its precision"
        console.print(f"[dim]no roofline: {why}[/]")
    for table in run.layer_tables:
        if table.profile is not None:
            console.print(layer_table(table.rows, table.title, table.profile, top_layers))
    for r in run.benchmarks:
        if r.layer_profile is not None and r.roofline is None:
            title = f"Where the time goes: {r.backend} {r.precision} batch {r.batch_size}"
            console.print(layer_time_table(r.layer_profile, title, top_layers))
    if run.what_if:
        console.print(what_if_table(run.what_if))
