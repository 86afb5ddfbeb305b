"""recommend --predict (issue 28): the pre-screen measures only the configs whose predicted latency, within the
predictor's validated error, may still win; with an unknown error it measures everything and says so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from modelcost.bench.plan import make_plan
from modelcost.bench.runner import run_benchmarks
from modelcost.core.types import BenchResult, LatencyPrediction
from modelcost.decide.constraints import Constraints
from modelcost.decide.prescreen import prescreen
from modelcost.hardware.specs import spec_from_table
from tests.bench.test_bench_runner import fast_config, tiny_model
from tests.analysis.test_predict import GELU, cost_of, synthetic


def pred(backend: str, batch: int, latency_ms: float, p90: float | None = 10.0) -> LatencyPrediction:
    return LatencyPrediction("H100 SXM", backend, "fp16", batch, latency_ms, latency_ms, 0.0, 1, "H100 SXM",
                             expected_error_pct=None if p90 is None else p90 / 2, expected_error_p90_pct=p90)


def test_a_config_predicted_far_slower_is_skipped_with_its_prediction() -> None:
    preds = [pred("a", 1, 1.0), pred("b", 1, 1.15), pred("c", 1, 3.0)]
    skip, notes = prescreen(preds, Constraints(), "latency")
    # a's worst case 1.0 x 1.1 = 1.1 ms; b's best 1.15 x 0.9 = 1.035 ms < 1.1: kept; c's best 2.7 ms > 1.1: skipped
    assert list(skip) == [("c", "fp16", 1)]
    assert "predicted 3.000 ms, p90 error 10% (2.700-3.300 ms)" in skip[("c", "fp16", 1)]
    assert "than a fp16 batch 1 at its high end (1.100 ms)" in skip[("c", "fp16", 1)]
    assert notes[0].startswith("pre-screen (--predict): 2 of 3 predicted configs measured; skipped: c fp16 batch 1")


def test_throughput_compares_batch_over_latency() -> None:
    # a: batch 8 in 1 ms -> 8,000/s, worst 8 / 1.1 ms = 7,273/s. b: batch 1 in 0.5 ms -> best 1 / 0.45 ms =
    # 2,222/s < 7,273: skipped. c: batch 8 in 1.2 ms -> best 8 / 1.08 ms = 7,407/s >= 7,273: kept.
    skip, _ = prescreen([pred("a", 8, 1.0), pred("b", 1, 0.5), pred("c", 8, 1.2)], Constraints(), "throughput")
    assert list(skip) == [("b", "fp16", 1)]


def test_limits_the_prediction_cannot_vouch_for_rule_nothing_out_against_another() -> None:
    preds = [pred("a", 1, 1.0), pred("c", 1, 3.0)]
    # a p99 limit: a median prediction never surely meets it, so a cannot rule c out; c's low end (2.7 ms) is
    # above the 2 ms limit though: it fails the limit whatever its tail.
    skip, _ = prescreen(preds, Constraints(max_latency_ms=2.0, latency_stat="p99"), "latency")
    assert list(skip) == [("c", "fp16", 1)] and "above --max-latency-ms 2" in skip[("c", "fp16", 1)]
    skip, notes = prescreen(preds, Constraints(max_memory_gb=10.0), "latency")  # memory: nothing predicts it
    assert skip == {} and "no config surely meets every limit" in notes[1]


def test_an_unknown_error_measures_everything_and_says_so() -> None:
    skip, notes = prescreen([pred("a", 1, 1.0), pred("c", 1, 30.0, p90=None)], Constraints(), "latency")
    assert skip == {}
    assert "every config measured" in notes[0] and "unknown for c fp16 batch 1" in notes[0]


def test_prescreen_plan_marks_the_far_out_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.analysis.predict_table import ErrorEntry
    from modelcost.runs import predict as runs_predict

    gpu = spec_from_table("H100 SXM")
    monkeypatch.setattr(runs_predict, "target_gpus", lambda here, target: [gpu])
    table = [ErrorEntry("H100 SXM", "H100 SXM", b, "fp16", 8, 5.0, 10.0, 20.0)
             for b in ("torch-eager", "torch-compile-cudagraph")]
    monkeypatch.setattr("modelcost.analysis.predict.validation_table", lambda path=None: table)
    monkeypatch.setattr("modelcost.analysis.predict_residual.load", lambda path=None: {})  # the kernel model alone
    cal = synthetic("H100 SXM", **gpu.peak_tflops)
    report = SimpleNamespace(gpu=None, cost=cost_of(GELU), notes=[])
    plan = SimpleNamespace(runnable=[("torch-eager", "fp16"), ("torch-compile-cudagraph", "fp16"),
                                     ("ort-cpu", "fp32")], prescreened={})
    runs_predict.prescreen_plan(report, plan, [1], [cal], Constraints(), "latency")
    # GELU alone: eager waits on the host, 10 us (test_predict); the compiled graph fuses it away and replays in
    # 20 us. Eager's worst 11 us < the graph's best 18 us: the graph is skipped. ort-cpu has no model: measured.
    assert list(plan.prescreened) == [("torch-compile-cudagraph", "fp16", 1)]
    row = plan.prescreened[("torch-compile-cudagraph", "fp16", 1)]
    assert row.status == "screened" and "predicted 0.020 ms" in row.reason and "pre-screen" in row.reason
    assert any("ort-cpu fp32 batch 1" in n for n in report.notes)


def test_the_sweep_does_not_measure_a_prescreened_config(tmp_path: Path) -> None:
    model, config = tiny_model(), fast_config(tmp_path)
    plan = make_plan(model, ["ort-cpu"], None, config)
    plan.prescreened[("ort-cpu", "fp32", 2)] = BenchResult("ort-cpu", "fp32", 2, "screened", reason="not measured")
    results, _ = run_benchmarks(model, batch_sizes=[1, 2], config=config, plan=plan)
    got = {(r.batch_size, r.status) for r in results}
    assert got == {(1, "ok"), (2, "screened")}
    assert next(r for r in results if r.batch_size == 2).latency_ms is None


def test_recommend_predict_without_a_calibration_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from modelcost.cli import app

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    sample = Path(__file__).resolve().parents[2] / "sample_models" / "resnet_tiny.onnx"
    result = CliRunner().invoke(app, ["recommend", str(sample), "--predict", "--device", "cpu"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "run 'modelcost calibrate'" in result.output
