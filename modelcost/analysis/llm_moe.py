"""Mixtures of experts in ``modelcost llm``: which parameters are routed experts, how many of them a token runs
through, and how many a forward reads (conventions in ``core.llm``; the formulas in docs/COUNTING.md).

MACs need nothing from here: every token visits exactly k experts, so a MoE layer's routed MACs are
T x k x (one expert's MACs) whatever the routing, and the counter gets that from the grouped GEMMs
(``torch_ops_moe``). transformers runs its experts through one of several implementations; the count forces
``grouped_mm`` (``countable_experts``): the eager one loops over the experts that ``nonzero`` finds, which meta
tensors cannot answer, and ``batched_mm`` gathers a weight copy per token (the activations would be wrong).

Bytes do depend on the routing: a forward over T tokens reads only the distinct experts its tokens visit. With
p_e the chance that one token visits expert e (sum k), a layer reads sum_e 1 - (1 - p_e)^T of them in
expectation; uniform routing (p_e = k / E) gives E (1 - (1 - k/E)^T). ``--routing`` gives the shares another
distribution: zipf:S or a file of measured shares; p_e = k x share_e, capped at 1 (a token visits an expert
once), the excess spread over the others in proportion.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.llm import ExpertReads, MoeSpec, Routing

IMPLEMENTATION = "grouped_mm"  # the transformers experts implementation the counter counts exactly on meta
_TOP_K_NAMES = ("top_k", "num_experts_per_tok", "moe_top_k", "num_experts_per_token")


@dataclass(frozen=True)
class _ExpertLayer:
    name: str
    experts: int
    top_k: int | None
    expert_params: int
    expert_bytes: int


def parse_routing(text: str | None) -> Routing:
    """``--routing uniform | zipf:S | FILE.json`` (a list of E shares, or one such list per MoE layer)."""
    if text is None or text == "uniform":
        return Routing("uniform")
    if text.startswith("zipf:"):
        try:
            s = float(text.removeprefix("zipf:"))
        except ValueError:
            s = -1.0
        if not math.isfinite(s) or s < 0:
            raise ModelcostError(f"{{routing}} {text}: expected zipf:S with S a number >= 0, e.g. zipf:1.2",
                                 fields="routing")
        return Routing("zipf", zipf_exponent=s)
    if text.endswith(".json"):
        return Routing("file", source=text, shares=_read_shares(text))
    raise ModelcostError(f"{{routing}} {text}: choose uniform, zipf:S (e.g. zipf:1.2) or a .json file of "
                         "measured shares per expert", fields="routing")


def _read_shares(path: str) -> list[list[float]]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ModelcostError(f"{{routing}} {path}: not a readable JSON file ({exc.__class__.__name__}: {exc})",
                             fields="routing") from exc
    rows = data if data and isinstance(data, list) and all(isinstance(r, list) for r in data) else [data]
    out = []
    for i, row in enumerate(rows):
        where = f"--routing {path}" + (f", list {i}" if len(rows) > 1 else "")
        if not isinstance(row, list) or not row or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0 for v in row):
            raise ModelcostError(f"{where}: expected a list of token counts or shares per expert (numbers >= 0), "
                                 "or one such list per MoE layer")
        total = float(sum(row))
        if total <= 0:
            raise ModelcostError(f"{where}: every share is 0")
        out.append([v / total for v in row])
    return out


def _visit_chances(shares: list[float], k: int) -> list[float]:
    """p_e = k x share_e capped at 1 (a token visits an expert once), the excess spread in proportion (at least
    k shares are above 0: ``_check_routing``)."""
    capped: set[int] = set()
    while True:
        free = sum(s for i, s in enumerate(shares) if i not in capped)
        scale = (k - len(capped)) / free
        over = {i for i, s in enumerate(shares) if i not in capped and s * scale > 1}
        if not over:
            return [1.0 if i in capped else s * scale for i, s in enumerate(shares)]
        capped |= over


def expected_experts(spec: MoeSpec, tokens: int) -> list[float]:
    """Expected distinct routed experts read by a forward over ``tokens`` tokens, per MoE layer."""
    e, k, r = spec.experts, spec.top_k, spec.routing
    if r.kind == "uniform":
        return [e * (1 - (1 - k / e) ** tokens)] * spec.layers
    if r.kind == "zipf":
        rows = [[1 / (rank ** (r.zipf_exponent or 0.0)) for rank in range(1, e + 1)]]
    else:
        rows = r.shares
    per_row = [sum(1 - (1 - p) ** tokens for p in _visit_chances(row, k)) for row in rows]
    return per_row * spec.layers if len(per_row) == 1 else per_row


def weights_read(spec: MoeSpec | None, read_bytes: int, tokens: int) -> tuple[int, ExpertReads | None]:
    """Weight bytes a forward over ``tokens`` tokens reads: ``read_bytes`` (every weight but gathered tables)
    less the routed experts it does not visit. A dense model (``spec`` None) reads ``read_bytes``."""
    if spec is None:
        return read_bytes, None
    per_layer = expected_experts(spec, tokens)
    routed = round(sum(per_layer) * spec.expert_bytes)
    reads = ExpertReads(tokens, sum(per_layer) / len(per_layer), routed)
    return read_bytes - spec.routed_bytes + routed, reads


def compute_bound_batch(spec: MoeSpec, read_bytes: int, slack_bytes_per_seq: float, dense_batch: int) -> int:
    """Smallest batch B with B x ``slack_bytes_per_seq`` >= W(B), the weight bytes a decode step of B tokens reads
    (the slack: what one sequence's compute time streams beyond its own KV cache). ``dense_batch`` meets it with
    W(B) at its most (every expert), so the answer is at most that; B x slack - W(B) is convex (W(B) is concave),
    so once met it stays met and a bisection finds the first B."""
    low, high = 0, dense_batch  # low: not met (or 0); high: met
    while high - low > 1:
        mid = (low + high) // 2
        if mid * slack_bytes_per_seq >= weights_read(spec, read_bytes, mid)[0]:
            high = mid
        else:
            low = mid
    return high


def routing_label(routing: Routing) -> str:
    if routing.kind == "zipf":
        return f"zipf:{routing.zipf_exponent:g}"
    return f"measured shares from {routing.source}" if routing.kind == "file" else "uniform"


def moe_notes(spec: MoeSpec | None) -> list[str]:
    """What the figures of a mixture of experts assume, said once in the report."""
    if spec is None:
        return []
    how = (f"through transformers' {spec.experts_implementation} experts implementation (set for the count: "
           "the eager loop reads routing values that meta tensors lack)" if spec.experts_implementation
           else "by the model's own code")
    e, k = spec.experts, spec.top_k
    return [f"mixture of experts: {spec.layers} MoE layers of {e} routed experts, {k} per token; the routed experts "
            f"are counted {how}: T tokens x {k} x one expert's MACs, whatever the routing",
            f"weights read by a forward over T tokens: each MoE layer reads only the distinct experts they visit, "
            f"{e} (1 - (1 - {k}/{e})^T) expected under uniform routing; routing assumed: {routing_label(spec.routing)} "
            "(--routing uniform | zipf:S | FILE.json)"]


def active_params(spec: MoeSpec | None, params: int) -> int:
    """Parameters one token runs through: each MoE layer skips E - k of its routed experts."""
    return params if spec is None else params - spec.layers * (spec.experts - spec.top_k) * spec.expert_params


# ---------------------------------------------------------------------------------------------------
# finding the routed experts of a module


def moe_spec(module: Any, config: Any, routing: Routing, notes: list[str]) -> MoeSpec | None:
    """The routed experts of ``module`` (None: a dense model); refuses a ``routing`` that does not fit them."""
    layers = _expert_layers(module, config)
    if not layers:
        if routing.kind != "uniform":
            notes.append("--routing ignored: the model has no routed experts")
        return None
    first = layers[0]
    kinds = {(x.experts, x.top_k, x.expert_params, x.expert_bytes) for x in layers}
    if len(kinds) > 1:
        raise ModelcostError(f"the MoE layers differ ({layers[0].name} and {layers[-1].name}: experts, top-k or "
                             "expert size); modelcost llm counts models with one kind of MoE layer")
    if first.top_k is None:
        raise ModelcostError(f"{first.name}: routed experts, but no top_k / num_experts_per_tok in the model or its "
                             "config says how many each token visits")
    if not 1 <= first.top_k <= first.experts:
        raise ModelcostError(f"{first.name}: top-k {first.top_k} is not between 1 and its {first.experts} experts")
    _check_routing(routing, first.experts, first.top_k, len(layers))
    return MoeSpec(len(layers), first.experts, first.top_k, first.expert_params, first.expert_bytes,
                   len(layers) * first.experts * first.expert_params, len(layers) * first.experts * first.expert_bytes,
                   routing, IMPLEMENTATION if _has_experts_interface(module) else None)


def _check_routing(routing: Routing, experts: int, top_k: int, layers: int) -> None:
    if routing.kind != "file":
        return
    if len(routing.shares) not in (1, layers):
        raise ModelcostError(f"{{routing}} {routing.source}: {len(routing.shares)} lists of shares; give one "
                             f"(for every layer) or one per MoE layer ({layers})", fields="routing")
    for i, row in enumerate(routing.shares):
        if len(row) != experts:
            raise ModelcostError(f"{{routing}} {routing.source}: list {i} has {len(row)} shares; the model has "
                                 f"{experts} routed experts per layer", fields="routing")
        if sum(1 for share in row if share > 0) < top_k:
            raise ModelcostError(f"{{routing}} {routing.source}: list {i} gives a share to fewer experts than the "
                                 f"{top_k} each token visits", fields="routing")


def _expert_layers(module: Any, config: Any) -> list[_ExpertLayer]:
    """One entry per MoE layer: the expert holders (stacked tensors or a ModuleList) under one parent make one
    layer (a model may keep the up and the down projections of its experts in two sibling holders)."""
    import torch

    parents = {id(child): m for m in module.modules() for child in m.children()}
    groups: dict[int, list[tuple[str, Any, int, list[Any]]]] = {}
    for name, m in module.named_modules():
        count, params = _stacked(m) if not isinstance(m, torch.nn.ModuleList) else _listed(name, m)
        if count:
            groups.setdefault(id(parents.get(id(m))), []).append((name, m, count, params))
    found = []
    for holders in groups.values():
        name, first, count, _ = holders[0]
        if any(c != count for _, _, c, _ in holders):  # siblings of different sizes: separate layers
            found += [_layer(n, m, c, ps, parents, config) for n, m, c, ps in holders]
            continue
        found.append(_layer(name, first, count, [p for *_, ps in holders for p in ps], parents, config))
    return found


def _layer(name: str, holder: Any, count: int, params: list[Any], parents: dict[int, Any], config: Any) -> _ExpertLayer:
    nbytes = sum(p.numel() * p.element_size() for p in params)
    return _ExpertLayer(name, count, _top_k(holder, parents.get(id(holder)), config),
                        sum(p.numel() for p in params) // count, nbytes // count)


def _stacked(m: Any) -> tuple[int, list[Any]]:
    """Experts stored as stacked tensors (transformers 5): every own parameter leads with num_experts, one is 3-D."""
    n = getattr(m, "num_experts", None)
    own = list(m.parameters(recurse=False))
    if not isinstance(n, int) or n < 2 or not any(p.dim() == 3 for p in own):
        return 0, []
    return (n, own) if all(p.dim() >= 2 and p.shape[0] == n for p in own) else (0, [])


def _listed(name: str, m: Any) -> tuple[int, list[Any]]:
    """Experts as a ModuleList named ``experts`` of identical modules."""
    children = list(m.children())
    if not name.endswith("experts") or len(children) < 2:
        return 0, []
    shapes = {tuple(tuple(p.shape) for p in c.parameters()) for c in children}
    return (len(children), list(m.parameters())) if len(shapes) == 1 and next(iter(shapes)) else (0, [])


def _top_k(experts: Any, parent: Any, config: Any) -> int | None:
    holders = [experts, parent, *(list(parent.children()) if parent is not None else []), config]
    for holder in holders:
        for attr in _TOP_K_NAMES:
            value = getattr(holder, attr, None) if holder is not None else None
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _has_experts_interface(module: Any) -> bool:
    """A transformers model whose experts dispatch through its experts interface (``set_experts_implementation``)."""
    can = getattr(type(module), "_can_set_experts_implementation", None)
    return hasattr(module, "set_experts_implementation") and can is not None and bool(can())


@contextlib.contextmanager
def countable_experts(module: Any, spec: MoeSpec | None) -> Iterator[None]:
    """While counting, run a transformers MoE's experts through ``spec.experts_implementation`` (restored after)."""
    if spec is None or spec.experts_implementation is None:
        yield
        return
    before = module.get_experts_implementation()
    module.set_experts_implementation(spec.experts_implementation)
    try:
        yield
    finally:
        module.set_experts_implementation(before)
