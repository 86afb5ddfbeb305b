"""recommend: constraints, the best config and why, the Pareto front, and what fails when nothing fits."""

from __future__ import annotations

import dataclasses

import pytest

from modelcost.core.errors import ModelcostError
from modelcost.core.types import AccuracyStats, BenchResult, LatencyStats
from modelcost.decide.constraints import Constraints, accuracy_drop_pct
from modelcost.decide.recommend import label, pareto_front, recommend


def lat(p50: float, p99: float | None = None) -> LatencyStats:
    p99 = p50 * 1.1 if p99 is None else p99
    return LatencyStats(count=100, p50=p50, p90=p50, p95=p50, p99=p99, mean=p50, std=0.01, min=p50, max=p99)


def res(backend: str, precision: str, batch: int, p50: float, p99: float | None = None, mem_gb: float | None = 1.0,
        top1: float | None = None, cosine: float = 1.0, status: str = "ok") -> BenchResult:
    acc = None if top1 is None and precision == "fp32" else AccuracyStats(0.01, 0.01, cosine, top1, "fp32")
    return BenchResult(backend=backend, precision=precision, batch_size=batch, status=status,
                       latency_ms=lat(p50, p99) if status == "ok" else None,
                       throughput_ips=batch / p50 * 1000 if status == "ok" else None,
                       gpu_memory_peak_bytes=None if mem_gb is None else int(mem_gb * 1e9),
                       accuracy=acc if status == "ok" else None)


# Throughput = batch / p50: A 1/2ms = 500 ips; B 8/4ms = 2000; C 64/20ms = 3200; D 64/16ms = 4000; E 1/1ms = 1000.
A = res("torch-eager", "fp32", 1, 2.0, 2.5)
B = res("torch-eager", "fp32", 8, 4.0, 5.0)
C = res("ort-cuda", "fp32", 64, 20.0, 25.0, mem_gb=3.0)
D = res("ort-cuda", "fp16", 64, 16.0, 18.0, mem_gb=2.0, top1=0.99)
E = res("ort-cuda", "fp16", 1, 1.0, 1.2, top1=0.99)
ALL = [A, B, C, D, E]


def test_no_constraints_picks_the_highest_throughput():
    rec = recommend(ALL)
    assert rec.best is D  # 4000 ips is the highest
    assert rec.considered == 5 and len(rec.feasible) == 5
    assert "highest throughput (4,000 ips)" in rec.reasons[0]
    # next best is C at 3200 ips: D has 4000/3200 - 1 = 25% more throughput
    assert "ort-cuda fp32 b64 at 3,200 ips (ort-cuda fp16 b64 has 25.0% more)" in rec.reasons[1]


def test_latency_limit_uses_p99_by_default():
    # p99 <= 6 ms: A (2.5), B (5.0), E (1.2) pass; C (25) and D (18) fail. Best throughput: B 2000 ips.
    rec = recommend(ALL, Constraints(max_latency_ms=6))
    assert rec.best is B
    assert {label(r) for r in rec.feasible} == {"torch-eager fp32 b1", "torch-eager fp32 b8", "ort-cuda fp16 b1"}
    assert "p99 latency 5 ms <= 6 ms" in rec.reasons


def test_latency_objective_picks_the_lowest_latency():
    rec = recommend(ALL, Constraints(max_latency_ms=6), objective="latency")
    assert rec.best is E


def test_accuracy_drop_excludes_reduced_precision():
    # D and E agree on top-1 for 99% of inputs: a 1% drop > 0.5% allowed. FP32 configs are the reference (0%).
    assert accuracy_drop_pct(D) == pytest.approx(1.0)
    assert accuracy_drop_pct(A) == 0.0
    rec = recommend(ALL, Constraints(max_accuracy_drop_pct=0.5))
    assert rec.best is C


def test_accuracy_drop_from_cosine_when_no_top1():
    r = res("ort-cuda", "fp16", 1, 1.0, cosine=0.998)
    r.accuracy = AccuracyStats(0.1, 0.1, 0.998, None, "fp32")
    assert accuracy_drop_pct(r) == pytest.approx(0.2)  # (1 - 0.998) x 100


def test_memory_not_measured_fails_the_memory_constraint():
    cpu = res("ort-cpu", "fp32", 1, 3.0, mem_gb=None)
    rec = recommend([cpu], Constraints(max_memory_gb=8))
    assert rec.best is None
    assert any("max_memory_gb: not measured for any config" in f for f in rec.failing)


def test_batch_size_filter():
    rec = recommend(ALL, Constraints(batch_sizes=(1,)))
    assert rec.best is E  # 1000 ips beats A's 500
    rec = recommend(ALL, Constraints(batch_sizes=(4,)))
    assert rec.best is None
    assert "no config was measured at batch 4 (measured: 1,8,64)" in rec.failing[0]


