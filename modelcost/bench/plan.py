"""What a benchmark sweep will run, decided before anything runs: the (backend, precision) pairs of the default
or the asked-for sweep and the rows that will not run with their reasons (``make_plan``), the order that suits a
background compile, the compile workers started early, and the refusal of a batch size whose inputs alone cannot
fit in memory. bench/runner.py runs the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from modelcost.bench import registry
from modelcost.bench.base import BenchConfig
from modelcost.bench.memory import available_host_bytes, cuda_available
from modelcost.bench.model import BenchModel
from modelcost.core.errors import ModelcostError, NotEnoughMemoryError
from modelcost.core.types import BenchResult
from modelcost.core.units import binary_bytes


@dataclass
class Plan:
    """What will run: (backend, precision) pairs, and the rows that will not run with their reasons."""

    device: str
    runnable: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[BenchResult] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # "backend precision" not in the default sweep (registry)
    # (backend, precision, batch) -> its row, for configs a caller's pre-screen leaves unmeasured (recommend
    # --predict: runs/predict.prescreen_plan)
    prescreened: dict[tuple[str, str, int], BenchResult] = field(default_factory=dict)

    def left_out_note(self) -> str | None:
        """The run note naming what the default sweep did not run, and how to run it."""
        if not self.left_out:
            return None
        return (f"not in the default sweep (one config per way of deploying, see 'modelcost backends'): "
                f"{', '.join(self.left_out)}; --exhaustive runs every backend and precision, or name them with "
                "--backends / --precisions")


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    return device


def make_plan(model: BenchModel, backends: Sequence[str] | None, precisions: Sequence[str] | None,
              config: BenchConfig, exhaustive: bool = False) -> Plan:
    """What will run. Neither ``backends`` nor ``precisions`` given: the default sweep (each backend at the
    precisions of its registry row's ``default``; the rest listed in ``left_out``), or every backend at every
    precision when ``exhaustive``."""
    device = resolve_device(config.device)
    names = list(backends) if backends else registry.default_backends(device)
    if not backends and config.device == "auto" and device == "cpu":
        names += registry.default_backends("cuda")  # listed as unavailable: say why the GPU ones did not run
    default_sweep = not (backends or precisions or exhaustive)
    plan = Plan(device=device)
    for name in names:
        entry = registry.info(name)
        wanted = [p for p in (precisions or entry.precisions) if p in entry.precisions]
        if default_sweep and entry.device == device:
            plan.left_out += [f"{name} {p}" for p in wanted if p not in entry.default]
            wanted = [p for p in wanted if p in entry.default]
        if model.kind not in entry.model_kinds:
            reason: str | None = "PyTorch backends need a PyTorch model"
        else:
            reason = registry.unavailable_reason(name)
        for precision in wanted:
            why = reason
            if why is None:
                why = registry.get_backend(name).precision_reason(precision)
            if why is None:
                plan.runnable.append((name, precision))
            else:
                plan.skipped.append(BenchResult(name, precision, 0, "unavailable", reason=why, device=entry.device))
    if precisions and not plan.runnable and not plan.skipped:
        raise ModelcostError(f"no chosen backend has precision {', '.join(precisions)}; see 'modelcost backends'")
    return plan


def compile_ahead_order(order: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """With graphs compiling in a background process (bench.compile_ahead): the torch configs that need no compile
    first (they give the child time), then the compile configs, then the rest (ONNX Runtime, TensorRT: their
    memory figures are device-wide, so they run once the child is gone); each part in its given order."""
    def part(pair: tuple[str, str]) -> int:
        entry = registry.info(pair[0])
        if entry.model_kinds != ("pytorch",):
            return 2
        return 1 if entry.compile else 0

    return sorted(order, key=part)  # stable: the given order within each part


def warm_compile_workers(plan: Plan) -> None:
    """When the plan compiles on the GPU, start inductor's compile workers now (they take seconds to start, and
    until they are up inductor compiles in this process, one kernel at a time)."""
    if plan.device != "cuda" or not any(registry.info(b).compile for b, _ in plan.runnable):
        return
    from modelcost.bench.backends.torch_backends import warm_compile_workers as warm

    warm()



def refuse_impossible_batches(model: BenchModel, batch_sizes: Sequence[int]) -> None:
    """Refuse, before anything runs, a batch size whose host inputs alone exceed the memory available (a typo such
    as --batch-sizes 1000000000000 would otherwise try to allocate them)."""
    import math

    available = available_host_bytes()
    if available is None:
        return
    for batch in batch_sizes:
        need = sum(math.prod(s.shape) * _itemsize(s.dtype) for s in model.specs(batch)
                   if all(isinstance(d, int) for d in s.shape))
        if need > available:
            raise NotEnoughMemoryError(f"batch size {batch}: its inputs alone need {binary_bytes(need)}, more than the "
                                 f"{binary_bytes(available)} of memory available here; choose a smaller batch size")


def _itemsize(dtype: str) -> int:
    import numpy as np

    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:  # bfloat16 and other names numpy does not know: 2 bytes is the smallest float
        return 2
