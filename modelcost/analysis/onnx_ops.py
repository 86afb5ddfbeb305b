"""The op-formula registry of the ONNX counter.

Every ONNX op type ends in exactly one state:

* **counted** - a formula registered here with ``@register("Conv", "ConvInteger")`` computes its MACs and
  FLOPs from the node's input/output shapes and attributes (families live in ``onnx_ops_mac``,
  ``onnx_ops_flops`` and ``onnx_ops_contrib`` for ONNX Runtime's fused ops; they use
  ``modelcost.analysis.formulas`` so the PyTorch counter counts alike);
* **zero_cost** - it only moves or relabels bytes (``ZERO_COST`` below, or a formula returning ``ZERO`` for
  an attribute set that moves data, such as Resize in nearest mode);
* **uncounted** - no formula (NonMaxSuppression, ...), a formula that cannot count this attribute set
  (returns None), or an input/output shape that inference could not make static. Uncounted nodes are listed in
  ``compute.uncounted_ops`` with their occurrence count. An op that is in no schema (a custom domain, a typo)
  is uncounted *and* reported as a problem.

If / Loop / Scan are neither: their subgraphs' nodes are counted one by one (see ``onnx_counter``).
A registration that repeats an op type raises: one op, one formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from modelcost.analysis.onnx_fold import scalar_int
from modelcost.core.errors import InternalError

DEFAULT_DOMAIN = ""
CONTROL_FLOW = frozenset({"If", "Loop", "Scan"})


class ShapeUnknown(Exception):
    """A formula needed a shape that inference left non-static."""


class ShapeMismatch(Exception):
    """The node's input shapes cannot go together (wrong --input-shape, or a broken model)."""


def check_inner(what: str, left: int, right: int, a: tuple[int, ...], b: tuple[int, ...]) -> None:
    if left != right:
        raise ShapeMismatch(f"{what} of {list(a)} and {list(b)} do not match ({left} vs {right})")


@dataclass
class OpCost:
    macs: int = 0
    flops: int = 0
    macs_dtype: str | None = None
    note: str | None = None  # one line for the report's notes (aggregated by op), e.g. weight-only quantization
    gemm: tuple[int, int, int] | None = None  # an Einsum's (M, N, K) as one matmul (formulas.einsum_gemm)


ZERO = OpCost()  # sentinel: "this node moves data only" (a zero_cost state decided by attributes)
Formula = Callable[["OpContext"], "OpCost | None"]

_FORMULAS: dict[tuple[str, str], Formula] = {}
_ZERO_COST: set[tuple[str, str]] = set()


def _key(domain: str, op: str) -> tuple[str, str]:
    return (DEFAULT_DOMAIN if domain in ("", "ai.onnx") else domain, op)


def register(*ops: str, domain: str = DEFAULT_DOMAIN) -> Callable[[Formula], Formula]:
    """Register one formula for several op types of ``domain``; a duplicate registration raises."""

    def deco(fn: Formula) -> Formula:
        for op in ops:
            key = _key(domain, op)
            if key in _FORMULAS or key in _ZERO_COST:
                raise InternalError(f"ONNX op {key} already has a formula or is zero-cost")
            _FORMULAS[key] = fn
        return fn

    return deco


def register_zero_cost(*ops: str, domain: str = DEFAULT_DOMAIN) -> None:
    for op in ops:
        key = _key(domain, op)
        if key in _FORMULAS or key in _ZERO_COST:
            raise InternalError(f"ONNX op {key} already has a formula or is zero-cost")
        _ZERO_COST.add(key)


# Data movement, relabelling and generation: no arithmetic on the values (their bytes are in `memory`).
# Dropout is the identity at inference. Trilu / CenterCropPad / Pad copy or fill.
register_zero_cost(
    *"Reshape Transpose Identity Shape Size Gather GatherElements GatherND Slice Concat Cast CastLike Unsqueeze "
    "Squeeze Flatten Expand Constant ConstantOfShape Tile Pad Split Dropout DepthToSpace SpaceToDepth Trilu "
    "Range EyeLike ScatterND ScatterElements Scatter Compress OneHot ReverseSequence Optional "
    "OptionalGetElement OptionalHasElement SequenceAt SequenceConstruct SequenceEmpty SequenceErase "
    "SequenceInsert SequenceLength SplitToSequence ConcatFromSequence CenterCropPad BitCast TensorScatter".split()
)


