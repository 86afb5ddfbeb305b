"""Cost formulas of shapes, shared by the PyTorch and the ONNX counter so that both count alike.

Conventions (docs/COUNTING.md says the same for users):

* A MAC is one multiply-accumulate of conv, conv-transpose, gemm/matmul/linear, einsum, attention and
  recurrent-cell gate matmuls. A matmul (m,k)x(k,n) is m*n*k MACs.
* FLOPs = 2 * MACs + the cost of everything else, per output element unless said otherwise:
  - bias added inside conv / gemm / linear: 1 per output element;
  - elementwise arithmetic, comparisons, clipping, ReLU: 1 (see ``ELEMENTWISE_FLOPS`` for the rest;
    one transcendental (exp, log, erf, tanh, sqrt, ...) counts 1);
  - softmax / log-softmax: 5 per element (max, subtract, exp, sum, divide);
  - batch norm (inference): 2 per element (folded scale and shift);
  - layer / group / instance norm: 5 per element (mean, subtract, square, variance sum, scale by the
    reciprocal std) + 1 for the affine scale + 1 for the affine shift; RMS norm: 3 per element + 1 scale;
  - pooling: output elements x window size (k-1 adds/compares and 1 divide or the first load);
    global pooling: input elements;
  - linear (bilinear, trilinear) resize: 3 (one lerp) x (2^n - 1) lerps per output element, n the axes whose
    size changes; cubic (bicubic): 7 (one 4-tap interpolation) x (4^n - 1) / 3; nearest moves data (no cost);
  - grid sample: as a resize of every sampled axis (``grid_sample_flops``);
  - reductions (sum, mean, max, min, prod, norms): input elements;
  - selection (MoE routing): top-k (1 + ceil(log2 k)) per input element, sort ceil(log2 n) per input element
    (n the sorted axis), histogram 1 per input element;
  - attention: 2 * MACs + softmax (5) + scaling (1) per score, + 1 per score for an additive mask;
  - fast Fourier transform: 5 x points x log2(length) for a complex one, half for a real input or output
    (``fft_flops``), + 1 per real output value when it is scaled (normalised); no MACs.
* Data movement (reshape, transpose, slice, concat, gather, cast, ...) costs nothing here: it moves bytes,
  which the memory section counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# FLOPs per output element of elementwise ops, by canonical (lower-case ONNX-style) name.
ELEMENTWISE_FLOPS: dict[str, int] = {
    # arithmetic and comparison: 1
    **dict.fromkeys(
        "add sub mul div pow mod fmod neg abs sign ceil floor round relu clip min max equal greater less "
        "greaterorequal lessorequal not and or xor where reciprocal sqrt rsqrt exp log erf sin cos tan "
        "tanh softsign isnan isinf bitshift square".split(),
        1,
    ),
    # more of the same kind (one arithmetic / logical op or one transcendental each)
    **dict.fromkeys("asin acos atan sinh cosh asinh acosh atanh bitwiseand bitwiseor bitwisexor bitwisenot".split(), 1),
    "shrink": 2,  # compare, subtract/add the bias
    "leakyrelu": 2,  # compare, multiply
    "prelu": 2,
    "thresholdedrelu": 2,
    "elu": 3,  # compare, exp, subtract/multiply folded
    "celu": 3,
    "selu": 4,
    "sigmoid": 3,  # exp(-x), add 1, divide
    "hardsigmoid": 3,  # multiply-add, clip
    "hardswish": 4,  # hardsigmoid then multiply
    "silu": 4,  # sigmoid then multiply
    "mish": 5,  # softplus (exp, add, log), tanh, multiply
    "softplus": 3,
    "gelu": 5,  # 0.5 * x * (1 + erf(x / sqrt 2)): divide, erf, add, multiply, multiply
    "gelu_tanh": 8,  # 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))
    "quick_gelu": 4,  # x * sigmoid(1.702 x)
}

SOFTMAX_FLOPS_PER_ELEMENT = 5
BATCHNORM_FLOPS_PER_ELEMENT = 2
NORM_FLOPS_PER_ELEMENT = 5
RMSNORM_FLOPS_PER_ELEMENT = 3

# Gate matmuls per time step of a recurrent cell.
RNN_GATES = {"lstm": 4, "gru": 3, "rnn": 1}
# Elementwise FLOPs per hidden unit per step after the gate matmuls (bias adds included):
# LSTM: 4 gates x 2 biases + 4 gate sums (8+4) + 3 sigmoid (9) + 2 tanh (2) + c = f*c + i*g (3) + h = o*tanh(c) (1)
# GRU:  3 gates x 2 biases + 2 gate sums (6+2) + 2 sigmoid (6) + tanh (1) + r*(hn) (1) + n-gate sum (1)
#       + h = (1-z)*n + z*h (3)
# RNN:  2 biases + 1 sum + tanh (1)
RNN_ELEMENTWISE_FLOPS = {"lstm": 27, "gru": 20, "rnn": 4}


def numel(shape: Sequence[int]) -> int:
    return math.prod(int(d) for d in shape)


def conv_macs(
    batch: int, out_channels: int, out_spatial: Sequence[int], in_channels: int, groups: int, kernel: Sequence[int]
) -> int:
    """Each output element takes (in_channels / groups) * prod(kernel) MACs (dilation and stride change
    only which inputs are read, not how many)."""
    return batch * out_channels * numel(out_spatial) * (in_channels // groups) * numel(kernel)


def conv_transpose_macs(
    batch: int, in_channels: int, in_spatial: Sequence[int], out_channels: int, groups: int, kernel: Sequence[int]
) -> int:
    """Each input element is scattered into (out_channels / groups) * prod(kernel) outputs."""
    return batch * in_channels * numel(in_spatial) * (out_channels // groups) * numel(kernel)


def matmul_macs(a_shape: Sequence[int], b_shape: Sequence[int]) -> int:
    """numpy-style matmul with broadcast batch dims: prod(batch) * m * n * k.

    A 1-D operand is promoted as numpy does (a vector on the left is (1, k), on the right (k, 1))."""
    a = list(a_shape)
    b = list(b_shape)
    if len(a) == 1:
        a = [1, a[0]]
    if len(b) == 1:
        b = [b[0], 1]
    m, k = a[-2], a[-1]
    n = b[-1]
    batch_a, batch_b = a[:-2], b[:-2]
    width = max(len(batch_a), len(batch_b))
    batch_a = [1] * (width - len(batch_a)) + batch_a
    batch_b = [1] * (width - len(batch_b)) + batch_b
    batch = math.prod(max(x, y) for x, y in zip(batch_a, batch_b, strict=True))
    return batch * m * n * k


def einsum_macs(equation: str, shapes: Sequence[Sequence[int]]) -> int:
    """MACs of a one- or two-operand einsum: the product of the sizes of every distinct index.

    A two-operand contraction is a (batched) matmul over the shared indices, so every combination of all
    indices is one multiply-add. With one operand (a sum or a transpose) there is no multiply: 0 MACs.
    More than two operands are costed as the left-to-right chain of pairwise contractions."""
    expanded, rhs, sizes = _einsum_terms(equation, shapes)
    if len(expanded) < 2:
        return 0
    total = 0
    left = expanded[0]
    for i, right in enumerate(expanded[1:], start=1):
        letters = set(left) | set(right)
        total += math.prod(sizes[c] for c in letters)
        later = set("".join(expanded[i + 1 :])) | set(rhs)
        left = "".join(c for c in dict.fromkeys(left + right) if c in later)
    return total


def einsum_gemm(equation: str, shapes: Sequence[Sequence[int]]) -> tuple[int, int, int] | None:
    """(M, N, K) of a two-operand einsum as the one matmul it runs: M = the batch indices (in both operands and
    the output) x the left operand's own output indices, N = the right operand's own output indices, K = every
    index the output lacks; M x N x K = einsum_macs. None for one operand or more than two.

    The output's shape alone does not tell them apart: XLNet's projection 'ibh,hnd->ibnd' is M = i x b,
    N = n x d (heads x head size), K = h, where the output's last dim (d) as N made M twelve times too large."""
    expanded, rhs, sizes = _einsum_terms(equation, shapes)
    if len(expanded) != 2:
        return None
    left, right = (set(t) for t in expanded)
    out = set(rhs)

    def size(letters: set[str]) -> int:
        return math.prod(sizes[c] for c in letters)

    return size(left & out), size((right - left) & out), size((left | right) - out)


