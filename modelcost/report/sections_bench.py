"""Report blocks for benchmarks, the roofline and the GPU (see ``sections.py``)."""

from __future__ import annotations

from collections.abc import Iterable

from modelcost.core.samples import footnote, marked
from modelcost.core.text import config_label
from modelcost.core.types import BenchResult, GpuSpec, LayerTable, WhatIf
from modelcost.core.units import binary_bytes, number
from modelcost.report.blocks import Block, Bullets, Heading, Para, Table


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _g(value: float | None, digits: int = 4) -> str:
    return number(value, digits)


def accuracy_text(r: BenchResult) -> str:
    a = r.accuracy
    if a is None:
        return "reference" if r.precision == "fp32" and r.status == "ok" else "-"
    top1 = f", top-1 {a.top1_agreement * 100:.1f}%" if a.top1_agreement is not None else ""
    return f"cos {a.cosine:.6f}, max abs {number(a.max_abs_err, 2)}{top1}"


def benchmark_blocks(results: list[BenchResult]) -> list[Block]:
    ok = [r for r in results if r.status == "ok" and r.latency_ms is not None]
    blocks: list[Block] = [Heading("Benchmarks")]
    timings = sorted({r.timing for r in ok if r.timing})
    if timings:
        blocks += [Para("What the latency figures include:"), Bullets(timings)]
    blocks.append(Para("Latency in ms over the n timed runs (after warm-up); IPS = batch / median latency; "
                       "e2e = host-side latency including host<->device copies."))
    if ok:
        rows = []
        for r in sorted(ok, key=lambda r: -(r.throughput_ips or 0)):
            lat = r.latency_ms
            assert lat is not None
            e2e = r.e2e_latency_ms.p50 if r.e2e_latency_ms else None
            rows.append([
                config_label(r), str(r.batch_size), str(lat.count), marked(lat, "p50"), marked(lat, "p90"),
                marked(lat, "p99"), f"{lat.mean:.3f} ± {lat.std:.3f}", f"{lat.cv * 100:.1f}%", _g(r.throughput_ips),
                _f(e2e), binary_bytes(r.gpu_memory_peak_bytes), _f(r.power_w_mean, 1),
                _g(r.energy_j_per_inference, 3), accuracy_text(r) + (" (budget hit)" if r.budget_hit else "")
                + (" (UNSTABLE)" if r.unstable else ""),
            ])
        headers = ["config", "batch", "n", "p50 ms", "p90 ms", "p99 ms", "mean ± std ms", "cv", "IPS",
                   "e2e p50 ms", "GPU mem peak", "power W", "J / inference", "accuracy vs reference"]
        blocks.append(Table(headers, rows, [False] + [True] * 12 + [False]))
        note = footnote([r.latency_ms for r in ok if r.latency_ms is not None])
        if note:
            blocks.append(Para(note))
    unstable = [r for r in ok if r.unstable]
    if unstable:
        blocks += [Heading("Unstable timings", 3),
                   Para("Too noisy to decide on (recommendations leave them out); re-run on a quiet machine:"),
                   Bullets([f"{config_label(r)}: {'; '.join(r.unstable)}" for r in unstable])]
    extra = [r for r in ok if r.build_s is not None or r.first_inference_ms is not None]
    if extra:
        blocks += [Heading("Build and first call (one-time costs, not latencies)", 3),
                   Table(["config", "build s", "first call ms (includes lazy init)"],
                         [[config_label(r), _f(r.build_s, 2), _f(r.first_inference_ms, 2)] for r in extra],
                         [False, True, True])]
    bad = [r for r in results if r not in ok]
    if bad:
        blocks += [Heading("Not measured", 3), Bullets(_not_measured(bad))]
    notes = sorted({f"{config_label(r)}: {n}" for r in results for n in r.notes})
    throttled = [f"{config_label(r)}: throttle reasons seen: {', '.join(r.throttle_reasons)}"
                 for r in ok if r.throttle_reasons]
    if notes or throttled:
        blocks += [Heading("Benchmark notes", 3), Bullets(throttled + notes)]
    return blocks


def _not_measured(bad: list[BenchResult]) -> list[str]:
    """A line per failed config, then the grouped lines (``grouped_not_measured``)."""
    singles, grouped = grouped_not_measured(bad)
    return [f"{config_label(r)}: {r.status}" + (f" — {r.reason}" if r.reason else "") for r in singles] + grouped


