"""ONNX ops with multiply-accumulates: conv, conv-transpose, gemm, matmul, einsum, attention, LSTM/GRU/RNN,
and their quantized forms. Shapes come from the node's inferred inputs/outputs; the arithmetic is
``modelcost.analysis.formulas`` (the PyTorch counter uses the same functions).

FLOPs = 2 x MACs + extras per output element: a bias 1; Gemm's alpha != 1 and beta != 1 (with C) 1 each; a
QLinear op's requantisation of its output ``QUANTIZE_FLOPS`` (4: divide by scale, round, add zero point,
saturate); attention's softmax, scaling and mask per score (formulas.attention_extra_flops), softcap 3 more.

Precision (``macs_dtype``): the dtype of the data input for float ops; for ConvInteger / MatMulInteger /
QLinearConv / QLinearMatMul the dtype of the quantized weight; for a float Conv / ConvTranspose / Gemm / MatMul
whose data *and* weight inputs both come from DequantizeLinear of integer tensors (a QDQ model), the weight's
integer dtype. A float op whose weight alone is dequantized (weight-only quantization) runs its MACs in float:
it keeps the float dtype and the report says so.
"""

from __future__ import annotations

import math

from modelcost.analysis import formulas as F
from modelcost.analysis.onnx_ops import OpContext, OpCost, check_inner, register

QUANTIZE_FLOPS = 4  # per element: divide by scale, round, add zero point, saturate
DEQUANTIZE_FLOPS = 2  # per element: subtract zero point, multiply by scale
SOFTCAP_FLOPS = 3  # per score: divide, tanh, multiply


def _precision(ctx: OpContext, data: int, weight: int) -> tuple[str | None, str | None]:
    """(macs_dtype, note) of a float MAC op, QDQ-aware (see module doc)."""
    w_q = ctx.dequantized_dtype(weight)
    x_q = ctx.dequantized_dtype(data)
    if w_q and x_q:
        return w_q, None
    if w_q:
        return ctx.dtype_in(data), f"weight-only quantized ({w_q} weights, float data): MACs counted at float precision"
    return ctx.dtype_in(data), None


def _conv(
    ctx: OpContext,
    x: int,
    w: int,
    bias: int | None,
    macs_dtype: str | None,
    note: str | None = None,
    requantize: bool = False,
) -> OpCost:
    """Y[N, M, out...] = conv(X[N, C, ...], W[M, C/group, k...]): N*M*prod(out) * C/group * prod(k) MACs."""
    xs, ws = ctx.shape_in(x), ctx.shape_in(w)
    group = int(ctx.attr("group", 1))
    check_inner("input channels", xs[1], ws[1] * group, xs, ws)
    ys = ctx.shape_out(0)
    macs = F.conv_macs(ys[0], ys[1], ys[2:], xs[1], group, ws[2:])
    out = math.prod(ys)
    flops = (
        2 * macs + (out if bias is not None and ctx.has_in(bias) else 0) + (QUANTIZE_FLOPS * out if requantize else 0)
    )
    return OpCost(macs, flops, macs_dtype, note)


@register("Conv")
def conv(ctx: OpContext) -> OpCost:
    dtype, note = _precision(ctx, 0, 1)
    return _conv(ctx, 0, 1, 2, dtype, note)


@register("ConvInteger")
def conv_integer(ctx: OpContext) -> OpCost:
    return _conv(ctx, 0, 1, None, ctx.dtype_in(1))


@register("QLinearConv")
def qlinear_conv(ctx: OpContext) -> OpCost:
    # x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
    return _conv(ctx, 0, 3, 8, ctx.dtype_in(3), requantize=True)


@register("ConvTranspose")
def conv_transpose(ctx: OpContext) -> OpCost:
    """X[N, C, in...], W[C, M/group, k...]: every input element is scattered into M/group * prod(k) outputs,
    output_padding and pads only crop or extend the output (cropped contributions are counted)."""
    xs, ws, ys = ctx.shape_in(0), ctx.shape_in(1), ctx.shape_out(0)
    group = int(ctx.attr("group", 1))
    macs = F.conv_transpose_macs(xs[0], xs[1], xs[2:], ws[1] * group, group, ws[2:])
    dtype, note = _precision(ctx, 0, 1)
    return OpCost(macs, 2 * macs + (math.prod(ys) if ctx.has_in(2) else 0), dtype, note)


