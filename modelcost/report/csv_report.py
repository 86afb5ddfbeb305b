"""``benchmarks.csv``: one row per benchmarked config, every measured figure in its own column.

Empty cells are figures that were not measured (never zeros). ``run_complete`` is ``false`` on every row of an
interrupted run (the INCOMPLETE mark). Latency columns are in ms; see ``timing`` for what they include.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from modelcost.core.types import BenchResult, RunReport

_LAT = ("p50", "p90", "p95", "p99", "mean", "std", "min", "max")

COLUMNS = (
    ["run_complete", "model", "role", "backend", "precision", "batch_size", "status", "reason"]
    + [f"latency_ms_{k}" for k in _LAT] + ["latency_cv", "latency_count", "throughput_ips"]
    + [f"e2e_latency_ms_{k}" for k in ("p50", "p99", "mean")]
    + ["first_inference_ms", "build_s", "gpu_memory_peak_bytes", "power_w_mean", "energy_j_per_inference",
       "gpu_util_mean", "sm_clock_mhz_mean", "throttle_reasons", "accuracy_max_abs_err", "accuracy_max_rel_err",
       "accuracy_cosine", "accuracy_top1_agreement", "accuracy_reference", "roofline_achieved_tflops",
       "roofline_peak_tflops", "roofline_mfu", "roofline_achieved_gbps", "roofline_peak_gbps",
       "roofline_intensity", "roofline_bound", "roofline_lower_bound_ms", "roofline_measured_over_bound",
       "device", "timing", "budget_hit", "unstable", "notes"]
    # appended (columns are read by name; the earlier ones keep their place): the rest of the host-side latency
    + [f"e2e_latency_ms_{k}" for k in ("p90", "p95", "std", "min", "max")] + ["e2e_latency_cv", "e2e_latency_count"]
)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return value


def row(r: BenchResult, run: RunReport) -> dict[str, Any]:
    model = r.model or (run.cost.model.name if run.cost else "")
    d: dict[str, Any] = {
        "run_complete": run.complete, "model": model, "role": r.role, "backend": r.backend,
        "precision": r.precision, "batch_size": r.batch_size, "status": r.status, "reason": r.reason,
        "throughput_ips": r.throughput_ips, "first_inference_ms": r.first_inference_ms, "build_s": r.build_s,
        "gpu_memory_peak_bytes": r.gpu_memory_peak_bytes, "power_w_mean": r.power_w_mean,
        "energy_j_per_inference": r.energy_j_per_inference, "gpu_util_mean": r.gpu_util_mean,
        "sm_clock_mhz_mean": r.sm_clock_mhz_mean, "throttle_reasons": ";".join(r.throttle_reasons),
        "device": r.device, "timing": r.timing, "budget_hit": r.budget_hit,
        "unstable": " | ".join(r.unstable), "notes": " | ".join(r.notes),
    }
    if r.latency_ms is not None:
        d.update({f"latency_ms_{k}": getattr(r.latency_ms, k) for k in _LAT})
        d["latency_cv"], d["latency_count"] = r.latency_ms.cv, r.latency_ms.count
    if r.e2e_latency_ms is not None:
        d.update({f"e2e_latency_ms_{k}": getattr(r.e2e_latency_ms, k) for k in _LAT})
        d["e2e_latency_cv"], d["e2e_latency_count"] = r.e2e_latency_ms.cv, r.e2e_latency_ms.count
    if r.accuracy is not None:
        a = r.accuracy
        d.update(accuracy_max_abs_err=a.max_abs_err, accuracy_max_rel_err=a.max_rel_err, accuracy_cosine=a.cosine,
                 accuracy_top1_agreement=a.top1_agreement, accuracy_reference=a.reference)
    if r.roofline is not None:
        p = r.roofline
        d.update(roofline_achieved_tflops=p.achieved_tflops, roofline_peak_tflops=p.peak_tflops, roofline_mfu=p.mfu,
                 roofline_achieved_gbps=p.achieved_gbps, roofline_peak_gbps=p.peak_gbps,
                 roofline_intensity=p.intensity, roofline_bound=p.bound, roofline_lower_bound_ms=p.lower_bound_ms,
                 roofline_measured_over_bound=p.measured_over_bound)
    return d


def render_csv(run: RunReport) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in run.benchmarks:
        w.writerow({k: _cell(v) for k, v in row(r, run).items()})
    return buf.getvalue()


def write_csv(run: RunReport, path: str | Path) -> Path:
    from modelcost.report.atomic import atomic_write_text

    return atomic_write_text(Path(path), render_csv(run))
