"""The terminal's table of --predict: predicted latency per GPU x backend x precision x batch, the measured
median beside it where the run measured the same config, and the expected error (or "unknown")."""

from __future__ import annotations

from typing import Any

from modelcost.core.types import LatencyPrediction


def predictions_table(preds: list[LatencyPrediction]) -> Any:
    from rich.table import Table

    table = Table(title="predicted latency (--predict)", show_lines=False)
    for col in ("GPU", "backend", "precision", "batch", "predicted ms", "measured ms", "error", "expected error"):
        table.add_column(col, justify="right" if col.endswith(("ms", "batch", "error")) else "left")
    for p in preds:
        gpu = f"{p.gpu} (from {p.calibrated_on})" if p.transferred else p.gpu
        expected = (f"{p.expected_error_pct:.0f}% (p90 {p.expected_error_p90_pct:.0f}%)"
                    if p.expected_error_pct is not None and p.expected_error_p90_pct is not None else "unknown")
        table.add_row(gpu, p.backend, p.precision, str(p.batch_size), f"{p.latency_ms:.3f}",
                      "" if p.measured_ms is None else f"{p.measured_ms:.3f}",
                      "" if p.error_pct is None else f"{p.error_pct:+.0f}%", expected)
    return table
