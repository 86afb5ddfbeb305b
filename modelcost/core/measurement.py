"""How one benchmark's figures were taken: ``MeasurementInfo``, the typed ``BenchResult.extra``.

It is written to the JSON report under ``benchmarks[].extra`` (docs/REPORT_SCHEMA.md lists every key) by
``to_json``: a field that was never given is left out, as a key nobody wrote was; a field that belongs with
another (``WRITTEN_WITH``) is written, ``null`` included, whenever that one is (a timed loop always says its
median's interval, even when there were too few samples for one). ``from_json`` reads it back (the sweep's
results database keeps the JSON), so every reader uses the fields, never the keys.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass
class EarlierRun:
    """An earlier run's figures of a config this run did not measure (bench.screening_record)."""

    p50_ms: float
    throughput_ips: float
    measurement: str  # that run's ``MeasurementInfo.measurement``
    measured_utc: str
    beaten_by_more_than: float  # the factor a config measured now beat these figures by, on both axes


# Why the finalists were not (all) repeated; None in ``FinalistRepeats.skipped``: every repeat ran
REPEAT_SKIPS = ("off", "one config", "no pick", "no doubt", "interrupted", "budget spent", "no budget")


@dataclass
class FinalistRepeats:
    """The finalists of an analyze / bench / recommend run measured again (runs/finalists.py, bench/finalists.py):
    the configs the pick was in doubt between, each timed in ``sessions_added`` more fresh sessions, interleaved."""

    finalists: list[str] = dataclasses.field(default_factory=list)  # config labels, best-ranked first
    sessions_planned: int = 0  # repeats asked for per finalist (--finalist-repeats)
    sessions_added: list[int] = dataclasses.field(default_factory=list)  # per finalist, in ``finalists`` order
    budget_s: float = 0.0  # the time allowed (--finalist-share x the sweep's time)
    spent_s: float = 0.0
    # None: every repeat ran; else one of REPEAT_SKIPS, why some or all did not: "off" (--finalist-repeats 0),
    # "one config" (fewer than two configs measured), "no pick" (none meets the constraints), "no doubt" (the
    # pick leads beyond the noise floor),
    # "interrupted" (Ctrl-C), "budget spent" (the next round would not fit), "no budget" (--finalist-share 0)
    skipped: str | None = None
    failed: list[str] = dataclasses.field(default_factory=list)  # 'label: why' of a repeat that raised


@dataclass
class MeasurementInfo:
    """Details of how a result's figures were taken; None: not part of this result."""

    pinned_cpu: int | None = None  # the CPU the process was pinned to while a GPU config was timed
    # that CPU's pace before its warm-up and after its timed loop, microseconds (bench.timing.host_pace_us): a
    # launch-bound figure runs at the host's pace; comparable between runs on the same machine
    host_pace_us: list[float] | None = None
    gpu_memory_basis: str | None = None  # how gpu_memory_peak_bytes was measured
    # ort-cuda: the nodes of op types its execution provider has no kernel for, by op type (they ran on the CPU,
    # inside the figure: bench/backends/ort_kernels.py); None: none, or not known
    cpu_nodes: dict[str, int] | None = None
    # the timed loop (bench.timing)
    samples: int | None = None
    warmup_iters: int | None = None
    warmup_settled: bool | None = None
    # half-width of the median's 95% interval / the median; inf (null in JSON): too few samples for one
    median_ci95_rel: float | None = None
    # the same between runs: a sweep's config measured in several runs (sweep/results.py), or a finalist of an
    # analyze / bench / recommend run measured again in fresh sessions (runs/finalists.py)
    between_run_ci95_rel: float | None = None
    # a finalist: the p50 of each session that timed it, the sweep's own first, then its repeats in time order
    session_p50s_ms: list[float] | None = None
    stop_reason: str | None = None
    timed_s: float | None = None
    clock: str | None = None  # "cuda-events" | "perf_counter"
    block_medians_ms: list[float] | None = None
    # accuracy and the host-side loop
    accuracy_outputs: str | None = None
    accuracy_compared_on: str | None = None  # "gpu" | "host"
    e2e_timing: str | None = None
    # the machine while it ran (bench.stability, the NVML sampler)
    other_cpu_share: float | None = None
    load_avg_1m: float | None = None
    energy_source: str | None = None
    energy_j_per_item: float | None = None
    mem_clock_mhz_mean: float | None = None
    temperature_c_max: float | None = None
    nvml_samples: int | None = None
    # screening (bench.screening, bench.screening_record)
    measurement: str | None = None  # "screening" | "full (after screening)" | "none in this run (...)"
    screening_p50_ms: float | None = None
    earlier_run: EarlierRun | None = None
    # the interleaved A/B (bench.interleaved)
    runs_per_block: int | None = None
    blocks: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``extra`` object of the JSON report: the fields given, and those written with them."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            anchor = WRITTEN_WITH.get(f.name)
            if value is not None or (anchor is not None and getattr(self, anchor) is not None):
                out[f.name] = dataclasses.asdict(value) if isinstance(value, EarlierRun) else value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> MeasurementInfo:
        """The typed form of a report's ``extra`` object; keys it does not know are left out."""
        data = dict(data or {})
        known = {f.name for f in dataclasses.fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        if isinstance(given.get("earlier_run"), dict):
            names = {f.name for f in dataclasses.fields(EarlierRun)}
            given["earlier_run"] = EarlierRun(**{k: v for k, v in given["earlier_run"].items() if k in names})
        return cls(**given)


# field -> the field it is written with: a timed loop says its interval, block medians and the machine's load
# (null where unknown); an NVML summary its memory clock and temperature
WRITTEN_WITH = {
    "median_ci95_rel": "samples", "block_medians_ms": "samples", "other_cpu_share": "samples",
    "load_avg_1m": "samples", "mem_clock_mhz_mean": "nvml_samples", "temperature_c_max": "nvml_samples",
}