def grouped_not_measured(rows: Iterable[BenchResult]) -> tuple[list[BenchResult], list[str]]:
    """(the rows to list one per line, the lines that group the rest): unavailable backends one line per reason (a
    backend that cannot run here has one entry per precision: 25 such rows say four things), and the rows a re-run
    left out one line (``left_out_line``). The report and recommend's closing lines both list them this way."""
    rows = list(rows)
    singles = [r for r in rows if r.status != "unavailable" and not left_out(r)]
    grouped: dict[str, dict[str, list[str]]] = {}
    for r in rows:
        if r.status == "unavailable":
            head = f"{r.role}: " if r.role else ""
            grouped.setdefault(r.reason or "", {}).setdefault(head + r.backend, []).append(r.precision)
    lines = [", ".join(f"{b} ({', '.join(ps)})" for b, ps in backends.items()) + ": unavailable"
             + (f" — {reason}" if reason else "") for reason, backends in grouped.items()]
    summary = left_out_line(rows)
    return singles, lines + ([summary] if summary else [])


def left_out(r: BenchResult) -> bool:
    """True for a row a re-run left out against an earlier run's figures (bench/screening_record.py)."""
    return r.extra.earlier_run is not None


def left_out_line(rows: Iterable[BenchResult]) -> str | None:
    """One line naming every left-out row (each row's own reason has its figures), or None when there is none:
    a warm run leaves out a dozen configs, and a dozen 400-character lines would bury the answer."""
    out = [r for r in rows if left_out(r)]
    if not out:
        return None
    by_pair: dict[str, list[str]] = {}
    for r in out:
        by_pair.setdefault(f"{r.backend} {r.precision}", []).append(f"b{r.batch_size}")
    times = sorted(r.extra.earlier_run.measured_utc for r in out if r.extra.earlier_run)
    when = times[0] if times[0] == times[-1] else f"{times[0]} to {times[-1]}"
    factor = max(r.extra.earlier_run.beaten_by_more_than for r in out if r.extra.earlier_run)
    names = "; ".join(f"{pair} {', '.join(batches)}" for pair, batches in by_pair.items())
    return (f"{names}: left out of this run, each beaten more than {factor:g}x on latency and throughput by a "
            f"config measured now against its own figures from an earlier run ({when}; each row's reason has them; "
            "--fresh measures every config)")


def roofline_blocks(results: list[BenchResult]) -> list[Block]:
    pts = [r for r in results if r.status == "ok" and r.roofline is not None]
    if not pts:
        return []
    rows = []
    for r in pts:
        p = r.roofline
        assert p is not None
        mfu_m = f" ({p.mfu_measured * 100:.1f}% of measured)" if p.mfu_measured is not None else ""
        rows.append([config_label(r), _g(p.achieved_tflops), _g(p.peak_tflops), f"{p.mfu * 100:.1f}%{mfu_m}",
                     _g(p.achieved_gbps), _g(p.peak_gbps), _g(p.intensity), _g(p.ridge_point), p.bound,
                     _f(p.lower_bound_ms, 4), f"{p.measured_over_bound:.2f}x"])
    bases = sorted({r.roofline.bytes_basis for r in pts if r.roofline and r.roofline.bytes_basis})
    headers = ["config", "TFLOP/s", "peak TFLOP/s", "MFU", "GB/s", "peak GB/s", "FLOPs/byte", "ridge",
               "bound", "lower bound ms", "measured / bound"]
    blocks: list[Block] = [Heading("Roofline"), Table(headers, rows, [False] + [True] * 7 + [False, True, True])]
    if bases:
        blocks += [Para("Bytes counted as moved:"), Bullets(bases)]
    return blocks


