"""The aten formulas that multiply-accumulate: matrix products, convolutions, attention, recurrent kernels.

Registered on ``modelcost.analysis.torch_ops`` (the registry) when that module is imported; the conventions
are in ``modelcost.analysis.formulas``, shared with the ONNX counter (``onnx_ops_mac``).
"""

from __future__ import annotations

from typing import Any

import torch

from modelcost.analysis import formulas as F
from modelcost.analysis.torch_ops import (
    ConvWindow,
    OpCost,
    _dtype,
    _first_tensor,
    _mm_cost,
    _numel,
    _packets,
    register,
)

# ---------------------------------------------------------------------------------------------------
# matrix products: (m,k)x(k,n) is m*n*k MACs; FLOPs = 2 * MACs + 1 per output element of an added bias


@register(_packets("mm bmm matmul dot vdot mv _int_mm", inplace=False))
def _matmul(a: dict, out: Any) -> OpCost:
    x, y = a.get("self"), a.get("mat2", a.get("other", a.get("vec", a.get("tensor"))))
    return _mm_cost(x, y, out, bias=False)


@register(_packets("_euclidean_dist", inplace=False))
def _euclidean_dist(a: dict, out: Any) -> OpCost:
    """cdist's Euclidean distances as ATen computes them, through a matmul: x1 (..., P, M) and x2 (..., R, M)
    -> (..., P, R), P x R x M MACs per batch for x1 x2^T; + the squared norms of both, 2 per element, and per
    distance the norms added, the product subtracted and the square root, 3 (Mimi's quantizer, cdist of its
    codebook)."""
    x1, x2, y = a["x1"], a["x2"], _first_tensor(out)
    m = int(x1.shape[-1])
    macs = y.numel() * m
    return OpCost(macs, 2 * macs + 2 * (x1.numel() + x2.numel()) + 3 * y.numel(), _dtype(x1))


@register(_packets("addmm baddbmm addmv", inplace=True))
def _addmm(a: dict, out: Any) -> OpCost:
    x = a.get("mat1", a.get("batch1", a.get("mat")))
    y = a.get("mat2", a.get("batch2", a.get("vec")))
    return _mm_cost(x, y, out, bias=a.get("beta", 1) != 0)


@register(_packets("addbmm addr", inplace=True))
def _addbmm(a: dict, out: Any) -> OpCost:
    """addbmm sums the batch of products: b*m*n*k MACs; addr is a rank-1 update, m*n MACs."""
    if a.get("batch1") is not None:
        macs = F.matmul_macs(tuple(a["batch1"].shape), tuple(a["batch2"].shape))
        first = a["batch1"]
    else:
        macs = a["vec1"].numel() * a["vec2"].numel()
        first = a["vec1"]
    return OpCost(macs, 2 * macs + _numel(out), _dtype(first))


@register(_packets("_addmm_activation", inplace=False))
def _addmm_act(a: dict, out: Any) -> OpCost:
    cost = _mm_cost(a["mat1"], a["mat2"], out, bias=True)
    act = F.ELEMENTWISE_FLOPS["gelu" if a.get("use_gelu") else "relu"]
    return OpCost(cost.macs, cost.flops + act * _numel(out), cost.macs_dtype)


@register(_packets("linear", inplace=False))
def _linear(a: dict, out: Any) -> OpCost:
    macs = _numel(out) * a["input"].shape[-1]
    return OpCost(macs, 2 * macs + (_numel(out) if a.get("bias") is not None else 0), _dtype(a["input"]))


@register(_packets("_scaled_mm", inplace=False))
def _scaled_mm(a: dict, out: Any) -> OpCost:
    return _mm_cost(a["self"], a["mat2"], out, bias=a.get("bias") is not None)


def _packed_mm(a: dict, out: Any, weight_dtype: str) -> OpCost:
    """Weight-only quantised matmuls: (m,k) activations times a packed (n,k) weight -> m*n*k MACs."""
    macs = _numel(out) * a["self"].shape[-1]
    return OpCost(macs, 2 * macs, weight_dtype)


register(_packets("_weight_int8pack_mm", inplace=False))(lambda a, out: _packed_mm(a, out, "int8"))
register(_packets("_weight_int4pack_mm _weight_int4pack_mm_for_cpu", inplace=False))(
    lambda a, out: _packed_mm(a, out, "int4")
)


# ---------------------------------------------------------------------------------------------------
# convolution: out elements x (C_in / groups) x prod(kernel) MACs; transposed: in elements x (C_out / groups)
# x prod(kernel); dilation and stride change which inputs are read, not how many. Bias: 1 per output element.

_TRANSPOSED_CONVS = _packets(
    "cudnn_convolution_transpose miopen_convolution_transpose slow_conv_transpose2d slow_conv_transpose3d",
    inplace=False,
)


