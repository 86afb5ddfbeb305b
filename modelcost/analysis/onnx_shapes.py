"""Shapes of every tensor of an ONNX graph at the bound input shapes, without the weights.

1. A *skeleton* of the model is built (``onnx_skeleton``): the same nodes, inputs, outputs and initializer
   dims, but every tensor bigger than a few KB is replaced by a dims-only stub marked external. Shape
   inference then serialises a few hundred KB even for a 7B-parameter model (no weight bytes are copied, none
   are read). The bound input shapes are written into the skeleton's inputs; model-local functions are inlined.
   Nodes written out of topological order are sorted.
2. ``onnx.shape_inference.infer_shapes(data_prop=True)`` fills in the intermediates (subgraphs of If included).
3. Gaps are refined: ``onnx_fold`` evaluates small shape arithmetic (Range lengths, Expand of a folded
   table, ...) and a few onnxruntime contrib ops get their output shape here; the results go back in as
   value_info and inference runs again (a few rounds at most). The rows a mixture of experts routes to each
   expert (NonZero over the top-k routing mask, a data-dependent length) are bound by ``onnx_moe`` where it
   recognises the routing, and step 3 runs again.
   Where a main-graph tensor is still without a static shape, ONNX Runtime's symbolic shape inference
   (``onnx_symbolic``) runs on the same skeleton, its static shapes go back in as hints, and step 3 runs again. It comes
   after the folding only because it costs more (it imports sympy: BENCHMARKS.md, 'Figures that used to live in
   docstrings').
4. Loop / Scan bodies, whose loop-carried shapes onnx leaves unknown, are inferred on their own with the
   initial loop-carried shapes (assumed stable across iterations).

The result is an ``InferredOnnx``: the inferred skeleton (same node order as the file) and a ``ShapeTable``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelcost.analysis.onnx_fold import (
    expanded_shape,
    fold_values,
    padded_shape,
    reshaped_shape,
    resized_shape,
    scalar_int,
    sliced_shape,
    tiled_shape,
)
from modelcost.analysis.onnx_skeleton import skeleton, topological_sort
from modelcost.core.errors import ModelcostError
from modelcost.core.lazy import require
from modelcost.core.types import TensorSpec
from modelcost.loaders.onnx_graph import implicit_inputs
from modelcost.loaders.onnx_types import is_static, value_info_dtype, value_info_shape

# rounds of fold -> hint -> infer at most; they stop as soon as one adds no hint. EnCodec's export chains about 30
# Pads whose pads each fold only once the one before has a shape (4 rounds, the old cap, left it at 2% of its MACs)
REFINE_ROUNDS = 64
Scope = tuple[Any, ...]  # (node index, attribute name, node index, attribute name, ...) from the main graph


class TensorInfo:
    """A tensor's inferred shape (None: rank unknown; str dims: symbolic) and dtype name."""

    __slots__ = ("shape", "dtype", "static_shape")

    def __init__(self, shape: tuple[int | str, ...] | None, dtype: str | None) -> None:
        self.shape = shape
        self.dtype = dtype
        self.static_shape: tuple[int, ...] | None = shape if is_static(shape) else None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorInfo) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __repr__(self) -> str:
        return f"TensorInfo(shape={self.shape}, dtype={self.dtype!r})"


@dataclass
class ShapeTable:
    scopes: dict[Scope, dict[str, TensorInfo]] = field(default_factory=dict)

    def put(self, scope: Scope, name: str, info: TensorInfo) -> None:
        known = self.scopes.setdefault(scope, {}).get(name)
        if known is None or (known.static_shape is None and info.shape is not None):
            self.scopes[scope][name] = info

    def get(self, scope: Scope, name: str) -> TensorInfo | None:
        """The tensor as seen from ``scope``: its own scope first, then the enclosing ones (outer-scope names)."""
        for depth in range(len(scope), -1, -2):
            info = self.scopes.get(scope[:depth], {}).get(name)
            if info is not None:
                return info
        return None


@dataclass
class InferredOnnx:
    model: Any  # the inferred skeleton: nodes as in the file, initializers as dims-only stubs when big
    table: ShapeTable
    values: dict[str, Any]  # folded small values of the main graph (If conditions, Loop trip counts, ...)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------
# inference


def run_onnx_inference(model: Any, what: str = "the model") -> Any:
    """onnx shape inference with value propagation; without it if that fails; a clear error if both fail."""
    from onnx import shape_inference

    try:
        return shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - retried below without data propagation
        pass
    try:
        return shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=False)
    except Exception as exc:  # noqa: BLE001 - onnx raises several types here
        line = str(exc).strip().splitlines()[-1] if str(exc).strip() else exc.__class__.__name__
        raise ModelcostError(
            f"shape inference of {what} failed at the given input shapes ({line}); check --input-shape / --batch-size"
        ) from None


