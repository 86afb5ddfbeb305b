"""Render a generation analysis (``core.llm.LlmReport``): the ``llm`` JSON object, terminal tables, Markdown,
and the report folder (report.json + report.md). Sees core types only; docs/REPORT_SCHEMA.md documents the keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from modelcost.core.llm import ExpertReads, GenerationPoint, GenerationResult, LlmReport
from modelcost.core.units import binary_bytes, si
from modelcost.report.console import partial_line, print_caveats
from modelcost.report.json_report import to_plain

SCHEMA = "modelcost.llm/1"


def point_to_dict(point: GenerationPoint) -> dict[str, Any]:
    return to_plain(point)


def llm_to_dict(report: LlmReport) -> dict[str, Any]:
    """The ``llm`` object: the first point's figures at the top level, every point under ``points``."""
    plain = to_plain(report)
    points = plain.pop("points")
    head = points[0] if points else {}
    return {**{k: plain[k] for k in ("model", "source", "config_defaults", "dtype", "params", "params_active", "moe",
                                     "weights_bytes", "weights_bytes_by_dtype", "weights_read_bytes", "attention",
                                     "attn_implementation", "hidden_state_bytes", "complete", "incomplete_reasons",
                                     "mla", "repeated_layers")},
            **head, "points": points, "benchmarks": plain["benchmarks"], "uncounted": plain["uncounted"],
            "notes": plain["notes"], "problems": plain["problems"], "assumptions": plain["assumptions"],
            "predictions": plain["predictions"]}


def to_document(report: LlmReport, created: str = "", command: str = "llm") -> dict[str, Any]:
    return {"schema": SCHEMA, "created": created, "command": command, "llm": llm_to_dict(report)}


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _ratio(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.0f}%" if pct else f"{value:.2f}x"


def model_table(report: LlmReport) -> Table:
    table = Table(title=f"{report.model}  ({report.dtype} weights)", show_header=False, title_justify="left")
    for col in ("what", "value", "detail"):
        table.add_column(col)
    table.add_row("parameters", f"{report.params:,}", si(report.params))
    moe = report.moe
    if moe is not None:
        table.add_row("  active per token", f"{report.params_active:,}",
                      f"{si(report.params_active)}  ({moe.top_k} of {moe.experts} routed experts per MoE layer)")
        table.add_row("routed experts", f"{moe.layers} layers x {moe.experts}",
                      f"one expert {si(moe.expert_params)} params, {binary_bytes(moe.expert_bytes)}; all "
                      f"{binary_bytes(moe.routed_bytes)}")
    table.add_row("weights", f"{report.weights_bytes:,} B", binary_bytes(report.weights_bytes) + "  " + ", ".join(
        f"{k} {binary_bytes(v)}" for k, v in report.weights_bytes_by_dtype.items()))
    table.add_row("weights read per forward", f"{report.weights_read_bytes:,} B", "input embeddings are gathered" + (
        "; every routed expert (a step reads the ones its tokens visit: the points' bytes)" if moe else ""))
    table.add_row("attention", report.attn_implementation or "-", f"prefill pairs counted: {report.attention}")
    groups = report.points[0].kv_cache.layer_groups if report.points else []
    for g in groups if any(g.window for g in groups) else []:
        what = "full attention" if g.window is None else f"sliding window {g.window:,}"
        until = "" if g.window is None else f" up to {g.window:,} positions, then constant"
        layers = f"{g.layers} layer" + ("s" if g.layers > 1 else "")
        table.add_row(f"KV cache: {layers}", what, f"{g.bytes_per_token:,} B/token{until} ({g.kv_heads} KV heads)")
    return table


def points_table(report: LlmReport) -> Table:
    form = "; decode as transformers runs it (latents re-expanded every step)" if report.mla else ""
    table = Table(title=f"per point (batch B, prompt P, generated G): counted on the meta device{form}",
                  title_justify="left")
    moe = report.moe is not None
    for col in ("B", "P", "G", "KV B/token", "KV / seq at P", "at P+G-1", "prefill MACs", "prefill FLOPs",
                "decode MACs first..last", "decode MACs total", "AI prefill / decode",
                *(("experts read/layer pre / dec",) if moe else ()), "decode B/step first", "peak mem (pred.)"):
        table.add_column(col, justify="right")
    ge = "" if report.complete else "≥ "  # a partial count: MACs and FLOPs are lower bounds
    for p in report.points:
        d = p.decode
        per = f"{ge}{si(d.per_token[0].macs)}..{si(d.per_token[-1].macs)}" if d.per_token else "-"
        ai = f"{p.prefill.arithmetic_intensity:.0f} / " + (
            f"{d.per_token[-1].arithmetic_intensity:.1f}" if d.per_token else "-")
        reads = [f"{_experts(p.prefill.experts_read)} / {_experts(d.experts_read)}"] if moe else []
        step = binary_bytes(d.per_token[0].bytes) if d.per_token else "-"
        table.add_row(str(p.batch_size), str(p.prompt_len), str(p.gen_len), f"{p.kv_cache.bytes_per_token:,}",
                      binary_bytes(p.kv_cache.bytes_at_prompt), binary_bytes(p.kv_cache.bytes_per_sequence),
                      ge + si(p.prefill.macs), ge + si(p.prefill.flops), per, ge + si(d.macs_total), ai, *reads, step,
                      binary_bytes(p.predicted_peak_memory_bytes))
    return table


