"""Noisy timings are flagged (spread, tail, a busy machine, e2e below latency), shown in the table and the report,
and not decided on. Marked ``stability``: these tests see the real checks (conftest.py stubs them elsewhere)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from modelcost.bench import registry, stability
from modelcost.bench.base import BackendInfo, BenchConfig
from modelcost.bench.model import from_module
from modelcost.bench.runner import run_benchmarks
from modelcost.core import procstat
from modelcost.core.types import BenchResult, LatencyStats, RunReport, TensorSpec

pytestmark = pytest.mark.stability


def lat(p50: float, p99: float, mean: float, std: float, p90: float | None = None) -> LatencyStats:
    return LatencyStats(count=100, p50=p50, p90=p50 if p90 is None else p90, p95=p50, p99=p99, mean=mean, std=std,
                        min=p50 / 2, max=p99)


def test_stable_timings_pass() -> None:
    # CV = 0.1 / 10 = 1%, p99 / p50 = 11 / 10 = 1.1: a quiet machine
    assert stability.instability(lat(10, 11, 10, 0.1), lat(10.5, 12, 10.5, 0.2)) == []


def test_the_loaded_cpu_of_the_issue_is_flagged() -> None:
    # The figures seen on a loaded 2-core CPU: CV 396% (std 3.96 x mean), p99 150x p50, p90 4x p50.
    # robust CV = (8 - 2) / (1.2816 x 2) = 234%
    reasons = stability.instability(lat(2.0, 300.0, 10.0, 39.6, p90=8.0))
    assert reasons == ["spread: p90 4.00x p50, robust CV 234% (limit 25%)", "tail: p99 150.0x p50 (limit 3x)"]


def test_a_few_outliers_among_many_samples_are_not_a_spread() -> None:
    # resnet_tiny on ort-cpu, a 2-core VM: p50 0.039, p90 0.045, p99 0.065 ms, but std 5.4 x mean from a handful of
    # multi-ms host preemptions among 23,169 samples. robust CV = (0.045 - 0.039) / (1.2816 x 0.039) = 12% < 25%,
    # p99 / p50 = 1.7 < 3: stable (std / mean would have said 542%)
    assert stability.instability(lat(0.039, 0.065, 0.040, 0.217, p90=0.045)) == []
    # the bulk itself spread: p90 = 1.5 x p50 -> robust CV (15 - 10) / 12.816 = 39% -> flagged
    assert stability.instability(lat(10, 16, 11, 2, p90=15))[0].startswith("spread: p90 1.50x p50, robust CV 39%")


def test_e2e_below_the_latency_it_contains_is_flagged() -> None:
    # torch-cpu on the loaded machine: latency p50 2,108 ms, e2e p50 1,004 ms (< 2,108 x 0.95)
    reasons = stability.instability(lat(2108, 2300, 2108, 50), lat(1004, 1100, 1004, 20))
    assert len(reasons) == 1 and "below the latency p50 2108 ms" in reasons[0]
    # 3% below is within the slack (the same forward timed twice on a quiet machine)
    assert stability.instability(lat(100, 105, 100, 1), lat(97, 100, 97, 1)) == []


TICK = os.sysconf("SC_CLK_TCK")  # clock ticks per second, as /proc/<pid>/stat counts them
ME = os.getpid()


class Machine(procstat.ProcTable):
    """A synthetic 2-CPU machine, moved on by hand: /proc/stat's busy and total CPU seconds, this process's
    ``os.times()`` and the process table (pid -> parent pid, own CPU ticks, ticks of its waited-for children).
    The tests below see CpuLoad's arithmetic, not whoever else shares the real machine with them."""

    cpus = 2

    def __init__(self) -> None:
        self.busy_s = self.total_s = self.own_s = 0.0
        self.procs: dict[int, tuple[int, int, int]] = {}

    def run(self, seconds: float, busy_cpus: float) -> None:
        """``seconds`` of wall time pass with ``busy_cpus`` CPUs at work (whoever's the work is)."""
        self.total_s += seconds * self.cpus
        self.busy_s += seconds * busy_cpus

    def burn(self, pid: int, seconds: float) -> None:
        ppid, ticks, waited = self.procs[pid]
        self.procs[pid] = (ppid, ticks + round(seconds * TICK), waited)

    def reap(self, pid: int) -> None:
        """``pid`` ends and its parent waits for it: its ticks (and its children's) move into the parent's."""
        ppid, ticks, waited = self.procs.pop(pid)
        if ppid in self.procs:
            grand, own, theirs = self.procs[ppid]
            self.procs[ppid] = (grand, own, theirs + ticks + waited)

    def proc_stat(self) -> tuple[float, float, int]:
        return self.busy_s, self.total_s, self.cpus

    def times(self) -> os.times_result:
        return os.times_result((self.own_s, 0.0, 0.0, 0.0, 0.0))

    def pids(self) -> list[int]:
        return list(self.procs)

    def stat_fields(self, pid: int) -> list[bytes] | None:
        if pid not in self.procs:
            return None
        ppid, ticks, waited = self.procs[pid]
        # state, ppid, 9 fields CpuLoad does not read, then utime stime cutime cstime (/proc/<pid>/stat's 14-17)
        return [b"S", str(ppid).encode(), *[b"0"] * 9, str(ticks).encode(), b"0", str(waited).encode(), b"0"]

    def load(self) -> stability.CpuLoad:
        return stability.CpuLoad(proc_stat=self.proc_stat, times=self.times, table=self)


