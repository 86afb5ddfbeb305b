"""``analyze`` / ``bench``: the model is loaded once and carried through every stage.

    from modelcost import api
    options = api.RunOptions(backends=("torch-cpu",), batch_sizes=(1, 8), profile_layers=True)
    run = api.run("path/to/model.py:make", options, on_stage=lambda stage, run: print(stage))
    run.cost.compute.flops, [r.latency_ms for r in run.benchmarks], run.what_if

``run(source, options, on_stage=None) -> RunReport`` is the order of work of ``analyze``, ``bench`` and
``recommend``:

    load          once (``runs.model.load``)
    static        params, storage, MACs/FLOPs, memory on the meta device (``run.cost``); a failure raises when
                  ``options.static_required``, else it becomes a run note
    benchmarks    every backend x precision x batch size (skipped with ``options.static_only``), then the
                  finalists of the pick measured again in fresh sessions (``runs.finalists``); Ctrl-C keeps
                  what finished and marks the run interrupted (``run.interrupted_by``), later stages are skipped
    roofline      this machine's GPU and each GPU result's roofline point (``runs.gpu``)
    layers        per-layer time of the profilable backends (``options.profile_layers``), on the same model
    what-if       the lower-bound latency on ``options.target_gpu`` (``run.what_if``)

``on_stage(stage, run)`` is called after each stage that ran, with the stage's name above ("static",
"benchmarks", "roofline", "layers", "what-if") and the run so far, with "finalists" when the finalists' repeats
start (``run.finalist_repeats`` names them), and with "interrupted" when Ctrl-C stopped the benchmarks; the CLI
prints each part as it arrives. Nothing here prints or writes files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.text import utc_timestamp
from modelcost.core.trace import trace
from modelcost.core.types import BenchResult, DeviceInfo, RunReport
from modelcost.runs import predict
from modelcost.runs.gpu import PROFILED, attach_gpu, attach_layer_profiles, layer_tables, what_if_rows
from modelcost.runs.model import LoadedModel, RunOptions, Shapes, bench_model, load, static_or_note

OnStage = Callable[[str, RunReport], None]  # (stage name, the run so far): the CLI prints each part


def run(source: Any, options: RunOptions | None = None, on_stage: OnStage | None = None,
        *, run: RunReport | None = None) -> RunReport:
    """The whole run (see the module doc). ``source``: anything ``load`` takes, or a ``LoadedModel`` (not closed
    here). ``run``: a RunReport to fill (results land in it as they finish, so a caller keeps them on error)."""
    options = options or RunOptions()
    # before any work: none is one line, now
    found = predict.calibrations() if options.predict or options.prescreen else []
    report = run if run is not None else RunReport(command=options.command, created=utc_timestamp())
    tell = on_stage or (lambda stage, r: None)
    model = source if isinstance(source, LoadedModel) else load(source, options)
    trace("model loaded")
    try:
        if report.cost is None:
            report.cost = static_or_note(model, report.notes, required=options.static_required)
        trace("static analysis done")
        tell("static", report)
        if not options.static_only:
            _benchmarks(model, options, report, tell, found)
        if not report.complete:
            return report
        trace("benchmarks done")
        if report.benchmarks or options.target_gpu:
            attach_gpu(report, target_gpu=options.target_gpu)
            trace("roofline done")
            tell("roofline", report)
        if options.profile_layers and any(r.status == "ok" for r in report.benchmarks):
            attach_layer_profiles(model.bench_model(), report, backends=tuple(PROFILED), runs=options.profile_runs,
                                  config=options.bench)
            tell("layers", report)
        complete = report.cost is not None and report.cost.compute.complete
        report.layer_tables = layer_tables(report) if complete else []
        if options.target_gpu and complete:
            report.what_if = what_if_rows(report, options.target_gpu)
            tell("what-if", report)
        if options.predict and report.cost is not None:
            predict.attach_predictions(report, options.target_gpu, found)  # an incomplete count: a note why not
        return report
    finally:
        if not isinstance(source, LoadedModel):
            model.close()


class SweepPlan(NamedTuple):
    batches: list[int]
    screen: bool
    plan: Any  # bench.plan.Plan: what runs, made once (the compile child, the batch search and the sweep share it)


def sweep_plan(model: LoadedModel, options: RunOptions, report: RunReport) -> SweepPlan:
    """The batch sizes to measure and whether to screen (issue 9): ``options.sweep()``, or batch 1 and the batch
    at which throughput saturates (said in the run notes), and screening on a GPU unless turned off; with the plan
    (``bench.plan.make_plan``) that the sweep then runs."""
    from modelcost.bench.memory import create_cuda_context_in_background
    from modelcost.bench.plan import make_plan, warm_compile_workers

    batches = options.sweep()
    plan = make_plan(model.bench_model(), options.backends, options.precisions, options.bench, options.exhaustive)
    trace(f"benchmark plan made ({len(plan.runnable)} configs on {plan.device})")
    if plan.device == "cuda" and plan.runnable:
        create_cuda_context_in_background()
    note = plan.left_out_note()
    if note and note not in report.notes:
        report.notes.append(note)
    warm_compile_workers(plan)  # inductor's worker processes start while the batch search and others run
    trace("compile workers started")
    screen = not options.exhaustive and (options.screen == "on" or (options.screen == "gpu" and plan.device == "cuda"))
    searching = options.batch_search == "on" or (options.batch_search == "gpu" and plan.device == "cuda")
    ahead = _compile_ahead(model, options, plan, [1] if searching else batches, more=searching)
    if searching:
        from modelcost.bench.batch_search import find_throughput_batch

        search = find_throughput_batch(model.bench_model(), plan.runnable, options.bench, device=plan.device)
        if search is not None:
            report.notes.append(search.describe())
            trace(f"batch search: {search.describe()}")
            batches = sorted({1, search.batch})
        if ahead is not None:
            ahead.add_batches([b for b in batches if b != 1], last=True)
    return SweepPlan(batches, screen, plan)


def _compile_ahead(model: LoadedModel, options: RunOptions, plan: Any, batches: list[int], more: bool) -> Any:
    """Start compiling the plan's torch.compile graphs in a background process (bench/compile_ahead.py); the
    sweep finds the handle on the bench model."""
    from modelcost.bench import compile_ahead

    bench = model.bench_model()
    source = model.source if model.reloadable and options.bench.background else None
    ahead = compile_ahead.start(bench, source, options.load_options(), plan.runnable, plan.device, options.bench,
                                batches, more_batches=more)
    if ahead is not None:
        trace("torch.compile started in a background process")
        if not more:
            ahead.add_batches([], last=True)
    bench.compile_ahead = ahead
    return ahead


def _benchmarks(model: LoadedModel, options: RunOptions, report: RunReport, tell: OnStage,
                found: list[Any] | None = None) -> None:
    from modelcost.bench.cache import run_started, usage_note
    from modelcost.bench.runner import run_benchmarks

    from modelcost.runs.finalists import repeat_finalists

    started = run_started()
    try:
        batches, screen, plan = sweep_plan(model, options, report)
        if options.prescreen is not None:
            predict.prescreen_plan(report, plan, batches, found or [], *options.prescreen)
        swept = time.monotonic()
        _, report.device = run_benchmarks(model.bench_model(), batch_sizes=batches, config=options.bench,
                                          results=report.benchmarks, progress=options.live_bar,
                                          screen=screen, rejects=options.rejects, plan=plan)
        repeat_finalists(model.bench_model(), report, options, time.monotonic() - swept,
                         on_start=lambda: tell("finalists", report))
        trace(f"finalists: {report.finalist_repeats}")
    except KeyboardInterrupt:
        report.mark_interrupted()
        _cache_note(report, options, usage_note, started)
        tell("interrupted", report)
    else:
        _cache_note(report, options, usage_note, started)
        tell("benchmarks", report)


def _cache_note(report: RunReport, options: RunOptions, usage_note: Any, started: float) -> None:
    """Where the export / engine cache is and how large, when this run wrote or reused a file in it: the typed
    ``cache_summary`` (the console prints it under the answer) and the same line as a note (the reports)."""
    note = usage_note(options.bench.cache_dir, started)
    if note:
        report.cache_summary = note
        report.notes.append(note)




def run_benchmarks(
    source: str | BenchModel, *, backends: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
    batch_sizes: Sequence[int] | None = None, batch_size: int | None = None, input_shapes: Shapes = None,
    trust_pickle: bool = False, config: BenchConfig | None = None, progress: bool = False,
    results: list[BenchResult] | None = None, exhaustive: bool = False,
) -> tuple[list[BenchResult], DeviceInfo]:
    """Benchmark ``source`` on ``backends`` x ``precisions`` (neither given: the default sweep of the registry,
    or every backend at every precision with ``exhaustive``) x ``batch_sizes`` (default: [batch_size or 1]).
    Returns the results (unavailable and failed configs included, with their reason) and the device. Pass
    ``results`` to keep partial results; ``progress``: the live progress bar on stderr."""
    from modelcost.bench.runner import run_benchmarks as sweep

    batches = list(batch_sizes or [batch_size or 1])
    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(
        source, batch_size=batches[0], input_shapes=input_shapes, trust_pickle=trust_pickle, seed=config.seed)
    try:
        return sweep(model, backends=backends, precisions=precisions, batch_sizes=batches, config=config,
                     results=results, progress=progress, exhaustive=exhaustive)
    finally:
        model.close()


def benchmark(source: str | BenchModel, **kwargs: Any) -> list[BenchResult]:
    """``run_benchmarks`` without the device: the list of BenchResult."""
    return run_benchmarks(source, **kwargs)[0]
