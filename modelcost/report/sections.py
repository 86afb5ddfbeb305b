"""The content of a report as neutral blocks, rendered alike by ``markdown.py`` and ``html.py``.

One builder decides what a report says; the two renderers only decide how it looks, so the Markdown and the
HTML never disagree. Sees only ``modelcost.core`` types.
"""

from __future__ import annotations


from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.types import CostReport, RunReport
from modelcost.core.units import binary_bytes, si
from modelcost.report.blocks import (  # noqa: F401 - the block types, re-exported for the renderers
    INCOMPLETE,
    UNTRACED,
    Banner,
    Block,
    Bullets,
    Heading,
    Image,
    Notes,
    Para,
    Table,
    caveat_blocks,
    incomplete_text,
    not_counted,
)


def report_title(run: RunReport, comparison: Comparison | None = None) -> str:
    if comparison is not None:
        return f"modelcost compare: {comparison.base.name} vs {comparison.candidate.name}"
    name = run.cost.model.name if run.cost else run.training.model if run.training else "model"
    return f"modelcost report: {name}"


def build(run: RunReport, plots: list[tuple[str, str]] | None = None, recommendation: Recommendation | None = None,
          comparison: Comparison | None = None) -> list[Block]:
    """Every block of the report, in order. ``plots``: (name, title) of the plots that were drawn."""
    from modelcost.report import sections_bench as sb
    from modelcost.report import sections_decide as sd

    blocks: list[Block] = [Heading(report_title(run, comparison), 1)]
    if not run.complete or (comparison is not None and not comparison.complete):
        blocks.append(Banner(incomplete_text(run)))
    meta = [f"created {run.created or '-'}"]
    if run.command:
        meta.append(f"command: {run.command}")
    if run.device is not None:
        meta.append(f"device: {run.device.name} ({run.device.kind})")
    blocks.append(Para("; ".join(meta)))
    if comparison is None:  # a comparison's answer is its verdict (sections_decide)
        from modelcost.report.sections_found import found_blocks

        blocks += found_blocks(run, recommendation)
    if run.cost is not None:
        blocks += summary_blocks(run.cost)
    if comparison is not None:
        blocks += sd.comparison_blocks(comparison)
    if recommendation is not None:
        blocks += sd.recommendation_blocks(recommendation)
    if run.benchmarks:
        blocks += sb.benchmark_blocks(run.benchmarks)
        blocks += sb.roofline_blocks(run.benchmarks)
        blocks += sb.layer_roofline_blocks(run.layer_tables)
        blocks += sb.layer_profile_blocks(run.benchmarks)
    if run.training is not None:
        from modelcost.report.sections_train import training_blocks

        blocks += training_blocks(run.training)
    if run.gpu is not None:
        blocks += sb.gpu_blocks(run.gpu)
    blocks += sb.what_if_blocks(run.what_if)
    if run.cost is not None:
        blocks += static_blocks(run.cost)
    if plots:
        blocks.append(Heading("Plots"))
        blocks += [Image(name, title) for name, title in plots]
    if run.notes:
        blocks += [Heading("Run notes"), Bullets(list(run.notes))]
    return blocks


