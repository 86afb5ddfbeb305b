"""The library facade: what the CLI calls and what users import.

    >>> from modelcost import api
    >>> report = api.analyze_static("zoo:resnet50", batch_size=1)
    >>> report.compute.macs
    4089184256

A whole run (what ``modelcost analyze`` / ``bench`` do) is ``api.run(source, api.RunOptions(...), progress=...)``:
see ``modelcost.pipeline``. Sources may be paths / names, an ``nn.Module`` or an ``onnx.ModelProto``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.trace import trace
from modelcost.core.types import (
    BenchResult,
    CostReport,
    DeviceInfo,
    GpuSpec,
    LayerProfile,
    LayerRoofline,
    RooflinePoint,
    RunReport,
    WhatIf,
)
from modelcost.loaders.base import check_source, source_kind
from modelcost.pipeline import PROFILED, LoadedModel, RunOptions, load, run

__all__ = [
    "PROFILED",
    "LoadedModel",
    "RunOptions",
    "analyze_static",
    "attach_layer_profiles",
    "attach_roofline",
    "bench_model",
    "benchmark",
    "compare",
    "gpu_spec",
    "layer_roofline",
    "load",
    "measure_ceilings",
    "profile_layers",
    "quantize",
    "recommend",
    "roofline",
    "run",
    "run_benchmarks",
    "what_if",
    "write_report",
]

Shapes = Iterable[str] | dict[str, tuple[int, ...]] | None


def _options(batch_size: int | None, input_shapes: Shapes, trust_pickle: bool, **kw: Any) -> RunOptions:
    shapes = input_shapes if isinstance(input_shapes, dict) or input_shapes is None else tuple(input_shapes)
    return RunOptions(batch_size=batch_size, input_shapes=shapes, trust_pickle=trust_pickle, **kw)


def load_options(batch_size: int | None = None, input_shapes: Shapes = None, trust_pickle: bool = False) -> Any:
    """The loaders' ``LoadOptions`` for a batch size / input shapes (``NAME=1x3x224x224`` strings or a dict)."""
    return _options(batch_size, input_shapes, trust_pickle).load_options()


def analyze_static(
    source: Any,
    *,
    batch_size: int | None = None,
    input_shapes: Shapes = None,
    trust_pickle: bool = False,
    example_inputs: Any = None,
) -> CostReport:
    """Count parameters, storage, MACs/FLOPs and memory of ``source`` without running it or reading weights.
    ``source``: a model path or name, an ``nn.Module`` (inputs: ``example_inputs`` or ``input_shapes``) or an
    ``onnx.ModelProto``."""
    model = load(source, _options(batch_size, input_shapes, trust_pickle, example_inputs=example_inputs))
    try:
        return model.cost()
    finally:
        model.close()


# ---------------------------------------------------------------------------------------------------
# Benchmarks (issue 3): loaders -> bench.model -> bench.runner


def bench_model(
    source: Any,
    *,
    batch_size: int | None = None,
    input_shapes: Shapes = None,
    trust_pickle: bool = False,
    seed: int = 0,
    example_inputs: Any = None,
) -> BenchModel:
    """Load ``source`` for benchmarking: an ONNX file runs on the ONNX Runtime / TensorRT backends, a PyTorch
    model (instantiated with seeded random weights) on every backend (exported to ONNX when one asks)."""
    options = _options(batch_size, input_shapes, trust_pickle, example_inputs=example_inputs,
                       bench=BenchConfig(seed=seed))
    model = load(source, options)
    if model._cleanup:  # a ModelProto's temporary file lives as long as the process
        import atexit

        for fn in model._cleanup:
            atexit.register(fn)
    return model.bench_model()


