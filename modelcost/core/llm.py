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
* a layer with a sliding window of W positions (Mistral, Phi-3, Gemma-2/3 local layers) keeps and reads
  min(L, W) of L positions: its cache stops growing at W (``KvLayerGroup``, ``KvCache.bytes_at``);
* mixture of experts: a forward over T tokens reads, in each MoE layer, only the distinct routed experts its
  tokens visit - E (1 - (1 - k/E)^T) expected under uniform routing (``ExpertReads``, ``Routing``);
* bounds are lower bounds: time = max(FLOPs / peak FLOP/s, bytes / peak bandwidth), no overlap loss;
* ``decode`` is counted as the model's code runs it (``form`` "as-run"); a model with multi-head latent attention
  (``MlaShape``) also gets ``decode_absorbed`` (``form`` "absorbed-mla"): the same steps with W_UK and W_UV
  absorbed, attention run against the latent cache, as serving engines do (docs/COUNTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from modelcost.core.assumptions import DataAssumption
from modelcost.core.types import LatencyPrediction, LatencyStats


@dataclass(frozen=True)
class DecodeTokenCost:
    token_index: int  # the generated token this step outputs (2..G)
    context_len: int  # key positions attended, the new token included
    macs: int
    flops: int
    bytes: int  # weights read + KV cache read at context_len (batch included)
    arithmetic_intensity: float  # flops / bytes


@dataclass(frozen=True)
class Routing:
    """How tokens pick routed experts, for the expected expert reads: "uniform" (each token's k experts are a
    uniformly random k of E), "zipf" (expert r of E is picked in proportion to 1 / r^zipf_exponent) or "file"
    (measured shares per expert, one list for every MoE layer or one per layer)."""

    kind: str  # "uniform" | "zipf" | "file"
    zipf_exponent: float | None = None
    source: str | None = None  # the file of measured shares
    shares: list[list[float]] = field(default_factory=list)  # "file": per MoE layer (one list: all), each sums to 1


@dataclass(frozen=True)
class MoeSpec:
    """The routed experts of a mixture-of-experts model, one kind of MoE layer (shared experts are dense layers
    and not here: every token runs them)."""

    layers: int  # MoE layers
    experts: int  # routed experts per MoE layer (E)
    top_k: int  # routed experts each token visits per MoE layer (k)
    expert_params: int  # one routed expert of one layer
    expert_bytes: int
    routed_params: int  # every routed expert of every layer: layers x E x expert_params
    routed_bytes: int
    routing: Routing
    experts_implementation: str | None  # the transformers experts implementation counted; None: the model's own


@dataclass(frozen=True)
class ExpertReads:
    """The routed experts one forward reads: T tokens each visit k of E experts; a MoE layer reads the distinct
    experts they hit, E (1 - (1 - k/E)^T) expected under uniform routing (sum of 1 - (1 - p_e)^T in general,
    p_e the chance that a token visits expert e)."""

    tokens: int  # T: B x P for the prefill, B for a decode step
    experts_per_layer: float  # expected distinct routed experts read per MoE layer (mean over layers)
    bytes: int  # routed-expert bytes read, all MoE layers


@dataclass(frozen=True)
class KvLayerGroup:
    """Decoder layers whose cache grows alike: full attention keeps every position; a sliding window of W
    positions keeps the last W (the new token included), so past W the layer's cache no longer grows."""

    attention: str  # "full" | "sliding"
    window: int | None  # positions one layer keeps per sequence; None: all of them
    layers: int
    kv_heads: int  # heads of the cache tensors (what tensor parallelism splits)
    bytes_per_token: int  # K and V bytes these layers add per position of one sequence, up to the window


@dataclass
class KvCache:
    dtype: str  # fp16 | bf16 | fp8 | int8 | fp32
    elements_per_token: int  # K and V elements one position of one sequence adds, all layers, below every window
    bytes_per_token: int  # the same in bytes: growth per position while below every window
    bytes_per_sequence: int  # at prompt_len + gen_len - 1 positions (what a dynamic cache holds at the end)
    bytes_total: int  # bytes_per_sequence x batch
    bytes_at_prompt: int = 0  # per sequence after the prefill (P positions)
    layer_groups: list[KvLayerGroup] = field(default_factory=list)  # empty: every layer full attention

    def bytes_at(self, positions: int) -> int:
        """Cache bytes of one sequence at ``positions`` positions: sum over groups of bytes/token x min(L, W)."""
        if not self.layer_groups:
            return self.bytes_per_token * positions
        return sum(g.bytes_per_token * (positions if g.window is None else min(positions, g.window))
                   for g in self.layer_groups)


@dataclass
class PrefillCost:
    tokens: int  # batch x prompt_len
    macs: int
    flops: int
    bytes: int  # weights read + KV cache written
    arithmetic_intensity: float
    logits: str  # "last" (the head runs on the last prompt position) | "all"
    peak_activation_bytes: int  # the counter's peak live activations of this forward (workspace)
    experts_read: ExpertReads | None = None  # a mixture of experts: the routed experts in ``bytes``


@dataclass
class DecodeCost:
    steps: int  # G - 1
    per_token: list[DecodeTokenCost]  # the first and the last step, each window edge between, the middle (check)
    macs_total: int  # over all G - 1 steps
    flops_total: int
    bytes_total: int
    macs_per_context_position: int  # d(macs)/d(context_len) at the last step: attention of the layers still growing
    experts_read: ExpertReads | None = None  # a mixture of experts: the routed experts in each step's bytes
    form: str = "as-run"  # "as-run": as the model's code runs it | "absorbed-mla": MLA with W_UK, W_UV absorbed


@dataclass(frozen=True)
class MlaShape:
    """Multi-head latent attention (DeepSeek-V2/V3 and kin) as the model's attention layers declare it. Its
    cache holds one latent (kv_lora_rank) and one shared RoPE key (qk_rope_head_dim) per position and layer."""

    layers: int  # attention layers with a latent KV
    num_heads: int
    hidden_size: int
    q_lora_rank: int | None  # None: q is one plain projection (DeepSeek-V2-Lite)
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    latent_elements_per_token: int  # layers x (kv_lora_rank + qk_rope_head_dim): what both forms cache
    # layers x heads x (qk_nope + qk_rope + v head dims): the K and V a step re-expands from the latent cache, per
    # cached position, when run as transformers does (activations: not in decode bytes)
    expanded_kv_elements_per_position: int


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
    tp: int = 1  # GPUs the model is split over (tensor parallelism): peaks, bandwidth and memory are per GPU x tp
    fits: bool = True  # the weights and one sequence's cache (P + G positions) fit the tp GPUs' memory
    memory_needed_bytes: int | None = None  # per GPU: its share of the weights + of one sequence's cache
    gpus_needed: int | None = None  # fewest GPUs (a power of two) whose memory holds weights + one sequence's cache
    link: str | None = None  # the GPU-to-GPU link of the all-reduces (tp > 1)
    link_gbps: float | None = None  # its datasheet bandwidth, both directions together
    allreduce_prefill_ms: float = 0.0  # all-reduces of the prefill at the link's peak (in ttft_ms)
    allreduce_step_ms: float = 0.0  # all-reduces of one decode step (in every step's bound)


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
    decode_absorbed: DecodeCost | None = None  # MLA models: the decode steps as serving engines run them


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
class LayerKind:
    """Decoder layers of one kind: the same modules, shapes, settings and cache layer (``analysis.layer_repeat``)."""

    module: str  # the layer's class ("MixtralDecoderLayer")
    first: int  # index of its first layer
    layers: int  # how many layers are of this kind


@dataclass
class RepeatedLayers:
    """How the decoder was counted: the first counted forward ran layers 0 .. ``counted_first`` - 1 (two of each
    kind, compared), every later one layers 0 .. ``counted`` - 1 (one of each kind); each other layer is the
    last counted layer of its kind, repeated."""

    layers: int  # the model's decoder layers
    counted_first: int
    counted: int
    kinds: list[LayerKind] = field(default_factory=list)


@dataclass
class LlmPrediction:
    """Predicted TTFT and TPOT of one generation point under one backend (``llm --predict``,
    analysis/predict_llm.py); each phase carries its own expected error and, when measured, the measured median."""

    prompt_len: int
    gen_len: int
    ttft: LatencyPrediction  # the prefill forward + argmax
    tpot: LatencyPrediction  # one decode step + argmax, at the context the backend's cache attends on average


@dataclass
class LlmReport:
    model: str
    source: str
    dtype: str  # weights
    params: int
    weights_bytes: int
    weights_bytes_by_dtype: dict[str, int]
    weights_read_bytes: int  # per forward: weights minus gathered embedding tables (MoE: every expert)
    points: list[GenerationPoint]
    attention: str = "full"  # prefill query/key pairs counted: "full" (every pair in the window) | "causal"
    attn_implementation: str | None = None  # the attention the model ran: "sdpa" | "eager" (transformers' names)
    hidden_state_bytes: int = 0  # one position's hidden state (the input-embedding row): an all-reduce's unit
    benchmarks: list[GenerationResult] = field(default_factory=list)
    uncounted: dict[str, int] = field(default_factory=dict)
    params_active: int = 0  # parameters one token runs through: params minus the routed experts it skips
    moe: MoeSpec | None = None  # None: a dense model
    complete: bool = True  # False: some op was not counted, MACs and FLOPs are lower bounds
    incomplete_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # cost-shaping config keys the config file left out, with the value transformers' defaults filled in
    # ({"model_type": "llama"} alone is the 6.74 B Llama-7B shape; a list where the config has one per layer);
    # empty for zoo models, factories, hub ids and complete configs
    config_defaults: dict[str, int | bool | list[int]] = field(default_factory=dict)
    mla: MlaShape | None = None  # multi-head latent attention; None for other attention
    assumptions: list[DataAssumption] = field(default_factory=list)  # values asked on meta, over every counted forward
    repeated_layers: RepeatedLayers | None = None  # None: every decoder layer was counted
    predictions: list[LlmPrediction] = field(default_factory=list)  # --predict (analysis/predict_llm.py)
