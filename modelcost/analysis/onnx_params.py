"""Which ONNX tensors are parameters: the rule, applied from dims and dtypes only (no weight bytes).

Every initializer (of the main graph or of a subgraph) is exactly one of:

* a **buffer** when every use is a BatchNormalization running mean or variance (inputs 3 and 4): PyTorch keeps
  those as buffers, not parameters, and so do we (``params.buffers``, not in the total);
* a **constant** when it holds at most one element (epsilon, a scale, a zero point, an exponent), or when every
  use is a *non-weight slot*: a shape, axes, indices, pads, starts/ends, a clip bound, or the scale / zero
  point of a quantize / dequantize / QLinear op (``NON_WEIGHT_SLOTS``), or when its dtype is never a weight's:
  bool (attention masks), int64 / uint64 (position and index tables), strings, and 16/32-bit integers other
  than a quantized weight or bias (``DequantizeLinear`` input 0, ``QLinearConv`` bias) - the report says how
  many such tables were set apart;
* a **parameter** otherwise - weights, biases, embeddings, an int8 weight feeding DequantizeLinear and its
  int32 bias. An initializer used by no node is a parameter too (it is stored) and the report says so.

Constant *nodes* are always constants, whatever they hold (exporters use them for folded shape arithmetic and
derived tables). ``params.constants`` counts the elements of constant initializers and Constant nodes.
A parameter read by more than one node (tied weights, weights shared by If branches) is counted once in the
total; ``params.shared`` counts its elements. Two initializers with identical bytes but different names
cannot be recognised as tied without reading the bytes: they are counted twice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from modelcost.analysis.summary import ParamTensor
from modelcost.loaders.onnx_graph import all_graphs
from modelcost.loaders.onnx_types import numel, onnx_dtype_name

_REDUCE = (
    "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare"
)
NON_WEIGHT_SLOTS: dict[str, frozenset[int]] = {
    **dict.fromkeys(_REDUCE.split(), frozenset({1})),
    **dict.fromkeys(
        "Reshape Expand Tile Unsqueeze Squeeze TopK Split Upsample CumSum Trilu Compress".split(), frozenset({1})
    ),
    **dict.fromkeys("Gather GatherElements GatherND ScatterND ScatterElements Scatter".split(), frozenset({1})),
    "Slice": frozenset({1, 2, 3, 4}),
    "Pad": frozenset({1, 2, 3}),
    "Resize": frozenset({1, 2, 3}),
    "CenterCropPad": frozenset({1}),
    "ConstantOfShape": frozenset({0}),
    "Range": frozenset({0, 1, 2}),
    "OneHot": frozenset({1, 2}),
    "Clip": frozenset({1, 2}),
    "Dropout": frozenset({1, 2}),
    "QuantizeLinear": frozenset({1, 2}),
    "DequantizeLinear": frozenset({1, 2}),
    "QLinearConv": frozenset({1, 2, 4, 5, 6, 7}),
    "QLinearMatMul": frozenset({1, 2, 4, 5, 6, 7}),
    "ConvInteger": frozenset({2, 3}),
    "MatMulInteger": frozenset({2, 3}),
    "LSTM": frozenset({4}),
    "GRU": frozenset({4}),
    "RNN": frozenset({4}),
    "Loop": frozenset({0, 1}),
    "If": frozenset({0}),
    "NonMaxSuppression": frozenset({2, 3, 4}),
    "RotaryEmbedding": frozenset({3}),
}
BUFFER_SLOTS: dict[str, frozenset[int]] = {"BatchNormalization": frozenset({3, 4})}
NEVER_WEIGHT_DTYPES = frozenset({"bool", "string", "int64", "uint64"})
INT_DTYPES = frozenset({"int32", "uint32", "int16", "uint16"})  # weights only where quantized weights / biases go
INT_WEIGHT_SLOTS = frozenset({("DequantizeLinear", 0), ("QLinearConv", 8)})


@dataclass
class ParamSplit:
    params: list[ParamTensor] = field(default_factory=list)
    buffers: list[ParamTensor] = field(default_factory=list)
    constants: int = 0  # elements of constant initializers and Constant nodes
    shared: int = 0  # elements of parameters read by more than one node
    kind: dict[str, str] = field(default_factory=dict)  # initializer name -> "param" | "buffer" | "constant"
    notes: list[str] = field(default_factory=list)


def _uses(root: Any) -> dict[str, list[tuple[str, int, int]]]:
    """tensor name -> [(op type, input slot, id of the consuming node)] over every graph."""
    uses: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for graph in all_graphs(root):
        for node in graph.node:
            for slot, name in enumerate(node.input):
                if name:
                    uses[name].append((node.op_type, slot, id(node)))
    return uses


def _constant_node_elements(node: Any) -> int:
    for attr in node.attribute:
        if attr.HasField("t"):
            return numel(attr.t.dims)
        if attr.HasField("sparse_tensor"):
            return numel(attr.sparse_tensor.dims)
        if attr.name in ("value_floats", "value_ints", "value_strings"):
            return len(attr.floats) + len(attr.ints) + len(attr.strings)
    return 1


def classify(root: Any) -> ParamSplit:
    """Apply the module's rule to every initializer and Constant node of ``root`` and its subgraphs."""
    uses = _uses(root)
    split = ParamSplit()
    unused = 0
    tables: dict[str, list[int]] = defaultdict(list)  # dtype -> element counts of non-weight-dtype initializers
    for graph in all_graphs(root):
        tensors = [(t.name, tuple(int(d) for d in t.dims), t.data_type) for t in graph.initializer]
        tensors += [
            (s.values.name, tuple(int(d) for d in s.dims), s.values.data_type) for s in graph.sparse_initializer
        ]
        for name, dims, elem_type in tensors:
            dtype = onnx_dtype_name(elem_type)
            kind = _kind(uses.get(name, []), numel(dims))
            if kind == "param" and not _weight_dtype(dtype, uses.get(name, [])):
                kind = "constant"
                tables[dtype].append(numel(dims))
            split.kind[name] = kind
            tensor = ParamTensor(name, dims, dtype)
            if kind == "constant":
                split.constants += tensor.numel
            elif kind == "buffer":
                split.buffers.append(tensor)
            else:
                split.params.append(tensor)
                readers = {node_id for _, _, node_id in uses.get(name, [])}
                split.shared += tensor.numel if len(readers) > 1 else 0
                unused += 0 if readers else 1
        split.constants += sum(_constant_node_elements(n) for n in graph.node if n.op_type == "Constant")
    if unused:
        split.notes.append(f"{unused} initializer(s) are read by no node; counted as parameters (they are stored)")
    if tables:
        what = ", ".join(f"{dtype} x{len(sizes)} ({sum(sizes):,} elements)" for dtype, sizes in sorted(tables.items()))
        split.notes.append(f"initializers of a dtype weights never have ({what}: masks, index and position tables) "
                           "are counted as constants, not parameters")
    return split


def _weight_dtype(dtype: str, uses: list[tuple[str, int, int]]) -> bool:
    """Can an initializer of ``dtype``, read at ``uses``, be a weight? (see the module docstring)"""
    if dtype in NEVER_WEIGHT_DTYPES:
        return False
    if dtype in INT_DTYPES:
        return any((op, slot) in INT_WEIGHT_SLOTS for op, slot, _ in uses)
    return True


def _kind(uses: list[tuple[str, int, int]], n: int) -> str:
    if uses and all(slot in BUFFER_SLOTS.get(op, ()) for op, slot, _ in uses):
        return "buffer"
    if n <= 1 or (uses and all(slot in NON_WEIGHT_SLOTS.get(op, ()) for op, slot, _ in uses)):
        return "constant"
    return "param"
