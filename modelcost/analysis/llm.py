"""What generating text costs, counted on the meta device (conventions in ``modelcost.core.llm``).

Nothing here is a formula of config fields: the causal LM runs for real on meta tensors through the torch
counter (``analysis.torch_counter``) - a prefill forward over (B, P) that fills a KV cache, then single-token
decode steps over a cache of ``context_len - 1`` positions - so every op the model runs is counted by the same
registry as ``modelcost analyze``. The KV cache per token is the size of the cache tensors the prefill made.

Decode steps are counted at the first context length (P + 1), the last (P + G - 1), every window edge between
them (``analysis.llm_window``: a layer with a sliding window of W reads min(L, W) keys, so cost is linear in
the context length L between edges) and the middle one when there are three or more steps; the total over all
G - 1 steps is the exact sum of that piecewise-linear series (``llm_window.series_total``). The middle count
checks the linearity: a cost that is not piecewise linear is reported as a problem. The KV cache holds
min(L, W) positions per windowed layer, and prefill attention is counted per layer within its window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelcost.analysis import layer_repeat, llm_moe
from modelcost.analysis import llm_window as win
from modelcost.analysis.layer_repeat import LayerPlan, LayersDiffer
from modelcost.analysis.llm_mla import add_absorbed, mla_shape
from modelcost.core.assumptions import merge_assumptions
from modelcost.core.errors import ModelcostError
from modelcost.core.llm import DecodeCost, DecodeTokenCost, GenerationPoint, KvCache, LlmReport, PrefillCost
from modelcost.core.types import CostReport
from modelcost.loaders.llm_loader import CausalLM, cache_like

KV_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
CAUSAL_NOTE = {
    "full": ("prefill attention is counted over every query/key pair of each layer's window, P x min(P, W) "
             "(P x P for full attention: the counter's convention for is_causal); a causal kernel skips about "
             "half of them (--attention causal counts only those)"),
    "causal": ("prefill attention is counted over the causal query/key pairs only (--attention causal): "
               "sum over i = 1..P of min(i, W) per head and layer, P (P + 1) / 2 for full attention"),
}


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


def count_step(lm: CausalLM, batch: int, new_tokens: int, make_cache: Callable[[], Any], last_only: bool = True,
               layers: LayerPlan | None = None) -> tuple[CostReport, Any]:
    """Count one forward over ``new_tokens`` positions per sequence after what the cache ``make_cache()`` holds
    (meta): the count and the cache it extended. ``layers``: run the first decoder layers and repeat them for
    the others (``layer_repeat``); where they cannot stand for them, every layer is counted and the plan's
    ``refused`` says why (the later counts then run every layer too)."""
    import torch

    from modelcost.analysis.torch_counter import analyze_module

    ids = torch.empty(batch, new_tokens, dtype=torch.long, device="meta")
    if layers is not None and layers.refused is None:
        cache, counted = make_cache(), layers.counted
        try:
            report = analyze_module(_step_module(lm, cache, last_only), [ids], name=lm.name, repeat=layers)
        except LayersDiffer as exc:
            layers.refused = str(exc)
        else:
            layers.pad_cache(cache, counted)
            return report, cache
    cache = make_cache()
    return analyze_module(_step_module(lm, cache, last_only), [ids], name=lm.name), cache


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


def _hidden_state_bytes(module: Any) -> int:
    """Bytes of one position's hidden state: a row of the input embedding (the first Embedding without one)."""
    import torch

    get = getattr(module, "get_input_embeddings", None)
    emb = get() if callable(get) else None
    if not isinstance(emb, torch.nn.Embedding):
        emb = next((m for m in module.modules() if isinstance(m, torch.nn.Embedding)), None)
    return emb.weight.shape[1] * emb.weight.element_size() if emb is not None else 0


def _embedding_row_bytes(module: Any) -> int:
    import torch

    return sum(m.weight.shape[1] * m.weight.element_size() for m in module.modules()
               if isinstance(m, torch.nn.Embedding))