def _einsum_terms(equation: str, shapes: Sequence[Sequence[int]]) -> tuple[list[str], str, dict[str, int]]:
    """(each operand's indices, '...' named, the output's indices, each index's size) of an einsum."""
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum {equation!r} has {len(terms)} operands, got {len(shapes)} shapes")
    sizes: dict[str, int] = {}
    expanded = [_expand_ellipsis(t, s, sizes) for t, s in zip(terms, shapes, strict=True)]
    if not rhs and "->" not in eq:
        counts = {c: sum(t.count(c) for t in expanded) for c in sizes}
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    return expanded, rhs.replace("...", "".join(c for c in sizes if c.isupper())), sizes


def _expand_ellipsis(term: str, shape: Sequence[int], sizes: dict[str, int]) -> str:
    """Give '...' dims upper-case letter names (einsum letters in our tests are lower-case) and record sizes."""
    if "..." in term:
        n_named = len(term.replace("...", ""))
        n_ell = len(shape) - n_named
        term = term.replace("...", "".join(chr(ord("A") + j) for j in range(n_ell)))
    if len(term) != len(shape):
        raise ValueError(f"einsum term {term!r} does not match shape {tuple(shape)}")
    for c, d in zip(term, shape, strict=True):
        sizes[c] = max(sizes.get(c, 1), int(d))
    return term


