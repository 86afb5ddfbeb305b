"""The library facade: what the CLI calls and what users import.

    >>> from modelcost import api
    >>> report = api.analyze_static("zoo:resnet50", batch_size=1)
    >>> report.compute.macs
    4089184256
"""

from __future__ import annotations

from collections.abc import Iterable

from modelcost.core.types import CostReport
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
