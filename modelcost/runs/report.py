"""The shared last step: the report folder, checkpointed while a command runs and written in full at its end.

A report folder is written after every finished step (a (backend, batch) pair of a comparison), marked
INCOMPLETE, without plots (quick); the final write draws the plots and drops the mark. So a backend that takes
the process down, or Ctrl-C, leaves the report of everything that finished.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.types import RunReport


class Checkpointer:
    """Writes the report folder: quick INCOMPLETE checkpoints during the run, the full report at the end.
    ``before_write``: brings the run up to date first (rooflines of the results measured since the last write)."""

    def __init__(self, run: RunReport, cmp: Comparison | None, out: str | Path | None, write: bool = True,
                 before_write: Callable[[], None] | None = None) -> None:
        from modelcost.report.folder import default_dir

        self.run, self.cmp, self.write = run, cmp, write
        self.folder = Path(out) if out is not None else default_dir(run, cmp)
        self.done = 0
        self.before_write = before_write or (lambda: None)

    def checkpoint(self) -> None:
        self.before_write()
        if not self.write:
            return
        from modelcost.report.folder import write_report_folder

        self.done += 1
        note = f"in progress: report written after {self.done} finished step(s); a later write replaces it"
        run = dataclasses.replace(self.run, complete=False, notes=[*self.run.notes, note],
                                  benchmarks=list(self.run.benchmarks))
        cmp = dataclasses.replace(self.cmp, complete=False) if self.cmp is not None else None
        write_report_folder(run, self.folder, comparison=cmp, plots=False)

    def final(self, recommendation: Recommendation | None = None, samples_csv: Path | None = None) -> Path | None:
        self.before_write()
        if not self.write:
            return None
        from modelcost.report.folder import write_report_folder

        return write_report_folder(self.run, self.folder, samples_csv, recommendation=recommendation,
                                   comparison=self.cmp)


def write_report(run: Any, out_dir: str | None = None, samples_csv: str | None = None, plots: bool = True) -> Any:
    """The report folder of an analyze / bench run (``out_dir`` or reports/<model>-<time>), with a
    recommendation section (no constraints: best throughput, and the Pareto front) when configs were measured.
    ``plots=False``: no plots (an interrupted run writes quickly)."""
    from modelcost.decide.recommend import run_pick
    from modelcost.report.folder import write_report_folder
    from modelcost.runs.gpu import add_rooflines

    add_rooflines(run)
    return write_report_folder(run, out_dir, samples_csv, recommendation=run_pick(run.benchmarks), plots=plots)
