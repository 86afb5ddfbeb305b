"""Sliding-window and local/global attention in the generation count (``modelcost llm``).

Which layers have a window is read from the KV cache the model itself makes (transformers builds a
``DynamicSlidingWindowLayer`` with its ``sliding_window`` for Mistral, Phi-3 and Gemma-2/3's local layers; a
zoo cache is a list of full layers), never guessed from config names. Layer l has a window of W_l positions
(W_l = infinity for full attention); query i attends keys i - W_l + 1 .. i, the new token included.

* **KV cache.** At L positions a sequence's cache holds sum_l e_l min(L, W_l) elements (e_l: K and V elements
  of one position in layer l): full layers grow by e_l per position forever, windowed ones until W_l, then stay.
  transformers' dynamic cache keeps W - 1 positions between steps and appends the new one, so a step reads W;
  modelcost counts W (what a step reads, and what a paged cache holds).
* **Decode.** A step at context L reads min(L, W_l) keys in layer l, so its MACs, FLOPs and KV bytes are
  c(L) = a + sum_l s_l min(L, W_l): linear in L between consecutive window edges, with a kink at each W_l.
  The counter runs the model with the cache transformers keeps, so counted steps already read min(L, W_l).
  ``decode_contexts`` picks the steps to count (the ends and every window edge between them) and
  ``series_total`` sums all steps exactly (derivation there).
* **Prefill.** The counter sees what transformers runs: every layer's attention over all P x P pairs (the
  window is a mask). ``prefill_fix`` replaces each layer's pair cost by the pairs its convention counts
  (``prefill_pairs``); the pair cost of a layer is found by counting the prefill at two more lengths
  (``twin_prompts``), no op names needed.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from modelcost.core.llm import KvCache, KvLayerGroup
from modelcost.core.types import CostReport

ATTENTION = ("full", "causal")
STEP_SCOPE = "model."  # the counted Step module holds the LM as ``self.model`` (analysis.llm._step_module)


def cache_layers(cache: Any) -> list[tuple[list[Any], int | None]]:
    """Per decoder layer: its cache tensors (K, V; none for a layer that keeps no cache) and its window."""
    if isinstance(cache, list):  # zoo: [(k, v), ...], every layer full attention
        return [([t for t in kv if t is not None], None) for kv in cache]
    layers = getattr(cache, "layers", None)
    if layers is None:  # older transformers: key_cache / value_cache lists, no windows
        return [([k, v], None) for k, v in zip(getattr(cache, "key_cache", []), getattr(cache, "value_cache", []),
                                                strict=False)]
    out = []
    for layer in layers:
        tensors = [t for t in (getattr(layer, "keys", None), getattr(layer, "values", None))
                   if t is not None and hasattr(t, "shape") and t.numel()]
        window = getattr(layer, "sliding_window", None) if getattr(layer, "is_sliding", False) else None
        out.append((tensors, int(window) if window else None))
    return out


def layer_windows(cache: Any) -> list[int | None]:
    return [window for _, window in cache_layers(cache)]


def kv_cache(cache: Any, batch: int, prompt: int, gen: int, kv_dtype: str, element_bytes: int
             ) -> tuple[KvCache, list[str]]:
    """The KV cache of one point from the cache a prefill of (batch, prompt) made: per-position elements of
    each layer (numel / (B x positions it holds)), grouped by window; sizes at P and at P + G - 1 positions."""
    groups: dict[tuple[int | None, int], list[int]] = {}  # (window, kv heads) -> [layers, elements/position]
    problems = []
    for i, (tensors, window) in enumerate(cache_layers(cache)):
        if not tensors:
            continue
        positions = tensors[0].shape[2]
        elements = sum(t.numel() for t in tensors)
        if not positions or elements % (batch * positions):
            problems.append(f"the KV cache of layer {i} after a prefill of {batch}x{prompt} holds {elements} "
                            f"elements over {positions} positions: not a whole number per position")
            continue
        entry = groups.setdefault((window, tensors[0].shape[1]), [0, 0])
        entry[0] += 1
        entry[1] += elements // (batch * positions)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0] is not None, kv[0][0] or 0))
    layer_groups = [KvLayerGroup("full" if w is None else "sliding", w, n, heads, e * element_bytes)
                    for (w, heads), (n, e) in ordered]
    elements = sum(e for _, e in groups.values())
    kv = KvCache(kv_dtype, elements, elements * element_bytes, 0, 0, layer_groups=layer_groups)
    kv.bytes_at_prompt = kv.bytes_at(prompt)
    kv.bytes_per_sequence = kv.bytes_at(prompt + gen - 1)
    kv.bytes_total = kv.bytes_per_sequence * batch
    return kv, problems


def decode_contexts(first: int, last: int, windows: list[int | None]) -> tuple[list[int], list[int]]:
    """(nodes, checks): the decode contexts to count. Nodes are the first and last step and every window edge
    strictly between them (cost is linear between nodes); the middle step, when not a node, checks that."""
    nodes = sorted({first, last} | {w for w in windows if w is not None and first < w < last})
    middle = (first + last) // 2
    checks = [middle] if last - first >= 2 and middle not in nodes else []
    return nodes, checks


def interpolate(values: dict[int, int], ctx: int) -> Fraction:
    """The piecewise-linear value at ``ctx`` through the nodes ``values`` (context -> value)."""
    nodes = sorted(values)
    for a, z in zip(nodes, nodes[1:], strict=False):
        if a <= ctx <= z:
            return values[a] + Fraction(values[z] - values[a], z - a) * (ctx - a)
    return Fraction(values[nodes[0]])


def series_total(values: dict[int, int]) -> int:
    """Sum of c(L) over every step L = first .. last, c linear between consecutive nodes n_0 < ... < n_k
    (the keys of ``values``; n_0 = first, n_k = last).

    On segment j, c(L) = c(n_j) + s_j (L - n_j) with s_j = (c(n_{j+1}) - c(n_j)) / m_j, m_j = n_{j+1} - n_j.
    Its steps without the right end, L = n_j .. n_{j+1} - 1, sum to
        sum_{t=0}^{m_j - 1} (c(n_j) + s_j t) = m_j c(n_j) + s_j m_j (m_j - 1) / 2,
    and the right end of the last segment adds c(n_k). With one segment this is the arithmetic series
    steps x c(first) + slope x steps (steps - 1) / 2 of a linear cost; with windows the series splits at each
    W_l, where min(L, W_l) stops growing."""
    nodes = sorted(values)
    total = Fraction(values[nodes[-1]])
    for a, z in zip(nodes, nodes[1:], strict=False):
        m = z - a
        total += m * values[a] + Fraction(values[z] - values[a], m) * m * (m - 1) / 2
    return round(total)


def last_slope(values: dict[int, int]) -> int:
    """d(value)/d(context) on the last segment (0 with a single node)."""
    nodes = sorted(values)
    if len(nodes) < 2:
        return 0
    a, z = nodes[-2], nodes[-1]
    return (values[z] - values[a]) // (z - a)


def prefill_pairs(prompt: int, window: int | None, attention: str) -> int:
    """Query/key pairs one head of one layer computes in a prefill of P = ``prompt`` positions.

    * ``full``: every query against every key of its window, as a dense kernel computes them: P x min(P, W)
      (P x P for a full layer: the counter's convention for ``is_causal``).
    * ``causal``: query i (1-based) sees keys max(1, i - W + 1) .. i, min(i, W) of them:
      sum_{i=1..P} min(i, W) = P (P + 1) / 2 when P <= W (the lower triangle), else
      W (W + 1) / 2 + (P - W) W (the first W queries see 1 .. W keys, each later one W)."""
    w = prompt if window is None else min(window, prompt)
    if attention == "full":
        return prompt * w
    if attention != "causal":
        raise ValueError(f"--attention {attention}: choose one of {', '.join(ATTENTION)}")
    return w * (w + 1) // 2 + (prompt - w) * w


def needs_fix(prompt: int, windows: list[int | None], attention: str) -> bool:
    """Whether any layer's counted P x P pairs differ from the pairs ``attention`` counts."""
    return any(prefill_pairs(prompt, w, attention) != prompt * prompt for w in windows)


def twin_prompts(prompt: int, windows: list[int | None]) -> tuple[int, int] | None:
    """Two more prompt lengths whose counted prefill runs like P's: each layer costs a + b P + q P^2 on all
    three (a: per-call work such as Gemma's 1 + weight in its norms; q: one query/key pair, every head and
    batch row). transformers changes how it runs attention at two places (where q can change, by the mask's
    one FLOP per score): at P = 1 (a single query) and, in a layer of window W, at P = W (from there its
    sliding mask can no longer be skipped). The twins stay on P's side of each."""
    edges = {1} | {w - 1 for w in windows if w is not None}
    same = [other for d in (1, 2, 3, 4) for other in (prompt + d, prompt - d)
            if other >= 1 and not any(min(prompt, other) <= e < max(prompt, other) for e in edges)]
    return (same[0], same[1]) if len(same) >= 2 else None


def pair_cost(points: dict[int, int]) -> Fraction:
    """q of c(P) = a + b P + q P^2 through three points: the second divided difference
    ((c2 - c1) / (x2 - x1) - (c1 - c0) / (x1 - x0)) / (x2 - x0)."""
    (x0, c0), (x1, c1), (x2, c2) = sorted(points.items())
    return (Fraction(c2 - c1, x2 - x1) - Fraction(c1 - c0, x1 - x0)) / (x2 - x0)


def decoder_prefixes(module: Any, layers: int) -> list[str] | None:
    """Names (in the counted Step module) of the ``layers`` decoder layers: the outermost ModuleList that long."""
    import torch

    lists = [name for name, m in module.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) == layers]
    if not lists:
        return None
    path = min(lists, key=lambda name: name.count("."))
    return [f"{STEP_SCOPE}{path}.{i}" for i in range(layers)]


