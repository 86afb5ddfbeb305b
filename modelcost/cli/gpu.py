"""``modelcost gpu`` (this GPU, a named one, the known list, measured ceilings) and ``print_roofline``, which the
analyze / bench commands call after benchmarking. Wiring and printing only; the work is in ``modelcost.api``."""

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
    if json_path is not None:
        from modelcost.cli.options import check_writable

        check_writable(files=(json_path,))  # before --measure spends its 30 s
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
        from modelcost.cli.options import wrote

        existed = json_path.exists()
        _write_gpu_json(spec, json_path)
        console.print(wrote("GPU spec JSON", json_path, existed), markup=False)


def _write_gpu_json(spec: GpuSpec, path: Path) -> None:
    import datetime as _dt
    import sys

    from modelcost.report.json_report import write_json

    run = RunReport(gpu=spec, created=_dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                    command=" ".join(["modelcost", *sys.argv[1:]]))
    write_json(run, path)


def print_roofline(
    run: RunReport, target_gpu: str | None = None, plot_path: str | Path | None = None, console: Any = None,
    top_layers: int = 15,
) -> RunReport:
    """After benchmarking: fill ``run.gpu`` and each result's roofline (``api.attach_roofline``), then print
    the roofline table, per-layer "where the time goes vs where the FLOPs are" for results that carry a
    ``layer_profile`` (else the static per-layer intensity for the first GPU precision), the what-if table for
    ``target_gpu``, and write the roofline plot to ``plot_path``. Returns ``run`` (for the JSON report)."""
    from modelcost import api
    from modelcost.analysis.roofline import precisions_of
    from modelcost.report.console_gpu import layer_table, roofline_table, what_if_table

    console = console or _console()
    if run.gpu is None or any(r.roofline is None for r in run.benchmarks if r.status == "ok"):
        api.attach_roofline(run, run.gpu)
    if run.gpu is not None and any(r.roofline for r in run.benchmarks):
        console.print(roofline_table(run.benchmarks, run.gpu))
        point = next(r.roofline for r in run.benchmarks if r.roofline)
        console.print(f"[dim]bytes moved ({point.peak_key} row): {point.bytes_basis}. Bound 'overhead': measured "
                      "latency > 10x the lower bound max(FLOPs / peak, bytes / bandwidth).[/]")
    elif run.benchmarks:
        why = "; ".join(n.removeprefix("roofline: ") for n in run.notes if n.startswith("roofline"))
        console.print(f"[dim]no roofline: {why or 'no GPU result with a peak for its precision'}[/]")
    if run.gpu is not None and run.cost is not None:
        _print_layers(console, run, top_layers, layer_table)
    if target_gpu and run.cost is not None:
        keys = precisions_of(run.benchmarks) or ["fp32", "fp16"]
        batch = max((r.batch_size for r in run.benchmarks if r.status == "ok"), default=None)
        rows = [api.what_if(run.cost, target_gpu, k, batch) for k in keys]
        if run.gpu is not None and run.gpu.source == "nvml":
            rows = [api.what_if(run.cost, run.gpu, k, batch) for k in keys if k in run.gpu.peak_tflops] + rows
        console.print(what_if_table(rows))
    if plot_path and run.gpu is not None and any(r.roofline for r in run.benchmarks):
        from modelcost.cli.options import wrote
        from modelcost.report.roofline_plot import plot_roofline

        existed = Path(plot_path).exists()
        console.print(wrote("roofline plot", plot_roofline(run.gpu, run.benchmarks, plot_path), existed), markup=False)
    return run


def _print_layers(console: Any, run: RunReport, top: int, layer_table: Any) -> None:
    from modelcost import api

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


def roofline_after_bench(
    run: RunReport, model: str, *, batch_size: int | None = None, input_shape: Any = None, trust_pickle: bool = False,
    target_gpu: str | None = None, plot_path: str | Path | None = None, profile_layers: bool = False,
    console: Any = None,
) -> RunReport:
    """The one call ``modelcost bench`` / ``analyze`` make after benchmarking: the static analysis when the run
    has none yet (its FLOPs place each config on the roofline; a failure becomes a note), per-layer profiles
    when asked (eager PyTorch / ONNX Runtime fp32), then ``print_roofline``. Returns ``run`` for the JSON."""
    from modelcost import api

    console = console or _console()
    if run.cost is None:
        try:
            run.cost = api.analyze_static(model, batch_size=batch_size or 1, input_shapes=input_shape,
                                          trust_pickle=trust_pickle)
        except ModelcostError as exc:
            run.notes.append(f"roofline: static analysis failed ({exc})")
    if profile_layers and any(r.status == "ok" for r in run.benchmarks):
        with console.status("profiling per layer ..."):
            api.attach_layer_profiles(model, run, backends=tuple(api.PROFILED))
    return print_roofline(run, target_gpu=target_gpu, plot_path=plot_path, console=console)
