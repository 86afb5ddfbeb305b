"""The PyTorch backends: eager (TF32 off / on), autocast, the cast model, torch.compile, CUDA-graph replay of
the eager and of the compiled model, and eager on the CPU.

Every CUDA variant runs under ``torch.inference_mode`` with ``cudnn.benchmark`` on (cuDNN picks its fastest
algorithm per shape during warm-up). TF32 is off except for the ``tf32`` precision. fp16 / bf16 of the
``half``, ``compile`` and ``cudagraph`` backends mean the model's weights and float inputs cast to that dtype
(channels_last memory format for conv nets); ``autocast`` keeps fp32 weights and autocasts the forward.

torch.compile: one compiled module per backend x precision. By default (``--compile-graphs per-batch``) dynamo
compiles it with static shapes, a graph per batch size: what a fixed-batch deployment runs (faster than the shared
dynamic-batch graph at large batches (BENCHMARKS.md, 'Sixth session')), starting dynamo
afresh before its recompile limit (8 graphs of one frame; past it dynamo silently runs the model eagerly).
``--compile-graphs shared`` uses torch's automatic dynamic shapes (``dynamic=None``) instead: the first batch compiles
with static shapes, the second compiles a graph with a dynamic batch dimension that every later batch reuses (batch 1
keeps its own specialised graph), one compile fewer per extra batch size. A model whose dynamic-batch compile fails
is compiled for that batch alone (``dynamic=False``), and the notes say so.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from modelcost.bench.base import BackendInfo, BenchConfig, OutOfMemory, Unavailable
from modelcost.bench.export import flatten_outputs
from modelcost.bench.model import BenchModel, to_channels_last
from modelcost.core.errors import ModelcostError, is_out_of_memory
from modelcost.core.lazy import INSTALL_HINTS
from modelcost.core.text import first_line
from modelcost.hardware.tf32 import tf32_mode

PER_BATCH_GRAPHS = 7  # graphs of one frame kept with --compile-graphs per-batch (dynamo's recompile limit is 8)

_DTYPE = {"fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def make(entry: BackendInfo) -> TorchBackend:
    return TorchBackend(entry)


def cuda_unavailable_reason() -> str | None:
    import importlib.util

    from modelcost.bench.memory import cuda_available

    if importlib.util.find_spec("torch") is None:  # without importing it (seconds): `modelcost backends` is quick
        return f"torch is not installed — {INSTALL_HINTS['torch']}"
    if not cuda_available():
        return "no CUDA device"
    return None


class TorchBackend:
    def __init__(self, entry: BackendInfo) -> None:
        self.entry = entry
        self.name = entry.name

    def unavailable_reason(self) -> str | None:
        if self.entry.device == "cpu":
            import importlib.util

            if importlib.util.find_spec("torch") is None:
                return f"torch is not installed — {INSTALL_HINTS['torch']}"
            return None
        return cuda_unavailable_reason()

    def precision_reason(self, precision: str) -> str | None:
        if precision not in self.entry.precisions:
            return f"{self.name} has no {precision} (it has {', '.join(self.entry.precisions)})"
        if precision == "bf16":
            import torch

            if not torch.cuda.is_bf16_supported():
                return "bf16 needs compute capability 8.0+"
        return None

    def prepare(self, model: BenchModel, precision: str, config: BenchConfig) -> TorchRunner:
        if model.kind != "pytorch":
            raise Unavailable("PyTorch backends need a PyTorch model")
        return TorchRunner(self.entry, model, precision, config)


def use_compile_cache(cache_dir: Any) -> str:
    """Point inductor's on-disk caches (FX graph, AOT autograd, autotune) at ``<cache_dir>/inductor`` unless the
    user chose a folder (TORCHINDUCTOR_CACHE_DIR): a second run, or another batch size / backend with the same
    graph, loads compiled kernels instead of compiling them again. Returns the folder in use. The folder is
    inductor's to fill: made here, it is recorded as modelcost's whole (``core.owned.claim_tree``); one that was
    there before is used but never cleared."""
    import contextlib
    import os

    from modelcost.core import owned

    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not folder:
        folder = str(Path(cache_dir) / "inductor")
        with contextlib.suppress(OSError):  # a read-only cache: inductor says so itself when it writes
            owned.claim_tree(cache_dir, folder)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = True
    inductor_config.autotune_local_cache = True
    return folder


def warm_compile_workers() -> None:
    """Start inductor's pool of compile worker processes in the background (torch's own ``warm_pool``, the call
    torch.compile makes at its first use), so that a compile later in the run finds the pool up. A torch without
    it (private API) just compiles as before."""
    try:
        from torch._inductor.async_compile import AsyncCompile

        AsyncCompile.warm_pool()
        AsyncCompile.wakeup()
    except Exception:  # noqa: BLE001 - a speed-up only; compiling works without it
        return


class TorchRunner:
    """One torch backend at one precision; the device copy of the model is made here (``build_s``)."""

    def __init__(self, entry: BackendInfo, model: BenchModel, precision: str, config: BenchConfig) -> None:
        import torch

        self.entry, self.backend, self.model, self.precision, self.config = entry, entry.name, model, precision, config
        self.device = entry.device
        self.notes: list[str] = []
        self.dtype = _DTYPE[precision] if entry.cast else "float32"
        self.channels_last = entry.cast and self.dtype != "float32" and model.is_conv_net()
        t0 = time.perf_counter()
        try:
            self.module = model.device_module(self.device, self.dtype, self.channels_last)
        except Exception as exc:
            if self.device == "cuda" and is_out_of_memory(exc):
                raise OutOfMemory(f"out of memory copying the model to the GPU: {exc}") from exc
            raise
        if self.device == "cuda":
            torch.cuda.synchronize()
            torch.backends.cudnn.benchmark = True
        self.build_s = time.perf_counter() - t0
        if self.channels_last:
            self.notes.append("channels_last memory format")
        self._compiled: Any = None
        self.per_batch = False  # config.compile_graphs == "per-batch" (compile backends)
        self._graph_batches: set[int] = set()  # per batch: the batch sizes dynamo holds a graph of
        if entry.compile:
            mode = config.compile_mode
            self.compile_mode = "max-autotune-no-cudagraphs" if mode == "max-autotune" else "default"
            cache = use_compile_cache(config.cache_dir)
            self.per_batch = config.compile_graphs == "per-batch"
            graphs = ("a static graph per batch size (--compile-graphs per-batch)" if self.per_batch else
                      "automatic dynamic shapes (batch sizes after the first share one graph with a dynamic batch "
                      "dimension, --compile-graphs shared; per-batch compiles a static one per batch size)")
            self.notes.append(f"torch.compile mode={self.compile_mode}, {graphs}; inductor's FX-graph and autotune "
                              f"caches in {cache} survive the process")

    def compiled(self, static: bool = False) -> Any:
        """The module compiled once for every batch size (module doc), or with ``--compile-graphs per-batch`` once
        with static shapes, dynamo compiling a graph per batch size; ``static``: a compile of its own, with static
        shapes, for a batch whose dynamic-batch compile failed."""
        import torch

        if static:
            return torch.compile(self.module, mode=self.compile_mode, dynamic=False)
        if self._compiled is None:  # per batch: dynamo recompiles statically at each new batch size
            self._compiled = torch.compile(self.module, mode=self.compile_mode,
                                           dynamic=False if self.per_batch else None)
        return self._compiled

    def compiled_for(self, batch_size: int) -> Any:
        """``compiled()`` for a session at ``batch_size``. Per batch, each size is a recompile of the same frame and
        dynamo stops compiling (runs the model eagerly, silently) past its recompile limit of 8: the 8th new size
        starts afresh."""
        if self.per_batch and batch_size not in self._graph_batches:
            if len(self._graph_batches) >= PER_BATCH_GRAPHS:
                self.forget_compiled()
            self._graph_batches.add(batch_size)
        return self.compiled()

    def forget_compiled(self) -> None:
        """Drop the shared compile and dynamo's caches (the next ``compiled()`` starts afresh)."""
        import torch

        self._compiled = None
        self._graph_batches.clear()
        torch._dynamo.reset()

    def context(self) -> contextlib.AbstractContextManager[Any]:
        """Entered around everything a session does: inference mode, TF32 setting, autocast."""
        import torch

        stack = contextlib.ExitStack()
        stack.enter_context(torch.inference_mode())
        if self.device == "cuda":
            stack.enter_context(tf32_mode(self.precision == "tf32"))
        if self.entry.autocast:
            stack.enter_context(torch.autocast("cuda", dtype=getattr(torch, _DTYPE[self.precision])))
        return stack

    def session(self, batch_size: int, host_inputs: Sequence[Any]) -> TorchSession:
        return TorchSession(self, batch_size, host_inputs)

    def close(self) -> None:
        self.module = None
        if self.entry.compile:
            self.forget_compiled()


