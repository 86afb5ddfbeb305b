"""What each aten op costs: one registry of formulas of shapes, one set of ops known to cost nothing.

An aten op met while counting ends in exactly one state:

* **counted** - a formula is registered for its overload packet (``aten.add`` and ``aten.add_`` are
  registered together); the formula reads shapes only and follows ``modelcost.analysis.formulas``. The
  formulas live beside this registry, split as on the ONNX side: ``torch_ops_mac`` (matrix products,
  convolutions, attention, recurrent kernels), ``torch_ops_flops`` (elementwise, reductions, norms, pooling,
  and the zero-cost lists), ``torch_ops_moe`` (grouped matrix products and the routing ops of mixtures of
  experts) and ``torch_ops_composite`` (function-level composites); importing this module registers them all;
* **zero cost** - it only moves, views, creates or casts data (``ZERO_COST``);
* **uncounted** - anything else; the counter lists it with its occurrence count, never as a silent zero.

``register`` refuses an op that already has a formula or is already known to be free, so each op has one
meaning. Besides the aten-level table, ``composite_kind`` names the few torch functions counted as one op by
the counter's function-level mode (attention, recurrent layers, RMS norm, einsum), whatever aten ops they run.

Conventions of aten ops that have no ONNX twin (documented here, used nowhere else):
addcmul / addcdiv / lerp 3 FLOPs per element; xlogy 2; logit 3; hypot 4; polar 4 (cos, sin, two
multiplies: the complex rotary tables of DeepSeek-V2); frac 2; glu 4 per output
element (sigmoid + multiply); native_dropout 2 (compare + scale); var / std / logsumexp / cumsum count
like every reduction, one FLOP per input element; batch norm computing batch statistics (training, or
instance norm) counts as a normalisation (5 + affine), with running statistics as inference (2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from modelcost.analysis import formulas as F

aten = torch.ops.aten
Formula = Callable[[dict[str, Any], Any], "OpCost"]


@dataclass(frozen=True)
class OpCost:
    macs: int = 0
    flops: int = 0
    macs_dtype: str | None = None
    groups: int | None = None  # a convolution's groups (the predictor's conv table keeps grouped ones apart)
    window: ConvWindow | None = None  # a convolution's kernel, strides and dilations
    gemm: tuple[int, int, int] | None = None  # an einsum's (M, N, K) as one matmul (formulas.einsum_gemm)


class ConvWindow(NamedTuple):
    """A convolution's window, one entry per spatial dim (LayerCost's kernel_shape, strides, dilations)."""

    kernel_shape: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]


FORMULAS: dict[Any, Formula] = {}  # OpOverloadPacket -> formula(bound args, output)
ZERO_COST: set[Any] = set()
# OpOverloadPacket -> output(bound args): for the few ops whose meta kernel refuses inputs their real kernels
# take (aten._grouped_mm checks for bf16 on meta; the CPU and CUDA kernels take fp16 and fp32 too)
META_OUTPUTS: dict[Any, Callable[[dict[str, Any]], Any]] = {}


def _packets(names: str | list[str], inplace: bool = True) -> list[Any]:
    """aten packets by name, with their in-place twins (``add_``) where they exist; absent names skipped."""
    out = []
    for name in names.split() if isinstance(names, str) else names:
        for candidate in (name, name + "_") if inplace else (name,):
            packet = getattr(aten, candidate, None)
            if packet is not None and packet not in out:
                out.append(packet)
    return out


def register(targets: list[Any]) -> Callable[[Formula], Formula]:
    """Register one formula for a list of aten overload packets; an op already registered, or already
    known to be free, is refused (ValueError) so that no op has two meanings."""

    def wrap(formula: Formula) -> Formula:
        for target in targets:
            if not isinstance(target, torch._ops.OpOverloadPacket):
                raise TypeError(f"register: expected an aten overload packet, got {target!r}")
            if target in FORMULAS or target in ZERO_COST:
                raise ValueError(f"register: {target} already has a cost")
            FORMULAS[target] = formula
        return formula

    return wrap


def register_zero_cost(targets: list[Any]) -> None:
    for target in targets:
        if target in FORMULAS or target in ZERO_COST:
            raise ValueError(f"register_zero_cost: {target} already has a cost")
        ZERO_COST.add(target)


def classify(op: Any) -> str:
    """'counted' | 'zero_cost' | 'uncounted' for an OpOverload (or packet)."""
    packet = getattr(op, "_overloadpacket", op)
    if packet in FORMULAS:
        return "counted"
    return "zero_cost" if packet in ZERO_COST else "uncounted"


def bind(op: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Name every argument of an aten call by its schema (defaults filled in)."""
    bound: dict[str, Any] = {}
    for i, arg in enumerate(op._schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
        else:
            bound[arg.name] = None
    return bound


def run_op(op: Any, args: tuple, kwargs: dict) -> Any:
    """Run an aten op as the counter does: as it is, except that on meta tensors an op of ``META_OUTPUTS``
    whose meta kernel refuses the call gets its output from that shape rule (what the real kernel returns)."""
    try:
        return op(*args, **kwargs)
    except RuntimeError:
        rule = META_OUTPUTS.get(op._overloadpacket)
        tensors = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor)]
        if rule is None or not tensors or any(t.device.type != "meta" for t in tensors):
            raise
        return rule(bind(op, args, kwargs))


def op_cost(op: Any, args: tuple, kwargs: dict, out: Any) -> OpCost:
    """Cost of one call of a counted op (classify(op) == 'counted')."""
    bound = bind(op, args, kwargs)
    bound["__op__"] = op._overloadpacket.__name__
    return FORMULAS[op._overloadpacket](bound, out)


# ---------------------------------------------------------------------------------------------------
# helpers


def _first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def _dtype(t: torch.Tensor | None) -> str | None:
    return None if t is None else str(t.dtype).removeprefix("torch.")


def _numel(t: Any) -> int:
    t = _first_tensor(t)
    return 0 if t is None else t.numel()


def _mm_cost(a: torch.Tensor, b: torch.Tensor, out: Any, bias: bool) -> OpCost:
    macs = F.matmul_macs(tuple(a.shape), tuple(b.shape))
    return OpCost(macs, 2 * macs + (_numel(out) if bias else 0), _dtype(a))


# ---------------------------------------------------------------------------------------------------
# The formula families register themselves on import, as on the ONNX side (onnx_ops_mac / onnx_ops_flops).
# This module stays the registry and the facade: ``register``, ``FORMULAS``, ``classify``, ``op_cost`` and the
# composites are reached through it (analysis/torch_ops_backward.py registers on the same table).
# These imports come last on purpose (noqa: E402): the families import ``register`` and ``OpCost`` from this
# module, so they can run only once everything above is defined.

from modelcost.analysis import torch_ops_flops, torch_ops_mac, torch_ops_moe  # noqa: E402
from modelcost.analysis.torch_ops_composite import composite_cost, composite_kind  # noqa: E402
from modelcost.analysis.torch_ops_flops import _ELEMENTWISE, adaptive_window_sum, rms_norm_flops  # noqa: E402

__all__ = [
    "FORMULAS",
    "META_OUTPUTS",
    "ZERO_COST",
    "_ELEMENTWISE",
    "OpCost",
    "adaptive_window_sum",
    "bind",
    "classify",
    "composite_cost",
    "composite_kind",
    "op_cost",
    "register",
    "register_zero_cost",
    "rms_norm_flops",
    "run_op",
    "torch_ops_flops",
    "torch_ops_mac",
    "torch_ops_moe",
]

from modelcost.analysis import torch_ops_backward as _backward  # noqa: E402, F401 - registers the backward ops
