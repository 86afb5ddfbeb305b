"""ONNX ops that cost FLOPs but no MACs: elementwise arithmetic and activations, quantize / dequantize,
normalisations, softmax, pooling, reductions, resize, rotary embedding. Per-element costs are those of
``modelcost.analysis.formulas`` (its module doc lists the conventions); the ONNX-only ones are here:

* Sum / Max / Min of n inputs: n-1 per output element; Mean: n (n-1 adds and a divide);
* DequantizeLinear 2 per element (subtract zero point, multiply); QuantizeLinear 4 (divide, round, add zero
  point, saturate); DynamicQuantizeLinear 6 (min and max over the input, then quantize);
* LpNormalization 3 per element (|x| or x^2, sum, divide) + 1 per normalised vector (root); LRN
  2*size + 3 per element (squares and sums over the window, bias and scale, power, divide);
  MeanVarianceNormalization 5 per element (a norm without affine); Hardmax 1 per input element;
* Resize / Upsample: nearest moves data (zero cost); linear ``formulas.linear_resize_flops`` (3 FLOPs, one
  lerp, x (2^n - 1) lerps per output element for n resized axes; the PyTorch counter's upsample_*linear*);
  cubic ``formulas.cubic_resize_flops`` (7 FLOPs, one 4-tap interpolation, x (4^n - 1) / 3 per output element;
  the PyTorch counter's upsample_bicubic2d; cubic_coeff_a and exclude_outside change the weights, not the work);
* RotaryEmbedding 3 per rotated element (x*cos + rotate(x)*sin); CumSum 1 per element.
* TopK and NonZero (the routing of a mixture of experts) as the PyTorch counter's topk and nonzero:
  ``formulas.topk_flops`` and 1 per input element.
* DFT as the PyTorch counter's FFTs: ``formulas.fft_flops`` (half for a real input), + 1 per real output value
  for an inverse one (ONNX scales it by 1 / length).
"""

from __future__ import annotations

import math

from modelcost.analysis import formulas as F
from modelcost.analysis.onnx_ops import ZERO, OpContext, OpCost, register
from modelcost.analysis.onnx_ops_mac import DEQUANTIZE_FLOPS, QUANTIZE_FLOPS

_ELEMENTWISE = (
    "Add Sub Mul Div Pow Mod Neg Abs Sign Ceil Floor Round Relu Clip Equal Greater Less GreaterOrEqual "
    "LessOrEqual Not And Or Xor Where Reciprocal Sqrt Exp Log Erf Sin Cos Tan Tanh Softsign IsNaN IsInf "
    "BitShift LeakyRelu PRelu ThresholdedRelu Elu Celu Selu Sigmoid HardSigmoid HardSwish Mish Softplus Asin "
    "Acos Atan Sinh Cosh Asinh Acosh Atanh BitwiseAnd BitwiseOr BitwiseXor BitwiseNot Shrink"
).split()


def _per_element(ctx: OpContext, per: int) -> OpCost:
    return OpCost(0, per * ctx.numel_out(0))


@register(*_ELEMENTWISE)
def elementwise(ctx: OpContext) -> OpCost:
    """formulas.ELEMENTWISE_FLOPS per output element (broadcast included)."""
    return _per_element(ctx, F.ELEMENTWISE_FLOPS[ctx.node.op_type.lower()])


@register("Gelu")
def gelu(ctx: OpContext) -> OpCost:
    key = "gelu_tanh" if ctx.attr("approximate", "none") == "tanh" else "gelu"
    return _per_element(ctx, F.ELEMENTWISE_FLOPS[key])


@register("Swish")
def swish(ctx: OpContext) -> OpCost:
    """x * sigmoid(alpha x): SiLU, plus one multiply when alpha != 1."""
    return _per_element(ctx, F.ELEMENTWISE_FLOPS["silu"] + (1 if float(ctx.attr("alpha", 1.0)) != 1.0 else 0))


@register("Sum", "Max", "Min")
def variadic(ctx: OpContext) -> OpCost:
    return _per_element(ctx, max(ctx.n_inputs() - 1, 0))


@register("Mean")
def mean(ctx: OpContext) -> OpCost:
    return _per_element(ctx, ctx.n_inputs() if ctx.n_inputs() > 1 else 0)


@register("DequantizeLinear")
def dequantize(ctx: OpContext) -> OpCost:
    return _per_element(ctx, DEQUANTIZE_FLOPS)


