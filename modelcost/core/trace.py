"""``MODELCOST_TRACE=1``: one stderr line per step of a run (load, static analysis, each benchmark config's
build, screening and full measurement) with the seconds since the process started (read from /proc where there
is one, so interpreter start-up and imports are counted too) - where a run's wall time goes.
Off by default and free when off."""

from __future__ import annotations

import os
import sys
import time


def _process_age_s() -> float:
    """Seconds since this process started (Linux /proc), 0 where that cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime_s = float(f.read().split()[0])
        return max(0.0, uptime_s - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


_T0 = time.perf_counter() - _process_age_s()


def enabled() -> bool:
    return os.environ.get("MODELCOST_TRACE", "") not in ("", "0")


def trace(message: str) -> None:
    if enabled():
        print(f"[trace {time.perf_counter() - _T0:8.2f} s] {message}", file=sys.stderr, flush=True)
