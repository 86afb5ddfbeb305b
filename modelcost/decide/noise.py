"""Figures that repeat: the noise between runs of a config, and a run-vs-run verdict that knows it. Pure functions,
standard library only. docs/MEASURING.md says why these statistics and not others (pyperf, asv, Google Benchmark).

Units. One *run* of a config is one child process that measured it (a sweep pass, ``sweep --repeats N``); its
figure is that run's median latency (p50). Within a run the timing is tight; between runs a launch-bound figure
moves with the host's pace, so every decision here is made on the per-run p50s, never on the samples of one run.

- A config's figure over its runs: the median of the per-run p50s (``summarize``); its between-run spread: the
  sample standard deviation of ln(p50) over the runs (``Spread.sd_log``, about the relative spread), with
  ``runs - 1`` degrees of freedom, and the range max/min - 1.
- Pooling (``pool``): spreads of the same config from several sources (A's repeats, B's repeats, a stored
  noise baseline) combine as a pooled variance weighted by their degrees of freedom.
- Test (``contrast``): d = mean ln(p50 of B's runs) - mean ln(p50 of A's runs) (B/A latency as a log-ratio),
  se = sd_pooled x sqrt(1/n_A + 1/n_B), Student's t with the pooled degrees of freedom: a two-sided p-value
  and the 95% interval d +- t(0.975, df) x se.
- Verdicts of the configs compared together (``decide``): a change is kept by Benjamini-Hochberg at 5% over
  the configs with a known spread (``discoveries``): when nothing changed (an A/A comparison) the chance that
  any config of the plan is flagged is at most 5%, however many configs it holds; when several changed, each
  is still found without paying for the whole plan, as Bonferroni would.
  - regression: kept, and the estimate at least ``tolerance_pct`` slower; improvement: the same, faster;
  - no change: a kept change smaller than the tolerance, or no change kept and a 95% interval no wider than
    +-``resolution_pct`` (a change that large would have shown);
  - too noisy to judge: no change kept, and the 95% interval is wider than +-``resolution_pct`` (half-width
    t(0.975, df) x se: what the noise lets through, whatever the estimate), or no between-run spread is known
    (one run on each side and no stored baseline).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

FAMILY_Q = 0.05  # Benjamini-Hochberg: an A/A comparison flags anything with a chance of at most 5%
TOLERANCE_PCT = 2.0  # a clear change smaller than this is not a regression (a CI job should not fail on 1%)
RESOLUTION_PCT = 10.0  # an interval reaching beyond +-10% cannot say "no change"
VERDICTS = ("regression", "improvement", "no change", "too noisy to judge")


@dataclass(frozen=True)
class Spread:
    """Between-run spread of one config: sd of ln(per-run p50) with its degrees of freedom (0: unknown)."""

    sd_log: float
    df: int

    @property
    def known(self) -> bool:
        return self.df > 0


NO_SPREAD = Spread(0.0, 0)


def spread(p50s_ms: Sequence[float]) -> Spread:
    """The spread of one side's per-run p50s (``runs - 1`` degrees of freedom; one run: unknown)."""
    logs = [math.log(x) for x in p50s_ms if x > 0]
    n = len(logs)
    if n < 2:
        return NO_SPREAD
    mean = math.fsum(logs) / n
    return Spread(math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (n - 1)), n - 1)


def pool(spreads: Iterable[Spread]) -> Spread:
    """Pooled spread: variances weighted by degrees of freedom (unknown ones add nothing)."""
    known = [s for s in spreads if s.known]
    df = sum(s.df for s in known)
    if df == 0:
        return NO_SPREAD
    return Spread(math.sqrt(math.fsum(s.df * s.sd_log ** 2 for s in known) / df), df)


@dataclass(frozen=True)
class Summary:
    """A config's figure over its runs: median of the per-run p50s, the spread and the range (max/min - 1)."""

    p50_ms: float
    runs: int
    spread: Spread
    range_rel: float

    def repeats_within(self, rel: float) -> bool:
        return self.runs >= 2 and self.range_rel <= rel


def summarize(p50s_ms: Sequence[float]) -> Summary:
    values = sorted(x for x in p50s_ms if x > 0)
    if not values:
        raise ValueError("no positive p50 to summarize")
    n = len(values)
    med = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
    return Summary(med, n, spread(values), values[-1] / values[0] - 1.0)


def between_run_rel(s: Summary, baseline: Spread = NO_SPREAD) -> float | None:
    """Relative half-width of the 95% interval of a config's figure from the between-run spread (its own runs
    pooled with a stored baseline), or None when no spread is known. What ``recommend`` widens a tie with."""
    sp = pool([s.spread, baseline])
    if not sp.known:
        return None
    return math.expm1(t_quantile(0.975, sp.df) * sp.sd_log / math.sqrt(s.runs))