def infer(model: Any, inputs: list[TensorSpec], opset: int | None) -> InferredOnnx:
    """Shapes of every tensor at ``inputs`` (see module doc)."""
    sk = skeleton(model, inputs)
    notes: list[str] = []
    if topological_sort(sk.graph):
        notes.append("the file's nodes are not in topological order; they were counted in a sorted order")
    if len(sk.functions):
        from onnx import inliner

        try:
            sk = inliner.inline_local_functions(sk)
        except Exception as exc:  # noqa: BLE001 - onnx's ValidationError: recursive or duplicate local functions
            first = " ".join(str(exc).split())[:300]
            raise ModelcostError(
                f"the model's local functions cannot be inlined ({first}); the model is malformed"
            ) from None
        notes.append(f"{len(model.functions)} model-local function(s) inlined before counting")
    inferred, table, values = _with_routing(sk, _refined(sk, run_onnx_inference(sk), opset or 1), notes, opset or 1)
    if _unshaped(inferred.graph):
        hinted = _with_symbolic(sk, inferred, notes)
        if hinted is not inferred:
            inferred, table, values = _with_routing(sk, _refined(sk, hinted, opset or 1), notes, opset or 1)
    collect(inferred.graph, (), table, notes, inferred.opset_import, flat_done=True)
    return InferredOnnx(model=inferred, table=table, values=values, notes=notes)


def _refined(sk: Any, inferred: Any, opset: int) -> tuple[Any, ShapeTable, dict[str, Any]]:
    """Step 3: fold small values, hint the shapes they give, infer again (a few rounds at most)."""
    for round_ in range(REFINE_ROUNDS + 1):
        table = ShapeTable()
        _collect_flat(inferred.graph, (), table)
        values, hints = _refine(inferred.graph, table, opset, inferred.opset_import)
        if not hints or round_ == REFINE_ROUNDS:
            break
        _add_hints(sk.graph, hints)
        inferred = run_onnx_inference(sk)
    return inferred, table, values


def _with_routing(
    sk: Any, state: tuple[Any, ShapeTable, dict[str, Any]], notes: list[str], opset: int
) -> tuple[Any, ShapeTable, dict[str, Any]]:
    """Step 3 again after binding the rows a mixture of experts routes to each expert (``onnx_moe``), when it
    binds any that inference left unknown; ``state`` unchanged otherwise."""
    from modelcost.analysis.onnx_moe import bind_routing

    inferred, table, values = state
    binding = bind_routing(inferred.graph, lambda n: getattr(table.get((), n), "static_shape", None), values)
    hints = {
        name: TensorInfo(shape, "int64")
        for name, shape in binding.shapes.items()
        if getattr(table.get((), name), "static_shape", None) is None
    }
    if not hints:
        return state
    _add_hints(sk.graph, hints)
    notes += binding.notes()
    return _refined(sk, run_onnx_inference(sk), opset)


def _unshaped(graph: Any) -> set[str]:
    """Main-graph node outputs that inference left without a static shape."""
    static = {vi.name for vi in (*graph.value_info, *graph.output) if is_static(value_info_shape(vi.type))}
    return {o for node in graph.node for o in node.output if o and o not in static}


def _with_symbolic(sk: Any, inferred: Any, notes: list[str]) -> Any:
    """onnx's inference again, hinted with the static shapes ORT's symbolic inference finds where onnx's did not
    (``onnx_symbolic``); ``inferred`` unchanged when it finds none."""
    from modelcost.analysis.onnx_symbolic import symbolic_shapes

    missing = _unshaped(inferred.graph)
    found = {name: vi for name, vi in symbolic_shapes(sk).items() if name in missing and vi.type.tensor_type.elem_type}
    if not found:
        return inferred
    keep = [vi for vi in sk.graph.value_info if vi.name not in found]
    del sk.graph.value_info[:]
    sk.graph.value_info.extend(keep)
    sk.graph.value_info.extend(found.values())
    notes.append(
        f"onnx shape inference left {len(missing)} tensor(s) without a static shape; ONNX Runtime's symbolic shape "
        f"inference gave {len(found)} of them"
    )
    return run_onnx_inference(sk)


def _collect_flat(graph: Any, scope: Scope, table: ShapeTable) -> None:
    for vi in (*graph.input, *graph.value_info, *graph.output):
        table.put(scope, vi.name, TensorInfo(value_info_shape(vi.type), value_info_dtype(vi.type)))
    from modelcost.loaders.onnx_types import onnx_dtype_name

    for t in graph.initializer:
        table.put(scope, t.name, TensorInfo(tuple(int(d) for d in t.dims), onnx_dtype_name(t.data_type)))


