"""compare: the speedup statistics on synthetic samples with known answers, then the interleaved measurement."""

from __future__ import annotations

import math
import random

import pytest

from modelcost.decide.speedup import interleaved_order, speedup_ci, t975, verdict


def test_t_quantiles_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 5, 9, 19, 29, 30, 35, 50, 99, 500):
        assert t975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=0.002)


def test_t_interval_by_hand():
    # Log-ratios ln(2), ln(2), ln(2)*1.1, ln(2)*0.9: mean = ln 2, sd = ln2 * sqrt((0 + 0 + .01 + .01) / 3)
    # = ln2 * 0.08165; half width = t(0.975, 3) * sd / sqrt(4) = 3.182 * 0.08165 * 0.6931 / 2 = 0.09004.
    base = [2.0, 2.0, 2.0 ** 1.1, 2.0 ** 0.9]
    cand = [1.0, 1.0, 1.0, 1.0]
    ci = speedup_ci(base, cand)
    assert ci.ratio == pytest.approx(2.0)
    half = 3.182 * math.log(2) * math.sqrt(0.02 / 3) / 2
    assert ci.ratio_low == pytest.approx(2.0 * math.exp(-half))
    assert ci.ratio_high == pytest.approx(2.0 * math.exp(half))
    assert ci.significant
    assert verdict(ci) == f"faster by 100.0% (95% CI {ci.percent_low:.1f}–{ci.percent_high:.1f}%)"


def _blocks(n: int, base_ms: float, cand_ms: float, noise: float, seed: int, drift: float = 0.0):
    """Block medians with multiplicative noise and a shared drift (both sides of a pair see the same clock)."""
    rng = random.Random(seed)
    base, cand = [], []
    for i in range(n):
        clock = 1.0 + drift * i
        base.append(base_ms * clock * math.exp(rng.gauss(0, noise)))
        cand.append(cand_ms * clock * math.exp(rng.gauss(0, noise)))
    return base, cand


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_known_speedup_is_found_and_covered(method):
    # True ratio 10 / 8 = 1.25: "faster by 25%". With 1% noise and 20 pairs the interval is about +-1%.
    base, cand = _blocks(20, 10.0, 8.0, 0.01, seed=1, drift=0.01)
    ci = speedup_ci(base, cand, method=method)
    assert ci.percent_low < 25.0 < ci.percent_high
    assert ci.percent_high - ci.percent_low < 4.0
    assert verdict(ci).startswith("faster by 2")


def test_known_slowdown_words():
    # True ratio 10 / 12.5 = 0.8: the candidate takes 25% longer -> "slower by 25%".
    base, cand = _blocks(20, 10.0, 12.5, 0.01, seed=2)
    text = verdict(speedup_ci(base, cand))
    assert text.startswith("slower by 2")
    slow = float(text.split()[2].rstrip("%"))
    assert slow == pytest.approx(25.0, abs=1.5)


def test_equal_speed_is_no_significant_difference():
    # Same true latency: over 200 seeds the 95% interval must contain 0 about 95% of the time.
    misses = 0
    for seed in range(200):
        base, cand = _blocks(10, 5.0, 5.0, 0.03, seed=seed)
        ci = speedup_ci(base, cand)
        misses += ci.significant
    assert misses <= 20  # expected 10 (5%); 20 would be p < 0.002 under a correct interval
    base, cand = _blocks(10, 5.0, 5.0, 0.03, seed=3)
    ci = speedup_ci(base, cand)
    if not ci.significant:
        assert verdict(ci).startswith("no significant difference (")


def test_drift_cancels_in_pairs():
    # A 50% drift over the run would swamp a 5% speedup in unpaired means; paired log-ratios keep it.
    base, cand = _blocks(16, 10.0, 10.0 / 1.05, 0.002, seed=4, drift=0.03)
    ci = speedup_ci(base, cand)
    assert ci.percent_low < 5.0 < ci.percent_high
    assert ci.significant


def test_bad_blocks():
    with pytest.raises(ValueError):
        speedup_ci([1.0], [1.0])
    with pytest.raises(ValueError):
        speedup_ci([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        speedup_ci([1.0, 0.0], [1.0, 1.0])


def test_interleaved_order_is_abba():
    assert interleaved_order(4) == [("base", "candidate"), ("candidate", "base"),
                                    ("base", "candidate"), ("candidate", "base")]
