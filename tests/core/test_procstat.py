"""core.procstat: CPU ticks and descendants from /proc. The arithmetic on a synthetic process table and clock
(whatever the load of the machine running the tests); one real process tree for the live /proc."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from modelcost.core import procstat


class Table(procstat.ProcTable):
    """A synthetic /proc: pid -> (parent pid, utime, stime, cutime, cstime) in clock ticks."""

    def __init__(self, procs: dict[int, tuple[int, int, int, int, int]]) -> None:
        self.procs = procs

    def pids(self) -> list[int]:
        return list(self.procs)

    def stat_fields(self, pid: int) -> list[bytes] | None:
        if pid not in self.procs:
            return None
        ppid, *ticks = self.procs[pid]
        # state, ppid, 9 fields procstat does not read, then utime stime cutime cstime (/proc/<pid>/stat's 14-17)
        return [b"S", str(ppid).encode(), *[b"0"] * 9, *(str(t).encode() for t in ticks)]


def _tree() -> Table:
    """10 runs 11 (which runs 12 and 13, and 13 runs 14); 20 is someone else's."""
    return Table({10: (1, 5, 1, 0, 0), 11: (10, 3, 0, 7, 1), 12: (11, 40, 2, 0, 0), 13: (11, 0, 0, 0, 0),
                  14: (13, 100, 0, 0, 0), 20: (1, 999, 0, 0, 0)})


def test_cpu_ticks_add_user_system_and_the_waited_for_children() -> None:
    table = _tree()
    assert procstat.cpu_ticks(11, table) == 3 + 0 + 7 + 1
    assert procstat.cpu_ticks(99, table) is None  # gone: nothing to read
    assert procstat.cpu_ticks(None, table) is None
    broken = Table({})
    broken.stat_fields = lambda pid: [b"S", b"1", *[b"0"] * 9, b"x", b"0", b"0", b"0"]  # type: ignore[method-assign]
    assert procstat.cpu_ticks(5, broken) is None


def test_a_child_and_its_child_are_descendants() -> None:
    table = _tree()
    assert sorted(procstat.descendants(10, table)) == [11, 12, 13, 14]
    assert sorted(procstat.descendants(13, table)) == [14]
    assert procstat.descendants(12, table) == [] and procstat.descendants(99, table) == []


def test_tree_ticks_count_the_workers_a_parent_waits_on() -> None:
    """A parent asleep while its child burns a CPU: its own ticks stand still, its tree's grow."""
    table = _tree()
    # 11's own 3 + 0 + 7 + 1 = 11, then 12's 42, 13's 0 and 14's 100: 153
    assert procstat.descendants_ticks(11, table) == 142 and procstat.tree_ticks(11, table) == 153
    table.procs[14] = (13, 150, 0, 0, 0)  # the grandchild works on, 11 sleeps
    assert procstat.cpu_ticks(11, table) == 11 and procstat.tree_ticks(11, table) == 203
    assert procstat.tree_ticks(99, table) is None and procstat.tree_ticks(None, table) is None


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("tree", [False, True])
def test_idle_watch(tree: bool) -> None:
    """Idle once the ticks have stood still for longer than idle_s; any tick (with ``tree``: of a descendant too)
    starts the wait again; a process that is gone is never idle."""
    table, clock = _tree(), Clock()
    watch = procstat.IdleWatch(11, 15.0, tree=tree, table=table, clock=clock)
    clock.now += 15.0
    assert not watch.idle()  # 15 s, not more
    clock.now += 0.1
    assert watch.idle()
    table.procs[14] = (13, 101, 0, 0, 0)  # the grandchild used a tick
    assert watch.idle() is not tree  # with the tree it counts as work: the wait starts again
    clock.now += 10.0
    assert not watch.idle() if tree else watch.idle()
    del table.procs[11]
    assert not watch.idle()


def test_the_live_proc_sees_a_child_and_its_child() -> None:
    """The real /proc: a child that runs a grandchild spinning on a CPU. Polled, not slept on: the tree is
    checked once it is there, however long a loaded machine takes to start it."""
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc")
    spin = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"  # ends by itself too
    runs = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {spin!r}])"
    child = subprocess.Popen([sys.executable, "-c", runs])
    grandchild = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = procstat.descendants(child.pid)
            if found and (procstat.cpu_ticks(found[0]) or 0) > 0:
                grandchild = found[0]
                break
            time.sleep(0.05)
        assert grandchild is not None, "the grandchild never started"
        assert {child.pid, grandchild} <= set(procstat.descendants(os.getpid()))
        # read in this order, the tree's count covers at least the grandchild's (ticks only grow)
        ticks = procstat.cpu_ticks(grandchild)
        tree = procstat.tree_ticks(child.pid)
        assert tree is not None and ticks is not None and tree >= ticks > 0
    finally:
        for pid in [*procstat.descendants(child.pid), child.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        child.wait()
    assert procstat.cpu_ticks(child.pid) is None and procstat.tree_ticks(child.pid) is None  # gone
