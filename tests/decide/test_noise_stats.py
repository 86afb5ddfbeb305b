"""decide/noise.py against simulated runs whose between-run spread is known: the false-alarm rate of A/A
comparisons of a whole plan, the power on +5% / +15% slowdowns, and hand-checked figures. Pure functions, seeded."""

from __future__ import annotations

import math
import random

import pytest

from modelcost.decide.noise import (
    NO_SPREAD,
    Spread,
    between_run_rel,
    decide,
    discoveries,
    judge,
    pool,
    spread,
    summarize,
    t_cdf,
    t_quantile,
    contrast,
)
from modelcost.decide.speedup import t975

# A 24-config plan as in benchmarks/sweep_2gpu.toml: half at batch 1 (launch-bound, the host's pace moves them:
# 4% between-run sd), half at batch 64 (1%).
SIGMAS = [0.04] * 12 + [0.01] * 12


def _runs(rng: random.Random, sigma: float, n: int, factor: float = 1.0) -> list[float]:
    return [10.0 * factor * math.exp(rng.gauss(0.0, sigma)) for _ in range(n)]


def test_t_quantile_matches_the_table() -> None:
    for df in (1, 2, 4, 10, 30, 120):
        assert t_quantile(0.975, df) == pytest.approx(t975(df), abs=1e-3)
    assert t_cdf(0.0, 5) == pytest.approx(0.5) and t_quantile(0.025, 7) == pytest.approx(-t975(7), abs=1e-3)


def test_spread_pool_and_summary_by_hand() -> None:
    # ln 10, ln 20: mean ln sqrt(200); sd = |ln 2| / sqrt(2) (two values: sd = |difference| / sqrt 2).
    s = spread([10.0, 20.0])
    assert s.df == 1 and s.sd_log == pytest.approx(math.log(2) / math.sqrt(2))
    assert spread([10.0]) == NO_SPREAD
    # Pooled: (1 x 0.02^2 + 3 x 0.04^2) / 4 = 0.0013 -> sd 0.036056, 4 df.
    p = pool([Spread(0.02, 1), Spread(0.04, 3), NO_SPREAD])
    assert p.df == 4 and p.sd_log == pytest.approx(math.sqrt(0.0013))
    m = summarize([10.0, 10.4, 10.1])  # median of the per-run p50s 10.1; range 10.4 / 10 - 1 = 4%
    assert m.p50_ms == 10.1 and m.runs == 3 and m.range_rel == pytest.approx(0.04)
    assert m.repeats_within(0.05) and not m.repeats_within(0.02)
    assert between_run_rel(summarize([10.0])) is None  # one run, no baseline: nothing known


def test_benjamini_hochberg_by_hand() -> None:
    # m = 4, q = 0.05: thresholds 0.0125, 0.025, 0.0375, 0.05. Sorted p 0.001, 0.02, 0.04, 0.3: the largest rank
    # under its threshold is 2 (0.02 <= 0.025; 0.04 > 0.0375), so the two smallest are kept.
    assert discoveries([0.04, 0.001, 0.3, 0.02]) == [False, True, False, True]
    assert discoveries([]) == []


def test_verdicts_by_hand() -> None:
    # B = 1.10 x A in every run, A's runs spread: d = ln 1.1 exactly, a clear regression.
    j = judge([10.0, 10.1, 9.9], [11.0, 11.11, 10.89])
    assert j.verdict == "regression" and j.change_pct == pytest.approx(10.0, abs=0.01)
    assert judge([11.0, 11.11, 10.89], [10.0, 10.1, 9.9]).verdict == "improvement"
    assert judge([10.0, 10.1, 9.9], [10.1, 10.2, 10.0]).verdict in ("no change",)  # +1%: under the 2% tolerance
    one = judge([10.0], [12.0])  # one run each, no baseline: nothing known about the between-run noise
    assert one.verdict == "too noisy to judge" and "--repeats" in one.why
    # The same single runs with a stored baseline of 1% sd over 20 df: +20% is a regression.
    assert judge([10.0], [12.0], baseline=Spread(0.01, 20)).verdict == "regression"
    # Runs that scatter by 20%: the interval is far wider than +-10%, so no verdict either way.
    assert judge([10.0, 12.0, 8.5], [9.0, 12.5, 10.0]).verdict == "too noisy to judge"


