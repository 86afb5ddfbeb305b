"""The terminal's table of --predict: predicted latency per GPU x backend x precision x batch, the measured
median beside it where the run measured the same config, and the expected error (or "unknown")."""

from __future__ import annotations

from typing import Any

from modelcost.core.llm import LlmPrediction
from modelcost.core.types import LatencyPrediction


EXPECTED_CAPTION = "expected error: the validation's median |error| (its p90, and the % of its cases predicted too low)"
RESIDUAL_CAPTION = ("; predicted: the kernel model x its backend's measured residual (x{factors}: how much slower "
                    "held-out models ran than it predicted)")
OUTSIDE_CAPTION = ("; outside calibration: the share of the kernel time whose shape class the calibration did not "
                   "measure (the nearest stood in), which the expected error does not cover")


def _expected(p: LatencyPrediction) -> str:
    if p.expected_error_pct is None or p.expected_error_p90_pct is None:
        return "unknown"
    low = "" if p.expected_low_pct is None else f", {p.expected_low_pct:.0f}% low"
    return f"{p.expected_error_pct:.0f}% (p90 {p.expected_error_p90_pct:.0f}%{low})"


CPU_NODES_CAPTION = ("; * the measurement ran nodes on the CPU that its backend has no kernel for ({nodes}): CPU "
                     "time no prediction prices")


def _measured(p: LatencyPrediction) -> tuple[str, str]:
    mark = "*" if p.measured_cpu_nodes else ""
    return ("" if p.measured_ms is None else f"{p.measured_ms:.3f}{mark}",
            "" if p.error_pct is None else f"{p.error_pct:+.0f}%")


def _cpu_nodes(preds: list[LatencyPrediction]) -> str:
    """The caption's line for measurements that ran nodes on the CPU (``measured_cpu_nodes``), once."""
    nodes: dict[str, int] = {}
    for p in preds:
        for op, n in (p.measured_cpu_nodes or {}).items():
            nodes[op] = max(nodes.get(op, 0), n)
    return CPU_NODES_CAPTION.format(nodes=", ".join(f"{op} x{n}" for op, n in nodes.items())) if nodes else ""


def llm_predictions_table(preds: list[LlmPrediction]) -> Any:
    """``llm --predict``: TTFT and TPOT predicted per GPU x backend x point, measured beside, expected error."""
    from rich.table import Table

    table = Table(title="predicted generation latency (--predict)",
                  caption=EXPECTED_CAPTION + _pooled([p for pred in preds for p in (pred.ttft, pred.tpot)]))
    for col in ("GPU", "backend", "batch", "prompt", "gen", "phase", "predicted ms", "measured ms", "error",
                "expected error"):
        table.add_column(col, justify="left" if col in ("GPU", "backend", "phase") else "right")
    for pred in preds:
        for phase, p in (("TTFT", pred.ttft), ("TPOT", pred.tpot)):
            gpu = f"{p.gpu} (from {p.calibrated_on})" if p.transferred else p.gpu
            table.add_row(gpu, p.backend, str(p.batch_size), str(pred.prompt_len), str(pred.gen_len), phase,
                          f"{p.latency_ms:.3f}", *_measured(p), _expected(p))
    return table


def _repeats(preds: list[LatencyPrediction]) -> str:
    """The caption's line on how much the measurement itself repeats on a second machine, per GPU and bound
    present (``measured_repeat_pct``), once each."""
    seen = {(p.gpu, p.bound): (p.measured_repeat_pct, p.measured_repeat_p90_pct) for p in preds
            if p.measured_repeat_pct is not None and p.measured_repeat_p90_pct is not None}
    if not seen:
        return ""
    parts = [f"{bound}-bound configs on {gpu} {m:.0f}% (p90 {p:.0f}%)" for (gpu, bound), (m, p) in sorted(seen.items())]
    return ("; measured again on a second machine of the same GPU, " + ", ".join(parts)
            + ": no prediction can be held closer than its measurement repeats")


POOLED_CAPTION = ("; host-bound configs priced at the host's cost per aten call pooled over {n} stored calibrations "
                  "of the calibrated GPU's kind (each calibration reads one draw of its host's pace; "
                  "analysis/predict_host.py)")


def _pooled(preds: list[LatencyPrediction]) -> str:
    """The caption's line for predictions priced at the pooled host price (``host_pooled_from``), once."""
    sizes = sorted({p.host_pooled_from for p in preds if p.host_pooled_from})
    return POOLED_CAPTION.format(n=" / ".join(map(str, sizes))) if sizes else ""


def _why_unknown(preds: list[LatencyPrediction]) -> str:
    """The caption's reason for an "unknown" expected error: the first such prediction's own (its error_basis),
    and how many more read unknown (the JSON keeps each one's)."""
    unknown = [p for p in preds if p.expected_error_pct is None and p.error_basis]
    if not unknown:
        return ""
    more = f" (and {len(unknown) - 1} more unknown; the JSON keeps each reason)" if len(unknown) > 1 else ""
    return f"; {unknown[0].error_basis}{more}"


def predictions_table(preds: list[LatencyPrediction]) -> Any:
    from rich.table import Table

    factors = sorted({f"{p.residual_factor:.2f} {p.backend}" + (f" {p.bound}-bound" if p.bound else "")
                      for p in preds if p.residual_fit})
    residual = RESIDUAL_CAPTION.format(factors=", x".join(factors)) if factors else ""
    table = Table(title="predicted latency (--predict)", show_lines=False,
                  caption=EXPECTED_CAPTION + _why_unknown(preds) + OUTSIDE_CAPTION + residual + _cpu_nodes(preds)
                  + _repeats(preds) + _pooled(preds))
    for col in ("GPU", "backend", "precision", "batch", "predicted ms", "measured ms", "error", "expected error",
                "outside calibration"):
        table.add_column(col, justify="right" if col.endswith(("ms", "batch", "error", "calibration")) else "left")
    for p in preds:
        gpu = f"{p.gpu} (from {p.calibrated_on})" if p.transferred else p.gpu
        outside = "" if p.uncalibrated_pct is None else f"{p.uncalibrated_pct:.0f}%"
        table.add_row(gpu, p.backend, p.precision, str(p.batch_size), f"{p.latency_ms:.3f}", *_measured(p),
                      _expected(p), outside)
    return table
