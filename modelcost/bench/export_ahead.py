"""The ONNX export of a PyTorch model, made in a background process while other configs are measured (issue 9).

A GPU sweep of a PyTorch model runs its torch configs first and the ONNX Runtime configs later, which wait for the
export and its fp16 copy (CPU work the GPU waited on: BENCHMARKS.md, 'Fourth session').
The export depends on nothing the torch configs measure, so it is forked off before the first config and runs
beside them; when an ONNX Runtime config asks for the file (``BenchModel.onnx_file``) it is usually in the cache
already. It starts only where a torch.compile config runs before the first ONNX config (``start``): the compile,
or the wait for the background compile of bench.compile_ahead, is CPU-side time it hides behind.

The child is a ``fork`` of this process: it has the very CPU module and seeded inputs the sweep uses (so the same
weights, whatever the model's source), and it never touches CUDA. It runs niced, with one torch thread (torch's
OpenMP pool is not usable after a fork; a DataLoader worker does the same), off the CPU the timing loop pins
itself to, with its output sent to /dev/null. It writes the same atomic cache entries an export in this process
would. Anything that goes wrong there (the child fails, dies, or outlives ``WAIT_S``) only means the export is
made here as before, with its own error if it fails again; a child alive but idle for ``STALL_S`` (stuck on a
lock some other thread held at the fork) is given up on. A timed loop that runs while the child is still exporting
says so in its notes.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from pathlib import Path
from typing import Any

from modelcost.core.procstat import IdleWatch

WAIT_S = 600.0  # the longest the sweep waits for the background export before making it itself
STALL_S = 15.0  # ... or this long while the child uses no CPU at all
NOTE = "ONNX export running in a background process (niced, one CPU) while this was timed"


class ExportAhead:
    """One background export (and fp16 copy); ``result()`` waits for it."""

    def __init__(self, model: Any, cache_dir: Path, fp16: bool) -> None:
        import multiprocessing

        key = model.content_hash()[:16]  # made here, so the child and this process name the same entries
        model.cpu_module()  # the child must inherit the module, not instantiate another one
        ctx = multiprocessing.get_context("fork")
        self._recv, send = ctx.Pipe(duplex=False)
        self._process = ctx.Process(target=_child, args=(model, Path(cache_dir), fp16, key, send, os.getpid()),
                                    daemon=True, name="modelcost-onnx-export")
        with warnings.catch_warnings():  # Python 3.12 warns on any fork of a threaded process
            warnings.simplefilter("ignore", DeprecationWarning)
            self._process.start()
        send.close()
        self._got: tuple[Path, str] | None = None
        self._done = False

    def running(self) -> bool:
        return not self._done and self._process.is_alive()

    def result(self, wait_s: float = WAIT_S) -> tuple[Path, str] | None:
        """(the ONNX file, its note), or None if the child did not make it (the caller exports it itself)."""
        if self._done:
            return self._got
        self._done = True
        try:
            if self._wait(wait_s):
                got = self._recv.recv()
                if got is not None:
                    path, note = Path(got[0]), str(got[1])
                    if path.exists():
                        self._got = (path, note)
        except (EOFError, OSError):  # the child died without a word
            pass
        finally:
            self.stop()
        return self._got

    def _wait(self, wait_s: float) -> bool:
        """Whether the child's answer came within ``wait_s``; a child that is alive but has used no CPU for
        ``STALL_S`` is taken for stuck (a lock held by another thread at the fork) and given up on early."""
        deadline = time.monotonic() + wait_s
        watch = IdleWatch(self._process.pid, STALL_S)
        while True:
            if self._recv.poll(min(1.0, max(0.0, deadline - time.monotonic()))):
                return True
            if time.monotonic() >= deadline or not self._process.is_alive():
                return self._recv.poll(0)
            if watch.idle():
                return False

    def stop(self) -> None:
        """End the child (if it is still at work) and reap it."""
        self._done = True
        if self._process.is_alive():
            self._process.kill()
        self._process.join(timeout=5)
        with contextlib.suppress(OSError):
            self._recv.close()


def start(model: Any, order: list[tuple[str, str]], device: str, cache_dir: Path) -> ExportAhead | None:
    """Start the background export when it pays: a PyTorch model on the GPU with no ONNX file yet, whose sweep
    compiles (``order``: the (backend, precision) pairs in the order they run) before an ONNX config needs the
    file. None otherwise, or when a fork is not possible here."""
    from modelcost.bench import registry

    if model.kind != "pytorch" or model.onnx_path is not None or device != "cuda" or not hasattr(os, "fork"):
        return None
    needs = [i for i, (b, _) in enumerate(order) if "onnx" in registry.info(b).model_kinds]  # runs the ONNX file
    compiles = [i for i, (b, _) in enumerate(order) if registry.info(b).compile]
    if not needs or not compiles or compiles[0] > needs[0]:
        return None
    from modelcost.bench.backends.ort import fp16_copy_path
    from modelcost.bench.export import export_path

    fp16 = ("ort-cuda", "fp16") in order
    cached = export_path(model, cache_dir).exists() and (
        not fp16 or fp16_copy_path(cache_dir, model.content_hash()[:16]).exists())
    if cached:  # a warm cache: nothing to make
        return None
    try:
        return ExportAhead(model, cache_dir, fp16=fp16)
    except (OSError, ValueError, RuntimeError):  # no fork (resources, platform): the export is made in place
        return None


def _child(model: Any, cache_dir: Path, fp16: bool, key: str, send: Any, parent_pid: int) -> None:
    """The forked process: export (and the fp16 copy), send (path, note) or None, and leave."""
    try:
        _quiet_and_out_of_the_way(parent_pid)
        from modelcost.bench.export import export_to_onnx

        path, note = export_to_onnx(model, cache_dir)
        if fp16:
            from modelcost.bench.backends.ort import fp16_copy

            with contextlib.suppress(Exception):  # the parent makes it (and reports its error) if this fails
                fp16_copy(path, cache_dir, key)
        if note.startswith("exported"):
            note += " (in a background process while other configs were measured)"
        send.send((str(path), note))
    except BaseException:  # noqa: BLE001 - the parent exports in place and reports the error itself
        with contextlib.suppress(Exception):
            send.send(None)
    finally:
        with contextlib.suppress(Exception):
            send.close()


def _quiet_and_out_of_the_way(parent_pid: int) -> None:
    import signal

    import torch

    from modelcost.bench.timing import step_aside

    for sig in (signal.SIGINT, signal.SIGTERM):  # not the parent's handlers (they write the parent's outputs)
        signal.signal(sig, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    step_aside(10, parent_pid)
    torch.set_num_threads(1)
