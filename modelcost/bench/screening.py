"""Screening: spend the full measurement only on configs that can still matter (issue 9).

Every config first gets a short *screening* measurement (``screening_config``: ~0.1 s of samples after a short
warm-up, the median to +-3%). It then gets the full measurement (the caller's config: the median to +-1%) only if
it can still be on the latency-throughput Pareto front or meet the caller's constraints:

* **dominated beyond the noise**: another config already measured (screened or full) has a lower latency AND a
  higher throughput, each by more than ``margin`` (default 10%, several times the screening interval, so noise
  cannot make a config look dominated). Such a config cannot be the recommendation, nor tie with it (a tie needs
  overlapping +-1% intervals). Only a config that meets the caller's constraints can dominate, and it must meet
  each by more than the margin, with every constrained figure measured (``rejects(other, -margin)``): an fp16
  config that fails ``--max-accuracy-drop-pct`` must not screen out the slower fp32 config the answer may be;
* **fails a constraint beyond the noise**: the caller's ``rejects(result, margin)`` says so (recommend passes its
  latency / throughput / memory / accuracy limits, applied with the same margin; a negative margin asks whether
  a config meets every limit by more than that, with figures not measured counting as failing).

A dropped config keeps its screening figures, status ``screened`` and the reason, so it is reported, never missing.
The decision is online (against what has been measured so far), so the sweep measures configs that tend to be fast first
(``speed_rank``); the order changes how many full measurements are made, never a full figure. While torch.compile's
graphs are compiled in a background process (bench.compile_ahead) the plain torch configs go first instead
(``bench.plan.compile_ahead_order``): one or two more of them get a full measurement (CUDA graphs of the fp16 model at
each batch), and each compile they hide is seconds of wall time (BENCHMARKS.md, 'Figures that used to live in
docstrings').
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from modelcost.bench import registry
from modelcost.bench.base import BenchConfig
from modelcost.core.text import config_label
from modelcost.core.types import BenchResult

SCREEN_MARGIN = 0.10
Rejects = Callable[[BenchResult, float], "str | None"]

_PRECISION_RANK = ("fp8", "int8", "fp16", "bf16", "tf32", "fp32")


def screening_config(config: BenchConfig) -> BenchConfig:
    """The short measurement every config gets first: never longer than ``config`` asks."""
    # The GPU is kept busy config after config, so its clocks are up: a 0.1 s warm-up floor (the 2% settle rule still
    # applies) instead of the 1 s a first config of a process needs, and at most 0.5 s of it: a launch-bound config's
    # windows may never agree within 2% (BENCHMARKS.md, 'Fourth session'), and a screening figure only has to be good to
    # the 10% margin it is judged with. No end-to-end loop: the host-side figure is not judged, and at large batches its
    # copies cost more than the screening itself (BENCHMARKS.md, 'Figures that used to live in docstrings'); a config
    # kept after screening gets it with its full measurement.
    return dataclasses.replace(
        config, min_time_s=min(config.min_time_s, 0.1), min_iters=min(config.min_iters, 10),
        max_time_s=min(config.max_time_s, 1.0), target_rel_ci=max(config.target_rel_ci, 0.03),
        warmup_max_s=min(config.warmup_max_s, 0.5), warmup_min_cuda_s=min(config.warmup_min_cuda_s, 0.1),
        e2e_min_iters=0)


def after_screening(config: BenchConfig) -> BenchConfig:
    """The full measurement of a config that was just screened on the same session: the GPU and the session are
    already warm (its screening ran the warm-up), so no time floor on the warm-up; the settle rule still holds."""
    return dataclasses.replace(config, warmup_min_cuda_s=0.0)


def speed_rank(pair: tuple[str, str]) -> tuple[int, int]:
    """Likely fastest first: the backend's ``screen_rank`` (its registry row), then the precision's."""
    backend, precision = pair
    b = registry.screen_rank(backend)
    p = _PRECISION_RANK.index(precision) if precision in _PRECISION_RANK else len(_PRECISION_RANK)
    return b, p


def dominator(candidate: BenchResult, others: Iterable[BenchResult], margin: float = SCREEN_MARGIN
              ) -> BenchResult | None:
    """The first of ``others`` with p50 latency below candidate's / (1 + margin) and throughput above candidate's
    x (1 + margin); None if there is none."""
    if candidate.latency_ms is None or not candidate.throughput_ips:
        return None
    lat, thr = candidate.latency_ms.p50, candidate.throughput_ips
    for other in others:
        if other is candidate or other.latency_ms is None or not other.throughput_ips:
            continue
        if other.latency_ms.p50 * (1 + margin) < lat and other.throughput_ips > thr * (1 + margin):
            return other
    return None


def may_screen_out(result: BenchResult, rejects: Rejects | None, margin: float = SCREEN_MARGIN) -> bool:
    """Whether ``result`` may count against other configs: it can be the answer, meeting every constraint by more
    than ``margin`` with every constrained figure measured (module doc). bench.screening_record asks the same."""
    return rejects is None or rejects(result, -margin) is None


def screen_out_reason(candidate: BenchResult, measured: Iterable[BenchResult], margin: float = SCREEN_MARGIN,
                      rejects: Rejects | None = None) -> str | None:
    """Why ``candidate`` (with screening figures) gets no full measurement, or None if it must get one."""
    if rejects is not None:
        why = rejects(candidate, margin)
        if why:
            return f"screened out: {why} (by more than the {margin * 100:.0f}% screening margin)"
        measured = [r for r in measured if may_screen_out(r, rejects, margin)]
    other = dominator(candidate, measured, margin)
    if other is None:
        return None
    return (f"screened out: {config_label(other)} is faster by more than {margin * 100:.0f}% on both latency "
            f"({other.latency_ms.p50:.4f} vs {candidate.latency_ms.p50:.4f} ms p50) and throughput "  # type: ignore[union-attr]
            f"({other.throughput_ips:,.1f} vs {candidate.throughput_ips:,.1f} ips); figures from the short screening "
            "measurement")
