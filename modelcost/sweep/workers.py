"""One worker per GPU on this machine.

Each worker is a thread of the sweep's driver that owns one GPU exclusively: it takes the next config from the
shared queue and measures it in a child process pinned to its GPU with ``CUDA_VISIBLE_DEVICES=<GPU UUID>``, so
no two timing runs ever share a GPU. Finished rows go back to the driver, which alone writes the database.
Without GPUs there is one CPU worker by default; more CPU workers share the host's cores (their timings then
disturb each other: the run notes say so).
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.sweep.child_run import measure_config
from modelcost.sweep.identity import DeviceIdentity, cpu_block, cpu_identity, versions_key, visible_gpus
from modelcost.sweep.plan import Config


@dataclass
class Slot:
    """What one worker owns: a GPU (``gpu`` set) or a share of the CPU."""

    name: str  # "gpu0", "cpu0"
    gpu: DeviceIdentity | None = None
    cpus: list[int] | None = None  # a GPU worker's own host CPUs (its child is pinned to them)
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def cuda_visible(self) -> str:
        return (self.gpu.uuid or "") if self.gpu is not None else ""


def make_slots(workers: int | None) -> tuple[list[Slot], list[str]]:
    """``workers`` None: one per visible GPU, else one CPU worker. Returns the slots and notes for the run."""
    gpus = visible_gpus()
    notes: list[str] = []
    if gpus:
        n = len(gpus) if workers is None else workers
        if n > len(gpus):
            raise ModelcostError(f"{{workers}} {n}: this machine shows {len(gpus)} GPU(s), and a worker owns a whole "
                                 "GPU", fields="workers")
        slots = [Slot(f"gpu{i}", g, cpu_block(i, n)) for i, g in enumerate(gpus[:n])]
        owners = ", ".join(f"{s.name}={s.gpu.name} {s.gpu.uuid}" for s in slots)
        notes.append(f"{n} worker(s), one GPU each ({owners}): no two configs were ever timed on the same GPU at once")
        if n > 1 and all(s.cpus for s in slots):
            notes.append("each GPU worker's configs ran on its own host CPUs (" + "; ".join(
                f"{s.name}: {s.cpus[0]}-{s.cpus[-1]}" for s in slots) + "), so their host-side launch loops and "
                "the benchmark's pinning to one CPU never shared a core")
        return slots, notes
    n = 1 if workers is None else workers
    if n < 1:
        raise ModelcostError("{workers} must be at least 1", fields="workers")
    if n > 1:
        notes.append(f"{n} CPU workers ran at once on one host: their timings shared the CPU and are not exclusive")
    return [Slot(f"cpu{i}") for i in range(n)], notes


Row = dict[str, Any]
JOIN_S = 5.0  # how long an interrupted run waits for each worker thread once its child was killed


@dataclass
class LocalEngine:
    """Run ``configs`` on ``slots``; ``emit(row)`` is called in the driver thread for each finished config."""

    slots: list[Slot]
    timing: dict[str, Any]
    timeout_s: float
    versions: dict[str, str]
    done: set[tuple[str, str, str]]  # resume keys to skip
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def size(self) -> int:
        return len(self.slots)

    def identity(self, config: Config, slot: Slot) -> DeviceIdentity:
        return slot.gpu if config.device == "cuda" and slot.gpu is not None else cpu_identity()

    def run(self, configs: list[Config], emit: Callable[[Row], None], skipped: Callable[[Config], None]) -> None:
        todo: queue.Queue[Config] = queue.Queue()
        for c in configs:
            todo.put(c)
        rows: queue.Queue[Row | Config] = queue.Queue()
        threads = [threading.Thread(target=self._worker, args=(s, todo, rows), daemon=True, name=s.name)
                   for s in self.slots]
        for t in threads:
            t.start()
        try:
            while any(t.is_alive() for t in threads) or not rows.empty():
                try:
                    item = rows.get(timeout=0.2)
                except queue.Empty:
                    continue
                if isinstance(item, Config):
                    skipped(item)
                else:
                    emit(item)
        except BaseException:
            self.stop.set()
            for s in self.slots:
                if s.proc is not None and s.proc.poll() is None:
                    s.proc.kill()
            for t in threads:  # each returns as soon as its child is gone, leaving its scratch files tidied
                t.join(timeout=JOIN_S)
            raise

    def _worker(self, slot: Slot, todo: queue.Queue[Config], rows: queue.Queue[Row | Config]) -> None:
        vkey = versions_key(self.versions)
        while not self.stop.is_set():
            try:
                config = todo.get_nowait()
            except queue.Empty:
                return
            device = self.identity(config, slot)
            if (config.key, device.name, vkey) in self.done:
                rows.put(config)
                continue

            def started(proc: subprocess.Popen[bytes]) -> None:
                slot.proc = proc
                if self.stop.is_set():  # the run was stopped while this child was starting
                    proc.kill()

            gpu_config = config.device == "cuda"
            row = measure_config(config, self.timing, self.timeout_s, device, self.versions, slot.name,
                                 slot.cuda_visible if gpu_config else "", started, slot.cpus if gpu_config else None)
            slot.proc = None
            if not self.stop.is_set():  # a config cut short by Ctrl-C is not a result
                rows.put(row)
