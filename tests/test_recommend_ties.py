"""recommend knows a tie (issue 9): configs whose throughput intervals overlap are a tie within measurement noise,
broken by accuracy vs the FP32 reference, then peak memory, then simplicity, and the reasons say which rule."""

from __future__ import annotations

from modelcost.core.types import AccuracyStats, BenchResult, LatencyStats
from modelcost.decide.recommend import break_tie, objective_interval, recommend


def res(backend: str, precision: str, p50: float, ci: float = 0.01, max_abs: float = 0.01, top1: float | None = 1.0,
        cosine: float = 0.9999, mem_gb: float = 1.0, batch: int = 1) -> BenchResult:
    lat = LatencyStats(count=200, p50=p50, p90=p50, p95=p50, p99=p50 * 1.05, mean=p50, std=0.01, min=p50,
                       max=p50 * 1.1)
    acc = None if precision == "fp32" else AccuracyStats(max_abs, max_abs / 10, cosine, top1, "fp32")
    r = BenchResult(backend=backend, precision=precision, batch_size=batch, status="ok", latency_ms=lat,
                    throughput_ips=batch / p50 * 1e3, gpu_memory_peak_bytes=int(mem_gb * 1e9), accuracy=acc)
    r.extra["median_ci95_rel"] = ci
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