def test_nothing_fits_says_which_constraint_and_by_how_much():
    # min throughput 5000: the best is D at 4000 ips -> 1000 ips (20%) short.
    rec = recommend(ALL, Constraints(min_throughput_ips=5000))
    assert rec.best is None
    msg = rec.failing[0]
    assert msg.startswith("min_throughput_ips 5,000 fails for every config; the best is ort-cuda fp16 b64")
    assert "-1,000 ips, -20.0% short" in msg
    # max latency 1 ms p99: the lowest is E at 1.2 ms -> 0.2 ms (20%) over.
    rec = recommend(ALL, Constraints(max_latency_ms=1))
    assert "the best is ort-cuda fp16 b1: p99 latency 1.2 ms > 1 ms (+0.2 ms, +20.0% over)" in rec.failing[0]


def test_each_constraint_met_somewhere_but_not_jointly_names_the_closest():
    # latency <= 3 ms p99 holds for A, E; throughput >= 1500 holds for B, C, D: nobody has both.
    rec = recommend(ALL, Constraints(max_latency_ms=3, min_throughput_ips=1500))
    assert rec.best is None
    # E fails throughput by 500/1500 = 33%, A by 1000/1500 = 67%, B fails latency by 2/3 = 67%: E is closest.
    assert rec.failing[-1].startswith("closest: ort-cuda fp16 b1, which fails throughput 1,000 ips < 1,500 ips")


def test_pareto_front():
    # By p50: E (1 ms, 1000), A (2 ms, 500: dominated by E), B (4 ms, 2000), C (20 ms, 3200: dominated by D),
    # D (16 ms, 4000). Front by latency: E, B, D.
    assert [label(r) for r in pareto_front(ALL)] == ["ort-cuda fp16 b1", "torch-eager fp32 b8", "ort-cuda fp16 b64"]


def test_unmeasured_configs_are_listed_not_ranked():
    bad = res("tensorrt", "fp16", 1, 1.0, status="unavailable")
    bad.reason = "TensorRT not installed"
    rec = recommend([A, bad])
    assert rec.best is A
    assert rec.skipped == ["tensorrt (fp16): unavailable — TensorRT not installed"]
    empty = recommend([bad])
    assert empty.best is None and empty.failing == ["no measured config"]


def test_unavailable_backends_are_one_line_per_reason():
    """A backend that cannot run has one entry per precision: 5 entries, 2 reasons -> 2 lines (and a failure)."""
    def unavailable(backend: str, precision: str, reason: str) -> BenchResult:
        return BenchResult(backend, precision, 0, "unavailable", reason=reason)

    torch_only = "PyTorch backends need a PyTorch model"
    results = [unavailable("torch-eager", "fp32", torch_only), unavailable("torch-eager", "tf32", torch_only),
               unavailable("torch-half", "fp16", torch_only), unavailable("tensorrt", "fp16", "not installed"),
               unavailable("tensorrt", "int8", "not installed"),
               BenchResult("ort-cpu", "fp32", 8, "failed", reason="batch fixed at 1"), A]
    assert recommend(results).skipped == [
        "ort-cpu fp32 b8: failed (batch fixed at 1)",
        f"torch-eager (fp32, tf32), torch-half (fp16): unavailable — {torch_only}",
        "tensorrt (fp16, int8): unavailable — not installed",
    ]


def test_unstable_configs_are_neither_recommended_nor_rejected():
    """D has the best throughput but noisy timings: the recommendation is made from the stable ones (C is then
    the best at 3200 ips), D is listed as not decided on, and it is not on the Pareto front."""
    noisy = res("ort-cuda", "fp16", 64, 16.0, 18.0, mem_gb=2.0, top1=0.99)
    noisy.unstable = ["spread: CV 396% (limit 25%)"]
    rec = recommend([A, B, C, noisy, E])
    assert rec.best is C and noisy not in rec.pareto and rec.considered == 4
    assert rec.skipped == [("ort-cuda fp16 b64: unstable timings, not decided on (spread: CV 396% (limit 25%)); "
                            "re-run it on a quiet machine")]
    # With a limit only the noisy p99 would break, nothing is rejected on it: all noisy -> no decision at all.
    only_noisy = recommend([noisy], Constraints(max_latency_ms=1))
    assert only_noisy.best is None and only_noisy.failing == ["no config with stable timings"]
    assert "unstable timings" in only_noisy.reasons[0] and not only_noisy.checks


def test_the_issue_resnet18_case_always_says_what_it_would_pick_and_how_sure():
    """Issue 27: 'analyze zoo:resnet18 --batch-sizes 1,8' on a busy CPU read "Nothing meets the constraints" under
    "constraints: none": both b8 configs had 50 samples (a p99 needs 100), both b1 configs were unstable. The
    throughput objective ranks on the median (50 samples are plenty), so a b8 config is picked outright; were every
    config unstable, the pick is made all the same, tentative, with the flag as its caveat."""
    b8a, b8b = res("ort-cpu", "fp32", 8, 40.0), res("torch-cpu", "fp32", 8, 50.0)
    for r in (b8a, b8b):
        r.latency_ms = dataclasses.replace(r.latency_ms, count=50)
    b1 = [res("ort-cpu", "fp32", 1, 6.0), res("torch-cpu", "fp32", 1, 7.0)]
    for r in b1:
        r.unstable = ["busy machine: load average 4.5 on 2 CPUs"]
    rec = recommend([*b1, b8a, b8b])
    assert rec.best is b8a and rec.caveats == [] and rec.unranked == []  # 8 / 40 ms = 200 ips > 160 ips
    only_unstable = recommend(b1)  # 1 / 6 ms = 167 ips > 143 ips
    assert only_unstable.best is b1[0] and only_unstable.caveats[0].startswith("unstable timings (busy machine")
    assert only_unstable.reasons[0].startswith("tentative pick: ort-cpu fp32 b1 (unstable), the best throughput")


