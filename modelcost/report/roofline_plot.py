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
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    points = [r for r in results if r.roofline is not None]
    keys = [k for k in dict.fromkeys(r.roofline.peak_key for r in points) if k in gpu.peak_tflops]  # type: ignore[union-attr]
    keys = keys or [k for k in ("fp32", "bf16") if k in gpu.peak_tflops]
    if not gpu.bandwidth_gbps or not keys:
        raise ValueError(f"{gpu.name}: no bandwidth or peak to draw")
    xs = [r.roofline.intensity for r in points if r.roofline.intensity > 0]  # type: ignore[union-attr]
    ridges = [gpu.peak_tflops[k] / (gpu.bandwidth_gbps / 1e3) for k in keys]
    lo = min(xs + ridges) / 20
    hi = max(xs + ridges) * 20
    fig = Figure(figsize=(9, 6), dpi=120)
    FigureCanvasAgg(fig)
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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path), format="svg" if path.suffix.lower() == ".svg" else "png", bbox_inches="tight")
    return path
