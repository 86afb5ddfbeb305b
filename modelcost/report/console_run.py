"""The console answer of a finished (or interrupted) analyze / bench run: for a run that benchmarked, what it
found first, then one line per config, then what the user asked for on top (``print_run_extras``); for a static
analysis, its tables. Renders; never decides (the pick arrives as decide's ``Recommendation``)."""

from __future__ import annotations

from typing import Any

from modelcost.core.decisions import Recommendation
from modelcost.core.types import RunReport


def print_run(run: RunReport, recommendation: Recommendation | None = None, console: Any = None, *,
              title: str = "benchmarks", counts: bool = True, top: int | None = 10) -> None:
    """``counts``: show the static analysis (``analyze``; ``bench`` leaves it out). ``top``: the heaviest layers
    a static analysis lists (None: all); a run that benchmarked lists them in the report folder only."""
    from modelcost.report.console import print_cost, print_cost_notes, stdout_console
    from modelcost.report.console_blocks import print_blocks
    from modelcost.report.console_gpu import print_run_extras
    from modelcost.report.sections_answer import answer_blocks

    if not run.benchmarks:
        if counts and run.cost is not None:
            print_cost(run.cost, top=top, console=console)  # its own width when piped (120) without one
        print_run_extras(run, console or stdout_console(160, highlight=False))
        return
    console = console or stdout_console(160, highlight=False)
    print_blocks(answer_blocks(run, recommendation, title=title, counts=counts), console)
    if counts and run.cost is not None:
        print_cost_notes(run.cost, console)
    print_run_extras(run, console)
