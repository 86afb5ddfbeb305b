"""One modelcost run: the model is loaded once and carried through every stage.

    from modelcost import api
    options = api.RunOptions(backends=("torch-cpu",), batch_sizes=(1, 8), profile_layers=True)
    run = api.run("path/to/model.py:make", options, progress=lambda stage, run: print(stage))
    run.cost.compute.flops, [r.latency_ms for r in run.benchmarks], run.what_if

``run(source, options, progress=None) -> RunReport`` is the order of work of ``analyze`` and ``bench``:

    load          once: a path / zoo name / ``file.py:factory``, an ``nn.Module`` (with ``options.example_inputs``)
                  or an ``onnx.ModelProto`` becomes a ``LoadedModel`` (``load``)
    static        params, storage, MACs/FLOPs, memory on the meta device (``run.cost``); a failure raises when
                  ``options.static_required``, else it becomes a run note
    benchmarks    every backend x precision x batch size (skipped with ``options.static_only``); Ctrl-C keeps
                  what finished and marks the run incomplete (``run.complete`` False), later stages are skipped
    roofline      this machine's GPU (NVML + cached measured ceilings) and each GPU result's roofline point
    layers        per-layer time of the profilable backends (``options.profile_layers``), on the same model
    what-if       the lower-bound latency on ``options.target_gpu`` (``run.what_if``)

``progress(stage, run)`` is called after each stage that ran, with the stage's name above ("static",
"benchmarks", "roofline", "layers", "what-if") and the run so far, and with "interrupted" when Ctrl-C stopped
the benchmarks; the CLI prints each part as it arrives. Nothing here prints or writes files: the caller renders
the finished ``RunReport`` and writes what was asked for.

``RunOptions`` is frozen and shared by analyze / bench / recommend / compare; ``api`` re-exports ``run``,
``load``, ``RunOptions`` and ``LoadedModel``. Layer: beside ``api`` (cli -> api/pipeline -> analysis / bench /
hardware -> loaders -> core); it never imports ``cli`` or ``api``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.bench.registry import profiled
from modelcost.core.errors import ModelcostError
from modelcost.core.text import utc_timestamp
from modelcost.core.trace import trace
from modelcost.core.types import CostReport, LayerTable, RunReport, WhatIf
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.shapes import parse_input_specs

Progress = Callable[[str, RunReport], None]

PROFILED = profiled()  # backend -> (framework, device) that bench.profile can attribute per layer (the registry)


@dataclass(frozen=True)
class RunOptions:
    """What one run does. ``batch_size`` binds the static analysis' batch; ``batch_sizes`` is the benchmark
    sweep (default: ``[batch_size or 1]``)."""

    command: str = ""  # written into the report ("analyze --backends torch-cpu ...")
    batch_size: int | None = None
    batch_sizes: tuple[int, ...] | None = None
    input_shapes: tuple[str, ...] | dict[str, tuple[int, ...]] | None = None  # "x=1x3x224x224" or name -> shape
    trust_pickle: bool = False
    attn_implementation: str | None = None  # a transformers model's attention (loaders/attention.py)
    example_inputs: Any = None  # with an nn.Module source: a tensor, a tuple of tensors or a dict name -> tensor
    static_only: bool = False
    static_required: bool = True  # False: a failed static analysis becomes a note (bench)
    backends: tuple[str, ...] | None = None  # None: every backend of the device
    precisions: tuple[str, ...] | None = None  # None: each backend's own
    bench: BenchConfig = field(default_factory=BenchConfig)
    target_gpu: str | None = None
    profile_layers: bool = False
    profile_runs: int = 10
    bench_progress: bool = False  # the benchmark runner's live progress bar on stderr
    # Issue 9. batch_search: "gpu" (default without --batch-sizes: on a GPU, batch 1 and the batch at which
    # throughput saturates, bench/batch_search.py), "on" (--batch-sizes auto: on any device) or "off".
    batch_search: str = "off"
    # screen: "gpu" (screen when the plan runs on a GPU), "on" or "off" (--no-screen: every config gets the full
    # measurement); bench/screening.py. ``rejects``: a constraint check for screening (recommend).
    screen: str = "gpu"
    rejects: Any = None
    # Without backends / precisions: False = the registry's default sweep (bench/registry.py), True = every
    # backend at every precision, each measured in full (no screening): --exhaustive
    exhaustive: bool = False
    predict: bool = False  # --predict: predicted latencies from the calibration (run.predictions; issue 28)

    def load_options(self) -> LoadOptions:
        """``input_shapes``: 'NAME=1x3x224x224' or 'NAME=1x128:int64' strings, or a {name: shape} dict. The
        batch dimension is bound to ``batch_size``, else to the first of ``batch_sizes`` (the static analysis is
        reported at that size; the benchmarks rebind it per size)."""
        shapes = self.input_shapes
        if isinstance(shapes, dict):
            parsed, dtypes = dict(shapes), {}
        else:
            parsed, dtypes = parse_input_specs(shapes)
        batch = self.batch_size or (self.batch_sizes[0] if self.batch_sizes else None)
        return LoadOptions(batch_size=batch, input_shapes=parsed, input_dtypes=dtypes, trust_pickle=self.trust_pickle,
                           attn_implementation=self.attn_implementation)

    def sweep(self) -> list[int]:
        return list(self.batch_sizes or [self.batch_size or 1])


@dataclass
class LoadedModel:
    """A model loaded once: the loader's object (``LoadedTorch`` / ``LoadedOnnx``), its static analysis and its
    benchmark view, each made on first use and kept."""

    source: str  # as the user named it (a label for a model object)
    kind: str  # "pytorch" | "onnx"
    loaded: Any
    name: str
    seed: int = 0
    reloadable: bool = False  # loaded from a path or name, so another process can load it again
    _cost: CostReport | None = None
    _bench: BenchModel | None = None
    _cleanup: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def cost(self) -> CostReport:
        if self._cost is None:
            if self.kind == "onnx":
                from modelcost.analysis.onnx_counter import analyze_onnx

                self._cost = analyze_onnx(self.loaded)
            else:
                from modelcost.analysis.torch_counter import analyze_torch

                self._cost = analyze_torch(self.loaded)
        return self._cost

    def bench_model(self) -> BenchModel:
        if self._bench is None:
            from modelcost.bench.model import from_loaded_torch, from_onnx_path

            if self.kind == "onnx":
                from modelcost.loaders.onnx_loader import bind_inputs

                loaded = self.loaded
                self._bench = from_onnx_path(loaded.path, lambda b: bind_inputs(loaded, b), name=self.name,
                                             source=self.source, seed=self.seed)
            else:
                self._bench = from_loaded_torch(self.loaded, name=self.name, source=self.source, seed=self.seed)
        return self._bench

    def close(self) -> None:
        if self._bench is not None:
            self._bench.close()
        for fn in self._cleanup:
            fn()
        self._cleanup.clear()


def load(source: Any, options: RunOptions | None = None) -> LoadedModel:
    """Load ``source`` once: a model path or name (``model.onnx``, ``file.py:factory``, ``zoo:NAME``, ``.pt2``,
    TorchScript), an ``nn.Module`` (inputs from ``options.example_inputs`` or ``options.input_shapes``) or an
    ``onnx.ModelProto``."""
    from modelcost.loaders import objects
    from modelcost.loaders.base import check_source

    options = options or RunOptions()
    seed = options.bench.seed
    load_opts = options.load_options()
    if isinstance(source, str):
        if check_source(source) == "onnx":  # a typo (zoo:nope) is said before torch is imported
            from modelcost.loaders.onnx_loader import load_onnx

            return LoadedModel(source, "onnx", load_onnx(source, load_opts), Path(source).stem, seed)
        from modelcost.loaders.torch_loader import load_torch

        return LoadedModel(source, "pytorch", load_torch(source, load_opts), _torch_name(source), seed, reloadable=True)
    if objects.is_onnx_proto(source):
        loaded, cleanup = objects.load_onnx_proto(source, load_opts)
        model = LoadedModel(loaded.source, "onnx", loaded, loaded.path.stem, seed)
        model._cleanup.append(cleanup)
        return model
    if objects.is_torch_module(source):
        loaded = objects.load_module(source, options.example_inputs, load_opts)
        return LoadedModel(loaded.source, "pytorch", loaded, loaded.name, seed)
    raise ModelcostError(f"cannot analyze a {type(source).__name__}: give a model path or name, an nn.Module "
                         "(with example inputs) or an onnx.ModelProto")


def _torch_name(source: str) -> str:
    if source.startswith(("zoo:", "torchvision:")):
        return source.split(":", 1)[1]
    return Path(source.split(":")[0]).stem


def run(source: Any, options: RunOptions | None = None, progress: Progress | None = None,
        *, run: RunReport | None = None) -> RunReport:
    """The whole run (see the module doc). ``source``: anything ``load`` takes, or a ``LoadedModel`` (not closed
    here). ``run``: a RunReport to fill (results land in it as they finish, so a caller keeps them on error)."""
    options = options or RunOptions()
    calibrations = _calibrations() if options.predict else []  # before any work: none is one line, now
    report = run if run is not None else RunReport(command=options.command, created=utc_timestamp())
    tell = progress or (lambda stage, r: None)
    model = source if isinstance(source, LoadedModel) else load(source, options)
    trace("model loaded")
    try:
        _static(model, options, report)
        trace("static analysis done")
        tell("static", report)
        if not options.static_only:
            _benchmarks(model, options, report, tell)
        if not report.complete:
            return report
        trace("benchmarks done")
        if report.benchmarks or options.target_gpu:
            attach_gpu(report, options.target_gpu)
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
        if options.predict and complete:
            attach_predictions(report, options.target_gpu, calibrations)
        return report
    finally:
        if not isinstance(source, LoadedModel):
            model.close()


def _static(model: LoadedModel, options: RunOptions, report: RunReport) -> None:
    if report.cost is not None:
        return
    try:
        report.cost = model.cost()
    except ModelcostError as exc:
        if options.static_required:
            raise
        report.notes.append(f"roofline: static analysis failed ({exc})")


class SweepPlan(NamedTuple):
    batches: list[int]
    screen: bool
    plan: Any  # bench.runner.Plan: what runs, made once (the compile child, the batch search and the sweep share it)


def sweep_plan(model: LoadedModel, options: RunOptions, report: RunReport) -> SweepPlan:
    """The batch sizes to measure and whether to screen (issue 9): ``options.sweep()``, or batch 1 and the batch
    at which throughput saturates (said in the run notes), and screening on a GPU unless turned off; with the plan
    (``bench.runner.make_plan``) that the sweep then runs."""
    from modelcost.bench.memory import create_cuda_context_in_background
    from modelcost.bench.runner import make_plan, warm_compile_workers

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


def _benchmarks(model: LoadedModel, options: RunOptions, report: RunReport, tell: Progress) -> None:
    from modelcost.bench.cache import run_started, usage_note
    from modelcost.bench.runner import run_benchmarks

    started = run_started()
    try:
        batches, screen, plan = sweep_plan(model, options, report)
        _, report.device = run_benchmarks(model.bench_model(), batch_sizes=batches, config=options.bench,
                                          results=report.benchmarks, progress=options.bench_progress,
                                          screen=screen, rejects=options.rejects, plan=plan)
    except KeyboardInterrupt:
        report.complete = False
        report.notes.append("interrupted: the benchmarks that finished are reported, the rest were not run")
        _cache_note(report, options, usage_note, started)
        tell("interrupted", report)
    else:
        _cache_note(report, options, usage_note, started)
        tell("benchmarks", report)


def _cache_note(report: RunReport, options: RunOptions, usage_note: Any, started: float) -> None:
    """Where the export / engine cache is and how large, when this run wrote or reused a file in it."""
    note = usage_note(options.bench.cache_dir, started)
    if note:
        report.notes.append(note)


# ---------------------------------------------------------------------------------------------------
# GPU, roofline, per-layer profiles, what-if


def this_gpu() -> Any:
    """This machine's GpuSpec with its cached measured ceilings; ModelcostError (with why) without one."""
    from modelcost.hardware.ceilings import with_cached_ceilings
    from modelcost.hardware.nvml import no_gpu_reason, query_gpu

    spec = query_gpu(0)
    if spec is None:
        raise ModelcostError(f"no NVIDIA GPU here ({no_gpu_reason()})")
    return with_cached_ceilings(spec)


