"""``MODELCOST_TRACE=1``: one stderr line per step of a run (load, static analysis, each benchmark config's
build, screening and full measurement) with the seconds since the process started - where a run's wall time goes.
Off by default and free when off."""

from __future__ import annotations

import os
import sys
import time

_T0 = time.perf_counter()


def enabled() -> bool:
    return os.environ.get("MODELCOST_TRACE", "") not in ("", "0")


def trace(message: str) -> None:
    if enabled():
        print(f"[trace {time.perf_counter() - _T0:8.2f} s] {message}", file=sys.stderr, flush=True)
