"""``modelcost gpu`` (this GPU, a named one, the known list, measured ceilings) and ``print_roofline``, which
prints the GPU part of a finished analyze / bench run. Wiring and printing only; the work is in ``modelcost.api``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from modelcost.cli.app import app, user_errors
from modelcost.core.errors import ModelcostError
from modelcost.core.types import GpuSpec, RunReport


def _console() -> Any:
    from modelcost.report.console import stdout_console

    return stdout_console(160, highlight=False)


@app.command("gpu")
@user_errors
def gpu(
    name: Annotated[str | None, typer.Option("--name", "-n", help="A GPU from the built-in table, for what-if "
                                                "figures without that GPU, e.g. 'H100 SXM', 'A100', 'L4'.")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the GPUs the table knows, with their peaks.")] = False,
    measure: Annotated[bool, typer.Option("--measure", help="Measure this GPU's ceilings (large matmuls per "
                                          "precision, a device copy; ~30 s), cached per GPU + driver.")] = False,
    refresh: Annotated[bool, typer.Option("--refresh", help="With --measure: measure again, ignore the cache.")] = False,
    index: Annotated[int, typer.Option("--index", help="Which GPU (CUDA numbering).")] = 0,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the GPU spec as JSON (the report "
                                                      "schema's `gpu` section).")] = None,
) -> None:
    """The GPU's limits: SMs, clocks, memory bandwidth, dense / sparse peak FLOP/s per precision, and measured
    ceilings. Without a GPU, --name gives the figures of a known one."""
    from modelcost import api
    from modelcost.hardware.specs import known_specs
    from modelcost.report.console_gpu import gpu_list_table, print_gpu

    console = _console()
    if list_:
        console.print(gpu_list_table(known_specs()))
        return
    if measure and name:
        raise ModelcostError("--measure measures this machine's GPU; drop --name")
    spec = api.gpu_spec(name, index=index)
    if measure:
        with console.status("measuring ceilings ...") as status:
            spec = api.measure_ceilings(spec, index=index, refresh=refresh,
                                        progress=lambda what: status.update(f"measuring: {what}"))
    print_gpu(spec, console)
    if json_path is not None:
        _write_gpu_json(spec, json_path)
        console.print(f"wrote {json_path}")


def _write_gpu_json(spec: GpuSpec, path: Path) -> None:
    import sys

    from modelcost.core.text import utc_timestamp
    from modelcost.report.json_report import write_json

    run = RunReport(gpu=spec, created=utc_timestamp(), command=" ".join(["modelcost", *sys.argv[1:]]))
    write_json(run, path)


def print_roofline(run: RunReport, console: Any = None, top_layers: int = 15) -> RunReport:
    """Print what the run says about the GPU: the roofline table (or why there is none), per-layer "where the
    time goes vs where the FLOPs are" for results that carry a ``layer_profile`` (else the static per-layer
    intensity for the first GPU result), measured per-layer times of CPU profiles, and the what-if table."""
    from modelcost.report.console_gpu import layer_time_table, roofline_table, what_if_table

    console = console or _console()
    if run.gpu is not None and any(r.roofline for r in run.benchmarks):
        console.print(roofline_table(run.benchmarks, run.gpu))
        point = next(r.roofline for r in run.benchmarks if r.roofline)
        console.print(f"[dim]bytes moved ({point.peak_key} row): {point.bytes_basis}. Bound 'overhead': measured "
                      "latency > 10x the lower bound max(FLOPs / peak, bytes / bandwidth).[/]")
    elif run.benchmarks:
        why = "; ".join(n.removeprefix("roofline: ") for n in run.notes if n.startswith("roofline"))
        console.print(f"[dim]no roofline: {why or 'no GPU result with a peak for its precision'}[/]")
    if run.gpu is not None and run.cost is not None:
        _print_layers(console, run, top_layers)
    for r in run.benchmarks:
        if r.layer_profile is not None and r.roofline is None:
            title = f"Where the time goes: {r.backend} {r.precision} batch {r.batch_size}"
            console.print(layer_time_table(r.layer_profile, title, top_layers))
    if run.what_if:
        console.print(what_if_table(run.what_if))
    return run


def _print_layers(console: Any, run: RunReport, top: int) -> None:
    from modelcost import api
    from modelcost.report.console_gpu import layer_table

    assert run.cost is not None and run.gpu is not None
    profiled = [r for r in run.benchmarks if r.layer_profile is not None and r.roofline is not None]
    for r in profiled:
        rows = api.layer_roofline(run.cost, run.gpu, r.precision, r.batch_size, r.layer_profile)
        title = f"Where the time goes vs where the FLOPs are: {r.backend} {r.precision} batch {r.batch_size}"
        console.print(layer_table(rows, title, r.layer_profile, top))
    if not profiled:
        first = next((r for r in run.benchmarks if r.roofline is not None), None)
        if first is not None:
            rows = api.layer_roofline(run.cost, run.gpu, first.precision, first.batch_size)
            console.print(layer_table(rows, f"Per-layer intensity vs the {first.precision} ridge point "
                                            f"({first.roofline.ridge_point:.0f} FLOP/B), batch {first.batch_size}",
                                      None, top))
