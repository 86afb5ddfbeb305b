"""The finalists of an analyze / bench / recommend run, measured again in fresh sessions (issue 27).

After the sweep, the configs the pick is in doubt between are timed again (bench/finalists.py: a new runner and
session each time, interleaved with the other finalists, within ``--finalist-share`` of the sweep's time), and
each finalist's figures gain the between-session spread, which widens the tie interval of decide/ties.py:

- finalists (``choose``): the configs of the pick's ranking (``options.pick``, else ``run_pick``) whose objective
  interval overlaps the best one's, each interval at least +-``FLOOR_REL`` wide (a single session's interval
  cannot see the noise between sessions, so a narrower one would never put the pick in doubt); the pick first,
  at most ``MAX_FINALISTS``;
- each finalist keeps its sweep figures; ``extra.session_p50s_ms`` lists the p50 of every session (the sweep's
  first) and ``extra.between_run_ci95_rel`` is their 95% interval (decide/noise.py: t(0.975, n-1) x the sd of
  ln p50 / sqrt(n));
- ``run.finalist_repeats`` records what ran, and why not (``skipped``: a typed field, never a note read back).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from modelcost.bench import finalists as remeasure
from modelcost.core.measurement import FinalistRepeats
from modelcost.core.text import config_label
from modelcost.core.types import BenchResult, RunReport

# issue 27: batch-1 figures move between processes far more than batch-64 ones (BENCHMARKS.md, 'Figures that used to
# live in docstrings')
FLOOR_REL = 0.05
MAX_FINALISTS = 3


def choose(results: list[BenchResult],
           pick: Callable[[list[BenchResult]], Any]) -> tuple[list[BenchResult], str | None]:
    """(the finalists, the pick first; None) or ([], why there are none: "one config", "no pick", "no doubt")."""
    from modelcost.decide.constraints import latency_of
    from modelcost.decide.ties import intervals_overlap, objective_interval

    if sum(1 for r in results if r.status == "ok" and r.latency_ms is not None) < 2:
        return [], "one config"
    rec = pick(results)
    if rec is None or rec.best is None:
        return [], "no pick"
    stat = rec.latency_stat if rec.objective == "latency" else "p50"

    def figure(r: BenchResult) -> float:
        return -(r.throughput_ips or 0.0) if rec.objective == "throughput" else (latency_of(r, stat) or float("inf"))

    ranked = sorted(rec.feasible, key=figure)
    top = objective_interval(ranked[0], rec.objective, stat, FLOOR_REL)
    near = [r for r in ranked if r is not rec.best
            and intervals_overlap(top, objective_interval(r, rec.objective, stat, FLOOR_REL))]
    chosen = [rec.best, *near][:MAX_FINALISTS]
    return (chosen, None) if len(chosen) > 1 else ([], "no doubt")


def repeat_finalists(model: Any, report: RunReport, options: Any, sweep_s: float, *,
                     measure: remeasure.MeasureOne | None = None, clock: Callable[[], float] = time.monotonic,
                     on_start: Callable[[], None] | None = None) -> None:
    """Measure the finalists of ``report.benchmarks`` again (see the module doc) and record it in
    ``report.finalist_repeats``. ``sweep_s``: how long the sweep took (the budget is a share of it). ``measure`` /
    ``clock``: injected by tests (default: a fresh session of ``model``, ``time.monotonic``). ``on_start``: called
    when the repeats are about to start (the CLI says so). Ctrl-C during the repeats keeps what they measured,
    records "interrupted" and is raised again."""
    from modelcost.decide.recommend import run_pick

    config = options.bench
    record = report.finalist_repeats = FinalistRepeats(sessions_planned=config.finalist_repeats)
    if config.finalist_repeats == 0:
        record.skipped = "off"
        return
    chosen, why = choose(report.benchmarks, options.pick or run_pick)
    record.finalists = [config_label(r) for r in chosen]
    record.budget_s = round(config.finalist_share * max(sweep_s, 0.0), 3)
    if why is None and record.budget_s <= 0:
        why = "no budget"
    if why is not None:
        record.skipped = why
        return
    keys = [(r.backend, r.precision, r.batch_size) for r in chosen]
    expected = {k: (r.extra.timed_s or 0.0) + (r.build_s or 0.0) for k, r in zip(keys, chosen, strict=True)}
    if on_start is not None:
        on_start()
    got = remeasure.repeat(keys, config.finalist_repeats, record.budget_s,
                           measure or remeasure.fresh_session(model, config), expected, clock)
    for key, r in zip(keys, chosen, strict=True):
        add_sessions(r, got.p50s_ms[key])
    record.sessions_added = [len(got.p50s_ms[k]) for k in keys]
    record.spent_s, record.skipped = round(got.spent_s, 3), got.stopped
    record.failed = [f"{config_label(r)}: {got.failed[k]}" for k, r in zip(keys, chosen, strict=True)
                     if k in got.failed]
    if got.stopped == "interrupted":
        raise KeyboardInterrupt


def add_sessions(r: BenchResult, p50s_ms: list[float]) -> None:
    """``r``'s sweep p50 and those of its repeats as ``extra.session_p50s_ms``, and from two sessions on their
    between-session interval as ``extra.between_run_ci95_rel`` (decide/noise.py)."""
    from modelcost.decide.noise import between_run_rel, summarize

    assert r.latency_ms is not None
    every = [r.latency_ms.p50, *p50s_ms]
    r.extra.session_p50s_ms = [round(p, 6) for p in every]
    if len(every) >= 2:
        r.extra.between_run_ci95_rel = between_run_rel(summarize(every))
