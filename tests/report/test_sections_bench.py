"""The report's bench section (report/sections_bench.py)."""

from __future__ import annotations

from modelcost.core.types import BenchResult, LatencyStats
from modelcost.report.blocks import Heading, Table
from modelcost.report.sections_bench import benchmark_blocks


def test_first_call_column_says_it_includes_lazy_init_and_is_not_a_latency() -> None:
    # first_inference_ms is the config's first timed call: for torch-half / cuDNN it includes lazy initialisation
    # (170-4,500 ms measured on an H200), so a heading like "first inference ms" reads as a latency it is not.
    lat = LatencyStats(count=10, p50=2.0, p90=2.1, p95=2.2, p99=2.3, mean=2.0, std=0.1, min=1.9, max=2.4)
    r = BenchResult("torch-half", "fp16", 1, "ok", latency_ms=lat, throughput_ips=500.0,
                    first_inference_ms=1700.0, build_s=0.5)
    blocks = benchmark_blocks([r])
    table = next(b for b in blocks if isinstance(b, Table) and "build s" in b.headers)
    column = table.headers[2]
    assert "first call" in column and "lazy init" in column, column
    assert table.rows[0][2] == "1700.00"  # the JSON figure, unchanged (2 decimals)
    headings = [b.text for b in blocks if isinstance(b, Heading)]
    assert not any("first inference" in h.lower() for h in headings), headings
