"""``modelcost gpu``: this GPU, a named one, the known list, measured ceilings. Wiring and printing only; the
work is in ``modelcost.api``."""

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
    refresh: Annotated[bool, typer.Option("--refresh",
                                          help="With --measure: measure again, ignore the cache.")] = False,
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
    from modelcost.cli.options import command_line
    from modelcost.core.text import utc_timestamp
    from modelcost.report.json_report import write_json

    run = RunReport(gpu=spec, created=utc_timestamp(), command=command_line("gpu"))
    write_json(run, path)
