"""The *skeleton* of an ONNX model: the same nodes, inputs, outputs and initializer dims, with every tensor bigger
than ``onnx_lean.STUB_BYTES`` (integer tensors: ``KEEP_INT_BYTES``) replaced by a dims-only stub marked external
(whose location names no real file). Shape inference (``onnx_shapes``) serialises the skeleton, a few hundred KB
even for a 7B-parameter model: no weight byte is copied or read. Also here: the topological order the inference
needs (what a node reads comes from ``loaders.onnx_graph``, which the loader's cycle check shares)."""

from __future__ import annotations

from typing import Any

from modelcost.core.lazy import require
from modelcost.core.types import TensorSpec
from modelcost.loaders.onnx_graph import node_reads
from modelcost.loaders.onnx_lean import INT_TYPES, KEEP_INT_BYTES, STUB_BYTES, STUB_LOCATION


def _is_big(tensor: Any) -> bool:
    """Inline tensors above ``onnx_lean``'s limits are replaced by dims-only stubs in the skeleton (the same rule
    the lean reader applies to a file, for models built in memory)."""
    if tensor.data_location == 1:
        return False  # already external (or a stub): only dims and a few key/values
    return tensor.ByteSize() > (KEEP_INT_BYTES if tensor.data_type in INT_TYPES else STUB_BYTES)


def _stub(onnx: Any, tensor: Any) -> Any:
    stub = onnx.TensorProto(name=tensor.name, data_type=tensor.data_type, dims=tensor.dims)
    stub.data_location = onnx.TensorProto.EXTERNAL
    entry = stub.external_data.add()
    entry.key, entry.value = "location", STUB_LOCATION
    return stub


def _skeleton_graph(onnx: Any, graph: Any) -> Any:
    sk = onnx.GraphProto(name=graph.name)
    sk.input.extend(graph.input)
    sk.output.extend(graph.output)
    sk.value_info.extend(graph.value_info)
    sk.sparse_initializer.extend(graph.sparse_initializer)
    sk.initializer.extend(_stub(onnx, t) if _is_big(t) else t for t in graph.initializer)
    for node in graph.node:
        heavy = any((a.HasField("t") and _is_big(a.t)) or a.HasField("g") or len(a.graphs) for a in node.attribute)
        if not heavy:
            sk.node.append(node)
            continue
        copy = sk.node.add()
        copy.input.extend(node.input)
        copy.output.extend(node.output)
        copy.name, copy.op_type, copy.domain = node.name, node.op_type, node.domain
        for attr in node.attribute:
            a = copy.attribute.add()
            if attr.HasField("g"):
                a.name, a.type = attr.name, attr.type
                a.g.CopyFrom(_skeleton_graph(onnx, attr.g))
            elif attr.HasField("t") and _is_big(attr.t):
                a.name, a.type = attr.name, attr.type
                a.t.CopyFrom(_stub(onnx, attr.t))
            else:
                a.CopyFrom(attr)
    return sk


def topological_sort(graph: Any) -> bool:
    """Reorder the graph's nodes so that each comes after the producers of its inputs (ONNX requires this
    order; a few tools write graphs that break it). Nothing changes for a sorted graph."""
    available = {vi.name for vi in graph.input} | {t.name for t in graph.initializer} | {""}
    available |= {s.values.name for s in graph.sparse_initializer}
    nodes = list(graph.node)
    needs = [node_reads(node) for node in nodes]
    seen = set(available)
    for required, node in zip(needs, nodes, strict=True):
        if not _ready(required, seen):
            break
        seen.update(node.output)
    else:
        return False  # already sorted
    ordered: list[Any] = []
    pending = list(range(len(nodes)))
    while pending:
        ready = [i for i in pending if all(n in available for n in needs[i])]
        if not ready:
            return False  # a cycle or an undefined input: leave the order as written
        for i in ready:
            ordered.append(nodes[i])
            available.update(nodes[i].output)
        pending = [i for i in pending if i not in set(ready)]
    del graph.node[:]
    graph.node.extend(ordered)
    return True


def _ready(required: list[str], available: set[str]) -> bool:
    return all(n in available for n in required)


def skeleton(model: Any, inputs: list[TensorSpec]) -> Any:
    """The model without weight bytes, its inputs set to the bound shapes."""
    onnx = require("onnx")
    sk = onnx.ModelProto(ir_version=model.ir_version)
    sk.opset_import.extend(model.opset_import)
    sk.functions.extend(model.functions)
    sk.graph.CopyFrom(_skeleton_graph(onnx, model.graph))
    bound = {s.name: s for s in inputs}
    for vi in sk.graph.input:
        spec = bound.get(vi.name)
        if spec is None:
            continue
        shape = vi.type.tensor_type.shape
        shape.Clear()
        for d in spec.shape:
            shape.dim.add().dim_value = int(d)
    return sk
