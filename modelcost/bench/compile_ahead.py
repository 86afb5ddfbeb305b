"""torch.compile's graphs compiled in a background process while the GPU measures other configs (issue 9).

A cold GPU sweep of a PyTorch model spent half its time compiling, graph after graph, while the GPU sat idle
(BENCHMARKS.md, 'Figures that used to live in docstrings'). The graphs do not depend
on anything the sweep measures, so a child process compiles them from the start of the run, filling inductor's
on-disk caches (FX graph, AOT autograd, autotune: ``use_compile_cache``), while this process runs the batch search,
the reference outputs and the configs that need no compile. When the sweep reaches a compile config it waits for
the child to have compiled that precision at that batch, then compiles it itself from the cache, a fraction of a
cold compile.

The child loads the model from its source the way this process did (``loaders.torch_loader.load_torch`` with the
same options and seed) and compiles through the same runner code (``torch-compile`` at the same precision: the
compile + CUDA-graph backend compiles the same graph), so the cache keys are the same. It runs niced, off the CPU
the timing loop pins itself to, with cuDNN's autotuner off (not part of the cache key; this process autotunes its
own), so the GPU work it adds is the compiled graph's first calls. A timed loop that runs while it is alive says so
in its notes, the sweep runs the configs whose memory figure is device-wide (NVML: ONNX Runtime, TensorRT) only
after it has ended, and anything that goes wrong with it only means this process compiles as before. Only models
whose 16-bit weights take under 5% of the GPU's memory get a child (``SMALL_SHARE``: ResNet-50's are 0.06% of an
H100's, BERT-base's 0.3%): its copy of the model must not change which batch sizes fit in this process.

Protocol: the child gets a JSON payload (argv) with the batches known at the start; more batches come one per
line on its stdin (the throughput batch, once the search has found it), then ``end``. It prints ``compiled
PRECISION BATCH`` after each compile and writes a marker in the cache when done, so a later run with the same
model, precisions and batch shape starts no child (the caches are warm).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from modelcost.core.procstat import IdleWatch

NOTE = "torch.compile running in a background process (filling inductor's caches) while this was timed"
WAIT_S = 300.0  # the longest the sweep waits for one graph of the child before compiling it itself
STALL_S = 20.0  # ... or this long while the child and its compile workers use no CPU at all
SMALL_SHARE = 0.05  # a child only for models whose 16-bit weights take under this share of the GPU's memory


def marker_path(cache_dir: Path, model_hash: str, precisions: Sequence[str], compile_mode: str, first_batch: int,
                dynamic: bool, per_batch: Sequence[int] | None = None) -> Path:
    """The file that says these graphs are in the cache: per model, precisions, compile mode, torch version and
    batch shape (the first batch, and whether a dynamic-batch graph follows it; with ``--compile-graphs
    per-batch``, ``per_batch``: the batches known at the start, and ``dynamic`` whether one more follows)."""
    import torch

    if per_batch is not None:
        shape = "static-" + "+".join(f"b{b}" for b in per_batch) + ("+more" if dynamic else "")
    else:
        shape = f"b{first_batch}{'+dyn' if dynamic else ''}"
    name = f"{model_hash[:16]}-{'-'.join(sorted(precisions))}-{compile_mode}-{shape}-torch{torch.__version__}.done"
    return Path(cache_dir) / "compile-ahead" / name.replace("/", "_")


class CompileAhead:
    """The parent's handle on the child process."""

    def __init__(self, payload: dict[str, Any]) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "modelcost.bench.compile_ahead", json.dumps(payload)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.compiled: set[tuple[str, int]] = set()
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._ended = False
        threading.Thread(target=self._read, daemon=True, name="modelcost-compile-ahead").start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line.strip())
        self._lines.put(None)

    def add_batches(self, batches: Sequence[int], last: bool = True) -> None:
        """Give the child more batches to compile (``last``: no more will come)."""
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stdin is not None
            for batch in batches:
                self._process.stdin.write(f"{int(batch)}\n")
            if last:
                self._process.stdin.write("end\n")
                self._process.stdin.close()
            else:
                self._process.stdin.flush()

    def running(self) -> bool:
        return self._process.poll() is None

    def wait_for(self, precision: str, batch: int, wait_s: float = WAIT_S) -> bool:
        """Wait until the child has compiled ``precision`` at ``batch``; False if it will not (it ended, failed,
        stalled, or ``wait_s`` passed)."""
        deadline = time.monotonic() + wait_s
        watch = IdleWatch(self._process.pid, STALL_S, tree=True)  # its compile workers count: it waits on them
        while (precision, batch) not in self.compiled:
            if self._ended:
                return False
            try:
                line = self._lines.get(timeout=1.0)
            except queue.Empty:
                if watch.idle() or time.monotonic() >= deadline:
                    return False
                continue
            if line is None:
                self._ended = True
            elif line.startswith("compiled "):
                with contextlib.suppress(ValueError):  # anything else a library printed is not the protocol
                    _, prec, b = line.split()
                    self.compiled.add((prec, int(b)))
        return True

    def stop(self, wait_s: float = 0.0) -> None:
        """End the child: wait up to ``wait_s`` for it to finish on its own, then kill it."""
        self.add_batches([], last=True)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=wait_s)
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=5)


