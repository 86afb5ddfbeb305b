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
    from modelcost.sweep.report import sweep_blocks
    from modelcost.sweep.results import best_configs, plan_constraints

    constraints, objective = plan_constraints(db)
    title = f"modelcost sweep report: {db.path.name}"
    blocks = sweep_blocks(title, db.runs(), rows, best_configs(rows, constraints, objective), objective,
                          constraints.as_dict()) + extra
    return render_blocks_html(blocks, title) if _report_kind(path) == "html" else render_blocks(blocks)


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
        metavar="RUN_A RUN_B", help="Flag configs of RUN_B slower than RUN_A beyond the measurement noise "
        "(exit code 1 when any regressed).")] = None,
    tolerance_pct: Annotated[float, typer.Option(
        min=0, callback=finite,
        help="--compare: a significant slowdown smaller than this (percent) is not a regression.")] = 2.0,
) -> None:
    """List, filter, report and compare the results of sweeps."""
    from modelcost.report.console import stdout_console
    from modelcost.report.console_decide import print_run_changes, results_table
    from modelcost.sweep.db import ResultsDB
    from modelcost.sweep.results import export_json, filter_rows

    if report is not None:
        _report_kind(report)
    db = ResultsDB(db_path, create=False)
    rows = filter_rows(db, model=model, gpu=gpu, backend=backend, precision=precision, batch=batch, status=status,
                       run=run, since=since, until=until)
    console = stdout_console(160)
    regressed, extra = 0, []
    if compare is not None:
        from modelcost.sweep.report import compare_blocks
        from modelcost.sweep.results import compare_runs

        a_id, b_id, changes = compare_runs(db, compare[0], compare[1], tolerance_pct)
        regressed = sum(c.regression for c in changes)
        extra = compare_blocks(a_id, b_id, changes, tolerance_pct)
        print_run_changes(console, a_id, b_id, changes)
    # every output is made before any is written: a failure (a damaged row, a bad constraint) leaves no half set
    json_text = export_json(rows) if json_path is not None else None
    report_text = _report_text(db, rows, report, extra) if report is not None else None
    if json_text is not None:
        typer.echo(json_text) if str(json_path) == "-" else _write(json_text + "\n", json_path)
    if report_text is not None:
        _write(report_text, report)
    if compare is None and json_path is None and report is None:
        console.print(results_table(rows))
    if regressed:
        raise typer.Exit(1)