def attach_gpu(report: RunReport, target_gpu: str | None = None, gpu: Any = None) -> RunReport:
    """Fill ``report.gpu`` (``gpu``, else this machine's) and every GPU result's roofline point. Without a GPU
    or a static analysis the report keeps a note saying why, and what to do about it."""
    from modelcost.analysis.roofline import roofline_point

    if gpu is None and report.gpu is None:
        try:
            gpu = this_gpu()
        except ModelcostError as exc:
            instead = (f"the what-if table estimates {target_gpu} instead" if target_gpu else
                       "for what-if figures name one: 'modelcost gpu --name \"H100 SXM\"', or --target-gpu with "
                       "analyze / bench (modelcost gpu --list)")
            report.notes.append(f"roofline: {exc}; {instead}")
            return report
    report.gpu = gpu or report.gpu
    if report.cost is None:
        report.notes.append("roofline: no static analysis (FLOPs) to place the benchmarks on the roofline")
        return report
    if not report.cost.compute.complete:
        why = "; ".join(report.cost.compute.incomplete_reasons) or "incomplete"
        report.notes.append(f"roofline: the static counts are incomplete ({why}), so no config is placed on it")
        return report
    for result in report.benchmarks:
        result.roofline = roofline_point(report.cost, result, report.gpu)  # type: ignore[arg-type]
    return report


