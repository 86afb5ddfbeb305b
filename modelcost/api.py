"""The library facade: what the CLI calls and what users import.

    >>> from modelcost import api
    >>> report = api.analyze_static("zoo:resnet50", batch_size=1)
    >>> report.compute.macs
    4089184256
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.types import BenchResult, CostReport, DeviceInfo
from modelcost.core.types import GpuSpec, LayerProfile, LayerRoofline, RooflinePoint, RunReport, WhatIf
from modelcost.loaders.base import LoadOptions, source_kind
from modelcost.loaders.shapes import parse_input_shapes


def load_options(
    batch_size: int | None = None, input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None,
    trust_pickle: bool = False,
) -> LoadOptions:
    shapes = dict(input_shapes) if isinstance(input_shapes, dict) else parse_input_shapes(input_shapes)
    return LoadOptions(batch_size=batch_size, input_shapes=shapes, trust_pickle=trust_pickle)


def analyze_static(
    source: str,
    *,
    batch_size: int | None = None,
    input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None,
    trust_pickle: bool = False,
) -> CostReport:
    """Count parameters, storage, MACs/FLOPs and memory of ``source`` without running it or reading weights."""
    options = load_options(batch_size, input_shapes, trust_pickle)
    if source_kind(source) == "onnx":
        from modelcost.analysis.onnx_counter import analyze_onnx
        from modelcost.loaders.onnx_loader import load_onnx

        return analyze_onnx(load_onnx(source, options))
    from modelcost.analysis.torch_counter import analyze_torch
    from modelcost.loaders.torch_loader import load_torch

    return analyze_torch(load_torch(source, options))


# ---------------------------------------------------------------------------------------------------
# Benchmarks (issue 3): loaders -> bench.model -> bench.runner


def bench_model(
    source: str,
    *,
    batch_size: int | None = None,
    input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None,
    trust_pickle: bool = False,
    seed: int = 0,
) -> BenchModel:
    """Load ``source`` for benchmarking: an ONNX file runs on the ONNX Runtime / TensorRT backends, a PyTorch
    model (instantiated with seeded random weights) on every backend (exported to ONNX when one asks)."""
    from pathlib import Path

    from modelcost.bench.model import from_loaded_torch, from_onnx_path

    options = load_options(batch_size, input_shapes, trust_pickle)
    if source_kind(source) == "onnx":
        from modelcost.loaders.onnx_loader import bind_inputs, load_onnx

        loaded = load_onnx(source, options)
        return from_onnx_path(loaded.path, lambda b: bind_inputs(loaded, b), name=Path(source).stem, source=source,
                              seed=seed)
    from modelcost.loaders.torch_loader import load_torch

    loaded_torch = load_torch(source, options)
    name = source.split(":", 1)[1] if source.startswith(("zoo:", "torchvision:")) else Path(source.split(":")[0]).stem
    return from_loaded_torch(loaded_torch, name=name, source=source, seed=seed)


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
) -> tuple[list[BenchResult], DeviceInfo]:
    """Benchmark ``source`` on ``backends`` (default: every backend of the device) x ``precisions`` (default:
    each backend's own) x ``batch_sizes`` (default: [batch_size or 1]). Returns the results (unavailable and
    failed configs included, with their reason) and the device. Pass ``results`` to keep partial results."""
    from modelcost.bench.runner import run_benchmarks as run

    batches = list(batch_sizes or [batch_size or 1])
    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(
        source, batch_size=batches[0], input_shapes=input_shapes, trust_pickle=trust_pickle, seed=config.seed)
    try:
        return run(model, backends=backends, precisions=precisions, batch_sizes=batches, config=config,
                   results=results, progress=progress)
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
                             "'modelcost gpu --name \"H100 SXM\"', or --target-gpu with analyze / bench (modelcost gpu --list)")
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


def what_if(cost: CostReport, target_gpu: str | GpuSpec, precision: str = "fp16", batch_size: int | None = None) -> WhatIf:
    """Lower-bound latency of the model on ``target_gpu`` (a table name or a GpuSpec)."""
    from modelcost.analysis.roofline import what_if as estimate

    gpu = gpu_spec(target_gpu) if isinstance(target_gpu, str) else target_gpu
    return estimate(cost, gpu, precision, batch_size)


def attach_roofline(run: RunReport, gpu: GpuSpec | None = None) -> RunReport:
    """Fill ``run.gpu`` (this GPU from NVML with cached ceilings, unless given) and every GPU result's
    ``roofline``. Without a GPU or a static analysis it leaves the run as it is and adds a note."""
    from modelcost.analysis.roofline import roofline_point
    from modelcost.core.errors import ModelcostError

    if gpu is None and run.gpu is None:
        try:
            gpu = gpu_spec()
        except ModelcostError as exc:
            run.notes.append(f"roofline: {exc}")
            return run
    run.gpu = gpu or run.gpu
    if run.cost is None:
        run.notes.append("roofline: no static analysis (FLOPs) to place the benchmarks on the roofline")
        return run
    for result in run.benchmarks:
        result.roofline = roofline_point(run.cost, result, run.gpu)  # type: ignore[arg-type]
    return run


def layer_roofline(cost: CostReport, gpu: GpuSpec, precision: str, batch_size: int | None = None,
                   profile: LayerProfile | None = None) -> list[LayerRoofline]:
    """Per-layer intensity and bound class against ``gpu``; with ``profile``, where the time goes."""
    from modelcost.analysis.roofline import layer_rooflines

    return layer_rooflines(cost, gpu, precision, batch_size, profile)


def profile_layers(
    source: str | BenchModel, *, framework: str = "torch", device: str = "cuda", precision: str = "fp32",
    batch_size: int = 1, runs: int = 10, warmup: int = 3, config: BenchConfig | None = None,
) -> LayerProfile:
    """Measured time per module (``framework="torch"``, eager; fp16/bf16 = the model cast, channels_last for
    conv nets) or per ONNX node (``"onnx"``, ONNX Runtime on ``device``) from the framework's own profiler."""
    from modelcost.bench.profile import profile_onnx, profile_torch

    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(source, batch_size=batch_size, seed=config.seed)
    arrays, _ = model.host_inputs(batch_size)
    if framework == "onnx":
        path = model.onnx_file(config.cache_dir)
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
        feeds = {spec.name: a for spec, a in zip(model.specs(batch_size), arrays, strict=True)}
        return profile_onnx(path, feeds, providers=providers, runs=runs, warmup=warmup)
    return _profile_torch_model(model, arrays, device, precision, runs, warmup, profile_torch)


