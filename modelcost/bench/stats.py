"""Latency statistics from raw samples, and the two questions the timing loop asks: has the warm-up settled,
and is the median known well enough.

Percentiles use linear interpolation between order statistics (numpy's default, "type 7"); ``std`` is the
sample standard deviation (n - 1). The confidence interval of the median is distribution-free: for n samples
the 95% interval runs between the order statistics of rank ``n/2 -+ 1.96 sqrt(n)/2`` (the normal approximation
of the binomial; see e.g. Conover, *Practical Nonparametric Statistics*), so no assumption about the shape of
the latency distribution is made. Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from modelcost.core.types import LatencyStats

Z95 = 1.959964


def percentile(sorted_samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted samples, linear interpolation."""
    n = len(sorted_samples)
    if n == 0:
        raise ValueError("no samples")
    pos = (n - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_samples[lo] + (sorted_samples[hi] - sorted_samples[lo]) * frac


def median(samples: Sequence[float]) -> float:
    return percentile(sorted(samples), 50.0)


def latency_stats(samples_ms: Sequence[float]) -> LatencyStats:
    """Summarise samples in milliseconds: count, p50/p90/p95/p99, mean, std (n-1), min, max."""
    s = sorted(float(x) for x in samples_ms)
    n = len(s)
    if n == 0:
        raise ValueError("latency_stats needs at least one sample")
    mean = math.fsum(s) / n
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0
    return LatencyStats(
        count=n, p50=percentile(s, 50), p90=percentile(s, 90), p95=percentile(s, 95), p99=percentile(s, 99),
        mean=mean, std=std, min=s[0], max=s[-1],
    )


def median_ci(samples: Sequence[float], z: float = Z95) -> tuple[float, float] | None:
    """Distribution-free ~95% confidence interval of the median, or None with too few samples (n < 6)."""
    n = len(samples)
    if n < 6:
        return None
    s = sorted(samples)
    half = z * math.sqrt(n) / 2.0
    lo_rank = max(math.floor(n / 2.0 - half), 1)  # 1-based ranks
    hi_rank = min(math.ceil(n / 2.0 + half) + 1, n)
    return s[lo_rank - 1], s[hi_rank - 1]


def median_rel_halfwidth(samples: Sequence[float]) -> float:
    """Half the width of the median's 95% interval, relative to the median (inf with too few samples)."""
    ci = median_ci(samples)
    if ci is None:
        return math.inf
    m = median(samples)
    if m <= 0:
        return math.inf
    return (ci[1] - ci[0]) / 2.0 / m


def block_medians(samples: Sequence[float], blocks: int = 10, min_per_block: int = 5) -> list[float] | None:
    """Medians of ``blocks`` consecutive, equal blocks of the samples in timing order (fewer blocks when there are
    fewer than ``min_per_block`` samples per block; the remainder at the end is left out). None with fewer than
    two blocks. Two runs of one config are compared from these the way ``compare`` compares its paired blocks
    (``decide/speedup.py``)."""
    n_blocks = min(blocks, len(samples) // min_per_block)
    if n_blocks < 2:
        return None
    size = len(samples) // n_blocks
    return [median(samples[i * size:(i + 1) * size]) for i in range(n_blocks)]


def settled(previous_median: float | None, current_median: float, tolerance: float) -> bool:
    """Warm-up is over when two successive windows' medians differ by less than ``tolerance`` (relative)."""
    if previous_median is None or previous_median <= 0:
        return False
    return abs(current_median - previous_median) / previous_median < tolerance
