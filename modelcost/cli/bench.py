"""``modelcost bench`` and ``modelcost backends``, and the benchmark part of ``modelcost analyze``
(``benchmark_into``). Wiring and printing only; the work is in ``modelcost.api`` / ``modelcost.bench``."""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from modelcost.cli.app import app, user_errors
from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport


def parse_batch_sizes(text: str | None) -> list[int] | None:
    """'1,8,32' -> [1, 8, 32]; None -> None."""
    if text is None or not text.strip():
        return None
    try:
        sizes = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise ModelcostError(f"--batch-sizes {text!r}: expected positive integers separated by commas, e.g. 1,8,32") from None
    if not sizes or any(s < 1 for s in sizes):
        raise ModelcostError(f"--batch-sizes {text!r}: batch sizes must be positive, e.g. 1,8,32")
    return list(dict.fromkeys(sizes))


def parse_precisions(text: str | None) -> list[str] | None:
    from modelcost.bench.base import PRECISIONS

    if text is None or not text.strip() or text.strip() == "all":
        return None
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    bad = [p for p in names if p not in PRECISIONS]
    if bad:
        raise ModelcostError(f"--precisions: unknown {', '.join(bad)}; use {', '.join(PRECISIONS)}")
    return names


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def run_and_print_benchmarks(
    run: RunReport, model: str, *, backends: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
    batch_sizes: Sequence[int] | None = None, batch_size: int | None = None, input_shape: Sequence[str] | None = None,
    trust_pickle: bool = False, config: Any = None, title: str | None = None,
) -> RunReport:
    """Benchmark into ``run`` (``run.benchmarks`` grows as configs finish, ``run.device`` is set) and print the
    table. Ctrl-C stops the sweep: what finished is printed and kept, ``run.complete`` becomes False."""
    from rich.console import Console

    from modelcost import api
    from modelcost.report.console_bench import print_benchmarks

    device = None
    try:
        _, device = api.run_benchmarks(
            model, backends=backends, precisions=precisions, batch_sizes=batch_sizes, batch_size=batch_size,
            input_shapes=input_shape, trust_pickle=trust_pickle, config=config, progress=True, results=run.benchmarks,
        )
        run.device = device
    except KeyboardInterrupt:
        run.complete = False
        run.notes.append("interrupted: the benchmarks that finished are reported, the rest were not run")
        _stderr_console().print("[yellow]interrupted[/]: reporting the benchmarks that finished")
    wide = Console() if sys.stdout.isatty() else Console(width=160)  # piped / captured: do not squeeze the table
    print_benchmarks(run.benchmarks, title=title or f"benchmarks: {model}", device=device, console=wide)
    return run


def benchmark_into(run: RunReport, model: str, *, batch_size: int | None = None,
                   input_shape: Sequence[str] | None = None, trust_pickle: bool = False) -> RunReport:
    """What ``modelcost analyze`` (without --static) calls: the default benchmark sweep of ``model``."""
    return run_and_print_benchmarks(run, model, batch_size=batch_size, input_shape=input_shape, trust_pickle=trust_pickle)


@app.command()
@user_errors
def bench(
    model: Annotated[str, typer.Argument(help="model.onnx, path/to/file.py:factory, package.module:factory, "
                                              "model.pt2, TorchScript .pt, or zoo:NAME.")],
    backends: Annotated[Optional[str], typer.Option(help="Comma list of backends (see 'modelcost backends'); "
                                                         "default: every backend of the device.")] = None,
    precisions: Annotated[Optional[str], typer.Option(help="Comma list: fp32,tf32,fp16,bf16,int8,fp8; "
                                                           "default: each backend's own.")] = None,
    batch_sizes: Annotated[Optional[str], typer.Option("--batch-sizes", help="Sweep these batch sizes, e.g. 1,8,32,128.")] = None,
    batch_size: Annotated[Optional[int], typer.Option("--batch-size", "-b", min=1, help="One batch size (when --batch-sizes is not given).")] = None,
    input_shape: Annotated[Optional[list[str]], typer.Option("--input-shape", "-s", help="NAME=1x3x224x224 (repeatable).")] = None,
    min_time_s: Annotated[float, typer.Option(min=0, help="Time each config at least this long (seconds).")] = 1.0,
    min_iters: Annotated[int, typer.Option(min=1, help="Time each config at least this many calls.")] = 50,
    max_time_s: Annotated[float, typer.Option(min=0.001, help="Time budget per config: stop even if the median is not yet known to +-1%.")] = 20.0,
    warmup: Annotated[int, typer.Option(min=1, help="Calls per warm-up window (warm-up runs until two windows agree within 2%).")] = 10,
    compile_mode: Annotated[str, typer.Option(help="torch.compile mode: default or max-autotune.")] = "default",
    samples_csv: Annotated[Optional[Path], typer.Option(help="Write the NVML samples of every timed run here (nvidia-smi field names).")] = None,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Write the JSON report here.")] = None,
    device: Annotated[str, typer.Option(help="cuda, cpu or auto (cuda when there is one).")] = "auto",
    trust_pickle: Annotated[bool, typer.Option("--trust-pickle", help="Allow loading a pickled PyTorch module (runs code).")] = False,
) -> None:
    """Measure latency, throughput, memory, power and accuracy on every backend x precision x batch size."""
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.registry import parse_backends

    config = BenchConfig(device=device, warmup=warmup, min_time_s=min_time_s, min_iters=min_iters,
                         max_time_s=max_time_s, compile_mode=compile_mode, samples_csv=samples_csv)
    run = RunReport(command="bench " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "bench",
                    created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    run_and_print_benchmarks(run, model, backends=parse_backends(backends), precisions=parse_precisions(precisions),
                             batch_sizes=parse_batch_sizes(batch_sizes), batch_size=batch_size, input_shape=input_shape,
                             trust_pickle=trust_pickle, config=config)
    if json_path is not None:
        from modelcost.report.json_report import write_json

        write_json(run, json_path)
        typer.echo(f"JSON report: {json_path}")
    if samples_csv is not None and samples_csv.exists():
        typer.echo(f"NVML samples: {samples_csv}")
    if not run.complete:
        raise typer.Exit(130)
    if run.benchmarks and not any(r.status == "ok" for r in run.benchmarks):
        raise ModelcostError("no configuration could be measured (the reasons are listed above)")


@app.command("backends")
def backends_command() -> None:
    """List every backend: available here or not, and why."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from modelcost.bench.registry import BACKENDS, unavailable_reason

    table = Table(title="modelcost backends", title_justify="left")
    for col in ("backend", "device", "precisions", "status"):
        table.add_column(col)
    for name, entry in BACKENDS.items():
        reason = unavailable_reason(name)
        status = "[green]available[/]" if reason is None else f"[red]unavailable[/]: {escape(reason)}"
        models = "" if "onnx" in entry.model_kinds else " (PyTorch models)"
        table.add_row(name, entry.device + models, ", ".join(entry.precisions), status)
    console = Console() if sys.stdout.isatty() else Console(width=160)
    console.print(table)
    console.print("[bold]what they are[/]:")
    for name, entry in BACKENDS.items():
        console.print(f"  {name}: {escape(entry.description)}", highlight=False)
