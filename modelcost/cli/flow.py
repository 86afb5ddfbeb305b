"""What ``analyze`` and ``bench`` share: turn the typed options into one ``api.RunOptions``, call ``api.run``
once, print each stage as it finishes, then write every output asked for (or say why it was not written).
The order of work lives in ``modelcost.runs.inference``; nothing here measures or decides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from modelcost.core.errors import ModelcostError
from modelcost.core.trace import trace
from modelcost.core.types import RunReport


def comma_list(text: str | None, option: str, example: str) -> list[str] | None:
    """'a, b' -> ['a', 'b'] (items stripped); None (the option not given) -> None. A list with no item in it
    ('' or ',') is refused in one line naming ``option``: it would otherwise run a default nobody asked for."""
    if text is None:
        return None
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise ModelcostError(f"{option} {text!r}: no value given; e.g. {option} {example}")
    return items


def wants_batch_search(text: str | None) -> bool:
    """--batch-sizes auto: batch 1 and the batch at which throughput saturates (``bench.batch_search``)."""
    return text is not None and text.strip().lower() == "auto"


def parse_batch_sizes(text: str | None) -> list[int] | None:
    """'1,8,32' -> [1, 8, 32] (repeats dropped); None -> None. 'auto' reaches here only from a command that
    runs no batch search (``run_options`` and recommend take it first), so it is refused here."""
    if wants_batch_search(text):
        raise ModelcostError("--batch-sizes auto: this command has no throughput-batch search (analyze, bench "
                             "and recommend have one); give the batch sizes, e.g. --batch-sizes 1,8,32")
    items = comma_list(text, "--batch-sizes", "1,8,32")
    if items is None:
        return None
    try:
        sizes = [int(x) for x in items]
    except ValueError:
        raise ModelcostError(f"--batch-sizes {text!r}: expected positive integers separated by commas, "
                             "e.g. 1,8,32") from None
    if any(s < 1 for s in sizes):
        raise ModelcostError(f"--batch-sizes {text!r}: a batch size is a number of samples, so it must be "
                             "positive, e.g. 1,8,32")
    return list(dict.fromkeys(sizes))


def parse_precisions(text: str | None) -> list[str] | None:
    from modelcost.bench.base import PRECISIONS

    if text is not None and text.strip() == "all":
        return None
    names = [p.lower() for p in comma_list(text, "--precisions", "fp32,fp16") or []]
    bad = [p for p in names if p not in PRECISIONS]
    if bad:
        raise ModelcostError(f"--precisions: unknown {', '.join(bad)}; use {', '.join(PRECISIONS)}")
    return names or None


def bench_config(device: str, samples_csv: Path | None, timing: dict[str, Any], **more: Any) -> Any:
    """The BenchConfig of a command: its device, where NVML samples go, and the timing options
    (``cli.timing``: already BenchConfig fields)."""
    from modelcost.bench.base import BenchConfig

    return BenchConfig(device=device, samples_csv=samples_csv, **timing, **more)


def run_options(command: str, *, backends: str | None = None, precisions: str | None = None,
                batch_sizes: str | None = None, tuple_shapes: Sequence[str] | None = None, takes_auto: bool = True,
                **kw: Any) -> Any:
    """``api.RunOptions`` from the CLI's strings (comma lists parsed and checked here). ``takes_auto``: the
    command runs the throughput-batch search, so --batch-sizes auto is taken (compare runs none)."""
    from modelcost import api
    from modelcost.bench.registry import parse_backends

    auto = takes_auto and wants_batch_search(batch_sizes)
    chosen, precs = parse_backends(backends), parse_precisions(precisions)
    sizes = None if auto else parse_batch_sizes(batch_sizes)
    # no --batch-sizes: on a GPU, batch 1 and the batch at which throughput saturates; "auto": that on any device
    kw.setdefault("batch_search", "on" if auto else "off" if sizes else "gpu")
    return api.RunOptions(command=command, backends=tuple(chosen) if chosen else None,
                          precisions=tuple(precs) if precs else None, batch_sizes=tuple(sizes) if sizes else None,
                          input_shapes=tuple(tuple_shapes) if tuple_shapes else None, **kw)


def screen_mode(flag: bool | None) -> str:
    """--screen / --no-screen / neither -> RunOptions.screen ("on" / "off" / "gpu")."""
    return "gpu" if flag is None else "on" if flag else "off"


@dataclass
class Printer:
    """The ``on_stage`` callback of ``api.run``: an interrupted run prints what finished at once; a finished run
    is printed whole by ``run_and_print`` (what it found comes first, so nothing is printed before it)."""

    model: str
    show_cost: bool = True
    top: int | None = 10
    profiling: bool = False
    benchmarking: bool = True  # False (analyze --static): nothing comes next, so no progress line

    def __call__(self, stage: str, run: RunReport) -> None:
        from modelcost.report.console import stderr_console

        if stage == "static" and self.show_cost and self.benchmarking and run.cost is not None:
            from modelcost.report.sections_found import counted_line

            # progress, not the answer: the answer (counts included) is printed whole when the run ends
            stderr_console().print(f"{counted_line(run.cost)}; benchmarking next", markup=False, style="dim")
        elif stage == "finalists" and run.finalist_repeats is not None:  # runs/finalists.py
            rec = run.finalist_repeats
            stderr_console().print(f"measuring the finalists again in fresh sessions ({', '.join(rec.finalists)}; "
                                   f"at most {rec.budget_s:.0f} s) ...", markup=False, style="dim")
        elif stage == "interrupted":
            stderr_console().print("[yellow]interrupted[/]: reporting the benchmarks that finished")
            self.answer(run)
        elif stage == "benchmarks" and self.profiling and any(r.status == "ok" for r in run.benchmarks):
            stderr_console().print("[dim]profiling per layer ...[/]")

    def answer(self, run: RunReport) -> None:
        """The console answer of ``run`` (report/console_run.py), with decide's pick, then where the exports and
        engines are kept."""
        from modelcost.decide.recommend import run_pick
        from modelcost.report.console import stdout_console
        from modelcost.report.console_run import print_run

        print_run(run, run_pick(run.benchmarks), None, title=f"benchmarks: {self.model}", counts=self.show_cost,
                  top=self.top)
        if run.cache_summary:  # where the exports / engines are kept, and how large
            stdout_console(160).print(run.cache_summary, markup=False, highlight=False)


def run_and_print(model: str, options: Any, printer: Printer, run: RunReport | None = None) -> RunReport:
    """``api.run`` with the printer (into ``run`` when given: results land there as they finish); then the
    console answer of the finished run."""
    from modelcost import api

    run = api.run(model, options, printer, run=run)
    if run.complete:
        printer.answer(run)
    if run.predictions:
        from modelcost.report.console import stdout_console
        from modelcost.report.console_predict import predictions_table

        stdout_console(160, highlight=False).print(predictions_table(run.predictions))
    return run


def write_outputs(run: RunReport, *, json_path: Path | None, report: bool, out_dir: Path | None,
                  samples_csv: Path | None = None, staged_csv: Path | None = None,
                  roofline_plot: Path | None = None) -> None:
    """Every output asked for, each written atomically (also for an interrupted run), or one line saying why
    it was not written; each line says where an output went and whether it replaced an earlier run's file.
    ``staged_csv``: the NVML samples collected beside ``samples_csv`` (``options.staged_samples``)."""
    from modelcost.cli.options import publish_samples, wrote

    say = typer.echo
    samples_line = publish_samples(staged_csv, samples_csv)
    if roofline_plot is not None:
        why = roofline_plot_problem(run)
        if why is None:
            from modelcost.report.roofline_plot import plot_roofline

            assert run.gpu is not None
            existed = roofline_plot.exists()
            say(wrote("roofline plot", plot_roofline(run.gpu, run.benchmarks, roofline_plot), existed))
        else:
            say(f"roofline plot not written: {why}")
    if json_path is not None:
        from modelcost.report.json_report import write_json

        existed = json_path.exists()
        write_json(run, json_path)
        say(wrote("JSON report", json_path, existed))
    if report or out_dir is not None:
        from modelcost import api
        from modelcost.cli import signals

        interrupted = signals.received() is not None  # stop within seconds: no plotting library to import
        if interrupted and "plots left out: the run was interrupted" not in run.notes:
            run.notes.append("plots left out: the run was interrupted")
        folder = api.write_report(run, str(out_dir) if out_dir else None,
                                  str(samples_csv) if samples_csv and samples_csv.exists() else None,
                                  plots=not interrupted)
        say(f"report folder: {folder}")
    trace("outputs written")
    if samples_csv is not None:
        if samples_line and "header only" not in samples_line:
            say(samples_line)
        else:
            say((samples_line + "; " if samples_line else "NVML samples not written: ") + samples_problem(run))


def roofline_plot_problem(run: RunReport) -> str | None:
    """Why no roofline plot can be drawn from ``run`` (None: it can)."""
    if run.gpu is not None and any(r.roofline for r in run.benchmarks):
        return None
    if not run.benchmarks:
        return "nothing was benchmarked (the plot places measured configs against the GPU's roofs)"
    if run.gpu is None:
        return run.no_roofline_reason or "no NVIDIA GPU here"
    return "no GPU config was measured (CPU results have no roofline)"


def samples_problem(run: RunReport) -> str:
    """Why the NVML samples CSV is missing: it holds the GPU's samples during each timed GPU run."""
    from modelcost.bench.registry import BACKENDS

    if not run.benchmarks:
        return "nothing was benchmarked"
    on_gpu = [r for r in run.benchmarks
              if r.status == "ok" and getattr(BACKENDS.get(r.backend), "device", "") == "cuda"]
    if not on_gpu:
        return "no GPU config was measured (NVML samples the GPU during GPU runs only)"
    return "NVML gave no samples (see the benchmark notes)"


