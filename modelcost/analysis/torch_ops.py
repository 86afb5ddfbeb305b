"""What each aten op costs: one registry of formulas of shapes, one set of ops known to cost nothing.

An aten op met while counting ends in exactly one state:

* **counted** - a formula below is registered for its overload packet (``aten.add`` and ``aten.add_`` are
  registered together); the formula reads shapes only and follows ``modelcost.analysis.formulas``;
* **zero cost** - it only moves, views, creates or casts data (``ZERO_COST``);
* **uncounted** - anything else; the counter lists it with its occurrence count, never as a silent zero.

``register`` refuses an op that already has a formula or is already known to be free, so each op has one
meaning. Besides the aten-level table, ``composite_kind`` names the few torch functions counted as one op by
the counter's function-level mode (attention, recurrent layers, RMS norm, einsum), whatever aten ops they run.

Conventions of aten ops that have no ONNX twin (documented here, used nowhere else):
addcmul / addcdiv / lerp 3 FLOPs per element; xlogy 2; logit 3; hypot 4; frac 2; glu 4 per output
element (sigmoid + multiply); native_dropout 2 (compare + scale); var / std / logsumexp / cumsum count
like every reduction, one FLOP per input element; batch norm computing batch statistics (training, or
instance norm) counts as a normalisation (5 + affine), with running statistics as inference (2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from modelcost.analysis import formulas as F

aten = torch.ops.aten
Formula = Callable[[dict[str, Any], Any], "OpCost"]


@dataclass(frozen=True)
class OpCost:
    macs: int = 0
    flops: int = 0
    macs_dtype: str | None = None


FORMULAS: dict[Any, Formula] = {}  # OpOverloadPacket -> formula(bound args, output)
ZERO_COST: set[Any] = set()


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
# matrix products: (m,k)x(k,n) is m*n*k MACs; FLOPs = 2 * MACs + 1 per output element of an added bias


@register(_packets("mm bmm matmul dot vdot mv _int_mm", inplace=False))
def _matmul(a: dict, out: Any) -> OpCost:
    x, y = a.get("self"), a.get("mat2", a.get("other", a.get("vec", a.get("tensor"))))
    return _mm_cost(x, y, out, bias=False)


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
    return OpCost(macs, 2 * macs + bias, _dtype(x))


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


# ---------------------------------------------------------------------------------------------------
# elementwise: FLOPs per output element, by formulas.ELEMENTWISE_FLOPS name (or a number, see the docstring)

_ELEMENTWISE: dict[str, str | int] = {
    **dict.fromkeys("add sub rsub".split(), "add"),
    **dict.fromkeys("mul div true_divide floor_divide".split(), "mul"),
    **dict.fromkeys("pow float_power".split(), "pow"),
    "remainder": "mod", "fmod": "fmod", "neg": "neg", "negative": "neg", "abs": "abs", "absolute": "abs",
    "sign": "sign", "sgn": "sign", "signbit": "sign", "copysign": "sign", "heaviside": "sign",
    "ceil": "ceil", "floor": "floor", "round": "round", "trunc": "floor", "fix": "floor", "frac": 2,
    "relu": "relu",
    **dict.fromkeys("clamp clamp_min clamp_max clip hardtanh relu6".split(), "clip"),
    **dict.fromkeys("minimum fmin".split(), "min"),
    **dict.fromkeys("maximum fmax".split(), "max"),
    **dict.fromkeys("eq ne".split(), "equal"),
    "gt": "greater", "ge": "greaterorequal", "lt": "less", "le": "lessorequal",
    **dict.fromkeys("logical_not bitwise_not".split(), "not"),
    **dict.fromkeys("logical_and bitwise_and".split(), "and"),
    **dict.fromkeys("logical_or bitwise_or".split(), "or"),
    **dict.fromkeys("logical_xor bitwise_xor".split(), "xor"),
    **dict.fromkeys("bitwise_left_shift bitwise_right_shift __lshift__ __rshift__".split(), "bitshift"),
    **dict.fromkeys("where masked_fill nan_to_num".split(), "where"),
    "reciprocal": "reciprocal", "sqrt": "sqrt", "rsqrt": "rsqrt", "square": "square",
    **dict.fromkeys("exp exp2 expm1".split(), "exp"),
    **dict.fromkeys("log log2 log10 log1p lgamma digamma i0".split(), "log"),
    **dict.fromkeys("erf erfc erfinv".split(), "erf"),
    **dict.fromkeys("sin sinh asin asinh".split(), "sin"),
    **dict.fromkeys("cos cosh acos acosh".split(), "cos"),
    **dict.fromkeys("tan atan atan2 atanh".split(), "tan"),
    "tanh": "tanh",
    **dict.fromkeys("isnan".split(), "isnan"),
    **dict.fromkeys("isinf isfinite isposinf isneginf".split(), "isinf"),
    "sigmoid": "sigmoid", "hardsigmoid": "hardsigmoid", "hardswish": "hardswish", "silu": "silu",
    "mish": "mish", "softplus": "softplus", "log_sigmoid_forward": "softplus", "elu": "elu", "celu": "celu",
    "selu": "selu", "leaky_relu": "leakyrelu", "rrelu_with_noise": "leakyrelu", "_prelu_kernel": "prelu",
    "prelu": "prelu", "threshold": "thresholdedrelu", "hardshrink": "thresholdedrelu", "softshrink": 3,
    "lerp": 3, "addcmul": 3, "addcdiv": 3, "xlogy": 2, "logit": 3, "hypot": 4, "native_dropout": 2,
}


def _per_element(per: str | int) -> Formula:
    flops = per if isinstance(per, int) else F.ELEMENTWISE_FLOPS[per]
    return lambda a, out: OpCost(0, flops * _numel(out))


for _name, _per in _ELEMENTWISE.items():
    _targets = _packets(_name)
    if _targets:
        register(_targets)(_per_element(_per))


@register(_packets("gelu"))
def _gelu(a: dict, out: Any) -> OpCost:
    name = "gelu_tanh" if a.get("approximate") == "tanh" else "gelu"
    return OpCost(0, F.ELEMENTWISE_FLOPS[name] * _numel(out))


@register(_packets("glu", inplace=False))
def _glu(a: dict, out: Any) -> OpCost:
    return OpCost(0, (F.ELEMENTWISE_FLOPS["sigmoid"] + 1) * _numel(out))


@register(_packets("scatter_add index_add scatter_reduce index_reduce"))
def _scatter_accumulate(a: dict, out: Any) -> OpCost:
    """One add (or reduce) per source element."""
    return OpCost(0, _numel(a.get("src", a.get("source"))))


@register(_packets("index_put"))
def _index_put(a: dict, out: Any) -> OpCost:
    """A scatter (free) unless it accumulates: then one add per value."""
    return OpCost(0, _numel(a.get("values")) if a.get("accumulate") else 0)


# ---------------------------------------------------------------------------------------------------
# reductions: one FLOP per input element; max / min with a tensor second operand are elementwise


@register(
    _packets(
        "sum nansum mean nanmean prod amax amin aminmax argmax argmin any all norm linalg_vector_norm "
        "std var std_mean var_mean logsumexp cumsum cumprod cummax cummin count_nonzero",
        inplace=True,
    )
)
def _reduction(a: dict, out: Any) -> OpCost:
    return OpCost(0, _numel(a.get("self", a.get("input"))))


@register(_packets("max min", inplace=False))
def _max_min(a: dict, out: Any) -> OpCost:
    if isinstance(a.get("other"), torch.Tensor):
        return OpCost(0, _numel(out))
    return OpCost(0, _numel(a["self"]))


# ---------------------------------------------------------------------------------------------------
# softmax and normalisations


@register(_packets("_softmax _log_softmax _safe_softmax softmax log_softmax", inplace=False))
def _softmax(a: dict, out: Any) -> OpCost:
    return OpCost(0, F.SOFTMAX_FLOPS_PER_ELEMENT * _numel(out))


@register(
    _packets(
        "native_batch_norm _native_batch_norm_legit _native_batch_norm_legit_no_training "
        "_native_batch_norm_legit_functional _batch_norm_with_update _batch_norm_no_update "
        "cudnn_batch_norm miopen_batch_norm batch_norm",
        inplace=False,
    )
)
def _batch_norm(a: dict, out: Any) -> OpCost:
    """Running statistics (inference): folded scale and shift, 2 per element. Batch statistics
    (training, instance norm): a normalisation, 5 per element + affine scale + affine shift."""
    x = a["input"]
    training = a.get("training")
    if training is None:  # only _batch_norm_with_update (batch stats) and the *_no_update/_no_training kernels
        training = a["__op__"] == "_batch_norm_with_update"
    if training:
        return OpCost(0, F.norm_flops(x.numel(), a.get("weight") is not None, a.get("bias") is not None))
    return OpCost(0, F.BATCHNORM_FLOPS_PER_ELEMENT * x.numel())


@register(_packets("native_layer_norm native_group_norm layer_norm group_norm", inplace=False))
def _norm(a: dict, out: Any) -> OpCost:
    return OpCost(0, F.norm_flops(a["input"].numel(), a.get("weight") is not None, a.get("bias") is not None))


@register(_packets("rms_norm _fused_rms_norm", inplace=False))
def _rms_norm(a: dict, out: Any) -> OpCost:
    return OpCost(0, rms_norm_flops(a["input"].numel(), a.get("weight") is not None))


def rms_norm_flops(numel: int, has_weight: bool) -> int:
    return numel * (F.RMSNORM_FLOPS_PER_ELEMENT + int(has_weight))


# ---------------------------------------------------------------------------------------------------
# pooling: output elements x window; adaptive pooling: the exact sum of its (uneven) windows


def _window(kernel: Any, spatial_dims: int) -> tuple[int, ...]:
    k = [kernel] if isinstance(kernel, int) else list(kernel)
    return tuple(k * spatial_dims if len(k) == 1 else k)


@register(
    _packets(
        "max_pool1d max_pool2d max_pool3d max_pool2d_with_indices max_pool3d_with_indices avg_pool1d "
        "avg_pool2d avg_pool3d mkldnn_max_pool2d mkldnn_max_pool3d",
        inplace=False,
    )
)
def _pool(a: dict, out: Any) -> OpCost:
    y = _first_tensor(out)
    window = _window(a["kernel_size"], int(a["__op__"].removesuffix("_with_indices")[-2]))  # ..._pool2d -> 2
    return OpCost(0, F.pool_flops(y.numel(), window))


def adaptive_window_sum(in_size: int, out_size: int) -> int:
    """Sum of the window lengths of adaptive pooling along one dim (windows [floor(i*I/O), ceil((i+1)*I/O)))."""
    return sum(-(-((i + 1) * in_size) // out_size) - (i * in_size) // out_size for i in range(out_size))


@register(
    _packets(
        "_adaptive_avg_pool2d _adaptive_avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d "
        "adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d",
        inplace=False,
    )
)
def _adaptive_pool(a: dict, out: Any) -> OpCost:
    x = a["self"]
    y = _first_tensor(out)
    n = len(tuple(a["output_size"])) if not isinstance(a["output_size"], int) else 1
    lead = math.prod(x.shape[:-n])
    windows = math.prod(adaptive_window_sum(i, o) for i, o in zip(x.shape[-n:], y.shape[-n:], strict=True))
    return OpCost(0, lead * windows)


# ---------------------------------------------------------------------------------------------------
# zero cost: views, copies, casts, creation, indexing, padding, metadata, randomness

_VIEWS = (
    "view _unsafe_view _reshape_alias reshape view_as expand expand_as permute transpose t squeeze unsqueeze "
    "flatten unflatten slice select narrow split split_with_sizes unsafe_split unsafe_split_with_sizes chunk "
    "unbind diagonal as_strided alias movedim swapaxes swapdims unfold view_as_real view_as_complex real imag "
    "_conj conj resolve_conj resolve_neg detach lift_fresh _neg_view"
)
_MOVES = (
    "clone contiguous copy _to_copy to _copy_from _copy_from_and_resize lift_fresh_copy cat stack hstack vstack "
    "index_select index _unsafe_index gather take embedding masked_select scatter masked_scatter select_scatter "
    "slice_scatter diagonal_scatter as_strided_scatter repeat repeat_interleave tile roll flip constant_pad_nd pad "
    "reflection_pad1d reflection_pad2d reflection_pad3d replication_pad1d replication_pad2d replication_pad3d "
    "tril triu diag diag_embed pixel_shuffle pixel_unshuffle channel_shuffle native_channel_shuffle "
    "upsample_nearest1d upsample_nearest2d upsample_nearest3d _upsample_nearest_exact1d _upsample_nearest_exact2d "
    "_upsample_nearest_exact3d im2col col2im _pin_memory"
)
_CREATION = (
    "empty empty_like empty_strided empty_permuted new_empty new_empty_strided zeros zeros_like new_zeros ones "
    "ones_like new_ones full full_like new_full fill zero arange linspace logspace eye scalar_tensor "
    "rand rand_like randn randn_like randint randint_like randperm bernoulli normal uniform random exponential "
    "multinomial _local_scalar_dense item is_nonzero set resize resize_as _assert_async _assert_scalar "
    "_assert_tensor_metadata _functional_assert_async sym_constrain_range sym_constrain_range_for_size "
    "size sym_size stride sym_stride numel sym_numel storage_offset sym_storage_offset dim is_contiguous "
    "sym_is_contiguous is_strides_like_format is_non_overlapping_and_dense _nested_tensor_from_mask_left_aligned "
    "_has_compatible_shallow_copy_type is_same_size _convert_weight_to_int4pack _convert_weight_to_int4pack_for_cpu"
)
register_zero_cost(
    list(dict.fromkeys(
        _packets(_VIEWS) + _packets([n + "_copy" for n in _VIEWS.split()], inplace=False) + _packets(_MOVES)
        + _packets(_CREATION)
    ))
)


# ---------------------------------------------------------------------------------------------------
# composites: torch functions counted as one op at the function level (the aten ops they run inside are
# absorbed): attention, recurrent layers and cells, RMS norm, einsum of two or more operands.

_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
_RNN_KINDS = {"lstm": "lstm", "gru": "gru", "rnn_tanh": "rnn", "rnn_relu": "rnn"}


def composite_kind(func: Any, args: tuple = ()) -> str | None:
    """'scaled_dot_product_attention' | 'lstm' | 'gru' | 'rnn_tanh' | ... | 'rms_norm' | 'einsum' or None.

    einsum is a composite only with an equation string and two or more operands (docs/COUNTING.md: the
    product of every index size, pairwise left to right, as the ONNX counter does, so an outer or elementwise
    product counts as MACs too); a one-operand einsum (a sum or a transpose) is counted by what it runs."""
    kind = _COMPOSITE_FUNCS.get(func)
    if kind == "einsum" and len(_einsum_operands(args)) < 2:
        return None
    return kind


def _einsum_operands(args: tuple) -> list[torch.Tensor]:
    if not args or not isinstance(args[0], str):
        return []
    rest = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
    return [t for t in rest if isinstance(t, torch.Tensor)]


def _composite_funcs() -> dict[Any, str]:
    import torch.nn.functional as nnf

    table: dict[Any, str] = {nnf.scaled_dot_product_attention: "scaled_dot_product_attention",
                             nnf.rms_norm: "rms_norm", torch.rms_norm: "rms_norm"}
    for name, kind in (("scaled_dot_product_attention", "scaled_dot_product_attention"),
                       ("_scaled_dot_product_attention_math", "scaled_dot_product_attention"), ("rms_norm", "rms_norm")):
        packet = getattr(aten, name)
        for overload in packet.overloads():
            table[getattr(packet, overload)] = kind
    table[torch.einsum] = "einsum"
    table[aten.einsum.default] = "einsum"
    for name in [*_RNN_KINDS, *(k + "_cell" for k in _RNN_KINDS)]:
        table[getattr(torch, name)] = name
        packet = getattr(aten, name)
        for overload in packet.overloads():
            table[getattr(packet, overload)] = name
    return table


def composite_cost(kind: str, args: tuple, kwargs: dict) -> OpCost:
    """Cost of one composite call, from its arguments (positional as in the torch function's signature)."""
    if kind == "scaled_dot_product_attention":
        a = dict(zip(_SDPA_ARGS, args, strict=False)) | kwargs
        return _attention(a["query"], a["key"], a["value"], a.get("attn_mask") is not None)
    if kind == "einsum":
        operands = _einsum_operands(args)
        macs = F.einsum_macs(args[0], [tuple(t.shape) for t in operands])
        return OpCost(macs, 2 * macs, _dtype(operands[0]))
    if kind == "rms_norm":
        x = args[0]
        weight = args[2] if len(args) > 2 else kwargs.get("weight")
        return OpCost(0, rms_norm_flops(x.numel(), weight is not None))
    if kind.endswith("_cell"):
        return _cell_cost(_RNN_KINDS[kind.removesuffix("_cell")], args, kwargs)
    return _rnn_layer_cost(_RNN_KINDS[kind], args)


def _cell_cost(kind: str, args: tuple, kwargs: dict) -> OpCost:
    """``torch.lstm_cell(input, hx, w_ih, w_hh, b_ih, b_hh)`` and the GRU / RNN cells: one step."""
    x, w_ih, w_hh = args[0], args[2], args[3]
    batch = x.shape[0] if x.dim() == 2 else 1
    hidden = w_hh.shape[1]
    macs = F.rnn_macs(kind, 1, batch, w_ih.shape[1], hidden)
    return OpCost(macs, 2 * macs + F.rnn_extra_flops(kind, 1, batch, hidden), _dtype(x))


def _rnn_layer_cost(kind: str, args: tuple) -> OpCost:
    """``torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)``,
    or the packed form ``(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidir)``;
    GRU / RNN take one hx tensor in place of LSTM's (h, c) list."""
    packed = isinstance(args[1], torch.Tensor) if kind == "lstm" else isinstance(args[2], torch.Tensor)
    x = args[0]
    rest = args[2:] if packed else args[1:]
    hx, params, has_biases, num_layers = rest[0], list(rest[1]), bool(rest[2]), int(rest[3])
    bidirectional = bool(rest[6])
    batch_first = False if packed else bool(rest[7])
    dirs = 2 if bidirectional else 1
    gates = F.RNN_GATES[kind]
    hidden = params[0].shape[0] // gates
    proj = hx[0].shape[-1] if kind == "lstm" and hx[0].shape[-1] != hx[1].shape[-1] else 0
    if packed:
        steps, batch = x.shape[0], 1
    else:
        steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    macs = F.rnn_macs(kind, steps, batch, params[0].shape[1], hidden, num_layers, dirs, proj)
    del has_biases  # the elementwise convention (formulas.RNN_ELEMENTWISE_FLOPS) includes the bias adds
    return OpCost(macs, 2 * macs + F.rnn_extra_flops(kind, steps, batch, hidden, num_layers, dirs), _dtype(x))


_COMPOSITE_FUNCS = _composite_funcs()


from modelcost.analysis import torch_ops_backward as _backward  # noqa: F401 - registers the backward ops
