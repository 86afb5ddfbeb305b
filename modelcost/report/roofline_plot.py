"""The roofline plot (PNG or SVG by the file suffix): the memory roof, a compute roof per precision used,
the measured ceilings where cached (dashed), and one point per measured backend / precision / batch.

Points are grouped, not labelled one by one (configs of one precision and batch share an intensity, and 18 labels
on one spot are unreadable): one colour per backend x precision, named in the legend; the marker's shape is the
bound class and its size grows with the batch size (the batches are listed in the legend entry).

matplotlib is imported only here, with the Agg canvas (no display, no global pyplot state).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from modelcost.core.lazy import require
from modelcost.core.types import BenchResult, GpuSpec

COLORS = {"fp32": "#1f77b4", "tf32": "#2ca02c", "fp16": "#d62728", "bf16": "#9467bd", "int8": "#8c564b",
          "fp8": "#e377c2", "int4": "#7f7f7f", "fp4": "#bcbd22"}


def _roofs(ax: object, gpu: GpuSpec, keys: list[str], lo: float, hi: float) -> None:
    bw_tbs = gpu.bandwidth_gbps / 1e3  # TB/s: TFLOP/s = TB/s x FLOP/B
    top = max(gpu.peak_tflops[k] for k in keys) / bw_tbs  # the memory roof ends at the highest ridge point
    ax.plot([lo, top], [bw_tbs * lo, bw_tbs * top], color="black", lw=1.5,  # type: ignore[attr-defined]
            label=f"memory roof {gpu.bandwidth_gbps:,.0f} GB/s")
    for key in keys:
        peak = gpu.peak_tflops[key]
        ridge = peak / bw_tbs
        color = COLORS.get(key, "gray")
        ax.plot([ridge, hi], [peak, peak], color=color, lw=1.5, label=f"{key} peak {peak:,.1f} TFLOP/s")  # type: ignore[attr-defined]
        measured = gpu.measured_tflops.get(key)
        if measured:
            ax.plot([measured / bw_tbs, hi], [measured, measured], color=color, lw=1, ls="--",  # type: ignore[attr-defined]
                    label=f"{key} measured {measured:,.1f}")
    if gpu.measured_gbps:
        mbw = gpu.measured_gbps / 1e3
        ax.plot([lo, top], [mbw * lo, mbw * top], color="black", lw=1, ls="--",  # type: ignore[attr-defined]
                label=f"measured copy {gpu.measured_gbps:,.0f} GB/s")


_SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd")
_BOUND_MARKERS = {"compute": "o", "memory": "s", "overhead": "X"}


def _points(ax: object, points: Sequence[BenchResult]) -> None:
    """One scatter call per backend x precision (one legend entry each), marker size by batch."""
    series: dict[str, list[BenchResult]] = {}
    for r in points:
        series.setdefault(f"{r.backend} {r.precision}", []).append(r)
    batches = sorted({r.batch_size for r in points})
    size = {b: 22 + 60 * i / max(1, len(batches) - 1) for i, b in enumerate(batches)}
    for i, (name, rs) in enumerate(sorted(series.items())):
        color = _SERIES_COLORS[i % len(_SERIES_COLORS)]
        shown = ", ".join(f"b{b}" for b in sorted({r.batch_size for r in rs}))
        for j, r in enumerate(sorted(rs, key=lambda r: r.batch_size)):
            p = r.roofline
            assert p is not None
            ax.scatter([p.intensity], [p.achieved_tflops], color=color, zorder=3, s=size[r.batch_size],  # type: ignore[attr-defined]
                       alpha=0.85, edgecolors="black", linewidths=0.4, marker=_BOUND_MARKERS.get(p.bound, "o"),
                       label=f"{name} ({shown})" if j == 0 else None)


def plot_roofline(gpu: GpuSpec, results: Sequence[BenchResult], path: str | Path, title: str | None = None) -> Path:
    """Write the roofline of ``results`` (those with a roofline point) against ``gpu`` to ``path``."""
    require("matplotlib")
    from modelcost.report.plots import figure

    points = [r for r in results if r.roofline is not None]
    keys = [k for k in dict.fromkeys(r.roofline.peak_key for r in points) if k in gpu.peak_tflops]  # type: ignore[union-attr]
    keys = keys or [k for k in ("fp32", "bf16") if k in gpu.peak_tflops]
    if not gpu.bandwidth_gbps or not keys:
        raise ValueError(f"{gpu.name}: no bandwidth or peak to draw")
    xs = [r.roofline.intensity for r in points if r.roofline.intensity > 0]  # type: ignore[union-attr]
    ridges = [gpu.peak_tflops[k] / (gpu.bandwidth_gbps / 1e3) for k in keys]
    lo = min(xs + ridges) / 20
    hi = max(xs + ridges) * 20
    fig = figure(9, 6)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _roofs(ax, gpu, keys, lo, hi)
    _points(ax, points)
    ax.set_xlabel("arithmetic intensity (FLOPs per byte moved)")
    ax.set_ylabel("TFLOP/s")
    ax.set_xlim(lo, hi)
    default_title = f"Roofline on {gpu.name}  (o compute, s memory, X overhead-bound; larger = larger batch)"
    ax.set_title(title or default_title, fontsize=10)
    ax.grid(True, which="both", ls=":", lw=0.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    _place(fig, ax)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    svg = path.suffix.lower() == ".svg"
    fig.savefig(str(path), format="svg" if svg else "png", dpi=120,
                **({} if svg else {"pil_kwargs": {"compress_level": 1}}))
    return path


def _place(fig: object, ax: object) -> None:
    """Room for the legend right of the axes, set by hand (``bbox_inches="tight"`` drew the figure twice, see
    ``plots.figure``): the figure widens by the legend's width (its longest label at 7 pt, the marker and padding)
    and the axes keep the 9 x 6 inches' margins for their log-scale tick labels, axis labels and title."""
    from modelcost.report.plots import text_width_in

    _, labels = ax.get_legend_handles_labels()  # type: ignore[attr-defined]
    legend_in = text_width_in(fig, labels, 7) + 0.75
    width_in, height_in = 9.0 + legend_in, 6.0
    fig.set_size_inches(width_in, height_in)  # type: ignore[attr-defined]
    fig.subplots_adjust(left=0.85 / width_in, right=1 - (legend_in + 0.1) / width_in,  # type: ignore[attr-defined]
                        bottom=0.7 / height_in, top=1 - 0.45 / height_in)