def run_benchmarks(
    source: str | BenchModel,
    *,
    backends: Sequence[str] | None = None,
    precisions: Sequence[str] | None = None,
    batch_sizes: Sequence[int] | None = None,
    batch_size: int | None = None,
    input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None,
    trust_pickle: bool = False,
    config: BenchConfig | None = None,
    progress: bool = False,
    results: list[BenchResult] | None = None,
    exhaustive: bool = False,
) -> tuple[list[BenchResult], DeviceInfo]:
    """Benchmark ``source`` on ``backends`` x ``precisions`` (neither given: the default sweep of the registry,
    or every backend at every precision with ``exhaustive``) x ``batch_sizes`` (default: [batch_size or 1]).
    Returns the results (unavailable and failed configs included, with their reason) and the device. Pass
    ``results`` to keep partial results."""
    from modelcost.bench.runner import run_benchmarks as run

    batches = list(batch_sizes or [batch_size or 1])
    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(
        source, batch_size=batches[0], input_shapes=input_shapes, trust_pickle=trust_pickle, seed=config.seed)
    try:
        return run(model, backends=backends, precisions=precisions, batch_sizes=batches, config=config,
                   results=results, progress=progress, exhaustive=exhaustive)
    finally:
        model.close()


def benchmark(source: str | BenchModel, **kwargs: Any) -> list[BenchResult]:
    """``run_benchmarks`` without the device: the list of BenchResult."""
    return run_benchmarks(source, **kwargs)[0]


# ---------------------------------------------------------------------------------------------------
# GPU limits and roofline (issue 4): hardware -> analysis.roofline; bench.profile for per-layer time


def gpu_spec(name: str | None = None, *, index: int = 0, cached_ceilings: bool = True) -> GpuSpec:
    """A GPU's limits. ``name``: from the built-in table (what-if; no GPU needed). None: this machine's GPU
    ``index`` from NVML + CUDA properties, with its cached measured ceilings (ModelcostError if there is none)."""
    from modelcost.core.errors import ModelcostError
    from modelcost.hardware.ceilings import with_cached_ceilings
    from modelcost.hardware.nvml import no_gpu_reason, query_gpu
    from modelcost.hardware.specs import spec_from_table

    if name:
        return spec_from_table(name)
    spec = query_gpu(index)
    if spec is None:
        raise ModelcostError(f"no NVIDIA GPU here ({no_gpu_reason()}); for what-if figures name one: "
                             "'modelcost gpu --name \"H100 SXM\"', or --target-gpu with analyze / bench "
                             "(modelcost gpu --list)")
    return with_cached_ceilings(spec) if cached_ceilings else spec


def measure_ceilings(
    gpu: GpuSpec | None = None, *, index: int = 0, refresh: bool = False, cache_dir: str | None = None,
    progress: Any = None,
) -> GpuSpec:
    """Measured matmul (per precision) and copy ceilings of this GPU, cached per GPU + driver."""
    from modelcost.hardware.ceilings import measure_ceilings as measure

    gpu = gpu or gpu_spec(index=index, cached_ceilings=False)
    return measure(gpu, index=index, refresh=refresh, directory=cache_dir, progress=progress)


def roofline(cost: CostReport, results: Sequence[BenchResult], gpu: GpuSpec) -> list[RooflinePoint | None]:
    """The roofline point of each result (None for CPU, failed or unmeasured ones)."""
    from modelcost.analysis.roofline import roofline_points

    return roofline_points(cost, results, gpu)


def what_if(cost: CostReport, target_gpu: str | GpuSpec, precision: str = "fp16",
            batch_size: int | None = None) -> WhatIf:
    """Lower-bound latency of the model on ``target_gpu`` (a table name or a GpuSpec)."""
    from modelcost.analysis.roofline import what_if as estimate

    gpu = gpu_spec(target_gpu) if isinstance(target_gpu, str) else target_gpu
    return estimate(cost, gpu, precision, batch_size)


def attach_roofline(run: RunReport, gpu: GpuSpec | None = None) -> RunReport:
    """Fill ``run.gpu`` (this GPU from NVML with cached ceilings, unless given) and every GPU result's
    ``roofline``. Without a GPU or a static analysis it leaves the run as it is and adds a note."""
    from modelcost.pipeline import attach_gpu

    return attach_gpu(run, gpu=gpu)