def layer_roofline_blocks(tables: list[LayerTable], top: int = 15) -> list[Block]:
    """Each per-layer roofline of the run (``RunReport.layer_tables``): where the time goes vs where the FLOPs are
    for a profiled config, else the static per-layer intensity against the ridge point. The heaviest ``top``
    rows, then one row for the rest."""
    blocks: list[Block] = []
    for t in tables:
        timed = t.profile is not None
        headers = ["layer", "op", "% FLOPs", "FLOPs/byte", "bound"] + (
            ["% time", "ms", "TFLOP/s"] if timed else ["lower bound ms"])
        rows = []
        for r in t.rows[:top]:
            row = [r.name, r.op, _pct(r.flops_share), _f(r.intensity, 1), r.bound]
            row += [_pct(r.time_share), _f(r.time_ms, 4), _g(r.achieved_tflops)] if timed else [_f(r.lower_bound_ms, 4)]
            rows.append(row)
        rest = t.rows[top:]
        if rest:
            share = _pct(sum(r.flops_share for r in rest))
            rows.append([f"... {len(rest)} more", "", share, "", ""]
                        + ([_pct(sum(r.time_share or 0.0 for r in rest)), "", ""] if timed else [""]))
        source = (f"time: {t.profile.time_kind}, {t.profile.source}" if t.profile is not None
                  else "static analysis only (no profile)")
        blocks += [Heading(t.title, 3), Para(source),
                   Table(headers, rows, [False, False, True, True, False] + [True] * (len(headers) - 5))]
    return blocks


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def gpu_blocks(gpu: GpuSpec) -> list[Block]:
    rows = [["name", gpu.name], ["architecture", gpu.architecture],
            ["compute capability", gpu.compute_capability or "-"], ["SMs", _g(gpu.sm_count)],
            ["tensor clock (datasheet peaks)", f"{gpu.tensor_clock_mhz} MHz" if gpu.tensor_clock_mhz else "-"],
            ["memory", binary_bytes(gpu.memory_bytes)],
            ["bandwidth", f"{gpu.bandwidth_gbps:.0f} GB/s" if gpu.bandwidth_gbps else "-"],
            ["power limit", f"{gpu.power_limit_w:.0f} W" if gpu.power_limit_w else "-"],
            ["driver", gpu.driver or "-"], ["source", gpu.source]]
    peaks = [[k, _g(v), _g(gpu.sparse_peak_tflops.get(k)), _g(gpu.measured_tflops.get(k))]
             for k, v in gpu.peak_tflops.items()]
    blocks: list[Block] = [Heading("GPU"), Table(["", "value"], rows)]
    if peaks:
        blocks += [Heading("Peak TFLOP/s by precision (dense; 2:4 sparse; measured)", 3),
                   Table(["precision", "dense", "2:4 sparse", "measured"], peaks, [False, True, True, True])]
    return blocks


def layer_profile_blocks(results: list[BenchResult], top: int = 15) -> list[Block]:
    """Measured time per layer (``--profile-layers``), for every result that carries a profile: GPU and CPU."""
    blocks: list[Block] = []
    for r in results:
        prof = r.layer_profile
        if prof is None or not prof.layers:
            continue
        total = prof.total_ms or 1.0
        layers = sorted(prof.layers, key=lambda lt: -lt.time_ms)
        rows = [[lt.name, lt.op, _f(lt.time_ms, 4), f"{lt.time_ms / total * 100:.1f}%", str(lt.calls)]
                for lt in layers[:top]]
        if len(layers) > top:
            rest = layers[top:]
            rows.append([f"... {len(rest)} more", "", _f(sum(lt.time_ms for lt in rest), 4),
                         f"{sum(lt.time_ms for lt in rest) / total * 100:.1f}%", ""])
        blocks += [Heading(f"Per-layer time: {config_label(r)}", 3),
                   Para(f"{prof.time_kind} from {prof.source}, {prof.runs} profiled runs; layers sum to "
                        f"{prof.total_ms:.4f} ms per inference (profiler overhead makes this differ from the "
                        "benchmark latency)."),
                   Table(["layer", "op", "ms", "% time", "calls"], rows, [False, False, True, True, True])]
    return [Heading("Where the time goes (per-layer profile)"), *blocks] if blocks else []


def what_if_blocks(rows: list[WhatIf]) -> list[Block]:
    """The lower bound on each GPU asked for (``--target-gpu``): no run can beat it."""
    if not rows:
        return []
    table = [[w.gpu, w.precision, str(w.batch_size), f"{w.flops:,}", f"{w.bytes_moved:,}", _f(w.compute_ms, 4),
              _f(w.memory_ms, 4), _f(w.lower_bound_ms, 4), w.bound, _g(w.max_throughput_ips)] for w in rows]
    headers = ["GPU", "precision", "batch", "FLOPs", "bytes", "compute ms", "memory ms", "lower bound ms", "bound",
               "max IPS"]
    bases = sorted({w.bytes_basis for w in rows if w.bytes_basis})
    blocks: list[Block] = [Heading("What-if: the fastest each GPU could run this model"),
                           Para("Lower bound max(FLOPs / peak, bytes / bandwidth): no run can beat it."),
                           Table(headers, table, [False, False, True, True, True, True, True, True, False, True])]
    return blocks + ([Para("Bytes counted as moved:"), Bullets(bases)] if bases else [])