def what_if_rows(report: RunReport, target_gpu: str) -> list[WhatIf]:
    """The lower bound on ``target_gpu`` per precision benchmarked (fp32 and fp16 without benchmarks), at the
    largest measured batch; this machine's GPU first when there is one."""
    from modelcost.analysis.roofline import precisions_of, what_if
    from modelcost.hardware.specs import spec_from_table

    assert report.cost is not None
    keys = precisions_of(report.benchmarks) or ["fp32", "fp16"]
    batch = max((r.batch_size for r in report.benchmarks if r.status == "ok"), default=None)
    target = spec_from_table(target_gpu)
    rows = [what_if(report.cost, target, k, batch) for k in keys]
    if report.gpu is not None and report.gpu.source == "nvml":
        rows = [what_if(report.cost, report.gpu, k, batch) for k in keys if k in report.gpu.peak_tflops] + rows
    return rows


def _calibrations() -> list[Any]:
    from modelcost.core.calibration import folder, load_all

    found = load_all()
    if not found:
        raise ModelcostError(f"--predict: no GPU calibration in {folder()}; run 'modelcost calibrate' on a GPU "
                             "first (the one to predict, or one like it)")
    return found


def attach_predictions(report: RunReport, target_gpu: str | None, calibrations: list[Any]) -> RunReport:
    """``report.predictions`` on this machine's GPU (beside its measurements) and on ``target_gpu``."""
    from modelcost.analysis.predict_transfer import predict_run
    from modelcost.hardware.specs import spec_from_table

    assert report.cost is not None
    here = report.gpu if report.gpu is not None else this_gpu_or_none()
    gpus = [here] if here is not None and here.source == "nvml" else []
    gpus += [spec_from_table(target_gpu)] if target_gpu else []
    if not gpus:
        report.notes.append("predict: no GPU to predict for (none here): name one with --target-gpu")
        return report
    report.predictions, notes = predict_run(report.cost, report.benchmarks, gpus, calibrations)
    report.notes += notes
    return report


