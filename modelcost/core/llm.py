"""Core types of text generation (``modelcost llm``): what prefill and decode cost, the bounds a GPU puts on
them, and measured generation runs. Standard library only; ``report`` renders these, ``analysis.llm`` and
``bench.generation`` fill them in.

Conventions (written once here, used everywhere):

* generating G tokens after a prompt of P runs one **prefill** forward over the P prompt positions (it yields
  the first new token) and G - 1 **decode** steps; decode step t (t = 2..G) feeds token t - 1 and attends
  ``context_len`` = P + t - 1 key positions, the new one included;
* MACs are multiply-accumulates, FLOPs = 2 per MAC + the documented cost of other ops (the torch counter's);
* bytes of a decode step = every weight read once (input-embedding tables are gathered: only B rows) + the KV
  cache of the batch at ``context_len`` positions; activations are left out (a few MB at decode);
* bounds are lower bounds: time = max(FLOPs / peak FLOP/s, bytes / peak bandwidth), no overlap loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from modelcost.core.assumptions import DataAssumption
from modelcost.core.types import LatencyStats


@dataclass(frozen=True)
class DecodeTokenCost:
    token_index: int  # the generated token this step outputs (2..G)
    context_len: int  # key positions attended, the new token included
    macs: int
    flops: int
    bytes: int  # weights read + KV cache read at context_len (batch included)
    arithmetic_intensity: float  # flops / bytes


@dataclass
class KvCache:
    dtype: str  # fp16 | bf16 | fp8 | int8 | fp32
    elements_per_token: int  # K and V elements one position of one sequence stores, all layers
    bytes_per_token: int
    bytes_per_sequence: int  # at prompt_len + gen_len - 1 positions (what a dynamic cache holds at the end)
    bytes_total: int  # bytes_per_sequence x batch


@dataclass
class PrefillCost:
    tokens: int  # batch x prompt_len
    macs: int
    flops: int
    bytes: int  # weights read + KV cache written
    arithmetic_intensity: float
    logits: str  # "last" (the head runs on the last prompt position) | "all"
    peak_activation_bytes: int  # the counter's peak live activations of this forward (workspace)


@dataclass
class DecodeCost:
    steps: int  # G - 1
    per_token: list[DecodeTokenCost]  # the first and the last step (and the ones counted in between)
    macs_total: int  # over all G - 1 steps
    flops_total: int
    bytes_total: int
    macs_per_context_position: int  # d(macs)/d(context_len): the attention part (batch included)


@dataclass
class LlmBounds:
    gpu: str
    precision: str  # the peak used ("bf16", "fp16", ...)
    peak_tflops: float
    bandwidth_gbps: float
    memory_bytes: int | None
    ttft_ms: float  # max(compute, memory) of the prefill
    ttft_compute_ms: float
    ttft_memory_ms: float
    tpot_ms: float  # mean per decode step over the G - 1 steps
    tpot_first_ms: float
    tpot_last_ms: float
    tokens_per_second: float  # batch x G / (ttft + sum of decode bounds)
    decode_tokens_per_second: float  # batch / tpot
    compute_bound_batch: int | None  # smallest batch whose last decode step is compute-bound; None: never
    max_batch: int | None  # sequences of prompt_len + gen_len that fit with the weights (None: memory unknown)
    max_context_tokens: int | None  # cache positions that fit beside the weights (all sequences together)
    bound_by: dict[str, str] = field(default_factory=dict)  # phase -> "compute" | "memory"


@dataclass
class GenerationPoint:
    batch_size: int
    prompt_len: int
    gen_len: int
    kv_cache: KvCache
    prefill: PrefillCost
    decode: DecodeCost
    predicted_peak_memory_bytes: int  # weights + KV (batch, P + G) + prefill workspace
    bounds: LlmBounds | None = None


@dataclass
class GenerationResult:
    """One measured generation run (greedy, a fixed number of new tokens, EOS ignored)."""

    backend: str  # "hf-eager" | "hf-static-compile" | other engines
    precision: str
    batch_size: int
    prompt_len: int
    gen_len: int
    status: str  # "ok" | "unavailable" | "failed" | "oom"
    reason: str | None = None
    ttft_ms: float | None = None  # median over runs
    tpot_ms: float | None = None  # median inter-token latency over every decode step of every run
    ttft_stats: LatencyStats | None = None
    tpot_stats: LatencyStats | None = None
    e2e_ms: LatencyStats | None = None
    tokens_per_second: float | None = None  # batch x gen_len / median end-to-end time
    peak_memory_bytes: int | None = None  # torch.cuda.max_memory_allocated over the run (weights included)
    predicted_peak_memory_bytes: int | None = None
    bandwidth_utilization: float | None = None  # decode bytes per step / median TPOT / peak bandwidth
    mfu: float | None = None  # prefill FLOPs / median TTFT / peak FLOP/s
    ttft_bound_ratio: float | None = None  # measured / lower bound (>= 1)
    tpot_bound_ratio: float | None = None
    runs: int = 0
    timing: str = ""  # what the figures include
    notes: list[str] = field(default_factory=list)
    unstable: str | None = None  # why the figures do not repeat (the timed runs' TPOT medians disagree); None: they do


@dataclass
class LlmReport:
    model: str
    source: str
    dtype: str  # weights
    params: int
    weights_bytes: int
    weights_bytes_by_dtype: dict[str, int]
    weights_read_bytes: int  # per forward: weights minus gathered embedding tables
    points: list[GenerationPoint]
    benchmarks: list[GenerationResult] = field(default_factory=list)
    uncounted: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    assumptions: list[DataAssumption] = field(default_factory=list)  # values asked on meta, over every counted forward
