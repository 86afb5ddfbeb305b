"""ONNX Runtime's fused transformer ops (com.microsoft) that ``onnxruntime.transformers.optimizer``, the
GenAI model builder and the quantizers write, counted so that a fused graph gives the MACs of the graph it
replaces (tests/analysis/test_exports_fused.py checks each against its unfused equivalent). Input layouts are those of
ONNX Runtime's ContribOperators.md.

* EmbedLayerNormalization: word (+ position + segment) embedding gathers, their sums and a layer norm with gamma
  and beta: no MAC; 1 add per element per extra embedding + formulas.norm_flops; the optional mask_index
  output (ones per mask row) 1 add per mask element.
* GroupQueryAttention: Q [B, S, N*H] (or packed QKV [B, S, (N + 2 Nkv) H] with no key input), K / V
  [B, S, Nkv*H], past_key [B, Nkv, P, H]. Every query head attends over T = P + S keys of its KV group:
  2 * B*N*S*T*H MACs (QK^T and AV, as formulas.attention_macs; the grouping shares K/V, it does not change the
  per-head work); causal mask, scaling and softmax per score (formulas.attention_extra_flops); do_rotary adds
  3 FLOPs per rotated query and key element; softcap 3 per score.
* MatMulNBits: A [..., K] x a block-quantized weight of N x K (bits per element, block_size): prod(A[:-1]) * N *
  K MACs at the float precision of A (weight-only quantization, said in a note); the weight's dequantization
  (DEQUANTIZE_FLOPS per weight element, what the unfused DequantizeLinear + MatMul costs) and the bias add.
* QOrderedMatMul (CUDA, int8 in a tiled memory order): A [..., K] x B [K, N] -> Y: prod(Y) * K MACs in int8;
  requantization of Y (QUANTIZE_FLOPS per element), the bias add and alpha * C (2 per element) when given.
* SimplifiedLayerNormalization registered by ONNX Runtime in the default domain (RMS norm, no skip): as the
  com.microsoft one.
"""

from __future__ import annotations

import math

from modelcost.analysis import formulas as F
from modelcost.analysis.onnx_ops import OpContext, OpCost, register
from modelcost.analysis.onnx_ops_mac import DEQUANTIZE_FLOPS, QUANTIZE_FLOPS, SOFTCAP_FLOPS

MS = "com.microsoft"


@register("EmbedLayerNormalization", domain=MS)
def ms_embed_layer_norm(ctx: OpContext) -> OpCost:
    """input_ids, segment_ids, word_embedding, position_embedding, segment_embedding, gamma, beta, mask,
    position_ids: output [B, S, H]."""
    n = ctx.numel_out(0)
    extra_sums = 1 + int(ctx.has_in(1) and ctx.has_in(4))  # word + position (+ segment)
    mask = ctx.numel_in(7) if ctx.has_in(7) else 0
    return OpCost(0, extra_sums * n + F.norm_flops(n, True, ctx.has_in(6)) + mask)


@register("GroupQueryAttention", domain=MS)
def ms_group_query_attention(ctx: OpContext) -> OpCost:
    heads, kv_heads = int(ctx.attr("num_heads")), int(ctx.attr("kv_num_heads"))
    q = ctx.shape_in(0)
    b, s = q[0], q[1]
    head = q[2] // (heads + 2 * kv_heads) if not ctx.has_in(1) else q[2] // heads
    past = ctx.shape_in(3)[2] if ctx.has_in(3) else 0
    total = past + s
    q4, k4 = (b, heads, s, head), (b, heads, total, head)
    macs = F.attention_macs(q4, k4, k4)
    flops = 2 * macs + F.attention_extra_flops(q4, k4, True)
    if int(ctx.attr("do_rotary", 0)):
        flops += 3 * b * s * (heads + kv_heads) * head
    if float(ctx.attr("softcap", 0.0)) > 0:
        flops += SOFTCAP_FLOPS * b * heads * s * total
    return OpCost(macs, flops, ctx.dtype_in(0))


@register("MatMulNBits", domain=MS)
def ms_matmul_nbits(ctx: OpContext) -> OpCost:
    """A, B (packed), scales, zero_points, g_idx, bias: Y [..., N]."""
    a = ctx.shape_in(0)
    k, n = int(ctx.attr("K", a[-1])), int(ctx.attr("N"))
    rows = math.prod(a[:-1])
    macs = rows * n * k
    flops = 2 * macs + DEQUANTIZE_FLOPS * n * k + (rows * n if ctx.has_in(5) else 0)
    bits = int(ctx.attr("bits", 4))
    note = f"weight-only quantized (int{bits} weights, float data): MACs counted at float precision"
    return OpCost(macs, flops, ctx.dtype_in(0), note)


@register("QOrderedMatMul", domain=MS)
def ms_qordered_matmul(ctx: OpContext) -> OpCost:
    """A, scale_A, B, scale_B, scale_Y, bias, C, scale_C."""
    k = ctx.shape_in(0)[-1]
    out = ctx.numel_out(0)
    macs = out * k
    flops = 2 * macs + QUANTIZE_FLOPS * out + (out if ctx.has_in(5) else 0) + (2 * out if ctx.has_in(6) else 0)
    return OpCost(macs, flops, ctx.dtype_in(2))


@register("SimplifiedLayerNormalization")
def ort_rms_norm(ctx: OpContext) -> OpCost:
    return OpCost(0, (F.RMSNORM_FLOPS_PER_ELEMENT + 1) * ctx.numel_out(0))