@register("QuantizeLinear")
def quantize(ctx: OpContext) -> OpCost:
    return _per_element(ctx, QUANTIZE_FLOPS)


@register("DynamicQuantizeLinear")
def dynamic_quantize(ctx: OpContext) -> OpCost:
    return _per_element(ctx, QUANTIZE_FLOPS + 2)


@register("CumSum")
def cumsum(ctx: OpContext) -> OpCost:
    return _per_element(ctx, 1)


# --- normalisations ------------------------------------------------------------------------------------


@register("BatchNormalization")
def batch_norm(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.BATCHNORM_FLOPS_PER_ELEMENT)


@register("LayerNormalization")
def layer_norm(ctx: OpContext) -> OpCost:
    return OpCost(0, F.norm_flops(ctx.numel_out(0), ctx.has_in(1), ctx.has_in(2)))


@register("InstanceNormalization", "GroupNormalization")
def instance_group_norm(ctx: OpContext) -> OpCost:
    return OpCost(0, F.norm_flops(ctx.numel_out(0), True, True))


@register("RMSNormalization")
def rms_norm(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.RMSNORM_FLOPS_PER_ELEMENT + 1)


@register("MeanVarianceNormalization")
def mvn(ctx: OpContext) -> OpCost:
    return OpCost(0, F.norm_flops(ctx.numel_out(0), False, False))