def start(model: Any, source: str | None, load_options: Any, order: Sequence[tuple[str, str]], device: str,
          config: Any, batches: Sequence[int], more_batches: bool) -> CompileAhead | None:
    """Start the child when it pays: a PyTorch model from a source a child can load again (``source``: a path or
    name; None for an object), on the GPU, whose plan compiles, and whose graphs are not in the cache yet
    (``marker_path``). ``batches``: those known now; ``more_batches``: more will be given (``add_batches``)."""
    from modelcost.bench import registry

    precisions = sorted({p for b, p in order if registry.info(b).compile})
    if device != "cuda" or source is None or model.kind != "pytorch" or not precisions or not batches:
        return None
    if not _small_beside(model):
        return None
    per_batch = config.compile_graphs == "per-batch"
    dynamic = more_batches if per_batch else more_batches or len(set(batches)) > 1
    marker = marker_path(config.cache_dir, model.content_hash(), precisions, config.compile_mode, batches[0], dynamic,
                         sorted({int(b) for b in batches}) if per_batch else None)
    if marker.exists():
        return None
    import dataclasses

    payload = {"source": source, "load_options": dataclasses.asdict(load_options), "seed": model.seed,
               "precisions": precisions, "compile_mode": config.compile_mode, "cache_dir": str(config.cache_dir),
               "compile_graphs": config.compile_graphs, "batches": [int(b) for b in batches], "marker": str(marker),
               "more_batches": bool(more_batches), "parent_pid": os.getpid()}
    try:
        return CompileAhead(payload)
    except OSError:
        return None


def _small_beside(model: Any, share: float = SMALL_SHARE) -> bool:
    """Whether the model's weights at 16 bits take under ``share`` of the GPU's memory: the child holds a copy
    (and its activations) while this process measures, and must not change which batch sizes fit here."""
    import torch

    weights_bytes = 2 * sum(p.numel() for p in model.cpu_module().parameters())
    try:
        _, total = torch.cuda.mem_get_info()
    except Exception:  # noqa: BLE001 - no CUDA after all: no child
        return False
    return weights_bytes < share * total


# -- the child --------------------------------------------------------------------------------------------------

def _child(payload: dict[str, Any]) -> None:
    """Compile, print ``compiled PRECISION BATCH`` after each, write the marker, print ``done``. ``device``
    (default cuda) and ``dynamo_backend`` (default inductor) let the tests run it on a CPU without a C++
    compiler."""
    import dataclasses

    import torch

    from modelcost.bench import registry
    from modelcost.bench.backends.torch_backends import TorchBackend
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.model import from_loaded_torch
    from modelcost.bench.timing import step_aside
    from modelcost.loaders.base import LoadOptions
    from modelcost.loaders.torch_loader import load_torch

    step_aside(5, payload.get("parent_pid"))
    opts = payload["load_options"]  # dataclasses.asdict of the parent's LoadOptions; JSON made the shapes lists
    options = LoadOptions(**{**opts, "input_shapes": {k: tuple(v) for k, v in opts["input_shapes"].items()}})
    source = payload["source"]
    model = from_loaded_torch(load_torch(source, options), name="compile-ahead", source=source, seed=payload["seed"])
    device = payload.get("device", "cuda")
    config = BenchConfig(device=device, compile_mode=payload["compile_mode"], cache_dir=Path(payload["cache_dir"]),
                         compile_graphs=payload["compile_graphs"])
    backend = TorchBackend(dataclasses.replace(registry.info("torch-compile"), device=device))
    if payload.get("dynamo_backend"):  # tests: a dynamo backend that needs no C++ compiler
        real_compile = torch.compile
        torch.compile = lambda module, mode=None, dynamic=None: real_compile(  # type: ignore[assignment]
            module, backend=payload["dynamo_backend"], dynamic=dynamic)
    runners: dict[str, Any] = {}

    def compile_at(batch: int) -> None:
        for precision in payload["precisions"]:
            if precision not in runners:
                runners[precision] = backend.prepare(model, precision, config)
                torch.backends.cudnn.benchmark = False  # not in the cache key; the parent autotunes its own
            session = runners[precision].session(batch, model.host_inputs(batch)[0])
            session.close()
            print(f"compiled {precision} {batch}", flush=True)

    batches = list(payload["batches"])
    for batch in batches:
        compile_at(batch)
    ended = False
    for line in sys.stdin:
        if line.strip() == "end":
            ended = True
            break
        with contextlib.suppress(ValueError):
            batch = int(line)
            if batch not in batches:
                batches.append(batch)
                compile_at(batch)
    # The marker says the graphs are cached: not after a parent that went away (EOF, no "end"), nor when the batch
    # the parent was to add never came (it stopped before the search found one: with shared graphs the
    # dynamic-batch graph the marker names comes with that second size).
    promised = payload.get("more_batches") and len(set(batches)) <= len(set(payload["batches"]))
    if ended and not promised:
        from modelcost.core import owned

        marker = json.dumps({"source": source, "batches": batches}).encode()
        owned.write(payload["cache_dir"], payload["marker"], marker)
    print("done", flush=True)


if __name__ == "__main__":
    try:
        _child(json.loads(sys.argv[1]))
    except BaseException:  # noqa: BLE001 - the parent compiles itself; it needs no traceback from here
        sys.exit(1)
