"""CPU time of processes from Linux's ``/proc/<pid>/stat`` (standard library only; None / empty elsewhere).

Every function reads through a ``ProcTable`` (``LIVE``, the real ``/proc``, by default) and ``IdleWatch`` also
takes its clock, so tests hand in a synthetic process table and time instead of racing real processes for CPU
on a busy machine (tests/core/test_procstat.py, tests/bench/test_stability.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


class ProcTable:
    """The processes that can be seen and each one's ``stat`` line: the live ``/proc``."""

    def pids(self) -> list[int]:
        """Every process id in ``/proc`` (empty where it cannot be listed)."""
        try:
            return [int(p) for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            return []

    def stat_fields(self, pid: int) -> list[bytes] | None:
        """The fields after the command name (field 3, the state, is index 0); None where they cannot be read."""
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None


LIVE = ProcTable()


def cpu_ticks(pid: int | None, table: ProcTable = LIVE) -> int | None:
    """Clock ticks of CPU a process has used: user + system, plus those of its children that ended and were waited
    for (a worker that ends moves into its parent's count); None where that cannot be read."""
    fields = table.stat_fields(pid) if pid is not None else None
    try:
        return sum(int(f) for f in fields[11:15]) if fields else None
    except ValueError:
        return None


def parents(table: ProcTable = LIVE) -> dict[int, int]:
    """pid -> parent pid of every process that can be seen."""
    found: dict[int, int] = {}
    for pid in table.pids():
        fields = table.stat_fields(pid)
        if fields:
            try:
                found[pid] = int(fields[1])
            except (IndexError, ValueError):
                continue
    return found


def descendants(root: int, table: ProcTable = LIVE) -> list[int]:
    """The running descendants of ``root`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents(table).items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def descendants_ticks(root: int, table: ProcTable = LIVE) -> int:
    """``cpu_ticks`` summed over the running descendants of ``root`` (0 where /proc cannot be read)."""
    return sum(cpu_ticks(pid, table) or 0 for pid in descendants(root, table))


def tree_ticks(pid: int | None, table: ProcTable = LIVE) -> int | None:
    """``cpu_ticks`` of a process plus those of its running descendants (a parent waiting on worker processes is
    idle while they work); None where the process cannot be read."""
    own = cpu_ticks(pid, table)
    if own is None or pid is None:
        return None
    return own + descendants_ticks(pid, table)


class IdleWatch:
    """Whether a process (``tree``: with its descendants) has used no CPU for ``idle_s`` seconds: the sign of a
    helper stuck rather than working. A process that cannot be read is never idle (it ended: its caller sees that)."""

    def __init__(self, pid: int | None, idle_s: float, tree: bool = False, table: ProcTable = LIVE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pid, self.idle_s, self._tree, self._table, self._clock = pid, idle_s, tree, table, clock
        self._last, self._since = self._read(), clock()

    def _read(self) -> int | None:
        return (tree_ticks if self._tree else cpu_ticks)(self.pid, self._table)

    def idle(self) -> bool:
        now, ticks = self._clock(), self._read()
        if ticks is None or ticks != self._last:
            self._last, self._since = ticks, now
            return False
        return now - self._since > self.idle_s