def _load_families() -> None:
    from modelcost.analysis import onnx_ops_contrib, onnx_ops_flops, onnx_ops_mac  # noqa: F401 - registers them


def lookup(domain: str, op: str) -> tuple[str, Formula | None]:
    """('counted', formula) | ('zero_cost', None) | ('control', None) | ('none', None)."""
    if not _FORMULAS:
        _load_families()
    key = _key(domain, op)
    if key in _FORMULAS:
        return "counted", _FORMULAS[key]
    if key in _ZERO_COST:
        return "zero_cost", None
    if key[0] == DEFAULT_DOMAIN and op in CONTROL_FLOW:
        return "control", None
    return "none", None


def in_schema(domain: str, op: str) -> bool:
    """True when onnx knows the op (any version) or we have a formula for it (onnxruntime contrib ops)."""
    if lookup(domain, op)[0] != "none":
        return True
    from onnx import defs

    return bool(defs.has(op, _key(domain, op)[0]))


def registered_ops() -> dict[tuple[str, str], str]:
    """(domain, op) -> 'counted' | 'zero_cost' for everything registered (for tests and docs)."""
    if not _FORMULAS:
        _load_families()
    return {**{k: "counted" for k in _FORMULAS}, **{k: "zero_cost" for k in _ZERO_COST}}


class OpContext:
    """What a formula sees: the node, its inputs' and outputs' TensorInfo (None for an absent optional input),
    the default-domain opset, a way to find the node producing a tensor (for QDQ detection), and the small
    values the graph folds to (onnx_fold: initializers, Constant nodes, shape arithmetic; None where unknown)."""

    def __init__(
        self,
        node: Any,
        inputs: list[Any],
        outputs: list[Any],
        opset: int,
        producer: Callable[[str], Any],
        lookup_info: Callable[[str], Any],
        lookup_value: Callable[[str], Any] | None = None,
    ) -> None:
        self.node = node
        self.inputs = inputs
        self.outputs = outputs
        self.opset = opset
        self.producer = producer
        self.lookup_info = lookup_info
        self.lookup_value = lookup_value or (lambda name: None)

    @cached_property
    def attrs(self) -> dict[str, Any]:
        from onnx import helper

        return {a.name: helper.get_attribute_value(a) for a in self.node.attribute}

    def attr(self, name: str, default: Any = None) -> Any:
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def has_in(self, i: int) -> bool:
        return i < len(self.node.input) and self.node.input[i] != ""

    def n_inputs(self) -> int:
        return sum(1 for name in self.node.input if name)

    def int_in(self, i: int) -> int | None:
        """Input ``i`` as one integer where the graph folds it to a known scalar (a DFT's length), else None."""
        return scalar_int(self.lookup_value(self.node.input[i])) if self.has_in(i) else None

    def _shape(self, infos: list[Any], i: int, what: str) -> tuple[int, ...]:
        info = infos[i] if i < len(infos) else None
        shape = info.static_shape if info is not None else None
        if shape is None:
            names = self.node.input if what == "input" else self.node.output
            raise ShapeUnknown(names[i] if i < len(names) else f"{what} {i}")
        return shape

    def shape_in(self, i: int) -> tuple[int, ...]:
        return self._shape(self.inputs, i, "input")

    def shape_out(self, i: int = 0) -> tuple[int, ...]:
        return self._shape(self.outputs, i, "output")

    def numel_in(self, i: int = 0) -> int:
        return math.prod(self.shape_in(i))

    def numel_out(self, i: int = 0) -> int:
        return math.prod(self.shape_out(i))

    def dtype_in(self, i: int = 0) -> str | None:
        info = self.inputs[i] if i < len(self.inputs) else None
        return info.dtype if info is not None else None

    def dequantized_dtype(self, i: int) -> str | None:
        """The integer dtype of input ``i`` before a DequantizeLinear that produced it, else None."""
        if not self.has_in(i):
            return None
        node = self.producer(self.node.input[i])
        if node is None or node.op_type != "DequantizeLinear" or not node.input:
            return None
        info = self.lookup_info(node.input[0])
        dtype = info.dtype if info is not None else None
        return dtype if dtype and not dtype.startswith(("float", "bfloat")) else None