def _profile_torch_model(model: BenchModel, arrays: Any, device: str, precision: str, runs: int, warmup: int,
                         profile_torch: Any) -> LayerProfile:
    import torch

    from modelcost.bench.backends.torch_backends import tf32_mode

    dtype = {"fp16": "float16", "bf16": "bfloat16"}.get(precision, "float32")
    channels_last = dtype != "float32" and model.is_conv_net()
    module = model.device_module(device, dtype, channels_last)
    inputs = []
    for a in arrays:
        t = torch.from_numpy(a.copy())
        t = (t.to(getattr(torch, dtype)) if t.is_floating_point() else t).to(device)
        inputs.append(t.contiguous(memory_format=torch.channels_last) if channels_last and t.dim() == 4 else t)
    with tf32_mode(precision == "tf32") if device == "cuda" else _nullcontext():
        return profile_torch(module, model.call_args(inputs), runs=runs, warmup=warmup)


def _nullcontext() -> Any:
    import contextlib

    return contextlib.nullcontext()


# ---------------------------------------------------------------------------------------------------
# Decisions (issue 5): api -> decide -> bench / analysis / report


def _static_or_none(source: str, batch_size: int, input_shapes: Any, trust_pickle: bool, notes: list[str]) -> Any:
    """The static analysis, or None with a note (a comparison or recommendation does not need it to run)."""
    from modelcost.core.errors import ModelcostError

    try:
        return analyze_static(source, batch_size=batch_size, input_shapes=input_shapes, trust_pickle=trust_pickle)
    except ModelcostError as exc:
        notes.append(f"static analysis of {source} failed: {exc}")
        return None