@register(
    _packets(
        "convolution _convolution convolution_overrideable cudnn_convolution miopen_convolution "
        "miopen_depthwise_convolution mkldnn_convolution _slow_conv2d_forward slow_conv3d_forward "
        "slow_conv_dilated2d slow_conv_dilated3d thnn_conv2d _nnpack_spatial_convolution",
        inplace=False,
    )
    + _TRANSPOSED_CONVS
)
def _conv(a: dict, out: Any) -> OpCost:
    x = a.get("input", a.get("self"))
    w = a["weight"]
    y = _first_tensor(out)
    # the dedicated transposed kernels have output_padding and no "transposed" flag
    transposed = bool(a.get("transposed", False)) or ("output_padding" in a and "transposed" not in a)
    batch = x.shape[0] if x.dim() == w.dim() else 1
    kernel = tuple(w.shape[2:])
    groups = int(a.get("groups") or 1)
    if transposed:
        in_spatial = tuple(x.shape[-len(kernel):]) if kernel else ()
        macs = F.conv_transpose_macs(batch, w.shape[0], in_spatial, w.shape[1] * groups, groups, kernel)
    else:
        out_spatial = tuple(y.shape[-len(kernel):]) if kernel else ()
        in_channels = w.shape[1] * groups
        macs = F.conv_macs(batch, w.shape[0], out_spatial, in_channels, groups, kernel)
    bias = y.numel() if a.get("bias") is not None else 0
    return OpCost(macs, 2 * macs + bias, _dtype(x), groups,
                  ConvWindow(kernel, _per_dim(a.get("stride"), kernel), _per_dim(a.get("dilation"), kernel)))


def _per_dim(value: Any, kernel: tuple[int, ...]) -> tuple[int, ...]:
    """A conv's stride or dilation as one int per spatial dim (aten may give one for all, or none: 1)."""
    values = ([int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value or 1)]) or [1]
    return tuple(values) if len(values) == len(kernel) else tuple(values[:1] * len(kernel))


# ---------------------------------------------------------------------------------------------------
# attention: q (..., L, E), k (..., S, E), v (..., S, Ev): L*S*(E+Ev) MACs per batch element;
# FLOPs = 2 * MACs + softmax (5) + scale (1) per score + 1 per score for an additive mask.


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, has_mask: bool) -> OpCost:
    macs = F.attention_macs(tuple(q.shape), tuple(k.shape), tuple(v.shape))
    extra = F.attention_extra_flops(tuple(q.shape), tuple(k.shape), has_mask)
    return OpCost(macs, 2 * macs + extra, _dtype(q))


@register(
    _packets(
        "scaled_dot_product_attention _scaled_dot_product_attention_math _scaled_dot_product_flash_attention "
        "_scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_efficient_attention "
        "_scaled_dot_product_cudnn_attention _scaled_dot_product_fused_attention_overrideable",
        inplace=False,
    )
)
def _sdpa(a: dict, out: Any) -> OpCost:
    mask = a.get("attn_mask", a.get("attn_bias"))
    return _attention(a["query"], a["key"], a["value"], mask is not None)


@register(_packets("_flash_attention_forward _efficient_attention_forward", inplace=False))
def _sdpa_blhe(a: dict, out: Any) -> OpCost:
    """These take (batch, seq, heads, dim); varlen (packed) inputs (total, heads, dim) count as batch 1."""

    def bhle(t: torch.Tensor) -> torch.Tensor:
        return t.transpose(-3, -2) if t.dim() >= 3 else t

    return _attention(bhle(a["query"]), bhle(a["key"]), bhle(a["value"]), a.get("bias") is not None)


# ---------------------------------------------------------------------------------------------------
# recurrent kernels that run a whole layer: per step, every gate matrix is one matrix-vector product, so
# MACs = steps x batch x sum of the 2-D weight matrices' elements (= formulas.rnn_macs).

_CUDNN_MODES = {0: "rnn", 1: "rnn", 2: "lstm", 3: "gru"}


def _rnn_cost(kind: str, x: torch.Tensor, weights: list, hidden: int, packed: bool, batch_first: bool,
              layers: int, dirs: int) -> OpCost:
    if packed:
        steps, batch = x.shape[0], 1
    else:
        steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    per_step = sum(w.numel() for w in weights if isinstance(w, torch.Tensor) and w.dim() == 2)
    macs = steps * batch * per_step
    extra = F.rnn_extra_flops(kind, steps, batch, hidden, layers, dirs)
    return OpCost(macs, 2 * macs + extra, _dtype(x))


@register(_packets("_cudnn_rnn miopen_rnn", inplace=False))
def _fused_rnn(a: dict, out: Any) -> OpCost:
    kind = _CUDNN_MODES.get(int(a["mode"]), "rnn")
    return _rnn_cost(kind, a["input"], list(a["weight"]), int(a["hidden_size"]), bool(a.get("batch_sizes")),
                     bool(a["batch_first"]), int(a["num_layers"]), 2 if a["bidirectional"] else 1)


@register(_packets("mkldnn_rnn_layer", inplace=False))
def _mkldnn_rnn_layer(a: dict, out: Any) -> OpCost:
    """One layer, one direction of an LSTM (the only RNN oneDNN runs for PyTorch)."""
    weights = [a["weight0"], a["weight1"]]
    return _rnn_cost("lstm", a["input"], weights, int(a["hidden_size"]), bool(a.get("batch_sizes")),
                     bool(a["batch_first"]), 1, 1)
