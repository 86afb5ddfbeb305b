"""``modelcost calibrate``: measure this GPU for the latency predictor (issue 28). Wiring and printing only:
the measuring is bench/calibrate.py, the file core/calibration.py."""

from __future__ import annotations

from typing import Annotated

import typer

from modelcost.cli.app import app, user_errors


@app.command()
@user_errors
def calibrate(
    no_fusion: Annotated[bool, typer.Option("--no-fusion", help=(
        "Leave out the backend families' kernel counts and launch costs (torch.compile and ONNX export of "
        "small nets: the slow part); --predict then covers no backend."))] = False,
) -> None:
    """Measure this GPU for --predict (under 3 minutes): GEMM / conv efficiency by shape class, memory-bound
    kernels by size, attention, launch and graph-replay costs, and each backend family's fusion. Written to
    the cache (calibration/<gpu>.json); 'modelcost cache --clear' removes it."""
    from modelcost import api

    say = typer.echo
    cal, path = api.calibrate(fusion=not no_fusion, on_message=lambda what: say(f"  {what} ..."))
    gemm = cal.gemm_efficiency.get("fp16", {})
    best = max(gemm.values(), default=0.0)
    say(f"{cal.gpu.name}: calibrated in {cal.elapsed_s:.0f} s -> {path}")
    slowest = sorted(cal.stage_s.items(), key=lambda kv: -kv[1])[:4]
    if slowest:
        say("  slowest stages: " + ", ".join(f"{what} {s:.0f} s" for what, s in slowest))
    # against the 128 x 128-tile wave model (core/calibration.py): above 100% where cuBLAS picked smaller tiles
    say(f"  GEMM fp16 over {len(gemm)} shape classes: efficiency against the tile-wave model up to {best:.0%} "
        "(above 100%: faster than that model); launch "
        + ", ".join(f"{k} {v:.1f} us" for k, v in cal.launch_us.items())
        + f"; kernel gap {cal.kernel_gap_us:.2f} us; graph replay {cal.graph_replay_us:.1f} us")
    for family, fusion in cal.fusion.items():
        say(f"  {family}: kernels per layer " + ", ".join(f"{k} {v:g}" for k, v in fusion.kernels_per_layer.items()))
    for family, host in cal.host_us.items():
        say(f"  {family}: host time {host.kernel_op_us:.1f} us per kernel-launching aten call, "
            f"{host.view_op_us:.1f} us per view call")
    for note in cal.notes:
        say(f"  note: {note}")
