"""The rich terminal summary of a static analysis."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from modelcost.core.types import CostReport, LayerCost
from modelcost.core.units import binary_bytes, si
from modelcost.report.sections import not_counted


def _shape(shape: tuple[object, ...] | list[object]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def _totals_table(cost: CostReport) -> Table:
    p, s, c, m = cost.params, cost.storage, cost.compute, cost.memory
    table = Table(title=Text(f"{cost.model.name}  ({cost.model.format})", style="table.title"), show_header=False,
                  title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_column("detail", style="dim")
    trainable = "" if p.trainable is None else f"trainable {p.trainable:,}"
    extra = ", ".join(x for x in (trainable, f"shared {p.shared:,}" if p.shared else "",
                                    f"buffers {p.buffers:,}" if p.buffers else "",
                                    f"constants {p.constants:,}" if p.constants else "") if x)
    table.add_row("parameters", f"{p.total:,}", f"{si(p.total)}  {extra}".strip())
    table.add_row("  by dtype", "", ", ".join(f"{k} {v:,}" for k, v in p.by_dtype.items()))
    on_disk = f"file {binary_bytes(s.file_size_bytes)}" if s.file_size_bytes is not None else "in memory"
    table.add_row("weight storage", binary_bytes(s.bytes), on_disk)
    smaller = (s.fp16_bytes, s.int8_bytes, s.int4_bytes)
    table.add_row("  at fp16 / int8 / int4", "", " / ".join(binary_bytes(b) for b in smaller))
    if not_counted(c):  # the model could not be traced: no counts exist, never zeros shown as a result
        for what in ("MACs", "FLOPs", "activations"):
            table.add_row(what, "[red]not counted[/]", "the forward pass failed (below)")
        return table
    ge = "" if c.complete else "≥ "  # a partial result: the totals are lower bounds
    table.add_row("MACs", f"{ge}{c.macs:,}", f"{ge}{si(c.macs)}")
    if len(c.macs_by_dtype) > 1 or (c.macs_by_dtype and "float32" not in c.macs_by_dtype):
        table.add_row("  by dtype", "", ", ".join(f"{k} {si(v)}" for k, v in c.macs_by_dtype.items()))
    table.add_row("FLOPs", f"{ge}{c.flops:,}", f"{ge}{si(c.flops)}  (2 x MACs + other ops, docs/COUNTING.md)")
    table.add_row("activations", binary_bytes(m.activation_bytes), f"peak live {binary_bytes(m.peak_activation_bytes)}")
    table.add_row("inputs / outputs", f"{binary_bytes(m.input_bytes)} / {binary_bytes(m.output_bytes)}", "")
    table.add_row("arithmetic intensity", f"{m.arithmetic_intensity:.1f}",
                  "FLOPs per byte of weights + inputs + activations")
    return table


def _layers_table(layers: list[LayerCost], total_flops: int, top: int | None) -> Table:
    ranked = sorted(layers, key=lambda layer: layer.flops, reverse=True)
    shown = ranked if top is None else ranked[:top]
    title = "layers" if top is None else f"heaviest {len(shown)} of {len(layers)} layers (by FLOPs)"
    table = Table(title=title, title_justify="left")
    for col, justify in (("layer", "left"), ("op", "left"), ("MACs", "right"), ("FLOPs", "right"),
                         ("% FLOPs", "right"), ("params", "right"), ("output", "left")):
        table.add_column(col, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for layer in shown:
        share = 100.0 * layer.flops / total_flops if total_flops else 0.0
        outs = ", ".join(_shape(s) for s in layer.output_shapes[:2])
        unknown = layer.status == "uncounted"  # not counted: its cost is unknown, not zero
        table.add_row(Text(layer.name), Text(layer.op), "?" if unknown else si(layer.macs),
                      "?" if unknown else si(layer.flops), f"{share:.1f}", si(layer.params), outs)
    return table


def stdout_console(width_when_piped: int = 160, **kwargs: object) -> Console:
    """A console for stdout: the terminal's width, or ``width_when_piped`` when the output is piped or captured
    (rich would otherwise squeeze wide tables into 80 columns)."""
    import sys

    if sys.stdout.isatty():
        return Console(emoji=False, **kwargs)  # type: ignore[arg-type]
    return Console(width=width_when_piped, emoji=False, **kwargs)  # type: ignore[arg-type]


def stderr_console() -> Console:
    """The console for progress, warnings and errors: stderr, no highlighting, long lines kept whole, and no
    emoji codes (a path like ``:fire:.onnx`` is printed as typed)."""
    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def partial_warning(cost: CostReport) -> str:
    """The one line that says a result is partial, naming the uncounted ops."""
    return partial_line(cost.compute.uncounted_ops, cost.compute.incomplete_reasons)


def partial_line(uncounted: dict[str, int], reasons: list[str]) -> str:
    """The one line that says a result is partial (``analyze``, ``llm``), naming the uncounted ops."""
    ops = ", ".join(f"{op} x{n}" for op, n in uncounted.items())
    what = f"not counted: {ops}" if ops else "; ".join(reasons) or "see the notes"
    return f"warning: partial result, the totals are lower bounds (≥): {what}"


def print_cost(cost: CostReport, top: int | None = 10, console: Console | None = None) -> None:
    console = console or stdout_console(120)
    inputs = ", ".join(f"{t.name} {_shape(t.shape)} {t.dtype}" for t in cost.inputs)
    console.print(f"[bold]inputs:[/] {escape(inputs)}", emoji=False)
    console.print(_totals_table(cost))
    untraced = not_counted(cost.compute)
    if top != 0 and cost.layers and not untraced:
        console.print(_layers_table(cost.layers, cost.compute.flops, top))
    if untraced:
        console.print(f"[bold red]not counted:[/] {escape(untraced)}", highlight=False, emoji=False)
    elif not cost.compute.complete:
        console.print(f"[bold yellow]{escape(partial_warning(cost))}[/]", emoji=False)
        for reason in cost.compute.incomplete_reasons:
            console.print(f"[yellow]  not counted:[/] {escape(reason)}", emoji=False)
    else:
        console.print("[green]every op counted[/] (or known to cost nothing)")
    print_cost_notes(cost, console)


def print_caveats(report: object, console: Console) -> None:
    """The notes, assumptions and problems of a training or LLM report (both carry the three lists), one line
    each: what to read before trusting a figure."""
    for note in getattr(report, "notes", ()):
        console.print(f"[dim]note:[/] {escape(note)}")
    for assumed in getattr(report, "assumptions", ()):
        console.print(f"[yellow]assumed:[/] {escape(assumed.describe())}")
    for problem in getattr(report, "problems", ()):
        console.print(f"[red]problem:[/] {escape(problem)}")


def print_cost_notes(cost: CostReport, console: Console) -> None:
    """The static analysis's notes, the values it assumed and the problems it met, one line each."""
    untraced = not_counted(cost.compute)
    for note in cost.notes:
        console.print(f"[dim]note:[/] {escape(note)}", emoji=False)
    for assumed in cost.assumptions:
        console.print(f"[yellow]assumed:[/] {escape(assumed.describe())}", emoji=False)
    for problem in cost.problems:
        if untraced and problem.endswith(untraced):
            continue  # said above as "not counted"
        console.print(f"[red]problem:[/] {escape(problem)}", emoji=False)
