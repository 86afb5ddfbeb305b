"""The batch at which throughput saturates (issue 9): the default sweep measures batch 1 (latency serving) and
this batch (throughput serving).

Rule: from batch 1, double the batch while inferences per second grow by more than ``growth`` (5%) and the
batch runs (no out-of-memory, inputs that fit); the chosen batch is the last one that still grew by more than
``growth`` over half of it. Each probe is a short screening measurement of one probe backend (the registry
rows' ``probes``: the eager half-precision model where the model and machine allow it, whether or not the sweep
itself runs that backend, since half-precision kernels saturate at the largest batches and an eager model needs
no compile or engine build per batch). The probes run with cuDNN's autotuner off: it would search conv algorithms anew
at every batch size (BENCHMARKS.md, 'Figures that used to live in docstrings'); the batch it picks is then measured like
every config, which autotunes its own plans (hardware/tf32.no_cudnn_autotune keys the probes' apart).
A probe is the screening measurement with at most 0.3 s of warm-up and 0.5 s in all (``probe_config``): the probes' time
goes mostly to warm-ups of launch-bound small batches that never settle within 2% (BENCHMARKS.md, 'Fourth session'); the
5% growth rule needs no finer figure. Device memory is emptied between probes only after one ran out of it (the
allocator reuses the smaller batch's blocks otherwise). A GPU probe is timed with the process pinned to one CPU, as
every GPU config is (``bench.timing.pinned_to_one_cpu``), the CPU that modelcost's background compile and export stay
off: unpinned, a probe read slower while the compile ran and the search stopped too early (BENCHMARKS.md, 'Fifth
session', 'Figures that used to live in docstrings').
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelcost.hardware.tf32 import no_cudnn_autotune

GROWTH = 0.05
MAX_BATCH = 4096


@dataclass
class BatchSearch:
    batch: int
    trail: list[tuple[int, float | None]] = field(default_factory=list)  # (batch, IPS or None: did not run)
    reason: str = ""
    probe: str = ""  # "torch-half fp16"

    def describe(self) -> str:
        steps = ", ".join(f"b{b} {'did not run' if ips is None else f'{ips:,.0f} ips'}" for b, ips in self.trail)
        return f"throughput batch {self.batch} ({self.reason}; probed with {self.probe}: {steps})"


def saturating_batch(ips_at: Callable[[int], float | str | None], *, growth: float = GROWTH,
                     max_batch: int = MAX_BATCH, time_budget_s: float = 60.0,
                     clock: Callable[[], float] = time.perf_counter) -> BatchSearch:
    """Double the batch from 1 while IPS grows by more than ``growth``; ``ips_at(b)`` measures batch ``b`` and
    returns its IPS, or why it cannot run (a string; None: out of memory)."""
    t0 = clock()
    search = BatchSearch(batch=1)
    first = ips_at(1)
    best_ips = first if isinstance(first, float) else None
    search.trail.append((1, best_ips))
    if best_ips is None:
        search.reason = f"batch 1 did not run ({first or 'out of memory'})"
        return search
    batch = 1
    while True:
        if batch * 2 > max_batch:
            search.reason = f"reached the largest batch searched ({max_batch})"
            break
        if clock() - t0 > time_budget_s:
            search.reason = f"search time budget {time_budget_s:g} s spent"
            break
        got = ips_at(batch * 2)
        ips = got if isinstance(got, float) else None
        search.trail.append((batch * 2, ips))
        if ips is None:
            search.reason = f"batch {batch * 2} did not run ({got or 'out of memory'})"
            break
        gain = ips / best_ips - 1
        if gain <= growth:
            search.reason = f"doubling to {batch * 2} added {gain * 100:+.1f}% IPS (<= {growth * 100:.0f}%)"
            break
        batch, best_ips = batch * 2, ips
    search.batch = batch
    return search


def probe_config(config: Any) -> Any:
    """One probe's measurement: the screening one, its warm-up capped at 0.3 s and the whole at 0.5 s."""
    from modelcost.bench.screening import screening_config

    short = screening_config(config)
    return dataclasses.replace(short, warmup_max_s=min(short.warmup_max_s, 0.3),
                               max_time_s=min(short.max_time_s, 0.5))


def pick_probe(runnable: list[tuple[str, str]], usable: Callable[[tuple[str, str]], bool] | None = None
               ) -> tuple[str, str] | None:
    """The first of the registry's probes (``registry.probe_order``: cheap to prepare at every batch, no compile,
    no engine build) that the plan runs or that is ``usable`` here, else the plan's first config."""
    from modelcost.bench import registry

    for pair in registry.probe_order():
        if pair in runnable or (usable is not None and usable(pair)):
            return pair
    return runnable[0] if runnable else None


def _usable_here(model: Any, device: str) -> Callable[[tuple[str, str]], bool]:
    """Whether a probe (backend, precision) can run this model on the plan's device."""
    from modelcost.bench import registry

    def usable(pair: tuple[str, str]) -> bool:
        entry = registry.info(pair[0])
        if entry.device != device or model.kind not in entry.model_kinds:
            return False
        if registry.unavailable_reason(pair[0]) is not None:
            return False
        return registry.get_backend(pair[0]).precision_reason(pair[1]) is None

    return usable


def find_throughput_batch(model: Any, runnable: list[tuple[str, str]], config: Any, *, growth: float = GROWTH,
                          max_batch: int = MAX_BATCH, time_budget_s: float = 60.0,
                          device: str | None = None) -> BatchSearch | None:
    """``saturating_batch`` measured on ``model`` with the probe backend (short screening measurements; the
    runner is prepared once). None when the plan has nothing runnable. ``device``: the plan's ("cuda" / "cpu")."""
    from modelcost.bench import lifecycle
    from modelcost.bench.memory import long_lived_frozen
    from modelcost.bench.stats import median
    from modelcost.core.trace import trace

    if not runnable:
        return None
    probe = pick_probe(runnable, _usable_here(model, device) if device else None)
    if probe is None:
        return None
    short = probe_config(config)

    def ips_at(runner: Any, batch: int) -> float | str | None:
        problem = model.batch_problem(batch)
        if problem is not None:
            return problem
        try:
            arrays, _ = model.host_inputs(batch)
            with no_cudnn_autotune(), lifecycle.session(runner, batch, arrays) as session:
                m = lifecycle.time_session(session, short).measurement
            trace(f"batch search: b{batch} measured")
            return batch / median(m.samples_ms) * 1e3
        except Exception as exc:
            if not lifecycle.is_out_of_memory(exc):
                raise
            return None  # the session ended and what the failed batch held went back (lifecycle.session)

    # frozen first: the runner's release (a collection) then runs inside the freeze and scans only what this made
    with long_lived_frozen(), lifecycle.prepared(probe[0], model, probe[1], config) as runner:
        search = saturating_batch(lambda batch: ips_at(runner, batch), growth=growth, max_batch=max_batch,
                                  time_budget_s=time_budget_s)
    search.probe = f"{probe[0]} {probe[1]}"
    return search
