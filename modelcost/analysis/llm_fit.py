"""Whether a generation point fits the target GPU, how many GPUs it needs, and what splitting it over
``tp`` GPUs (tensor parallelism, ``modelcost llm --tp N``) costs in all-reduces.

Tensor parallelism as Megatron-LM runs a decoder: every weight matrix is split over the tp GPUs (column- then
row-parallel linears, vocab-parallel embedding and head), and so are the attention heads with their KV cache;
a layer with fewer KV heads than GPUs keeps each head on tp / heads GPUs (ceil(heads / tp) heads per GPU). Per
GPU that is weights / tp + its KV heads' share of the cache; FLOPs and bytes split tp ways (their bound uses
tp x the peaks: KV heads held twice are not added, so the bound stays a lower one). Norms and the few
replicated vectors are left out.

Each decoder layer ends its attention and its MLP with an all-reduce of the hidden states: 2 all-reduces of
tokens x ``hidden_state_bytes`` per layer. A ring all-reduce of S bytes sends and receives 2 (tp - 1) / tp x S
per GPU, so it takes at least 2 (tp - 1) / tp x S / (link bandwidth one way); datasheets give the link's
bandwidth both ways together (H100 SXM NVLink 900 GB/s = 450 GB/s each way). A layer cannot start before the
previous one's all-reduce ends, so their time adds to the compute / memory bound instead of overlapping it.
The LM head's logit gather (B x vocab elements per step) is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from modelcost.core.errors import ModelcostError
from modelcost.core.llm import KvCache
from modelcost.core.types import GpuSpec
from modelcost.hardware.specs import find_sku

ALLREDUCES_PER_LAYER = 2  # after attention (o_proj) and after the MLP (down_proj)


@dataclass(frozen=True)
class TpSplit:
    """How one point is split: over ``tp`` GPUs joined by ``link`` (its bandwidth both ways, GB/s)."""

    tp: int = 1
    link: str | None = None
    link_gbps: float | None = None
    allreduce_bytes_per_token: int = 0  # all-reduce message bytes per token, all layers: 2 x layers x hidden

    def allreduce_ms(self, tokens: int) -> float:
        """Ring all-reduces of ``tokens`` positions through every layer at the link's one-way peak."""
        if self.tp <= 1 or not self.link_gbps:
            return 0.0
        sent = 2 * (self.tp - 1) / self.tp * tokens * self.allreduce_bytes_per_token
        return sent / (self.link_gbps / 2 * 1e9) * 1e3


def tp_split(gpu: GpuSpec, tp: int, layers: int, hidden_state_bytes: int) -> TpSplit:
    """The split of ``tp`` GPUs like ``gpu``; the link comes from the GPU table (``hardware.specs``)."""
    if tp < 1:
        raise ModelcostError(f"{{tp}} {tp}: expected a number of GPUs >= 1", fields="tp")
    if tp == 1:
        return TpSplit()
    sku = find_sku(gpu.name)
    if sku is None or not sku.link_gbps:
        raise ModelcostError(f"{{tp}} {tp}: no GPU-to-GPU link bandwidth known for {gpu.name} (the GPU table has "
                             "none); pass {target_gpu} with a GPU of the table", fields=("tp", "target_gpu"))
    return TpSplit(tp, sku.link, sku.link_gbps, ALLREDUCES_PER_LAYER * layers * hidden_state_bytes)


def kv_bytes_per_gpu(kv: KvCache, positions: int, tp: int) -> int:
    """One sequence's cache at ``positions`` positions on one of ``tp`` GPUs: each layer group's KV heads
    split tp ways, ceil(heads / tp) of them per GPU."""
    if not kv.layer_groups:
        return math.ceil(kv.bytes_at(positions) / tp)
    total = 0
    for g in kv.layer_groups:
        kept = positions if g.window is None else min(positions, g.window)
        total += g.bytes_per_token * kept * math.ceil(g.kv_heads / tp) // g.kv_heads
    return total


def memory_per_gpu(weights_bytes: int, kv: KvCache, positions: int, tp: int, batch: int = 1) -> int:
    return math.ceil(weights_bytes / tp) + batch * kv_bytes_per_gpu(kv, positions, tp)


def gpus_needed(weights_bytes: int, kv: KvCache, positions: int, memory_bytes: int) -> int | None:
    """The fewest GPUs of ``memory_bytes`` whose shares hold the weights and one sequence's cache at
    ``positions``, as a tensor-parallel size engines take: a power of two (heads split evenly). None when
    none up to 4096 does (one KV head's cache alone outgrows a GPU)."""
    for n in (1 << k for k in range(13)):
        if memory_per_gpu(weights_bytes, kv, positions, n) <= memory_bytes:
            return n
    return None


def capacity(weights_bytes: int, kv: KvCache, positions: int, memory_bytes: int, tp: int
             ) -> tuple[int, int | None]:
    """(max batch, max cache tokens) beside the weights on each of ``tp`` GPUs: sequences of ``positions``
    whose cache fits, and cache positions at the growth per position below every window (0, 0: the weights
    alone do not fit)."""
    free = memory_bytes - math.ceil(weights_bytes / tp)
    per_seq = kv_bytes_per_gpu(kv, positions, tp)
    per_token = math.ceil(kv.bytes_per_token / tp)
    if free <= 0:
        return 0, 0
    return (free // per_seq if per_seq else 0), (free // per_token if per_token else None)


def tp_notes(kv: KvCache, tp: int) -> list[str]:
    """What a tensor-parallel size does not split evenly."""
    uneven = sorted({g.kv_heads for g in kv.layer_groups if g.kv_heads % tp and tp % g.kv_heads})
    if tp <= 1 or not uneven:
        return []
    return [f"--tp {tp}: {', '.join(map(str, uneven))} KV heads do not split evenly over {tp} GPUs (engines "
            "refuse such a split); the bounds assume ceil(heads / tp) heads per GPU"]