def _experts(reads: ExpertReads | None) -> str:
    return "-" if reads is None else f"{reads.experts_per_layer:.2f}"


def mla_table(report: LlmReport) -> Table | None:
    """Multi-head latent attention: the decode as transformers runs it beside the absorbed form."""
    s, rows = report.mla, [p for p in report.points if p.decode_absorbed is not None and p.decode_absorbed.steps]
    if s is None or not rows:
        return None
    q = "q one projection" if s.q_lora_rank is None else f"q_lora_rank {s.q_lora_rank}"
    table = Table(title=f"multi-head latent attention ({s.layers} layers x {s.num_heads} heads, kv_lora_rank "
                        f"{s.kv_lora_rank} + rope {s.qk_rope_head_dim} cached, {q}): decode as transformers runs "
                        "it vs absorbed (W_UK, W_UV absorbed, attention on the latent cache: vLLM, SGLang, FlashMLA)",
                  title_justify="left")
    for col in ("B", "P", "G", "as run MACs first..last", "absorbed MACs first..last", "as run total",
                "absorbed total", "bytes last step", "AI last as run / absorbed"):
        table.add_column(col, justify="right")
    for p in rows:
        ran, ab = p.decode, p.decode_absorbed
        table.add_row(str(p.batch_size), str(p.prompt_len), str(p.gen_len),
                      f"{si(ran.per_token[0].macs)}..{si(ran.per_token[-1].macs)}",
                      f"{si(ab.per_token[0].macs)}..{si(ab.per_token[-1].macs)}", si(ran.macs_total),
                      si(ab.macs_total), binary_bytes(ab.per_token[-1].bytes),
                      f"{ran.per_token[-1].arithmetic_intensity:.1f} / {ab.per_token[-1].arithmetic_intensity:.1f}")
    return table


def bounds_table(report: LlmReport) -> Table | None:
    rows = [p for p in report.points if p.bounds is not None]
    if not rows:
        return None
    b0 = rows[0].bounds
    over = f"{b0.tp} x " if b0.tp > 1 else ""
    link = f"; {b0.link} {b0.link_gbps:g} GB/s both ways" if b0.tp > 1 else ""
    table = Table(title=f"lower bounds on {over}{b0.gpu} ({b0.precision} {b0.peak_tflops:g} TFLOP/s, "
                        f"{b0.bandwidth_gbps:g} GB/s per GPU{link}; datasheet)", title_justify="left")
    for col in ("B", "P", "G", "TTFT ms", "bound by", "TPOT ms", "bound by", "tokens/s", "compute-bound at B",
                "max batch", "max cache tokens"):
        table.add_column(col, justify="right")
    for p in rows:
        b = p.bounds
        head = (str(p.batch_size), str(p.prompt_len), str(p.gen_len))
        if not b.fits:
            table.add_row(*head, "[red]does not fit[/]", "-", "-", "-", "-", "-", "-", "-")
            continue
        table.add_row(*head, _ms(b.ttft_ms), b.bound_by["prefill"],
                      _ms(b.tpot_ms), b.bound_by["decode"], f"{b.tokens_per_second:,.0f}",
                      "never" if b.compute_bound_batch is None else f"{b.compute_bound_batch:,}",
                      "-" if b.max_batch is None else f"{b.max_batch:,}",
                      "-" if b.max_context_tokens is None else f"{b.max_context_tokens:,}")
    return table


def fit_lines(report: LlmReport) -> list[str]:
    """One line per point that does not fit: its weights and one sequence's cache (what it needs, and how many
    GPUs hold it), or its batch's caches."""
    lines = []
    for p in report.points:
        b = p.bounds
        if b is None or b.memory_needed_bytes is None or b.memory_bytes is None:
            continue
        where = f"{b.tp} x {b.gpu}" if b.tp > 1 else b.gpu
        if b.fits and b.max_batch is not None and b.max_batch < p.batch_size:
            lines.append(f"B={p.batch_size} P={p.prompt_len} G={p.gen_len} on {where}: the caches of only "
                         f"{b.max_batch:,} sequences fit beside the weights; the bounds of this row assume all "
                         f"{p.batch_size} do")
        if b.fits:
            continue
        per = " per GPU" if b.tp > 1 else ""
        need = ("no number of GPUs holds it" if b.gpus_needed is None else
                f"{b.gpus_needed} GPUs hold it: try --tp {b.gpus_needed}")
        lines.append(f"B={p.batch_size} P={p.prompt_len} G={p.gen_len} on {where}: the weights + one "
                     f"sequence's KV cache ({p.prompt_len + p.gen_len} positions) take "
                     f"{binary_bytes(b.memory_needed_bytes)}{per}, the GPU has {binary_bytes(b.memory_bytes)}; {need}")
    return lines


