"""What a recommendation is asked for, and how one measured config is checked against it: ``Constraints`` and
their one validity check, the figures they limit (``latency_of``, ``accuracy_drop_pct``), the per-config checks
that say how far a figure misses its limit, and the screening test built from the same limits
(``screening_rejects``). Pure functions; decide/recommend.py ranks the configs that pass (its docstring defines
the other figures).

- accuracy drop, in percent: (1 - top-1 agreement with the FP32 reference) x 100 when the output looks like
  class scores, else (1 - cosine similarity) x 100. An FP32 config without accuracy figures is the reference
  (drop 0); a reduced-precision config without them fails the constraint ("not measured").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from modelcost.core.decisions import ConstraintCheck
from modelcost.core.errors import ModelcostError
from modelcost.core.types import BenchResult
from modelcost.core.units import number

LATENCY_STATS = ("p50", "p90", "p95", "p99", "mean")
OBJECTIVES = ("throughput", "latency")
GB = 1e9


@dataclass(frozen=True)
class Constraints:
    max_latency_ms: float | None = None
    min_throughput_ips: float | None = None
    max_memory_gb: float | None = None
    max_accuracy_drop_pct: float | None = None
    batch_sizes: tuple[int, ...] | None = None  # only these batch sizes are acceptable
    latency_stat: str = "p99"

    def as_dict(self) -> dict[str, float]:
        given = {name: getattr(self, name) for name in LIMITS}
        return {k: v for k, v in given.items() if v is not None}


LIMITS = ("max_latency_ms", "min_throughput_ips", "max_memory_gb", "max_accuracy_drop_pct")  # Constraints' limits


def check_constraints(c: Constraints, objective: str = "throughput") -> None:
    """The one check of what a recommendation is asked for (``recommend``; a sweep plan's [constraints] when it is
    read): every limit a finite number >= 0, a known latency statistic and objective. Messages name the field."""
    for name in LIMITS:
        value = getattr(c, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise ModelcostError(f"{name} must be a number >= 0, not {value!r}")
    if c.latency_stat not in LATENCY_STATS:
        raise ModelcostError(f"latency_stat must be one of {', '.join(LATENCY_STATS)}, not {c.latency_stat!r}")
    if objective not in OBJECTIVES:
        raise ModelcostError(f"objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")


def latency_of(r: BenchResult, stat: str) -> float | None:
    return None if r.latency_ms is None else float(getattr(r.latency_ms, stat))


def accuracy_drop_pct(r: BenchResult) -> float | None:
    """See the module docstring. None: not measured."""
    acc = r.accuracy
    if acc is None:
        return 0.0 if r.precision == "fp32" else None
    if acc.top1_agreement is not None:
        return (1.0 - acc.top1_agreement) * 100.0
    return max(0.0, (1.0 - acc.cosine) * 100.0)


def _excess(value: float, limit: float, unit: str, upper: bool) -> str:
    """'+2.4 ms, +24.0%' over an upper limit; '-1000 ips, -20.0%' under a lower one."""
    delta = abs(value - limit)
    sign = "+" if upper else "-"
    rel = f", {sign}{delta / abs(limit) * 100:.1f}%" if limit else ""
    return f"{sign}{number(delta)} {unit}{rel}"


def _check_upper(name: str, what: str, value: float | None, limit: float, unit: str) -> ConstraintCheck:
    if value is None:
        return ConstraintCheck(name, limit, None, False,
                               f"{what} not measured: cannot show it is <= {number(limit)} {unit}")
    ok = value <= limit
    rel = "<=" if ok else ">"
    detail = f"{what} {number(value)} {unit} {rel} {number(limit)} {unit}"
    if not ok:
        detail += f" ({_excess(value, limit, unit, True)} over)"
    return ConstraintCheck(name, limit, value, ok, detail)


def check_config(r: BenchResult, c: Constraints) -> list[ConstraintCheck]:
    """Every given constraint applied to one measured config."""
    checks: list[ConstraintCheck] = []
    if c.batch_sizes:
        ok = r.batch_size in c.batch_sizes
        wanted = ",".join(str(b) for b in c.batch_sizes)
        checks.append(ConstraintCheck("batch_size", float(r.batch_size), float(r.batch_size), ok,
                                      f"batch {r.batch_size} {'in' if ok else 'not in'} {{{wanted}}}"))
    if c.max_latency_ms is not None:
        checks.append(_check_upper("max_latency_ms", f"{c.latency_stat} latency", latency_of(r, c.latency_stat),
                                   c.max_latency_ms, "ms"))
    if c.min_throughput_ips is not None:
        v, lim = r.throughput_ips, c.min_throughput_ips
        if v is None:
            checks.append(ConstraintCheck("min_throughput_ips", lim, None, False, "throughput not measured"))
        else:
            ok = v >= lim
            detail = f"throughput {number(v)} ips {'>=' if ok else '<'} {number(lim)} ips"
            if not ok:
                detail += f" ({_excess(v, lim, 'ips', False)} short)"
            checks.append(ConstraintCheck("min_throughput_ips", lim, v, ok, detail))
    if c.max_memory_gb is not None:
        mem = None if r.gpu_memory_peak_bytes is None else r.gpu_memory_peak_bytes / GB
        checks.append(_check_upper("max_memory_gb", "peak GPU memory", mem, c.max_memory_gb, "GB"))
    if c.max_accuracy_drop_pct is not None:
        checks.append(_check_upper("max_accuracy_drop_pct", "accuracy drop", accuracy_drop_pct(r),
                                   c.max_accuracy_drop_pct, "%"))
    return checks


def screening_rejects(c: Constraints) -> Callable[[BenchResult, float], str | None]:
    """For bench.screening: ``rejects(r, margin)``. margin > 0: why a config's short screening figures already fail
    a constraint by more than ``margin`` (so the full measurement cannot bring it within the limit), else None;
    unmeasured figures reject nothing here (the recommendation says so later). margin < 0: why the config does
    not meet every constraint by more than ``-margin``, a constrained figure not measured counting as a failure
    (the test a config must pass before it may screen others out)."""
    def rejects(r: BenchResult, margin: float) -> str | None:
        strict = margin < 0

        def fails(value: float | None, limit: float | None, upper: bool) -> bool:
            if limit is None:
                return False
            if value is None:
                return strict
            return value > limit * (1 + margin) if upper else value * (1 + margin) < limit

        if c.batch_sizes and r.batch_size not in c.batch_sizes:
            return f"batch {r.batch_size} is not among the batch sizes asked for"
        lat = latency_of(r, c.latency_stat)
        if fails(lat, c.max_latency_ms, upper=True):
            return f"{c.latency_stat} latency {number(lat)} ms > {number(c.max_latency_ms)} ms"
        thr = r.throughput_ips
        if fails(thr, c.min_throughput_ips, upper=False):
            return f"throughput {number(thr)} ips < {number(c.min_throughput_ips)} ips"
        mem = r.gpu_memory_peak_bytes
        if fails(None if mem is None else mem / GB, c.max_memory_gb, upper=True):
            return f"peak GPU memory {number(None if mem is None else mem / GB)} GB > {number(c.max_memory_gb)} GB"
        drop = accuracy_drop_pct(r)
        if fails(drop, c.max_accuracy_drop_pct, upper=True):
            return f"accuracy drop {number(drop, 3)}% > {number(c.max_accuracy_drop_pct)}%"
        return None

    return rejects
