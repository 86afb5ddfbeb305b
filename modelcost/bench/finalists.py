"""The finalists measured again: each config in a fresh session, interleaved with the others, within a budget.

One timed loop gives a tight interval for *that* session (the median of its block medians), but a launch-bound figure
moves with the host's pace between sessions and processes (issue 27: BENCHMARKS.md, 'Figures that used to live in
docstrings'). So the configs a pick is in doubt between (chosen in runs/finalists.py) are timed again: round after
round, each round visits every finalist once (A B C, A B C: never the same config back to back), each visit a new runner
and session (``lifecycle.prepared`` / ``lifecycle.session``) timed by ``lifecycle.time_session``. The p50 of each
session is what comes back; judging the spread is not here (decide/noise.py).

The clock and the measuring of one session are injectable (``repeat``'s ``clock`` and ``measure``), so a test
times nothing and depends on no machine's load.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelcost.bench import lifecycle
from modelcost.bench.base import BenchConfig

if TYPE_CHECKING:
    from modelcost.bench.model import BenchModel

Config = tuple[str, str, int]  # (backend, precision, batch)
MeasureOne = Callable[[str, str, int], float]  # one fresh session of a config -> its p50 (ms)


@dataclass
class Repeats:
    """What ``repeat`` measured: each config's p50 per added session, in time order, and why it stopped early."""

    p50s_ms: dict[Config, list[float]] = field(default_factory=dict)
    stopped: str | None = None  # None: every round ran; "budget spent" | "interrupted"
    spent_s: float = 0.0
    failed: dict[Config, str] = field(default_factory=dict)  # 'status: reason' (lifecycle.failure); not repeated


def fresh_session(model: BenchModel, config: BenchConfig) -> MeasureOne:
    """Time one config in a new runner and session (the sweep's warm-up and timed loop), and return its p50."""
    def measure(backend: str, precision: str, batch: int) -> float:
        arrays, _ = model.host_inputs(batch)
        with lifecycle.prepared(backend, model, precision, config) as runner, \
                lifecycle.session(runner, batch, arrays) as session:
            timed = lifecycle.time_session(session, config)
        return float(statistics.median(timed.measurement.samples_ms))

    return measure


def repeat(configs: Sequence[Config], rounds: int, budget_s: float, measure: MeasureOne,
           expected_s: dict[Config, float] | None = None, clock: Callable[[], float] = time.monotonic) -> Repeats:
    """Up to ``rounds`` more sessions of every config in ``configs``, interleaved (round by round), while they fit
    in ``budget_s``. Only whole rounds are started, so every finalist gets as many sessions as the others (a
    between-session spread known for one finalist only would widen its interval alone): a round starts when the
    time spent plus what each config's last session took (``expected_s`` before its first) stays within the
    budget; the first that does not ends the repeats ("budget spent"). Ctrl-C ends them too ("interrupted"): what
    was measured is kept and the interrupt is re-raised by the caller. A config whose session raises is not
    repeated again (``failed``)."""
    out = Repeats(p50s_ms={c: [] for c in configs})
    cost = dict(expected_s or {})
    start = clock()
    try:
        for _ in range(rounds):
            left = [c for c in configs if c not in out.failed]
            if clock() - start + sum(cost.get(c, 0.0) for c in left) > budget_s:
                out.stopped = "budget spent"
                return out
            for config in left:
                began = clock()
                try:
                    out.p50s_ms[config].append(measure(*config))
                except Exception as exc:  # noqa: BLE001 - one config's failure ends its repeats, not the others'
                    status, reason = lifecycle.failure(exc)
                    out.failed[config] = f"{status}: {reason}"
                cost[config] = clock() - began
    except KeyboardInterrupt:
        out.stopped = "interrupted"
    finally:
        out.spent_s = clock() - start
    return out
