"""``modelcost sweep PLAN.toml --db results.sqlite``: wiring and printing only; the work is in
``modelcost.sweep``."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from modelcost.cli.app import app, user_errors
from modelcost.core.errors import ModelcostError


def _printer() -> Any:
    from rich.markup import escape

    from modelcost.report.console import stdout_console

    console = stdout_console(160)

    def on_event(kind: str, item: Any, s: Any) -> None:
        if kind == "start":
            passes = s.planned // max(1, len(item))
            console.print(f"sweep run {s.run_id}: {len(item)} config(s)"
                          + (f" x {passes} passes" if passes > 1 else ""), highlight=False)
            return
        done = s.measured + s.skipped
        if kind == "skip":
            console.print(f"[{done}/{s.planned}] skipped (already measured on this GPU type and versions): "
                          f"{escape(item.label)}", highlight=False, style="dim")
            return
        r = item
        figure = f"{r['latency_p50_ms']:.4g} ms p50" if r.get("latency_p50_ms") is not None else escape(
            (r.get("reason") or "")[:200])
        colour = "green" if r["status"] == "ok" else "yellow" if r["status"] == "unavailable" else "red"
        flag = " [yellow]unstable[/]" if r.get("unstable") else ""
        console.print(f"[{done}/{s.planned}] {escape(r['worker'] or '')} {escape(r['model_name'])} {r['backend']} "
                      f"{r['precision']} b{r['batch_size']}: [{colour}]{r['status']}[/]{flag} {figure} "
                      f"({r.get('duration_s') or 0:.1f} s)", highlight=False)

    return console, on_event


@app.command()
@user_errors
def sweep(
    plan: Annotated[Path, typer.Argument(help="The sweep plan (TOML): models, backends, precisions, batch sizes.")],
    db: Annotated[Path, typer.Option("--db", help="The results database (SQLite; made when missing).")] = Path(
        "results.sqlite"),
    workers: Annotated[int | None, typer.Option(
        min=1, help="Workers: one per GPU, each owning it alone (default: every visible GPU; CPU-only: 1). "
        "With --ray local: the CPUs of the local Ray instance.")] = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", help="Run each config as a Ray task with one whole GPU: 'local' (start Ray here), 'auto' (the "
        "running cluster) or a cluster address. Needs 'pip install modelcost\\[sweep]' (Ray).")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Measure again configs the database already holds for this GPU type and versions.")] = False,
    label: Annotated[str | None, typer.Option(help="A name for this run (for 'modelcost results --compare').")] = None,
    repeats: Annotated[int, typer.Option(
        min=1, help="Passes over the plan: every config measured this many times, each time in its own process, "
        "pass after pass (not back to back), so 'results' can tell the noise between runs from a change.")] = 1,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Check the plan and list the configs it expands to on this machine; nothing is measured "
        "and the database is not opened.")] = False,
) -> None:
    """Run a plan of models x backends x precisions x batch sizes, one worker per GPU (or on a Ray cluster),
    into one results database; every config is written as it finishes and a re-run resumes."""
    from modelcost.cli import signals
    from modelcost.sweep import scratch
    from modelcost.sweep.plan import load_plan
    from modelcost.sweep.run import run_sweep

    p = load_plan(plan)
    console, on_event = _printer()
    if dry_run:
        _print_plan(console, p)
        return
    # SIGTERM (`timeout`, a scheduler) stops the run as Ctrl-C does (cli/signals.py); should the process end
    # the fast way, the configs' scratch files go with it.
    signals.at_exit(scratch.remove_own)
    try:
        s = run_sweep(p, str(db), workers=workers, force=force, label=label, ray=ray, repeats=repeats,
                      command=_command(plan, db, workers, ray, force, label, repeats), on_event=on_event)
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/]: the configs that finished are in {db}; run the same command to "
                      "resume", highlight=False)
        raise typer.Exit(130) from None
    counts = ", ".join(f"{n} {k}" for k, n in sorted(s.by_status.items())) or "none"
    console.print(f"run {s.run_id} {s.status} in {s.wall_s:.1f} s: {s.measured} measured ({counts}), "
                  f"{s.skipped} skipped as already measured; database {db}", highlight=False)
    for note in s.notes:
        console.print(f"note: {note}", highlight=False, style="dim")
    if s.measured_nothing:
        raise ModelcostError(f"nothing was measured: every config of run {s.run_id} ended without a figure "
                             f"({counts}); the reasons are above and in {db}")


def _print_plan(console: Any, plan: Any) -> None:
    from rich.markup import escape

    from modelcost.sweep.run import planned_configs

    configs = planned_configs(plan)
    console.print(f"plan {escape(plan.path)}: {len(configs)} config(s) on this machine", highlight=False)
    for c in configs:
        shapes = f" ({', '.join(c.input_shapes)})" if c.input_shapes else ""
        console.print(f"  {escape(c.label)}{escape(shapes)}  [dim]{escape(c.source)}[/]", highlight=False)
    console.print("dry run: nothing measured; the database was not opened", highlight=False, style="dim")


def _command(plan: Path, db: Path, workers: int | None, ray: str | None, force: bool, label: str | None,
             repeats: int = 1) -> str:
    """The command line of this run, shell-quoted (``runs.command``): pasted into a shell, it runs the same sweep."""
    parts = ["modelcost", "sweep", str(plan), "--db", str(db)]
    for option, value in (("--workers", workers), ("--ray", ray), ("--label", label),
                          ("--repeats", repeats if repeats > 1 else None)):
        if value is not None:
            parts += [option, str(value)]
    return shlex.join(parts + (["--force"] if force else []))
