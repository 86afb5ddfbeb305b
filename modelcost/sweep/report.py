"""The sweep report: the same block types as a single run's report (``report/sections.py``), rendered by the
same Markdown / HTML renderers, across many models and GPUs: the runs, the best config per model and GPU, a
GPU x model table, every config (its figure over its runs, the spread and the stability flags), the noise
between runs (``results --noise``, with a plot) and run-vs-run regressions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.text import config_label
from modelcost.core.units import binary_bytes, si
from modelcost.report.sections import Block, Bullets, Heading, Image, Para, Table
from modelcost.sweep.compare import Comparison
from modelcost.sweep.noise import WITHIN, NoiseReport, figure_of
from modelcost.sweep.results import Best, latest_runs_per_config, representative

NOISE_PLOT = "noise"  # the plot's name (an Image block): the spread of each config's figure across runs


def _f(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def run_blocks(runs: Sequence[dict[str, Any]]) -> list[Block]:
    rows = [[str(r["run_id"]), r["label"] or "", r["started"], r["status"], r["engine"], str(r["workers"] or "-"),
             _f(r["wall_s"], 5), str(r["configs_planned"] or 0), str(r.get("repeats") or 1),
             str(r["configs_skipped"] or 0)] for r in runs]
    blocks: list[Block] = [Heading("Runs"), Table(["run", "label", "started", "status", "engine", "workers",
                                                   "wall s", "planned", "repeats", "skipped (resumed)"], rows,
                                                  [True, False, False, False, False, True, True, True, True, True])]
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
        rows.append([b.model, b.gpu, pick_label(rec), _f(r.latency_ms.p50 if r.latency_ms else None),
                     _f(r.latency_ms.p99 if r.latency_ms else None), _f(r.throughput_ips, 5), mem,
                     why_picked(rec, bool(constraints))])
    return [Heading("Best config per model and GPU"),
            Para(f"objective: {objective}; constraints: {given} (the plan's [constraints]); latency in ms, "
                 "throughput in inferences per second (batch / median latency); a config measured in several "
                 "runs shows the run whose p50 is the median of its runs"),
            Table(["model", "device", "best config", "p50 ms", "p99 ms", "throughput ips", "GPU memory", "why"], rows,
                  [False, False, False, True, True, True, True, False])]


def pick_label(rec: Any) -> str:
    """The pick's name, with "unstable" beside it when its timings were flagged and "tentative" when nothing
    could be decided on: a report never names an unstable row best without saying so."""
    r = rec.best
    return (config_label(r) + (" (unstable)" if r.unstable else "")
            + (" (tentative)" if rec.caveats else ""))


def why_picked(rec: Any, constrained: bool) -> str:
    """Why this pick, and every rule that left a config out of it (too few samples, unstable, a tie)."""
    if rec.caveats:
        parts = ["tentative, not reliable: " + "; ".join(rec.caveats)]
    elif constrained:
        parts = [f"{len(rec.feasible)} of {rec.considered} measured configs meet the constraints"]
    else:
        parts = [f"the best {rec.objective} of {rec.considered} measured config{'s' if rec.considered != 1 else ''}"]
    if rec.unranked:
        parts.append(f"{len(rec.unranked)} left out for too few samples ({rec.unranked[0]})")
    flagged = [line for line in rec.skipped if "unstable timings" in line]
    if flagged and not rec.caveats:
        parts.append(f"{len(flagged)} left out as unstable ({flagged[0].split(':')[0]})")
    if rec.tie:
        parts.append(f"tie within the noise with {len(rec.tie) - 1} other(s), decided by {rec.tie_rule}")
    return "; ".join(parts)


def matrix_blocks(best: Sequence[Best]) -> list[Block]:
    """GPU x model: each cell the best config and its throughput."""
    models = list(dict.fromkeys(b.model for b in best))
    gpus = list(dict.fromkeys(b.gpu for b in best))
    cell = {(b.gpu, b.model): b.recommendation.best for b in best}
    cell_rec = {(b.gpu, b.model): b.recommendation for b in best}
    rows = []
    for g in gpus:
        row = [g]
        for m in models:
            r = cell.get((g, m))
            row.append("-" if r is None else f"{_f(r.throughput_ips, 5)} ips ({pick_label(cell_rec[(g, m)])})")
        rows.append(row)
    return [Heading("GPU x model (best throughput config)"), Table(["device", *models], rows)]


def config_blocks(rows: Sequence[dict[str, Any]]) -> list[Block]:
    out = []
    for runs in latest_runs_per_config(rows):
        r = representative(runs)
        fig = figure_of(runs)
        reason = (r["reason"] or "")[:160]
        flagged = [x["unstable"] for x in runs if x.get("unstable")]
        status = r["status"] + (f": {reason}" if reason else "") + (
            f" (unstable in {len(flagged)} of {len(runs)} runs: {flagged[0][0]})" if flagged else "")
        spread = "-" if fig is None or fig.runs < 2 else f"{fig.range_rel * 100:.1f}%"
        out.append([r["model_name"], r["device_name"] or "-", r["backend"], r["precision"], str(r["batch_size"]),
                    status, _f(fig.p50_ms if fig else None), str(fig.runs if fig else 0), spread,
                    _f(r["latency_p99_ms"]),
                    "-" if r["latency_ci95_rel"] is None else f"+-{r['latency_ci95_rel'] * 100:.2f}%",
                    _f(r["throughput_ips"], 5), "-" if r["macs"] is None else si(r["macs"]),
                    str(r["run_id"]), r["worker"] or "-"])
    timings = sorted({r["timing"] for r in rows if r.get("timing")})
    blocks: list[Block] = [Heading("Every config (the latest run of each config and GPU)"),
                           Para("p50: the median of the per-run p50s over the run's repeats; spread: max / min - 1 "
                                "of the per-run p50s; p99 and the within-run 95% interval of the median: the run "
                                "whose p50 is the median"),
                           Table(["model", "device", "backend", "precision", "batch", "status", "p50 ms", "runs",
                                  "spread across runs", "p99 ms", "median 95% CI (within run)", "throughput ips",
                                  "MACs", "run", "worker"], out,
                                 [False] * 6 + [True] * 8 + [False])]
    if timings:
        blocks += [Para("What the latency figures include:"), Bullets(timings)]
    return blocks


def compare_blocks(cmp: Comparison) -> list[Block]:
    rows = [[c.label, c.gpu, _f(c.a_ms), _f(c.b_ms), f"{c.runs[0]} / {c.runs[1]}", c.verdict.upper()
             if c.regression else c.verdict, "; ".join([c.detail, *c.notes])] for c in cmp.changes]
    n = cmp.regressions
    blocks: list[Block] = [
        Heading(f"Run {cmp.a_id} (A) vs run {cmp.b_id} (B)"),
        Para(f"{n} regression(s), {cmp.count('improvement')} improvement(s), {cmp.count('no change')} without "
             f"change and {cmp.count('too noisy to judge')} too noisy to judge, of {len(cmp.changes)} config(s) "
             f"compared; judged on the per-run p50s with the between-run noise (docs/MEASURING.md): a regression "
             f"is a change kept by the false-discovery control at 5% and at least {cmp.tolerance_pct:g}% slower, "
             f"or a config that ran in A and not in B", strong=n > 0),
        Table(["config", "device", "A p50 ms", "B p50 ms", "runs A / B", "verdict", "why"], rows,
              [False, False, True, True, True, False, False])]
    if cmp.left_out:
        blocks += [Heading("Left out of the comparison", 3),
                   Bullets([f"{o.label} ({o.gpu}): {o.why}" for o in cmp.left_out])]
    return blocks


def noise_blocks(report: NoiseReport) -> list[Block]:
    """The spread of each config's figure across runs, and the share that repeats within 2% / 5%."""
    rep = report.repeated
    if not rep:
        return [Heading("Noise between runs"),
                Para("No config was measured in more than one run: 'modelcost sweep PLAN --repeats 3' measures "
                     "each config three times, pass after pass, in separate processes.")]
    shares = ", ".join(f"{report.share_within(w) * 100:.0f}% within {w * 100:g}%" for w in WITHIN)
    rows = [[c.label, c.ident[-1], str(c.summary.runs), _f(c.summary.p50_ms), f"{c.summary.range_rel * 100:.1f}%",
             "-" if not c.spread.known else f"{c.spread.sd_log * 100:.2f}% ({c.spread.df} df)",
             str(c.unstable_runs)] for c in sorted(rep, key=lambda c: -c.summary.range_rel)]
    return [Heading("Noise between runs"),
            Para(f"{len(rep)} config(s) measured in 2 or more runs; their figure (median of the per-run p50s) "
                 f"repeats {shares} (spread: max / min - 1 of the per-run p50s)"),
            Table(["config", "device", "runs", "p50 ms", "spread across runs", "between-run sd (ln p50)",
                   "unstable runs"], rows, [False, False, True, True, True, True, True]),
            Image(NOISE_PLOT, "Spread of each config's p50 across runs (max / min - 1), with the 2% and 5% lines")]


def noise_plot_data(report: NoiseReport) -> list[tuple[str, float]]:
    """(config and GPU, spread in percent) of each repeated config, the plot's data (``report/plots``)."""
    return [(f"{c.label} ({c.ident[-1]})", c.summary.range_rel * 100) for c in report.repeated]


def sweep_blocks(title: str, runs: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], best: Sequence[Best],
                 objective: str, constraints: dict[str, float], noise: NoiseReport | None = None) -> list[Block]:
    blocks: list[Block] = [Heading(title, 1)]
    blocks += run_blocks(runs)
    if best:
        blocks += best_blocks(best, objective, constraints) + matrix_blocks(best)
    blocks += config_blocks(rows)
    if noise is not None:
        blocks += noise_blocks(noise)
    return blocks