@register("Gemm")
def gemm(ctx: OpContext) -> OpCost:
    """Y = alpha * A' B' + beta * C with A' (M, K), B' (K, N): M*N*K MACs."""
    a, b = ctx.shape_in(0), ctx.shape_in(1)
    m, k = (a[1], a[0]) if ctx.attr("transA", 0) else (a[0], a[1])
    kb, n = (b[1], b[0]) if ctx.attr("transB", 0) else (b[0], b[1])
    check_inner("inner dims", k, kb, a, b)
    macs = m * n * k
    extra = (m * n if ctx.has_in(2) else 0) + (m * n if float(ctx.attr("alpha", 1.0)) != 1.0 else 0)
    extra += m * n if ctx.has_in(2) and float(ctx.attr("beta", 1.0)) != 1.0 else 0
    dtype, note = _precision(ctx, 0, 1)
    return OpCost(macs, 2 * macs + extra, dtype, note)


def _matmul_macs(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    check_inner("inner dims", a[-1], b[-2] if len(b) > 1 else b[0], a, b)
    return F.matmul_macs(a, b)


@register("MatMul")
def matmul(ctx: OpContext) -> OpCost:
    macs = _matmul_macs(ctx.shape_in(0), ctx.shape_in(1))
    dtype, note = _precision(ctx, 0, 1)
    return OpCost(macs, 2 * macs, dtype, note)


@register("MatMulInteger")
def matmul_integer(ctx: OpContext) -> OpCost:
    macs = _matmul_macs(ctx.shape_in(0), ctx.shape_in(1))
    return OpCost(macs, 2 * macs, ctx.dtype_in(1))


@register("QLinearMatMul")
def qlinear_matmul(ctx: OpContext) -> OpCost:
    # a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
    macs = _matmul_macs(ctx.shape_in(0), ctx.shape_in(3))
    return OpCost(macs, 2 * macs + QUANTIZE_FLOPS * ctx.numel_out(0), ctx.dtype_in(3))


@register("FusedMatMul", domain="com.microsoft")
def fused_matmul(ctx: OpContext) -> OpCost:
    """alpha * A' B' (transA / transB / transBatch flags): the output shape gives M, N and the batch; K is
    A's contracted dim."""
    a, y = ctx.shape_in(0), ctx.shape_out(0)
    k = a[-2] if ctx.attr("transA", 0) else a[-1]
    macs = math.prod(y) * k
    return OpCost(macs, 2 * macs + (math.prod(y) if float(ctx.attr("alpha", 1.0)) != 1.0 else 0), ctx.dtype_in(0))


@register("Einsum")
def einsum(ctx: OpContext) -> OpCost:
    """Two or more operands: formulas.einsum_macs. One operand: no MAC; a reduction (fewer output than input
    elements) costs one add per input element, a transpose / diagonal nothing."""
    shapes = [ctx.shape_in(i) for i in range(len(ctx.node.input))]
    equation = str(ctx.attr("equation"))
    if len(shapes) == 1:
        n_in, n_out = math.prod(shapes[0]), ctx.numel_out(0)
        return OpCost(0, n_in if n_out < n_in else 0, ctx.dtype_in(0))
    macs = F.einsum_macs(equation, shapes)
    return OpCost(macs, 2 * macs, ctx.dtype_in(0), gemm=F.einsum_gemm(equation, shapes))


def _heads(shape: tuple[int, ...], heads: int) -> tuple[int, int, int, int]:
    """(batch, heads, seq, head_size) of a 4-D [B, H, S, D] or 3-D [B, S, H*D] attention operand."""
    if len(shape) == 4:
        return shape[0], shape[1], shape[2], shape[3]
    if heads <= 0:
        raise ValueError("3-D attention operand without a head count")
    return shape[0], heads, shape[1], shape[2] // heads


@register("Attention")
def attention(ctx: OpContext) -> OpCost:
    """ONNX Attention (opset 23+): Q, K, V as [B, H, S, D] or [B, S, H*D] (q_num_heads / kv_num_heads);
    past_key extends the key length; grouped KV heads are shared by q_heads / kv_heads query heads."""
    b, qh, q_len, e = _heads(ctx.shape_in(0), int(ctx.attr("q_num_heads", 0)))
    _, kh, kv_len, _ = _heads(ctx.shape_in(1), int(ctx.attr("kv_num_heads", 0)))
    ev = _heads(ctx.shape_in(2), kh)[3]
    if ctx.has_in(4):
        kv_len += ctx.shape_in(4)[2]
    q4, k4, v4 = (b, qh, q_len, e), (b, qh, kv_len, e), (b, qh, kv_len, ev)
    macs = F.attention_macs(q4, k4, v4)
    masked = ctx.has_in(3) or bool(ctx.attr("is_causal", 0))
    extra = F.attention_extra_flops(q4, k4, masked)
    if float(ctx.attr("softcap", 0.0)) > 0:
        extra += SOFTCAP_FLOPS * b * qh * q_len * kv_len
    return OpCost(macs, 2 * macs + extra, ctx.dtype_in(0))


@register("Attention", domain="com.microsoft")
def ms_attention(ctx: OpContext) -> OpCost:
    """onnxruntime Attention: input [B, S, Din] x weights [Din, Dq+Dk+Dv] (+ bias), then multi-head attention
    over S (+ past length) keys; past is [2, B, heads, P, head]."""
    x, w = ctx.shape_in(0), ctx.shape_in(1)
    heads = int(ctx.attr("num_heads"))
    sizes = list(ctx.attr("qkv_hidden_sizes", []) or [w[1] // 3] * 3)
    b, s = x[0], x[1]
    proj = b * s * x[2] * w[1]
    kv_len = s + (ctx.shape_in(4)[3] if ctx.has_in(4) else 0)
    q4, k4, v4 = (
        (b, heads, s, sizes[0] // heads),
        (b, heads, kv_len, sizes[1] // heads),
        (b, heads, kv_len, sizes[2] // heads),
    )
    attn = F.attention_macs(q4, k4, v4)
    masked = ctx.has_in(3) or bool(ctx.attr("unidirectional", 0))
    flops = 2 * (proj + attn) + (b * s * w[1] if ctx.has_in(2) else 0) + F.attention_extra_flops(q4, k4, masked)
    return OpCost(proj + attn, flops, ctx.dtype_in(0))


@register("MultiHeadAttention", domain="com.microsoft")
def ms_multi_head_attention(ctx: OpContext) -> OpCost:
    """onnxruntime MultiHeadAttention: query [B, S, D]; key / value [B, L, D] or [B, heads, L, head];
    past_key (input 6) [B, heads, P, head] extends L; bias (input 3) adds one per q/k/v element."""
    heads = int(ctx.attr("num_heads"))
    b, _, q_len, e = _heads(ctx.shape_in(0), heads)
    _, _, kv_len, _ = _heads(ctx.shape_in(1), heads)
    ev = _heads(ctx.shape_in(2), heads)[3]
    if ctx.has_in(6):
        kv_len += ctx.shape_in(6)[2]
    q4, k4, v4 = (b, heads, q_len, e), (b, heads, kv_len, e), (b, heads, kv_len, ev)
    macs = F.attention_macs(q4, k4, v4)
    bias = ctx.numel_in(0) + ctx.numel_in(1) + ctx.numel_in(2) if ctx.has_in(3) else 0
    masked = ctx.has_in(4) or ctx.has_in(5)
    return OpCost(macs, 2 * macs + bias + F.attention_extra_flops(q4, k4, masked), ctx.dtype_in(0))


def _rnn(ctx: OpContext, kind: str) -> OpCost:
    """X [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1); W [directions, gates*hidden, input].
    Gate matmuls per step as formulas.rnn_macs; bias adds and gate arithmetic as formulas.rnn_extra_flops.
    sequence_lens is not read: every sequence is taken at full length."""
    xs, ws = ctx.shape_in(0), ctx.shape_in(1)
    seq, batch = (xs[1], xs[0]) if int(ctx.attr("layout", 0)) else (xs[0], xs[1])
    directions = ws[0]
    hidden = int(ctx.attr("hidden_size", 0)) or ws[1] // F.RNN_GATES[kind]
    macs = F.rnn_macs(kind, seq, batch, xs[2], hidden, 1, directions)
    flops = 2 * macs + F.rnn_extra_flops(kind, seq, batch, hidden, 1, directions)
    return OpCost(macs, flops, ctx.dtype_in(0))


@register("LSTM")
def lstm(ctx: OpContext) -> OpCost:
    return _rnn(ctx, "lstm")


@register("GRU")
def gru(ctx: OpContext) -> OpCost:
    return _rnn(ctx, "gru")


@register("RNN")
def rnn(ctx: OpContext) -> OpCost:
    return _rnn(ctx, "rnn")
