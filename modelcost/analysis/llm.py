"""What generating text costs, counted on the meta device (conventions in ``modelcost.core.llm``).

Nothing here is a formula of config fields: the causal LM runs for real on meta tensors through the torch
counter (``analysis.torch_counter``) - a prefill forward over (B, P) that fills a KV cache, then single-token
decode steps over a cache of ``context_len - 1`` positions - so every op the model runs is counted by the same
registry as ``modelcost analyze``. The KV cache per token is the size of the cache tensors the prefill made.

Decode steps are counted at the first context length (P + 1) and the last (P + G - 1), and at the middle one
when there are three or more steps; their cost is linear in the context length (only attention reads the
cache), so the total over all G - 1 steps is the arithmetic series through the counted ends. The middle count
checks that linearity (a model whose cost is not linear in context length, e.g. sliding-window attention, is
reported as a problem).
"""

from __future__ import annotations

from typing import Any

from modelcost.core.assumptions import merge_assumptions
from modelcost.core.llm import DecodeCost, DecodeTokenCost, GenerationPoint, KvCache, LlmReport, PrefillCost
from modelcost.core.types import CostReport
from modelcost.loaders.llm_loader import CausalLM, cache_like, cache_tensors

KV_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
CAUSAL_NOTE = ("prefill attention is counted over all P x P query/key pairs (the counter's convention for "
               "is_causal); a causal kernel skips about half of them")


