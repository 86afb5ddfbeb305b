"""Ctrl-C (SIGINT) and SIGTERM: stop within a couple of seconds, keep what was measured, exit 130 / 143.

``install()`` runs first thing in ``main()`` (before the heavy imports). Both signals raise ``KeyboardInterrupt``
in the main thread, so every command's Ctrl-C path (report what finished, marked incomplete) serves SIGTERM too;
``exit_code()`` tells them apart (128 + the signal number).

Python runs a signal handler only between bytecodes of the main thread: a long native call (an ONNX Runtime
session being built, a large forward) holds the exception back. So ``install()`` also sets a wakeup file
descriptor, which the interpreter writes at C level the moment a signal arrives, and a watcher thread reads it: if
the Python handler has not run within ``GRACE_S`` (the main thread is stuck in native code), the watcher calls the
flush registered with ``on_stuck`` (the reports of what was measured so far, marked incomplete) and ends the
process. Once the handler has run, the command has ``FINISH_S`` to print and write what it has. A second signal
ends the process at once. Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

GRACE_S = 1.5  # the main thread must start handling the interrupt within this, or the watchdog writes and exits
FINISH_S = 10.0  # once the handler ran, the command may take this long to print and write its reports

_state: dict[str, Any] = {"signal": None, "handled": 0, "flush": None, "installed": False}
_lock = threading.Lock()


def install() -> None:
    """Route SIGINT and SIGTERM to ``_handler`` and start the watcher (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread() or _state.get("installed"):
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)
    try:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (OSError, ValueError):  # no pipes here: the Python handler alone does the work
        return
    threading.Thread(target=_watch, args=(read_fd,), name="modelcost-signal-watcher", daemon=True).start()
    _state["installed"] = True


def _handler(signum: int, frame: Any) -> None:
    """Runs in the main thread, between bytecodes: raise KeyboardInterrupt where the program is."""
    with _lock:
        second = _state["handled"] > 0
        _state["handled"] += 1
        if _state["signal"] is None:
            _state["signal"] = signum
    if second:
        _exit_now(f"second {signal.Signals(signum).name}: stopping at once")
    raise KeyboardInterrupt


def _watch(read_fd: int) -> None:
    """The watcher thread: woken at C level by every signal (the wakeup fd), whatever the main thread does."""
    import time

    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data or not any(b in (signal.SIGINT, signal.SIGTERM) for b in data):
            continue
        with _lock:
            if _state["signal"] is None:
                _state["signal"] = data[0]
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline and not _state["handled"]:
            time.sleep(0.02)
        if not _state["handled"]:  # the main thread is stuck in native code: write what we have from here
            _flush_and_exit(f"{name()} while a native call was running; reported what was measured")
        time.sleep(FINISH_S)
        _flush_and_exit("the interrupted run took too long to stop; reported what was measured")


def _flush_and_exit(text: str) -> None:
    """Write what the command registered (bounded by FINISH_S), then end the process."""
    flush = _state["flush"]
    if flush is not None:
        def guarded() -> None:
            try:
                flush()
            except BaseException as exc:  # noqa: BLE001 - exiting regardless; say why nothing was written
                _say(f"could not write the reports: {exc.__class__.__name__}: {exc}")

        writer = threading.Thread(target=guarded, name="modelcost-interrupt-flush", daemon=True)
        writer.start()
        writer.join(FINISH_S)
    _exit_now(text)


def _say(text: str) -> None:
    try:
        sys.stderr.write(f"interrupted: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _exit_now(text: str) -> None:
    _say(text)
    exit_fast()


_AT_EXIT: list[Callable[[], None]] = []


def at_exit(fn: Callable[[], None]) -> None:
    """``fn`` runs when the process ends, the fast way (``exit_fast``) or the usual one (atexit); it must be
    harmless to run twice."""
    import atexit

    _AT_EXIT.append(fn)
    atexit.register(fn)


def exit_fast(code: int | None = None) -> None:
    """After a command has written its outputs: run the ``at_exit`` hooks, flush, and end the process without the
    interpreter's teardown (seconds with torch loaded: inductor's compile workers, CUDA, module teardown:
    BENCHMARKS.md, 'Fourth session'). ``code``: the exit code (default 130 / 143, for an interrupted run)."""
    for fn in _AT_EXIT:
        try:
            fn()
        except Exception:  # noqa: BLE001 - a clean-up hook failing must not change the exit code
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(exit_code() if code is None else code)


def received() -> int | None:
    """The first signal received (signal.SIGINT / SIGTERM), or None."""
    return _state["signal"]


def exit_code() -> int:
    """128 + the signal: 130 for Ctrl-C (also when no signal was seen: a KeyboardInterrupt), 143 for SIGTERM."""
    return 128 + int(_state["signal"] or signal.SIGINT)


def name() -> str:
    """'Ctrl-C (SIGINT)' or 'SIGTERM', for notes and messages."""
    return "SIGTERM" if _state["signal"] == signal.SIGTERM else "Ctrl-C (SIGINT)"


def on_stuck(flush: Callable[[], None] | None) -> None:
    """What the watchdog writes when the main thread does not respond (None: nothing)."""
    _state["flush"] = flush


def reset() -> None:
    """Forget a received signal (tests that run several commands in one process)."""
    _state.update(signal=None, handled=0, flush=None)
