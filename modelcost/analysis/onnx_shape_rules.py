"""Output shapes onnx's shape inference does not give: onnxruntime contrib ops (com.microsoft), and the
input types of a Loop / Scan body at the node's first iteration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelcost.loaders.onnx_types import is_static

# com.microsoft ops whose first output has the shape of their first input
_SAME_AS_INPUT = frozenset(
    "Gelu FastGelu BiasGelu QuickGelu BiasAdd SkipLayerNormalization SimplifiedLayerNormalization "
    "SkipSimplifiedLayerNormalization RotaryEmbedding LayerNormalization BiasDropout".split()
)


def _static(table: Any, name: str) -> tuple[int, ...] | None:
    info = table.get((), name) if name else None
    return info.static_shape if info else None


# ONNX ops whose output 0 has the shape of input 0: a fallback for the few (function ops such as
# GroupNormalization-21) that onnx's inference leaves without a shape
_ONNX_SAME_AS_INPUT = frozenset(
    "GroupNormalization LayerNormalization InstanceNormalization BatchNormalization RMSNormalization "
    "MeanVarianceNormalization LpNormalization Softmax LogSoftmax Hardmax Gelu Mish Swish HardSwish Relu "
    "Sigmoid Tanh Elu Celu Selu Softplus Softsign LeakyRelu ThresholdedRelu HardSigmoid Erf RotaryEmbedding".split()
)


def contrib_output_shape(node: Any, table: Any) -> tuple[int, ...] | None:
    """Shape of output 0 of a com.microsoft op (or of an ONNX op in ``_ONNX_SAME_AS_INPUT``) whose inputs
    have static shapes, or None."""
    if not node.input:
        return None
    x = _static(table, node.input[0])
    if x is None:
        return None
    op = node.op_type
    if node.domain in ("", "ai.onnx"):
        return x if op in _ONNX_SAME_AS_INPUT else None
    if node.domain != "com.microsoft":
        return None
    if op in _SAME_AS_INPUT:
        return x
    if op == "Attention" and len(node.input) > 1:
        w = _static(table, node.input[1])
        sizes = _ints(node, "qkv_hidden_sizes")
        if w is None:
            return None
        v_hidden = sizes[2] if sizes else w[1] // 3
        return (*x[:-1], v_hidden)
    if op == "MultiHeadAttention" and len(node.input) > 2:
        v = _static(table, node.input[2])
        if v is None or len(x) != 3:
            return None
        v_hidden = v[-1] if len(v) == 3 else v[1] * v[3]  # value [B, S, Dv] or [B, heads, S, head]
        return (x[0], x[1], v_hidden)
    if op == "QOrderedMatMul" and len(node.input) > 2:
        # neither onnx's nor ONNX Runtime's symbolic inference knows this CUDA-only op: A [..., K] x B [K, N]
        b = _static(table, node.input[2])
        return (*x[:-1], b[-1]) if b is not None and len(b) == 2 else None
    if op == "FusedMatMul" and len(node.input) > 1:
        b = _static(table, node.input[1])
        if b is None:
            return None
        a = list(x)
        b = list(b)
        if _int(node, "transA") and len(a) >= 2:
            a[-1], a[-2] = a[-2], a[-1]
        if _int(node, "transB") and len(b) >= 2:
            b[-1], b[-2] = b[-2], b[-1]
        a_batch, b_batch = [1] * (len(b) - len(a)) + a[:-2], [1] * (len(a) - len(b)) + b[:-2]
        batch = [max(p, q) for p, q in zip(a_batch, b_batch, strict=True)]
        return (*batch, a[-2], b[-1])
    return None


def _int(node: Any, name: str, default: int = 0) -> int:
    return next((int(a.i) for a in node.attribute if a.name == name), default)


def _ints(node: Any, name: str) -> list[int]:
    return next((list(a.ints) for a in node.attribute if a.name == name), [])


def body_input_types(node: Any, body: Any, lookup: Callable[[str], Any]) -> dict[str, Any]:
    """ValueInfoProtos for a Loop / Scan body's inputs, from the node's inputs (first iteration)."""
    from onnx import helper

    from modelcost.loaders.onnx_types import _ONNX_DTYPES

    code = {n: c for c, (n, _) in _ONNX_DTYPES.items()}
    names = [vi.name for vi in body.input]
    types: dict[str, Any] = {}

    def make(name: str, outer: str, drop_axis: int | None = None) -> Any:
        info = lookup(outer) if outer else None
        if info is None or info.shape is None:
            return None
        shape = list(info.shape)
        if drop_axis is not None and shape:
            del shape[drop_axis % len(shape)]
        return helper.make_tensor_value_info(
            name, code.get(info.dtype or "", 0), [d if d != "" else None for d in shape]
        )

    if node.op_type == "Loop":
        if len(names) >= 2:
            types[names[0]] = helper.make_tensor_value_info(names[0], 7, [])  # iteration number, int64 scalar
            types[names[1]] = helper.make_tensor_value_info(names[1], 9, [])  # condition, bool scalar
        for name, outer in zip(names[2:], node.input[2:], strict=False):
            types[name] = make(name, outer)
        return types
    n_scan = _int(node, "num_scan_inputs")
    n_state = len(node.input) - n_scan
    axes = _ints(node, "scan_input_axes") or [0] * n_scan
    for j, (name, outer) in enumerate(zip(names, node.input, strict=False)):
        types[name] = make(name, outer) if j < n_state else make(name, outer, axes[j - n_state])
    return types


def scan_trip_count(node: Any, lookup: Callable[[str], Any]) -> int | None:
    """Iterations of a Scan: the length of its first scan input along its scan axis."""
    n_scan = _int(node, "num_scan_inputs")
    if n_scan <= 0:
        return None
    first = node.input[len(node.input) - n_scan]
    axis = (_ints(node, "scan_input_axes") or [0])[0]
    info = lookup(first)
    shape = info.static_shape if info is not None else None
    if not shape:
        return None
    return shape[axis % len(shape)] if is_static(shape) else None
