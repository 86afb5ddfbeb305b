"""This machine's GPU, the roofline, what-if estimates and per-layer profiles: the shared GPU step.

Two decisions have their one owner here: which GPU this machine has (``this_gpu``: every command asks it) and
whether measured configs may be placed on a roofline (``place_on_roofline``: a GPU and a complete static
analysis; otherwise ``run.no_roofline_reason`` says why).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.bench.registry import profiled
from modelcost.core.errors import ModelcostError
from modelcost.core.types import (
    BenchResult,
    CostReport,
    GpuSpec,
    LayerProfile,
    LayerRoofline,
    LayerTable,
    RooflinePoint,
    RunReport,
    WhatIf,
)

PROFILED = profiled()  # backend -> (framework, device) that bench.profile can attribute per layer (the registry)
# what to do without a GPU here
NAME_ONE = ("for what-if figures name one: 'modelcost gpu --name \"H100 SXM\"', or --target-gpu with analyze / bench "
            "(modelcost gpu --list)")


def this_gpu(index: int = 0, *, cached_ceilings: bool = True, required: bool = True) -> GpuSpec | None:
    """This machine's GPU ``index`` (NVML + CUDA properties), with its cached measured ceilings unless
    ``cached_ceilings`` is False. Without one: ModelcostError saying why, or None when not ``required`` (then
    also without a CUDA device that can run on it, or when NVML fails)."""
    from modelcost.bench.memory import cuda_available
    from modelcost.hardware.ceilings import with_cached_ceilings
    from modelcost.hardware.nvml import no_gpu_reason, query_gpu

    if not required and not cuda_available():
        return None
    try:
        spec = query_gpu(index)
    except Exception:  # noqa: BLE001 - NVML failing is "no GPU" for a caller that can do without one
        if required:
            raise
        spec = None
    if spec is None:
        if required:
            raise ModelcostError(f"no NVIDIA GPU here ({no_gpu_reason()})")
        return None
    return with_cached_ceilings(spec) if cached_ceilings else spec


def gpu_spec(name: str | None = None, *, index: int = 0, cached_ceilings: bool = True) -> GpuSpec:
    """A GPU's limits. ``name``: from the built-in table (what-if; no GPU needed). None: this machine's GPU
    ``index`` (``this_gpu``; ModelcostError if there is none)."""
    from modelcost.hardware.specs import spec_from_table

    if name:
        return spec_from_table(name)
    try:
        spec = this_gpu(index, cached_ceilings=cached_ceilings)
    except ModelcostError as exc:
        raise ModelcostError(f"{exc}; {NAME_ONE}") from None
    assert spec is not None
    return spec


def measure_ceilings(gpu: GpuSpec | None = None, *, index: int = 0, refresh: bool = False,
                     cache_dir: str | None = None, progress: Any = None) -> GpuSpec:
    """Measured matmul (per precision) and copy ceilings of this GPU, cached per GPU + driver."""
    from modelcost.hardware.ceilings import measure_ceilings as measure

    gpu = gpu or gpu_spec(index=index, cached_ceilings=False)
    return measure(gpu, index=index, refresh=refresh, directory=cache_dir, progress=progress)


def roofline_blocker(cost: CostReport | None, gpu: GpuSpec | None) -> str | None:
    """Why no measured config can be placed on a roofline (None: they can): a GPU and a complete static
    analysis are needed (incomplete counts would put every config too far below the roof)."""
    if gpu is None:
        return "no GPU to draw the roofline of"
    if cost is None:
        return "no static analysis (FLOPs) to place the benchmarks on the roofline"
    if not cost.compute.complete:
        why = "; ".join(cost.compute.incomplete_reasons) or "incomplete"
        return f"the static counts are incomplete ({why}), so no config is placed on it"
    return None


def place_on_roofline(results: Iterable[BenchResult], cost: CostReport | None, gpu: GpuSpec | None) -> str | None:
    """Fill ``roofline`` of every measured GPU result that lacks it; the one place that decides whether it may
    (``roofline_blocker``, returned when it may not)."""
    from modelcost.analysis.roofline import roofline_point

    why = roofline_blocker(cost, gpu)
    if why is not None:
        return why
    assert cost is not None and gpu is not None
    for r in results:
        if r.roofline is None:
            r.roofline = roofline_point(cost, r, gpu)
    return None


def attach_gpu(report: RunReport, gpu: GpuSpec | None = None, *, target_gpu: str | None = None) -> RunReport:
    """Fill ``report.gpu`` (``gpu``, else this machine's) and every GPU result's roofline point. Without a GPU
    or a complete static analysis, ``report.no_roofline_reason`` says why and a note says what to do."""
    if gpu is None and report.gpu is None:
        try:
            gpu = this_gpu()
        except ModelcostError as exc:
            instead = f"the what-if table estimates {target_gpu} instead" if target_gpu else NAME_ONE
            _no_roofline(report, str(exc), instead)
            return report
    report.gpu = gpu or report.gpu
    why = place_on_roofline(report.benchmarks, report.cost, report.gpu)
    if why is not None:
        _no_roofline(report, why)
    return report


def _no_roofline(report: RunReport, why: str, instead: str = "") -> None:
    report.no_roofline_reason = why
    report.notes.append(f"roofline: {why}" + (f"; {instead}" if instead else ""))


def add_rooflines(run: RunReport) -> None:
    """The roofline of every measured GPU result that lacks it, when the run has what it needs (quietly)."""
    place_on_roofline(run.benchmarks, run.cost, run.gpu)


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


def what_if_rows(report: RunReport, target_gpu: str) -> list[WhatIf]:
    """The lower bound on ``target_gpu`` per precision benchmarked (fp32 and fp16 without benchmarks), at the
    largest measured batch; this machine's GPU first when there is one."""
    from modelcost.analysis.roofline import precisions_of
    from modelcost.analysis.roofline import what_if as estimate
    from modelcost.hardware.specs import spec_from_table

    assert report.cost is not None
    keys = precisions_of(report.benchmarks) or ["fp32", "fp16"]
    batch = max((r.batch_size for r in report.benchmarks if r.status == "ok"), default=None)
    target = spec_from_table(target_gpu)
    rows = [estimate(report.cost, target, k, batch) for k in keys]
    if report.gpu is not None and report.gpu.source == "nvml":
        rows = [estimate(report.cost, report.gpu, k, batch) for k in keys if k in report.gpu.peak_tflops] + rows
    return rows


def layer_roofline(cost: CostReport, gpu: GpuSpec, precision: str, batch_size: int | None = None,
                   profile: LayerProfile | None = None) -> list[LayerRoofline]:
    """Per-layer intensity and bound class against ``gpu``; with ``profile``, where the time goes."""
    from modelcost.analysis.roofline import layer_rooflines

    return layer_rooflines(cost, gpu, precision, batch_size, profile)


def layer_tables(report: RunReport) -> list[LayerTable]:
    """The per-layer roofline of each profiled GPU result ("where the time goes vs where the FLOPs are"); with
    no profile, the static per-layer intensity against the first GPU result's ridge point."""
    cost, gpu = report.cost, report.gpu
    if cost is None or gpu is None:
        return []
    tables = []
    for r in report.benchmarks:
        if r.layer_profile is not None and r.roofline is not None:
            rows = layer_roofline(cost, gpu, r.precision, r.batch_size, r.layer_profile)
            title = f"Where the time goes vs where the FLOPs are: {r.backend} {r.precision} batch {r.batch_size}"
            tables.append(LayerTable(title, rows, r.layer_profile))
    first = next((r for r in report.benchmarks if r.roofline is not None), None)
    if not tables and first is not None and first.roofline is not None:
        rows = layer_roofline(cost, gpu, first.precision, first.batch_size)
        tables.append(LayerTable(f"Per-layer intensity vs the {first.precision} ridge point "
                                 f"({first.roofline.ridge_point:.0f} FLOP/B), batch {first.batch_size}", rows))
    return tables


def attach_layer_profiles(source: Any, report: RunReport, *, backends: Iterable[str] = tuple(PROFILED),
                          runs: int = 10, config: BenchConfig | None = None) -> RunReport:
    """Profile per layer, once per (backend, precision) at its largest measured batch, and attach the
    LayerProfile to that BenchResult. Which backends can: the registry's ``profile`` flag (``PROFILED``); eager
    PyTorch and ONNX Runtime (fp32) only, compiled, graph-replayed and TensorRT configs have no per-module
    attribution. ``source``: a ``BenchModel`` or anything ``load`` takes (loaded only when there is work). A
    failure becomes a note on the result."""
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
    if not chosen:
        return report
    config = config or BenchConfig()
    loaded = None
    if not isinstance(source, BenchModel):
        from modelcost.runs.model import RunOptions, load

        loaded = load(source, RunOptions(bench=config))
    model = source if loaded is None else loaded.bench_model()
    try:
        for (backend, precision), r in chosen.items():
            framework, device = PROFILED[backend]
            try:
                r.layer_profile = profile_model(model, framework=framework, device=device, precision=precision,
                                                batch_size=r.batch_size, runs=runs, config=config)
            except Exception as exc:  # noqa: BLE001 - a profile is extra; the benchmark stands without it
                r.notes.append(f"per-layer profile failed: {first_line(exc, 160)}")
    finally:
        if loaded is not None:
            loaded.close()
    return report


def profile_layers(source: Any, *, framework: str = "torch", device: str = "cuda", precision: str = "fp32",
                   batch_size: int = 1, runs: int = 10, warmup: int = 3,
                   config: BenchConfig | None = None) -> LayerProfile:
    """Measured time per module (``framework="torch"``, eager; fp16/bf16 = the model cast, channels_last for
    conv nets) or per ONNX node (``"onnx"``, ONNX Runtime on ``device``) from the framework's own profiler."""
    from modelcost.bench.profile import profile_model
    from modelcost.runs.model import bench_model

    config = config or BenchConfig()
    model = source if isinstance(source, BenchModel) else bench_model(source, batch_size=batch_size, seed=config.seed)
    return profile_model(model, framework=framework, device=device, precision=precision, batch_size=batch_size,
                         runs=runs, warmup=warmup, config=config)
