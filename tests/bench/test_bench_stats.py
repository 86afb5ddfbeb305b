"""Latency statistics and the two stopping rules, on samples whose answers are derived by hand."""

from __future__ import annotations

import math

import pytest

from modelcost.bench.stats import (
    latency_stats,
    median,
    median_ci,
    median_rel_halfwidth,
    percentile,
    settled,
)


def test_percentiles_interpolate_linearly_between_order_statistics() -> None:
    s = [1.0, 2.0, 3.0, 4.0, 5.0]
    # position = (n-1) q/100: p50 -> 2.0 -> s[2] = 3; p90 -> 3.6 -> 4 + 0.6*(5-4) = 4.6; p99 -> 3.96 -> 4.96
    assert percentile(s, 50) == 3.0
    assert percentile(s, 90) == pytest.approx(4.6)
    assert percentile(s, 99) == pytest.approx(4.96)
    assert percentile(s, 0) == 1.0 and percentile(s, 100) == 5.0


def test_latency_stats_of_known_samples() -> None:
    st = latency_stats([4.0, 1.0, 3.0, 2.0, 5.0])
    # mean 3; sample variance = (4+1+0+1+4)/4 = 2.5; std = sqrt(2.5); cv = sqrt(2.5)/3
    assert (st.count, st.p50, st.min, st.max, st.mean) == (5, 3.0, 1.0, 5.0, 3.0)
    assert st.std == pytest.approx(math.sqrt(2.5))
    assert st.cv == pytest.approx(math.sqrt(2.5) / 3)
    assert st.p95 == pytest.approx(4.8)  # position 3.8 -> 4 + 0.8


def test_single_sample_has_zero_spread() -> None:
    st = latency_stats([2.5])
    assert st.std == 0.0 and st.p99 == 2.5


def test_median_ci_uses_the_order_statistic_ranks() -> None:
    s = [float(i) for i in range(1, 101)]  # 1..100
    # n = 100: half = 1.96 * 10 / 2 = 9.8; lower rank floor(50 - 9.8) = 40; upper rank ceil(50 + 9.8) + 1 = 61
    assert median_ci(s) == (40.0, 61.0)
    # median of 1..100 = 50.5; half-width (61 - 40) / 2 = 10.5; relative 10.5 / 50.5
    assert median_rel_halfwidth(s) == pytest.approx(10.5 / 50.5)
    assert median_ci([1.0] * 5) is None and median_rel_halfwidth([1.0] * 5) == math.inf


def test_constant_samples_have_a_zero_width_interval() -> None:
    assert median_rel_halfwidth([2.0] * 50) == 0.0
    assert median([3.0, 1.0, 2.0]) == 2.0


def test_settled_compares_successive_window_medians() -> None:
    assert not settled(None, 1.0, 0.02)
    assert settled(1.00, 1.019, 0.02)  # 1.9% apart
    assert not settled(1.00, 1.03, 0.02)  # 3% apart