def attention_macs(q_shape: Sequence[int], k_shape: Sequence[int], v_shape: Sequence[int]) -> int:
    """Scaled dot-product attention, q (..., L, E), k (..., S, E), v (..., S, Ev), batch dims broadcast:
    scores q k^T are L*S*E MACs and the weighted sum of v is L*S*Ev MACs, per batch element."""
    *qb, L, E = q_shape
    *_, S, Ev = v_shape
    kb = list(k_shape[:-2])
    width = max(len(qb), len(kb))
    qb = [1] * (width - len(qb)) + list(qb)
    kb = [1] * (width - len(kb)) + kb
    batch = math.prod(max(int(x), int(y)) for x, y in zip(qb, kb, strict=True))
    return batch * L * S * (E + Ev)


def attention_extra_flops(q_shape: Sequence[int], k_shape: Sequence[int], has_mask: bool) -> int:
    """Non-MAC FLOPs of attention: per score, softmax (5) + scale (1) + mask add (1 if masked)."""
    *qb, L, _ = q_shape
    S = k_shape[-2]
    scores = math.prod(int(d) for d in qb) * L * S
    return scores * (SOFTMAX_FLOPS_PER_ELEMENT + 1 + (1 if has_mask else 0))


def rnn_macs(
    kind: str,
    seq_len: int,
    batch: int,
    input_size: int,
    hidden_size: int,
    num_layers: int = 1,
    directions: int = 1,
    proj_size: int = 0,
) -> int:
    """Gate matmuls of LSTM (4 gates), GRU (3) or Elman RNN (1), per step, layer and direction:
    gates * hidden * (layer_input + recurrent_input) MACs per batch element; layer_input is input_size for
    the first layer and directions * (proj_size or hidden) after it; recurrent_input is proj_size or hidden.
    An LSTM projection adds hidden * proj_size MACs per step."""
    gates = RNN_GATES[kind]
    out_size = proj_size or hidden_size
    total = 0
    for layer in range(num_layers):
        layer_in = input_size if layer == 0 else directions * out_size
        per_step = gates * hidden_size * (layer_in + out_size) + (hidden_size * proj_size if proj_size else 0)
        total += directions * seq_len * batch * per_step
    return total


def rnn_extra_flops(
    kind: str, seq_len: int, batch: int, hidden_size: int, num_layers: int = 1, directions: int = 1
) -> int:
    return RNN_ELEMENTWISE_FLOPS[kind] * seq_len * batch * hidden_size * num_layers * directions


