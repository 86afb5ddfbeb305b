"""Percentiles from few samples: the sample count is shown next to them, a figure with fewer samples than its
statistic needs is marked, and ``recommend`` does not rank a config on it (and says why)."""

from __future__ import annotations

import dataclasses
import io

import pytest
from tests.report import test_report_data as data
from rich.console import Console

from modelcost.core.samples import enough_samples, footnote, min_samples, too_few_reason
from modelcost.core.types import BenchResult, LatencyStats
from modelcost.decide.constraints import Constraints
from modelcost.decide.recommend import label, recommend
from modelcost.report.console_bench import print_benchmarks
from modelcost.report.html import render_html
from modelcost.report.markdown import render_markdown


def lat(p50: float, count: int) -> LatencyStats:
    return LatencyStats(count=count, p50=p50, p90=p50 * 1.05, p95=p50 * 1.08, p99=p50 * 1.2, mean=p50, std=0.01,
                        min=p50 * 0.9, max=p50 * 1.3)


def ok(backend: str, batch: int, p50: float, count: int) -> BenchResult:
    return BenchResult(backend, "fp32", batch, "ok", latency_ms=lat(p50, count), throughput_ips=batch / p50 * 1000,
                       gpu_memory_peak_bytes=1 << 30)


def test_minimum_samples_per_statistic():
    # a tail percentile q needs n >= 1 / (1 - q): p90 1/0.10 = 10, p95 1/0.05 = 20, p99 1/0.01 = 100,
    # p99.9 1/0.001 = 1000; the median needs 6 (its distribution-free 95% interval); the mean has no minimum
    assert [min_samples(s) for s in ("p50", "p90", "p95", "p99", "p99.9", "mean")] == [6, 10, 20, 100, 1000, 0]
    assert enough_samples(lat(1.0, 100), "p99") and not enough_samples(lat(1.0, 99), "p99")
    assert too_few_reason(lat(1.0, 4), "p99") == "p99 from 4 samples (p99 needs >= 100)"
    assert too_few_reason(lat(1.0, 1), "p50") == "p50 from 1 sample (p50 needs >= 6)"
    assert too_few_reason(lat(1.0, 6), "p50") is None and footnote([lat(1.0, 200)]) is None


def _run_with_a_four_sample_config():
    run = data.run()  # its configs have 200 samples: enough for p50 / p90 / p99
    few = dataclasses.replace(data.bench("ort-cuda", "fp16", 32, 3.0), latency_ms=lat(3.0, 4), budget_hit=True)
    return dataclasses.replace(run, benchmarks=[*run.benchmarks, few])


def test_console_table_marks_percentiles_from_few_samples():
    # the console table leaves the sample count n to the report (issue 26: one screen line per config); the mark
    # and its note say where there are too few
    run = _run_with_a_four_sample_config()
    buf = io.StringIO()
    print_benchmarks(run.benchmarks, console=Console(file=buf, width=200, highlight=False))
    text = buf.getvalue()
    row = next(line for line in text.splitlines() if "fp16" in line and " 32 " in line)
    # 4 samples: p50 3.000 (needs 6) and p99 3 x 1.2 = 3.600 (needs 100) are both marked
    assert "3.000*" in row and "3.600*" in row
    ok_row = next(line for line in text.splitlines() if "fp32" in line and " 1 " in line and "ort-cuda" in line)
    assert "*" not in ok_row
    assert "* fewer samples than the statistic needs (p50 >= 6, p99 >= 100" in " ".join(text.split())


def test_markdown_and_html_show_n_and_mark_percentiles_from_few_samples():
    run = _run_with_a_four_sample_config()
    md = render_markdown(run)
    assert "| config | batch | n | p50 ms | p90 ms | p99 ms |" in md
    # 4 samples: p50 3.000, p90 3 x 1.05 = 3.150, p99 3.600, all marked (Markdown escapes '*')
    assert "| 4 | 3.000\\* | 3.150\\* | 3.600\\* |" in md
    assert "fewer samples than the statistic needs (p50 \\>= 6, p90 \\>= 10, p99 \\>= 100" in md  # '>' escaped
    html = render_html(run)
    assert "<th>n</th>" in html and '<td class="num">3.600*</td>' in html
    assert "fewer samples than the statistic needs" in html


def test_recommend_does_not_rank_on_a_p99_from_few_samples():
    # FAST has the best throughput (64 / 8 ms = 8000 ips) but only 12 samples: p99 needs 100, so it is not
    # ranked; SLOW (8 / 4 ms = 2000 ips, 150 samples) is recommended.
    fast, slow = ok("ort-cuda", 64, 8.0, 12), ok("torch-eager", 8, 4.0, 150)
    rec = recommend([fast, slow], Constraints(max_latency_ms=50))
    assert rec.best is slow and rec.considered == 2
    assert rec.unranked == ["ort-cuda fp32 b64: not ranked, p99 from 12 samples (p99 needs >= 100)"]
    assert fast not in rec.pareto and [label(r) for r in rec.feasible] == ["torch-eager fp32 b8"]
    assert "(2 measured, 1 not ranked for too few samples)" in rec.reasons[0]
    # on the median, 12 samples are enough (p50 needs 6): FAST is ranked and wins
    assert recommend([fast, slow], Constraints(latency_stat="p50")).best is fast


def test_recommend_with_no_config_that_has_enough_samples_picks_tentatively_and_says_so():
    # Issue 27: a run always says what it would pick and how sure it is. 3 samples: the median needs 6, so nothing
    # can be ranked; the one config is the tentative pick, with the sample count as its caveat.
    rec = recommend([ok("ort-cuda", 1, 1.0, 3)])
    assert rec.best is not None and rec.pareto == [] and rec.caveats == ["p50 from 3 samples (p50 needs >= 6)"]
    assert rec.reasons[0].startswith("tentative pick: ort-cuda fp32 b1, the best throughput of the 1 config")
    # The throughput objective ranks on the median alone: the p99 rule does not apply without a latency limit.
    assert "none of the 1 measured configs has enough timed samples to be ranked on p99" in rec.reasons[1]
    # With a latency limit the p99 is used, and a config the limit rules out is not picked even tentatively.
    nothing = recommend([ok("ort-cuda", 1, 1.0, 3)], Constraints(max_latency_ms=0.5))
    assert nothing.best is None and nothing.failing and nothing.failing[0].startswith("too few samples")


def test_throughput_objective_ranks_on_the_median_alone():
    # Issue 27's sweep report: b64 rows with 55 samples (p99 needs 100) were dropped under "constraints: none".
    b64, b1 = ok("torch-half", 64, 5.38, 55), ok("ort-cuda", 1, 1.27, 400)  # 11,896 ips vs 787 ips
    rec = recommend([b64, b1])
    assert rec.best is b64 and rec.unranked == []
    assert recommend([b64, b1], Constraints(max_latency_ms=100)).best is b1  # a p99 limit: p99 needs 100 samples


@pytest.mark.parametrize("stat,needed", [("p90", 10), ("p95", 20)])
def test_other_tail_statistics(stat: str, needed: int):
    few, enough = ok("a", 1, 1.0, needed - 1), ok("b", 1, 2.0, needed)
    # a latency limit puts the statistic to use (without one, the throughput objective ranks on the median)
    rec = recommend([few, enough], Constraints(latency_stat=stat, max_latency_ms=100))
    assert rec.best is enough
    assert rec.unranked == [f"a fp32 b1: not ranked, {stat} from {needed - 1} samples ({stat} needs >= {needed})"]