EXIT_PARTIAL = 3  # exit codes: 0 ok, 1 bad input, 2 usage error, 3 partial result, 130 interrupted


def exit_status(run: RunReport, allow_partial: bool = False) -> None:
    """130 for an interrupted run (its report is written first); 1 when nothing at all could be measured;
    3 when the static analysis is partial (``run.cost.compute.complete`` is False) unless ``allow_partial``."""
    from modelcost.cli import signals

    if not run.complete:
        raise typer.Exit(signals.exit_code())  # 130 (Ctrl-C) / 143 (SIGTERM)
    if run.benchmarks and not any(r.status == "ok" for r in run.benchmarks):
        raise ModelcostError("no configuration could be measured (the reasons are listed above)")
    if run.cost is not None and not run.cost.compute.complete and not allow_partial:
        from modelcost.report.sections import not_counted

        untraced = not_counted(run.cost.compute)
        if untraced:  # the model could not be traced: no counts at all, not lower bounds
            from modelcost.cli.app import fail

            fail(f"not counted: {untraced}")
            raise typer.Exit(EXIT_PARTIAL)

        exit_partial()


def exit_partial() -> None:
    """Exit with code 3 after one line on stderr: the result is partial (``analyze``, ``bench``, ``llm``)."""
    from modelcost.report.console import stderr_console

    stderr_console().print(
        "[yellow]partial result[/]: some ops were not counted, the totals are lower bounds; exit code "
        f"{EXIT_PARTIAL} (pass --allow-partial to accept it)")
    raise typer.Exit(EXIT_PARTIAL)