def test_other_processes_cpu_share() -> None:
    """/proc/stat says 2 CPUs were busy 1.6 s of 2.0 s; this process used 0.4 s of it: others 1.2 / 2.0 = 60%."""
    machine = Machine()
    load = machine.load().start()
    machine.run(1.0, busy_cpus=1.6)
    machine.own_s += 0.4
    load.stop()
    assert load.other_share == pytest.approx(0.6) and load.cpus == 2 and load.measured
    reasons = stability.instability(lat(10, 11, 10, 0.1), load=load)
    assert len(reasons) == 1 and reasons[0].startswith("busy machine: other processes used 60% of the 2 CPUs")


def test_a_window_shorter_than_half_a_second_per_cpu_is_not_judged() -> None:
    # 0.4 s of wall time on 2 CPUs = 0.8 CPU-s < 0.5 s x 2: ticks, not load, even with both CPUs others'
    machine = Machine()
    load = machine.load().start()
    machine.run(0.4, busy_cpus=2)
    assert load.stop().other_share is None and load.measured


def test_a_busy_machine_is_seen() -> None:
    """Processes spinning on both CPUs while this one sleeps. They are not this process's descendants (parent 1:
    init adopted them), so all that CPU time is others': (2 - 0) / 2 = 100%."""
    machine = Machine()
    machine.procs = {ME: (1, 0, 0), 2001: (1, 0, 0), 2002: (1, 0, 0)}
    load = machine.load().start()
    machine.run(1.0, busy_cpus=2)
    machine.burn(2001, 1.0)
    machine.burn(2002, 1.0)
    load.stop()
    assert load.other_share == pytest.approx(1.0), load


def test_a_busy_descendant_is_this_process_own_work() -> None:
    """A child spinning on one CPU (as the background compile or ONNX export of bench.compile_ahead /
    bench.export_ahead would) while this process works 0.2 s and a stranger 0.3 s: busy 1.5 of 2 CPU-s, own
    0.2 + 1.0, so others (1.5 - 1.2) / 2 = 15%. The same child adopted by init (not a descendant) is others':
    (1.5 - 0.2) / 2 = 65%."""
    for parent, expected in ((ME, 0.15), (1, 0.65)):
        machine = Machine()
        machine.procs = {1001: (parent, 5 * TICK, 0), 2001: (1, 0, 0)}  # the child has spun 5 s already
        load = machine.load().start()
        machine.run(1.0, busy_cpus=1.5)
        machine.own_s += 0.2
        machine.burn(1001, 1.0)
        machine.burn(2001, 0.3)
        load.stop()
        assert load.other_share == pytest.approx(expected), (parent, load)