# -- Student's t, from the regularized incomplete beta function (continued fraction, Numerical Recipes 6.4) ------
def _betacf(a: float, b: float, x: float) -> float:
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on ``t_cdf``; 1e-10 absolute)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("t_quantile needs 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    while hi - lo > 1e-10:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Contrast:
    """One config's B vs A contrast: d = ln(B/A latency) from the mean log per-run p50s, its standard error, the
    pooled degrees of freedom (0: no between-run spread known) and the two-sided p-value (1.0 when unknown)."""

    log_ratio: float
    se: float
    df: int
    runs_a: int
    runs_b: int
    p: float


def contrast(a_p50s_ms: Sequence[float], b_p50s_ms: Sequence[float], baseline: Spread = NO_SPREAD) -> Contrast:
    """The t test of one config on its per-run p50s, the spread pooled over A's runs, B's and ``baseline``."""
    a = [math.log(x) for x in a_p50s_ms if x > 0]
    b = [math.log(x) for x in b_p50s_ms if x > 0]
    if not a or not b:
        raise ValueError("a test needs at least one run on each side")
    d = math.fsum(b) / len(b) - math.fsum(a) / len(a)
    sp = pool([spread(a_p50s_ms), spread(b_p50s_ms), baseline])
    if not sp.known:
        return Contrast(d, math.inf, 0, len(a), len(b), 1.0)
    se = sp.sd_log * math.sqrt(1.0 / len(a) + 1.0 / len(b))
    if se == 0.0:
        return Contrast(d, 0.0, sp.df, len(a), len(b), 0.0 if d else 1.0)
    return Contrast(d, se, sp.df, len(a), len(b), 2.0 * (1.0 - t_cdf(abs(d) / se, sp.df)))


@dataclass(frozen=True)
class Judgement:
    """B vs A for one config. ``change_pct``: B's latency vs A's, + slower; ``low_pct`` / ``high_pct``: its
    95% interval (None when no spread is known); ``significant``: kept by the false-discovery control."""

    verdict: str  # one of VERDICTS
    change_pct: float
    low_pct: float | None
    high_pct: float | None
    p: float
    significant: bool
    contrast: Contrast
    why: str  # the verdict in words, with its figures
    runs_needed: int | None = None  # too noisy: runs a side that would resolve +-resolution_pct at this spread

    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


def _pct(log_ratio: float) -> float:
    return math.expm1(log_ratio) * 100.0


def _words(pct: float) -> str:
    return f"{pct:.1f}% slower" if pct >= 0 else f"{-pct:.1f}% faster"


def discoveries(p_values: Sequence[float], q: float = FAMILY_Q) -> list[bool]:
    """Benjamini-Hochberg at ``q``: which of the p-values are kept as changes. The largest rank i with
    p_(i) <= i/m x q and every smaller p are kept; m counts every p given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    cut = max((rank for rank, i in enumerate(order, 1) if p_values[i] <= rank / m * q), default=0)
    kept = [False] * m
    for i in order[:cut]:
        kept[i] = True
    return kept


def decide(tests: Sequence[Contrast], q: float = FAMILY_Q, tolerance_pct: float = TOLERANCE_PCT,
           resolution_pct: float = RESOLUTION_PCT) -> list[Judgement]:
    """The verdict of each config judged together (module docstring). Tests without a known spread take no part
    in the false-discovery control and are "too noisy to judge"."""
    judged = [i for i, t in enumerate(tests) if t.df > 0]
    kept = dict(zip(judged, discoveries([tests[i].p for i in judged], q), strict=True))
    return [_verdict(t, kept.get(i, False), tolerance_pct, resolution_pct) for i, t in enumerate(tests)]


def runs_needed(t: Contrast, resolution_pct: float) -> int:
    """Runs a side (n_A = n_B = n) whose 95% interval at this contrast's spread is at most +-``resolution_pct``:
    the smallest n with t(0.975, df) x sd x sqrt(2 / n) <= ln(1 + resolution_pct / 100), with sd the pooled
    spread behind ``t.se`` and the df it has now (more runs add df: the figure is on the safe side)."""
    sd = t.se / math.sqrt(1.0 / t.runs_a + 1.0 / t.runs_b)
    width = math.log1p(resolution_pct / 100.0) / t_quantile(0.975, t.df)
    return max(2, math.ceil(2.0 * (sd / width) ** 2))


def _verdict(t: Contrast, significant: bool, tolerance_pct: float, resolution_pct: float) -> Judgement:
    est = _pct(t.log_ratio)
    if t.df == 0:
        return Judgement("too noisy to judge", est, None, None, t.p, False, t,
                         f"estimate {_words(est)}, but no between-run spread is known (one run on each side and no "
                         "stored noise baseline): sweep --repeats 3, or store a baseline from A/A runs")
    half = t_quantile(0.975, t.df) * t.se
    lo, hi = _pct(t.log_ratio - half), _pct(t.log_ratio + half)
    figures = (f"estimate {_words(est)}, 95% interval {_words(lo)} to {_words(hi)}, p = {t.p:.2g} "
               f"({t.runs_a} vs {t.runs_b} runs, {t.df} df)")
    faster_pct = _pct(-t.log_ratio)  # how much longer A takes than B
    if significant and est >= tolerance_pct:
        verdict = "regression"
    elif significant and faster_pct >= tolerance_pct:
        verdict = "improvement"
    elif significant:
        verdict, figures = "no change", f"a change within the {tolerance_pct:g}% tolerance: {figures}"
    elif _pct(half) > resolution_pct:
        needed = runs_needed(t, resolution_pct)
        return Judgement("too noisy to judge", est, lo, hi, t.p, significant, t,
                         f"the 95% interval is wider than +-{resolution_pct:g}%, so a change that large could hide in "
                         f"the noise: {figures}; about {needed} runs a side would resolve +-{resolution_pct:g}% at "
                         f"this spread (repeats of the sweep)", needed)
    else:
        verdict = "no change"
    return Judgement(verdict, est, lo, hi, t.p, significant, t, figures)


def judge(a_p50s_ms: Sequence[float], b_p50s_ms: Sequence[float], baseline: Spread = NO_SPREAD,
          tolerance_pct: float = TOLERANCE_PCT, resolution_pct: float = RESOLUTION_PCT) -> Judgement:
    """One config judged alone (no other config shares the false-discovery control)."""
    return decide([contrast(a_p50s_ms, b_p50s_ms, baseline)], tolerance_pct=tolerance_pct,
                  resolution_pct=resolution_pct)[0]
