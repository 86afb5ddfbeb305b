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
