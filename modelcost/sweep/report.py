"""The sweep report: the same block types as a single run's report (``report/sections.py``), rendered by the
same Markdown / HTML renderers, across many models and GPUs: the runs, the best config per model and GPU, a
GPU x model table, every config, and run-vs-run regressions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.text import config_label
from modelcost.core.units import binary_bytes, si
from modelcost.report.sections import Block, Bullets, Heading, Para, Table
from modelcost.sweep.results import Best, Change, latest_per_config


def _f(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def run_blocks(runs: Sequence[dict[str, Any]]) -> list[Block]:
    rows = [[str(r["run_id"]), r["label"] or "", r["started"], r["status"], r["engine"], str(r["workers"] or "-"),
             _f(r["wall_s"], 5), str(r["configs_planned"] or 0), str(r["configs_skipped"] or 0)] for r in runs]
    blocks: list[Block] = [Heading("Runs"), Table(["run", "label", "started", "status", "engine", "workers",
                                                   "wall s", "planned", "skipped (resumed)"], rows,
                                                  [True, False, False, False, False, True, True, True, True])]
    notes = list(dict.fromkeys(n for r in runs for n in r["notes"]))
    if notes:
        blocks.append(Bullets(notes))
    return blocks


def best_blocks(best: Sequence[Best], objective: str, constraints: dict[str, float]) -> list[Block]:
    given = ", ".join(f"{k} {v:g}" for k, v in constraints.items()) or "none"
    rows = []
    for b in best:
        rec = b.recommendation
        r = rec.best
        if r is None:
            rows.append([b.model, b.gpu, "none", "-", "-", "-", "-", "; ".join(rec.failing)[:200] or "-"])
            continue
        mem = "-" if r.gpu_memory_peak_bytes is None else binary_bytes(r.gpu_memory_peak_bytes)
        rows.append([b.model, b.gpu, config_label(r), _f(r.latency_ms.p50 if r.latency_ms else None),
                     _f(r.latency_ms.p99 if r.latency_ms else None), _f(r.throughput_ips, 5), mem,
                     f"{len(rec.feasible)} of {rec.considered} measured configs meet the constraints"])
    return [Heading("Best config per model and GPU"),
            Para(f"objective: {objective}; constraints: {given} (the plan's [constraints]); latency in ms, "
                 "throughput in inferences per second (batch / median latency)"),
            Table(["model", "device", "best config", "p50 ms", "p99 ms", "throughput ips", "GPU memory", "why"], rows,
                  [False, False, False, True, True, True, True, False])]


def matrix_blocks(best: Sequence[Best]) -> list[Block]:
    """GPU x model: each cell the best config and its throughput."""
    models = list(dict.fromkeys(b.model for b in best))
    gpus = list(dict.fromkeys(b.gpu for b in best))
    cell = {(b.gpu, b.model): b.recommendation.best for b in best}
    rows = []
    for g in gpus:
        row = [g]
        for m in models:
            r = cell.get((g, m))
            row.append("-" if r is None else f"{_f(r.throughput_ips, 5)} ips ({config_label(r)})")
        rows.append(row)
    return [Heading("GPU x model (best throughput config)"), Table(["device", *models], rows)]


def config_blocks(rows: Sequence[dict[str, Any]]) -> list[Block]:
    out = []
    for r in latest_per_config(rows):
        reason = (r["reason"] or "")[:160]
        out.append([r["model_name"], r["device_name"] or "-", r["backend"], r["precision"], str(r["batch_size"]),
                    r["status"] + (f": {reason}" if reason else ""), _f(r["latency_p50_ms"]), _f(r["latency_p99_ms"]),
                    "-" if r["latency_ci95_rel"] is None else f"+-{r['latency_ci95_rel'] * 100:.2f}%",
                    _f(r["throughput_ips"], 5), "-" if r["macs"] is None else si(r["macs"]),
                    str(r["run_id"]), r["worker"] or "-"])
    timings = sorted({r["timing"] for r in rows if r.get("timing")})
    blocks: list[Block] = [Heading("Every config (latest row of each config and GPU)"),
                           Table(["model", "device", "backend", "precision", "batch", "status", "p50 ms", "p99 ms",
                                  "median 95% CI", "throughput ips", "MACs", "run", "worker"], out,
                                 [False] * 6 + [True] * 5 + [True, False])]
    if timings:
        blocks += [Para("What the latency figures include:"), Bullets(timings)]
    return blocks


def compare_blocks(a_id: int, b_id: int, changes: Sequence[Change], tolerance_pct: float) -> list[Block]:
    rows = [[c.label, c.gpu, _f(c.a_ms), _f(c.b_ms), c.verdict, "REGRESSION" if c.regression else ""]
            for c in changes]
    n = sum(c.regression for c in changes)
    return [Heading(f"Run {a_id} (A) vs run {b_id} (B)"),
            Para(f"{n} regression(s) in {len(changes)} config(s) measured in both runs; a regression is a 95% "
                 f"interval of the latency ratio wholly on the slower side and a slowdown of at least "
                 f"{tolerance_pct:g}%, or a config that ran in A and not in B", strong=n > 0),
            Table(["config", "device", "A p50 ms", "B p50 ms", "B vs A", ""], rows,
                  [False, False, True, True, False, False])]


def sweep_blocks(title: str, runs: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], best: Sequence[Best],
                 objective: str, constraints: dict[str, float]) -> list[Block]:
    blocks: list[Block] = [Heading(title, 1)]
    blocks += run_blocks(runs)
    if best:
        blocks += best_blocks(best, objective, constraints) + matrix_blocks(best)
    blocks += config_blocks(rows)
    return blocks
