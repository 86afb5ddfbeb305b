"""``modelcost llm``: what generating text costs (prefill, decode, KV cache) counted, bounded and measured.
Wiring and printing only: ``api.llm`` decides and computes, ``report.llm`` renders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from modelcost.cli import options as o
from modelcost.cli.app import app, user_errors
from modelcost.cli.flow import comma_list
from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport

Ints = Annotated[str, typer.Option(help="One value or a comma list (a sweep).")]


def _ints(text: str, what: str) -> list[int]:
    items = comma_list(text, what, "128,512,2048") or []  # '' and ',' refused there, as for every comma list
    try:
        values = [int(v) for v in items]
    except ValueError:
        raise ModelcostError(f"{what} {text!r}: expected integers, e.g. 512 or 128,512,2048") from None
    return values  # their range is checked against the model (loaders.llm_limits.check_lengths)


@app.command()
@user_errors
def llm(
    model: Annotated[str, typer.Argument(help="zoo:NAME (a Llama-style decoder), a transformers config.json or a "
                                              "folder holding one, file.py:factory, or a hub model id.")],
    static: Annotated[bool, typer.Option("--static", help="Count and bound only; do not run on a GPU.")] = False,
    prompt_len: Annotated[str, typer.Option("--prompt-len", "-p", help="Prompt length P (comma list: sweep).")] = "512",
    gen_len: Annotated[str, typer.Option("--gen-len", "-g", help="New tokens G (comma list: sweep).")] = "128",
    batch_size: Annotated[str, typer.Option("--batch-size", "-b", help="Batch B (comma list: sweep).")] = "1",
    dtype: Annotated[str, typer.Option(help="Weights and compute: fp16, bf16 or fp32.")] = "bf16",
    kv_dtype: Annotated[str | None, typer.Option(
        "--kv-dtype", help="KV cache element type: fp16, bf16, fp8, int8, fp32 (default: --dtype).")] = None,
    target_gpu: o.TargetGpu = None,
    attention: Annotated[str, typer.Option(
        help="Prefill query/key pairs counted: full (every pair of a layer's window, the counter's convention) or "
             "causal (only the lower triangle a causal kernel computes).")] = "full",
    attn_implementation: Annotated[str | None, typer.Option(
        "--attn-implementation", help="Attention a transformers model runs: sdpa or eager (default: sdpa where "
                                      "the model has it, else eager, as Gemma-2). MACs do not depend on it.")
    ] = None,
    tp: Annotated[int, typer.Option("--tp", min=1, help="Bound the model split over this many GPUs (tensor "
                                                       "parallelism over the GPU table's link); measured runs "
                                                       "use one GPU.")] = 1,
    backends: Annotated[str | None, typer.Option(
        help="Comma list: hf-eager, hf-static, hf-static-compile, vllm, sglang, tensorrt_llm (default: "
             "hf-eager, hf-static-compile and the other engines, reported absent when not installed).")] = None,
    runs: Annotated[int, typer.Option(min=1, help="Measured generations per point (after the warm-up).")] = 3,
    warmup: Annotated[int, typer.Option(min=0, help="Untimed warm-up generations per point.")] = 1,
    repeats: Annotated[int, typer.Option(min=1, help="Measure each point this many times (repeatability).")] = 1,
    routing: Annotated[str | None, typer.Option(
        help="Mixture of experts: how tokens pick experts, for the weight bytes a step reads: uniform (default), "
             "zipf:S, or a .json of measured shares per expert (one list, or one per MoE layer).")] = None,
    predict: o.Predict = False,
    allow_partial: o.AllowPartial = False,
    json_path: o.JsonPath = None,
    out: o.OutDir = None,
) -> None:
    """What generating text costs: prefill and decode MACs/FLOPs and bytes, the KV cache, lower bounds for
    TTFT / TPOT / tokens/s on a GPU; without --static, measured TTFT / TPOT / tokens/s per backend."""
    from modelcost import api
    from modelcost.report.console import stdout_console
    from modelcost.report.llm import LLM_FILES, print_llm

    from modelcost.cli.runner import Outputs, run_command

    def work(run: RunReport, staged_csv: Path | None) -> Any:
        return api.llm(model, prompt_lens=_ints(prompt_len, "--prompt-len"), gen_lens=_ints(gen_len, "--gen-len"),
                       batch_sizes=_ints(batch_size, "--batch-size"), dtype=dtype, kv_dtype=kv_dtype,
                       target_gpu=target_gpu, measure=not static,
                       backends=[b.strip() for b in backends.split(",") if b.strip()] if backends else None,
                       runs=runs, warmup=warmup, repeats=repeats, attention=attention,
                       attn_implementation=attn_implementation, tp=tp, routing=routing, predict=predict)

    def write(run: RunReport, result: Any, staged_csv: Path | None) -> None:
        if result is not None:
            _write(result, run, json_path, out)

    outputs = Outputs(json_path=json_path, out=out, out_files=list(LLM_FILES), sample=False)
    report = run_command("llm", outputs, work, render=lambda result: print_llm(result, stdout_console(200)),
                         write=write).result
    if report.problems:
        raise ModelcostError(report.problems[0])
    if report.benchmarks and not any(r.status == "ok" for r in report.benchmarks):
        raise ModelcostError("no generation could be measured (the reasons are listed above)")
    if not report.complete and not allow_partial:
        from modelcost.cli.flow import exit_partial

        exit_partial()


def _write(report: object, run: RunReport, json_path: Path | None, out: Path | None) -> None:
    import json

    from modelcost.report.atomic import atomic_write_text
    from modelcost.report.llm import to_document, write_llm_folder

    created, command = run.created, run.command
    if json_path is not None:
        existed = json_path.exists()
        atomic_write_text(json_path, json.dumps(to_document(report, created, command), indent=2) + "\n")
        typer.echo(o.wrote("JSON report", json_path, existed))
    if out is not None:
        typer.echo(f"report folder: {write_llm_folder(report, out, created, command)}")
