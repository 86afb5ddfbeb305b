"""The aten formulas of mixtures of experts: grouped matrix products (the routed experts of transformers'
``grouped_mm`` experts implementation) and the routing ops (top-k, sort, histogram).

Registered on ``modelcost.analysis.torch_ops`` (the registry) when that module is imported. A grouped product
multiplies row groups by per-group weights; the groups are set by ``offs``, a tensor whose values a meta run
does not have, but the MACs do not depend on them: every row meets exactly one group's weight, so the sum over
groups is (all rows) x K x N. Rows past the last offset (expert-parallel sentinels) are counted too: an upper
bound there, exact for the routing of a single device.
"""

from __future__ import annotations

from typing import Any

import torch

from modelcost.analysis import formulas as F
from modelcost.analysis.torch_ops import (
    META_OUTPUTS,
    OpCost,
    _dtype,
    _first_tensor,
    _numel,
    _packets,
    register,
)

_GROUPED = _packets("_grouped_mm _scaled_grouped_mm _scaled_grouped_mm_v2", inplace=False)


@register(_GROUPED)
def _grouped_mm(a: dict, out: Any) -> OpCost:
    """2d x 3d: (M_total, K) rows grouped along M, (G, K, N) weights -> M_total * K * N (transformers' experts);
    3d x 2d: groups along N -> M * K * N_total; 3d x 3d: a batch -> G * M * K * N; 2d x 2d: groups along K,
    out (G, M, N) -> M * K_total * N. Each is (output elements) x K, except 2d x 2d."""
    x, w = a["self"], a["mat2"]
    if x.dim() == 2 and w.dim() == 2:
        macs = x.shape[0] * x.shape[1] * w.shape[1]
    else:
        macs = _numel(out) * x.shape[-1]
    return OpCost(macs, 2 * macs + (_numel(out) if a.get("bias") is not None else 0), _dtype(x))


def _grouped_mm_output(a: dict) -> torch.Tensor:
    """The output a grouped product returns (torch's shape rule), without the meta kernel's dtype check."""
    x, w, offs = a["self"], a["mat2"], a.get("offs")
    if x.dim() == 2:
        shape = (offs.shape[0], x.shape[0], w.shape[1]) if w.dim() == 2 else (x.shape[0], w.shape[-1])
    else:
        shape = (x.shape[1], w.shape[1]) if w.dim() == 2 else (x.shape[0], x.shape[1], w.shape[-1])
    return torch.empty(shape, dtype=a.get("out_dtype") or x.dtype, device="meta")


for _packet in _GROUPED:
    META_OUTPUTS[_packet] = _grouped_mm_output


# ---------------------------------------------------------------------------------------------------
# routing: selections and counts, no MACs (formulas.topk_flops / sort_flops); a histogram or a bin count is one
# FLOP per input element (a bin index and an increment), and so is nonzero (a test and a running count: the
# per-expert loops of eager MoE implementations find their tokens with it)


@register(_packets("topk", inplace=False))
def _topk(a: dict, out: Any) -> OpCost:
    return OpCost(0, F.topk_flops(_numel(a["self"]), int(a["k"])))


@register(_packets("sort", inplace=False))
def _sort(a: dict, out: Any) -> OpCost:
    x = a["self"]
    axis_len = x.shape[int(a.get("dim", -1))] if x.dim() else 1
    return OpCost(0, F.sort_flops(x.numel(), axis_len))


@register(_packets("_unique _unique2 unique_dim", inplace=False))
def _unique(a: dict, out: Any) -> OpCost:
    """torch.unique (the experts a router chose, looped over in eager MoE code): a sort of the n values
    (``formulas.sort_flops``) and one comparison of each with its neighbour; unique_consecutive, below, only
    the comparisons."""
    n = _numel(a["self"])
    return OpCost(0, F.sort_flops(n, n) + n)


@register(_packets("unique_consecutive", inplace=False))
def _unique_consecutive(a: dict, out: Any) -> OpCost:
    return OpCost(0, _numel(a["self"]))


@register(_packets("histc bincount nonzero nonzero_static", inplace=False))
def _histogram(a: dict, out: Any) -> OpCost:
    return OpCost(0, _numel(_first_tensor(a["self"])))
