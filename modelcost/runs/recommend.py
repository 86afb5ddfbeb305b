"""``recommend``: the inference run (``runs.inference.run``: load, static or a note, plan, sweep, interrupt,
roofline), then the pure judging of ``decide.recommend`` and, when asked, the report folder with it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.core.trace import trace
from modelcost.runs.model import RunOptions, Shapes, options_for

RECOMMEND_BATCHES = (1, 8, 32)  # measured without batch sizes given (a GPU searches the saturating batch instead)


def recommend(
    source: Any, *, constraints: Any = None, objective: str = "throughput", backends: Sequence[str] | None = None,
    precisions: Sequence[str] | None = None, batch_sizes: Sequence[int] | None = None, input_shapes: Shapes = None,
    trust_pickle: bool = False, config: BenchConfig | None = None, out: str | None = None, write: bool = False,
    command: str = "recommend", options: RunOptions | None = None, predict: bool = False, run: Any = None,
) -> tuple[Any, Any, Any]:
    """Benchmark ``source`` and pick the backend + precision + batch size that meets ``constraints``
    (``modelcost.decide.constraints.Constraints``) best. Returns (RunReport, Recommendation, folder or None).
    Ctrl-C ends the sweep early: the recommendation is made from what finished, marked incomplete.
    ``options`` (the ``RunOptions`` analyze / bench take) replaces backends, precisions, batch_sizes,
    input_shapes, trust_pickle and config; ``run``: the RunReport to fill (the CLI's, so that an interrupted
    run still has one). The batch sizes: ``batch_sizes``, else the constraint's, else
    ``RECOMMEND_BATCHES`` (on a GPU, unless ``options.batch_search`` is "off", batch 1 and the saturating one).
    ``predict``: every candidate predicted first from this GPU's calibration, and only those that may still win
    within the predictor's validated error measured (decide/prescreen.py); each one skipped is a "screened" row
    whose reason holds its prediction; with an unknown error everything is measured, and the notes say so."""
    from modelcost.decide.constraints import Constraints, screening_rejects
    from modelcost.decide.recommend import recommend as pick
    from modelcost.runs.inference import run as run_inference
    from modelcost.runs.report import Checkpointer

    constraints = constraints or Constraints()
    if options is None:
        options = options_for(None, input_shapes, trust_pickle, bench=config or BenchConfig(),
                              backends=tuple(backends) if backends else None,
                              precisions=tuple(precisions) if precisions else None,
                              batch_sizes=tuple(batch_sizes) if batch_sizes else None)
    batches = options.batch_sizes or constraints.batch_sizes or RECOMMEND_BATCHES
    options = dataclasses.replace(options, command=options.command or command, batch_sizes=tuple(batches),
                                  static_required=False, rejects=screening_rejects(constraints),
                                  prescreen=(constraints, objective) if predict else options.prescreen,
                                  pick=lambda results: pick(results, constraints, objective))
    report = run_inference(source, options, run=run)
    rec = pick(report.benchmarks, constraints, objective)
    write = write or out is not None
    folder = Checkpointer(report, None, out, write).final(rec, options.bench.samples_csv) if write else None
    trace("recommendation made" + (" and report written" if folder is not None else ""))
    return report, rec, folder