def layer_roofline(cost: CostReport, gpu: GpuSpec, precision: str, batch_size: int | None = None,
                   profile: LayerProfile | None = None) -> list[LayerRoofline]:
    """Per-layer intensity and bound class against ``gpu``; with ``profile``, where the time goes."""
    from modelcost.analysis.roofline import layer_rooflines

    return layer_rooflines(cost, gpu, precision, batch_size, profile)


def profile_layers(
    source: Any, *, framework: str = "torch", device: str = "cuda", precision: str = "fp32",
    batch_size: int = 1, runs: int = 10, warmup: int = 3, config: BenchConfig | None = None,
) -> LayerProfile:
    """Measured time per module (``framework="torch"``, eager; fp16/bf16 = the model cast, channels_last for
    conv nets) or per ONNX node (``"onnx"``, ONNX Runtime on ``device``) from the framework's own profiler."""
    from modelcost.bench.profile import profile_model

    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(source, batch_size=batch_size, seed=config.seed)
    return profile_model(model, framework=framework, device=device, precision=precision, batch_size=batch_size,
                         runs=runs, warmup=warmup, config=config)


# ---------------------------------------------------------------------------------------------------
# Decisions (issue 5): api -> decide -> bench / analysis / report


def _static_or_none(model: LoadedModel, notes: list[str]) -> CostReport | None:
    """The static analysis, or None with a note (a comparison or recommendation does not need it to run)."""
    from modelcost.core.errors import ModelcostError

    try:
        return model.cost()
    except ModelcostError as exc:
        notes.append(f"static analysis of {model.source} failed: {exc}")
        return None


def _this_gpu() -> Any:
    """This machine's GpuSpec (with cached measured ceilings), or None without a CUDA GPU."""
    from modelcost.pipeline import this_gpu_or_none

    return this_gpu_or_none()


def compare(
    base: str, candidate: str, *, backends: Sequence[str] | None = None, batch_sizes: Sequence[int] | None = None,
    rounds: int = 10, runs_per_block: int | None = None, data: str | None = None, input_shapes: Shapes = None,
    trust_pickle: bool = False, config: BenchConfig | None = None, method: str = "t", out: str | None = None,
    write: bool = True, progress: Any = None, command: str = "compare", notes: Sequence[str] = (),
    options: RunOptions | None = None,
) -> tuple[Any, Any, Any]:
    """BASE vs CANDIDATE (each ``MODEL`` or ``MODEL@PRECISION``): static differences, interleaved timing with a
    95% CI of the speedup, accuracy on the same inputs (or ``data``). Returns (RunReport, Comparison, the
    report folder or None); the folder is ``out`` or reports/<base>-vs-<candidate>-<time>. Each model is
    loaded once. ``options`` (the ``RunOptions`` analyze / bench take) replaces backends, batch_sizes,
    input_shapes, trust_pickle and config."""
    from modelcost.decide.compare import CompareOptions
    from modelcost.decide.workflow import parse_side, run_comparison

    if options is not None:
        backends, batch_sizes, config = options.backends, options.batch_sizes, options.bench
        input_shapes, trust_pickle = options.input_shapes, options.trust_pickle
    (b_src, b_prec), (c_src, c_prec) = parse_side(base), parse_side(candidate)
    for src in (b_src, c_src):
        check_source(src)  # a typo in either is said at once, not after the other's analysis
    batches = list(batch_sizes or [1])
    config = config or BenchConfig()
    options = _options(batches[0], input_shapes, trust_pickle, bench=config)
    static_notes: list[str] = []
    loaded: list[LoadedModel] = []
    try:
        for src in (b_src, c_src):
            loaded.append(load(src, options))
        costs = tuple(_static_or_none(m, static_notes) for m in loaded)
        opts = CompareOptions(backends=backends, batch_sizes=batches, rounds=rounds, runs_per_block=runs_per_block,
                              method=method, data=data, base_precision=b_prec, candidate_precision=c_prec,
                              config=config)
        return run_comparison(loaded[0].bench_model(), loaded[1].bench_model(), sources=(b_src, c_src),
                              precisions=(b_prec, c_prec), costs=costs, opts=opts, gpu=_this_gpu(), out=out,
                              write=write, command=command, progress=progress, run_notes=static_notes,
                              comparison_notes=notes)
    finally:
        for m in loaded:
            m.close()