def analyze_llm(lm: CausalLM, prompt_lens: list[int], gen_lens: list[int], batch_sizes: list[int],
                kv_dtype: str | None = None, attention: str = "full", routing: str | None = None,
                repeat_layers: bool = True,
                layer_counts: dict[tuple[int, int, int], tuple[CostReport, CostReport | None]] | None = None,
                ) -> LlmReport:
    """Static cost of every (batch, prompt, gen) point; weights and KV sizes for the model in its dtype.
    ``attention``: which prefill query/key pairs are counted ("full" | "causal", see CAUSAL_NOTE); ``routing``
    (``--routing``): the expert distribution a mixture of experts' reads assume (``llm_moe``);
    ``repeat_layers``: count one decoder layer of each kind and repeat it for the others where they are
    provably alike (``layer_repeat``; the same figures, in a fraction of the time), else every layer.
    ``layer_counts``, when given, receives the per-layer counts of each point's prefill and first decode step,
    keyed by (batch, prompt, gen): what the latency predictor (analysis/predict_llm.py) needs and the report
    does not keep."""
    if attention not in CAUSAL_NOTE:
        raise ValueError(f"--attention {attention}: choose one of {', '.join(CAUSAL_NOTE)}")
    lm.check_lengths(prompt_lens, gen_lens, batch_sizes)
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
                       by_dtype, weights_read_bytes(lm.module), [], attention=attention,
                       attn_implementation=lm.attn_implementation, hidden_state_bytes=_hidden_state_bytes(lm.module),
                       notes=list(lm.notes) + [CAUSAL_NOTE[attention]], config_defaults=dict(lm.config_defaults),
                       mla=mla_shape(lm.module))
    if lm.config is not None and (chunked := win.chunked_layers(lm.config)):
        report.notes.append(f"{chunked} layers of chunked attention are counted as a sliding window of the chunk: "
                            "their cache is right, their attention an upper bound (a chunk's queries see fewer keys)")
    report.moe = llm_moe.moe_spec(lm.module, lm.config, llm_moe.parse_routing(routing), report.notes)
    report.params_active = llm_moe.active_params(report.moe, report.params)
    report.notes += llm_moe.moe_notes(report.moe)
    if kv_dtype in ("fp8", "int8"):
        report.notes.append(f"KV cache in {kv_dtype}: one byte per element; quantisation scales are not counted")
    with llm_moe.countable_experts(lm.module, report.moe):
        layers = layer_repeat.plan(lm.module, lm.new_cache(), lm.config, win.STEP_SCOPE) if repeat_layers else None
        for b in batch_sizes:
            for p in prompt_lens:
                for g in gen_lens:
                    report.points.append(_point(lm, report, b, p, g, kv_dtype, layers, layer_counts))
    if layers is not None and layers.refused is None:
        report.repeated_layers = layers.summary()
        report.notes.append(layers.note())
    elif layers is not None:
        report.notes.append(f"every decoder layer counted: {layers.refused}")
    return report