_ACTIVE: list[TorchSession | None] = [None]  # the session whose global settings are in force


class TorchSession:
    def __init__(self, runner: TorchRunner, batch_size: int, host_inputs: Sequence[Any]) -> None:
        import torch

        self.runner = runner
        self.batch_size = batch_size
        self.device = runner.device
        self._torch = torch
        self.stream = torch.cuda.current_stream() if self.device == "cuda" else None
        self._ctx: Any = None
        self.activate()
        self.build_s = 0.0
        self.notes: list[str] = []
        self._graph = None
        self._out: Any = None
        try:
            if self.device == "cuda":
                torch.cuda.reset_peak_memory_stats()
            self.inputs = [self._to_device(a) for a in host_inputs]
            fn = runner.model.bind(runner.module)  # positional, or by keyword (example_inputs gave a dict)
            t0 = time.perf_counter()
            if runner.entry.compile:
                fn = self._compile()  # the compile happens here: part of the build
            self._fn = fn
            if runner.entry.cudagraph:
                self._capture()
            self.build_s = time.perf_counter() - t0
        except BaseException:
            self.close()
            raise
        self.timing = self._describe()

    def _compile(self) -> Any:
        """The runner's compiled module, called once (compiling it, or a new graph for this batch); a failure of
        the shared compile at this batch falls back to a static compile of this batch alone."""
        torch, runner = self._torch, self.runner
        fn = runner.model.bind(runner.compiled_for(self.batch_size))
        try:
            self._out = fn(*self.inputs)
        except Exception as exc:  # noqa: BLE001 - retried once with static shapes; a second failure is raised
            if is_out_of_memory(exc):
                raise
            runner.forget_compiled()
            fn = runner.model.bind(runner.compiled(static=True))
            self._out = fn(*self.inputs)
            why = first_line(exc, 160, with_type=False)
            self.notes.append(f"compiled for batch {self.batch_size} alone with static shapes: the shared "
                              f"(dynamic batch) compile failed ({why})")
        if self.device == "cuda":
            torch.cuda.synchronize()
        return fn

    def _to_device(self, array: Any, cast_on_device: bool = False) -> Any:
        """A host input as the model takes it (dtype, device, channels_last); on the CPU a copy of its own (the
        tensor would share the array's memory). ``cast_on_device`` (the end-to-end loop): copied to the GPU as it is and
        cast there, as a deployment serving float32 requests would; casting a large batch on the one CPU the timing loop
        is pinned to would cost much of each end-to-end call (BENCHMARKS.md, 'Seventh session'). The session's own
        inputs are cast on the host, so the transient float32 copy is not in the config's peak memory."""
        torch = self._torch
        t = torch.from_numpy(array if self.device != "cpu" and array.flags.writeable else array.copy())
        dtype = getattr(torch, self.runner.dtype)
        if t.is_floating_point() and not cast_on_device:
            t = t.to(dtype)
        t = t.to(self.device)
        if t.is_floating_point():
            t = t.to(dtype)
        return to_channels_last(t) if self.runner.channels_last else t

    def _capture(self) -> None:
        torch = self._torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self._fn(*self.inputs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                self._out = self._fn(*self.inputs)
        except RuntimeError as exc:
            raise capture_failure(exc, self.runner.module) or exc
        torch.cuda.synchronize()
        self._graph = graph

    def _describe(self) -> str:
        if self.device == "cpu":
            return "host wall time (perf_counter) around the forward on the CPU; inputs already in memory"
        what = "a CUDA-graph replay of the forward" if self._graph is not None else "the forward"
        return (f"GPU time between CUDA events around {what} (kernels plus any launch gaps); inputs already on "
                "the GPU; no host<->device copies")

    def activate(self) -> None:
        """Make this session's settings (inference mode, TF32, autocast) the process's. They are global, so
        when two sessions take turns (ABBA comparisons) the one about to run switches them; a session that is
        already active pays one comparison per call."""
        current = _ACTIVE[0]
        if current is self:
            return
        if current is not None:
            current.deactivate()
        self._ctx = self.runner.context()
        self._ctx.__enter__()
        _ACTIVE[0] = self

    def deactivate(self) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(None, None, None)
            self._ctx = None
        if _ACTIVE[0] is self:
            _ACTIVE[0] = None

    def run(self) -> None:
        if _ACTIVE[0] is not self:
            self.activate()
        if self._graph is not None:
            self._graph.replay()
        else:
            self._out = self._fn(*self.inputs)

    def sync(self) -> None:
        if self.device == "cuda":
            self._torch.cuda.synchronize()

    def device_outputs(self) -> list[Any]:
        """The last outputs where they are (bench.accuracy compares CUDA outputs on the GPU)."""
        self.activate()
        return [t.detach() for t in flatten_outputs(self._out)]

    def outputs(self) -> list[Any]:
        self.activate()
        outs = []
        for t in flatten_outputs(self._out):
            t = t.detach()
            outs.append((t.float() if t.is_floating_point() else t).cpu().numpy())
        return outs

    def run_e2e(self, host_inputs: Sequence[Any]) -> None:
        self.activate()
        fresh = [self._to_device(a, cast_on_device=self.device == "cuda") for a in host_inputs]
        if self._graph is not None:
            for static, new in zip(self.inputs, fresh, strict=True):
                static.copy_(new)
            self._graph.replay()
            out = self._out
        else:
            out = self._fn(*fresh)
        for t in flatten_outputs(out):
            t.cpu()

    def memory_peak_bytes(self) -> tuple[int | None, str]:
        if self.device != "cuda":
            return None, ""
        return int(self._torch.cuda.max_memory_allocated()), (
            "torch.cuda.max_memory_allocated: weights, inputs, activations and workspaces allocated through "
            "PyTorch's allocator during this config (CUDA context and allocator cache not included)")

    def close(self) -> None:
        self._graph = None
        self._out = None
        self.inputs = []
        self._fn = None
        self.deactivate()
        # compiled graphs stay for the runner's next batch (module doc); the runner's close() resets dynamo, so
        # graphs of other backends / precisions never pile up against its recompile limit


_HOST_COPY = "Cannot copy between CPU and CUDA tensors during CUDA graph capture"


def capture_failure(exc: BaseException, module: Any) -> ModelcostError | None:
    """What a failed CUDA-graph capture means, in the user's terms, where torch's message does not say it: a
    forward that copies a host tensor to the GPU cannot be captured (torch suggests pinning the tensor; the cause is
    usually a tensor kept as a plain module attribute, which moving the model leaves on the CPU, as transformers'
    VideoMAE keeps its sinusoidal position table). None for any other failure."""
    if _HOST_COPY not in str(exc):
        return None
    names = host_tensor_attributes(module)
    where = (f"{', '.join(names[:3])}{' ...' if len(names) > 3 else ''}: a tensor kept as a plain attribute, not a "
             "registered buffer, so moving the model left it on the CPU" if names else
             "a tensor made on the CPU inside the forward")
    return ModelcostError(f"CUDA graphs cannot capture this forward: it copies a host tensor to the GPU on each call "
                          f"({where}); the backends without CUDA graphs measure it")


def host_tensor_attributes(module: Any) -> list[str]:
    """Dotted names of the tensors on the CPU that ``module``'s submodules keep as plain attributes (not parameters
    or buffers: ``module.to(device)`` does not move those)."""
    import torch

    if module is None:
        return []
    return [f"{prefix}.{name}" if prefix else name
            for prefix, sub in module.named_modules()
            for name, value in vars(sub).items()
            if isinstance(value, torch.Tensor) and value.device.type == "cpu"]