@register("LpNormalization")
def lp_norm(ctx: OpContext) -> OpCost:
    shape = ctx.shape_in(0)
    n = math.prod(shape)
    axis_len = shape[int(ctx.attr("axis", -1)) % len(shape)] if shape else 1
    return OpCost(0, 3 * n + (n // axis_len if axis_len else 0))


@register("LRN")
def lrn(ctx: OpContext) -> OpCost:
    return _per_element(ctx, 2 * int(ctx.attr("size")) + 3)


@register("Softmax", "LogSoftmax")
def softmax(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.SOFTMAX_FLOPS_PER_ELEMENT)


@register("Hardmax")
def hardmax(ctx: OpContext) -> OpCost:
    return OpCost(0, ctx.numel_in(0))


# --- pooling and reductions ---------------------------------------------------------------------------


@register("MaxPool", "AveragePool", "LpPool")
def pool(ctx: OpContext) -> OpCost:
    """Output elements x window size (formulas.pool_flops)."""
    return OpCost(0, F.pool_flops(ctx.numel_out(0), list(ctx.attr("kernel_shape"))))


@register("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(ctx: OpContext) -> OpCost:
    return OpCost(0, ctx.numel_in(0))


@register(
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
    "ArgMax",
    "ArgMin",
)
def reduction(ctx: OpContext) -> OpCost:
    """Input elements (formulas convention for reductions)."""
    return OpCost(0, ctx.numel_in(0))


@register("TopK")
def topk(ctx: OpContext) -> OpCost:
    """The k largest (or smallest) along ``axis``: formulas.topk_flops per input element, k read off the output."""
    xs = ctx.shape_in(0)
    k = ctx.shape_out(0)[int(ctx.attr("axis", -1)) % len(xs)]
    return OpCost(0, F.topk_flops(math.prod(xs), k))


@register("NonZero")
def nonzero(ctx: OpContext) -> OpCost:
    """One test (and a running count) per input element, as the PyTorch counter's nonzero."""
    return OpCost(0, ctx.numel_in(0))


# --- resize and rotary --------------------------------------------------------------------------------


@register("Resize", "Upsample")
def resize(ctx: OpContext) -> OpCost | None:
    mode = ctx.attr("mode", "nearest")
    if mode == "nearest":
        return ZERO
    if mode == "cubic":
        return OpCost(0, F.cubic_resize_flops(ctx.shape_in(0), ctx.shape_out(0)))
    if mode not in ("linear", "bilinear"):
        return None  # a mode the ONNX spec does not name: not counted
    return OpCost(0, F.linear_resize_flops(ctx.shape_in(0), ctx.shape_out(0)))


# GridSample's modes: opset 16's names and opset 20's -> formulas.grid_sample_flops's
_GRID_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest", "bicubic": "cubic", "cubic": "cubic"}


@register("GridSample")
def grid_sample(ctx: OpContext) -> OpCost | None:
    """As the PyTorch counter's grid_sampler (``formulas.grid_sample_flops``) over X's spatial dims."""
    mode = _GRID_MODES.get(str(ctx.attr("mode", "bilinear")))
    if mode is None:
        return None  # a mode the ONNX spec does not name: not counted
    return OpCost(0, F.grid_sample_flops(math.prod(ctx.shape_out(0)), len(ctx.shape_in(0)) - 2, mode))


def _rotary(ctx: OpContext, heads_attr: str) -> OpCost:
    """3 FLOPs per rotated element; X is [B, H, S, D] or [B, S, H*D]; rotary_embedding_dim < D rotates part."""
    xs = ctx.shape_in(0)
    n = math.prod(xs)
    heads = int(ctx.attr(heads_attr, 0))
    head = xs[-1] if len(xs) == 4 or not heads else xs[-1] // heads
    rot = int(ctx.attr("rotary_embedding_dim", 0)) or head
    return OpCost(0, 3 * (n // head) * rot)


@register("RotaryEmbedding")
def rotary(ctx: OpContext) -> OpCost:
    return _rotary(ctx, "num_heads")


# --- onnxruntime contrib (com.microsoft) ops with the same conventions -----------------------------------


@register("RotaryEmbedding", domain="com.microsoft")
def ms_rotary(ctx: OpContext) -> OpCost:
    return _rotary(ctx, "num_heads")


@register("Gelu", domain="com.microsoft")
def ms_gelu(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.ELEMENTWISE_FLOPS["gelu"])


@register("FastGelu", domain="com.microsoft")
def ms_fast_gelu(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.ELEMENTWISE_FLOPS["gelu_tanh"] + (1 if ctx.has_in(1) else 0))


@register("BiasGelu", domain="com.microsoft")
def ms_bias_gelu(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.ELEMENTWISE_FLOPS["gelu"] + 1)


@register("QuickGelu", domain="com.microsoft")
def ms_quick_gelu(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.ELEMENTWISE_FLOPS["quick_gelu"])


@register("BiasAdd", domain="com.microsoft")
def ms_bias_add(ctx: OpContext) -> OpCost:
    return _per_element(ctx, 2)


@register("LayerNormalization", domain="com.microsoft")
def ms_layer_norm(ctx: OpContext) -> OpCost:
    return layer_norm(ctx)


@register("SkipLayerNormalization", domain="com.microsoft")
def ms_skip_layer_norm(ctx: OpContext) -> OpCost:
    """input + skip (+ bias, input 4), then a layer norm with gamma (and beta, input 3)."""
    n = ctx.numel_out(0)
    return OpCost(0, n * (1 + int(ctx.has_in(4))) + F.norm_flops(n, True, ctx.has_in(3)))


@register("SimplifiedLayerNormalization", domain="com.microsoft")
def ms_rms_norm(ctx: OpContext) -> OpCost:
    return _per_element(ctx, F.RMSNORM_FLOPS_PER_ELEMENT + 1)


@register("SkipSimplifiedLayerNormalization", domain="com.microsoft")
def ms_skip_rms_norm(ctx: OpContext) -> OpCost:
    return _per_element(ctx, 1 + int(ctx.has_in(3)) + F.RMSNORM_FLOPS_PER_ELEMENT + 1)


@register("DFT")
def dft(ctx: OpContext) -> OpCost:
    """One transform along ``axis`` of input [..., 1 (real) or 2 (complex)]: ``formulas.fft_flops`` over its
    points at the transform's length (``dft_length`` where given: the dynamo exporter writes the input's size
    as a constant), half for a real input; an inverse one scales its output (+1 per real output value)."""
    x = ctx.shape_in(0)
    axis = _dft_axis(ctx) % len(x)
    length = x[axis]
    if ctx.has_in(1):
        length = ctx.int_in(1) or 0
        if length <= 0:
            raise ValueError("DFT's dft_length input does not fold to a known value")
    onesided = int(ctx.attr("onesided", 0))
    transforms = math.prod(x[:-1]) // x[axis]
    scaling = 2 * transforms * (length // 2 + 1 if onesided else length) if int(ctx.attr("inverse", 0)) else 0
    return OpCost(0, F.fft_flops(transforms * length, length, real=x[-1] == 1) + scaling)


def _dft_axis(ctx: OpContext) -> int:
    """The DFT's axis: an attribute (default 1) up to opset 19, an input (default -2) from opset 20."""
    if ctx.opset < 20:
        return int(ctx.attr("axis", 1))
    if not ctx.has_in(2):
        return -2
    axis = ctx.int_in(2)
    if axis is None:
        raise ValueError("DFT's axis input does not fold to a known value")
    return axis