def layer_tables(report: RunReport) -> list[LayerTable]:
    """The per-layer roofline of each profiled GPU result ("where the time goes vs where the FLOPs are"); with
    no profile, the static per-layer intensity against the first GPU result's ridge point."""
    from modelcost.analysis.roofline import layer_rooflines

    cost, gpu = report.cost, report.gpu
    if cost is None or gpu is None:
        return []
    tables = []
    for r in report.benchmarks:
        if r.layer_profile is not None and r.roofline is not None:
            rows = layer_rooflines(cost, gpu, r.precision, r.batch_size, r.layer_profile)
            title = f"Where the time goes vs where the FLOPs are: {r.backend} {r.precision} batch {r.batch_size}"
            tables.append(LayerTable(title, rows, r.layer_profile))
    first = next((r for r in report.benchmarks if r.roofline is not None), None)
    if not tables and first is not None and first.roofline is not None:
        rows = layer_rooflines(cost, gpu, first.precision, first.batch_size)
        tables.append(LayerTable(f"Per-layer intensity vs the {first.precision} ridge point "
                                 f"({first.roofline.ridge_point:.0f} FLOP/B), batch {first.batch_size}", rows))
    return tables


def attach_layer_profiles(model: BenchModel, report: RunReport, *, backends: Iterable[str] = tuple(PROFILED),
                          runs: int = 10, config: BenchConfig | None = None) -> RunReport:
    """Profile per layer, once per (backend, precision) at its largest measured batch, and attach the
    LayerProfile to that BenchResult. Eager PyTorch and ONNX Runtime (fp32) only: compiled, graph-replayed and
    TensorRT configs have no per-module attribution. A failure becomes a note on the result."""
    from modelcost.bench.profile import profile_model
    from modelcost.core.text import first_line

    chosen: dict[tuple[str, str], Any] = {}
    for r in report.benchmarks:
        if r.status == "ok" and r.backend in backends and r.backend in PROFILED:
            if PROFILED[r.backend][0] == "onnx" and r.precision != "fp32":
                continue  # the benchmark ran an fp16 copy of the model; the profile would time the fp32 one
            key = (r.backend, r.precision)
            if key not in chosen or r.batch_size > chosen[key].batch_size:
                chosen[key] = r
    config = config or BenchConfig()
    for (backend, precision), r in chosen.items():
        framework, device = PROFILED[backend]
        try:
            r.layer_profile = profile_model(model, framework=framework, device=device, precision=precision,
                                            batch_size=r.batch_size, runs=runs, config=config)
        except Exception as exc:  # noqa: BLE001 - a profile is extra; the benchmark stands without it
            r.notes.append(f"per-layer profile failed: {first_line(exc, 160)}")
    return report


def this_gpu_or_none() -> Any:
    """This machine's GpuSpec (with cached measured ceilings), or None without a CUDA GPU (or when NVML fails:
    the roofline is then left out, nothing else)."""
    from modelcost.bench.memory import cuda_available

    if not cuda_available():
        return None
    try:
        return this_gpu()
    except Exception:  # noqa: BLE001
        return None
