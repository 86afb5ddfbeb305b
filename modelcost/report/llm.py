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

from modelcost.core.llm import GenerationPoint, GenerationResult, LlmReport
from modelcost.core.units import binary_bytes, si
from modelcost.report.json_report import to_plain

SCHEMA = "modelcost.llm/1"


def point_to_dict(point: GenerationPoint) -> dict[str, Any]:
    return to_plain(point)


def llm_to_dict(report: LlmReport) -> dict[str, Any]:
    """The ``llm`` object: the first point's figures at the top level, every point under ``points``."""
    plain = to_plain(report)
    points = plain.pop("points")
    head = points[0] if points else {}
    return {**{k: plain[k] for k in ("model", "source", "dtype", "params", "weights_bytes",
                                     "weights_bytes_by_dtype", "weights_read_bytes")},
            **head, "points": points, "benchmarks": plain["benchmarks"], "uncounted": plain["uncounted"],
            "notes": plain["notes"], "problems": plain["problems"], "assumptions": plain["assumptions"]}


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
    table.add_row("weights", f"{report.weights_bytes:,} B", binary_bytes(report.weights_bytes) + "  " + ", ".join(
        f"{k} {binary_bytes(v)}" for k, v in report.weights_bytes_by_dtype.items()))
    table.add_row("weights read per forward", f"{report.weights_read_bytes:,} B", "input embeddings are gathered")
    return table


def points_table(report: LlmReport) -> Table:
    table = Table(title="per point (batch B, prompt P, generated G): counted on the meta device",
                  title_justify="left")
    for col in ("B", "P", "G", "KV B/token", "KV / seq", "prefill MACs", "prefill FLOPs", "decode MACs first..last",
                "decode MACs total", "AI prefill / decode", "peak mem (pred.)"):
        table.add_column(col, justify="right")
    for p in report.points:
        d = p.decode
        per = f"{si(d.per_token[0].macs)}..{si(d.per_token[-1].macs)}" if d.per_token else "-"
        ai = f"{p.prefill.arithmetic_intensity:.0f} / " + (
            f"{d.per_token[-1].arithmetic_intensity:.1f}" if d.per_token else "-")
        table.add_row(str(p.batch_size), str(p.prompt_len), str(p.gen_len), f"{p.kv_cache.bytes_per_token:,}",
                      binary_bytes(p.kv_cache.bytes_per_sequence), si(p.prefill.macs), si(p.prefill.flops), per,
                      si(d.macs_total), ai, binary_bytes(p.predicted_peak_memory_bytes))
    return table


def bounds_table(report: LlmReport) -> Table | None:
    rows = [p for p in report.points if p.bounds is not None]
    if not rows:
        return None
    b0 = rows[0].bounds
    table = Table(title=f"lower bounds on {b0.gpu} ({b0.precision} {b0.peak_tflops:g} TFLOP/s, "
                        f"{b0.bandwidth_gbps:g} GB/s; datasheet)", title_justify="left")
    for col in ("B", "P", "G", "TTFT ms", "bound by", "TPOT ms", "bound by", "tokens/s", "compute-bound at B",
                "max batch", "max cache tokens"):
        table.add_column(col, justify="right")
    for p in rows:
        b = p.bounds
        table.add_row(str(p.batch_size), str(p.prompt_len), str(p.gen_len), _ms(b.ttft_ms), b.bound_by["prefill"],
                      _ms(b.tpot_ms), b.bound_by["decode"], f"{b.tokens_per_second:,.0f}",
                      "never" if b.compute_bound_batch is None else f"{b.compute_bound_batch:,}",
                      "-" if b.max_batch is None else f"{b.max_batch:,}",
                      "-" if b.max_context_tokens is None else f"{b.max_context_tokens:,}")
    return table


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
    console.print(model_table(report))
    console.print(points_table(report))
    bounds = bounds_table(report)
    if bounds is not None:
        console.print(bounds)
    if report.benchmarks:
        console.print(bench_table(report.benchmarks))
        console.print(f"[dim]timing:[/] {report.benchmarks[0].timing}")
    if report.uncounted:
        ops = ", ".join(f"{op} x{n}" for op, n in report.uncounted.items())
        console.print(f"[yellow]uncounted ops (not in the totals):[/] {ops}")
    for note in report.notes:
        console.print(f"[dim]note:[/] {escape(note)}")
    for assumed in report.assumptions:
        console.print(f"[yellow]assumed:[/] {escape(assumed.describe())}")
    for problem in report.problems:
        console.print(f"[red]problem:[/] {escape(problem)}")


def render_markdown(report: LlmReport) -> str:
    """The same tables as the terminal, as Markdown (rich renders them to text; kept in a code block)."""
    from io import StringIO

    buf = StringIO()
    print_llm(report, Console(file=buf, width=180, color_system=None, highlight=False))
    return f"# Generation cost: {report.model}\n\nSource: `{report.source}`\n\n```\n{buf.getvalue()}```\n"


def write_llm_folder(report: LlmReport, out_dir: str | Path, created: str = "", command: str = "llm") -> Path:
    from modelcost.report.atomic import atomic_write_text

    folder = Path(out_dir)
    atomic_write_text(folder / "report.json", json.dumps(to_document(report, created, command), indent=2) + "\n")
    atomic_write_text(folder / "report.md", render_markdown(report))
    return folder