def test_a_grandchild_that_ends_mid_window_stays_this_process_own_work() -> None:
    """A child whose own child (as an inductor compile worker) burns a CPU and ends inside the timed window: its
    time moves into the child's waited-for-children ticks, not out of this process's count. The grandchild has
    used 0.5 s at the start and burns 0.75 s more in a 1.5 s window: busy 0.75 of 3 CPU-s, own
    (0 + 1.25) - (0 + 0.5) = 0.75 s, others 0%. Were the waited-for ticks not counted, own would read -0.5 s and
    others (0.75 + 0.5) / 3 = 42%, flagged."""
    machine = Machine()
    machine.procs = {1001: (ME, 0, 0), 1002: (1001, TICK // 2, 0)}
    load = machine.load().start()
    machine.run(1.5, busy_cpus=0.5)
    machine.burn(1002, 0.75)
    machine.reap(1002)
    assert machine.procs == {1001: (ME, 0, round(1.25 * TICK))}
    load.stop()
    assert load.other_share == pytest.approx(0.0, abs=1e-9), load


def test_a_real_busy_machine_is_seen() -> None:
    """End to end on the real /proc: processes spinning on every CPU (not descendants: each is started by a shell
    that exits at once, so init adopts it) while this one sleeps. Whatever else runs on the machine only adds to
    the others' share, so this holds under any load; the spinners are known to be at work before the window opens
    (they have used CPU), not assumed to be after a fixed sleep."""
    cpus = os.cpu_count() or 1
    spin = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"  # ends by itself too
    pids = [int(subprocess.run(["sh", "-c", f'"{sys.executable}" -c "{spin}" >/dev/null 2>&1 & echo $!'],
                               check=True, capture_output=True, text=True).stdout) for _ in range(cpus)]
    try:
        deadline = time.monotonic() + 60
        while not all((procstat.cpu_ticks(p) or 0) > 0 for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        load = stability.CpuLoad().start()
        time.sleep(1.0)
        load.stop()
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert load.measured and load.cpus >= 1
    assert load.other_share is not None and load.other_share > stability.OTHER_CPU_LIMIT, load


class FakeTime:
    """Stands in for the ``time`` module of bench/timing.py: the timing loops' clock moves only when a fake
    session's call says it took time (and by a microsecond per read, so no loop waits on it forever)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1e-6
        return self.now


CLOCK = FakeTime()


class NoisySession:
    """Every 4th call takes 40 ms, the others 1 ms (on ``CLOCK``): p50 1 ms, p99 40 ms, whatever the load."""

    device, stream, timing = "cpu", None, "fake noisy"

    def __init__(self) -> None:
        self.calls = 0

    def run(self) -> None:
        self.calls += 1
        CLOCK.now += 0.04 if self.calls % 4 == 0 else 0.001

    def outputs(self) -> list:
        return [np.zeros((1, 10), dtype=np.float32)]

    def run_e2e(self, host_inputs: object) -> None:
        self.run()

    def memory_peak_bytes(self) -> tuple:
        return None, ""

    def close(self) -> None:
        pass


class NoisyBackend:
    name = "fake-noisy"
    build_s, notes = 0.0, []

    def unavailable_reason(self) -> None:
        return None

    def precision_reason(self, precision: str) -> None:
        return None

    def prepare(self, model: object, precision: str, config: object) -> NoisyBackend:
        return self

    def session(self, batch: int, host_inputs: object) -> NoisySession:
        return NoisySession()

    def close(self) -> None:
        pass


def test_the_runner_flags_a_noisy_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.bench import timing

    monkeypatch.setattr(timing, "time", CLOCK)
    monkeypatch.setitem(registry.BACKENDS, "fake-noisy",
                        BackendInfo("fake-noisy", "cpu", ("fp32",), ("pytorch",), "fake", "x", "y"))
    real = registry.get_backend
    monkeypatch.setattr(registry, "get_backend", lambda n: NoisyBackend() if n == "fake-noisy" else real(n))
    model = from_module(torch.nn.Linear(4, 10).eval(), lambda b: [TensorSpec("x", (b, 4), "float32")], name="lin")
    config = BenchConfig(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.3, min_iters=40, max_time_s=1.0,
                         e2e_min_iters=2, e2e_max_s=0.02, cache_dir=tmp_path)
    results, _ = run_benchmarks(model, backends=["fake-noisy"], config=config)
    r = results[0]
    # p99 / p50 = 40 / 1 = 40 > TAIL_LIMIT 3; the bulk (p90 <= 40 ms) may read as a spread too
    assert r.status == "ok" and any(reason.startswith("tail: p99 40.0x p50") for reason in r.unstable), r.unstable
    assert {"other_cpu_share", "load_avg_1m"} <= r.extra.to_json().keys()


def _noisy_result() -> BenchResult:
    r = BenchResult("ort-cpu", "fp32", 1, "ok", latency_ms=lat(2.0, 300.0, 10.0, 39.6, p90=8.0), throughput_ips=500.0,
                    e2e_latency_ms=lat(2.1, 3, 2.1, 0.1), timing="host wall time")
    r.unstable = stability.instability(r.latency_ms, r.e2e_latency_ms)
    return r


def test_the_table_and_the_report_say_unstable(tmp_path: Path) -> None:
    from rich.console import Console

    from modelcost.report.console_bench import print_benchmarks
    from modelcost.report.folder import write_report_folder

    console = Console(record=True, width=200)
    print_benchmarks([_noisy_result()], console=console)
    text = console.export_text()
    assert "unstable" in next(line for line in text.splitlines() if line.startswith("ort-cpu"))  # status cell
    assert "unstable timings" in text and "spread: p90 4.00x p50, robust CV 234%" in text
    folder = write_report_folder(RunReport(benchmarks=[_noisy_result()]), tmp_path / "rep", plots=False)
    md = (folder / "report.md").read_text()
    assert "Unstable timings" in md and "tail: p99 150.0x p50" in md and "(UNSTABLE)" in md
    assert "robust CV 234%" in (folder / "benchmarks.csv").read_text()