def _this_gpu() -> Any:
    """This machine's GpuSpec (with cached measured ceilings), or None without a CUDA GPU."""
    from modelcost.bench.memory import cuda_available

    if not cuda_available():
        return None
    try:
        from modelcost.hardware.ceilings import with_cached_ceilings
        from modelcost.hardware.nvml import query_gpu

        gpu = query_gpu()
        return with_cached_ceilings(gpu) if gpu is not None else None
    except Exception:  # noqa: BLE001 - without the GPU model the roofline is left out, nothing else
        return None


def compare(
    base: str, candidate: str, *, backends: Sequence[str] | None = None, batch_sizes: Sequence[int] | None = None,
    rounds: int = 10, runs_per_block: int | None = None, data: str | None = None,
    input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None, trust_pickle: bool = False,
    config: BenchConfig | None = None, method: str = "t", out: str | None = None, write: bool = True,
    progress: Any = None, command: str = "compare", notes: Sequence[str] = (),
) -> tuple[Any, Any, Any]:
    """BASE vs CANDIDATE (each ``MODEL`` or ``MODEL@PRECISION``): static differences, interleaved timing with a
    95% CI of the speedup, accuracy on the same inputs (or ``data``). Returns (RunReport, Comparison, the
    report folder or None); the folder is ``out`` or reports/<base>-vs-<candidate>-<time>."""
    from modelcost.decide.compare import CompareOptions
    from modelcost.decide.workflow import parse_side, run_comparison

    (b_src, b_prec), (c_src, c_prec) = parse_side(base), parse_side(candidate)
    batches = list(batch_sizes or [1])
    config = config or BenchConfig()
    static_notes: list[str] = []
    costs = (_static_or_none(b_src, batches[0], input_shapes, trust_pickle, static_notes),
             _static_or_none(c_src, batches[0], input_shapes, trust_pickle, static_notes))
    models = [bench_model(s, batch_size=batches[0], input_shapes=input_shapes, trust_pickle=trust_pickle,
                          seed=config.seed) for s in (b_src, c_src)]
    opts = CompareOptions(backends=backends, batch_sizes=batches, rounds=rounds, runs_per_block=runs_per_block,
                          method=method, data=data, base_precision=b_prec, candidate_precision=c_prec, config=config)
    try:
        run, cmp, folder = run_comparison(models[0], models[1], sources=(b_src, c_src), precisions=(b_prec, c_prec),
                                          costs=costs, opts=opts, gpu=_this_gpu(), out=out, write=write,
                                          command=command, progress=progress, run_notes=static_notes,
                                          comparison_notes=notes)
    finally:
        for m in models:
            m.close()
    return run, cmp, folder


def recommend(
    source: str, *, constraints: Any = None, objective: str = "throughput", backends: Sequence[str] | None = None,
    precisions: Sequence[str] | None = None, batch_sizes: Sequence[int] | None = None,
    input_shapes: Iterable[str] | dict[str, tuple[int, ...]] | None = None, trust_pickle: bool = False,
    config: BenchConfig | None = None, out: str | None = None, write: bool = False, progress: bool = False,
    command: str = "recommend",
) -> tuple[Any, Any, Any]:
    """Benchmark ``source`` and pick the backend + precision + batch size that meets ``constraints``
    (``modelcost.decide.recommend.Constraints``) best. Returns (RunReport, Recommendation, folder or None).
    Ctrl-C ends the sweep early: the recommendation is made from what finished, marked incomplete."""
    from modelcost.decide.recommend import Constraints
    from modelcost.decide.workflow import now_iso, run_recommendation

    batches = list(batch_sizes or (constraints.batch_sizes if constraints and constraints.batch_sizes else [1]))
    config = config or BenchConfig()
    from modelcost.core.types import RunReport

    run = RunReport(created=now_iso(), command=command)
    run.cost = _static_or_none(source, batches[0], input_shapes, trust_pickle, run.notes)
    try:
        _, run.device = run_benchmarks(source, backends=backends, precisions=precisions, batch_sizes=batches,
                                       input_shapes=input_shapes, trust_pickle=trust_pickle, config=config,
                                       progress=progress, results=run.benchmarks)
    except KeyboardInterrupt:
        run.complete = False
        run.notes.append("interrupted by the user (Ctrl-C): recommended from the configs that finished")
    run.gpu = _this_gpu()
    add_rooflines(run)
    rec, folder = run_recommendation(run.benchmarks, run, constraints or Constraints(), objective, out,
                                     write or out is not None, config.samples_csv)
    return run, rec, folder


