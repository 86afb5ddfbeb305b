"""What a run found, in a few lines a reader sees first: the counts, the fastest config at the smallest batch,
the most throughput, the pick and how sure it is, and what was not measured (see ``sections.py``).

Built from the finished run; the pick is ``decide``'s ``Recommendation`` handed in, never judged here. The
console, the Markdown and the HTML all show these same blocks."""

from __future__ import annotations

from modelcost.core.decisions import Recommendation
from modelcost.core.measurement import FinalistRepeats
from modelcost.core.text import config_label
from modelcost.core.types import BenchResult, CostReport, RunReport
from modelcost.core.units import binary_bytes, number, si
from modelcost.report.blocks import Block, Bullets, Heading, not_counted

FOUND = "What this run found"


def found_blocks(run: RunReport, recommendation: Recommendation | None = None, *, counts: bool = True) -> list[Block]:
    """The heading and one bullet per finding; [] for a run that benchmarked nothing (a static analysis shows its
    own tables). ``counts``: open with the static counts (``bench`` leaves them out)."""
    if not run.benchmarks:
        return []
    lines = [counted_line(run.cost)] if counts and run.cost is not None else []
    ok = [r for r in run.benchmarks if r.status == "ok" and r.latency_ms is not None]
    lines += [fastest_line(ok), throughput_line(ok), pick_line(recommendation), repeats_line(run.finalist_repeats)]
    lines.append(measured_line(run.benchmarks))
    if run.cost is not None and not run.cost.compute.complete:
        lines.append(partial_counts_line(run.cost))
    if not run.complete:
        lines.append("INCOMPLETE: the run stopped early; the configs that did not run are missing, not zero")
    where = f" ({run.device.name})" if run.device is not None and run.device.kind == "cuda" else ""
    return [Heading(FOUND + where), Bullets([line for line in lines if line])]


def counted_line(cost: CostReport | None) -> str:
    if cost is None:
        return ""
    p, c = cost.params, cost.compute
    batch = f" at batch {cost.batch_size}" if cost.batch_size is not None else ""
    head = f"counted{batch}: {si(p.total)} params, {binary_bytes(cost.storage.bytes)} weights"
    untraced = not_counted(c)
    if untraced:
        return f"{head}; MACs and FLOPs not counted ({untraced})"
    ge = "" if c.complete else "≥ "  # a partial count is a lower bound
    every = ", all ops counted" if c.complete else ""
    return f"{head}, {ge}{c.macs:,} MACs = {ge}{si(c.flops)}FLOPs{every}"


def partial_counts_line(cost: CostReport) -> str:
    c = cost.compute
    ops = ", ".join(f"{op} x{n}" for op, n in sorted(c.uncounted_ops.items()))
    what = f"not counted: {ops}" if ops else "; ".join(c.incomplete_reasons) or "see the notes"
    return f"warning: the counts are incomplete, MACs and FLOPs are lower bounds (≥) and no roofline is drawn; {what}"


def _spread(r: BenchResult) -> str:
    """The median and its spread: p50 ±cv (std / mean over the timed runs), and how many runs."""
    lat = r.latency_ms
    assert lat is not None
    flag = ", unstable timings" if r.unstable else ""
    return f"p50 {number(lat.p50)} ms ±{lat.cv * 100:.1f}% (n {lat.count:,}{flag})"


def fastest_line(ok: list[BenchResult]) -> str:
    """The lowest median latency at the smallest batch measured (batch 1 in every default run)."""
    if not ok:
        return "fastest: nothing was measured"
    batch = min(r.batch_size for r in ok)
    best = min((r for r in ok if r.batch_size == batch), key=lambda r: r.latency_ms.p50)  # type: ignore[union-attr]
    assert best.latency_ms is not None
    return f"fastest at batch {batch}: {best.backend} {best.precision}, {_spread(best)}"


def throughput_line(ok: list[BenchResult]) -> str:
    with_ips = [r for r in ok if r.throughput_ips]
    if not with_ips:
        return ""
    best = max(with_ips, key=lambda r: r.throughput_ips or 0.0)
    assert best.latency_ms is not None
    return (f"most throughput: {config_label(best)}, {number(best.throughput_ips)} IPS "
            f"(p50 {number(best.latency_ms.p50)} ms per batch)")


