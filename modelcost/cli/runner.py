"""The one command runner: every command that writes outputs (analyze, bench, recommend, compare, quantize,
train, llm) goes through ``run_command``, which owns the steps they share, in this order:

1. check every output path before anything is measured, and lock the --out folder (``Outputs.prepare``);
2. stage the NVML samples CSV beside where it goes (``options.staged_samples``);
3. do the work, the command's ``work(run, staged_csv)``: build its options and call its ``api`` function;
   Ctrl-C / SIGTERM at any point writes what the run holds and exits 130 / 143 (``options.interruptible``);
4. print the answer (the command's ``render``), then write the outputs (the command's ``write``, by default
   ``flow.write_outputs``), for an interrupted run too;
5. exit 130 / 143 when the run was interrupted.

A command then declares its options, says what it does in ``work`` and how it prints in ``render``, and
keeps only its own exit rules (a partial count, nothing measured, no pick)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import typer

from modelcost.core.types import RunReport

R = TypeVar("R")


@dataclass
class Outputs:
    """What a command writes, as the user named it. ``sample``: False when nothing is timed (analyze --static),
    so no samples are staged; ``out_files``: what the command writes in --out (default: the report folder's
    files); ``report_dirs``: the report folders checked before the run (default: --out; quantize: one per
    candidate); ``more_folders``: other folders it writes (quantize's --model-dir)."""

    json_path: Path | None = None
    report: bool = False
    out: Path | None = None
    samples_csv: Path | None = None
    roofline_plot: Path | None = None
    sample: bool = True
    out_files: list[str] | None = None
    report_dirs: list[Path] | None = None
    more_folders: tuple[Path | None, ...] = ()

    def prepare(self) -> None:
        """Refuse an output that cannot be written, or a report folder holding a file modelcost did not write,
        before anything is measured; then lock --out against a second run writing it."""
        from modelcost.cli import options as o

        o.check_writable(files=(self.json_path, self.samples_csv, self.roofline_plot),
                         folders=(*self.more_folders, self.out))
        for folder in ([self.out] if self.report_dirs is None else self.report_dirs):
            o.check_out(folder, self.samples_csv, files=self.out_files)
        o.lock_out(self.out)

    @property
    def wants_folder(self) -> bool:
        """--report or --out: the report folder is written."""
        return self.report or self.out is not None

    def written(self, staged_csv: Path | None) -> dict[str, Any]:
        """``flow.write_outputs``' keywords."""
        return {"json_path": self.json_path, "report": self.report, "out_dir": self.out,
                "samples_csv": self.samples_csv, "staged_csv": staged_csv, "roofline_plot": self.roofline_plot}


@dataclass
class Done(Generic[R]):
    """What ``run_command`` hands back: the run (its ``command`` is the one ``command_line``) and what ``work``
    returned (None when a signal stopped it)."""

    run: RunReport
    result: R | None


Work = Callable[[RunReport, "Path | None"], R]
Write = Callable[[RunReport, "R | None", "Path | None"], None]


def run_command(name: str, outputs: Outputs, work: Work[R], *, render: Callable[[R], None] | None = None,
                write: Write[R] | None = None, complete: Callable[[R], bool] | None = None) -> Done[R]:
    """Run the command ``name`` (module docstring). ``work(run, staged_csv)``: fills ``run`` (or returns its
    own result) and returns what ``render`` prints; ``write(run, result, staged_csv)``: the outputs (default:
    ``flow.write_outputs``; ``result`` is None when a signal stopped the work); ``complete(result)``: whether
    the work finished, for a command whose api function keeps its own RunReport (compare, quantize)."""
    from modelcost.cli import options as o
    from modelcost.cli import signals
    from modelcost.core.text import utc_timestamp

    def write_all(run: RunReport, result: R | None, staged: Path | None) -> None:
        if write is None:
            from modelcost.cli.flow import write_outputs

            write_outputs(run, **outputs.written(staged))
        else:
            write(run, result, staged)

    from modelcost.cli.flags import spell_for

    spell_for(name)  # a library error names a field; the user reads this command's flag for it
    outputs.prepare()
    run = RunReport(command=o.command_line(name), created=utc_timestamp())
    with o.staged_samples(outputs.samples_csv if outputs.sample else None) as staged:
        with o.interruptible(run, lambda: write_all(run, None, staged)):
            result = work(run, staged)
        finished = run.complete and (complete is None or complete(result))
        if not finished:  # the api stopped the work on Ctrl-C / SIGTERM: say which
            o.mark_interrupted(run)
        if render is not None:
            render(result)
        write_all(run, result, staged)
    if not finished:
        raise typer.Exit(signals.exit_code())  # 130 (Ctrl-C) / 143 (SIGTERM), after the outputs
    return Done(run, result)
