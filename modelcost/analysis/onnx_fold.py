"""Fold the small integer arithmetic of an ONNX graph (shape computations) with numpy.

onnx's own shape inference propagates shape *values* through Shape/Gather/Concat/... but not through every
op (``Range`` is the usual gap: an exported ``arange(seq_len)`` leaves every rotary / position tensor with an
unknown length), and it never says what an ``If`` condition or a ``Loop`` trip count evaluates to. This module
evaluates the nodes whose inputs are all known small values (inline initializers, Constant nodes, the shapes
of statically shaped tensors) for a fixed set of cheap ops. It never touches external data, and it keeps no
value above ``FOLD_MAX_ELEMENTS`` (a Range that long still yields its length).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FOLD_MAX_ELEMENTS = 1 << 16
_EXTERNAL = 1


def _np() -> Any:
    import numpy

    return numpy


def tensor_value(tensor: Any) -> Any | None:
    """A small inline TensorProto as a numpy array; None for external or big tensors."""
    if tensor.data_location == _EXTERNAL:
        return None
    n = 1
    for d in tensor.dims:
        n *= int(d)
    if n > FOLD_MAX_ELEMENTS:
        return None
    from onnx import numpy_helper

    try:
        return numpy_helper.to_array(tensor)
    except Exception:  # noqa: BLE001 - exotic dtypes: just not folded
        return None


def constant_value(node: Any) -> Any | None:
    """Value of a Constant node (value / value_float(s) / value_int(s)), or None."""
    np = _np()
    for attr in node.attribute:
        if attr.name == "value":
            return tensor_value(attr.t)
        if attr.name == "value_float":
            return np.array(attr.f, dtype=np.float32)
        if attr.name == "value_int":
            return np.array(attr.i, dtype=np.int64)
        if attr.name == "value_floats":
            return np.array(list(attr.floats), dtype=np.float32)
        if attr.name == "value_ints":
            return np.array(list(attr.ints), dtype=np.int64)
    return None


def scalar_int(value: Any) -> int | None:
    """A folded value as one integer: a single element of an integer dtype; None for anything else a malformed
    file may hold there (several values, strings, bools, floats)."""
    if value is None or getattr(value, "size", 0) != 1 or getattr(value, "dtype", None) is None:
        return None
    return int(value.reshape(())) if value.dtype.kind in "iu" else None


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _slice(x: Any, starts: Any, ends: Any, axes: Any = None, steps: Any = None) -> Any:
    axes = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        index[a] = slice(int(s), int(e), st)
    return x[tuple(index)]


def _unsqueeze(x: Any, axes: Any) -> Any:
    np = _np()
    out_rank = x.ndim + len(axes)
    for a in sorted(int(a) % out_rank for a in axes):
        x = np.expand_dims(x, a)
    return x


def _div(a: Any, b: Any) -> Any:
    np = _np()
    if np.issubdtype(np.result_type(a, b), np.integer):
        return (np.trunc(a / b)).astype(np.result_type(a, b))
    return a / b


def _reshape(x: Any, shape: Any) -> Any:
    dims = [x.shape[i] if int(d) == 0 else int(d) for i, d in enumerate(shape)]
    return x.reshape(dims)


def _range(start: Any, limit: Any, delta: Any) -> Any:
    np = _np()
    return np.arange(start.item(), limit.item(), delta.item(), dtype=start.dtype)


def range_length(start: Any, limit: Any, delta: Any) -> int:
    import math

    return max(int(math.ceil((float(limit) - float(start)) / float(delta))), 0)


def _cast(x: Any, to: int) -> Any:
    from onnx import helper

    return x.astype(helper.tensor_dtype_to_np_dtype(to))


def _gather(x: Any, idx: Any, axis: int) -> Any:
    return _np().take(x, idx, axis=axis)


def _ops(opset: int) -> dict[str, Callable[..., Any]]:
    np = _np()
    return {
        "Identity": lambda a, x: x,
        "Cast": lambda a, x: _cast(x, a["to"]),
        "Gather": lambda a, x, i: _gather(x, i, a.get("axis", 0)),
        "Concat": lambda a, *xs: np.concatenate([np.atleast_1d(x) for x in xs], axis=a["axis"]),
        "Unsqueeze": lambda a, x, axes=None: _unsqueeze(x, a["axes"] if axes is None else axes),
        "Squeeze": lambda a, x, axes=None: np.squeeze(
            x, axis=tuple(int(v) for v in (a.get("axes") if axes is None else axes) or ()) or None
        ),
        "Slice": (lambda a, x: _slice(x, a["starts"], a["ends"], a.get("axes"))) if opset < 10 else _slice_op,
        "Add": lambda a, x, y: x + y,
        "Sub": lambda a, x, y: x - y,
        "Mul": lambda a, x, y: x * y,
        "Div": lambda a, x, y: _div(x, y),
        "Neg": lambda a, x: -x,
        "Abs": lambda a, x: np.abs(x),
        "Min": lambda a, *xs: np.minimum.reduce(np.broadcast_arrays(*xs)),
        "Max": lambda a, *xs: np.maximum.reduce(np.broadcast_arrays(*xs)),
        # window padding (Swin: Mod(56, 7)), pads rounded up (MobileViT, EnCodec: Ceil), sqrt(positions) of a
        # ViT's resized position embeddings (DINOv2: Pow / Sqrt): the shape arithmetic the exporters write
        "Mod": lambda a, x, y: np.fmod(x, y) if a.get("fmod", 0) else np.mod(x, y),
        "Ceil": lambda a, x: np.ceil(x),
        "Floor": lambda a, x: np.floor(x),
        "Sqrt": lambda a, x: np.sqrt(x),
        "Pow": lambda a, x, y: np.power(x, y).astype(np.asarray(x).dtype),
        "Transpose": lambda a, x: np.transpose(x, a.get("perm")),
        "Tile": lambda a, x, repeats: np.tile(x, [int(r) for r in repeats.reshape(-1)]),
        "OneHot": lambda a, indices, depth, values: _one_hot(indices, depth, values, int(a.get("axis", -1))),
        "Equal": lambda a, x, y: np.equal(x, y),
        "Less": lambda a, x, y: np.less(x, y),
        "Greater": lambda a, x, y: np.greater(x, y),
        "LessOrEqual": lambda a, x, y: np.less_equal(x, y),
        "GreaterOrEqual": lambda a, x, y: np.greater_equal(x, y),
        "Not": lambda a, x: np.logical_not(x),
        "And": lambda a, x, y: np.logical_and(x, y),
        "Or": lambda a, x, y: np.logical_or(x, y),
        "Where": lambda a, c, x, y: np.where(c, x, y),
        "Range": lambda a, start, limit, delta: _range(start, limit, delta),
        "Reshape": lambda a, x, s: _reshape(x, s),
        "ReduceProd": lambda a, x, axes=None: (
            np.prod(x, keepdims=bool(a.get("keepdims", 1))) if axes is None and not a.get("axes") else None
        ),
        "ConstantOfShape": lambda a, s: _constant_of_shape(s, a),
        "Expand": lambda a, x, s: np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(d) for d in s))),
    }


def _one_hot(indices: Any, depth: Any, values: Any, axis: int) -> Any | None:
    """ONNX OneHot: ``values`` (off, on) at ``depth`` positions along ``axis``, negative indices counted from the
    end (CANINE's hash buckets to a computed pad vector)."""
    np = _np()
    d = int(np.asarray(depth).reshape(-1)[0])
    if d <= 0 or indices.size * d > FOLD_MAX_ELEMENTS:
        return None
    idx = np.asarray(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + d, idx)
    hot = np.arange(d) == idx[..., None]
    off, on = np.asarray(values).reshape(-1)[:2]
    return np.moveaxis(np.where(hot, on, off), -1, axis if axis >= 0 else idx.ndim + 1 + axis)


def tiled_shape(in_shape: tuple[int, ...] | None, repeats: Any | None) -> tuple[int, ...] | None:
    """Output shape of a Tile of an unfolded tensor by folded ``repeats``: each dim times its repeat."""
    if in_shape is None or repeats is None:
        return None
    r = [int(v) for v in repeats.reshape(-1)]
    return tuple(d * k for d, k in zip(in_shape, r, strict=True)) if len(r) == len(in_shape) else None


def _slice_op(a: dict[str, Any], x: Any, starts: Any, ends: Any, axes: Any = None, steps: Any = None) -> Any:
    return _slice(x, starts, ends, axes, steps)


def _constant_of_shape(shape: Any, attrs: dict[str, Any]) -> Any | None:
    np = _np()
    n = int(np.prod(shape)) if len(shape) else 1
    if n > FOLD_MAX_ELEMENTS:
        return None
    value = attrs.get("value")
    fill = tensor_value(value).reshape(-1)[0] if value is not None else np.float32(0)
    return np.full([int(d) for d in shape], fill, dtype=fill.dtype)


def fold_values(
    graph: Any, static_shape: Callable[[str], tuple[int, ...] | None], opset: int
) -> tuple[dict[str, Any], dict[str, tuple[int, ...]]]:
    """Evaluate what can be evaluated in ``graph`` (not its subgraphs).

    Returns (values: name -> small numpy array, lengths: name -> shape of a Range output too long to keep).
    ``static_shape(name)`` gives a tensor's inferred static shape (for Shape / Size) or None."""
    np = _np()
    values: dict[str, Any] = {}
    for t in graph.initializer:
        v = tensor_value(t)
        if v is not None:
            values[t.name] = v
    lengths: dict[str, tuple[int, ...]] = {}
    ops = _ops(opset)
    for node in graph.node:
        if node.domain not in ("", "ai.onnx") or len(node.output) == 0:
            continue
        op = node.op_type
        try:
            out = _fold_node(node, op, ops, values, static_shape, lengths)
        except Exception:  # noqa: BLE001 - a value we cannot fold stays unknown, nothing more
            out = None
        if out is not None and getattr(out, "size", 0) <= FOLD_MAX_ELEMENTS:
            values[node.output[0]] = np.asarray(out)
    return values, lengths


def _fold_node(
    node: Any,
    op: str,
    ops: dict[str, Callable[..., Any]],
    values: dict[str, Any],
    static_shape: Callable[[str], tuple[int, ...] | None],
    lengths: dict[str, tuple[int, ...]],
) -> Any:
    np = _np()
    if op == "Constant":
        return constant_value(node)
    if op in ("Shape", "Size"):
        shape = static_shape(node.input[0])
        if shape is None:
            return None
        if op == "Size":
            return np.array(int(np.prod(shape)), dtype=np.int64)
        a = _attrs(node)
        return np.array(shape[a.get("start", 0) : a.get("end", len(shape))], dtype=np.int64)
    fn = ops.get(op)
    if fn is None:
        return None
    args = []
    for name in node.input:
        if name == "":
            args.append(None)
        elif name in values:
            args.append(values[name])
        else:
            return None
    while args and args[-1] is None:
        args.pop()
    if op == "Range" and range_length(*args) > FOLD_MAX_ELEMENTS:
        lengths[node.output[0]] = (range_length(*args),)
        return None
    return fn(_attrs(node), *args)


def sliced_shape(node: Any, in_shape: tuple[int, ...] | None, values: dict[str, Any]) -> tuple[int, ...] | None:
    """Output shape of a Slice whose data is not folded (a big or external tensor) but whose input shape and
    starts / ends / axes / steps are known: the slice is applied to a zero-stride view, no data is made."""
    if node.op_type != "Slice" or in_shape is None:
        return None
    np = _np()
    try:
        if any(n and n not in values for n in node.input[1:]):
            return None
        if len(node.input) >= 3:
            args = [values[n] if n else None for n in node.input[1:]]
            while args and args[-1] is None:
                args.pop()
            view = _slice(np.broadcast_to(np.zeros((), bool), in_shape), *args)
        else:
            a = _attrs(node)
            view = _slice(np.broadcast_to(np.zeros((), bool), in_shape), a["starts"], a["ends"], a.get("axes"))
    except Exception:  # noqa: BLE001 - unknown stays unknown
        return None
    return tuple(int(d) for d in view.shape)


def expanded_shape(in_shape: tuple[int, ...] | None, target: Any | None) -> tuple[int, ...] | None:
    """Output shape of an Expand whose data is not folded but whose input shape and target shape value are
    known (the ONNX rule: numpy broadcasting of the two)."""
    if in_shape is None or target is None:
        return None
    np = _np()
    try:
        return tuple(int(d) for d in np.broadcast_shapes(tuple(in_shape), tuple(int(d) for d in target.reshape(-1))))
    except ValueError:
        return None


def padded_shape(in_shape: tuple[int, ...] | None, pads: Any | None) -> tuple[int, ...] | None:
    """Output shape of a Pad (opset 11+) whose pads are a folded value but whose data is not: each axis grows by
    its begin and end pads (ONNX's shape inference gives up on computed pads: Swin's window padding)."""
    if in_shape is None or pads is None:
        return None
    p = [int(v) for v in pads.reshape(-1)]
    if len(p) != 2 * len(in_shape):
        return None
    out = tuple(d + p[i] + p[i + len(in_shape)] for i, d in enumerate(in_shape))
    return out if all(d >= 0 for d in out) else None


def reshaped_shape(in_shape: tuple[int, ...] | None, target: Any | None, allowzero: int = 0) -> tuple[int, ...] | None:
    """Output shape of a Reshape of an unfolded tensor to a folded target (0 keeps the input's dim unless
    ``allowzero``; one -1 takes the rest)."""
    if in_shape is None or target is None:
        return None
    np = _np()
    t = [int(v) for v in target.reshape(-1)]
    if not allowzero:
        t = [in_shape[i] if d == 0 and i < len(in_shape) else d for i, d in enumerate(t)]
    if t.count(-1) > 1:
        return None
    total = int(np.prod(in_shape)) if in_shape else 1
    if -1 in t:
        rest = int(np.prod([d for d in t if d != -1])) if len(t) > 1 else 1
        if rest <= 0 or total % rest:
            return None
        t[t.index(-1)] = total // rest
    return tuple(t) if int(np.prod(t)) == total else None


def resized_shape(in_shape: tuple[int, ...] | None, scales: Any | None, sizes: Any | None) -> tuple[int, ...] | None:
    """Output shape of a Resize (opset 11+) from its folded sizes, else its folded scales (floor of dim x scale,
    the spec's rule without an axes attribute)."""
    if in_shape is None:
        return None
    np = _np()
    if sizes is not None and sizes.size == len(in_shape):
        return tuple(int(v) for v in sizes.reshape(-1))
    if scales is not None and scales.size == len(in_shape):
        return tuple(int(np.floor(d * float(f))) for d, f in zip(in_shape, scales.reshape(-1), strict=True))
    return None
