"""How many timed samples a latency statistic needs before modelcost shows it as a plain figure or decides on it.

A percentile q estimated from n samples says something about the tail only if samples are expected to fall in
that tail: on average n x (1 - q/100) of them lie above the true q-th percentile. Below one such sample the
estimate is an interpolation towards the slowest sample, i.e. a statement about the maximum of a small sample,
and it can sit far below the real tail. So a tail percentile needs n >= 1 / (1 - q/100):

    p90: 1 / 0.10 = 10 samples     p95: 1 / 0.05 = 20 samples     p99: 1 / 0.01 = 100 samples

The median needs 6: the fewest for which its distribution-free 95% confidence interval exists (the interval
between order statistics n/2 -+ 1.96 sqrt(n)/2, ``bench/stats.median_ci``, which the timing loop also uses to
decide when to stop). The mean has no minimum (its spread is shown as the standard deviation).

Reports still print a statistic that has too few samples, marked with ``*`` and the sample count; ``recommend``
does not rank a config on it and says why. Standard library only.
"""

from __future__ import annotations

import math

from modelcost.core.types import LatencyStats

MEDIAN_MIN_SAMPLES = 6
MARK = "*"  # printed after a figure with too few samples


def min_samples(stat: str) -> int:
    """Samples ``stat`` ("p50", "p90", "p95", "p99", "mean", ...) needs; 0 when it has no minimum."""
    if stat == "p50":
        return MEDIAN_MIN_SAMPLES
    if stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit():
        q = float(stat[1:])  # round(): 1 / (1 - 0.99) is 100.00000000000009 in floating point
        return math.ceil(round(1.0 / (1.0 - q / 100.0), 9)) if 50 < q < 100 else 0
    return 0


def enough_samples(stats: LatencyStats | None, stat: str) -> bool:
    return stats is not None and stats.count >= min_samples(stat)


def too_few_reason(stats: LatencyStats | None, stat: str) -> str | None:
    """'p99 from 12 samples (p99 needs >= 100)', or None when there are enough."""
    if stats is None or enough_samples(stats, stat):
        return None
    return f"{stat} from {stats.count} sample{'s' if stats.count != 1 else ''} ({stat} needs >= {min_samples(stat)})"


def marked(stats: LatencyStats, stat: str, digits: int = 3) -> str:
    """The figure, with ``MARK`` when it has too few samples."""
    value = f"{float(getattr(stats, stat)):.{digits}f}"
    return value if enough_samples(stats, stat) else value + MARK


def footnote(stats: list[LatencyStats], stats_shown: tuple[str, ...] = ("p50", "p90", "p99")) -> str | None:
    """The line that explains ``MARK``, when some figure in ``stats`` carries it."""
    if not any(not enough_samples(s, name) for s in stats for name in stats_shown):
        return None
    needs = ", ".join(f"{name} >= {min_samples(name)}" for name in stats_shown)
    return (f"{MARK} fewer samples than the statistic needs ({needs}; n = samples): shown, but not a reliable "
            "figure and not used to rank configs; a longer --max-time-s or a larger --min-iters gives more")