def recommend(
    source: Any, *, constraints: Any = None, objective: str = "throughput", backends: Sequence[str] | None = None,
    precisions: Sequence[str] | None = None, batch_sizes: Sequence[int] | None = None, input_shapes: Shapes = None,
    trust_pickle: bool = False, config: BenchConfig | None = None, out: str | None = None, write: bool = False,
    progress: bool = False, command: str = "recommend", options: RunOptions | None = None,
) -> tuple[Any, Any, Any]:
    """Benchmark ``source`` and pick the backend + precision + batch size that meets ``constraints``
    (``modelcost.decide.recommend.Constraints``) best. Returns (RunReport, Recommendation, folder or None).
    Ctrl-C ends the sweep early: the recommendation is made from what finished, marked incomplete.
    ``options`` (the ``RunOptions`` analyze / bench take) replaces backends, precisions, batch_sizes,
    input_shapes, trust_pickle and config."""
    from modelcost.bench.runner import run_benchmarks as run_sweep
    from modelcost.core.text import utc_timestamp
    from modelcost.decide.recommend import Constraints
    from modelcost.decide.workflow import run_recommendation

    if options is not None:
        backends, precisions, batch_sizes = options.backends, options.precisions, options.batch_sizes
        input_shapes, trust_pickle, config = options.input_shapes, options.trust_pickle, options.bench
    from modelcost.decide.recommend import screening_rejects
    from modelcost.pipeline import sweep_plan

    batches = list(batch_sizes or (constraints.batch_sizes if constraints and constraints.batch_sizes else [1]))
    config = config or BenchConfig()
    report = RunReport(created=utc_timestamp(), command=command)
    plan_opts = dataclasses.replace(options or _options(batches[0], input_shapes, trust_pickle, bench=config),
                                    backends=tuple(backends) if backends else None,
                                    precisions=tuple(precisions) if precisions else None, batch_sizes=tuple(batches))
    model = load(source, _options(batches[0], input_shapes, trust_pickle, bench=config))
    trace("model loaded")
    try:
        report.cost = _static_or_none(model, report.notes)
        trace("static analysis done")
        try:
            batches, screen, plan = sweep_plan(model, plan_opts, report)
            _, report.device = run_sweep(model.bench_model(), batch_sizes=batches, config=config, progress=progress,
                                         results=report.benchmarks, screen=screen,
                                         rejects=screening_rejects(constraints or Constraints()), plan=plan)
        except KeyboardInterrupt:
            report.complete = False
            report.notes.append("interrupted by the user (Ctrl-C): recommended from the configs that finished")
    finally:
        model.close()
    trace("benchmarks done")
    report.gpu = _this_gpu()
    add_rooflines(report)
    trace("roofline done")
    rec, folder = run_recommendation(report.benchmarks, report, constraints or Constraints(), objective, out,
                                     write or out is not None, config.samples_csv)
    trace("recommendation made" + (" and report written" if folder is not None else ""))
    return report, rec, folder


def add_rooflines(run: Any) -> None:
    """Fill ``roofline`` of every measured GPU result that lacks it (needs ``run.cost`` and ``run.gpu``)."""
    if run.cost is None or run.gpu is None or not run.cost.compute.complete:
        return
    from modelcost.analysis.roofline import roofline_point

    for r in run.benchmarks:
        if r.roofline is None:
            r.roofline = roofline_point(run.cost, r, run.gpu)


def write_report(run: Any, out_dir: str | None = None, samples_csv: str | None = None, plots: bool = True) -> Any:
    """The report folder of an analyze / bench run (``out_dir`` or reports/<model>-<time>), with a
    recommendation section (no constraints: best throughput, and the Pareto front) when configs were measured.
    ``plots=False``: no plots (an interrupted run writes quickly)."""
    from modelcost.decide.recommend import recommend as pick
    from modelcost.report.folder import write_report_folder

    add_rooflines(run)
    rec = pick(run.benchmarks) if any(r.status == "ok" for r in run.benchmarks) else None
    return write_report_folder(run, out_dir, samples_csv, recommendation=rec, plots=plots)


