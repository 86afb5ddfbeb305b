"""core.procstat: CPU ticks and descendants from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from modelcost.core import procstat

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")


def _parent_of_a_burner() -> subprocess.Popen:
    """A process that waits, idle, on a child of its own spinning on a CPU for 1.5 s."""
    return subprocess.Popen([sys.executable, "-c", "import subprocess, sys\n"
                             "subprocess.run([sys.executable, '-c', 'import time\\nt = time.perf_counter()\\n"
                             "while time.perf_counter() - t < 1.5: pass'])"])


def test_a_child_and_its_child_are_descendants_and_their_ticks_grow() -> None:
    child = _parent_of_a_burner()
    try:
        time.sleep(0.7)
        found = procstat.descendants(os.getpid())
        assert child.pid in found and len(found) >= 2  # the child and the grandchild it runs
        grandchild = [p for p in found if p != child.pid][0]
        before = procstat.cpu_ticks(grandchild)
        time.sleep(0.4)
        assert before is not None and procstat.cpu_ticks(grandchild) > before
    finally:
        child.wait()
    assert procstat.cpu_ticks(child.pid) is None  # gone: nothing to read
    assert procstat.cpu_ticks(None) is None


def test_tree_ticks_count_the_workers_a_parent_waits_on() -> None:
    """A parent asleep while its child burns a CPU: its own ticks stand still, its tree's grow."""
    parent = _parent_of_a_burner()
    try:
        time.sleep(0.7)
        own, tree = procstat.cpu_ticks(parent.pid), procstat.tree_ticks(parent.pid)
        time.sleep(0.4)
        assert procstat.cpu_ticks(parent.pid) - own <= 2 and procstat.tree_ticks(parent.pid) - tree >= 10
    finally:
        parent.wait()
    assert procstat.tree_ticks(parent.pid) is None
