"""Multi-head latent attention (DeepSeek-V2/V3 and kin): the decode cost as serving engines run it, beside the
count of what transformers runs (docs/COUNTING.md, "Multi-head latent attention").

The counter runs transformers' code, which caches the latent c = kv_a_layernorm(W_DKV h) (kv_lora_rank r) and
the shared RoPE key (qk_rope_head_dim dr) and, at every decode step, re-expands the whole cache through
kv_b_proj = [W_UK; W_UV] into per-head keys (dn + dr) and values (dv) before attention. Serving engines (vLLM,
SGLang, FlashMLA) absorb W_UK into the query and W_UV into the output instead (DeepSeek-V2, section 2.1.2):
q_nope . (W_UK c) = (W_UK^T q_nope) . c, so attention runs against the latent cache itself. Per MLA layer and
sequence, a decode step of one token attending S positions (hidden d, H heads, dn = qk_nope_head_dim) costs

    both forms:  q   d H (dn + dr), or d rq + rq H (dn + dr) with q_lora_rank rq
                 kv_a_proj_with_mqa   d (r + dr)
                 o_proj               H dv d
    as run:      kv_b_proj on every cached position     S r H (dn + dv)
                 scores q.k + weights x V               H S (dn + dr) + H S dv
    absorbed:    q_nope x W_UK (per head)               H dn r
                 scores against [latent; rope key]      H S (r + dr)
                 weights x latent                       H S r
                 x W_UV (per head)                      H r dv

MACs. Everything outside the rows that differ (norms, RoPE, MLP or MoE, the head) is the counter's figure, so
absorbed = counted - B x layers x (as-run rows - absorbed rows); FLOPs move by twice that (the softmax and
scale per score are the same H S scores in both forms). Both forms read the same weights (W_UK and W_UV are
kv_b_proj's halves) and the latent cache: decode bytes = weights read + B x latent bytes per token x S.
The prefill is the same in both (engines expand the latents for the prompt's compute-bound attention).
"""

from __future__ import annotations

from typing import Any

from modelcost.core.llm import DecodeCost, DecodeTokenCost, GenerationPoint, LlmReport, MlaShape

_DIMS = ("num_heads", "hidden_size", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
         "v_head_dim")


def mla_shape(module: Any) -> MlaShape | None:
    """The MLA layers of ``module`` (attention modules holding kv_b_proj and a kv_lora_rank, as transformers'
    DeepSeek-V2/V3, Kimi, GLM-4-MoE-Lite, MiniCPM3, ... declare them); None without any, or when their shapes
    differ from layer to layer."""
    layers = [m for m in module.modules() if hasattr(m, "kv_b_proj") and getattr(m, "kv_lora_rank", None)]
    shapes = {tuple(getattr(m, k, None) for k in _DIMS) for m in layers}
    if len(shapes) != 1:
        return None
    heads, hidden, q_rank, rank, nope, rope, v = shapes.pop()
    if not all(isinstance(n, int) and n > 0 for n in (heads, hidden, rank, nope, rope, v)):
        return None
    n = len(layers)
    return MlaShape(n, heads, hidden, q_rank, rank, nope, rope, v, n * (rank + rope), n * heads * (nope + rope + v))


def layer_decode_macs(s: MlaShape, context_len: int, absorbed: bool) -> int:
    """MACs of one MLA layer's attention for one sequence's decode step (one new token, ``context_len`` key
    positions, the new one included), in the as-run or the absorbed form (the table in the module docstring)."""
    h, r, nope, rope, v, d = s.num_heads, s.kv_lora_rank, s.qk_nope_head_dim, s.qk_rope_head_dim, s.v_head_dim, \
        s.hidden_size
    q = d * h * (nope + rope) if s.q_lora_rank is None else d * s.q_lora_rank + s.q_lora_rank * h * (nope + rope)
    common = q + d * (r + rope) + h * v * d
    if absorbed:
        return common + h * nope * r + h * context_len * (r + rope) + h * context_len * r + h * r * v
    return common + context_len * r * h * (nope + v) + h * context_len * (nope + rope) + h * context_len * v


def _saved(s: MlaShape, batch: int, context_len: int) -> int:
    """MACs the absorbed form does not run, at one step of the whole batch."""
    return batch * s.layers * (layer_decode_macs(s, context_len, False) - layer_decode_macs(s, context_len, True))


def _why_not(s: MlaShape, point: GenerationPoint) -> str | None:
    """Why the counted decode is not transformers' re-expanding MLA (then no absorbed figure is derived)."""
    kv, dec = point.kv_cache, point.decode
    if kv.elements_per_token != s.latent_elements_per_token:
        return (f"MLA: the cache holds {kv.elements_per_token:,} elements per token, not the latent's "
                f"{s.latent_elements_per_token:,}; no absorbed-MLA decode figure")
    slope = point.batch_size * s.layers * (layer_decode_macs(s, 1, False) - layer_decode_macs(s, 0, False))
    if len(dec.per_token) > 1 and dec.macs_per_context_position != slope:
        return (f"MLA: a decode step grows by {dec.macs_per_context_position:,} MACs per cached position, not the "
                f"{slope:,} of re-expanding the latents; no absorbed-MLA decode figure")
    return None


def absorbed_decode(s: MlaShape, point: GenerationPoint, read_bytes: int) -> DecodeCost:
    """``point.decode`` (as transformers runs it) with W_UK and W_UV absorbed; ``read_bytes``: weights read per
    step (embedding rows of the batch included)."""
    b, dec, kv = point.batch_size, point.decode, point.kv_cache
    latent_token_bytes = s.latent_elements_per_token * kv.bytes_per_token // kv.elements_per_token
    if dec.steps <= 0:
        return DecodeCost(0, [], 0, 0, 0, 0, form="absorbed-mla")
    per_token = []
    for t in dec.per_token:
        saved = _saved(s, b, t.context_len)
        nbytes = read_bytes + b * latent_token_bytes * t.context_len
        flops = t.flops - 2 * saved
        per_token.append(DecodeTokenCost(t.token_index, t.context_len, t.macs - saved, flops, nbytes, flops / nbytes))
    first = dec.per_token[0].context_len
    ctx_sum = dec.steps * first + dec.steps * (dec.steps - 1) // 2  # context_len summed over the G - 1 steps
    s0, s1 = _saved(s, b, 0), _saved(s, b, 1) - _saved(s, b, 0)  # saved MACs are linear in context_len
    total_saved = dec.steps * s0 + s1 * ctx_sum
    slope = b * s.layers * (layer_decode_macs(s, 1, True) - layer_decode_macs(s, 0, True))
    return DecodeCost(dec.steps, per_token, dec.macs_total - total_saved, dec.flops_total - 2 * total_saved,
                      dec.steps * read_bytes + b * latent_token_bytes * ctx_sum, slope, form="absorbed-mla")


def add_absorbed(report: LlmReport, point: GenerationPoint, read_bytes: int) -> None:
    """Fill ``point.decode_absorbed`` for an MLA model (``report.mla``), or say in a note why it is left out."""
    if report.mla is None:
        return
    reason = _why_not(report.mla, point)
    if reason is None:
        point.decode_absorbed = absorbed_decode(report.mla, point, read_bytes)
    elif reason not in report.notes:
        report.notes.append(reason)
