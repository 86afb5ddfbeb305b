"""BASE vs CANDIDATE on the same backends, batch sizes and inputs: static differences, the speedup's 95% confidence
interval from the interleaved timing (``speedup.py`` documents the statistics), accuracy of the candidate against
the base, and — when the candidate is not faster — the reasons found in what was measured.

The measuring is the interleaved A/B scenario of ``bench.interleaved`` (one lifecycle, the benchmark clock,
pinning, warm-up); this module judges what it hands over. Every finished (backend, batch) is added to the run at
once and ``checkpoint`` is called, so a crash or Ctrl-C loses nothing that finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.bench import registry
from modelcost.bench.base import BenchConfig
from modelcost.bench.interleaved import Interleaved, PairTiming, Side
from modelcost.bench.model import BenchModel
from modelcost.bench.stats import median
from modelcost.core.decisions import Comparison, ModelSide, SpeedupEstimate
from modelcost.core.text import first_line
from modelcost.core.types import (
    AccuracyStats,
    BenchResult,
    CostReport,
    GpuSpec,
    RunReport,
)
from modelcost.decide import diagnose
from modelcost.decide.speedup import speedup_ci, verdict

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


class Comparer:
    """Runs one comparison into ``run`` (benchmarks) and ``cmp`` (speed, accuracy, skipped): the interleaved
    scenario measures (``bench.interleaved``), this class judges and records what it hands over (a ``Listener``)."""

    def __init__(self, base: BenchModel, cand: BenchModel, opts: CompareOptions, run: RunReport, cmp: Comparison,
                 gpu: GpuSpec | None = None, costs: tuple[CostReport | None, CostReport | None] = (None, None),
                 checkpoint: Callable[[], None] | None = None, progress: Callable[[str], None] | None = None,
                 roofline: Callable[[list[BenchResult], CostReport | None, GpuSpec | None], Any] | None = None,
                 ) -> None:
        self.base, self.cand, self.opts, self.run, self.cmp = base, cand, opts, run, cmp
        self.gpu, self.costs = gpu, costs
        # places a result on the roofline (the hints read it): runs.gpu.place_on_roofline, its one owner
        self.roofline = roofline or (lambda results, cost, gpu: None)
        self.checkpoint = checkpoint or (lambda: None)
        self.progress = progress or (lambda _msg: None)
        self.base_by_batch: dict[str, dict[int, float]] = {}
        self.scenario = Interleaved(
            Side(base, cmp.base.name, cmp.base.precision, opts.base_precision),
            Side(cand, cmp.candidate.name, cmp.candidate.precision, opts.candidate_precision),
            opts.config, opts.batch_sizes, rounds=opts.rounds, runs_per_block=opts.runs_per_block,
            block_s=opts.block_s, device_name=run.device.name if run.device else "", compare_outputs=opts.data is None)

    def run_all(self, backends: Sequence[str]) -> None:
        try:
            for backend in backends:
                self.scenario.run_backend(backend, self, self._data_chunks if self.opts.data is not None else None)
        except KeyboardInterrupt:
            self.cmp.complete = False
            self.run.mark_interrupted()

    # -- the scenario's listener -------------------------------------------------------------------------------
    def skipped(self, what: str, why: str) -> None:
        self.cmp.skipped.append(f"{what}: {why}")
        self.checkpoint()

    def pair(self, timing: PairTiming) -> None:
        """One (backend, batch) measured: rooflines, the candidate's accuracy, the speedup estimate, recorded."""
        for role, r in timing.results.items():
            self._roofline(r, self.costs[0] if role == "base" else self.costs[1])
        base = timing.results["base"]
        self.base_by_batch.setdefault(timing.backend, {})[timing.batch] = base.latency_ms.p50  # type: ignore[union-attr]
        if timing.accuracy_problem is not None:
            self.cmp.notes.append(f"{timing.backend}: accuracy not compared: {timing.accuracy_problem}")
        elif timing.accuracy is not None:
            self._accuracy(timing.backend, timing.accuracy, f"generated inputs of batch {timing.batch} (standard "
                           "normal floats, valid integer ids), seeded")
        est = self._estimate(timing.backend, timing.batch, timing.blocks_ms, timing.runs_per_block, base,
                             timing.feeds)
        self.cmp.speed.append(est)
        self.run.benchmarks.extend(timing.results.values())
        self.checkpoint()

    def data_accuracy(self, backend: str, accuracy: AccuracyStats | None, problem: str | None, samples: int) -> None:
        if accuracy is None:
            self.cmp.notes.append(f"{backend}: accuracy not compared: {problem}")
            return
        self.cmp.accuracy.append((backend, accuracy))
        self.cmp.data = f"--data {self.opts.data} ({samples} samples)"
        self.checkpoint()

    # -- judging -----------------------------------------------------------------------------------------------
    def _accuracy(self, backend: str, accuracy: AccuracyStats, data: str) -> None:
        self.cmp.accuracy.append((backend, accuracy))
        if not self.cmp.data:
            self.cmp.data = data

    def _roofline(self, r: BenchResult, cost: CostReport | None) -> None:
        try:
            self.roofline([r], cost, self.gpu)  # runs.gpu.place_on_roofline: the one owner (incomplete counts: none)
        except Exception as exc:  # noqa: BLE001 - the roofline is extra; the timing stands without it
            r.notes.append(f"no roofline: {first_line(exc)}")

    def _data_chunks(self) -> Iterator[dict[str, Any]]:
        """``--data FILE.npz`` in chunks of the largest batch size."""
        from modelcost.decide.quantize import load_npz, npz_chunks

        data = load_npz(self.opts.data, [s.name for s in self.base.specs(1)])  # type: ignore[arg-type]
        return npz_chunks(data, max(self.opts.batch_sizes))

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

