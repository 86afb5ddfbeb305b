"""Ties within the measurement noise: the 95% interval of a config's objective figure (``objective_interval``)
and the rules that choose among the configs whose intervals overlap the best-ranked one's (``break_tie``). Pure
functions; decide/recommend.py asks them and says in words how a tie was decided.

- ties: two configs tie when the 95% intervals of the objective overlap (throughput, or the latency statistic,
  each +- a relative 95% half-width: the larger of the median's from the timing loop and, for a config measured
  in several runs or sessions (``sweep --repeats``; a finalist of analyze / bench / recommend measured again,
  runs/finalists.py), the between-run one (``extra.between_run_ci95_rel``, decide/noise.py), so a difference
  inside the noise between runs is a tie; a tail percentile gets the median's relative width, a lower bound of
  its own). Among the configs that tie with the fastest, the pick is decided by,
  in this order: accuracy vs the FP32 reference (accuracy drop, then max abs error), peak GPU memory, simplicity
  (eager < CUDA graphs < compiled / engine-built: the ``simplicity`` of the backend's registry row), and only
  then the objective itself. The reasons name the rule that decided.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from modelcost.bench import registry
from modelcost.core.types import BenchResult
from modelcost.decide.constraints import accuracy_drop_pct, latency_of


def ci_rel(r: BenchResult) -> float | None:
    """The relative half-width of the 95% interval of the median latency: the larger of the timing loop's and the
    between-run one (a config measured in several runs), or None if neither is known."""
    known = [v for v in (_rel(r.extra.median_ci95_rel), _rel(r.extra.between_run_ci95_rel)) if v is not None]
    return max(known) if known else None


def _rel(value: object) -> float | None:
    try:
        value = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def objective_interval(r: BenchResult, objective: str, stat: str,
                       floor_rel: float = 0.0) -> tuple[float, float] | None:
    """The 95% interval of ``r``'s objective figure (see the module docstring), or None when unknown.
    ``floor_rel``: at least this relative half-width (runs/finalists.py: the noise a single session cannot see)."""
    rel = ci_rel(r)
    if floor_rel > 0:
        rel = max(rel or 0.0, floor_rel)
    value = (r.throughput_ips if objective == "throughput" else latency_of(r, stat))
    if rel is None or value is None:
        return None
    return value * (1 - rel), value * (1 + rel)


def intervals_overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Whether two (low, high) intervals share a point (ends included); an unknown (None) one overlaps nothing."""
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


# Tie rules in order: (name, key, how far above the best key still counts as equal). Accuracy: errors within 1.5x
# of the best are the same accuracy (the same precision on other kernels or another batch; bf16 vs fp16 differ far
# more: BENCHMARKS.md, 'Sixth session', 'Figures that used to live in docstrings'). Peak memory: within 5%.
ACCURACY_SAME = 1.5
MEMORY_SAME = 0.05
_TIE_RULES: tuple[tuple[str, Callable[[BenchResult], tuple[float, ...]], float], ...] = (
    ("accuracy vs the fp32 reference", lambda r: (
        accuracy_drop_pct(r) if accuracy_drop_pct(r) is not None else math.inf,
        r.accuracy.max_abs_err if r.accuracy is not None else (0.0 if r.precision == "fp32" else math.inf)),
     ACCURACY_SAME),
    ("peak GPU memory", lambda r: (float(r.gpu_memory_peak_bytes) if r.gpu_memory_peak_bytes is not None
                                   else math.inf,), 1 + MEMORY_SAME),
    ("simplicity (eager < CUDA graphs < compiled)", lambda r: (float(registry.simplicity(r.backend)),), 1.0),
)


def _as_good(key: tuple[float, ...], best: tuple[float, ...], factor: float) -> bool:
    """Every component of ``key`` within ``factor`` x the best's (unknown, inf, only equals unknown)."""
    return all(k <= b * factor if math.isfinite(b) else k == b for k, b in zip(key, best, strict=True))


def break_tie(ranked: list[BenchResult], objective: str, stat: str) -> tuple[list[BenchResult], str]:
    """The configs whose objective interval overlaps the best-ranked one's, the pick first, and the rule that
    decided; ([], "") when the best is ahead beyond the measurement noise (or its interval is unknown).

    The rules narrow the tied configs in order: each keeps those as good as the best on it (within its tolerance,
    ``_TIE_RULES``); the pick is the best-ranked one left, and the rule named is the one that set aside the
    best-ranked other config (the objective itself when no rule did)."""
    best_iv = objective_interval(ranked[0], objective, stat)
    tied = [r for r in ranked if r is ranked[0] or intervals_overlap(best_iv, objective_interval(r, objective, stat))]
    if len(tied) < 2:
        return [], ""
    left, set_aside_by = list(tied), {}
    for name, key, factor in _TIE_RULES:
        best = min(key(r) for r in left)
        set_aside_by.update({id(r): name for r in left if not _as_good(key(r), best, factor)})
        left = [r for r in left if id(r) not in set_aside_by]
        if len(left) == 1:
            break
    pick = left[0]  # the best-ranked of those left (``tied`` keeps the ranking's order)
    others = [r for r in tied if r is not pick]
    return [pick, *others], set_aside_by.get(id(others[0]), "the objective itself (every tie rule was equal)")

