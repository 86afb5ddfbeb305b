"""BenchResult.extra is typed (core.measurement.MeasurementInfo) and writes the JSON's ``extra`` object as before."""

from __future__ import annotations

import json
import math

from modelcost.core.measurement import EarlierRun, MeasurementInfo
from modelcost.core.types import BenchResult
from modelcost.report.json_report import to_plain


def test_only_given_fields_are_written_and_a_timed_loop_says_its_unknowns() -> None:
    assert to_plain(MeasurementInfo()) == {}  # an unavailable row: "extra": {}
    compare_row = MeasurementInfo(warmup_iters=12, warmup_settled=True, runs_per_block=3, blocks=4)
    assert to_plain(compare_row) == {"warmup_iters": 12, "warmup_settled": True, "runs_per_block": 3, "blocks": 4}
    # a timed loop of 5 samples: no interval (inf) and no block medians (< 10 samples), written as null
    timed = MeasurementInfo(samples=5, median_ci95_rel=math.inf, clock="perf_counter")
    assert to_plain(timed) == {"samples": 5, "median_ci95_rel": None, "clock": "perf_counter",
                               "block_medians_ms": None, "other_cpu_share": None, "load_avg_1m": None}


def test_the_json_reads_back_into_the_same_fields() -> None:
    info = MeasurementInfo(samples=50, median_ci95_rel=0.004, block_medians_ms=[1.0, 1.1], measurement="screening",
                           earlier_run=EarlierRun(2.1, 480.0, "full", "2026-11-23T18:55:59+00:00", 2.0))
    row = BenchResult("ort-cpu", "fp32", 1, "screened", extra=info)
    text = json.dumps(to_plain(row))
    assert json.loads(text)["extra"]["earlier_run"]["beaten_by_more_than"] == 2.0  # the report's keys, unchanged
    back = MeasurementInfo.from_json(json.loads(text)["extra"] | {"a_key_of_a_later_version": 1})
    assert back == info
