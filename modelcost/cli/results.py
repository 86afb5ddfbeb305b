"""``modelcost results results.sqlite``: list, filter, report and compare what sweeps measured. Wiring and
printing only; the work is in ``modelcost.sweep.results`` / ``modelcost.sweep.report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from modelcost.cli.app import app, user_errors
from modelcost.cli.options import finite
from modelcost.core.errors import ModelcostError


def _write(text: str, path: Path) -> None:
    from modelcost.report.atomic import atomic_write_text

    atomic_write_text(path, text)
    typer.echo(f"wrote {path}", err=True)


def _report_text(db: Any, rows: list[dict[str, Any]], path: Path, extra: list[Any]) -> str:
    from modelcost.report.html import render_blocks_html
    from modelcost.report.markdown import render_blocks
    from modelcost.sweep.noise import noise_report, stored_baseline
    from modelcost.sweep.report import NOISE_PLOT, sweep_blocks
    from modelcost.sweep.results import best_configs, plan_constraints

    constraints, objective = plan_constraints(db)
    title = f"modelcost sweep report: {db.path.name}"
    noise = noise_report(rows)
    blocks = sweep_blocks(title, db.runs(), rows, best_configs(rows, constraints, objective, stored_baseline(db)),
                          objective, constraints.as_dict(), noise) + extra
    png = _noise_png(noise)
    if png is None:
        blocks = [b for b in blocks if getattr(b, "name", None) != NOISE_PLOT]
    if _report_kind(path) == "html":
        return render_blocks_html(blocks, title, {NOISE_PLOT: ("png", png)} if png else None)
    if png is None:
        return render_blocks(blocks)
    plot = path.with_name(f"{path.stem}_noise.png")  # beside the Markdown file, which links it by name
    _write_bytes(png, plot)
    return render_blocks(blocks, {NOISE_PLOT: plot.name})


def _noise_png(noise: Any) -> bytes | None:
    """The noise plot, or None when no config was measured twice or matplotlib is missing (the table stays)."""
    from modelcost.report.plots import spread_across_runs
    from modelcost.sweep.report import noise_plot_data

    data = noise_plot_data(noise)
    if not data:
        return None
    try:
        return spread_across_runs(data)
    except ModelcostError:  # matplotlib not installed
        return None


def _write_bytes(data: bytes, path: Path) -> None:
    from modelcost.report.atomic import atomic_write_bytes

    atomic_write_bytes(path, data)
    typer.echo(f"wrote {path}", err=True)


def _report_kind(path: Path) -> str:
    """'html' or 'md' from the --report file's suffix; anything else is refused before any work is done."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix in (".md", ".markdown"):
        return "md"
    raise ModelcostError(f"--report {path}: end it in .md or .html")


@app.command()
@user_errors
def results(
    db_path: Annotated[Path, typer.Argument(metavar="DB", help="A results database written by 'modelcost sweep'.")],
    model: Annotated[str | None, typer.Option(help="Only this model (its plan name).")] = None,
    gpu: Annotated[str | None, typer.Option(help="Only devices whose name contains this (e.g. H200).")] = None,
    backend: Annotated[str | None, typer.Option(help="Only this backend.")] = None,
    precision: Annotated[str | None, typer.Option(help="Only this precision.")] = None,
    batch: Annotated[int | None, typer.Option(min=1, help="Only this batch size.")] = None,
    status: Annotated[str | None, typer.Option(help="Only this status: ok, unavailable, failed, oom.")] = None,
    run: Annotated[str | None, typer.Option(help="Only this run: its id, its label, or 'latest'.")] = None,
    since: Annotated[str | None, typer.Option(help="Only rows finished at or after this ISO date/time.")] = None,
    until: Annotated[str | None, typer.Option(help="Only rows finished before this ISO date/time (a date: "
                                                      "through that day).")] = None,
    report: Annotated[Path | None, typer.Option(
        help="Write the sweep report (.md or .html): best config per model and GPU, GPU x model table.")] = None,
    json_path: Annotated[Path | None, typer.Option(
        "--json", help="Export the rows as JSON here ('-': stdout).")] = None,
    compare: Annotated[tuple[str, str] | None, typer.Option(
        metavar="RUN_A RUN_B", help="Judge each config of RUN_B against RUN_A (matched by model name, backend, "
        "precision, batch, GPU) on the noise between runs: regression, improvement, no change or too noisy to "
        "judge. Exit code 1 when any regressed, or when no config is comparable.")] = None,
    tolerance_pct: Annotated[float, typer.Option(
        min=0, callback=finite,
        help="--compare: a clear slowdown smaller than this (percent) is not a regression.")] = 2.0,
    resolution_pct: Annotated[float, typer.Option(
        min=0, callback=finite,
        help="--compare: a config whose 95% interval is wider than +- this (percent) is too noisy to judge.")] = 10.0,
    noise: Annotated[bool, typer.Option(
        "--noise", help="The noise between runs: each config's spread across the runs selected (its repeats and "
        "other runs of the same content), and the share whose figure repeats within 2% / 5%.")] = False,
    save_noise: Annotated[bool, typer.Option(
        "--save-noise", help="With --noise: store these spreads in the database as the noise baseline that "
        "--compare pools with the runs' own repeats (select A/A runs: the same code measured again).")] = False,
) -> None:
    """List, filter, report and compare the results of sweeps."""
    from modelcost.report.console import stdout_console
    from modelcost.report.console_decide import print_noise, print_run_changes, results_table
    from modelcost.sweep.db import ResultsDB
    from modelcost.sweep.results import export_json, filter_rows

    if report is not None:
        _report_kind(report)
    if save_noise and not noise:
        raise ModelcostError("--save-noise stores what --noise measures: give --noise too")
    db = ResultsDB(db_path, create=False)
    rows = filter_rows(db, model=model, gpu=gpu, backend=backend, precision=precision, batch=batch, status=status,
                       run=run, since=since, until=until)
    console = stdout_console(160)
    regressed, extra = 0, []
    if compare is not None:
        from modelcost.sweep.compare import compare_runs
        from modelcost.sweep.report import compare_blocks

        cmp = compare_runs(db, compare[0], compare[1], tolerance_pct, resolution_pct)
        regressed = cmp.regressions
        extra = compare_blocks(cmp)
        print_run_changes(console, cmp)
    if noise:
        from modelcost.sweep.noise import WITHIN, baseline_rows, noise_report

        found = noise_report(rows)
        print_noise(console, found, WITHIN)
        if save_noise:
            _save_noise(db_path, baseline_rows(found))
    # every output is made before any is written: a failure (a damaged row, a bad constraint) leaves no half set
    json_text = export_json(rows) if json_path is not None else None
    report_text = _report_text(db, rows, report, extra) if report is not None else None
    if json_text is not None:
        typer.echo(json_text) if str(json_path) == "-" else _write(json_text + "\n", json_path)
    if report_text is not None:
        _write(report_text, report)
    if compare is None and json_path is None and report is None and not noise:
        console.print(results_table(rows))
    if regressed:
        raise typer.Exit(1)


def _save_noise(db_path: Path, rows: list[dict[str, Any]]) -> None:
    from modelcost.sweep.db import ResultsDB

    if not rows:
        raise ModelcostError("--save-noise: no config of the rows selected was measured twice with the same content, "
                             "so there is no spread to store")
    writer = ResultsDB(db_path)
    try:
        n = writer.save_noise(rows)
    finally:
        writer.close()
    typer.echo(f"stored the noise baseline of {n} config(s) in {db_path}", err=True)
