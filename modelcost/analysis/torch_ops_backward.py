"""What the backward aten ops cost: formulas registered into the one registry of ``torch_ops``.

Imported by ``modelcost.analysis.torch_ops`` (at its end), so every counter sees them. The training counter
(``analysis/training.py``) runs the real autograd graph on meta tensors; the ops below are what autograd
runs for the backward of the forward ops that ``torch_ops`` counts. Products are MACs as in the forward:

* ``convolution_backward``: the input gradient of a convolution is a (transposed) convolution with the same
  MAC count as the forward, the weight gradient one more; ``output_mask`` says which of the two (and the bias
  gradient, 1 FLOP per grad_output element) ran. ``split`` returns the input- and weight-gradient parts
  apart, so the training counter need not guess;
* attention backward (the fused SDPA kernels): dQ, dK, dV and dP, four products = 2 x the forward's MACs
  (flash-attention's recomputation of the scores is not model work and is not counted, as in
  ``torch.utils.flop_counter``); + 4 FLOPs per score for the softmax backward and 1 for the scale;
* matrix products that autograd runs as ``mm`` / ``bmm`` are the forward's formulas (already registered).

Conventions of the elementwise backward ops, FLOPs per element of the gradient they produce (docs/COUNTING.md):
threshold (ReLU) 1 (select); hardtanh 2 (two compares); leaky ReLU / ELU 2 / 3; sigmoid and tanh 3
(g * y * (1 - y), g * (1 - y^2)); SiLU = sigmoid + 4; GELU = the forward's cost + 3; hardswish 3, hardsigmoid 2,
softplus = sigmoid + 1, mish = mish + 4; dropout 2 (mask, scale); softmax / log-softmax 4 (product or exp,
row sum, subtract, multiply); layer / group / batch norm (batch statistics): 10 per element for the input
gradient (normalise again 2, scale 1, two means 2, two products 2, two subtractions 2, times rstd 1), 2 for
the weight gradient (product, sum), 1 for the bias gradient (sum); batch norm with running statistics: 2;
max pooling 1 per grad_output element (scatter-add); average pooling the forward's cost (each window element
receives grad / window); embedding 1 per grad_output element (scatter-add into the table). ``select_backward``
/ ``slice_backward`` and kin only move data.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from modelcost.analysis import formulas as F
from modelcost.analysis.torch_ops import OpCost, _dtype, _numel, _packets, register, register_zero_cost
from modelcost.analysis.torch_ops_flops import _window, adaptive_window_sum
from modelcost.analysis.torch_ops_mac import _attention

SOFTMAX_BACKWARD_FLOPS = 4
NORM_INPUT_GRAD_FLOPS = 10
NORM_WEIGHT_GRAD_FLOPS = 2
NORM_BIAS_GRAD_FLOPS = 1


def _mask(a: dict, n: int = 3) -> list[bool]:
    mask = a.get("output_mask")
    return [bool(m) for m in mask] if mask is not None else [True] * n


# ---------------------------------------------------------------------------------------------------
# convolution: input gradient and weight gradient, each the forward's MACs


def conv_backward_split(a: dict) -> tuple[int, int, int]:
    """(input-gradient MACs, weight-gradient MACs, bias-gradient FLOPs) of one ``convolution_backward``."""
    g, x, w = a["grad_output"], a["input"], a["weight"]
    kernel = tuple(w.shape[2:])
    groups = int(a.get("groups") or 1)
    batch = x.shape[0] if x.dim() == w.dim() else 1
    if a.get("transposed"):
        in_spatial = tuple(x.shape[-len(kernel):]) if kernel else ()
        fwd = F.conv_transpose_macs(batch, w.shape[0], in_spatial, w.shape[1] * groups, groups, kernel)
    else:
        out_spatial = tuple(g.shape[-len(kernel):]) if kernel else ()
        fwd = F.conv_macs(batch, w.shape[0], out_spatial, w.shape[1] * groups, groups, kernel)
    mask = _mask(a)
    return (fwd if mask[0] else 0, fwd if mask[1] else 0, g.numel() if mask[2] else 0)


@register(_packets("convolution_backward convolution_backward_overrideable", inplace=False))
def _conv_backward(a: dict, out: Any) -> OpCost:
    dx, dw, db = conv_backward_split(a)
    # its groups mark it a convolution, as the forward's do (predict.layer_kind)
    return OpCost(dx + dw, 2 * (dx + dw) + db, _dtype(a["input"]), int(a.get("groups") or 1))


# ---------------------------------------------------------------------------------------------------
# attention backward: four products (2 x forward MACs) + softmax backward and scale per score


@register(
    _packets(
        "_scaled_dot_product_flash_attention_for_cpu_backward _scaled_dot_product_flash_attention_backward "
        "_scaled_dot_product_efficient_attention_backward _scaled_dot_product_cudnn_attention_backward "
        "_scaled_dot_product_fused_attention_overrideable_backward",
        inplace=False,
    )
)
def _sdpa_backward(a: dict, out: Any) -> OpCost:
    q, k, v = a["query"], a["key"], a["value"]
    fwd = _attention(q, k, v, has_mask=False)
    scores = math.prod(q.shape[:-1]) * k.shape[-2]
    return OpCost(2 * fwd.macs, 4 * fwd.macs + (SOFTMAX_BACKWARD_FLOPS + 1) * scores, _dtype(q))


@register(_packets("_flash_attention_backward _efficient_attention_backward", inplace=False))
def _flash_backward(a: dict, out: Any) -> OpCost:
    """(batch, seq, heads, dim) layout, as their forwards."""

    def bhle(t: torch.Tensor) -> torch.Tensor:
        return t.transpose(-3, -2) if t.dim() >= 3 else t

    return _sdpa_backward({"query": bhle(a["query"]), "key": bhle(a["key"]), "value": bhle(a["value"])}, out)


# ---------------------------------------------------------------------------------------------------
# elementwise backward: FLOPs per element of the produced gradient (the module docstring)

_ELEMENTWISE_BACKWARD: dict[str, int] = {
    "threshold_backward": 1, "hardtanh_backward": 2, "leaky_relu_backward": 2, "elu_backward": 3,
    "sigmoid_backward": 3, "tanh_backward": 3, "silu_backward": F.ELEMENTWISE_FLOPS["sigmoid"] + 4,
    "hardswish_backward": 3, "hardsigmoid_backward": 2, "softplus_backward": F.ELEMENTWISE_FLOPS["sigmoid"] + 1,
    "mish_backward": F.ELEMENTWISE_FLOPS["mish"] + 4, "native_dropout_backward": 2,
    "log_sigmoid_backward": F.ELEMENTWISE_FLOPS["sigmoid"] + 1, "prelu_backward": 2, "_prelu_kernel_backward": 2,
    "rrelu_with_noise_backward": 2, "softshrink_backward": 2, "hardshrink_backward": 1,
    "_softmax_backward_data": SOFTMAX_BACKWARD_FLOPS, "_log_softmax_backward_data": SOFTMAX_BACKWARD_FLOPS,
}


def _per_element(flops: int) -> Any:
    return lambda a, out: OpCost(0, flops * _numel(out))


for _name, _flops in _ELEMENTWISE_BACKWARD.items():
    _targets = _packets(_name, inplace=False)
    if _targets:
        register(_targets)(_per_element(_flops))


@register(_packets("gelu_backward", inplace=False))
def _gelu_backward(a: dict, out: Any) -> OpCost:
    fwd = F.ELEMENTWISE_FLOPS["gelu_tanh" if a.get("approximate") == "tanh" else "gelu"]
    return OpCost(0, (fwd + 3) * _numel(out))


# ---------------------------------------------------------------------------------------------------
# normalisation backward: input / weight / bias gradients apart, by output_mask


def _norm_backward_flops(numel: int, mask: list[bool], input_flops: int) -> int:
    return numel * ((input_flops if mask[0] else 0) + (NORM_WEIGHT_GRAD_FLOPS if mask[1] else 0)
                    + (NORM_BIAS_GRAD_FLOPS if mask[2] else 0))


@register(_packets("native_layer_norm_backward native_group_norm_backward", inplace=False))
def _layer_norm_backward(a: dict, out: Any) -> OpCost:
    x = a.get("input", a.get("X"))
    mask = _mask(a)
    if a.get("weight") is None:
        mask[1] = False
    if a.get("bias") is None and a["__op__"] == "native_layer_norm_backward":
        mask[2] = False
    return OpCost(0, _norm_backward_flops(x.numel(), mask, NORM_INPUT_GRAD_FLOPS))


@register(_packets("native_batch_norm_backward cudnn_batch_norm_backward miopen_batch_norm_backward "
                   "batch_norm_backward", inplace=False))
def _batch_norm_backward(a: dict, out: Any) -> OpCost:
    x = a["input"]
    mask = _mask(a)
    if a.get("weight") is None:
        mask[1] = mask[2] = False
    training = a.get("train", a.get("training", True))
    input_flops = NORM_INPUT_GRAD_FLOPS if training else F.BATCHNORM_FLOPS_PER_ELEMENT
    return OpCost(0, _norm_backward_flops(x.numel(), mask, input_flops))


# ---------------------------------------------------------------------------------------------------
# pooling and embedding backward


@register(_packets("max_pool2d_with_indices_backward max_pool3d_with_indices_backward", inplace=False))
def _max_pool_backward(a: dict, out: Any) -> OpCost:
    return OpCost(0, _numel(a["grad_output"]))


@register(_packets("avg_pool2d_backward avg_pool3d_backward", inplace=False))
def _avg_pool_backward(a: dict, out: Any) -> OpCost:
    g = a["grad_output"]
    window = _window(a["kernel_size"], 3 if a["__op__"].startswith("avg_pool3d") else 2)
    return OpCost(0, F.pool_flops(g.numel(), window))


@register(_packets("_adaptive_avg_pool2d_backward _adaptive_avg_pool3d_backward", inplace=False))
def _adaptive_avg_pool_backward(a: dict, out: Any) -> OpCost:
    g, x = a["grad_output"], a["self"]
    n = 3 if a["__op__"].startswith("_adaptive_avg_pool3d") else 2
    lead = math.prod(x.shape[:-n])
    windows = math.prod(adaptive_window_sum(i, o) for i, o in zip(x.shape[-n:], g.shape[-n:], strict=True))
    return OpCost(0, lead * windows)


@register(_packets("embedding_dense_backward embedding_backward _embedding_bag_dense_backward "
                   "_embedding_bag_backward", inplace=False))
def _embedding_backward(a: dict, out: Any) -> OpCost:
    return OpCost(0, _numel(a.get("grad_output", a.get("grad"))))


register_zero_cost(
    _packets(
        "select_backward slice_backward diagonal_backward as_strided_backward unsqueeze_backward "
        "squeeze_backward expand_backward permute_backward",
        inplace=False,
    )
)