def elementwise_flops(op: str, out_numel: int) -> int | None:
    """FLOPs of an elementwise op by canonical name, or None when the op is not in the table."""
    per = ELEMENTWISE_FLOPS.get(op.lower())
    return None if per is None else per * out_numel


def pool_flops(out_numel: int, window: Sequence[int]) -> int:
    return out_numel * numel(window)


def _resized_axes(in_shape: Sequence[int], out_shape: Sequence[int]) -> int:
    return sum(1 for a, b in zip(in_shape, out_shape, strict=False) if a != b)


def linear_resize_flops(in_shape: Sequence[int], out_shape: Sequence[int]) -> int:
    """A linear / bilinear / trilinear resize: each output element interpolates along the n axes whose size
    changes, 2^n - 1 lerps of 3 FLOPs (subtract, multiply, add); no MACs."""
    return numel(out_shape) * 3 * (2 ** _resized_axes(in_shape, out_shape) - 1)


def cubic_resize_flops(in_shape: Sequence[int], out_shape: Sequence[int]) -> int:
    """A cubic / bicubic resize, done separably: along the n axes whose size changes, an output element is
    (4^n - 1) / 3 four-tap interpolations (4 along the last resized axis, feeding 1 along the one before, for
    n = 2: 5), each 4 multiplies and 3 adds = 7 FLOPs; the tap weights are computed once per output coordinate
    along an axis, shared by every channel, and not counted. No MACs (the linear resize's 2^n - 1 lerps of 3
    FLOPs, with 4 taps instead of 2)."""
    return numel(out_shape) * 7 * ((4 ** _resized_axes(in_shape, out_shape) - 1) // 3)


def grid_sample_flops(out_numel: int, spatial_dims: int, mode: str) -> int:
    """A grid sample (torch's grid_sample, ONNX GridSample): each output element interpolates the input at its
    grid point over the ``spatial_dims`` sampled axes, as a resize whose every axis changes: linear (bilinear,
    trilinear) 2^n - 1 lerps of 3 FLOPs, cubic (bicubic) (4^n - 1) / 3 four-tap interpolations of 7, nearest
    none (it moves data). The grid point's weights, one set per output location shared by every channel, are not
    counted, as a resize's tap weights are not. No MACs."""
    if mode == "nearest":
        return 0
    if mode == "cubic":
        return out_numel * 7 * ((4 ** spatial_dims - 1) // 3)
    return out_numel * 3 * (2 ** spatial_dims - 1)


def norm_flops(numel_: int, affine_scale: bool, affine_shift: bool) -> int:
    return numel_ * (NORM_FLOPS_PER_ELEMENT + int(affine_scale) + int(affine_shift))



FFT_FLOPS_PER_POINT = 5  # per complex point and log2 of the length: radix-2 Cooley-Tukey, FFTW's benchmark convention


def fft_flops(points: int, length: int, real: bool = False) -> int:
    """A fast Fourier transform of ``length`` points (a multi-dimensional one: the product of its dims' sizes) over
    ``points`` values in all (the transforms' batch x length): 5 x points x log2(length) FLOPs for a complex
    transform. A radix-2 transform is length / 2 x log2(length) butterflies of one complex multiply (6 FLOPs) and
    two complex adds (4): 5 per point and level, the count FFTW's benchmarks divide by. One with a real input or
    a real output (``real``: ``points`` real values) does half the work: 2.5 per point and level. No MACs:
    butterflies are not among the MAC-counted ops. A length of 1 costs nothing."""
    if length <= 1:
        return 0
    return round(FFT_FLOPS_PER_POINT * (0.5 if real else 1.0) * points * math.log2(length))


def sort_flops(numel_: int, axis_len: int) -> int:
    """Sorting every row of ``axis_len`` elements: axis_len * ceil(log2 axis_len) comparisons per row, one FLOP
    each (a comparison sort's order); no MACs."""
    return numel_ * math.ceil(math.log2(axis_len)) if axis_len > 1 else 0


def topk_flops(numel_: int, k: int) -> int:
    """The k largest of every row: each element is compared with the top of a k-heap (1) and inserted in it
    (ceil(log2 k)); k = 1 is argmax's one comparison per element. No MACs."""
    return numel_ * (1 + math.ceil(math.log2(max(k, 1))))