def _input(node: Any, i: int, values: dict[str, Any]) -> Any | None:
    return values.get(node.input[i]) if len(node.input) > i and node.input[i] else None


# shape rules for ops whose shape input is a folded value that ONNX's inference cannot read (computed by the
# exporter's shape arithmetic): swin's and Mask2Former's window padding, MobileViT's and EnCodec's pads rounded up,
# DINOv2's resized position embeddings (a transformers export scan, 2026-11-27: their counts stopped there). Expand
# is a hand rule although ORT's symbolic inference finds its shape too: every TorchScript export of a BERT-style
# embedding needs it, and this one broadcast saves importing sympy (BENCHMARKS.md, 'Figures that used to live in
# docstrings').
_FOLDED_SHAPE_RULES: dict[str, Callable[[Any, Callable[[str], Any], dict[str, Any]], Any]] = {
    "Slice": lambda node, static, values: sliced_shape(node, static(node.input[0]), values),
    "Expand": lambda node, static, values: expanded_shape(static(node.input[0]), _input(node, 1, values)),
    "Pad": lambda node, static, values: padded_shape(static(node.input[0]), _input(node, 1, values)),
    "Reshape": lambda node, static, values: reshaped_shape(
        static(node.input[0]), _input(node, 1, values),
        next((int(a.i) for a in node.attribute if a.name == "allowzero"), 0)),
    "Resize": lambda node, static, values: resized_shape(static(node.input[0]), _input(node, 2, values),
                                                         _input(node, 3, values)),
    "Tile": lambda node, static, values: tiled_shape(static(node.input[0]), _input(node, 1, values)),
    "ConstantOfShape": lambda node, static, values: (
        tuple(int(d) for d in values[node.input[0]].reshape(-1)) if node.input[0] in values else None),
}


def _refine(graph: Any, table: ShapeTable, opset: int, opsets: Any) -> tuple[dict[str, Any], dict[str, TensorInfo]]:
    """Folded values, and shape hints for main-graph tensors whose inferred shape is not static."""
    from modelcost.analysis.onnx_shape_rules import contrib_output_shape

    def static(name: str) -> tuple[int, ...] | None:
        info = table.get((), name)
        return info.static_shape if info else None

    values, lengths = fold_values(graph, static, opset)
    hints: dict[str, TensorInfo] = {}
    for node in graph.node:
        for i, name in enumerate(node.output):
            info = table.get((), name)
            if not name or (info is not None and info.static_shape is not None):
                continue
            shape = None
            if name in values:
                shape = tuple(int(d) for d in values[name].shape)
            elif name in lengths:
                shape = lengths[name]
            elif node.op_type in _FOLDED_SHAPE_RULES and node.domain in ("", "ai.onnx") and i == 0:
                shape = _FOLDED_SHAPE_RULES[node.op_type](node, static, values)
            elif node.op_type in ("Loop", "Scan"):
                shape = _loop_output_shape(node, i, table, values, opsets)
            elif i == 0:
                shape = contrib_output_shape(node, table)
            if shape is not None:
                dtype = info.dtype if info and info.dtype else _hint_dtype(node, values, name, table)
                hints[name] = TensorInfo(shape, dtype)
                table.put((), name, hints[name])
    return values, hints


def loop_trip_count(value: Any) -> int | None:
    """A Loop's trip count M when it is one non-negative integer; None for anything else a malformed file may hold
    there (several values, a [[3]] block, strings, bools, floats: M is an int64 scalar by the spec)."""
    n = scalar_int(value)
    return n if n is not None and n >= 0 else None


def _loop_output_shape(
    node: Any, i: int, table: ShapeTable, values: dict[str, Any], opsets: Any
) -> tuple[int, ...] | None:
    """Output ``i`` of a main-graph Loop / Scan from its body's inferred output shapes (first iteration)."""
    from modelcost.analysis.onnx_shape_rules import scan_trip_count

    body = next((a.g for a in node.attribute if a.name == "body"), None)
    if body is None:
        return None
    body = _infer_body(node, body, (), table, [], opsets)
    outs = [value_info_shape(vi.type) for vi in body.output]
    if node.op_type == "Loop":
        n_state = len(node.input) - 2
        j = i + 1  # body outputs: condition, states, scan outputs
        trip = loop_trip_count(values.get(node.input[0]) if node.input and node.input[0] else None)
        axis = 0
    else:
        n_state = len(node.input) - next((int(a.i) for a in node.attribute if a.name == "num_scan_inputs"), 0)
        j = i
        trip = scan_trip_count(node, lambda n: table.get((), n))
        axes = next((list(a.ints) for a in node.attribute if a.name == "scan_output_axes"), [])
        axis = axes[i - n_state] if i >= n_state and i - n_state < len(axes) else 0
    shape = outs[j] if j < len(outs) else None
    if shape is None or not is_static(shape):
        return None
    if i < n_state:
        return shape  # type: ignore[return-value]
    if trip is None:
        return None
    full = list(shape)
    full.insert(axis % (len(full) + 1), trip)
    return tuple(full)  # type: ignore[arg-type]


