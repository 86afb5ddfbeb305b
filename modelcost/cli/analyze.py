"""``modelcost analyze`` and ``modelcost zoo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from modelcost.cli.app import app, user_errors

BatchSizeOpt = Annotated[
    Optional[int], typer.Option("--batch-size", "-b", min=1, help="Bind the batch (first symbolic) dimension of every input.")
]
InputShapeOpt = Annotated[
    Optional[list[str]],
    typer.Option("--input-shape", "-s", help="NAME=1x3x224x224: the shape of one input (repeatable).")
]
TrustPickleOpt = Annotated[
    bool,
    typer.Option("--trust-pickle", help="Allow loading a pickled PyTorch module. Unpickling runs code: only for files you trust."),
]
JsonOpt = Annotated[Optional[Path], typer.Option("--json", help="Write the versioned JSON report (docs/REPORT_SCHEMA.md) here.")]


@app.command()
@user_errors
def analyze(
    model: Annotated[str, typer.Argument(help="model.onnx, path/to/file.py:factory, package.module:factory, "
                                              "model.pt2, TorchScript .pt, or zoo:NAME.")],
    static: Annotated[bool, typer.Option("--static", help="Static analysis only: count, do not run.")] = False,
    batch_size: BatchSizeOpt = None,
    input_shape: InputShapeOpt = None,
    trust_pickle: TrustPickleOpt = False,
    json_path: JsonOpt = None,
    top: Annotated[int, typer.Option("--top", min=0, help="How many of the heaviest layers to list.")] = 10,
    all_layers: Annotated[bool, typer.Option("--all-layers", help="List every layer, not only the heaviest.")] = False,
) -> None:
    """Count parameters, storage, MACs/FLOPs and memory; without --static, also benchmark the backends."""
    from modelcost import api
    from modelcost.core.types import RunReport
    from modelcost.report.console import print_cost

    cost = api.analyze_static(model, batch_size=batch_size, input_shapes=input_shape, trust_pickle=trust_pickle)
    print_cost(cost, top=None if all_layers else top)
    run = RunReport(cost=cost, command="analyze --static" if static else "analyze")
    if not static:
        from modelcost.cli.bench import benchmark_into

        benchmark_into(run, model, batch_size=batch_size, input_shape=input_shape, trust_pickle=trust_pickle)
    if json_path is not None:
        from modelcost.report.json_report import write_json

        write_json(run, json_path)
        typer.echo(f"JSON report: {json_path}")
    if cost.problems:
        from modelcost.core.errors import ModelcostError

        more = len(cost.problems) - 1
        raise ModelcostError(cost.problems[0] + (f" (and {more} more, listed above)" if more else ""))


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
    Console().print(table)


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
