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
        unsure = f" [yellow](tentative, not reliable: {escape('; '.join(rec.caveats))})[/]" if rec.caveats else ""
        con.print(f"[bold green]recommended[/]: {escape(config_label(rec.best))}{unsure}", markup=True)
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


def results_table(rows: list[dict[str, Any]]) -> Any:
    """``modelcost results``: one line per row of a sweep's results database (its repeat, its stability flags)."""
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
                  r["backend"], r["precision"], str(r["batch_size"]), status, number(r["latency_p50_ms"]),
                  number(r["latency_p99_ms"]), number(r["throughput_ips"], 5), r["finished"] or "-")
    return t


def print_run_changes(console: Any, cmp: Any) -> None:
    """``modelcost results --compare A B``: each config's verdict against the noise between runs, and what was
    left out."""
    from rich.table import Table

    t = Table(title=f"run {cmp.a_id} (A) vs run {cmp.b_id} (B): {len(cmp.changes)} config(s) compared",
              title_justify="left")
    for col in ("config", "GPU", "A p50 ms", "B p50 ms", "runs", "verdict", "why"):
        t.add_column(col, justify="right" if "ms" in col or col == "runs" else "left")
    style = {"regression": "bold red", "improvement": "green", "too noisy to judge": "yellow"}
    for c in cmp.changes:
        verdict = c.verdict.upper() if c.regression else c.verdict
        t.add_row(escape(c.label), escape(c.gpu), number(c.a_ms), number(c.b_ms), f"{c.runs[0]}/{c.runs[1]}",
                  f"[{style.get(c.verdict, 'default')}]{escape(verdict)}[/]", escape("; ".join([c.detail, *c.notes])))
    console.print(t)
    for o in cmp.left_out:
        console.print(f"left out: {o.label} ({o.gpu}): {o.why}", markup=False, highlight=False, style="dim")
    n = cmp.regressions
    counts = (f"{cmp.count('improvement')} improvement(s), {cmp.count('no change')} no change, "
              f"{cmp.count('too noisy to judge')} too noisy to judge, {len(cmp.left_out)} left out")
    console.print(f"{n} regression(s); {counts}" if n else f"no regression beyond the noise between runs; {counts}",
                  highlight=False, style="bold red" if n else "green")


def print_noise(console: Any, found: Any, within: tuple[float, ...]) -> None:
    """``modelcost results --noise``: the spread of each config's figure across runs, and the share that repeats."""
    from rich.table import Table

    rep = found.repeated
    if not rep:
        console.print("no config was measured in more than one run of the rows selected: 'modelcost sweep PLAN "
                      "--repeats 3' measures each config three times", highlight=False)
        return
    t = Table(title=f"noise between runs: {len(rep)} config(s) measured in 2 or more runs", title_justify="left")
    for col in ("config", "GPU", "runs", "p50 ms", "spread", "sd (ln p50)", "unstable runs"):
        t.add_column(col, justify="left" if col in ("config", "GPU") else "right")
    for c in sorted(rep, key=lambda c: -c.summary.range_rel):
        t.add_row(escape(c.label), escape(c.ident[-1]), str(c.summary.runs), number(c.summary.p50_ms),
                  f"{c.summary.range_rel * 100:.1f}%",
                  f"{c.spread.sd_log * 100:.2f}% ({c.spread.df} df)" if c.spread.known else "-", str(c.unstable_runs))
    console.print(t)
    shares = ", ".join(f"{found.share_within(w) * 100:.0f}% within {w * 100:g}%" for w in within)
    console.print(f"figures that repeat: {shares} (spread = max / min - 1 of the per-run p50s)", highlight=False)