def test_bad_options_are_user_errors():
    with pytest.raises(ModelcostError):
        recommend(ALL, Constraints(latency_stat="p42"))
    with pytest.raises(ModelcostError):
        recommend(ALL, objective="cheapest")


# ---------------------------------------------------------------------------------------------------
# The command, on the CPU (ONNX Runtime CPU provider), through typer's CliRunner.

# --min-iters 100: recommend ranks on p99, which needs >= 100 samples (core/samples.py)
FAST_BENCH = ["--device", "cpu", "--min-time-s", "0", "--min-iters", "100", "--max-time-s", "0.3", "--warmup", "3"]


@pytest.fixture(scope="module")
def convnet(tmp_path_factory):
    from tests.decide.test_quantize import make_convnet

    return make_convnet(tmp_path_factory.mktemp("rec") / "convnet.onnx", channels=8)


def _cli(args):
    from typer.testing import CliRunner

    from modelcost.cli.app import app

    return CliRunner().invoke(app, args)


def test_cli_recommend_writes_the_report(convnet, tmp_path):
    out = tmp_path / "rep"
    r = _cli(["recommend", str(convnet), "--backends", "ort-cpu", "--batch-sizes", "1,4", "--max-latency-ms", "1000",
              "--out", str(out), *FAST_BENCH])
    assert r.exit_code == 0, r.output
    assert "recommended: ort-cpu fp32 b" in r.output
    assert "p99 latency" in r.output and "<= 1,000 ms" in r.output
    import json

    doc = json.loads((out / "report.json").read_text())
    assert doc["recommendation"]["best"]["backend"] == "ort-cpu"
    assert {b["batch_size"] for b in doc["benchmarks"]} == {1, 4}
    assert "## Recommendation" in (out / "report.md").read_text()


def test_cli_recommend_json_alone(convnet, tmp_path):
    # --json: the versioned report with the recommendation, and no report folder (nor its plots) unless asked
    import json

    path = tmp_path / "rec.json"
    r = _cli(["recommend", str(convnet), "--backends", "ort-cpu", "--batch-sizes", "1", "--json", str(path),
              *FAST_BENCH])
    assert r.exit_code == 0, r.output
    doc = json.loads(path.read_text())
    assert doc["recommendation"]["best"]["backend"] == "ort-cpu" and doc["benchmarks"][0]["batch_size"] == 1
    assert f"JSON report (with the recommendation): {path}" in r.output.replace("\n", "")
    assert list(tmp_path.iterdir()) == [path]


def test_cli_recommend_nothing_fits_exits_1(convnet):
    r = _cli(["recommend", str(convnet), "--backends", "ort-cpu", "--min-throughput", "1e12", *FAST_BENCH])
    assert r.exit_code == 1, r.output
    assert "nothing meets the constraints" in r.output
    assert "min_throughput_ips 1.00 T fails for every config; the best is ort-cpu fp32 b" in r.output


def test_cli_recommend_bad_input_is_one_line(tmp_path):
    r = _cli(["recommend", str(tmp_path / "missing.onnx"), "--device", "cpu"])
    assert r.exit_code == 1
    assert "Traceback" not in r.output
    r = _cli(["recommend", "x.onnx", "--latency-stat", "p42", "--device", "cpu"])
    assert r.exit_code == 1 and "Traceback" not in r.output


def test_cli_recommend_default_sweep_and_incomplete(convnet, monkeypatch):
    # No batch option: 1, 8 and 32 are measured. Ctrl-C during the sweep: recommended from what finished, exit 130.
    from modelcost.bench import runner

    r = _cli(["recommend", str(convnet), "--backends", "ort-cpu", *FAST_BENCH])
    assert r.exit_code == 0, r.output
    assert "ort-cpu fp32 b32" in r.output or "ort-cpu fp32 b8" in r.output

    original = runner.Sweep._run_config

    def interrupt_at_8(self, runner_, backend, precision, batch, baseline):
        if batch == 8:
            raise KeyboardInterrupt
        return original(self, runner_, backend, precision, batch, baseline)

    monkeypatch.setattr(runner.Sweep, "_run_config", interrupt_at_8)
    r = _cli(["recommend", str(convnet), "--backends", "ort-cpu", *FAST_BENCH])
    assert r.exit_code == 130, r.output
    assert "recommended: ort-cpu fp32 b1" in r.output
