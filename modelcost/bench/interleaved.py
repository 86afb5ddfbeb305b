"""The interleaved A/B scenario: BASE and CANDIDATE on one backend, the same batch sizes and host inputs, timed in
alternating blocks so that a drift of the machine falls on both alike (``decide.compare`` judges the figures).

Per backend, on the lifecycle (``bench.lifecycle``): availability for both models at the precisions asked, a runner
per model, then per batch size a session per model on the same host inputs. Each session is warmed up
(``timing.warm_up``); then ``rounds`` pairs of blocks run in ABBA order (``interleaved_order``), each block
``runs_per_block`` calls timed one by one with the session's clock (CUDA events on the session's stream on a GPU,
``perf_counter`` on the CPU), the process pinned to one CPU on a GPU. At the largest batch (without a data file)
the candidate's outputs are compared with the base's. Every finished (backend, batch) goes to the listener at
once, so a crash or Ctrl-C loses nothing that finished.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from modelcost.bench import lifecycle, registry
from modelcost.bench.accuracy import compare as accuracy_compare
from modelcost.bench.base import BenchConfig, Runner, Session
from modelcost.bench.memory import long_lived_frozen
from modelcost.bench.model import BenchModel
from modelcost.bench.stats import latency_stats, median
from modelcost.bench.timing import Measurement, warm_up
from modelcost.core.errors import ModelcostError
from modelcost.core.text import first_line
from modelcost.core.types import AccuracyStats, BenchResult
from modelcost.core.units import number

ROLES = ("base", "candidate")


def interleaved_order(rounds: int) -> list[tuple[str, str]]:
    """The block order: ("base", "candidate"), then ("candidate", "base"), alternating (ABBA: a linear drift of
    the machine falls on both sides alike within each two pairs)."""
    return [("base", "candidate") if i % 2 == 0 else ("candidate", "base") for i in range(rounds)]


@dataclass(frozen=True)
class Side:
    """One model of the comparison: what it is called, the precision it computes in (``precision``, the label of
    its results) and the one asked of the backend (``requested``; fp32 runs an ONNX file as it is)."""

    model: BenchModel
    name: str
    precision: str
    requested: str = "fp32"

    def asked_of(self, backend: str) -> str:
        """The precision asked of ``backend``: the requested one, or the side's own for a backend whose registry row
        builds from the model's precision (``model_precision``: a TensorRT engine of a Q/DQ model needs int8)."""
        entry = registry.info(backend)
        if self.requested == "fp32" and entry.model_precision and self.precision in entry.precisions:
            return self.precision
        return self.requested


@dataclass
class PairTiming:
    """One (backend, batch) timed: both sides' results, their block medians, and the candidate's accuracy."""

    backend: str
    batch: int
    results: dict[str, BenchResult]
    blocks_ms: dict[str, list[float]]
    runs_per_block: int
    accuracy: AccuracyStats | None = None
    accuracy_problem: str | None = None  # why the outputs were not compared (different shapes, ...)
    feeds: dict[str, Any] = field(default_factory=dict)  # the base's host inputs by name


class Listener(Protocol):
    """What the scenario tells its caller (``decide.compare.Comparer`` judges and records it)."""

    def progress(self, message: str) -> None: ...

    def skipped(self, what: str, why: str) -> None: ...

    def pair(self, timing: PairTiming) -> None: ...

    def data_accuracy(self, backend: str, accuracy: AccuracyStats | None, problem: str | None, samples: int) -> None:
        ...


