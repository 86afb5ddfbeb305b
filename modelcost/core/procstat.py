"""CPU time of processes from Linux's ``/proc/<pid>/stat`` (standard library only; None / empty elsewhere)."""

from __future__ import annotations

import os
import time


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields after the command name (field 3, the state, is index 0); None where they cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_ticks(pid: int | None) -> int | None:
    """Clock ticks of CPU a process has used: user + system, plus those of its children that ended and were waited
    for (a worker that ends moves into its parent's count); None where that cannot be read."""
    fields = stat_fields(pid) if pid is not None else None
    try:
        return sum(int(f) for f in fields[11:15]) if fields else None
    except ValueError:
        return None


def parents() -> dict[int, int]:
    """pid -> parent pid of every process that can be seen."""
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return {}
    found: dict[int, int] = {}
    for pid in pids:
        fields = stat_fields(pid)
        if fields:
            try:
                found[pid] = int(fields[1])
            except (IndexError, ValueError):
                continue
    return found


def descendants(root: int) -> list[int]:
    """The running descendants of ``root`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents().items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def descendants_ticks(root: int) -> int:
    """``cpu_ticks`` summed over the running descendants of ``root`` (0 where /proc cannot be read)."""
    return sum(cpu_ticks(pid) or 0 for pid in descendants(root))


def tree_ticks(pid: int | None) -> int | None:
    """``cpu_ticks`` of a process plus those of its running descendants (a parent waiting on worker processes is
    idle while they work); None where the process cannot be read."""
    own = cpu_ticks(pid)
    if own is None or pid is None:
        return None
    return own + descendants_ticks(pid)


class IdleWatch:
    """Whether a process (``tree``: with its descendants) has used no CPU for ``idle_s`` seconds: the sign of a
    helper stuck rather than working. A process that cannot be read is never idle (it ended: its caller sees that)."""

    def __init__(self, pid: int | None, idle_s: float, tree: bool = False) -> None:
        self.pid, self.idle_s = pid, idle_s
        self._read = tree_ticks if tree else cpu_ticks
        self._last, self._since = self._read(pid), time.monotonic()

    def idle(self) -> bool:
        now, ticks = time.monotonic(), self._read(self.pid)
        if ticks is None or ticks != self._last:
            self._last, self._since = ticks, now
            return False
        return now - self._since > self.idle_s
