"""``modelcost bench`` and ``modelcost backends``, and the benchmark part of ``modelcost analyze``
(``benchmark_into``). Wiring and printing only; the work is in ``modelcost.api`` / ``modelcost.bench``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


from modelcost.cli import options as o
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
    from rich.markup import escape

    from modelcost import api
    from modelcost.bench.cache import run_started, usage_note
    from modelcost.report.console import stdout_console
    from modelcost.report.console_bench import print_benchmarks

    device, started = None, run_started()
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
    cache_note = usage_note(getattr(config, "cache_dir", None), started)  # exports / engines made or reused
    if cache_note:
        run.notes.append(cache_note)
    wide = stdout_console(160)
    print_benchmarks(run.benchmarks, title=title or f"benchmarks: {model}", device=device, console=wide)
    if cache_note:
        wide.print(escape(cache_note), highlight=False)
    return run


def benchmark_into(run: RunReport, model: str, *, backends: str | None = None, precisions: str | None = None,
                   batch_sizes: str | None = None, batch_size: int | None = None,
                   input_shape: Sequence[str] | None = None, trust_pickle: bool = False, config: Any = None,
                   target_gpu: str | None = None, roofline_plot: Path | None = None,
                   profile_layers: bool = False) -> RunReport:
    """Benchmark ``model`` into ``run``, then place every measured config on the GPU's roofline."""
    from modelcost.bench.registry import parse_backends
    from modelcost.cli.gpu import roofline_after_bench

    run_and_print_benchmarks(run, model, backends=parse_backends(backends), precisions=parse_precisions(precisions),
                             batch_sizes=parse_batch_sizes(batch_sizes), batch_size=batch_size, input_shape=input_shape,
                             trust_pickle=trust_pickle, config=config)
    if run.complete:
        roofline_after_bench(run, model, batch_size=batch_size, input_shape=input_shape, trust_pickle=trust_pickle,
                             target_gpu=target_gpu, plot_path=roofline_plot, profile_layers=profile_layers)
    return run


def bench_config(device: str, warmup: int, min_time_s: float, min_iters: int, max_time_s: float,
                 compile_mode: str, samples_csv: Path | None) -> Any:
    from modelcost.bench.base import BenchConfig

    return BenchConfig(device=device, warmup=warmup, min_time_s=min_time_s, min_iters=min_iters,
                       max_time_s=max_time_s, compile_mode=compile_mode, samples_csv=samples_csv)


@app.command()
@user_errors
def bench(
    model: o.ModelArg,
    backends: o.Backends = None,
    precisions: o.Precisions = None,
    batch_sizes: o.BatchSizes = None,
    batch_size: o.BatchSize = None,
    input_shape: o.InputShape = None,
    min_time_s: o.MinTime = 1.0,
    min_iters: o.MinIters = 50,
    max_time_s: o.MaxTime = 20.0,
    warmup: o.Warmup = 10,
    compile_mode: o.CompileMode = "default",
    samples_csv: o.SamplesCsv = None,
    json_path: o.JsonPath = None,
    report: o.Report = False,
    out: o.OutDir = None,
    device: o.Device = "auto",
    target_gpu: o.TargetGpu = None,
    roofline_plot: o.RooflinePlot = None,
    profile_layers: o.ProfileLayers = False,
    trust_pickle: o.TrustPickle = False,
) -> None:
    """Measure latency, throughput, memory, power and accuracy on every backend x precision x batch size."""
    o.check_writable(files=(json_path, samples_csv, roofline_plot), folders=(out,))
    config = bench_config(device, warmup, min_time_s, min_iters, max_time_s, compile_mode, samples_csv)
    run = o.new_run("bench")
    benchmark_into(run, model, backends=backends, precisions=precisions, batch_sizes=batch_sizes,
                   batch_size=batch_size, input_shape=input_shape, trust_pickle=trust_pickle, config=config,
                   target_gpu=target_gpu, roofline_plot=roofline_plot, profile_layers=profile_layers)
    o.write_outputs(run, json_path=json_path, report=report, out_dir=out, samples_csv=samples_csv)
    o.exit_status(run)


@app.command("backends")
def backends_command() -> None:
    """List every backend: available here or not, and why."""
    from rich.markup import escape
    from rich.table import Table

    from modelcost.bench.registry import BACKENDS, unavailable_reason
    from modelcost.report.console import stdout_console

    table = Table(title="modelcost backends", title_justify="left")
    for col in ("backend", "device", "precisions", "status"):
        table.add_column(col)
    for name, entry in BACKENDS.items():
        reason = unavailable_reason(name)
        status = "[green]available[/]" if reason is None else f"[red]unavailable[/]: {escape(reason)}"
        models = "" if "onnx" in entry.model_kinds else " (PyTorch models)"
        table.add_row(name, entry.device + models, ", ".join(entry.precisions), status)
    console = stdout_console(160)
    console.print(table)
    console.print("[bold]what they are[/]:")
    for name, entry in BACKENDS.items():
        console.print(f"  {name}: {escape(entry.description)}", highlight=False)
