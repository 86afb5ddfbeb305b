"""Report plots as PNG bytes, drawn with matplotlib's Agg canvas (no display, no pyplot global state).

matplotlib is imported only when a plot is drawn. Each function returns None when there is nothing measured
to draw: a plot never shows a figure that was not measured.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from modelcost.core.decisions import Comparison
from modelcost.core.lazy import require
from modelcost.core.types import BenchResult, CostReport, RunReport

_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22"]


def figure(width_in: float, height_in: float) -> Any:
    """A figure on its own Agg canvas. No layout engine: a constrained (or tight) layout draws every figure twice,
    once to measure and once to render, which was most of a report folder's CPU time; ``_place`` sets the margins
    from the labels' measured widths instead."""
    require("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


DPI = 110
_PAD_IN = 0.12  # between the figure's edge and what is drawn
_TICKS_IN = 0.28  # one row of tick labels (10 pt) with its ticks
_AXIS_LABEL_IN = 0.25  # an axis label (10 pt) and its padding
_TITLE_IN = 0.33  # a title (12 pt) and its padding
_LEGEND_ROW_IN = 0.24  # one row of a legend (7-8 pt) below the axes


def text_width_in(fig: Any, texts: Sequence[str], size_pt: float) -> float:
    """The widest of ``texts`` at ``size_pt`` in inches, from the Agg renderer's font metrics (no drawing)."""
    from matplotlib.font_manager import FontProperties

    if not texts:
        return 0.0
    renderer, prop = fig.canvas.get_renderer(), FontProperties(size=size_pt)
    return max(renderer.get_text_width_height_descent(t, prop, ismath=False)[0] for t in texts) / fig.dpi


def _place(fig: Any, y_labels: Sequence[str], y_size_pt: float = 10.0, *, y_axis_label: bool = False,
           x_axis_label: bool = True, title: bool = True, legend_rows_below: int = 0, columns: int = 1) -> None:
    """The margins a layout engine would find, set by hand: the widest y tick label (``y_labels`` at
    ``y_size_pt``), the axis labels, the title and a legend of ``legend_rows_below`` rows under the axes;
    ``columns`` side-by-side axes sharing the y labels get the gap of a tick row between them."""
    width_in, height_in = fig.get_size_inches()
    left = _PAD_IN + text_width_in(fig, y_labels, y_size_pt) + 0.1 + (_AXIS_LABEL_IN if y_axis_label else 0.0)
    bottom = _PAD_IN + _TICKS_IN + (_AXIS_LABEL_IN if x_axis_label else 0.0) + _LEGEND_ROW_IN * legend_rows_below
    top = _PAD_IN + (_TITLE_IN if title else 0.0)
    right = _PAD_IN + 0.2  # the last x tick label reaches past the axes by half its width
    fig.subplots_adjust(left=left / width_in, right=1 - right / width_in, bottom=min(0.45, bottom / height_in),
                        top=max(0.55, 1 - top / height_in), wspace=0.3 / max(1, columns - 1) if columns > 1 else 0.2)


def _png(fig: Any) -> bytes:
    """The figure as PNG; zlib level 1: PIL's default 6 costs more time than its smaller files are worth (BENCHMARKS.md,
    'Figures that used to live in docstrings')."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None}, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def _ok(results: list[BenchResult]) -> list[BenchResult]:
    return [r for r in results if r.status == "ok" and r.latency_ms is not None]


def _series_name(r: BenchResult) -> str:
    role = f"{r.role}: " if r.role else ""
    return f"{role}{r.backend} {r.precision}"


def _label(r: BenchResult) -> str:
    return f"{_series_name(r)} b{r.batch_size}"


def throughput_vs_batch(results: list[BenchResult]) -> bytes | None:
    """None (no plot) unless at least two batch sizes were measured: one batch is a column of dots."""
    ok = [r for r in _ok(results) if r.throughput_ips]
    if len({r.batch_size for r in ok}) < 2:
        return None
    series: dict[str, list[BenchResult]] = {}
    for r in ok:
        series.setdefault(_series_name(r), []).append(r)
    fig = figure(7.5, 4.5)
    ax = fig.add_subplot()
    for i, (name, rs) in enumerate(sorted(series.items())):
        rs.sort(key=lambda r: r.batch_size)
        ax.plot([r.batch_size for r in rs], [r.throughput_ips for r in rs], marker="o", label=name,
                color=_COLORS[i % len(_COLORS)])
    batches = sorted({r.batch_size for r in ok})
    if len(batches) > 1:
        ax.set_xscale("log", base=2)
    ax.set_xticks(batches, [str(b) for b in batches])
    ax.minorticks_off()
    ax.set_xlabel("batch size")
    ax.set_ylabel("throughput (inferences / s)")
    ax.set_title("Throughput vs batch size (batch / median latency)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    top = max(r.throughput_ips or 0.0 for r in ok)
    _place(fig, [f"{top * 1.1:.0f}"], y_axis_label=True)  # the widest tick label: about the axis' top
    return _png(fig)


def latency_percentiles(results: list[BenchResult]) -> bytes | None:
    ok = _ok(results)
    if not ok:
        return None
    ok.sort(key=lambda r: (_series_name(r), r.batch_size))
    fig = figure(7.5, 1.6 + 0.32 * len(ok))
    ax = fig.add_subplot()
    ys = list(range(len(ok)))
    lat = [r.latency_ms for r in ok]
    ax.hlines(ys, [s.min for s in lat], [s.max for s in lat], color="#bbbbbb", linewidth=1, label="min - max")
    for key, marker, color in (("p50", "o", "#1f77b4"), ("p90", ">", "#2ca02c"), ("p95", "s", "#ff7f0e"),
                               ("p99", "D", "#d62728")):
        ax.scatter([getattr(s, key) for s in lat], ys, marker=marker, color=color, label=key, zorder=3, s=22)
    ax.set_yticks(ys, [_label(r) for r in ok], fontsize=8)
    ax.invert_yaxis()
    if max(s.max for s in lat) > 50 * min(s.min for s in lat):
        ax.set_xscale("log")
    ax.set_xlabel("latency (ms)")
    ax.set_title("Latency percentiles per config")
    ax.grid(True, axis="x", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=7, ncols=5, loc="lower center", frameon=False)
    _place(fig, [_label(r) for r in ok], 8, legend_rows_below=1)
    return _png(fig)


def ops_breakdown(cost: CostReport, top: int = 12) -> bytes | None:
    """FLOPs and parameters by op type (parameters summed over the layers of each op type)."""
    flops = cost.compute.flops_by_op
    if not flops:
        return None
    params: dict[str, int] = {}
    for lc in cost.layers:
        params[lc.op] = params.get(lc.op, 0) + lc.params
    ops = sorted(flops, key=lambda o: -flops[o])[:top]
    fig = figure(8.5, 1.0 + 0.3 * len(ops))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    ax1.barh(ops, [flops[o] / 1e9 for o in ops], color="#1f77b4")
    ax1.set_xlabel("GFLOPs")
    ax1.set_title(f"FLOPs by op type (top {len(ops)})")
    ax2.barh(ops, [params.get(o, 0) / 1e6 for o in ops], color="#2ca02c")
    ax2.set_xlabel("parameters (millions)")
    ax2.set_title("Parameters by op type")
    ax1.invert_yaxis()
    for ax in (ax1, ax2):
        ax.grid(True, axis="x", alpha=0.3)
    _place(fig, ops, columns=2)
    return _png(fig)


def layers_breakdown(cost: CostReport, top: int = 20) -> bytes | None:
    """The ``top`` layers by FLOPs, with their parameters."""
    layers = [lc for lc in sorted(cost.layers, key=lambda lc: -lc.flops) if lc.flops > 0][:top]
    if not layers:
        return None
    names = [lc.name if len(lc.name) <= 40 else "..." + lc.name[-37:] for lc in layers]
    fig = figure(9.0, 1.0 + 0.28 * len(layers))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    ax1.barh(names, [lc.flops / 1e6 for lc in layers], color="#1f77b4")
    ax1.set_xlabel("MFLOPs")
    ax1.set_title(f"Heaviest {len(layers)} layers by FLOPs")
    ax2.barh(names, [lc.params / 1e3 for lc in layers], color="#2ca02c")
    ax2.set_xlabel("parameters (thousands)")
    ax2.set_title("Their parameters")
    ax1.invert_yaxis()
    for ax in (ax1, ax2):
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(True, axis="x", alpha=0.3)
    _place(fig, names, 7, columns=2)
    return _png(fig)


def memory_by_config(results: list[BenchResult], cost: CostReport | None = None) -> bytes | None:
    """Measured peak GPU memory per config; the static weight bytes as a reference line."""
    ok = [r for r in _ok(results) if r.gpu_memory_peak_bytes is not None]
    if not ok:
        return None
    ok.sort(key=lambda r: (_series_name(r), r.batch_size))
    fig = figure(7.5, 1.2 + 0.3 * len(ok))
    ax = fig.add_subplot()
    ax.barh([_label(r) for r in ok], [r.gpu_memory_peak_bytes / 2**20 for r in ok], color="#9467bd")
    if cost is not None and cost.memory.weight_bytes:
        ax.axvline(cost.memory.weight_bytes / 2**20, color="#d62728", linestyle="--",
                   label="weights (static, stored dtype)")
        ax.legend(fontsize=8)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel("peak GPU memory (MiB)")
    ax.set_title("Memory by config (measured peak)")
    ax.grid(True, axis="x", alpha=0.3)
    _place(fig, [_label(r) for r in ok], 8)
    return _png(fig)


def speedup_intervals(cmp: Comparison) -> bytes | None:
    """Candidate / base speedup per backend and batch, with its 95% interval."""
    if not cmp.speed:
        return None
    rows = cmp.speed
    fig = figure(7.5, 1.2 + 0.35 * len(rows))
    ax = fig.add_subplot()
    ys = list(range(len(rows)))
    for y, s in zip(ys, rows):
        color = "#2ca02c" if s.significant and s.ratio > 1 else "#d62728" if s.significant else "#7f7f7f"
        lo, hi = 1 + s.ci_low / 100, 1 + s.ci_high / 100
        ax.errorbar([s.ratio], [y], xerr=[[s.ratio - lo], [hi - s.ratio]], fmt="o", color=color, capsize=4)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(ys, [f"{s.backend} b{s.batch_size}" for s in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speedup = base latency / candidate latency (95% CI)")
    ax.set_title(f"{cmp.candidate.name} vs {cmp.base.name}")
    ax.grid(True, axis="x", alpha=0.3)
    _place(fig, [f"{s.backend} b{s.batch_size}" for s in rows], 8)
    return _png(fig)


# Every plot all_plots may draw, in its order (the report folder checks their files before writing: report.folder)
PLOT_NAMES = ("speedup", "throughput", "latency", "roofline", "memory", "ops", "layers")
PLOT_KINDS = ("png", "svg")


def all_plots(run: RunReport, comparison: Comparison | None = None,
              extra: dict[str, tuple[str, Callable[[], bytes | None]]] | None = None
              ) -> tuple[list[tuple[str, str]], dict[str, tuple[str, bytes]], list[str]]:
    """Draw every plot the data allows. Returns (name, title) in order, name -> ("png", bytes), and notes on
    plots that failed to draw (the report is written without them)."""
    makers: dict[str, tuple[str, Callable[[], bytes | None]]] = {}
    if comparison is not None:
        makers["speedup"] = ("Speedup of the candidate with 95% confidence intervals",
                             lambda: speedup_intervals(comparison))
    makers["throughput"] = ("Throughput vs batch size per backend", lambda: throughput_vs_batch(run.benchmarks))
    makers["latency"] = ("Latency percentiles per config", lambda: latency_percentiles(run.benchmarks))
    makers.update(extra or {})
    makers["memory"] = ("Peak GPU memory by config", lambda: memory_by_config(run.benchmarks, run.cost))
    if run.cost is not None:
        cost = run.cost
        makers["ops"] = ("FLOPs and parameters by op type", lambda: ops_breakdown(cost))
        makers["layers"] = ("Heaviest layers: FLOPs and parameters", lambda: layers_breakdown(cost))
    order: list[tuple[str, str]] = []
    images: dict[str, tuple[str, bytes]] = {}
    notes: list[str] = []
    for name, (title, make) in makers.items():
        try:
            data = make()
        except Exception as exc:  # noqa: BLE001 - a plot that cannot be drawn must not lose the report
            if exc.__class__.__name__ == "MissingDependencyError":
                notes.append(f"plots skipped: {exc}")
                break
            notes.append(f"plot {name!r} not drawn: {exc.__class__.__name__}: {exc}")
            continue
        if data:
            kind = "svg" if data.lstrip()[:5] in (b"<?xml", b"<svg ") else "png"
            order.append((name, title))
            images[name] = (kind, data)
    return order, images, notes


def spread_across_runs(spreads_pct: list[tuple[str, float]]) -> bytes | None:
    """One bar per config: the spread of its p50 across runs (max / min - 1, percent), with lines at 2% and 5%
    (the sweep report's noise section). None when no config was measured twice."""
    if not spreads_pct:
        return None
    items = sorted(spreads_pct, key=lambda kv: kv[1])
    fig = figure(7.5, max(2.5, 0.22 * len(items) + 1.2))
    ax = fig.add_subplot()
    ax.barh(range(len(items)), [v for _, v in items], color=[_COLORS[0] if v <= 5 else _COLORS[1] for _, v in items])
    ax.set_yticks(range(len(items)), [name for name, _ in items], fontsize=7)
    for limit, style in ((2.0, ":"), (5.0, "--")):
        ax.axvline(limit, color="#57606a", linestyle=style, linewidth=1, label=f"{limit:g}%")
    ax.set_xlabel("spread of the per-run p50 across runs (max / min - 1, %)")
    ax.set_title("Noise between runs, per config")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    _place(fig, [name for name, _ in items], 7)
    return _png(fig)
