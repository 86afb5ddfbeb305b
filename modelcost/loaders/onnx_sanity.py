"""Fields a corrupt ONNX file can get wrong that protobuf parsing lets through: names that are not UTF-8 text
(protobuf hands them back as bytes) and element types that are not ONNX types. Checked once at load, in every
graph and subgraph, so the analysis never meets them (found by tests/fuzz/fuzz_onnx.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.loaders.onnx_types import numel, onnx_dtype_bits, packed_nbytes


def check_fields(model: Any, model_name: str) -> None:
    """Raise one ModelcostError line for the first name that is not text or element type that is not ONNX's."""
    for opset in model.opset_import:
        if not isinstance(opset.domain, str):
            raise ModelcostError(f"{model_name}: an opset domain is not valid UTF-8 text; the file is corrupt")
    for where, graph in _graphs(model.graph, ""):
        for what, value in _names(graph):
            if not isinstance(value, str):
                raise ModelcostError(f"{model_name}: {what}{where} is not valid UTF-8 text; the file is corrupt")
        for tensor in [*graph.initializer, *(s.values for s in graph.sparse_initializer)]:
            _check_type(tensor.data_type, f"initializer {tensor.name!r}", where, model_name)
        for tensor, what in _inline_tensors(graph):
            _check_size(tensor, what, where, model_name)
        for vi in [*graph.input, *graph.output, *graph.value_info]:
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type != 0:
                _check_type(vi.type.tensor_type.elem_type, f"tensor {vi.name!r}", where, model_name)
    for f_index, function in enumerate(model.functions):  # model-local functions: their nodes are text too
        where = f" (in model-local function #{f_index})"
        for what, value in _node_names(function.node):
            if not isinstance(value, str):
                raise ModelcostError(f"{model_name}: {what}{where} is not valid UTF-8 text; the file is corrupt")


def _check_type(elem_type: int, what: str, where: str, model_name: str) -> None:
    if elem_type == 8:  # string: a real ONNX type without a size per element; a later stage says what it cannot do
        return
    if onnx_dtype_bits(elem_type) == 0:
        raise ModelcostError(f"{model_name}: {what}{where} has element type {elem_type}, which is not an ONNX type; "
                             "the file is corrupt or from a newer ONNX")


def _inline_tensors(graph: Any) -> Iterator[tuple[Any, str]]:
    for tensor in graph.initializer:
        yield tensor, f"initializer {tensor.name!r}"
    for index, node in enumerate(graph.node):
        for attr in node.attribute:
            for tensor in ([attr.t] if attr.HasField("t") else []) + list(attr.tensors):
                yield tensor, f"the {_text(attr.name)} tensor of node #{index}"


def _check_size(tensor: Any, what: str, where: str, model_name: str) -> None:
    """An inline tensor's shape must fit the data it holds: a corrupt dim (2**40 elements over 16 stored) would
    otherwise make ONNX's own shape inference try to allocate the declared size (found by the fuzzer: 23 GB)."""
    if tensor.data_location == 1 or tensor.data_type == 8:  # external data is checked by onnx_external
        return
    if any(d < 0 for d in tensor.dims):
        raise ModelcostError(f"{model_name}: {what}{where} has a negative dim {list(tensor.dims)}; the file is corrupt")
    declared = numel(tensor.dims)
    if tensor.raw_data:
        fits = len(tensor.raw_data) == packed_nbytes(tensor.dims, tensor.data_type)
        held = f"{len(tensor.raw_data):,} bytes"
    else:
        stored = max(len(tensor.float_data), len(tensor.int32_data), len(tensor.int64_data),
                     len(tensor.double_data), len(tensor.uint64_data))
        fits = declared <= 8 * stored + 8  # typed fields may pack up to 8 sub-byte values per int32
        held = f"{stored:,} values"
    if not fits:
        raise ModelcostError(f"{model_name}: {what}{where} declares shape {list(tensor.dims)} ({declared:,} elements) "
                             f"but holds {held}; the file is corrupt")


def _graphs(graph: Any, where: str) -> Iterator[tuple[str, Any]]:
    """(where, graph) for the graph and every subgraph: '' for the main graph, ' (in the body of node #3)'."""
    yield where, graph
    for index, node in enumerate(graph.node):
        for attr in node.attribute:
            step = f"the {_text(attr.name)} of node #{index}"
            inner = f" (in {step}, {where.removeprefix(' (in ')}" if where else f" (in {step})"
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _graphs(sub, inner)


def _names(graph: Any) -> Iterator[tuple[str, Any]]:
    yield "the graph name", graph.name
    for vi in [*graph.input, *graph.output, *graph.value_info]:
        yield "a tensor name", vi.name
    for tensor in graph.initializer:
        yield "an initializer name", tensor.name
        for entry in tensor.external_data:  # location, offset, length: read as text to find the data file
            yield f"the external-data {_text(entry.key)!s} of initializer {_text(tensor.name)!r}", entry.value
            yield f"an external-data key of initializer {_text(tensor.name)!r}", entry.key
    yield from _node_names(graph.node)


def _node_names(nodes: Any) -> Iterator[tuple[str, Any]]:
    for index, node in enumerate(nodes):
        for what, value in (("name", node.name), ("op type", node.op_type), ("domain", node.domain)):
            yield f"the {what} of node #{index}", value
        for value in [*node.input, *node.output]:
            yield f"an input or output name of node #{index}", value
        for attr in node.attribute:
            yield f"an attribute name of node #{index}", attr.name


def _text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)