def pick_line(rec: Recommendation | None) -> str:
    """The recommendation (decide/recommend.py) in one line: the config, what it was picked on, and how sure."""
    if rec is None:
        return ""
    limits = ", ".join(f"{k} {number(v)}" for k, v in rec.constraints.items()) or "no constraints"
    basis = f"best {rec.objective}, {limits}"
    if rec.best is None:
        return f"pick ({basis}): none; {rec.reasons[0] if rec.reasons else 'nothing meets the constraints'}"
    if rec.caveats:  # decide's tentative pick: nothing could be ranked reliably, so nothing is "sure"
        sure = f"tentative, not reliable: {'; '.join(rec.caveats)}"
    elif rec.tie:
        others = ", ".join(config_label(r) for r in rec.tie[1:])
        noise = ("the noise between sessions" if any(r.extra.between_run_ci95_rel is not None for r in rec.tie)
                 else "the timing noise")
        sure = f"tied within {noise} with {others}; chosen on {rec.tie_rule}"
    elif len(rec.feasible) > 1:
        nxt = rec.feasible[1]
        sure = f"sure: ahead of {config_label(nxt)} beyond the timing noise"
        if rec.objective == "throughput" and nxt.throughput_ips and rec.best.throughput_ips:
            sure += f" (+{(rec.best.throughput_ips / nxt.throughput_ips - 1) * 100:.1f}% IPS)"
    else:
        sure = "the only config that qualifies"
    return f"pick ({basis}): {config_label(rec.best)}; {sure}{_sessions(rec.best)}"


def _sessions(r: BenchResult) -> str:
    """'; p50 over 3 sessions 1.02 / 1.05 / 0.99 ms: ±6.1% between sessions, ±0.8% within one' for a finalist
    measured again (runs/finalists.py), else ''."""
    p50s, between, within = r.extra.session_p50s_ms, r.extra.between_run_ci95_rel, r.extra.median_ci95_rel
    if not p50s or len(p50s) < 2:
        return ""
    spread = f": ±{between * 100:.1f}% between sessions" if between is not None else ""
    if spread and within is not None:
        spread += f", ±{within * 100:.1f}% within one"
    return f"; p50 over {len(p50s)} sessions {' / '.join(number(p) for p in p50s)} ms{spread}"


def repeats_line(rec: FinalistRepeats | None) -> str:
    """Whether the finalists were measured again, and if not, or not all, why (``RunReport.finalist_repeats``)."""
    if rec is None or rec.skipped in ("off", "one config", "no pick"):
        return ""
    names = ", ".join(rec.finalists)
    if rec.skipped == "no doubt":
        return "finalists not measured again: the pick leads every other config beyond the noise floor"
    if rec.skipped == "no budget":
        return "finalists not measured again: --finalist-share 0 leaves no time for it"
    added = ", ".join(f"{n}" for n in rec.sessions_added)
    done = (f"finalists measured again in fresh sessions, interleaved: {names} ({added} more of "
            f"{rec.sessions_planned} each, {rec.spent_s:.1f} s of a {rec.budget_s:.1f} s budget)")
    if rec.skipped == "budget spent":
        done += "; the budget was spent before every repeat ran (--finalist-share)"
    elif rec.skipped == "interrupted":
        done += "; interrupted (Ctrl-C)"
    if rec.failed:
        done += "; failed: " + "; ".join(rec.failed)
    return done


def measured_line(results: list[BenchResult]) -> str:
    """How many configs were measured in full, and how many were not, by status."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    words = {"screened": "screened out", "unavailable": "unavailable", "failed": "failed", "oom": "out of memory"}
    rest = [f"{n} {words.get(status, status)}" for status, n in counts.items() if status != "ok"]
    unstable = sum(1 for r in results if r.status == "ok" and r.unstable)
    head = f"{counts.get('ok', 0)} of {len(results)} configs measured in full"
    head += f" ({unstable} with unstable timings)" if unstable else ""
    return head + (f"; {', '.join(rest)} (why: the notes)" if rest else "")