def quantize(
    model: str, *, int8: bool = True, fp16: bool = False, calib_data: str | None = None,
    out_dir: str | None = None, run_compare: bool = True, batch_size: int = 1,
    input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None, **compare_kwargs: Any,
) -> list[tuple[Any, Any]]:
    """Make ``MODEL.int8.onnx`` (static Q/DQ) and/or ``MODEL.fp16.onnx`` beside the model (or in ``out_dir``),
    then compare each with the model. Returns [(Quantized, (RunReport, Comparison, folder) or None)]."""
    from pathlib import Path

    from modelcost.core.errors import ModelcostError
    from modelcost.decide.quantize import convert_fp16, quantize_int8

    if source_kind(model) != "onnx":
        raise ModelcostError(f"quantize takes an ONNX file; {model} is not one (export it to ONNX first)")
    if not (int8 or fp16):
        raise ModelcostError("nothing to make: pass --int8 and/or --fp16")
    src = Path(model)
    where = Path(out_dir) if out_dir else src.parent
    outs = quantize_report_dirs(model, int8=int8, fp16=fp16, out=compare_kwargs.get("out"))
    made = []
    if int8:
        specs = bench_model(model, batch_size=batch_size, input_shapes=input_shapes).specs
        made.append(quantize_int8(src, where / f"{src.stem}.int8.onnx", specs_for=specs, calib_data=calib_data))
    if fp16:
        made.append(convert_fp16(src, where / f"{src.stem}.fp16.onnx"))
    out: list[tuple[Any, Any]] = []
    for i, q in enumerate(made):
        result = None
        if run_compare:
            notes = [f"candidate made by modelcost quantize: {'; '.join(q.notes)}"]
            notes += [f"INT8 calibration: {q.calibration}"] if q.calibration else []
            kwargs = dict(compare_kwargs)
            if outs:
                kwargs["out"] = str(outs[i])  # one folder per candidate under --out when there are two
            result = compare(model, str(q.path), input_shapes=input_shapes, notes=notes, **kwargs)
        out.append((q, result))
        if result is not None and not result[0].complete:
            break  # interrupted (Ctrl-C): do not start the next comparison
    return out


def quantize_report_dirs(model: str, *, int8: bool, fp16: bool, out: Any) -> list[Any]:
    """The report folders ``quantize`` writes its comparisons to, in the order it makes the candidates: ``out``
    itself for one candidate, ``out/MODEL.int8`` and ``out/MODEL.fp16`` for two; none without ``out``."""
    from pathlib import Path

    if not out:
        return []
    stems = [f"{Path(model).stem}.{p}" for p, asked in (("int8", int8), ("fp16", fp16)) if asked]
    return [Path(out) / stem for stem in stems] if len(stems) > 1 else [Path(out)] * len(stems)


def attach_layer_profiles(
    source: Any, run: RunReport, *, backends: Sequence[str] = ("torch-eager", "torch-half", "ort-cuda"),
    runs: int = 10, config: BenchConfig | None = None,
) -> RunReport:
    """Profile per layer, once per (backend, precision) at its largest measured batch, and attach the
    LayerProfile to that BenchResult (``layer_profile``). Eager PyTorch and ONNX Runtime (fp32) only: compiled,
    graph-replayed and TensorRT configs have no per-module attribution. A failure becomes a note."""
    from modelcost import pipeline

    if not any(r.status == "ok" and r.backend in backends and r.backend in PROFILED for r in run.benchmarks):
        return run
    config = config or BenchConfig()
    if isinstance(source, BenchModel):
        return pipeline.attach_layer_profiles(source, run, backends=backends, runs=runs, config=config)
    model = load(source, RunOptions(bench=config))
    try:
        return pipeline.attach_layer_profiles(model.bench_model(), run, backends=backends, runs=runs, config=config)
    finally:
        model.close()


# ---------------------------------------------------------------------------------------------------
# Text generation (issue 11): loaders.llm_loader -> analysis.llm (static) / bench.generation (measured)


