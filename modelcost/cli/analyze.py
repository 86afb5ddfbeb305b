"""``modelcost analyze`` and ``modelcost zoo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from modelcost.cli import options as o
from modelcost.cli.app import app, user_errors
from modelcost.cli.timing import timing_options
from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport


@app.command()
@user_errors
@timing_options()
def analyze(
    model: o.ModelArg,
    static: Annotated[bool, typer.Option("--static", help="Static analysis only: count, do not run.")] = False,
    batch_size: o.BatchSize = None,
    input_shape: o.InputShape = None,
    trust_pickle: o.TrustPickle = False,
    attn_implementation: o.AttnImplementation = None,
    json_path: o.JsonPath = None,
    report: o.Report = False,
    out: o.OutDir = None,
    top: Annotated[int, typer.Option("--top", min=0, help="How many of the heaviest layers to list.")] = 10,
    all_layers: Annotated[bool, typer.Option("--all-layers", help="List every layer, not only the heaviest.")] = False,
    backends: o.Backends = None,
    precisions: o.Precisions = None,
    batch_sizes: o.BatchSizes = None,
    samples_csv: o.SamplesCsv = None,
    device: o.Device = "auto",
    target_gpu: o.TargetGpu = None,
    predict: o.Predict = False,
    roofline_plot: o.RooflinePlot = None,
    profile_layers: o.ProfileLayers = False,
    screen: o.Screen = None,
    exhaustive: o.Exhaustive = False,
    allow_partial: o.AllowPartial = False,
    timing: dict[str, Any] | None = None,
) -> None:
    """Count parameters, storage, MACs/FLOPs and memory; without --static, also benchmark every backend and
    place each measured config on the GPU's roofline."""
    from modelcost.cli import flow
    from modelcost.cli.runner import Outputs, run_command

    printer = flow.Printer(model, show_cost=True, top=None if all_layers else top, profiling=profile_layers,
                           benchmarking=not static)

    def work(run: RunReport, staged_csv: Path | None) -> RunReport:
        options = flow.run_options(
            run.command, backends=backends, precisions=precisions, batch_sizes=batch_sizes,
            tuple_shapes=input_shape, batch_size=batch_size, trust_pickle=trust_pickle, static_only=static,
            attn_implementation=attn_implementation, bench=flow.bench_config(device, staged_csv, timing or {}),
            target_gpu=target_gpu, profile_layers=profile_layers, live_bar=True, screen=flow.screen_mode(screen),
            exhaustive=exhaustive, predict=predict)
        return flow.run_and_print(model, options, printer, run=run)

    outputs = Outputs(json_path=json_path, report=report, out=out, samples_csv=samples_csv,
                      roofline_plot=roofline_plot, sample=not static)
    run = run_command("analyze", outputs, work).run
    assert run.cost is not None
    if run.cost.problems and run.cost.compute.complete:  # a partial result exits 3 (below), whatever else it met
        more = len(run.cost.problems) - 1
        raise ModelcostError(run.cost.problems[0] + (f" (and {more} more, listed above)" if more else ""))
    flow.exit_status(run, allow_partial)


@app.command()
def zoo() -> None:
    """List the built-in reference models (use them as zoo:NAME)."""
    from rich.console import Console
    from rich.table import Table

    from modelcost.loaders.zoo import ZOO

    table = Table(title="modelcost zoo", show_lines=False)
    table.add_column("name")
    table.add_column("default input")
    table.add_column("description")
    for name, entry in ZOO.items():
        table.add_row(f"zoo:{name}", _describe_inputs(entry), getattr(entry, "description", ""))
    Console(emoji=False).print(table)


def _describe_inputs(entry: object) -> str:
    specs = getattr(entry, "input_specs", None) or getattr(entry, "inputs", None)
    if callable(specs):
        try:
            specs = specs(1)
        except TypeError:
            specs = specs()
    try:
        return ", ".join(f"{s.name} {'x'.join(str(d) for d in s.shape)} {s.dtype}" for s in specs)
    except TypeError:
        return ""