def _layer_sum(report: CostReport, prefix: str, attr: str) -> int:
    return sum(getattr(c, attr) for c in report.layers if c.name == prefix or c.name.startswith(prefix + "."))


def prefill_fix(module: Any, counted: CostReport, count: Callable[[int], CostReport], prompt: int,
                windows: list[int | None], attention: str) -> tuple[int, int, list[str]]:
    """(MACs, FLOPs) to add to the counted prefill so that each layer's attention covers the pairs
    ``attention`` counts within its window, and the problems met (then nothing is changed).

    Layer l costs c_l(P) = a_l + b_l P + q_l P^2 as counted: its attention is q_l P^2. Counting the prefill at
    two more lengths (``twin_prompts``) gives q_l (``pair_cost``); the layer's attention becomes
    q_l x pairs_l(P) (``prefill_pairs``), so the count changes by q_l (pairs_l(P) - P^2)."""
    if not needs_fix(prompt, windows, attention):
        return 0, 0, []
    prefixes = decoder_prefixes(module, len(windows))
    twins = twin_prompts(prompt, windows)
    if prefixes is None or twins is None:
        why = "which counted ops belong to which decoder layer is unknown" if prefixes is None else \
            f"no two other prompt lengths run like P = {prompt}"
        return 0, 0, [f"prefill attention left at all P x P pairs: {why}"]
    reports = {prompt: counted} | {other: count(other) for other in twins}
    delta = {"macs": Fraction(0), "flops": Fraction(0)}
    for i, (prefix, window) in enumerate(zip(prefixes, windows, strict=True)):
        extra = prefill_pairs(prompt, window, attention) - prompt * prompt
        for attr in delta:
            points = {p: _layer_sum(r, prefix, attr) for p, r in reports.items()}
            q = pair_cost(points)
            if q.denominator != 1 or q < 0:
                return 0, 0, [f"prefill attention left at all P x P pairs: decoder layer {i}'s {attr} are not "
                              f"a + b P + q P^2 in the prompt length P ({points})"]
            delta[attr] += q * extra
    return int(delta["macs"]), int(delta["flops"]), []


def chunked_layers(config: Any) -> int:
    """Layers of chunked attention (Llama 4's ``attention_chunk_size``): their cache is a window of the chunk."""
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    return sum(1 for t in (getattr(text, "layer_types", None) or []) if t == "chunked_attention")
