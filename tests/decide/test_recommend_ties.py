"""recommend knows a tie (issue 9): configs whose throughput intervals overlap are a tie within measurement noise,
broken by accuracy vs the FP32 reference, then peak memory, then simplicity, and the reasons say which rule."""

from __future__ import annotations

from modelcost.core.types import AccuracyStats, BenchResult, LatencyStats
from modelcost.decide.recommend import recommend
from modelcost.decide.ties import break_tie, objective_interval


def res(backend: str, precision: str, p50: float, ci: float = 0.01, max_abs: float = 0.01, top1: float | None = 1.0,
        cosine: float = 0.9999, mem_gb: float = 1.0, batch: int = 1) -> BenchResult:
    lat = LatencyStats(count=200, p50=p50, p90=p50, p95=p50, p99=p50 * 1.05, mean=p50, std=0.01, min=p50,
                       max=p50 * 1.1)
    acc = None if precision == "fp32" else AccuracyStats(max_abs, max_abs / 10, cosine, top1, "fp32")
    r = BenchResult(backend=backend, precision=precision, batch_size=batch, status="ok", latency_ms=lat,
                    throughput_ips=batch / p50 * 1e3, gpu_memory_peak_bytes=int(mem_gb * 1e9), accuracy=acc)
    r.extra.median_ci95_rel = ci
    return r


def test_interval_is_the_median_ci_applied_to_the_objective():
    r = res("torch-eager", "fp32", 2.0, ci=0.01)  # 1/2 ms = 500 ips, +-1% -> 495..505
    assert objective_interval(r, "throughput", "p99") == (495.0, 505.0)
    # latency objective at p99: p99 = 2.1 ms, +-1% -> 2.079..2.121
    lo, hi = objective_interval(r, "latency", "p99")
    assert round(lo, 4) == 2.079 and round(hi, 4) == 2.121


def test_the_issue_case_bf16_ahead_by_noise_loses_to_more_accurate_fp16():
    # bf16: 1/0.992 ms = 1008.1 ips +-1% -> 998.0..1018.1; fp16: 1/1.0 ms = 1000 ips +-1% -> 990..1010: overlap.
    # bf16 is 0.8% faster (inside the noise), fp16 is 8x more accurate (max abs err 0.13 vs 1.08): fp16 wins.
    bf16 = res("torch-compile-cudagraph", "bf16", 0.992, max_abs=1.08)
    fp16 = res("torch-compile-cudagraph", "fp16", 1.0, max_abs=0.13)
    rec = recommend([bf16, fp16])
    assert rec.best is fp16
    assert rec.tie == [fp16, bf16] and rec.tie_rule == "accuracy vs the fp32 reference"
    text = "\n".join(rec.reasons)
    assert "tie within measurement noise" in text and "decided by accuracy vs the fp32 reference" in text
    assert "max abs err 0.13" in text and "max abs err 1.08" in text


def test_beyond_the_noise_the_faster_config_wins_without_a_tie():
    # 1/0.9 ms = 1111 ips +-1% -> 1100..1122 vs 1000 +-1% -> 990..1010: no overlap, bf16 wins on speed.
    bf16 = res("torch-compile-cudagraph", "bf16", 0.9, max_abs=1.08)
    fp16 = res("torch-compile-cudagraph", "fp16", 1.0, max_abs=0.13)
    rec = recommend([bf16, fp16])
    assert rec.best is bf16 and rec.tie == [] and "tie" not in "\n".join(rec.reasons)


def test_equal_accuracy_then_memory_then_simplicity():
    # Both fp16 with the same accuracy: memory decides (1 GB < 2 GB).
    a = res("torch-compile", "fp16", 1.0, mem_gb=2.0)
    b = res("ort-cuda", "fp16", 1.005, mem_gb=1.0)
    tied, rule = break_tie([a, b], "throughput", "p99")
    assert tied[0] is b and rule == "peak GPU memory"
    # Same accuracy and memory: simplicity decides (eager 0 < compile 2), though compile measured 0.5% faster.
    c = res("torch-compile", "fp16", 1.0)
    d = res("torch-half", "fp16", 1.005)
    tied, rule = break_tie([c, d], "throughput", "p99")
    assert tied[0] is d and rule.startswith("simplicity")


def test_unknown_interval_is_never_a_tie():
    a = res("torch-eager", "fp32", 1.0, ci=float("inf"))
    b = res("torch-half", "fp16", 1.001)
    assert break_tie([a, b], "throughput", "p99") == ([], "")


def test_accuracy_within_noise_is_equal_and_memory_decides():
    # The H100 case (BERT-base, recommend cold, sixth session): torch-compile-cudagraph fp16 at b256 18,111 ips
    # +-0.95% (17,939..18,283) and at b64 17,934 ips +-0.11% (17,914..17,953) overlap: a tie. Their max abs errors,
    # 0.0132 and 0.0139, are the same precision on other kernels (within 1.5x): not a decision. Memory is:
    # 0.75 GB < 1.32 GB, so b64, and the rule printed is memory, not accuracy.
    b256 = res("torch-compile-cudagraph", "fp16", 256 / 18111.0 * 1e3, ci=0.0095, max_abs=0.0132, mem_gb=1.32,
               batch=256)
    b64 = res("torch-compile-cudagraph", "fp16", 64 / 17934.0 * 1e3, ci=0.0011, max_abs=0.0139, mem_gb=0.75,
              batch=64)
    tied, rule = break_tie([b256, b64], "throughput", "p99")
    assert tied == [b64, b256] and rule == "peak GPU memory"
    # 1.5x apart is still the same accuracy; beyond it accuracy decides (the issue's 8x)
    import dataclasses

    b64.accuracy = dataclasses.replace(b64.accuracy, max_abs_err=0.0132 * 1.6)
    assert break_tie([b256, b64], "throughput", "p99") == ([b256, b64], "accuracy vs the fp32 reference")


def test_the_rule_named_is_the_one_that_set_aside_the_strongest_rival():
    # a (fastest) loses on memory to b; c is set aside earlier, by accuracy: the pick b beat a on memory.
    a = res("torch-compile", "fp16", 1.000, mem_gb=2.0)
    b = res("torch-half", "fp16", 1.004, mem_gb=1.0)
    c = res("ort-cuda", "fp16", 1.008, max_abs=0.5)
    tied, rule = break_tie([a, b, c], "throughput", "p99")
    assert tied[0] is b and rule == "peak GPU memory"


def test_a_difference_inside_the_between_run_noise_is_a_tie():
    # Issue 27: within one run the intervals are tight (+-0.1%: 1/0.99 ms = 1010.1 ips -> 1009.1..1011.1 vs
    # 1000 -> 999..1001, apart), but between runs the figures move by 3% (between_run_ci95_rel 0.03:
    # 979.8..1040.4 vs 970..1030, overlapping): a tie, then the tie rule (accuracy: fp16 8x more accurate).
    bf16 = res("torch-compile-cudagraph", "bf16", 0.99, ci=0.001, max_abs=1.08)
    fp16 = res("torch-compile-cudagraph", "fp16", 1.0, ci=0.001, max_abs=0.13)
    assert recommend([bf16, fp16]).best is bf16  # the within-run noise alone: bf16 is ahead
    for r in (bf16, fp16):
        r.extra.between_run_ci95_rel = 0.03
    rec = recommend([bf16, fp16])
    assert rec.best is fp16 and rec.tie_rule == "accuracy vs the fp32 reference"
