"""``python -m modelcost.sweep.child REQUEST.json RESULT.json``: measure one config in this process.

The request holds {"config": Config.as_dict(), "timing": {...}, "static_path": where this sweep keeps the model's
static figures at this batch (``adapter.run_config``)}; the answer is written atomically to RESULT.json
(``adapter.run_config``'s dict, or {"error": "...", "oom": bool}, ``oom`` as ``core.errors.is_out_of_memory``
says). A process that dies leaves no RESULT.json: its parent reads the exit status and the stderr tail instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path


def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when the sweep worker that started it dies, so no orphan keeps timing on
    a GPU after its sweep was killed (PR_SET_PDEATHSIG; set here rather than in a preexec_fn, which is unsafe
    in a threaded parent). A sweep killed before that line ran has already handed this process to another
    parent: it is told from MODELCOST_SWEEP_PARENT, the pid the sweep gave, and this process ends (left to run,
    it would time a config nobody records, in a scratch folder the next sweep removes). Elsewhere orphans are
    possible; nothing else changes."""
    if not sys.platform.startswith("linux"):
        return
    given = os.environ.get("MODELCOST_SWEEP_PARENT", "")
    parent = int(given) if given.isdigit() else os.getppid()
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def _pin_to_block() -> None:
    """MODELCOST_SWEEP_CPUS="8,9,10": run on these CPUs only (set before any thread starts, so all inherit)."""
    text = os.environ.get("MODELCOST_SWEEP_CPUS", "")
    if text and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError, ValueError):
            os.sched_setaffinity(0, {int(c) for c in text.split(",")})


def main(argv: list[str]) -> int:
    _die_with_parent()
    _pin_to_block()
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    from modelcost.core.errors import is_out_of_memory
    from modelcost.core.text import first_line
    from modelcost.report.atomic import atomic_write_text
    from modelcost.sweep.adapter import run_config
    from modelcost.sweep.plan import Config

    try:
        static = request.get("static_path")
        answer = run_config(Config.from_dict(request["config"]), request.get("timing", {}),
                            Path(static) if static else None)
    except Exception as exc:  # noqa: BLE001 - every failure is the config's result, with its reason
        answer = {"error": first_line(exc)[:500], "oom": is_out_of_memory(exc)}
    out = Path(argv[1])
    if not out.parent.is_dir():  # the sweep is gone and its scratch folder with it: nobody reads this answer
        return 1
    atomic_write_text(out, json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
