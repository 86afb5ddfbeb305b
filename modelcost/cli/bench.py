"""``modelcost bench`` and ``modelcost backends``. Wiring and printing only: the run is ``api.run`` (see
``modelcost.runs.inference``), the shared flow with ``analyze`` is ``cli/flow.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from modelcost.cli import options as o
from modelcost.cli.app import app, user_errors
from modelcost.cli.timing import timing_options
from modelcost.core.types import RunReport


@app.command()
@user_errors
@timing_options()
def bench(
    model: o.ModelArg,
    backends: o.Backends = None,
    precisions: o.Precisions = None,
    batch_sizes: o.BatchSizes = None,
    batch_size: o.BatchSize = None,
    input_shape: o.InputShape = None,
    samples_csv: o.SamplesCsv = None,
    json_path: o.JsonPath = None,
    report: o.Report = False,
    out: o.OutDir = None,
    device: o.Device = "auto",
    target_gpu: o.TargetGpu = None,
    roofline_plot: o.RooflinePlot = None,
    profile_layers: o.ProfileLayers = False,
    screen: o.Screen = None,
    exhaustive: o.Exhaustive = False,
    trust_pickle: o.TrustPickle = False,
    allow_partial: o.AllowPartial = False,
    timing: dict[str, Any] | None = None,
) -> None:
    """Measure latency, throughput, memory, power and accuracy on every backend x precision x batch size."""
    from modelcost.cli import flow
    from modelcost.cli.runner import Outputs, run_command

    printer = flow.Printer(model, show_cost=False, profiling=profile_layers)

    def work(run: RunReport, staged_csv: Path | None) -> RunReport:
        # The static analysis (for the roofline) at --batch-size or 1; when it fails the benchmarks still run.
        options = flow.run_options(
            run.command, backends=backends, precisions=precisions, batch_sizes=batch_sizes,
            tuple_shapes=input_shape, batch_size=batch_size or 1, trust_pickle=trust_pickle, static_required=False,
            bench=flow.bench_config(device, staged_csv, timing or {}), target_gpu=target_gpu,
            profile_layers=profile_layers, live_bar=True, screen=flow.screen_mode(screen), exhaustive=exhaustive)
        return flow.run_and_print(model, options, printer, run=run)

    outputs = Outputs(json_path=json_path, report=report, out=out, samples_csv=samples_csv,
                      roofline_plot=roofline_plot)
    flow.exit_status(run_command("bench", outputs, work).run, allow_partial)


@app.command("backends")
def backends_command() -> None:
    """List every backend: available here or not, and why."""
    from rich.markup import escape
    from rich.table import Table

    from modelcost.bench.registry import BACKENDS, unavailable_reason
    from modelcost.report.console import stdout_console

    table = Table(title="modelcost backends", title_justify="left")
    for col in ("backend", "device", "precisions", "default", "status"):
        table.add_column(col)
    for name, entry in BACKENDS.items():
        reason = unavailable_reason(name)
        status = "[green]available[/]" if reason is None else f"[red]unavailable[/]: {escape(reason)}"
        models = "" if "onnx" in entry.model_kinds else " (PyTorch models)"
        table.add_row(name, entry.device + models, ", ".join(entry.precisions), ", ".join(entry.default) or "-",
                      status)
    console = stdout_console(190)
    console.print(table)
    console.print("default: the precisions of the default sweep (--exhaustive runs them all)", highlight=False)
    console.print("[bold]what they are[/]:")
    for name, entry in BACKENDS.items():
        console.print(f"  {name}: {escape(entry.description)}", highlight=False)