def llm(
    source: str, *, prompt_lens: Sequence[int] = (512,), gen_lens: Sequence[int] = (128,),
    batch_sizes: Sequence[int] = (1,), dtype: str = "bf16", kv_dtype: str | None = None,
    target_gpu: str | GpuSpec | None = None, measure: bool = False, backends: Sequence[str] | None = None,
    runs: int = 3, warmup: int = 1, device: str | None = None, repeats: int = 1,
    attention: str = "full", attn_implementation: str | None = None, tp: int = 1, routing: str | None = None,
) -> Any:
    """What generating text with the causal LM ``source`` costs (``core.llm.LlmReport``): counted prefill and
    decode on the meta device for every batch x prompt x gen point, bounds against ``target_gpu`` (a table name)
    or this machine's GPU (split over ``tp`` of them), and with ``measure`` the measured runs of ``backends``
    placed against them. ``attention``: the prefill query/key pairs counted ("full" or "causal");
    ``attn_implementation``: "sdpa" or "eager" for a transformers model (default: SDPA where it has one);
    ``routing`` (uniform, zipf:S or a .json of shares per expert): the expert distribution that a mixture of
    experts' bytes assume."""
    from modelcost.analysis.llm import analyze_llm
    from modelcost.analysis.llm_bounds import add_bounds, place_measured
    from modelcost.bench.memory import long_lived_frozen
    from modelcost.core.errors import ModelcostError
    from modelcost.loaders.llm_loader import load_causal_lm

    lm = load_causal_lm(source, dtype, attn_implementation)
    try:
        with long_lived_frozen():  # the collector skips torch, transformers and the model while counting
            report = analyze_llm(lm, list(prompt_lens), list(gen_lens), list(batch_sizes), kv_dtype, attention,
                                 routing)
    except ValueError as exc:
        raise ModelcostError(str(exc)) from exc
    gpu = gpu_spec(target_gpu) if isinstance(target_gpu, str) else target_gpu or _this_gpu()
    if gpu is not None:
        add_bounds(report, gpu, tp=tp)
    elif tp != 1:
        raise ModelcostError(f"--tp {tp}: bounds need a GPU; pass --target-gpu")
    else:
        report.notes.append("no GPU here and no --target-gpu: bounds left out")
    if measure:
        from modelcost.bench.generation import BACKENDS, measure_generation

        wanted = list(backends or (*BACKENDS, "vllm", "sglang", "tensorrt_llm"))
        points = {(p.batch_size, p.prompt_len, p.gen_len): p for p in report.points}
        for prompt in prompt_lens:
            for gen in gen_lens:
                report.benchmarks += measure_generation(
                    lm, backends=wanted, batch_sizes=batch_sizes, prompt_len=prompt, gen_len=gen, precision=dtype,
                    device=device, runs=runs, warmup=warmup, repeats=repeats)
                wanted = [b for b in wanted if b not in ("vllm", "sglang", "tensorrt_llm")]  # absent: say once
        ran_on = _this_gpu() if (device or "cuda").startswith("cuda") else None  # ratios: the GPU it ran on
        for r in report.benchmarks:
            point = points.get((r.batch_size, r.prompt_len, r.gen_len))
            if point is not None:
                place_measured(r, point, report, ran_on)
    return report


# ---------------------------------------------------------------------------------------------------
# Training (issue 10): modelcost.training_run joins loaders, analysis/training and bench/training


def train_static(source: str, **kwargs: Any) -> Any:
    """What one training step of ``source`` costs, counted on meta: forward / backward (input- and
    weight-gradient MACs) / optimizer FLOPs, memory by part, and the largest batch for ``target_gpu`` or
    ``memory_bytes`` (keyword arguments: ``modelcost.training_run.train_static``). A ``TrainingReport``."""
    from modelcost.training_run import train_static as run

    return run(source, **kwargs)


def train(source: str, **kwargs: Any) -> Any:
    """``train_static``, then measured training steps per precision / variant / batch size
    (``modelcost.training_run.train``): samples/s, MFU, measured vs predicted peak memory."""
    from modelcost.training_run import train as run

    return run(source, **kwargs)
