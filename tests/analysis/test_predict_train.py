"""train --predict (issue 28): one training step on the synthetic calibration of test_predict.py, derived by
hand; the measured median step beside it; the CLI's refusal without a calibration."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.analysis.predict_train import optimizer_bytes, predict_step, with_measurement
from modelcost.core.errors import ModelcostError
from modelcost.core.training import TrainingBench, TrainingMemory, TrainingReport
from tests.analysis.test_predict import GELU, GEMM, cost_of, synthetic

# Pure fp16 AdamW of one 2048 x 2048 Linear: weights and gradients 2048^2 x 2 B = 8,388,608 B each, two states.
W = 2048 * 2048 * 2
COUNTS = TrainingReport("m", 1, "adamw", "fp16", forward_macs=2048**3, backward_macs=2 * 2048**3,
                        memory=TrainingMemory(weights_bytes=W, gradients_bytes=W, optimizer_state_bytes=2 * W))


def test_a_training_step_eager_and_compiled() -> None:
    forward = cost_of(GEMM, GELU)
    # optimizer: 2 W + G + 2 S = 2 x 8,388,608 + 8,388,608 + 2 x 16,777,216 = 58,720,256 B -> 2 + 58.720256 us
    assert optimizer_bytes(COUNTS) == 58_720_256
    eager = predict_step(forward, COUNTS, synthetic(), "fp16", "eager", 1, table=[])
    # forward: GEMM 0.402653184 ms (test_predict: compute-bound), GELU 6.194304 us (memory).
    # backward: r = 2 x 2048^3 / 2048^3 = 2: the GEMM's 2 x 0.402653184 ms split over 2 kernels; GELU's memory
    #   x 1.5 = 9.291456 us. Kernels: 0.402653184 + 0.006194304 + 0.805306368 + 0.009291456 = 1.223445312 ms;
    #   5 kernels x 10 us of host time < that: no waiting. + optimizer 0.060720256 ms = 1.284165568 ms.
    assert eager.latency_ms == pytest.approx(1.284165568) and eager.kernels == 6
    assert eager.backend == "train-eager" and eager.error_basis.startswith("error unknown")
    compiled = predict_step(forward, COUNTS, synthetic(), "fp16", "compile", 1, table=[])
    # compile fuses the elementwise GELU (forward and backward) away: 3 x 0.402653184 + 0.060720256 ms
    assert compiled.latency_ms == pytest.approx(1.268679808) and compiled.kernels == 4


def test_measured_step_beside_the_prediction() -> None:
    pred = predict_step(cost_of(GEMM, GELU), COUNTS, synthetic(), "fp16", "eager", 1, table=[])
    runs = [TrainingBench("fp16", 1, "ok", variant="compile", step_time_ms=9.0),
            TrainingBench("fp16", 1, "ok", variant="eager", step_time_ms=1.5)]
    with_measurement(pred, runs)
    # (1.284165568 - 1.5) / 1.5 = -14.3889621%
    assert pred.measured_ms == 1.5 and pred.error_pct == pytest.approx(-14.3889621)


def test_an_unknown_precision_or_no_forward_macs_is_refused() -> None:
    with pytest.raises(ModelcostError, match="training precision 'int8'"):
        predict_step(cost_of(GEMM), COUNTS, synthetic(), "int8", "eager", 1, table=[])
    with pytest.raises(ModelcostError, match="no MACs"):
        predict_step(cost_of(GELU), TrainingReport("m", 1, "adamw", "fp16"), synthetic(), "fp16", "eager", 1,
                     table=[])


def test_train_predict_without_a_calibration_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from modelcost.cli import app

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["train", "zoo:bert-tiny", "--static", "--predict", "--target-gpu", "H100 SXM"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "run 'modelcost calibrate'" in result.output


def test_train_static_predict_on_a_target_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import json

    from modelcost.cli import app
    from modelcost.core import calibration as calib
    from modelcost.core.calibration import AttentionPoint
    from modelcost.hardware.specs import spec_from_table

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    cal = synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops)
    cal.gemm_efficiency["fp32"] = {"m:s n:s k:s": 0.3}
    cal.attention.append(AttentionPoint("fp32", 128, 64, 0.1))
    calib.save(cal, tmp_path)
    out = tmp_path / "t.json"
    result = CliRunner().invoke(app, ["train", "zoo:bert-tiny", "--static", "--predict", "--target-gpu", "H100 SXM",
                                      "--json", str(out)])
    assert result.exit_code == 0, result.output
    preds = json.loads(out.read_text())["training"]["predictions"]
    assert [(p["backend"], p["precision"], p["gpu"]) for p in preds] == [
        ("train-eager", "fp32", "H100 SXM"), ("train-compile", "fp32", "H100 SXM")]
    assert all(p["latency_ms"] > 0 and p["measured_ms"] is None for p in preds)
    assert "predicted latency (--predict)" in result.output