@dataclass
class Interleaved:
    base: Side
    candidate: Side
    config: BenchConfig
    batch_sizes: Sequence[int]
    rounds: int = 10
    runs_per_block: int | None = None  # default: as many calls as take about ``block_s``
    block_s: float = 0.2
    device_name: str = ""
    compare_outputs: bool = True  # the candidate's outputs against the base's at the largest batch

    def sides(self) -> dict[str, Side]:
        return {"base": self.base, "candidate": self.candidate}

    def run_backend(self, backend: str, listener: Listener,
                    data_chunks: Callable[[], Iterable[dict[str, Any]]] | None = None) -> None:
        """Every batch size on ``backend``, then the accuracy on ``data_chunks`` (a data file's samples in chunks)."""
        asked = {role: side.asked_of(backend) for role, side in self.sides().items()}
        reason = lifecycle.why_not(backend, [self.base.model.kind, self.candidate.model.kind], list(asked.values()))
        if reason is not None:
            listener.skipped(backend, reason)
            return
        with contextlib.ExitStack() as stack:
            stack.enter_context(long_lived_frozen())  # the collections of lifecycle.release scan only this backend's
            runners: dict[str, Runner] = {}
            for role, side in self.sides().items():
                listener.progress(f"{backend}: preparing the {role}")
                try:
                    runners[role] = stack.enter_context(lifecycle.prepared(backend, side.model, asked[role],
                                                                           self.config))
                except Exception as exc:  # noqa: BLE001 - one backend's failure does not stop the others
                    listener.skipped(backend, f"could not prepare the {role}: {first_line(exc)}")
                    return
            for batch in self.batch_sizes:
                listener.progress(f"{backend} batch {batch}: interleaved timing")
                try:
                    listener.pair(self.pair(backend, batch, runners))
                except Exception as exc:  # noqa: BLE001 - the next batch size may run
                    listener.skipped(f"{backend} b{batch}", first_line(exc))
            if data_chunks is not None:
                self._data_accuracy(backend, runners, data_chunks(), listener)

    def pair(self, backend: str, batch: int, runners: dict[str, Runner]) -> PairTiming:
        """Both sessions at ``batch`` on the same host inputs, timed by ``time_pair``."""
        base, cand = self.base.model, self.candidate.model
        arrays, notes = base.host_inputs(batch)
        base_names = [s.name for s in base.specs(batch)]
        cand_names = [s.name for s in cand.specs(batch)]
        if sorted(base_names) != sorted(cand_names):
            raise ModelcostError(f"the models take different inputs ({base_names} vs {cand_names})")
        cand_arrays = [arrays[base_names.index(n)] for n in cand_names]
        with lifecycle.session(runners["base"], batch, arrays) as s_base, \
                lifecycle.session(runners["candidate"], batch, cand_arrays) as s_cand:
            timing = self.time_pair(backend, batch, {"base": s_base, "candidate": s_cand}, notes)
        timing.feeds = dict(zip(base_names, arrays))
        return timing

    def time_pair(self, backend: str, batch: int, sessions: dict[str, Session], notes: list[str]) -> PairTiming:
        """Warm-up of each, then the ABBA blocks; pinned to one CPU on a GPU (``lifecycle.pinned_for``)."""
        with lifecycle.pinned_for(list(sessions.values()), self.config):
            clocks = {role: lifecycle.session_clock(s) for role, s in sessions.items()}
            warm = {}
            for role in ROLES:
                warm[role] = Measurement()
                warm_up(clocks[role], sessions[role].run, self.config, warm[role])
            per_call_ms = max(clocks[r].time_ms(sessions[r].run) for r in sessions)
            k = self.runs_per_block or max(3, min(1000, math.ceil(self.block_s * 1e3 / max(per_call_ms, 1e-6))))
            blocks: dict[str, list[float]] = {"base": [], "candidate": []}
            samples: dict[str, list[float]] = {"base": [], "candidate": []}
            for order in interleaved_order(self.rounds):
                for role in order:
                    block = [clocks[role].time_ms(sessions[role].run) for _ in range(k)]
                    blocks[role].append(median(block))
                    samples[role].extend(block)
            results = {role: self._result(backend, batch, role, sessions[role], samples[role], warm[role], k, notes)
                       for role in ROLES}
            timing = PairTiming(backend, batch, results, blocks, k)
            if self.compare_outputs and batch == max(self.batch_sizes):
                timing.accuracy, timing.accuracy_problem = self._accuracy(backend, batch, sessions)
                results["candidate"].accuracy = timing.accuracy
        return timing

    def _result(self, backend: str, batch: int, role: str, session: Session, samples: list[float],
                warm: Measurement, k: int, notes: list[str]) -> BenchResult:
        side = self.sides()[role]
        lat = latency_stats(samples)
        r = BenchResult(backend=backend, precision=side.precision, batch_size=batch, status="ok", latency_ms=lat,
                        throughput_ips=batch / lat.p50 * 1e3, device=self.device_name, timing=session.timing,
                        notes=list(notes), role=role, model=side.name)
        r.extra.runs_per_block, r.extra.blocks = k, self.rounds
        r.extra.warmup_iters, r.extra.warmup_settled = warm.warmup_iters, warm.warmup_settled
        if not warm.warmup_settled:
            r.notes.append(f"warm-up did not settle within {number(self.config.warmup_max_s)} s")
        return r

    def _accuracy(self, backend: str, batch: int, sessions: dict[str, Session]
                  ) -> tuple[AccuracyStats | None, str | None]:
        try:
            sessions["base"].run()
            sessions["candidate"].run()
            return accuracy_compare(sessions["candidate"].outputs(), sessions["base"].outputs(), batch_size=batch,
                                    reference_name=f"base ({self.base.name}) on {backend}"), None
        except ValueError as exc:
            return None, str(exc)

    def _data_accuracy(self, backend: str, runners: dict[str, Runner], chunks: Iterable[dict[str, Any]],
                       listener: Listener) -> None:
        """Both models on every sample of the data, chunk by chunk; the candidate's outputs against the base's."""
        import numpy as np

        outs: dict[str, list[list[Any]]] = {"base": [], "candidate": []}
        n = 0
        for chunk in chunks:
            n += len(next(iter(chunk.values())))
            for role, side in self.sides().items():
                arrays = [np.ascontiguousarray(chunk[s.name]) for s in side.model.specs(1)]
                with lifecycle.session(runners[role], len(arrays[0]), arrays) as s:
                    s.run()
                    outs[role].append(s.outputs())
        joined = {r: [np.concatenate([o[i] for o in outs[r]]) for i in range(len(outs[r][0]))] for r in outs}
        try:
            acc = accuracy_compare(joined["candidate"], joined["base"], batch_size=n,
                                   reference_name=f"base ({self.base.name}) on {backend}")
        except ValueError as exc:
            listener.data_accuracy(backend, None, str(exc), n)
            return
        listener.data_accuracy(backend, acc, None, n)
