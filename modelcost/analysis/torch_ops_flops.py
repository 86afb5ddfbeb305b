"""The aten formulas without MACs (elementwise, reductions, softmax and normalisations, pooling, linear resizes)
and the ops known to cost nothing (views, copies, casts, creation, indexing).

Registered on ``modelcost.analysis.torch_ops`` (the registry) when that module is imported; the mirror of
``onnx_ops_flops`` on the ONNX side.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from modelcost.analysis import formulas as F
from modelcost.analysis.torch_ops import (
    Formula,
    OpCost,
    _first_tensor,
    _numel,
    _packets,
    register,
    register_zero_cost,
)

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
    "lerp": 3, "addcmul": 3, "addcdiv": 3, "xlogy": 2, "logit": 3, "hypot": 4, "native_dropout": 2, "polar": 4,
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
        "std var std_mean var_mean logsumexp cumsum cumprod cummax cummin count_nonzero _is_all_true _is_any_true",
        inplace=True,
    )
)
def _reduction(a: dict, out: Any) -> OpCost:
    return OpCost(0, _numel(a.get("self", a.get("input"))))


@register(_packets("mse_loss", inplace=False))
def _mse_loss(a: dict, out: Any) -> OpCost:
    """A squared error per element (subtract, square: 2) and, reduced (mean or sum, ATen's reduction 1 or 2), one
    more per element (DAC's commitment loss, computed in its forward)."""
    n = _numel(a["self"])
    return OpCost(0, 2 * n + (n if int(a.get("reduction", 1)) else 0))


@register(_packets("_cdist_forward", inplace=False))
def _cdist_direct(a: dict, out: Any) -> OpCost:
    """cdist computed directly (its small sizes, or a p other than 2): per distance over M features, a subtract, a
    power (a multiply at p = 2) and an add each, 3 x M; no MACs (the matmul route is ``_euclidean_dist``)."""
    return OpCost(0, 3 * _first_tensor(out).numel() * int(a["x1"].shape[-1]))


@register(_packets("linalg_solve_triangular", inplace=False))
def _solve_triangular(a: dict, out: Any) -> OpCost:
    """A triangular solve, A (..., n, n) against B: by substitution each of B's n-long columns (rows, left=False)
    takes n (n - 1) / 2 multiply-subtracts and, unless unitriangular, n divides; FLOPs only (2 per
    multiply-subtract), no MACs: it is no matmul the MAC convention names (the gated delta net's chunked linear
    attention: Qwen3-Next's 64 x 64 per chunk)."""
    y = _first_tensor(out)
    n = int(a["self"].shape[-1])
    return OpCost(0, y.numel() * (n - 1) + (0 if a.get("unitriangular") else y.numel()))


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


@register(_packets("_weight_norm_interface", inplace=False))
def _weight_norm(a: dict, out: Any) -> OpCost:
    """Weight normalisation, w = g x v / ||v|| per output slice, done in every forward (EnCodec's and HiFi-GAN's
    convs under nn.utils.weight_norm): as its decomposition counts, the norm a reduction over v (1 per element),
    g / norm 1 per norm, and the scaling of v 1 per element: 2 x v's elements + g's."""
    return OpCost(0, 2 * _numel(a["v"]) + _numel(a["g"]))


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


@register(_packets("upsample_linear1d upsample_bilinear2d upsample_trilinear3d", inplace=False))
def _linear_resize(a: dict, out: Any) -> OpCost:
    """As ONNX's linear Resize (``formulas.linear_resize_flops``); nearest is in the zero-cost moves below,
    the antialiased kernels stay uncounted."""
    return OpCost(0, F.linear_resize_flops(a["self"].shape, _first_tensor(out).shape))


@register(_packets("upsample_bicubic2d", inplace=False))
def _cubic_resize(a: dict, out: Any) -> OpCost:
    """As ONNX's cubic Resize (``formulas.cubic_resize_flops``): ViTs resize their position embeddings so."""
    return OpCost(0, F.cubic_resize_flops(a["self"].shape, _first_tensor(out).shape))


# aten's interpolation_mode of grid_sampler_2d / 3d -> formulas.grid_sample_flops's mode
_GRID_MODES = {0: "linear", 1: "nearest", 2: "cubic"}


@register(_packets("grid_sampler_2d grid_sampler_3d _grid_sampler_2d_cpu_fallback", inplace=False))
def _grid_sample(a: dict, out: Any) -> OpCost:
    """``F.grid_sample`` (deformable attention's sampling, spatial transformers, optical flow's warps), as ONNX's
    GridSample: ``formulas.grid_sample_flops`` over the input's spatial dims."""
    y = _first_tensor(out)
    mode = _GRID_MODES.get(int(a.get("interpolation_mode") or 0), "linear")
    return OpCost(0, F.grid_sample_flops(y.numel(), a["input"].dim() - 2, mode))


@register(_packets("cudnn_grid_sampler", inplace=False))
def _cudnn_grid_sample(a: dict, out: Any) -> OpCost:
    """cuDNN's grid sampler: bilinear only (torch routes a 4-D bilinear zero-padded sample there)."""
    return OpCost(0, F.grid_sample_flops(_first_tensor(out).numel(), a["self"].dim() - 2, "linear"))


# ---------------------------------------------------------------------------------------------------
# fast Fourier transforms (torch.fft's ops reach these three; a real tensor's fftn is cast to complex first)


def _fft_length(shape: Any, dims: Any) -> int:
    return math.prod(int(shape[d]) for d in dims)


def _scaling(a: dict, out_values: int) -> int:
    """One multiply per real output value when the transform is normalised (ATen's normalization 1 or 2)."""
    return out_values if int(a.get("normalization", 0)) else 0


@register(_packets("_fft_c2c _fft_r2c", inplace=False))
def _fft_from_input(a: dict, out: Any) -> OpCost:
    """Complex to complex over ``dim`` (FNet's token mixing, a 2-D transform per sample), or real to complex
    (rfft: half the work per real point): ``formulas.fft_flops`` over the input's points; the output is complex."""
    x = a["self"]
    return OpCost(0, F.fft_flops(x.numel(), _fft_length(x.shape, a["dim"]), real=not x.is_complex())
                  + _scaling(a, 2 * _numel(out)))


@register(_packets("_fft_c2r", inplace=False))
def _fft_c2r(a: dict, out: Any) -> OpCost:
    """Real output (irfft): half a complex transform's work per real output point, its length the output's."""
    y = _first_tensor(out)
    return OpCost(0, F.fft_flops(y.numel(), _fft_length(y.shape, a["dim"]), real=True) + _scaling(a, y.numel()))


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
