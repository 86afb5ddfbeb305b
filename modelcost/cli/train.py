"""``modelcost train``: what a training step costs (static, meta) and, without --static, how fast it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from modelcost.cli import options as o
from modelcost.cli.app import app, user_errors
from modelcost.cli.timing import timing_options
from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport

Optimizer = Annotated[str, typer.Option(help="sgd, momentum (SGD with momentum), adam or adamw.")]
TrainPrecisions = Annotated[str, typer.Option(
    "--precisions", help="Comma list: fp32, tf32, amp_bf16, amp_fp16, bf16, fp16 (pure); the first is the static one.")]
Variants = Annotated[str, typer.Option(help="Comma list: eager, compile (torch.compile).")]
BatchSizes = Annotated[Optional[str], typer.Option("--batch-sizes", help=(
    "Measure the step at these batch sizes, e.g. 8,32,128 (positive integers), stopping at the first out of "
    "memory; default: --batch-size, else 1."))]
MemoryGb = Annotated[float | None, typer.Option(
    "--memory-gb", min=0.001, callback=o.finite,
    help="Fit the largest batch into this many GiB instead of a GPU's memory.")]
Margin = Annotated[float, typer.Option(
    min=0.0, callback=o.finite, max=0.9, help="Share of the memory kept free when fitting the largest batch.")]


@app.command()
@user_errors
@timing_options(only=("min_time_s", "min_iters", "max_time_s", "warmup"), defaults={"min_iters": 20, "warmup": 5})
def train(
    model: o.ModelArg,
    static: Annotated[bool, typer.Option("--static", help="Count only (meta device, no GPU needed).")] = False,
    batch_size: o.BatchSize = None,
    input_shape: o.InputShape = None,
    trust_pickle: o.TrustPickle = False,
    attn_implementation: o.AttnImplementation = None,
    optimizer: Optimizer = "adamw",
    precisions: TrainPrecisions = "fp32",
    master_weights: Annotated[bool, typer.Option(help="Keep fp32 master weights (pure bf16 / fp16).")] = False,
    input_grad: Annotated[bool, typer.Option(help="The inputs need a gradient too.")] = False,
    checkpointing: Annotated[bool, typer.Option(
        help="Model activation checkpointing of the repeated blocks (static figures only).")] = False,
    target_gpu: o.TargetGpu = None,
    memory_gb: MemoryGb = None,
    margin: Margin = 0.10,
    batch_sizes: BatchSizes = None,
    variants: Variants = "eager",
    device: o.Device = "auto",
    predict: o.Predict = False,
    json_path: o.JsonPath = None,
    report: o.Report = False,
    out: o.OutDir = None,
    timing: dict[str, Any] | None = None,
) -> None:
    """Forward / backward (input- and weight-gradient) / optimizer FLOPs, memory by part and the largest batch;
    without --static, measured steps: samples/s, MFU and measured vs predicted peak memory."""
    from modelcost import api
    from modelcost.cli.flow import bench_config, comma_list, parse_batch_sizes
    from modelcost.cli.runner import Outputs, run_command
    from modelcost.core.training import TrainConfig
    from modelcost.report.console_train import print_training

    precision_list = comma_list(precisions, "--precisions", "fp32,amp_bf16") or []
    variant_list = comma_list(variants, "--variants", "eager,compile") or []
    sizes = parse_batch_sizes(batch_sizes) or []
    config = TrainConfig(optimizer=optimizer, master_weights=master_weights, input_requires_grad=input_grad,
                         memory_margin=margin, checkpointing=checkpointing)
    memory = int(memory_gb * 2**30) if memory_gb else None
    common = {"batch_size": batch_size, "input_shapes": input_shape, "trust_pickle": trust_pickle,
              "attn_implementation": attn_implementation, "target_gpu": target_gpu, "memory_bytes": memory,
              "predict": predict}

    def work(run: RunReport, staged_csv: Path | None) -> Any:
        if static:
            import dataclasses

            run.training = api.train_static(
                model, config=dataclasses.replace(config, precision=precision_list[0]), **common)
        else:
            run.training = api.train(
                model, config=config, precisions=precision_list, batch_sizes=sizes, variants=variant_list,
                device=device, bench_config=bench_config(device, None, timing or {}),
                on_message=lambda text: typer.echo(f"measuring {text}", err=True), **common)
        return run.training

    training = run_command("train", Outputs(json_path=json_path, report=report, out=out, sample=False), work,
                           render=print_training).result
    if training.problems:
        raise ModelcostError(training.problems[0])
    if training.benchmarks and not any(r.status == "ok" for r in training.benchmarks):
        raise ModelcostError("no training configuration could be measured (the reasons are in the table)")
