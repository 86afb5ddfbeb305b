"""The decision commands end to end, on models the caller (``modelcost.api``) has already loaded: compare with
checkpointed report writing, recommend from a benchmark sweep, quantize then compare.

A report folder is written after every finished (backend, batch) pair, marked INCOMPLETE, without plots
(quick); the final write draws the plots and drops the mark. So a backend that takes the process down, or
Ctrl-C, leaves the report of everything that finished.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from modelcost.bench.base import PRECISIONS
from modelcost.bench.model import BenchModel
from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.text import utc_timestamp
from modelcost.core.types import BenchResult, CostReport, GpuSpec, RunReport
from modelcost.decide.compare import CompareOptions, Comparer, default_backends, model_side, onnx_op_counts
from modelcost.decide.recommend import Constraints, recommend


def parse_side(spec: str) -> tuple[str, str]:
    """'model.onnx@fp16' -> ('model.onnx', 'fp16'); 'model.onnx' -> ('model.onnx', 'fp32')."""
    head, sep, tail = spec.rpartition("@")
    if sep and tail.lower() in PRECISIONS and head:
        return head, tail.lower()
    return spec, "fp32"


def side_name(source: str, precision: str, other: str) -> str:
    name = Path(source.split(":", 1)[1] if source.startswith(("zoo:", "torchvision:")) else source).name
    for suffix in (".onnx", ".pt2", ".pt", ".py"):
        name = name.removesuffix(suffix)
    return f"{name}@{precision}" if source == other else name


class Checkpointer:
    """Writes the report folder: quick INCOMPLETE checkpoints during the run, the full report at the end."""

    def __init__(self, run: RunReport, cmp: Comparison | None, out: str | Path | None, write: bool = True) -> None:
        from modelcost.report.folder import default_dir

        self.run, self.cmp, self.write = run, cmp, write
        self.folder = Path(out) if out is not None else default_dir(run, cmp)
        self.done = 0

    def checkpoint(self) -> None:
        if not self.write:
            return
        from modelcost.report.folder import write_report_folder

        self.done += 1
        note = f"in progress: report written after {self.done} finished step(s); a later write replaces it"
        run = dataclasses.replace(self.run, complete=False, notes=[*self.run.notes, note],
                                  benchmarks=list(self.run.benchmarks))
        cmp = dataclasses.replace(self.cmp, complete=False) if self.cmp is not None else None
        write_report_folder(run, self.folder, comparison=cmp, plots=False)

    def final(self, recommendation: Recommendation | None = None, samples_csv: Path | None = None) -> Path | None:
        if not self.write:
            return None
        from modelcost.report.folder import write_report_folder

        return write_report_folder(self.run, self.folder, samples_csv, recommendation=recommendation,
                                   comparison=self.cmp)


def run_comparison(base: BenchModel, cand: BenchModel, *, sources: tuple[str, str], precisions: tuple[str, str],
                   costs: tuple[CostReport | None, CostReport | None], opts: CompareOptions,
                   gpu: GpuSpec | None = None, out: str | Path | None = None, write: bool = True,
                   command: str = "compare", progress: Callable[[str], None] | None = None,
                   run_notes: Sequence[str] = (), comparison_notes: Sequence[str] = (),
                   ) -> tuple[RunReport, Comparison, Path | None]:
    """Compare and write the report folder (``out``, default reports/<base>-vs-<cand>-<time>)."""
    from modelcost.bench.memory import device_info
    from modelcost.bench.runner import resolve_device
    from modelcost.core.errors import ModelcostError

    if opts.rounds < 2:
        raise ModelcostError("--rounds must be at least 2 (a confidence interval needs two pairs of blocks)")
    if not opts.batch_sizes or any(int(b) < 1 for b in opts.batch_sizes):
        raise ModelcostError("batch sizes must be positive integers, e.g. --batch-sizes 1,8")
    names = (side_name(sources[0], precisions[0], sources[1]), side_name(sources[1], precisions[1], sources[0]))
    sides = []
    for name, src, cost, prec, model in zip(names, sources, costs, precisions, (base, cand)):
        ops = onnx_op_counts(model.onnx_path) if model.kind == "onnx" and model.onnx_path else {}
        sides.append(model_side(name, src, cost, ops, prec))
    cmp = Comparison(base=sides[0], candidate=sides[1], notes=list(comparison_notes))
    device = resolve_device(opts.config.device)
    run = RunReport(cost=costs[0], gpu=gpu if device == "cuda" else None, device=device_info(device),
                    created=utc_timestamp(), command=command, notes=list(run_notes))
    for label, cost in zip(("base", "candidate"), costs):
        if cost is None:
            run.notes.append(f"no static analysis of the {label}: its storage and MACs are not shown")
    backends = list(opts.backends) if opts.backends else default_backends(base, cand, device)
    if not backends:
        raise ModelcostError(f"no backend runs both a {base.kind} and a {cand.kind} model on {device}; "
                             "see 'modelcost backends'")
    saver = Checkpointer(run, cmp, out, write)
    Comparer(base, cand, opts, run, cmp, run.gpu, costs, saver.checkpoint, progress).run_all(backends)
    return run, cmp, saver.final()


def run_recommendation(results: list[BenchResult], run: RunReport, constraints: Constraints,
                       objective: str = "throughput", out: str | Path | None = None, write: bool = False,
                       samples_csv: Path | None = None) -> tuple[Recommendation, Path | None]:
    """The recommendation over measured ``results`` and, when ``write``, the report folder with it."""
    rec = recommend(results, constraints, objective)
    folder = Checkpointer(run, None, out, write).final(rec, samples_csv) if write else None
    return rec, folder