def _step_module(lm: CausalLM, cache: Any, last_only: bool) -> Any:
    import torch

    class Step(torch.nn.Module):
        """One forward of the model that reads and extends ``cache`` (what the counter runs)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = lm.module

        def forward(self, input_ids: Any) -> Any:
            return lm.forward(self.model, input_ids, cache, last_only)

    return Step().eval()


def count_step(lm: CausalLM, batch: int, new_tokens: int, cache: Any, last_only: bool = True) -> CostReport:
    """Count one forward over ``new_tokens`` positions per sequence after what ``cache`` holds (meta)."""
    import torch

    from modelcost.analysis.torch_counter import analyze_module

    ids = torch.empty(batch, new_tokens, dtype=torch.long, device="meta")
    return analyze_module(_step_module(lm, cache, last_only), [ids], name=lm.name)


def weights_read_bytes(module: Any) -> int:
    """Parameter bytes a forward reads: all of them, except input-embedding tables (gathered row by row)
    unless a Linear shares the table (a tied LM head reads all of it)."""
    import torch

    linear = {id(m.weight) for m in module.modules() if isinstance(m, torch.nn.Linear)}
    gathered = {id(m.weight) for m in module.modules() if isinstance(m, torch.nn.Embedding)} - linear
    seen: set[int] = set()
    total = 0
    for p in module.parameters():
        if id(p) not in seen and id(p) not in gathered:
            total += p.numel() * p.element_size()
        seen.add(id(p))
    return total


def _embedding_row_bytes(module: Any) -> int:
    import torch

    return sum(m.weight.shape[1] * m.weight.element_size() for m in module.modules()
               if isinstance(m, torch.nn.Embedding))


def analyze_llm(lm: CausalLM, prompt_lens: list[int], gen_lens: list[int], batch_sizes: list[int],
                kv_dtype: str | None = None) -> LlmReport:
    """Static cost of every (batch, prompt, gen) point; weights and KV sizes for the model in its dtype."""
    dtype = str(next(lm.module.parameters()).dtype).removeprefix("torch.")
    short = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}.get(dtype, dtype)
    kv_dtype = kv_dtype or short
    if kv_dtype not in KV_BYTES:
        raise ValueError(f"--kv-dtype {kv_dtype}: choose one of {', '.join(KV_BYTES)}")
    params = {id(p): p for p in lm.module.parameters()}.values()
    by_dtype: dict[str, int] = {}
    for p in params:
        key = str(p.dtype).removeprefix("torch.")
        by_dtype[key] = by_dtype.get(key, 0) + p.numel() * p.element_size()
    report = LlmReport(lm.name, lm.source, short, sum(p.numel() for p in params), sum(by_dtype.values()),
                       by_dtype, weights_read_bytes(lm.module), [], notes=list(lm.notes) + [CAUSAL_NOTE])
    if kv_dtype in ("fp8", "int8"):
        report.notes.append(f"KV cache in {kv_dtype}: one byte per element; quantisation scales are not counted")
    for b in batch_sizes:
        for p in prompt_lens:
            for g in gen_lens:
                report.points.append(_point(lm, report, b, p, g, kv_dtype))
    return report


def _point(lm: CausalLM, report: LlmReport, batch: int, prompt: int, gen: int, kv_dtype: str) -> GenerationPoint:
    cache = lm.new_cache()
    pre = count_step(lm, batch, prompt, cache, last_only=True)
    _merge(report, pre, "prefill")
    elements = sum(t.numel() for t in cache_tensors(cache))
    if elements % (batch * prompt):
        report.problems.append(f"the KV cache after a prefill of {batch}x{prompt} holds {elements} elements, "
                               "not a whole number per token (sliding window or a fixed-size cache?)")
    per_token_elems = elements // (batch * prompt)
    kv_token = per_token_elems * KV_BYTES[kv_dtype]
    final_len = prompt + gen - 1
    kv = KvCache(kv_dtype, per_token_elems, kv_token, kv_token * final_len, kv_token * final_len * batch)
    read = report.weights_read_bytes + batch * _embedding_row_bytes(lm.module)
    pre_bytes = read + batch * prompt * kv_token
    logits = "last" if lm.logits_to_keep else "all"
    prefill = PrefillCost(batch * prompt, pre.compute.macs, pre.compute.flops, pre_bytes,
                          pre.compute.flops / pre_bytes, logits, pre.memory.peak_activation_bytes)
    decode = _decode(lm, report, cache, batch, prompt, gen, kv_token, read)
    peak = report.weights_bytes + kv_token * (prompt + gen) * batch + pre.memory.peak_activation_bytes
    return GenerationPoint(batch, prompt, gen, kv, prefill, decode, peak)


def _decode(lm: CausalLM, report: LlmReport, template: Any, batch: int, prompt: int, gen: int, kv_token: int,
            read: int) -> DecodeCost:
    steps = gen - 1
    if steps <= 0:
        return DecodeCost(0, [], 0, 0, 0, 0)
    first, last = prompt + 1, prompt + steps
    counted: dict[int, DecodeTokenCost] = {}
    for ctx in sorted({first, last, (first + last) // 2} if steps >= 3 else {first, last}):
        cost = count_step(lm, batch, 1, cache_like(lm, template, ctx - 1))
        _merge(report, cost, "decode")
        nbytes = read + batch * kv_token * ctx
        counted[ctx] = DecodeTokenCost(ctx - prompt + 1, ctx, cost.compute.macs, cost.compute.flops, nbytes,
                                       cost.compute.flops / nbytes)
    a, z = counted[first], counted[last]
    span = last - first
    mac_slope = (z.macs - a.macs) // span if span else 0
    flop_slope = (z.flops - a.flops) // span if span else 0
    for ctx, c in counted.items():
        if (c.macs, c.flops) != (a.macs + mac_slope * (ctx - first), a.flops + flop_slope * (ctx - first)):
            report.problems.append(f"decode cost is not linear in context length (step at {ctx} positions); "
                                   "the totals interpolate between the first and last steps")
    series = steps * (steps - 1) // 2  # sum of (ctx - first) over the steps
    macs_total = steps * a.macs + mac_slope * series
    flops_total = steps * a.flops + flop_slope * series
    bytes_total = steps * a.bytes + batch * kv_token * series
    return DecodeCost(steps, [counted[k] for k in sorted(counted)], macs_total, flops_total, bytes_total, mac_slope)


def _merge(report: LlmReport, cost: CostReport, phase: str) -> None:
    merge_assumptions(report.assumptions, cost.assumptions)
    for op, n in cost.compute.uncounted_ops.items():
        report.uncounted[op] = max(report.uncounted.get(op, 0), n)
    for problem in cost.problems:
        text = f"{phase}: {problem}"
        if text not in report.problems:
            report.problems.append(text)

