"""The terminal view of a training analysis: the tables of ``sections_train`` rendered with rich."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from modelcost.core.training import TrainingReport
from modelcost.report.sections import Table
from modelcost.report.sections_train import bench_table, memory_table, static_table


def _rich(t: Table) -> RichTable:
    table = RichTable(show_lines=False)
    for i, head in enumerate(t.headers):
        right = bool(t.numeric) and i < len(t.numeric) and t.numeric[i]
        table.add_column(escape(head), justify="right" if right else "left")
    for row in t.rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


def print_training(t: TrainingReport, console: Console | None = None) -> None:
    from modelcost.report.console import print_caveats, stdout_console

    console = console or stdout_console()
    console.print(_rich(static_table(t)))
    console.print(_rich(memory_table(t)))
    console.print(f"[dim]predicted peak: {escape(t.memory.peak_basis)}[/]")
    if t.benchmarks:
        for timing in sorted({r.timing for r in t.benchmarks if r.timing}):
            console.print(f"[dim]{escape(timing)}[/]")
        console.print(_rich(bench_table(t)))
    if t.predictions:
        from modelcost.report.console_predict import predictions_table

        console.print(predictions_table(t.predictions))
    print_caveats(t, console)