def test_too_noisy_says_how_many_runs_would_do() -> None:
    # One run a side, a stored baseline of sd 5% (ln units) over 1,000 df: se = 0.05 x sqrt(2) = 0.0707,
    # half-width 1.962 x 0.0707 = 0.139 -> +14.9% > 10%: too noisy. Runs a side for +-10%:
    # n >= 2 x (1.962 x 0.05 / ln 1.1)^2 = 2 x (0.0981 / 0.09531)^2 = 2 x 1.059 = 2.12 -> 3.
    j = judge([10.0], [10.0], baseline=Spread(0.05, 1000))
    assert j.verdict == "too noisy to judge" and j.runs_needed == 3 and "about 3 runs a side" in j.why
    # sd 20% (the noisiest batch-1 configs of the H200 A/A pairs): 2 x (1.962 x 0.2 / 0.09531)^2 = 33.9 -> 34.
    assert judge([10.0], [10.0], baseline=Spread(0.20, 1000)).runs_needed == 34
    # A verdict that is not "too noisy" needs nothing more.
    assert judge([10.0], [12.0], baseline=Spread(0.01, 20)).runs_needed is None


def _plan_verdicts(rng: random.Random, factors: list[float], repeats: int, baseline_df: int = 0) -> list[str]:
    tests = []
    for sigma, factor in zip(SIGMAS, factors, strict=True):
        base = Spread(sigma, baseline_df) if baseline_df else NO_SPREAD
        tests.append(contrast(_runs(rng, sigma, repeats), _runs(rng, sigma, repeats, factor), base))
    return [j.verdict for j in decide(tests)]


def test_false_alarms_over_1000_simulated_aa_pairs() -> None:
    """1,000 A/A comparisons of the 24-config plan, 3 runs a side: a plan flagged anywhere (a regression or an
    improvement) in at most 5% of them, with and without a stored baseline. "Too noisy to judge" on at most 10%
    of the configs needs the baseline (10 df, e.g. two earlier A/A sweeps of 3 runs and a third of 2): from
    3 runs a side alone (4 df), a batch-1 config with 4% between-run sd has a 95% interval wider than +-10% in
    about 30% of the pairs (the sample sd over 4 df exceeds 4.4% with that chance), so 15% of the plan."""
    rng = random.Random(27)
    for baseline_df, most_noisy in ((0, 0.20), (10, 0.10)):
        flagged = noisy = 0
        for _ in range(1000):
            verdicts = _plan_verdicts(rng, [1.0] * 24, repeats=3, baseline_df=baseline_df)
            flagged += any(v in ("regression", "improvement") for v in verdicts)
            noisy += verdicts.count("too noisy to judge")
        assert flagged / 1000 <= 0.05, (baseline_df, flagged)
        assert noisy / (1000 * 24) <= most_noisy, (baseline_df, noisy)


@pytest.mark.parametrize(("slow_b1", "slow_b64"), [(1.15, 1.05)])
def test_power_on_simulated_slowdowns(slow_b1: float, slow_b64: float) -> None:
    """The issue's power model: +15% at batch 1, +5% at batch 64. Compared alone (its own configs: 2 batch-1 and
    2 batch-64 rows, 3 runs a side), each slowdown is caught as a regression in at least 90% of 500 trials;
    inside the whole plan (the other 20 configs unchanged) with a stored baseline of 10 df, still 80%."""
    rng = random.Random(5)
    caught = total = 0
    for _ in range(500):
        tests = [contrast(_runs(rng, s, 3), _runs(rng, s, 3, f), NO_SPREAD)
                 for s, f in ((0.04, slow_b1), (0.04, slow_b1), (0.01, slow_b64), (0.01, slow_b64))]
        caught += sum(j.regression for j in decide(tests))
        total += 4
    assert caught / total >= 0.90, caught / total
    caught = 0
    for _ in range(500):
        factors = [slow_b1] * 2 + [1.0] * 10 + [slow_b64] * 2 + [1.0] * 10
        verdicts = _plan_verdicts(rng, factors, repeats=3, baseline_df=10)
        caught += sum(v == "regression" for i, v in enumerate(verdicts) if factors[i] > 1)
    assert caught / 2000 >= 0.80, caught / 2000