def _point(lm: CausalLM, report: LlmReport, batch: int, prompt: int, gen: int, kv_dtype: str,
           layers: LayerPlan | None,
           layer_counts: dict[tuple[int, int, int], tuple[CostReport, CostReport | None]] | None = None,
           ) -> GenerationPoint:
    pre, cache = count_step(lm, batch, prompt, lm.new_cache, True, layers)
    _merge(report, pre, "prefill")  # a prefill that failed on meta stops here: no cache to decode from
    kv, problems = win.kv_cache(cache, batch, prompt, gen, kv_dtype, KV_BYTES[kv_dtype])
    windows = win.layer_windows(cache)
    fix_macs, fix_flops, fix_problems = win.prefill_fix(
        lm.module, pre, lambda other: count_step(lm, batch, other, lm.new_cache, True, layers)[0], prompt,
        windows, report.attention)
    for problem in problems + fix_problems:
        if problem not in report.problems:
            report.problems.append(problem)
    read = report.weights_read_bytes + batch * _embedding_row_bytes(lm.module)
    pre_read, pre_experts = llm_moe.weights_read(report.moe, read, batch * prompt)
    pre_bytes = pre_read + batch * kv.bytes_at(prompt)
    pre_macs, pre_flops = pre.compute.macs + fix_macs, pre.compute.flops + fix_flops
    logits = "last" if lm.logits_to_keep else "all"
    prefill = PrefillCost(batch * prompt, pre_macs, pre_flops, pre_bytes, pre_flops / pre_bytes, logits,
                          pre.memory.peak_activation_bytes, pre_experts)
    dec_read, dec_experts = llm_moe.weights_read(report.moe, read, batch)
    decode, first_step = _decode(lm, report, cache, batch, prompt, gen, kv, windows, dec_read, layers)
    if layer_counts is not None:
        layer_counts[(batch, prompt, gen)] = (pre, first_step)
    decode.experts_read = dec_experts if decode.steps else None
    peak = report.weights_bytes + kv.bytes_at(prompt + gen) * batch + pre.memory.peak_activation_bytes
    point = GenerationPoint(batch, prompt, gen, kv, prefill, decode, peak)
    add_absorbed(report, point, dec_read)  # MLA models: the decode as serving engines run it (analysis.llm_mla)
    return point


def _decode(lm: CausalLM, report: LlmReport, template: Any, batch: int, prompt: int, gen: int, kv: KvCache,
            windows: list[int | None], read: int, layers: LayerPlan | None,
            ) -> tuple[DecodeCost, CostReport | None]:
    """The decode steps' cost, and the per-layer count of the first step (None: no decode step)."""
    steps = gen - 1
    if steps <= 0:
        return DecodeCost(0, [], 0, 0, 0, 0), None
    first, last = prompt + 1, prompt + steps
    nodes, checks = win.decode_contexts(first, last, windows)
    counted: dict[int, DecodeTokenCost] = {}
    first: CostReport | None = None
    for ctx in sorted(nodes + checks):
        cost, _ = count_step(lm, batch, 1, lambda ctx=ctx: cache_like(lm, template, ctx - 1), True, layers)
        first = first or cost
        _merge(report, cost, "decode")
        nbytes = read + batch * kv.bytes_at(ctx)
        counted[ctx] = DecodeTokenCost(ctx - prompt + 1, ctx, cost.compute.macs, cost.compute.flops, nbytes,
                                       cost.compute.flops / nbytes)
    macs = {ctx: counted[ctx].macs for ctx in nodes}
    flops = {ctx: counted[ctx].flops for ctx in nodes}
    for ctx in checks:
        if (counted[ctx].macs, counted[ctx].flops) != (win.interpolate(macs, ctx), win.interpolate(flops, ctx)):
            report.problems.append(f"decode cost is not piecewise linear in context length (step at {ctx} "
                                   "positions); the totals interpolate between the counted steps")
    return DecodeCost(steps, [counted[k] for k in sorted(counted)], win.series_total(macs), win.series_total(flops),
                      win.series_total({ctx: counted[ctx].bytes for ctx in nodes}), win.last_slope(macs)), first


def _merge(report: LlmReport, cost: CostReport, phase: str) -> None:
    """Fold one counted forward into ``report``. A forward that failed on meta (the counter's problems) stops the
    analysis with its reason: the steps after it would read the cache it left half made, and its counts are
    only what ran before the failure."""
    if cost.problems:
        raise ModelcostError(f"{phase}: {cost.problems[0]}")
    merge_assumptions(report.assumptions, cost.assumptions)
    for op, n in cost.compute.uncounted_ops.items():
        report.uncounted[op] = max(report.uncounted.get(op, 0), n)
    if not cost.compute.complete:
        report.complete = False
        for reason in cost.compute.incomplete_reasons:
            if f"{phase}: {reason}" not in report.incomplete_reasons:
                report.incomplete_reasons.append(f"{phase}: {reason}")
