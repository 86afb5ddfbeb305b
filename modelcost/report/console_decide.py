"""The terminal answer of the decisions (``recommend``, ``compare`` / ``quantize``) and of ``results`` (a sweep's
rows, two runs compared). The CLI calls these with a finished result; nothing here judges. Sees only
``modelcost.core`` types (the sweep rows and changes are read by their fields)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape

from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.text import config_label
from modelcost.core.units import binary_bytes, number


def decision_console() -> Any:
    """stdout for a decision's answer: no highlighting, long lines kept whole, no emoji codes."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, emoji=False)


def print_skipped_and_folder(con: Any, skipped: list[str], folder: Any) -> None:
    """The closing lines of compare and recommend: what was not measured (with why) and where the report is."""
    for line in skipped:
        what = ("not decided on" if "unstable timings" in line else
                "short measurement only" if ": screened (screened out:" in line else "not measured")
        con.print(f"[yellow]{what}[/]: {escape(line)}", markup=True)
    if folder is not None:
        con.print(f"report: {folder}", markup=False)


def print_comparison(cmp: Comparison, folder: Path | None) -> None:
    from rich.table import Table

    con = decision_console()
    b, c = cmp.base, cmp.candidate
    con.print(f"[bold]{escape(c.name)}[/] ({c.precision}) vs [bold]{escape(b.name)}[/] ({b.precision})", markup=True)
    if b.storage_bytes and c.storage_bytes is not None:
        con.print(f"weights: {binary_bytes(c.storage_bytes)} vs {binary_bytes(b.storage_bytes)} "
                  f"({c.storage_bytes / b.storage_bytes * 100:.1f}%)")
    table = Table(title="speed (interleaved blocks, 95% CI)", title_justify="left")
    for col in ("backend", "batch", "base ms", "candidate ms", "verdict"):
        table.add_column(col)
    for s in cmp.speed:
        table.add_row(s.backend, str(s.batch_size), f"{s.base_ms:.4f}", f"{s.candidate_ms:.4f}", s.verdict)
    con.print(table)
    for s in cmp.speed:
        for h in s.hints:
            con.print(f"  {s.backend} b{s.batch_size}: {h}", markup=False)
    for backend, a in cmp.accuracy:
        top1 = f", top-1 agreement {a.top1_agreement * 100:.2f}%" if a.top1_agreement is not None else ""
        con.print(f"accuracy on {backend}: cosine {a.cosine:.6f}, max abs err {number(a.max_abs_err, 3)}{top1} "
                  f"({cmp.data})", markup=False)
    print_skipped_and_folder(con, cmp.skipped, folder)


def print_recommendation(rec: Recommendation, folder: Path | None) -> None:
    from rich.table import Table

    con = decision_console()
    if rec.best is not None:
        con.print(f"[bold green]recommended[/]: {escape(config_label(rec.best))}", markup=True)
    else:
        con.print("[bold red]nothing meets the constraints[/]", markup=True)
    for reason in rec.reasons:
        con.print(f"  - {reason}", markup=False)
    if rec.pareto:
        table = Table(title=f"latency-throughput Pareto front ({rec.latency_stat})", title_justify="left")
        for col in ("config", f"{rec.latency_stat} ms", "IPS", "meets constraints"):
            table.add_column(col)
        for r in rec.pareto:
            lat = None if r.latency_ms is None else float(getattr(r.latency_ms, rec.latency_stat))
            table.add_row(config_label(r), f"{lat:.3f}" if lat is not None else "-", number(r.throughput_ips),
                          "yes" if r in rec.feasible else "no")
        con.print(table)
    for line in rec.unranked:
        con.print(f"[yellow]not ranked[/]: {escape(line)}", markup=True)
    print_skipped_and_folder(con, rec.skipped, folder)


def _g(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def results_table(rows: list[dict[str, Any]]) -> Any:
    """``modelcost results``: one line per row of a sweep's results database."""
    from rich.table import Table

    t = Table(title=f"{len(rows)} result(s)", title_justify="left")
    for col in ("run", "model", "GPU", "backend", "precision", "batch", "status", "p50 ms", "p99 ms", "ips",
                "finished"):
        t.add_column(col, justify="right" if col in ("run", "batch", "p50 ms", "p99 ms", "ips") else "left")
    for r in rows:
        status = r["status"] + (f": {r['reason'][:80]}" if r["reason"] else "")
        t.add_row(str(r["run_id"]), r["model_name"], r["device_name"] or "-", r["backend"], r["precision"],
                  str(r["batch_size"]), status, _g(r["latency_p50_ms"]), _g(r["latency_p99_ms"]),
                  _g(r["throughput_ips"], 5), r["finished"] or "-")
    return t


def print_run_changes(console: Any, a_id: int, b_id: int, changes: list[Any]) -> None:
    """``modelcost results --compare A B``: each config in both runs, B vs A, the regressions marked."""
    from rich.table import Table

    t = Table(title=f"run {a_id} (A) vs run {b_id} (B): {len(changes)} config(s) in both", title_justify="left")
    for col in ("config", "GPU", "A p50 ms", "B p50 ms", "B vs A", ""):
        t.add_column(col, justify="right" if "ms" in col else "left")
    for c in changes:
        t.add_row(escape(c.label), escape(c.gpu), _g(c.a_ms), _g(c.b_ms), escape(c.verdict),
                  "[bold red]REGRESSION[/]" if c.regression else "")
    console.print(t)
    n = sum(c.regression for c in changes)
    console.print(f"{n} regression(s)" if n else "no regression beyond the measurement noise", highlight=False,
                  style="bold red" if n else "green")
