"""The statistics of a speedup: candidate vs base from interleaved blocks of timed runs. Pure, standard library.

Design. Base (A) and candidate (B) are timed in alternating blocks of ``k`` runs each, in the order
A B, B A, A B, ... (an ABBA pattern, so a slow linear drift of clocks or temperature hits both sides alike).
Each block gives one number, the median of its ``k`` latencies. Block ``i`` and its partner form a pair, and
the pair's log-ratio is ``d_i = ln(base_i / candidate_i)``.

Interval (default, ``method="t"``): a Student-t interval on the mean of the ``n`` log-ratios,
``mean(d) +- t(0.975, n-1) * sd(d) / sqrt(n)``, transformed back with ``exp``. Logs make the ratio symmetric
(2x faster and 2x slower are +-ln 2) and the pairing removes the common drift. ``method="bootstrap"``: a
percentile bootstrap of the median of the ``d_i`` (fixed seed, 10,000 resamples), for heavy-tailed blocks.

Words. ``ratio`` = base latency / candidate latency (geometric mean over pairs). The candidate is
"faster by X%" with X = (ratio - 1) x 100: the base takes X% longer (equivalently, X% more throughput).
It is "slower by Y%" with Y = (1 / ratio - 1) x 100: the candidate takes Y% longer. The verdict is
"no significant difference" when the 95% interval contains 0, with its estimate and ends in the same words
(a 2.2x slower candidate is "120% slower", never "-54.9%": the JSON's signed ``percent`` is the throughput change).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95% quantiles of Student's t, t(0.975, df). Beyond 30, interpolated linearly in 1/df.
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
    11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
    20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
    29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}
_Z975 = 1.960
METHODS = ("t", "bootstrap")


def t975(df: int) -> float:
    """t(0.975, df) from the table (exact to 3 decimals up to 30; within 0.002 beyond)."""
    if df < 1:
        raise ValueError("a t interval needs at least 2 pairs")
    if df in _T975:
        return _T975[df]
    keys = sorted(_T975)
    if df > keys[-1]:
        lo_df, hi_df, lo_t, hi_t = keys[-1], math.inf, _T975[keys[-1]], _Z975
    else:
        lo_df = max(k for k in keys if k < df)
        hi_df = min(k for k in keys if k > df)
        lo_t, hi_t = _T975[lo_df], _T975[hi_df]
    x, x0, x1 = 1 / df, 1 / lo_df, (0.0 if hi_df == math.inf else 1 / hi_df)
    return hi_t + (lo_t - hi_t) * (x - x1) / (x0 - x1)


@dataclass(frozen=True)
class SpeedupCI:
    ratio: float  # base / candidate latency
    ratio_low: float
    ratio_high: float
    pairs: int
    method: str

    @property
    def significant(self) -> bool:
        return self.ratio_low > 1.0 or self.ratio_high < 1.0

    @property
    def percent(self) -> float:
        return (self.ratio - 1.0) * 100.0

    @property
    def percent_low(self) -> float:
        return (self.ratio_low - 1.0) * 100.0

    @property
    def percent_high(self) -> float:
        return (self.ratio_high - 1.0) * 100.0


def log_ratios(base_blocks_ms: Sequence[float], candidate_blocks_ms: Sequence[float]) -> list[float]:
    if len(base_blocks_ms) != len(candidate_blocks_ms):
        raise ValueError("base and candidate need the same number of blocks")
    if any(x <= 0 for x in [*base_blocks_ms, *candidate_blocks_ms]):
        raise ValueError("block latencies must be positive")
    return [math.log(b / c) for b, c in zip(base_blocks_ms, candidate_blocks_ms)]


def speedup_ci(base_blocks_ms: Sequence[float], candidate_blocks_ms: Sequence[float],
               method: str = "t", seed: int = 0, resamples: int = 10_000) -> SpeedupCI:
    """95% interval of base/candidate latency from paired block medians (see the module docstring)."""
    d = log_ratios(base_blocks_ms, candidate_blocks_ms)
    n = len(d)
    if n < 2:
        raise ValueError("a speedup interval needs at least 2 pairs of blocks")
    if method == "t":
        mean = math.fsum(d) / n
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (n - 1))
        half = t975(n - 1) * sd / math.sqrt(n)
        return SpeedupCI(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n,
                         f"t interval on the mean log-ratio of {n} paired block medians")
    if method == "bootstrap":
        rng = random.Random(seed)
        meds = sorted(_median([d[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples))
        lo, hi = meds[int(0.025 * resamples)], meds[min(int(0.975 * resamples), resamples - 1)]
        return SpeedupCI(math.exp(_median(d)), math.exp(lo), math.exp(hi), n,
                         f"percentile bootstrap ({resamples} resamples) of the median log-ratio of {n} pairs")
    raise ValueError(f"method must be one of {METHODS}")


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def in_words(ratio: float) -> str:
    """A base / candidate latency ratio in the verdict's one convention: '25.0% faster' (the base takes 25% longer)
    or '150.3% slower' (the candidate takes 150.3% longer); never a signed throughput change like -54.9%."""
    if ratio >= 1.0:
        return f"{(ratio - 1.0) * 100:.1f}% faster"
    return f"{(1.0 / ratio - 1.0) * 100:.1f}% slower"


def verdict(ci: SpeedupCI) -> str:
    """'faster by 31.2% (95% CI 28.0–34.5%)', 'slower by ...' or 'no significant difference (estimate 4.1%
    slower, 95% CI from 2.0% faster to 10.6% slower)': one convention, in words (see the module docstring)."""
    if not ci.significant:
        return (f"no significant difference (estimate {in_words(ci.ratio)}, 95% CI from {in_words(ci.ratio_low)} "
                f"to {in_words(ci.ratio_high)})")
    if ci.ratio_low > 1.0:
        return f"faster by {ci.percent:.1f}% (95% CI {ci.percent_low:.1f}–{ci.percent_high:.1f}%)"
    slow, slow_lo, slow_hi = ((1 / r - 1) * 100 for r in (ci.ratio, ci.ratio_high, ci.ratio_low))
    return f"slower by {slow:.1f}% (95% CI {slow_lo:.1f}–{slow_hi:.1f}%)"