def summary_blocks(cost: CostReport) -> list[Block]:
    p, s, c, m = cost.params, cost.storage, cost.compute, cost.memory
    ge = "" if c.complete else "≥ "  # a partial result: the totals are lower bounds
    rows = [
        ["model", f"{cost.model.name} ({cost.model.format}, {cost.model.source})"],
        ["inputs", ", ".join(f"{t.name} {'x'.join(str(d) for d in t.shape)} {t.dtype}" for t in cost.inputs)],
        ["parameters", f"{p.total:,} ({si(p.total)})" + _by(p.by_dtype, lambda v: f"{v:,}")],
        ["storage", f"{s.bytes:,} B ({binary_bytes(s.bytes)})" + _by(s.by_dtype, binary_bytes)],
        ["MACs", f"{ge}{c.macs:,} ({ge}{si(c.macs)})" + _by(c.macs_by_dtype, si)],
        ["FLOPs", f"{ge}{c.flops:,} ({ge}{si(c.flops)}) = 2 x MACs + the other ops' documented costs"],
        ["peak live activations", binary_bytes(m.peak_activation_bytes)],
        ["arithmetic intensity", f"{m.arithmetic_intensity:.2f} FLOPs/byte"],
    ]
    untraced = not_counted(c)
    if untraced:  # no counts exist: never zeros that read as a result
        rows[4:8] = [["MACs", f"not counted: {untraced}"], ["FLOPs", "not counted"]]
    if s.file_size_bytes is not None:
        rows.insert(4, ["file size on disk", binary_bytes(s.file_size_bytes)])
    if cost.batch_size is not None:
        rows.insert(2, ["batch size (static analysis)", str(cost.batch_size)])
    if c.uncounted_ops:
        rows.append(["uncounted ops", ", ".join(f"{k} x{v}" for k, v in sorted(c.uncounted_ops.items()))])
    blocks: list[Block] = [Heading("Summary")]
    if not c.complete:
        blocks.append(Banner("PARTIAL: some ops were not counted, so MACs and FLOPs are lower bounds (≥): "
                             + "; ".join(c.incomplete_reasons)))
    return [*blocks, Table(["", "value"], rows)]


def _by(d: dict[str, int], fmt) -> str:  # type: ignore[no-untyped-def]
    if len(d) <= 1:
        return ""
    return " — " + ", ".join(f"{k}: {fmt(v)}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))


def static_blocks(cost: CostReport, top: int = 15) -> list[Block]:
    c = cost.compute
    blocks: list[Block] = [Heading("Static analysis")]
    if not_counted(c):
        blocks.append(Para(f"not counted: {not_counted(c)}", strong=True))
        return blocks + _notes_blocks(cost)
    ops = sorted(set(c.flops_by_op) | set(c.macs_by_op), key=lambda o: -c.flops_by_op.get(o, 0))
    if ops:
        total = c.flops or 1
        rows = [[o, f"{c.macs_by_op.get(o, 0):,}", f"{c.flops_by_op.get(o, 0):,}",
                 f"{c.flops_by_op.get(o, 0) / total * 100:.1f}%"] for o in ops]
        blocks += [Heading("Compute by op type", 3),
                   Table(["op", "MACs", "FLOPs", "share of FLOPs"], rows, [False, True, True, True])]
    layers = sorted(cost.layers, key=lambda lc: -lc.flops)[:top]
    if layers:
        rows = [[lc.name, lc.op, f"{lc.macs:,}", f"{lc.flops:,}", f"{lc.params:,}",
                 "; ".join("x".join(map(str, s)) for s in lc.output_shapes), lc.macs_dtype or "-"] for lc in layers]
        blocks += [Heading(f"Heaviest layers (top {len(layers)} of {len(cost.layers)} by FLOPs)", 3),
                   Table(["layer", "op", "MACs", "FLOPs", "params", "output shapes", "MAC dtype"], rows,
                         [False, False, True, True, True, False, False])]
    if c.uncounted_ops:
        blocks += [Heading("Uncounted ops (their cost is not in the totals)", 3),
                   Bullets([f"{k}: {v} occurrence(s)" for k, v in sorted(c.uncounted_ops.items())])]
    m = cost.memory
    blocks += [Heading("Memory (static)", 3), Table(["", "bytes"], [
        ["weights", binary_bytes(m.weight_bytes)], ["inputs", binary_bytes(m.input_bytes)],
        ["outputs", binary_bytes(m.output_bytes)], ["all intermediate activations", binary_bytes(m.activation_bytes)],
        ["peak of live activations (topological order)", binary_bytes(m.peak_activation_bytes)],
    ])]
    return blocks + _notes_blocks(cost)


def _notes_blocks(cost: CostReport) -> list[Block]:
    return caveat_blocks(cost, notes="Assumptions", problems="Problems met")
