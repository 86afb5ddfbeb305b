"""The timing loops: warm up until the timings settle, then sample until the median is known.

Two clocks, chosen by ``clock_for`` from the device. ``CudaEventClock`` records a CUDA event on the session's
stream before and after one call and synchronises on the second, so a sample is the GPU time between the two
events: the forward's kernels plus any time the GPU sat waiting for the host to launch them; the host is idle
between samples (one request at a time). ``WallClock`` takes ``perf_counter`` around the call (CPU backends, and
host-side end-to-end latency). Both also take marks (``mark`` / ``intervals_ms``) for a loop timed step by step
with one synchronisation at the end (a generation's prefill and decode steps).

One warm-up rule (``WarmUpRule``, ``settle``): windows of calls until the medians of two successive windows agree
within a tolerance, after a floor of time and calls, bounded by time or calls. The inference, A/B and training
loops take it from ``BenchConfig`` (``warm_up``); a generation's warm-up is the same rule with windows of one
whole generation (``bench.generation``).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.bench.stats import median, median_rel_halfwidth, settled

Fn = Callable[[], Any]


class WallClock:
    """Host wall time around ``fn()``; ``sync`` (if given) runs inside the timed span so async work counts."""

    kind = "perf_counter"

    def __init__(self, sync: Callable[[], None] | None = None) -> None:
        self._sync = sync
        self.marks: list[float] = []

    def mark(self) -> None:
        self.marks.append(time.perf_counter())

    def intervals_ms(self) -> list[float]:
        """The times between successive marks (the marks are then cleared)."""
        marks, self.marks = self.marks, []
        return [(b - a) * 1e3 for a, b in zip(marks, marks[1:])]

    def time_ms(self, fn: Fn) -> float:
        t0 = time.perf_counter()
        fn()
        if self._sync is not None:
            self._sync()
        return (time.perf_counter() - t0) * 1e3


class CudaEventClock:
    """GPU time between two CUDA events recorded on ``stream`` around ``fn()``."""

    kind = "cuda-events"

    def __init__(self, torch: Any, stream: Any = None) -> None:
        self._torch = torch
        self._stream = stream if stream is not None else torch.cuda.current_stream()
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self.marks: list[Any] = []

    def mark(self) -> None:
        """An event recorded on the stream now (no synchronisation: ``intervals_ms`` waits once for them all)."""
        event = self._torch.cuda.Event(enable_timing=True)
        event.record(self._stream)
        self.marks.append(event)

    def intervals_ms(self) -> list[float]:
        """The GPU times between successive marks, after one synchronisation (the marks are then cleared)."""
        marks, self.marks = self.marks, []
        if marks:
            marks[-1].synchronize()
        return [float(a.elapsed_time(b)) for a, b in zip(marks, marks[1:])]

    def time_ms(self, fn: Fn) -> float:
        with self._torch.cuda.stream(self._stream):
            self._start.record(self._stream)
            fn()
            self._end.record(self._stream)
        self._end.synchronize()
        return float(self._start.elapsed_time(self._end))


Clock = WallClock | CudaEventClock


def clock_for(device: str, stream: Any = None) -> Clock:
    """The one clock choice: CUDA events on ``stream`` (default: the current one) for a CUDA device ("cuda",
    "cuda:1"), ``perf_counter`` elsewhere."""
    if device.startswith("cuda"):
        import torch

        return CudaEventClock(torch, stream)
    return WallClock()


@dataclass
class Measurement:
    samples_ms: list[float] = field(default_factory=list)
    warmup_iters: int = 0
    warmup_s: float = 0.0
    warmup_settled: bool = False
    timed_s: float = 0.0
    rel_ci: float = math.inf  # half-width of the median's 95% CI / median
    budget_hit: bool = False
    stop_reason: str = ""


@dataclass(frozen=True)
class WarmUpRule:
    """When a warm-up ends: windows of ``window`` calls until the medians of two successive windows differ by less
    than ``tolerance`` (relative), once ``min_s`` seconds and ``min_calls`` calls have passed; it stops unsettled
    after ``limit_s`` seconds (checked after every call; windows then shrink to fit the time left, at least 3
    calls) or ``max_calls`` calls."""

    window: int
    tolerance: float
    min_s: float = 0.0
    min_calls: int = 0
    limit_s: float | None = None
    max_calls: int | None = None


@dataclass
class Settled:
    """What a warm-up did: calls made, whether two windows agreed, the seconds it took."""

    calls: int = 0
    settled: bool = False
    seconds: float = 0.0


def settle(sample: Callable[[], float], rule: WarmUpRule, previous: float | None = None) -> Settled:
    """Call ``sample`` (one call's time, or one generation's median step time) under ``rule``. ``previous``: the
    median of the calls just before (the same session's screening), standing for the window before the first."""
    t0 = time.perf_counter()
    out, window, samples = Settled(), rule.window, []
    while True:
        samples.append(sample())
        out.calls += 1
        elapsed = time.perf_counter() - t0
        if len(samples) >= window:
            current = median(samples)
            floor = elapsed >= rule.min_s and out.calls >= rule.min_calls
            if floor and settled(previous, current, rule.tolerance):
                out.settled = True
                break
            previous, samples = current, []
            if rule.limit_s is not None:
                per_call_s = max(elapsed / out.calls, 1e-9)
                window = max(3, min(rule.window, int((rule.limit_s - elapsed) / 2 / per_call_s)))
        if (rule.limit_s is not None and elapsed >= rule.limit_s) or (rule.max_calls and out.calls >= rule.max_calls):
            break
    out.seconds = time.perf_counter() - t0
    return out


def warm_up_rule(config: BenchConfig, clock: Any) -> WarmUpRule:
    """The warm-up of a timed loop: windows of ``config.warmup`` calls agreeing within ``warmup_settle``, at least
    ``warmup_min_cuda_s`` on CUDA events (an idle GPU's clocks ramp up), at most ``min(warmup_max_s, max_time_s)``."""
    limit_s = min(config.warmup_max_s, config.max_time_s)
    min_s = min(config.warmup_min_cuda_s, limit_s) if isinstance(clock, CudaEventClock) else 0.0
    return WarmUpRule(window=config.warmup, tolerance=config.warmup_settle, min_s=min_s, limit_s=limit_s)


def warm_up(clock: Any, fn: Fn, config: BenchConfig, m: Measurement, previous_ms: float | None = None) -> None:
    """``settle`` with ``warm_up_rule(config)``, each sample one call of ``fn`` on ``clock``; into ``m``.
    ``previous_ms``: the median of the same session's calls just before (its screening)."""
    got = settle(lambda: clock.time_ms(fn), warm_up_rule(config, clock), previous_ms)
    m.warmup_iters += got.calls
    m.warmup_settled = got.settled
    m.warmup_s = got.seconds


def sample(clock: Any, fn: Fn, config: BenchConfig, m: Measurement) -> None:
    """Sample until min time AND min count AND median CI <= target, or the ``max_time_s`` budget is spent."""
    t0 = time.perf_counter()
    next_check = config.min_iters
    while True:
        m.samples_ms.append(clock.time_ms(fn))
        n = len(m.samples_ms)
        elapsed = time.perf_counter() - t0
        enough = n >= config.min_iters and elapsed >= config.min_time_s
        if enough and n >= next_check:
            m.rel_ci = median_rel_halfwidth(m.samples_ms)
            if m.rel_ci <= config.target_rel_ci:
                m.stop_reason = f"median settled to +-{m.rel_ci * 100:.2f}% (95% CI) after {n} samples"
                break
            next_check = n + max(1, n // 10)
        if elapsed >= config.max_time_s:
            m.rel_ci = median_rel_halfwidth(m.samples_ms)
            m.budget_hit = True
            what = f"the median was known to +-{m.rel_ci * 100:.2f}%" if math.isfinite(m.rel_ci) else "too few samples"
            m.stop_reason = f"time budget {config.max_time_s:g} s hit after {n} samples; {what}"
            break
    m.timed_s = time.perf_counter() - t0


def measure(clock: Any, fn: Fn, config: BenchConfig, on_timed: Callable[[bool], None] | None = None,
            previous_ms: float | None = None) -> Measurement:
    """Warm up, then sample. ``on_timed(True/False)`` is called around the timed phase (NVML sampler);
    ``previous_ms``: see ``warm_up``."""
    m = Measurement()
    warm_up(clock, fn, config, m, previous_ms)
    if on_timed is not None:
        on_timed(True)
    try:
        sample(clock, fn, config, m)
    finally:
        if on_timed is not None:
            on_timed(False)
    return m


def measure_e2e(clock: Any, fn: Fn, config: BenchConfig) -> list[float]:
    """The shorter host-side loop: 2 warm-up calls, then at least ``e2e_min_iters`` calls and
    ``e2e_min_time_s`` seconds, at most ``e2e_max_s`` seconds (the count winning if one call is slow), and never
    past the config's whole budget ``max_time_s``, warm-up included (at least one sample): ten 17-35 s calls of
    FNet's ort-cuda batch 64 (its DFTs on the CPU) would have taken minutes for this secondary figure."""
    t0 = time.perf_counter()
    fn()
    if time.perf_counter() - t0 < config.max_time_s:
        fn()
    samples: list[float] = []
    t1 = time.perf_counter()
    floor_s = min(config.e2e_min_time_s, config.e2e_max_s)
    while len(samples) < config.e2e_min_iters or time.perf_counter() - t1 < floor_s:
        samples.append(clock.time_ms(fn))
        now = time.perf_counter()
        if len(samples) >= config.e2e_min_iters and now - t1 >= config.e2e_max_s or now - t0 >= config.max_time_s:
            break
    return samples


@contextlib.contextmanager
def pinned_to_one_cpu(enabled: bool) -> Iterator[int | None]:
    """Pin every thread of the process to one CPU of its current set while a GPU config is timed, then restore
    each thread's set.

    A launch-bound GPU config (eager batch 1) is timed by how fast the host issues kernels; pinning the whole process
    to one CPU (as taskset does) removes most of its run-to-run spread, which thread migration between cores
    makes (BENCHMARKS.md, 'GPU timing fidelity'). All threads are pinned, not only the
    timing one, as taskset does: the CUDA driver's and torch's helper threads too. CPU backends are never
    pinned: they need their threads.

    While pinned, torch runs at one intra-op thread (``_one_torch_thread``): its pool of N workers on the one CPU
    made every CPU-side op of a forward wait on N - 1 spinning threads (MPNet-base's CPU-built position buckets:
    its eager forward read 136-310 ms on an H100 against 9 ms unpinned; BENCHMARKS.md, issue 28's sixth set)."""
    getter = getattr(os, "sched_getaffinity", None)
    setter = getattr(os, "sched_setaffinity", None)
    if not enabled or getter is None or setter is None:
        yield None
        return
    cpu = max(getter(0))  # the highest: the first cores tend to take the interrupts
    saved: dict[int, set[int]] = {}
    for tid in _thread_ids():
        try:
            saved[tid] = getter(tid)
            setter(tid, {cpu})
        except OSError:  # a thread that ended meanwhile, or one we may not touch
            saved.pop(tid, None)
    if not saved:
        yield None
        return
    try:
        with _one_torch_thread():
            yield cpu
    finally:
        for tid, cpus in saved.items():
            with contextlib.suppress(OSError):
                setter(tid, cpus)


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """torch's intra-op threads set to 1, restored after; nothing where torch was never imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def median_call_ms(fn: Fn, clock_ms: Callable[[Fn], float], runs: int, warmups: int = 3,
                   settle: Callable[[], Any] | None = None) -> float:
    """The middle of ``runs`` timed calls of ``fn`` (``clock_ms``: a clock's ``time_ms``; the upper middle of an
    even count), after ``warmups`` untimed calls and then ``settle`` (a device synchronize, say). For the
    calibration's one-figure timings, where ``measure``'s stability rules would be more than the figure needs."""
    for _ in range(warmups):
        fn()
    if settle is not None:
        settle()
    times = sorted(clock_ms(fn) for _ in range(runs))
    return times[len(times) // 2]


def host_pace_us(rounds: int = 5, n: int = 100_000) -> float:
    """The pace of the CPU this thread runs on: the best of ``rounds`` runs of a fixed pure-Python loop of ``n``
    additions, in microseconds (~3 ms on an H200 VM's host). A launch-bound GPU figure runs at the host's pace, and
    on a VM that pace can differ from one process to the next with no sign in the load average or steal time
    (BENCHMARKS.md, issue 27): the same machine's runs can be compared by this figure. The best of a few rounds
    leaves out a one-off interruption; a host that is slow throughout shows."""
    best = math.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        total = 0
        for i in range(n):
            total += i
        best = min(best, time.perf_counter() - t0)
    return round(best * 1e6, 1)


def step_aside(niceness: int, parent_pid: int | None = None) -> None:
    """For a helper process of a GPU run (bench.compile_ahead, bench.export_ahead): lower its priority by
    ``niceness``, keep it off the CPU ``pinned_to_one_cpu`` pins the timing loop to (the highest one), and (Linux,
    ``parent_pid`` given) have it killed when the run's process ends, however that ends."""
    if parent_pid is not None:
        _die_with_parent(parent_pid)
    with contextlib.suppress(OSError):
        os.nice(niceness)
    with contextlib.suppress(AttributeError, OSError):
        cpus = os.sched_getaffinity(0)
        if len(cpus) > 1:
            os.sched_setaffinity(0, cpus - {max(cpus)})


def _die_with_parent(parent_pid: int) -> None:
    """prctl(PR_SET_PDEATHSIG, SIGKILL); if the parent is already gone (it ended before the call), end now."""
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:
        os._exit(0)


def _thread_ids() -> list[int]:
    """The kernel thread ids of this process (Linux: /proc/self/task); elsewhere just this thread (0)."""
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]
