"""BASE vs CANDIDATE on the same backends, batch sizes and inputs: static differences, interleaved timing with
a 95% confidence interval of the speedup (``speedup.py`` documents the statistics), accuracy of the candidate
against the base, and — when the candidate is not faster — the reasons found in what was measured.

Per (backend, batch): both models get a session on the same host inputs; each is warmed up
(``bench.timing.warm_up``); then ``rounds`` pairs of blocks run in ABBA order, each block ``runs_per_block``
calls timed one by one with the benchmark clock (CUDA events on the session's stream on a GPU,
``perf_counter`` on the CPU). Every finished (backend, batch) is added to the run at once and ``checkpoint``
is called, so a crash or Ctrl-C loses nothing that finished.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.bench import registry
from modelcost.bench.accuracy import compare as accuracy_compare
from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.bench.stats import latency_stats, median
from modelcost.bench.timing import (
    CudaEventClock,
    Measurement,
    WallClock,
    pinned_to_one_cpu,
    warm_up,
)
from modelcost.core.decisions import Comparison, ModelSide, SpeedupEstimate
from modelcost.core.errors import ModelcostError
from modelcost.core.text import first_line
from modelcost.core.types import (
    AccuracyStats,
    BenchResult,
    CostReport,
    GpuSpec,
    RunReport,
)
from modelcost.core.units import number
from modelcost.decide import diagnose
from modelcost.decide.speedup import interleaved_order, speedup_ci, verdict

_QUANT_OPS = ("QuantizeLinear", "DequantizeLinear", "ConvInteger", "MatMulInteger")


@dataclass
class CompareOptions:
    backends: Sequence[str] | None = None  # default: every available backend of the device that runs both models
    batch_sizes: Sequence[int] = (1,)
    rounds: int = 10  # pairs of blocks (A B or B A)
    runs_per_block: int | None = None  # default: as many calls as take about ``block_s``
    block_s: float = 0.2
    method: str = "t"
    data: str | Path | None = None  # accuracy on this .npz instead of the generated inputs
    base_precision: str = "fp32"  # what the backend is asked for; "fp32" runs an ONNX file as it is
    candidate_precision: str = "fp32"
    config: BenchConfig = field(default_factory=BenchConfig)


def onnx_op_counts(path: str | Path) -> dict[str, int]:
    import onnx

    counts: dict[str, int] = {}
    for node in onnx.load(str(path), load_external_data=False).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


def precision_of(cost: CostReport | None, op_counts: dict[str, int], requested: str = "fp32") -> str:
    """What a model computes in: a requested precision other than fp32, else int8 for quantized graphs, fp16
    when most weight bytes are float16, else fp32."""
    if requested != "fp32":
        return requested
    if any(op.startswith("QLinear") or op in _QUANT_OPS for op in op_counts):
        return "int8"
    if cost is not None and cost.storage.by_dtype:
        top = max(cost.storage.by_dtype.items(), key=lambda kv: kv[1])[0]
        if top in ("float16", "bfloat16"):
            return "fp16" if top == "float16" else "bf16"
    return "fp32"


def model_side(name: str, source: str, cost: CostReport | None, op_counts: dict[str, int],
               requested: str = "fp32") -> ModelSide:
    side = ModelSide(name=name, source=source, precision=precision_of(cost, op_counts, requested),
                     op_counts=dict(op_counts))
    if cost is not None:
        side.file_size_bytes = cost.storage.file_size_bytes or cost.model.file_size_bytes
        side.storage_bytes, side.storage_by_dtype = cost.storage.bytes, dict(cost.storage.by_dtype)
        side.params, side.macs, side.flops = cost.params.total, cost.compute.macs, cost.compute.flops
        side.macs_by_dtype = dict(cost.compute.macs_by_dtype)
        side.compute_complete = cost.compute.complete
    elif Path(source).is_file():
        side.file_size_bytes = Path(source).stat().st_size
    return side


def default_backends(base: BenchModel, cand: BenchModel, device: str) -> list[str]:
    return [n for n in registry.default_backends(device)
            if base.kind in registry.info(n).model_kinds and cand.kind in registry.info(n).model_kinds]


def _clock(session: Any) -> Any:
    if session.device == "cuda":
        import torch

        return CudaEventClock(torch, session.stream)
    return WallClock()


class Comparer:
    """Runs one comparison into ``run`` (benchmarks) and ``cmp`` (speed, accuracy, skipped)."""

    def __init__(self, base: BenchModel, cand: BenchModel, opts: CompareOptions, run: RunReport, cmp: Comparison,
                 gpu: GpuSpec | None = None, costs: tuple[CostReport | None, CostReport | None] = (None, None),
                 checkpoint: Callable[[], None] | None = None, progress: Callable[[str], None] | None = None) -> None:
        self.base, self.cand, self.opts, self.run, self.cmp = base, cand, opts, run, cmp
        self.gpu, self.costs = gpu, costs
        self.checkpoint = checkpoint or (lambda: None)
        self.progress = progress or (lambda _msg: None)
        self.base_by_batch: dict[str, dict[int, float]] = {}

    def session_precision(self, backend: str, role: str) -> str:
        """The precision asked of the backend: the one requested, or the side's own for a backend that builds from
        the model's precision (its registry row's ``model_precision``: TensorRT needs int8 / fp16 to build such an
        engine from a Q/DQ or fp16 model)."""
        requested = self.opts.base_precision if role == "base" else self.opts.candidate_precision
        side = self.cmp.base if role == "base" else self.cmp.candidate
        entry = registry.info(backend)
        if requested == "fp32" and entry.model_precision and side.precision in entry.precisions:
            return side.precision
        return requested

    def run_all(self, backends: Sequence[str]) -> None:
        try:
            for backend in backends:
                self._backend(backend)
        except KeyboardInterrupt:
            self.cmp.complete = False
            self.run.complete = False
            self.run.notes.append("interrupted by the user (Ctrl-C): the pairs that finished are reported")

    def _skip(self, what: str, why: str) -> None:
        self.cmp.skipped.append(f"{what}: {why}")
        self.checkpoint()

    def _backend(self, backend: str) -> None:
        reason = registry.unavailable_reason(backend)
        if reason is None:
            kinds = registry.info(backend).model_kinds
            if self.base.kind not in kinds or self.cand.kind not in kinds:
                reason = f"{backend} runs {' and '.join(kinds)} models only"
        precisions = {r: self.session_precision(backend, r) for r in ("base", "candidate")}
        for role, p in precisions.items():
            if reason is None:
                reason = registry.get_backend(backend).precision_reason(p)
        if reason is not None:
            self._skip(backend, reason)
            return
        runners: dict[str, Any] = {}
        try:
            for role, model in (("base", self.base), ("candidate", self.cand)):
                self.progress(f"{backend}: preparing the {role}")
                runners[role] = registry.get_backend(backend).prepare(model, precisions[role], self.opts.config)
        except Exception as exc:  # noqa: BLE001 - one backend's failure does not stop the others
            self._skip(backend, f"could not prepare the {role}: {first_line(exc)}")
            for r in runners.values():
                r.close()
            return
        try:
            for batch in self.opts.batch_sizes:
                self.progress(f"{backend} batch {batch}: interleaved timing")
                try:
                    self._pair(backend, batch, runners)
                except KeyboardInterrupt:
                    raise
                except Exception as exc:  # noqa: BLE001
                    self._skip(f"{backend} b{batch}", first_line(exc))
            self._accuracy_on_data(backend, runners)
        finally:
            for r in runners.values():
                r.close()

    def _pair(self, backend: str, batch: int, runners: dict[str, Any]) -> None:
        arrays, notes = self.base.host_inputs(batch)
        base_names = [s.name for s in self.base.specs(batch)]
        cand_names = [s.name for s in self.cand.specs(batch)]
        if sorted(base_names) != sorted(cand_names):
            raise ModelcostError(f"the models take different inputs ({base_names} vs {cand_names})")
        cand_arrays = [arrays[base_names.index(n)] for n in cand_names]
        sessions: dict[str, Any] = {}
        try:
            sessions["base"] = runners["base"].session(batch, arrays)
            sessions["candidate"] = runners["candidate"].session(batch, cand_arrays)
            self._time_pair(backend, batch, sessions, notes)
        finally:
            for s in sessions.values():
                s.close()

    def _time_pair(self, backend: str, batch: int, sessions: dict[str, Any], notes: list[str]) -> None:
        on_gpu = any(getattr(s, "device", "cpu") == "cuda" for s in sessions.values())
        with pinned_to_one_cpu(self.opts.config.pin_cpu and on_gpu):
            self._time_pair_pinned(backend, batch, sessions, notes)

    def _time_pair_pinned(self, backend: str, batch: int, sessions: dict[str, Any], notes: list[str]) -> None:
        cfg = self.opts.config
        clocks = {role: _clock(s) for role, s in sessions.items()}
        warm = {}
        for role in ("base", "candidate"):
            m = Measurement()
            warm_up(clocks[role], sessions[role].run, cfg, m)
            warm[role] = m
        per_call_ms = max(clocks[r].time_ms(sessions[r].run) for r in sessions)
        k = self.opts.runs_per_block or max(3, min(1000, math.ceil(self.opts.block_s * 1e3 / max(per_call_ms, 1e-6))))
        blocks: dict[str, list[float]] = {"base": [], "candidate": []}
        samples: dict[str, list[float]] = {"base": [], "candidate": []}
        for order in interleaved_order(self.opts.rounds):
            for role in order:
                block = [clocks[role].time_ms(sessions[role].run) for _ in range(k)]
                blocks[role].append(median(block))
                samples[role].extend(block)
        results = {role: self._result(backend, batch, role, sessions[role], samples[role], warm[role], k, notes)
                   for role in ("base", "candidate")}
        if batch == max(self.opts.batch_sizes) and self.opts.data is None:
            results["candidate"].accuracy = self._accuracy(backend, batch, sessions)
        feeds = dict(zip([s.name for s in self.base.specs(batch)], self.base.host_inputs(batch)[0]))  # same names
        est = self._estimate(backend, batch, blocks, k, results["base"], feeds)
        self.cmp.speed.append(est)
        self.run.benchmarks.extend(results.values())
        self.checkpoint()

    def _result(self, backend: str, batch: int, role: str, session: Any, samples: list[float], warm: Measurement,
                k: int, notes: list[str]) -> BenchResult:
        side = self.cmp.base if role == "base" else self.cmp.candidate
        lat = latency_stats(samples)
        r = BenchResult(backend=backend, precision=side.precision, batch_size=batch, status="ok", latency_ms=lat,
                        throughput_ips=batch / lat.p50 * 1e3, device=self.run.device.name if self.run.device else "",
                        timing=session.timing, notes=list(notes), role=role, model=side.name)
        r.extra.update({"runs_per_block": k, "blocks": self.opts.rounds,
                        "warmup_iters": warm.warmup_iters, "warmup_settled": warm.warmup_settled})
        if not warm.warmup_settled:
            r.notes.append(f"warm-up did not settle within {number(self.opts.config.warmup_max_s)} s")
        cost = self.costs[0] if role == "base" else self.costs[1]
        if self.gpu is not None and cost is not None:
            from modelcost.analysis.roofline import roofline_point

            try:
                r.roofline = roofline_point(cost, r, self.gpu)
            except Exception as exc:  # noqa: BLE001 - the roofline is extra; the timing stands without it
                r.notes.append(f"no roofline: {first_line(exc)}")
        if role == "base":
            self.base_by_batch.setdefault(backend, {})[batch] = lat.p50
        return r

    def _estimate(self, backend: str, batch: int, blocks: dict[str, list[float]], k: int,
                  base_result: BenchResult, feeds: dict[str, Any] | None = None) -> SpeedupEstimate:
        ci = speedup_ci(blocks["base"], blocks["candidate"], method=self.opts.method)
        faster = ci.significant and ci.ratio > 1
        hints: list[str] = []
        if not faster or ci.percent < 10:
            hints = self._hints(backend, batch, faster, median(blocks["base"]), base_result, feeds)
        return SpeedupEstimate(
            backend=backend, batch_size=batch, base_precision=self.cmp.base.precision,
            candidate_precision=self.cmp.candidate.precision, blocks=ci.pairs, runs_per_block=k,
            base_ms=median(blocks["base"]), candidate_ms=median(blocks["candidate"]), ratio=ci.ratio,
            percent=ci.percent, ci_low=ci.percent_low, ci_high=ci.percent_high, method=ci.method,
            verdict=verdict(ci), significant=ci.significant, hints=hints,
            base_blocks_ms=list(blocks["base"]), candidate_blocks_ms=list(blocks["candidate"]))

    def _hints(self, backend: str, batch: int, faster: bool, base_ms: float, base_result: BenchResult,
               feeds: dict[str, Any] | None) -> list[str]:
        facts = None
        if self.cand.kind == "onnx" and self.cand.onnx_path is not None:
            try:
                facts = diagnose.ort_graph_facts(self.cand.onnx_path, backend, feeds)
            except Exception as exc:  # noqa: BLE001 - a hint source that fails is named, not fatal
                self.cmp.notes.append(f"could not inspect the candidate's optimised graph on {backend}: "
                                      f"{first_line(exc)}")
        rl = base_result.roofline
        return diagnose.hints(backend=backend, batch_size=batch, candidate_precision=self.cmp.candidate.precision,
                              faster=faster, base_ms=base_ms, base_by_batch=self.base_by_batch.get(backend, {}),
                              bound=rl.bound if rl else None, over_bound=rl.measured_over_bound if rl else None,
                              facts=facts)

    def _accuracy(self, backend: str, batch: int, sessions: dict[str, Any]) -> AccuracyStats | None:
        try:
            sessions["base"].run()
            sessions["candidate"].run()
            acc = accuracy_compare(sessions["candidate"].outputs(), sessions["base"].outputs(), batch_size=batch,
                                   reference_name=f"base ({self.cmp.base.name}) on {backend}")
        except ValueError as exc:
            self.cmp.notes.append(f"{backend}: accuracy not compared: {exc}")
            return None
        self.cmp.accuracy.append((backend, acc))
        if not self.cmp.data:
            self.cmp.data = f"generated inputs of batch {batch} (standard normal floats, valid integer ids), seeded"
        return acc

    def _accuracy_on_data(self, backend: str, runners: dict[str, Any]) -> None:
        """Accuracy on ``--data FILE.npz``: both models on every sample, in chunks of the largest batch size."""
        if self.opts.data is None:
            return
        import numpy as np

        from modelcost.decide.quantize import load_npz, npz_chunks

        names = [s.name for s in self.base.specs(1)]
        data = load_npz(self.opts.data, names)
        n = len(next(iter(data.values())))
        outs: dict[str, list[list[Any]]] = {"base": [], "candidate": []}
        for chunk in npz_chunks(data, max(self.opts.batch_sizes)):
            for role in ("base", "candidate"):
                model = self.base if role == "base" else self.cand
                arrays = [np.ascontiguousarray(chunk[s.name]) for s in model.specs(1)]
                s = runners[role].session(len(arrays[0]), arrays)
                try:
                    s.run()
                    outs[role].append(s.outputs())
                finally:
                    s.close()
        joined = {r: [np.concatenate([o[i] for o in outs[r]]) for i in range(len(outs[r][0]))] for r in outs}
        try:
            acc = accuracy_compare(joined["candidate"], joined["base"], batch_size=n,
                                   reference_name=f"base ({self.cmp.base.name}) on {backend}")
        except ValueError as exc:
            self.cmp.notes.append(f"{backend}: accuracy not compared: {exc}")
            return
        self.cmp.accuracy.append((backend, acc))
        self.cmp.data = f"--data {self.opts.data} ({n} samples)"
        self.checkpoint()

