"""Is a measurement stable enough to decide on? The checks behind ``BenchResult.unstable``.

A latency figure from a machine that was busy with other work is not the model's: on a loaded CPU ``recommend``
once rejected every config on p99 (BENCHMARKS.md, 'Figures that used to live in docstrings'). A config is
flagged *unstable*, with the reasons, when

* the bulk of the samples is spread wide: a robust CV above ``CV_LIMIT`` (``robust_cv``: p90 - p50 over p50, in a normal
  distribution's standard deviations). Not std / mean: a few host preemptions among thousands of samples blow it up
  (BENCHMARKS.md, 'Figures that used to live in docstrings'); a handful of outliers among thousands of samples moves
  neither the median nor the bulk, and a heavy tail is the next check's;
* the tail is far from the median: p99 / p50 above ``TAIL_LIMIT``;
* other processes used more than ``OTHER_CPU_LIMIT`` of the machine's CPU time while it was timed (from
  ``/proc/stat`` minus the CPU time of this process and its descendants, ``_own_cpu_s``; the 1-minute load
  average is quoted beside it; where ``/proc/stat`` is missing, a load average above the CPU count is the sign);
* the end-to-end median is below the latency median it contains (``E2E_SLACK``): end-to-end is timed in a
  second, shorter loop after the latency loop, so when the load changes between the two loops the two figures
  see different machines (BENCHMARKS.md, 'Figures that used to live in docstrings'). Both
  loops time the same forward, so the difference is the load, not the model.

Thresholds are deliberately loose: a quiet GPU config has CV well under 5% and p99 / p50 under 1.5; a launch-
bound one at batch 1 up to about 1.8. ``recommend`` does not decide on unstable configs (decide/recommend.py).
Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from modelcost.core.procstat import LIVE, ProcTable, descendants_ticks
from modelcost.core.types import LatencyStats

CV_LIMIT = 0.25
TAIL_LIMIT = 3.0
OTHER_CPU_LIMIT = 0.25
E2E_SLACK = 0.05  # e2e p50 may sit this far (relative) below the latency p50 before it is flagged


def _proc_stat() -> tuple[float, float, int] | None:
    """(busy seconds of all CPUs, total seconds of all CPUs, CPU count) from /proc/stat, or None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    fields = [float(x) for x in lines[0].split()[1:]]
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest time is inside user)
    return (total - idle) / tick, total / tick, max(cpus, 1)


def _own_cpu_s(times: Callable[[], os.times_result] = os.times, table: ProcTable = LIVE) -> float:
    """CPU seconds of this process and its descendants: those that ended (``os.times``' children) and those still
    running (``/proc``): modelcost's own helpers (inductor's compile workers, the background compile and ONNX
    export of bench.compile_ahead / bench.export_ahead, which say in a row's notes when they ran beside it) are
    not "other processes"."""
    t = times()
    return t.user + t.system + t.children_user + t.children_system + _live_descendants_cpu_s(os.getpid(), table)


def _live_descendants_cpu_s(root: int, table: ProcTable = LIVE) -> float:
    """User + system CPU seconds of the running descendants of ``root`` and of the processes they waited for (a
    compile worker that ends mid-window moves into its parent's count); 0 where /proc cannot be read."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return 0.0
    return descendants_ticks(root, table) / tick


@dataclass
class CpuLoad:
    """How much of the machine's CPU time other processes took between ``start()`` and ``stop()``. What it reads
    (``/proc/stat``, ``os.times()``, the process table) can be handed in: tests give it a synthetic machine."""

    other_share: float | None = None  # 0..1 of all CPUs' time; None where /proc/stat is missing
    load_avg_1m: float | None = None
    cpus: int = 1
    measured: bool = False  # False where /proc/stat is missing (then the load average is the only sign)
    _start: tuple[float, float, int] | None = None
    _own0: float = 0.0
    proc_stat: Callable[[], tuple[float, float, int] | None] = field(default=_proc_stat, repr=False, compare=False)
    times: Callable[[], os.times_result] = field(default=os.times, repr=False, compare=False)
    table: ProcTable = field(default=LIVE, repr=False, compare=False)

    def _own_s(self) -> float:
        return _own_cpu_s(self.times, self.table)

    def start(self) -> CpuLoad:
        self._start, self._own0 = self.proc_stat(), self._own_s()
        return self

    def stop(self) -> CpuLoad:
        end, own = self.proc_stat(), self._own_s() - self._own0
        self.cpus = os.cpu_count() or 1
        if self._start is not None and end is not None:
            busy, total = end[0] - self._start[0], end[1] - self._start[1]
            self.cpus, self.measured = end[2], True
            if total >= 0.5 * self.cpus:  # at least half a second per CPU: shorter windows are ticks, not load
                self.other_share = min(1.0, max(0.0, (busy - own) / total))
        try:
            self.load_avg_1m = os.getloadavg()[0]
        except (OSError, AttributeError):
            self.load_avg_1m = None
        return self


def robust_cv(latency: LatencyStats) -> float:
    """(p90 - p50) / (1.2816 x p50): the spread of the bulk of the samples, read like a CV (for a normal
    distribution p90 - p50 = 1.2816 standard deviations); outliers beyond p90 do not move it."""
    return (latency.p90 - latency.p50) / (1.2816 * latency.p50) if latency.p50 > 0 else 0.0


def instability(latency: LatencyStats, e2e: LatencyStats | None = None, load: CpuLoad | None = None) -> list[str]:
    """Why these timings are not stable enough to decide on ([] when they are). Each reason is one phrase."""
    reasons: list[str] = []
    spread = robust_cv(latency)
    if spread > CV_LIMIT:
        reasons.append(f"spread: p90 {latency.p90 / latency.p50:.2f}x p50, robust CV {spread * 100:.0f}% "
                       f"(limit {CV_LIMIT * 100:.0f}%)")
    if latency.p50 > 0 and latency.p99 / latency.p50 > TAIL_LIMIT:
        reasons.append(f"tail: p99 {latency.p99 / latency.p50:.1f}x p50 (limit {TAIL_LIMIT:g}x)")
    if load is not None:
        avg = f", load average {load.load_avg_1m:.1f}" if load.load_avg_1m is not None else ""
        if load.other_share is not None and load.other_share > OTHER_CPU_LIMIT:
            reasons.append(f"busy machine: other processes used {load.other_share * 100:.0f}% of the {load.cpus} "
                           f"CPUs while it was timed{avg}")
        elif not load.measured and load.load_avg_1m is not None and load.load_avg_1m > load.cpus:
            reasons.append(f"busy machine: load average {load.load_avg_1m:.1f} on {load.cpus} CPUs")
    if e2e is not None and e2e.p50 < latency.p50 * (1 - E2E_SLACK):
        reasons.append(f"end-to-end p50 {e2e.p50:.4g} ms is below the latency p50 {latency.p50:.4g} ms it contains "
                       "(the load changed between the two loops)")
    return reasons