def add_rooflines(run: Any) -> None:
    """Fill ``roofline`` of every measured GPU result that lacks it (needs ``run.cost`` and ``run.gpu``)."""
    if run.cost is None or run.gpu is None:
        return
    from modelcost.analysis.roofline import roofline_point

    for r in run.benchmarks:
        if r.roofline is None:
            r.roofline = roofline_point(run.cost, r, run.gpu)


def write_report(run: Any, out_dir: str | None = None, samples_csv: str | None = None) -> Any:
    """The report folder of an analyze / bench run (``out_dir`` or reports/<model>-<time>), with a
    recommendation section (no constraints: best throughput, and the Pareto front) when configs were measured."""
    from modelcost.decide.recommend import recommend as pick
    from modelcost.report.folder import write_report_folder

    add_rooflines(run)
    rec = pick(run.benchmarks) if any(r.status == "ok" for r in run.benchmarks) else None
    return write_report_folder(run, out_dir, samples_csv, recommendation=rec)


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
    made = []
    if int8:
        specs = bench_model(model, batch_size=batch_size, input_shapes=input_shapes).specs
        made.append(quantize_int8(src, where / f"{src.stem}.int8.onnx", specs_for=specs, calib_data=calib_data))
    if fp16:
        made.append(convert_fp16(src, where / f"{src.stem}.fp16.onnx"))
    out: list[tuple[Any, Any]] = []
    for q in made:
        result = None
        if run_compare:
            notes = [f"candidate made by modelcost quantize: {'; '.join(q.notes)}"]
            notes += [f"INT8 calibration: {q.calibration}"] if q.calibration else []
            kwargs = dict(compare_kwargs)
            if kwargs.get("out") and len(made) > 1:  # one folder per candidate under --out
                kwargs["out"] = str(Path(kwargs["out"]) / q.path.stem)
            result = compare(model, str(q.path), input_shapes=input_shapes, notes=notes, **kwargs)
        out.append((q, result))
        if result is not None and not result[0].complete:
            break  # interrupted (Ctrl-C): do not start the next comparison
    return out


PROFILED = {  # backend -> (framework, device) that bench.profile can attribute per layer
    "torch-eager": ("torch", "cuda"), "torch-half": ("torch", "cuda"), "torch-cpu": ("torch", "cpu"),
    "ort-cuda": ("onnx", "cuda"), "ort-cpu": ("onnx", "cpu"),
}


def attach_layer_profiles(
    source: str | BenchModel, run: RunReport, *, backends: Sequence[str] = ("torch-eager", "torch-half", "ort-cuda"),
    runs: int = 10, config: BenchConfig | None = None,
) -> RunReport:
    """Profile per layer, once per (backend, precision) at its largest measured batch, and attach the
    LayerProfile to that BenchResult (``layer_profile``). Eager PyTorch and ONNX Runtime (fp32) only: compiled,
    graph-replayed and TensorRT configs have no per-module attribution. A failure becomes a note."""
    chosen: dict[tuple[str, str], BenchResult] = {}
    for r in run.benchmarks:
        if r.status == "ok" and r.backend in backends and r.backend in PROFILED:
            if r.backend.startswith("ort") and r.precision != "fp32":
                continue  # the benchmark ran an fp16 copy of the model; the profile would time the fp32 one
            key = (r.backend, r.precision)
            if key not in chosen or r.batch_size > chosen[key].batch_size:
                chosen[key] = r
    if not chosen:
        return run
    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(source, seed=config.seed)
    try:
        for (backend, precision), r in chosen.items():
            framework, device = PROFILED[backend]
            try:
                r.layer_profile = profile_layers(model, framework=framework, device=device, precision=precision,
                                                 batch_size=r.batch_size, runs=runs, config=config)
            except Exception as exc:  # noqa: BLE001 - a profile is extra; the benchmark stands without it
                r.notes.append(f"per-layer profile failed: {exc.__class__.__name__}: {str(exc).splitlines()[0][:160]}")
    finally:
        if not isinstance(source, BenchModel):
            model.close()
    return run