def _hint_dtype(node: Any, values: dict[str, Any], name: str, table: ShapeTable) -> str | None:
    if name in values:
        from onnx import helper

        from modelcost.loaders.onnx_types import onnx_dtype_name

        try:
            return onnx_dtype_name(helper.np_dtype_to_tensor_dtype(values[name].dtype))
        except Exception:  # noqa: BLE001
            return None
    first = table.get((), node.input[0]) if node.input else None
    return first.dtype if first else None


def _add_hints(graph: Any, hints: dict[str, TensorInfo]) -> None:
    from onnx import helper

    from modelcost.loaders.onnx_types import _ONNX_DTYPES

    by_name = {name: code for code, (name, _) in _ONNX_DTYPES.items()}
    keep = [vi for vi in graph.value_info if vi.name not in hints]
    del graph.value_info[:]
    graph.value_info.extend(keep)
    for name, info in hints.items():
        elem = by_name.get(info.dtype or "", 0)
        graph.value_info.append(helper.make_tensor_value_info(name, elem, list(info.shape or ())))


# ---------------------------------------------------------------------------------------------------------
# subgraphs


def collect(
    graph: Any, scope: Scope, table: ShapeTable, notes: list[str], opsets: Any = (), flat_done: bool = False
) -> None:
    """Fill ``table`` for ``graph`` and, recursively, its subgraphs (Loop / Scan bodies inferred on their own)."""
    if not flat_done:
        _collect_flat(graph, scope, table)
    for idx, node in enumerate(graph.node):
        for attr in node.attribute:
            if not attr.HasField("g"):
                continue
            sub_scope = (*scope, idx, attr.name)
            body = attr.g
            if node.op_type in ("Loop", "Scan") and node.domain in ("", "ai.onnx") and _needs_body_inference(body):
                body = _infer_body(node, body, scope, table, notes, opsets)
                attr.g.CopyFrom(body)
            collect(body, sub_scope, table, notes, opsets)


def _needs_body_inference(body: Any) -> bool:
    produced = {o for n in body.node for o in n.output}
    known = {vi.name for vi in (*body.value_info, *body.output) if is_static(value_info_shape(vi.type))}
    return bool(produced - known - {""})


def _infer_body(node: Any, body: Any, scope: Scope, table: ShapeTable, notes: list[str], opsets: Any) -> Any:
    """Infer a Loop / Scan body as a graph of its own, its inputs typed from the node's (first-iteration) inputs."""
    onnx = require("onnx")
    from onnx import helper

    from modelcost.analysis.onnx_shape_rules import body_input_types

    graph = onnx.GraphProto()
    graph.CopyFrom(body)
    typed = body_input_types(node, body, lambda n: table.get(scope, n))
    for vi in graph.input:
        if vi.name in typed and typed[vi.name] is not None:
            vi.CopyFrom(typed[vi.name])
    for name in implicit_inputs(body):
        info = table.get(scope, name)
        if info is not None and info.shape is not None:
            graph.input.append(_make_vi(helper, name, info))
    mini = onnx.ModelProto(ir_version=10)
    mini.opset_import.extend(opsets)
    mini.graph.CopyFrom(graph)
    label = node.name or node.op_type
    try:
        result = run_onnx_inference(mini, f"the body of {node.op_type} {label!r}").graph
    except ModelcostError:
        notes.append(f"{node.op_type} {label!r}: the body's shapes could not be inferred; its costs are not counted")
        return body
    del result.input[len(body.input) :]
    notes.append(
        f"{node.op_type} {label!r}: body shapes inferred from the initial loop-carried shapes "
        "(assumed the same every iteration)"
    )
    return result


def _make_vi(helper: Any, name: str, info: TensorInfo) -> Any:
    from modelcost.loaders.onnx_types import _ONNX_DTYPES

    code = {n: c for c, (n, _) in _ONNX_DTYPES.items()}.get(info.dtype or "", 0)
    return helper.make_tensor_value_info(name, code, [d if d != "" else None for d in info.shape or ()])
