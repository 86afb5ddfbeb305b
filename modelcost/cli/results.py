"""``modelcost results results.sqlite``: list, filter, report and compare what sweeps measured. Wiring and
printing only; the work is in ``modelcost.sweep.results`` / ``modelcost.sweep.report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from modelcost.cli.app import app, user_errors
from modelcost.cli.options import finite
from modelcost.core.errors import ModelcostError


def _table(rows: list[dict[str, Any]]) -> Any:
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"{len(rows)} result(s)", title_justify="left")
    for col in ("run", "rep", "model", "GPU", "backend", "precision", "batch", "status", "p50 ms", "p99 ms", "ips",
                "finished"):
        t.add_column(col, justify="right" if col in ("run", "rep", "batch", "p50 ms", "p99 ms", "ips") else "left")
    for r in rows:
        status = escape(r["status"] + (f": {r['reason'][:80]}" if r["reason"] else ""))
        if r.get("unstable"):
            status += f" [yellow]unstable[/] ({escape(r['unstable'][0][:60])})"
        t.add_row(str(r["run_id"]), str(r.get("repeat") or 1), escape(r["model_name"]), escape(r["device_name"] or "-"),
                  r["backend"], r["precision"], str(r["batch_size"]), status, _g(r["latency_p50_ms"]),
                  _g(r["latency_p99_ms"]), _g(r["throughput_ips"], 5), r["finished"] or "-")
    return t


def _g(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


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
        _print_compare(console, cmp)
    if noise:
        from modelcost.sweep.noise import baseline_rows, noise_report

        found = noise_report(rows)
        _print_noise(console, found)
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
        console.print(_table(rows))
    if regressed:
        raise typer.Exit(1)


def _print_compare(console: Any, cmp: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"run {cmp.a_id} (A) vs run {cmp.b_id} (B): {len(cmp.changes)} config(s) compared",
              title_justify="left")
    for col in ("config", "GPU", "A p50 ms", "B p50 ms", "runs", "verdict", "why"):
        t.add_column(col, justify="right" if "ms" in col or col == "runs" else "left")
    style = {"regression": "bold red", "improvement": "green", "too noisy to judge": "yellow"}
    for c in cmp.changes:
        verdict = c.verdict.upper() if c.regression else c.verdict
        t.add_row(escape(c.label), escape(c.gpu), _g(c.a_ms), _g(c.b_ms), f"{c.runs[0]}/{c.runs[1]}",
                  f"[{style.get(c.verdict, 'default')}]{escape(verdict)}[/]", escape("; ".join([c.detail, *c.notes])))
    console.print(t)
    for o in cmp.left_out:
        console.print(f"left out: {o.label} ({o.gpu}): {o.why}", markup=False, highlight=False, style="dim")
    n = cmp.regressions
    counts = (f"{cmp.count('improvement')} improvement(s), {cmp.count('no change')} no change, "
              f"{cmp.count('too noisy to judge')} too noisy to judge, {len(cmp.left_out)} left out")
    console.print(f"{n} regression(s); {counts}" if n else f"no regression beyond the noise between runs; {counts}",
                  highlight=False, style="bold red" if n else "green")


def _print_noise(console: Any, found: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    from modelcost.sweep.noise import WITHIN

    rep = found.repeated
    if not rep:
        console.print("no config was measured in more than one run of the rows selected: 'modelcost sweep PLAN "
                      "--repeats 3' measures each config three times", highlight=False)
        return
    t = Table(title=f"noise between runs: {len(rep)} config(s) measured in 2 or more runs", title_justify="left")
    for col in ("config", "GPU", "runs", "p50 ms", "spread", "sd (ln p50)", "unstable runs"):
        t.add_column(col, justify="left" if col in ("config", "GPU") else "right")
    for c in sorted(rep, key=lambda c: -c.summary.range_rel):
        t.add_row(escape(c.label), escape(c.ident[-1]), str(c.summary.runs), _g(c.summary.p50_ms),
                  f"{c.summary.range_rel * 100:.1f}%",
                  f"{c.spread.sd_log * 100:.2f}% ({c.spread.df} df)" if c.spread.known else "-", str(c.unstable_runs))
    console.print(t)
    shares = ", ".join(f"{found.share_within(w) * 100:.0f}% within {w * 100:g}%" for w in WITHIN)
    console.print(f"figures that repeat: {shares} (spread = max / min - 1 of the per-run p50s)", highlight=False)


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
