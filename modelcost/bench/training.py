"""Measured training steps: forward + backward + optimizer step, timed like inference (``bench.timing``).

One *step* is ``zero_grad(set_to_none=True)``, the forward under the precision's autocast, the loss (the sum
of the floating outputs, the same stand-in as the static count), ``backward()`` and ``optimizer.step()`` (with
the grad scaler for AMP fp16). The data are synthetic, made once with a fixed seed and kept on the device: no
data loader runs, and none is in the timed region. On CUDA a sample is the GPU time between two CUDA events
around one step (``timing.clock_for``); on the CPU it is ``perf_counter`` around it. Warm-up first (the first
steps also create the optimizer states and, with ``torch.compile``, compile), then samples until the median
is known (``BenchConfig``). Peak memory: ``torch.cuda.max_memory_allocated`` over the timed steps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.bench.memory import long_lived_frozen
from modelcost.bench.stats import latency_stats
from modelcost.bench.timing import clock_for, measure
from modelcost.core.text import first_line
from modelcost.core.training import TrainingBench
from modelcost.loaders.binding import call_bound, map_bound

VARIANTS = ("eager", "compile")


@dataclass
class StepSetup:
    """What a measured step needs from the caller (plain numbers and two callables: bench sees no analysis)."""

    build: Callable[[str], Any]  # device -> a fresh module with random weights
    # (batch, device) -> inputs, seeded: a sequence binds positionally, a mapping by keyword (loaders.binding)
    make_inputs: Callable[[int, str], Sequence[Any] | Mapping[str, Any]]
    optimizer: str = "adamw"
    flops_per_step: Callable[[int], int] | None = None  # batch -> model FLOPs of one step (for the MFU)
    predicted_peak: Callable[[int], int] | None = None  # batch -> predicted peak bytes
    peak_tflops: float | None = None  # spec peak of the precision
    measured_tflops: float | None = None  # measured matmul ceiling of the precision, when cached
    tokens_per_sample: int | None = None


def make_optimizer(torch: Any, name: str, params: Any) -> Any:
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if name == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    return torch.optim.AdamW(params, lr=1e-4)


@contextlib.contextmanager
def precision_context(torch: Any, precision: str, device: str) -> Iterator[Any]:
    """TF32 on only for ``tf32`` (``hardware.tf32.tf32_mode``: the API this torch has, restored after); autocast
    for AMP. Yields the autocast context factory."""
    from modelcost.hardware.tf32 import tf32_mode

    with tf32_mode(precision == "tf32"):
        if precision in ("amp_fp16", "amp_bf16"):
            dtype = torch.float16 if precision == "amp_fp16" else torch.bfloat16
            yield lambda: torch.autocast(device_type=device, dtype=dtype)
        else:
            yield contextlib.nullcontext


def _loss(torch: Any, out: Any) -> Any:
    from torch.utils._pytree import tree_flatten

    floats = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
    return sum(t.float().sum() for t in floats if t.requires_grad)


def make_step(torch: Any, model: Any, inputs: Any, opt: Any, autocast: Callable[[], Any],
              scaler: Any) -> Callable[[], None]:
    """One training step of ``model`` on bound ``inputs`` (``loaders.binding``)."""
    def step() -> None:
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = _loss(torch, call_bound(model, inputs))
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()

    return step


def measure_step(setup: StepSetup, precision: str, batch_size: int, *, device: str = "cuda", variant: str = "eager",
                 config: BenchConfig | None = None, memory_cap_bytes: int | None = None) -> TrainingBench:
    """Time one training configuration; out-of-memory gives status "oom", never an exception."""
    import torch

    config = config or BenchConfig()
    result = TrainingBench(precision, batch_size, "ok", variant=variant, memory_cap_bytes=memory_cap_bytes)
    if setup.predicted_peak is not None:
        result.predicted_peak_bytes = int(setup.predicted_peak(batch_size))
    if device == "cuda" and not torch.cuda.is_available():
        result.status, result.reason = "unavailable", "no CUDA device"
        return result
    if device == "cuda" and result.predicted_peak_bytes is not None:
        from modelcost.hardware.workspace import training_workspace_bytes

        result.predicted_workspace_bytes = training_workspace_bytes(torch.cuda.get_device_capability()[0])
        result.predicted_peak_bytes += result.predicted_workspace_bytes
    with long_lived_frozen():  # _release's collection scans only what the step made, not torch and the model
        try:
            with _memory_cap(torch, device, memory_cap_bytes):
                _run(torch, setup, precision, batch_size, device, variant, config, result)
        except Exception as exc:  # noqa: BLE001 - one failed config must not lose the others
            result.status, result.reason = failure_of(exc, batch_size)
        finally:
            _release(torch, device)
    return result


def failure_of(exc: BaseException, batch_size: int) -> tuple[str, str]:
    """(status, reason) of a failed step: "oom" when ``lifecycle.is_out_of_memory`` says so (torch's
    OutOfMemoryError with its first line, else a message that says it), else "failed" with the error."""
    from modelcost.bench.lifecycle import is_out_of_memory

    if is_out_of_memory(exc):
        if type(exc).__name__ == "OutOfMemoryError":
            return "oom", f"out of memory at batch {batch_size}: {first_line(exc, 200, with_type=False)}"
        return "oom", f"out of memory at batch {batch_size}"
    return "failed", f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:300]}"


def _run(torch: Any, setup: StepSetup, precision: str, batch: int, device: str, variant: str, config: BenchConfig,
         result: TrainingBench) -> None:
    torch.manual_seed(config.seed)
    model = setup.build(device).train()
    inputs = setup.make_inputs(batch, device)
    if precision in ("bf16", "fp16"):
        dtype = torch.bfloat16 if precision == "bf16" else torch.float16
        model = model.to(dtype)
        inputs = map_bound(lambda t: t.to(dtype) if t.is_floating_point() else t, inputs)
    opt = make_optimizer(torch, setup.optimizer, [p for p in model.parameters() if p.requires_grad])
    scaler = torch.amp.GradScaler(device) if precision == "amp_fp16" else None
    if variant == "compile":
        model = torch.compile(model, mode=None if config.compile_mode == "default" else config.compile_mode)
    cuda = device == "cuda"
    clock = clock_for(device)
    with precision_context(torch, precision, device) as autocast:
        step = make_step(torch, model, inputs, opt, autocast, scaler)
        step()  # the first step creates the optimizer states (and compiles): in the warm-up, not timed
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        m = measure(clock, step, config)
        if cuda:
            result.peak_memory_bytes = int(torch.cuda.max_memory_allocated())
            result.device = torch.cuda.get_device_name()
        else:
            result.device = "cpu"
    _fill(result, setup, latency_stats(m.samples_ms), batch, clock.kind)


def _fill(result: TrainingBench, setup: StepSetup, stats: Any, batch: int, clock: str) -> None:
    result.step_time_ms, result.step_time_p90_ms, result.step_time_std_ms = stats.p50, stats.p90, stats.std
    result.samples = stats.count
    result.samples_per_second = batch / stats.p50 * 1e3
    if setup.tokens_per_sample:
        result.tokens_per_second = result.samples_per_second * setup.tokens_per_sample
    result.timing = (f"median of {stats.count} steps ({clock}): zero_grad + forward + loss + backward + optimizer "
                     "step; synthetic data on the device, no data loader")
    if setup.flops_per_step is not None:
        flops = setup.flops_per_step(batch)
        result.achieved_tflops = flops / (stats.p50 * 1e-3) / 1e12
        if setup.peak_tflops:
            result.peak_tflops = setup.peak_tflops
            result.mfu = result.achieved_tflops / setup.peak_tflops
        if setup.measured_tflops:
            result.mfu_measured = result.achieved_tflops / setup.measured_tflops


@contextlib.contextmanager
def _memory_cap(torch: Any, device: str, cap_bytes: int | None) -> Iterator[None]:
    """``set_per_process_memory_fraction`` for the run (the allocator raises OOM past it), then uncapped."""
    if cap_bytes is None or device != "cuda":
        yield
        return
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_bytes / total))
    try:
        yield
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)


def _release(torch: Any, device: str) -> None:
    import gc

    gc.collect()
    if device == "cuda" and torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def sweep(setup: StepSetup, precision: str, batch_sizes: Sequence[int], **kwargs: Any) -> list[TrainingBench]:
    """Measure each batch size in order; stop cleanly at the first out-of-memory (it is reported)."""
    results = []
    for batch in batch_sizes:
        results.append(measure_step(setup, precision, batch, **kwargs))
        if results[-1].status == "oom":
            break
    return results
