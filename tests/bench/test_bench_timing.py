"""The timing loops with fake clocks: when warm-up ends, when sampling ends, and when the budget stops it."""

from __future__ import annotations

import itertools
import os
import time

import pytest

from modelcost.bench import timing
from modelcost.bench.base import BenchConfig
from modelcost.bench.timing import WallClock, measure, measure_e2e


class ScriptedClock:
    """Returns scripted samples (ms) instead of timing; ``fn`` is still called once per sample."""

    kind = "scripted"

    def __init__(self, samples: list[float] | itertools.cycle) -> None:
        self._it = iter(samples)
        self.calls = 0

    def time_ms(self, fn) -> float:  # noqa: ANN001
        fn()
        self.calls += 1
        return next(self._it)


class FakeTime:
    """Stands in for the ``time`` module of bench/timing.py: the loops' clock moves only when ``sleep`` says a call
    took time (and by a microsecond per read, so no loop waits on it forever), however loaded the machine is."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1e-6
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(timing, "time", fake)
    return fake


def fast(**kw) -> BenchConfig:  # noqa: ANN003
    base = dict(warmup=5, warmup_max_s=1.0, min_time_s=0.0, min_iters=20, max_time_s=2.0)
    base.update(kw)
    return BenchConfig(**base)


def test_warmup_stops_when_two_windows_agree_within_2_percent() -> None:
    # windows of 5: medians 10, 5, 2.0, 2.01 -> the 4th window is within 2% of the 3rd: 20 warm-up calls
    warm = [10.0] * 5 + [5.0] * 5 + [2.0] * 5 + [2.01] * 5
    clock = ScriptedClock(itertools.chain(warm, itertools.repeat(2.0)))
    m = measure(clock, lambda: None, fast())
    assert m.warmup_iters == 20 and m.warmup_settled
    # then constant samples: the median's interval has zero width as soon as min_iters (20) are in
    assert len(m.samples_ms) == 20 and not m.budget_hit and m.rel_ci == 0.0


def test_after_a_screening_its_median_stands_for_the_window_before() -> None:
    # The same session was just screened at 2.0 ms: a first window at 2.01 agrees within 2% -> 5 warm-up calls;
    # one at 2.5 does not (25% off), so the warm-up goes on to a second window that agrees with it -> 10 calls.
    clock = ScriptedClock(itertools.chain([2.01] * 5, itertools.repeat(2.0)))
    assert measure(clock, lambda: None, fast(), previous_ms=2.0).warmup_iters == 5
    clock = ScriptedClock(itertools.chain([2.5] * 5, [2.5] * 5, itertools.repeat(2.0)))
    assert measure(clock, lambda: None, fast(), previous_ms=2.0).warmup_iters == 10


def test_sampling_needs_min_iters_and_min_time(fake_time: FakeTime) -> None:
    # 1 ms calls: 5 samples are in after 5 ms, but the 0.15 s floor holds it to 150 (the median settled at once)
    clock = ScriptedClock(itertools.repeat(1.0))
    m = measure(clock, lambda: fake_time.sleep(0.001), fast(min_time_s=0.15, min_iters=5))
    assert m.timed_s >= 0.15 and len(m.samples_ms) == 150


def test_budget_hit_when_the_median_never_settles(fake_time: FakeTime) -> None:
    # alternating 1 / 100 ms: the median's 95% interval spans both values, never within +-1%. Calls of 0.5 ms on
    # the fake clock: 40 warm-up calls in 0.02 s, 100 samples in 0.05 s. (On the real clock a loaded machine once
    # shrank the last warm-up windows to an even size, whose medians of 1/100 agree: it read settled.)
    clock = ScriptedClock(itertools.cycle([1.0, 100.0]))
    m = measure(clock, lambda: fake_time.sleep(0.0005), fast(max_time_s=0.05, warmup_max_s=0.02))
    assert m.warmup_iters == 40 and len(m.samples_ms) == 100
    assert m.budget_hit and "budget" in m.stop_reason and m.rel_ci > 0.01
    assert not m.warmup_settled  # 1/100 windows never agree either


def test_on_timed_brackets_only_the_timed_phase() -> None:
    events: list[tuple[bool, int]] = []
    clock = ScriptedClock(itertools.repeat(1.0))
    measure(clock, lambda: None, fast(), on_timed=lambda on: events.append((on, clock.calls)))
    assert events[0] == (True, 10)  # started after the 2 warm-up windows of 5
    assert events[1][0] is False and events[1][1] == 30


def test_wall_clock_counts_the_sync() -> None:
    ms = WallClock(sync=lambda: time.sleep(0.02)).time_ms(lambda: None)
    assert ms >= 20.0


def test_e2e_loop_takes_at_least_min_iters() -> None:
    samples = measure_e2e(ScriptedClock(itertools.repeat(3.0)), lambda: None,
                          BenchConfig(e2e_min_iters=7, e2e_max_s=0.0, min_time_s=0.0))
    assert samples == [3.0] * 7


def test_e2e_loop_runs_its_own_time_floor_not_the_main_loops(fake_time: FakeTime) -> None:
    # 10 ms calls, at least 3 of them and 0.05 s: 5 calls (after 2 warm-up calls), however long --min-time-s is
    # (the e2e figure is secondary: it no longer runs the main loop's 1 s floor); at most e2e_max_s once the count
    # is met
    config = BenchConfig(e2e_min_iters=3, e2e_min_time_s=0.05, e2e_max_s=2.0, min_time_s=1.0)
    samples = measure_e2e(ScriptedClock(itertools.repeat(10.0)), lambda: fake_time.sleep(0.01), config)
    assert len(samples) == 5 and fake_time.now < 0.08  # 7 calls of 10 ms


def test_a_slow_model_is_not_held_to_a_whole_warmup_window(fake_time: FakeTime) -> None:
    # 30 ms calls, windows of 10, a 50 ms warm-up limit: it stops after the call that crosses 50 ms (2 calls:
    # 30 ms, then 60 ms), not after the window's 10
    clock = ScriptedClock(itertools.repeat(30.0))
    m = measure(clock, lambda: fake_time.sleep(0.03), fast(warmup=10, warmup_max_s=0.05, min_iters=1,
                                                            max_time_s=0.05))
    assert m.warmup_iters == 2 and not m.warmup_settled


def test_pinned_to_one_cpu_restores_the_affinity():
    from modelcost.bench.timing import pinned_to_one_cpu

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no sched_getaffinity on this platform")
    before = os.sched_getaffinity(0)
    with pinned_to_one_cpu(True) as cpu:
        assert cpu == max(before)
        assert os.sched_getaffinity(0) == {cpu}
    assert os.sched_getaffinity(0) == before
    with pinned_to_one_cpu(False) as cpu:
        assert cpu is None
        assert os.sched_getaffinity(0) == before


def test_pinned_to_one_cpu_leaves_torch_one_intra_op_thread():
    """Pinned to one CPU, torch's intra-op pool of N threads would share that core: every CPU-side op of a forward
    (MPNet-base builds its relative-position buckets on the CPU, ten small ops) then waits on N - 1 spinning
    workers. On the 2-core development machine those ops took 0.64 ms free, 24 ms pinned with 2 threads and
    0.65 ms pinned with 1; on the H100 machine's 16 threads MPNet's eager forward read 136-310 ms against 9 ms
    (BENCHMARKS.md, issue 28's sixth set). So the pinned region runs torch at one thread and gives the count back."""
    import torch

    from modelcost.bench.timing import pinned_to_one_cpu

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no sched_getaffinity on this platform")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pinned_to_one_cpu(True):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pinned_to_one_cpu(False):
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_median_call_ms_warms_up_settles_and_takes_the_middle() -> None:
    from modelcost.bench.timing import median_call_ms

    calls, events = [], []
    times = iter([5.0, 1.0, 3.0, 2.0])

    def clock_ms(fn):
        fn()
        return next(times)

    # 3 untimed calls, the settle, then 4 timed ones: sorted 1, 2, 3, 5 -> the upper middle (index 2) is 3.0
    got = median_call_ms(lambda: calls.append(1), clock_ms, 4, settle=lambda: events.append(len(calls)))
    assert got == 3.0 and len(calls) == 7 and events == [3]


def test_e2e_loop_stops_at_the_config_s_budget_below_its_count(fake_time: FakeTime) -> None:
    # 0.4 s calls, a 1 s budget: the first warm-up call, the second (0.4 s < 1 s), then samples until 1 s has
    # passed since the loop began: one at 1.2 s. Ten calls (4 s) would have been the count's floor.
    config = BenchConfig(e2e_min_iters=10, e2e_min_time_s=0.3, e2e_max_s=2.0, min_time_s=0.0, max_time_s=1.0)
    samples = measure_e2e(ScriptedClock(itertools.repeat(400.0)), lambda: fake_time.sleep(0.4), config)
    assert samples == [400.0] and fake_time.now == pytest.approx(1.2, abs=1e-3)
    # a first warm-up call past the budget: no second one, one sample
    samples = measure_e2e(ScriptedClock(itertools.repeat(1500.0)), lambda: fake_time.sleep(1.5), config)
    assert samples == [1500.0] and fake_time.now == pytest.approx(1.2 + 3.0, abs=1e-3)