def bench_table(results: list[GenerationResult]) -> Table:
    table = Table(title="measured generation (greedy, fixed new tokens, EOS ignored)", title_justify="left")
    for col in ("backend", "prec", "B", "P", "G", "TTFT ms", "TPOT p50/p90/p99 ms", "tok/s", "TTFT/bound",
                "TPOT/bound", "BW util", "MFU", "peak mem (pred.)", "status"):
        table.add_column(col, justify="right" if col not in ("backend", "status") else "left", overflow="fold")
    for r in results:
        if r.status != "ok":
            table.add_row(r.backend, r.precision, str(r.batch_size), str(r.prompt_len), str(r.gen_len),
                          *["-"] * 8, f"{r.status}: {escape(r.reason or '')}")
            continue
        t = r.tpot_stats
        tpot = f"{_ms(t.p50)}/{_ms(t.p90)}/{_ms(t.p99)}" if t else "-"
        mem = (f"{binary_bytes(r.peak_memory_bytes)} ({binary_bytes(r.predicted_peak_memory_bytes)})"
               if r.peak_memory_bytes else "-")
        table.add_row(r.backend, r.precision, str(r.batch_size), str(r.prompt_len), str(r.gen_len), _ms(r.ttft_ms),
                      tpot, f"{r.tokens_per_second:,.0f}", _ratio(r.ttft_bound_ratio), _ratio(r.tpot_bound_ratio),
                      _ratio(r.bandwidth_utilization, True), _ratio(r.mfu, True), mem,
                      f"[yellow]unstable[/]: {escape(r.unstable)}" if r.unstable else "ok")
    return table


def print_llm(report: LlmReport, console: Console) -> None:
    if report.config_defaults:
        filled = ", ".join(f"{k}={v}" for k, v in report.config_defaults.items())
        console.print(f"[yellow]not in the config, transformers' defaults used:[/] {escape(filled)}")
    console.print(model_table(report))
    console.print(points_table(report))
    mla = mla_table(report)
    if mla is not None:
        console.print(mla)
        console.print(f"[dim]MLA:[/] both forms cache {report.mla.latent_elements_per_token:,} elements per token; "
                      f"transformers re-expands {report.mla.expanded_kv_elements_per_position:,} K and V elements "
                      "per cached position at every step (activations, not in decode bytes); the prefill is the "
                      "same in both forms; bounds use the as-run decode")
    bounds = bounds_table(report)
    if bounds is not None:
        console.print(bounds)
    for line in fit_lines(report):
        console.print(f"[red]does not fit:[/] {escape(line)}")
    if report.benchmarks:
        console.print(bench_table(report.benchmarks))
        console.print(f"[dim]timing:[/] {report.benchmarks[0].timing}")
    if report.predictions:
        from modelcost.report.console_predict import llm_predictions_table

        console.print(llm_predictions_table(report.predictions))
    if not report.complete:
        console.print(f"[bold yellow]{escape(partial_line(report.uncounted, report.incomplete_reasons))}[/]")
    print_caveats(report, console)


def render_markdown(report: LlmReport) -> str:
    """The same tables as the terminal, as Markdown (rich renders them to text; kept in a code block)."""
    from io import StringIO

    buf = StringIO()
    print_llm(report, Console(file=buf, width=180, color_system=None, highlight=False))
    return f"# Generation cost: {report.model}\n\nSource: `{report.source}`\n\n```\n{buf.getvalue()}```\n"


LLM_FILES = ("report.json", "report.md")  # what write_llm_folder writes


def write_llm_folder(report: LlmReport, out_dir: str | Path, created: str = "", command: str = "llm") -> Path:
    """report.json and report.md in ``out_dir``; only files an earlier run wrote there are replaced
    (``report.folder.check_folder``)."""
    from modelcost.report.atomic import atomic_write_text
    from modelcost.report.folder import check_folder

    folder = Path(out_dir)
    check_folder(folder, list(LLM_FILES))
    document = json.dumps(to_document(report, created, command), indent=2) + "\n"
    atomic_write_text(folder / "report.json", document, record_in=folder)
    atomic_write_text(folder / "report.md", render_markdown(report), record_in=folder)
    return folder
