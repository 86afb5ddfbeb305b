"""Interruption with real signals on a child process (``python3 -m modelcost ...``): SIGINT and SIGTERM stop
within a couple of seconds, write what was measured (or the static part) marked ``complete: false`` and exit
130 / 143, also when the main thread is stuck in native code; and two runs cannot write one --out folder."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESNET_TINY = str(ROOT / "sample_models" / "resnet_tiny.onnx")
# Stop "within a couple of seconds": 2 s on a quiet machine; the limit leaves room for a loaded CI runner.
STOP_LIMIT_S = 6.0

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

BLOCKER = '''import ctypes, os
from torch import nn


def native_block(seconds):
    """Block in native code: pthread_join on a thread sleeping in libc (no Python bytecode runs meanwhile, and
    pthread_join does not return on a signal)."""
    libc = ctypes.CDLL(None)
    tid = ctypes.c_ulong()
    libc.pthread_create(ctypes.byref(tid), None, ctypes.cast(libc.sleep, ctypes.c_void_p), ctypes.c_void_p(seconds))
    libc.pthread_join(tid, None)


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        print("FORWARD STARTED", flush=True)
        native_block(60)
        return self.fc(x)


def make():
    return Blocks()
'''


class Child:
    """``python3 -m modelcost ARGS`` with this checkout first on the path; stdout read line by line."""

    def __init__(self, *args: str, trace: bool = False) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="200")
        if trace:  # core.trace: a stderr line per step of the run (a config's session built, ...)
            env["MODELCOST_TRACE"] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "modelcost", *args], cwd=ROOT, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self.err_lines: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, into), daemon=True)
                         for stream, into in ((self.proc.stdout, self.lines), (self.proc.stderr, self.err_lines))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def wait_for(self, text: str, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines + self.err_lines):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"never printed {text!r}: rc {self.proc.returncode}\n{''.join(self.lines)}\n{self.stderr}")
            time.sleep(0.05)

    def signal_and_wait(self, sig: int) -> float:
        """Send ``sig``; the seconds until the process ended."""
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("did not stop within 60 s of the signal")
        took = time.monotonic() - t0
        self.finish()
        return took

    def finish(self) -> None:
        self.proc.wait(timeout=120)
        for reader in self._readers:
            reader.join(5)

    @property
    def stderr(self) -> str:
        return "".join(self.err_lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.finish()

    @property
    def stdout(self) -> str:
        return "".join(self.lines)


def _long_bench(tmp_path: Path, *extra: str) -> Child:
    """analyze with a benchmark that would time one config for 60 s (traced: it says when its timing starts)."""
    return Child("analyze", RESNET_TINY, "--backends", "ort-cpu", "--min-time-s", "60", "--max-time-s", "120",
                 "--json", str(tmp_path / "r.json"), "--out", str(tmp_path / "rep"), *extra, trace=True)


@pytest.mark.parametrize(("sig", "code", "said"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")])
def test_signal_during_benchmark_keeps_the_static_part(tmp_path: Path, sig: int, code: int, said: str) -> None:
    child = _long_bench(tmp_path)
    child.wait_for("all ops counted")  # the static part is done (a progress line)
    child.wait_for("ort-cpu fp32 b1: session built")  # the trace line just before the 60 s timed loop
    time.sleep(0.2)  # inside it (no fixed second of a busy benchmark to wait through)
    took = child.signal_and_wait(sig)
    assert child.proc.returncode == code, (child.stdout, child.stderr)
    assert took < STOP_LIMIT_S, took
    assert "Traceback" not in child.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is False
    assert doc["params"]["total"] == 20_042  # the static part (sample_models/EXPECTED.md) is kept
    assert any(said in note for note in doc["run_notes"])
    folder = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert folder["complete"] is False and "INCOMPLETE" in (tmp_path / "rep" / "report.md").read_text()


def test_sigterm_while_stuck_in_native_code(tmp_path: Path) -> None:
    """The forward blocks in native code for 60 s, so Python cannot run its handler: the signal watcher writes
    the report (nothing measured yet, marked incomplete) and ends the process."""
    pytest.importorskip("torch")
    (tmp_path / "blocker.py").write_text(BLOCKER)
    child = Child("analyze", f"{tmp_path / 'blocker.py'}:make", "-s", "x=1x4", "--static",
                  "--json", str(tmp_path / "r.json"))
    child.wait_for("FORWARD STARTED")
    took = child.signal_and_wait(signal.SIGTERM)
    assert child.proc.returncode == 143, (child.stdout, child.stderr)
    assert took < STOP_LIMIT_S, took
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is False and any("SIGTERM" in n for n in doc["run_notes"])


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (the SigCgt mask of /proc/<pid>/status). Python catches
    SIGINT from its own start; modelcost/__main__.py installs SIGINT's handler, then SIGTERM's."""
    with open(f"/proc/{pid}/status") as f:
        mask = next(line.split()[1] for line in f if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signal.SIGTERM - 1) & 1)


def _loading_torch(pid: int) -> bool:
    """Whether torch's libraries are mapped (/proc/<pid>/maps): torch is importing (for seconds), and the CLI,
    which installs its signal handling before any heavy import, is in place."""
    with open(f"/proc/{pid}/maps", "rb") as f:
        return b"libtorch" in f.read()


@pytest.mark.parametrize(("when", "said"), [(_catches_sigterm, "interrupted (SIGINT) while starting"),
                                            (_loading_torch, "interrupted (Ctrl-C (SIGINT))")],
                         ids=["before the CLI", "while torch imports"])
def test_sigint_during_start_up_is_one_line(tmp_path: Path, when: Callable[[int], bool], said: str) -> None:
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    child = Child("analyze", "zoo:resnet18", "--static")
    deadline = time.monotonic() + 60  # polled, however slow a loaded machine makes the start
    while child.proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError, StopIteration):
            if when(child.proc.pid):
                break
        time.sleep(0.005)
    child.signal_and_wait(signal.SIGINT)
    if child.proc.returncode == 0:
        pytest.skip("the command finished before the signal (a very fast machine)")
    assert child.proc.returncode == 130, (child.stdout, child.stderr)
    assert "Traceback" not in child.stderr and "KeyboardInterrupt" not in child.stderr
    assert said in child.stderr


def test_second_writer_of_an_out_folder_is_refused(tmp_path: Path) -> None:
    first = _long_bench(tmp_path)
    try:
        first.wait_for("all ops counted")
        second = Child("analyze", RESNET_TINY, "--static", "--out", str(tmp_path / "rep"))
        second.finish()
        assert second.proc.returncode == 1
        assert "being written by another modelcost run" in second.stderr and "Traceback" not in second.stderr
    finally:
        first.signal_and_wait(signal.SIGTERM)
    assert first.proc.returncode == 143


def test_out_lock_in_process(tmp_path: Path) -> None:
    """flock on the folder: a second lock from the same process (another open file) is refused too; an --out
    folder that the run made and left empty is removed when the process ends."""
    from modelcost.cli import options
    from modelcost.core.errors import ModelcostError

    options.lock_out(tmp_path / "rep")
    try:
        with pytest.raises(ModelcostError, match="being written by another modelcost run"):
            options.lock_out(tmp_path / "rep")
    finally:
        for fd in options._HELD:
            os.close(fd)
        options._HELD.clear()
