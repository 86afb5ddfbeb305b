"""The timing loops: warm up until the timings settle, then sample until the median is known.

Two clocks. ``CudaEventClock`` records a CUDA event on the session's stream before and after one call and
synchronises on the second, so a sample is the GPU time between the two events: the forward's kernels plus any
time the GPU sat waiting for the host to launch them; the host is idle between samples (one request at a time).
``WallClock`` takes ``perf_counter`` around the call (CPU backends, and host-side end-to-end latency).
"""

from __future__ import annotations

import contextlib
import math
import os
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

    def time_ms(self, fn: Fn) -> float:
        with self._torch.cuda.stream(self._stream):
            self._start.record(self._stream)
            fn()
            self._end.record(self._stream)
        self._end.synchronize()
        return float(self._start.elapsed_time(self._end))


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


def warm_up(clock: Any, fn: Fn, config: BenchConfig, m: Measurement, previous_ms: float | None = None) -> None:
    """Windows of ``config.warmup`` calls until two successive window medians agree within
    ``config.warmup_settle``, or ``min(warmup_max_s, max_time_s)`` has passed (checked after every call, so a
    slow model is not held to a whole window; windows also shrink to fit the time left). ``previous_ms``: the
    median of the same session's calls just before (its screening), standing for the window before the first."""
    t0 = time.perf_counter()
    limit_s = min(config.warmup_max_s, config.max_time_s)
    window = config.warmup
    previous: float | None = previous_ms
    samples: list[float] = []
    while True:
        samples.append(clock.time_ms(fn))
        m.warmup_iters += 1
        elapsed = time.perf_counter() - t0
        if len(samples) >= window:
            current = median(samples)
            long_enough = not isinstance(clock, CudaEventClock) or elapsed >= min(config.warmup_min_cuda_s, limit_s)
            if long_enough and settled(previous, current, config.warmup_settle):
                m.warmup_settled = True
                break
            previous, samples = current, []
            per_call_s = max(elapsed / m.warmup_iters, 1e-9)
            window = max(3, min(config.warmup, int((limit_s - elapsed) / 2 / per_call_s)))
        if elapsed >= limit_s:
            break
    m.warmup_s = time.perf_counter() - t0


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
    ``e2e_min_time_s`` seconds, at most ``e2e_max_s`` seconds (the count winning if one call is slow)."""
    for _ in range(2):
        fn()
    samples: list[float] = []
    t0 = time.perf_counter()
    floor_s = min(config.e2e_min_time_s, config.e2e_max_s)
    while len(samples) < config.e2e_min_iters or time.perf_counter() - t0 < floor_s:
        samples.append(clock.time_ms(fn))
        if len(samples) >= config.e2e_min_iters and time.perf_counter() - t0 >= config.e2e_max_s:
            break
    return samples


@contextlib.contextmanager
def pinned_to_one_cpu(enabled: bool) -> Iterator[int | None]:
    """Pin every thread of the process to one CPU of its current set while a GPU config is timed, then restore
    each thread's set.

    A launch-bound GPU config (eager batch 1) is timed by how fast the host issues kernels; on an H200 VM with
    16 cores the same ResNet-50 eager batch-1 loop read 2.91-4.25 ms across runs unpinned and 2.97-3.05 ms with
    the whole process pinned by taskset (thread migration between cores). All threads are pinned, not only the
    timing one, as taskset does: the CUDA driver's and torch's helper threads too. CPU backends are never
    pinned: they need their threads."""
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
        yield cpu
    finally:
        for tid, cpus in saved.items():
            with contextlib.suppress(OSError):
                setter(tid, cpus)


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
