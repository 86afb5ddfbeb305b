"""One configuration's measuring lifecycle, written once; every scenario runs on it.

    availability -> prepare (a runner per backend and precision) -> session (per batch size) -> clock ->
    pinning -> warm-up + timed loop -> release; any failure -> one out-of-memory / unavailable / failed path

The scenarios: the sweep (``bench.runner``: backends x precisions x batch sizes), the interleaved A/B
(``bench.interleaved``: two models on one backend), the batch-size search (``bench.batch_search``), a training step
(``bench.training``) and a generation (``bench.generation``; it has no backend session, but the same clock,
warm-up rule and out-of-memory path). The clock is ``timing.clock_for`` (CUDA events on a CUDA session's stream,
``perf_counter`` elsewhere), the warm-up ``timing.WarmUpRule``, the classifier of out-of-memory errors
``core.errors.is_out_of_memory`` (with the backends' own ``OutOfMemory``). Judging the figures is not here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modelcost.bench import registry
from modelcost.bench.base import BenchConfig, OutOfMemory, Runner, Session, Unavailable
from modelcost.bench.memory import free_device_memory
from modelcost.bench.timing import Clock, Measurement, clock_for, host_pace_us, measure, pinned_to_one_cpu
from modelcost.core import errors
from modelcost.core.text import first_line
from modelcost.core.types import Status

if TYPE_CHECKING:
    from modelcost.bench.model import BenchModel


def is_out_of_memory(exc: BaseException) -> bool:
    """True for a backend's out-of-memory error: ``OutOfMemory``, or one ``core.errors.is_out_of_memory`` knows
    (torch's CUDA or CPU allocator, numpy, ONNX Runtime, a message that says so)."""
    return isinstance(exc, OutOfMemory) or errors.is_out_of_memory(exc)


def failure(exc: BaseException) -> tuple[Status, str]:
    """The status and reason of a config that raised ``exc``: ``oom``, ``unavailable`` (the backend's plain
    reason, whole) or ``failed`` (the error's first line, with the exception's type unless it is a
    ``ModelcostError``, whose message is written for the user)."""
    if is_out_of_memory(exc):
        return "oom", first_line(exc)
    if isinstance(exc, Unavailable):
        return "unavailable", str(exc)
    return "failed", first_line(exc, with_type=not isinstance(exc, errors.ModelcostError))


def why_not(backend: str, kinds: Sequence[str], precisions: Sequence[str]) -> str | None:
    """Availability: None when ``backend`` runs here, takes models of every kind in ``kinds`` and can run each of
    ``precisions``, else the plain reason (the first that applies)."""
    reason = registry.unavailable_reason(backend)
    if reason is not None:
        return reason
    entry = registry.info(backend)
    if any(kind not in entry.model_kinds for kind in kinds):
        return f"{backend} runs {' and '.join(entry.model_kinds)} models only"
    made = registry.get_backend(backend)
    for precision in precisions:
        reason = made.precision_reason(precision)
        if reason is not None:
            return reason
    return None


def release(model: BenchModel) -> None:
    """What a (backend, precision) leaves goes back: the PyTorch model's device copies, the device's free memory."""
    model.release_device_copies()
    free_device_memory()


@contextlib.contextmanager
def prepared(backend: str, model: BenchModel, precision: str, config: BenchConfig) -> Iterator[Runner]:
    """The backend's runner for ``precision``, closed and released (``release``) when the block ends, however.
    A failure to prepare raises here, before the block (``failure`` says what it was)."""
    runner = registry.get_backend(backend).prepare(model, precision, config)
    try:
        yield runner
    finally:
        runner.close()
        release(model)


@contextlib.contextmanager
def session(runner: Runner, batch: int, arrays: Sequence[Any]) -> Iterator[Session]:
    """A session of ``runner`` at ``batch`` on host ``arrays``; closed when the block ends, and the device memory
    emptied if making it or the block failed (an out-of-memory leaves the allocator's cache full)."""
    try:
        made = runner.session(batch, arrays)
    except BaseException:
        free_device_memory()
        raise
    try:
        yield made
    except BaseException:
        made.close()
        free_device_memory()
        raise
    made.close()


@contextlib.contextmanager
def pinned_for(sessions: Sequence[Session], config: BenchConfig) -> Iterator[int | None]:
    """The process pinned to one CPU while any of ``sessions`` on CUDA is timed (``config.pin_cpu``;
    ``timing.pinned_to_one_cpu``: a launch-bound GPU config is timed by how fast the host issues kernels); CPU
    sessions are never pinned. Yields the CPU, or None."""
    on_gpu = any(getattr(s, "device", "cpu") == "cuda" for s in sessions)
    with pinned_to_one_cpu(config.pin_cpu and on_gpu) as cpu:
        yield cpu


def session_clock(session: Session) -> Clock:
    """The clock of a session: CUDA events on its stream on a GPU, ``perf_counter`` on the CPU."""
    return clock_for(session.device, getattr(session, "stream", None))


@dataclass
class Timed:
    """One warm-up + timed loop of a session: the loop's figures, its clock, the CPU it was pinned to, and that
    CPU's pace before the warm-up and after the timed loop (``timing.host_pace_us``; GPU sessions only)."""

    measurement: Measurement
    clock: Clock
    pinned_cpu: int | None
    host_pace_us: list[float] | None = None


def time_session(session: Session, config: BenchConfig, on_timed: Callable[[bool], None] | None = None,
                 previous_ms: float | None = None, clock: Clock | None = None) -> Timed:
    """Warm up and time ``session.run`` (``timing.measure``) with its clock, pinned on a GPU. ``on_timed`` brackets
    the timed phase (the NVML sampler); ``previous_ms``: the same session's screening median (``timing.warm_up``)."""
    clock = clock or session_clock(session)
    pace = None
    with pinned_for([session], config) as cpu:
        before = host_pace_us() if getattr(session, "device", "cpu") == "cuda" else None
        m = measure(clock, session.run, config, on_timed, previous_ms)
        if before is not None:
            pace = [before, host_pace_us()]
    return Timed(m, clock, cpu, pace)
