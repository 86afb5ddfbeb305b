"""The plain results of the decisions modelcost helps with: which backend to deploy, and whether a quantized
or FP16 candidate is really faster than its base model.

Standard library only, beside ``core/types.py``: ``modelcost.decide`` produces these, ``modelcost.report``
renders them (it sees only ``modelcost.core`` types).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from modelcost.core.types import AccuracyStats, BenchResult


@dataclass(frozen=True)
class ConstraintCheck:
    """One constraint applied to one config: the limit, the measured value and whether it holds."""

    name: str  # "max_latency_ms" | "min_throughput_ips" | "max_memory_gb" | "max_accuracy_drop_pct" | "batch_size"
    limit: float
    value: float | None  # None: not measured for this config
    ok: bool
    detail: str  # in words, e.g. "p99 latency 12.40 ms > 10 ms (+2.40 ms, +24.0%)"


@dataclass
class Recommendation:
    """The config that meets every constraint best, why, and the latency-vs-throughput Pareto front."""

    objective: str  # "throughput" | "latency"
    latency_stat: str  # which percentile the latency constraint and the front use ("p50", "p99", ...)
    constraints: dict[str, float] = field(default_factory=dict)  # as given, by ConstraintCheck.name
    best: BenchResult | None = None
    reasons: list[str] = field(default_factory=list)  # why ``best``; or, with no best, why nothing fits
    pareto: list[BenchResult] = field(default_factory=list)  # measured configs no other beats on both axes
    feasible: list[BenchResult] = field(default_factory=list)
    checks: list[tuple[str, list[ConstraintCheck]]] = field(default_factory=list)  # config label -> checks
    failing: list[str] = field(default_factory=list)  # when nothing fits: each failing constraint, by how much
    considered: int = 0  # measured ("ok") configs looked at
    skipped: list[str] = field(default_factory=list)  # configs not measured (unavailable / failed), with reason
    unranked: list[str] = field(default_factory=list)  # measured, but too few samples for a statistic it ranks on
    tie: list[BenchResult] = field(default_factory=list)  # configs tied with the best within noise, the pick first
    tie_rule: str = ""  # the rule that broke the tie, in words ("accuracy vs the fp32 reference", ...)
    caveats: list[str] = field(default_factory=list)  # a tentative pick: why its figures are not reliable


@dataclass(frozen=True)
class SpeedupEstimate:
    """Candidate vs base on one backend and batch size, from interleaved blocks of timed runs.

    ``ratio`` = base latency / candidate latency (> 1: the candidate is faster); ``percent`` is the
    throughput change, (ratio - 1) x 100. ``ci_low`` / ``ci_high`` bound ``percent`` at 95%.
    """

    backend: str
    batch_size: int
    base_precision: str
    candidate_precision: str
    blocks: int  # paired (base, candidate) blocks
    runs_per_block: int
    base_ms: float  # median over blocks of the per-block median latency
    candidate_ms: float
    ratio: float
    percent: float
    ci_low: float
    ci_high: float
    method: str  # how the interval was computed, in words
    verdict: str  # "faster by 31.2% (95% CI 28.0-34.5%)" | "slower by ..." | "no significant difference ..."
    significant: bool
    hints: list[str] = field(default_factory=list)  # when the speedup is absent: why, from what was measured
    base_blocks_ms: list[float] = field(default_factory=list)
    candidate_blocks_ms: list[float] = field(default_factory=list)


@dataclass
class ModelSide:
    """The static figures of one side of a comparison."""

    name: str
    source: str
    precision: str = ""
    file_size_bytes: int | None = None
    storage_bytes: int | None = None  # None: the static analysis of this side failed (not measured, not 0)
    storage_by_dtype: dict[str, int] = field(default_factory=dict)
    params: int | None = None
    macs: int | None = None
    flops: int | None = None
    macs_by_dtype: dict[str, int] = field(default_factory=dict)
    op_counts: dict[str, int] = field(default_factory=dict)  # e.g. {"QuantizeLinear": 54, "Conv": 53}
    compute_complete: bool = True  # False: some op was not counted, so macs / flops are lower bounds ("≥")


@dataclass
class Comparison:
    """BASE vs CANDIDATE: static differences, speed with confidence intervals, accuracy on the same inputs."""

    base: ModelSide
    candidate: ModelSide
    speed: list[SpeedupEstimate] = field(default_factory=list)
    accuracy: list[tuple[str, AccuracyStats]] = field(default_factory=list)  # backend -> candidate vs base
    data: str = ""  # which inputs: "--data FILE.npz (N samples)" or "generated: random normal ..."
    skipped: list[str] = field(default_factory=list)  # backend / batch pairs not measured, with the reason
    notes: list[str] = field(default_factory=list)
    complete: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
