"""The latency predictor's measured residual (issue 28): the committed fit, a prediction multiplied by its
backend's factor and saying so, validation rows bound to the fit they were measured under, and the fitting
script's median in log space and cross-validation, hand-derived."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest

from modelcost.analysis import predict_residual
from modelcost.analysis.predict import predict
from modelcost.analysis.predict_table import ErrorEntry
from modelcost.analysis.predict_residual import NONE, Residual, fit_id, load, residual_for
from tests.analysis.test_predict import GEMM, cost_of, synthetic

ROOT = Path(__file__).resolve().parents[2]


def fit_script() -> Any:
    spec = importlib.util.spec_from_file_location("predict_fit_residual",
                                                  ROOT / "benchmarks" / "predict_fit_residual.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_committed_fit_reads_and_names_every_validated_backend() -> None:
    committed = load()
    assert set(committed) == {"torch-eager", "torch-half", "torch-compile-cudagraph", "ort-cuda"}
    doc = json.loads(predict_residual.RESIDUAL_FILE.read_text())
    # the id is the hash of the factors as stored, so a hand edit of one factor is another fit
    assert {r.fit for r in committed.values()} == {doc["fit"]} == {fit_id({b: r["factor"] for b, r in
                                                                           doc["backends"].items()})}
    assert all(1.0 < r.factor < 1.5 for r in committed.values())  # the held-out sets ran slower than predicted
    assert residual_for("hf-static-compile") == NONE  # generation: no fit, no factor


def test_a_missing_or_foreign_file_means_no_residual(tmp_path: Path) -> None:
    assert load(str(tmp_path / "none.json")) == {}
    (tmp_path / "bad.json").write_text("{not json")
    assert load(str(tmp_path / "bad.json")) == {}
    (tmp_path / "other.json").write_text(json.dumps({"schema": "other/1", "backends": {"torch-eager": {"factor": 2}}}))
    assert load(str(tmp_path / "other.json")) == {}


def test_a_prediction_is_the_kernel_model_times_its_backends_factor() -> None:
    cal = synthetic()
    alone = predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[], residuals={})
    assert (alone.residual_factor, alone.residual_fit) == (1.0, "")
    # test_gemm_at_known_efficiency_and_waves: the GEMM's kernel is 0.402653184 ms, and CUDA graphs add one 20 us
    # replay: 0.422653184 ms from the kernel model; x 1.25 = 0.52831648 ms.
    assert alone.latency_ms == pytest.approx(0.422653184)
    fitted = {"torch-compile-cudagraph": Residual(1.25, "abcd1234")}
    pred = predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[], residuals=fitted)
    assert pred.latency_ms == pytest.approx(0.422653184 * 1.25) == pytest.approx(0.52831648)
    assert (pred.compute_ms, pred.overhead_ms) == (alone.compute_ms, alone.overhead_ms)  # the kernel model's own
    assert (pred.residual_factor, pred.residual_fit) == (1.25, "abcd1234")


def test_a_validation_row_holds_only_for_the_fit_it_was_measured_under() -> None:
    cal = synthetic()
    row = ErrorEntry("Test GPU", "Test GPU", "torch-compile-cudagraph", "fp16", 16, 12.0, 30.0, 40.0, features=(),
                     low_cases=8, residual="abcd1234")
    same = predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[row],
                   residuals={"torch-compile-cudagraph": Residual(1.25, "abcd1234")})
    assert same.expected_error_pct == 12.0 and same.expected_low_pct == 50.0
    none = predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[row], residuals={})
    assert none.expected_error_pct is None
    assert none.error_basis.startswith("error unknown") and "under the measured residual fit abcd1234" in \
        none.error_basis and "this prediction is without a measured residual" in none.error_basis


def case(backend: str, predicted_ms: float, measured_ms: float, **extra: Any) -> dict:
    return {"model": "m", "gpu": "H100 SXM", "calibrated_on": "H100 SXM", "backend": backend, "precision": "fp16",
            "batch": 1, "predicted_ms": predicted_ms, "measured_ms": measured_ms, **extra}


def test_the_factor_is_the_median_ratio_in_log_space() -> None:
    script = fit_script()
    # ratios measured / model 1.0, 1.21, 2.0 and 1.1: the median of the logs of 1.0, 1.1, 1.21, 2.0 is the mean of
    # ln 1.1 and ln 1.21, so the factor is sqrt(1.1 x 1.21) = sqrt(1.331) = 1.153690...
    cases = [case("torch-eager", 1.0, 1.0), case("torch-eager", 1.0, 1.21), case("torch-eager", 2.0, 4.0),
             case("torch-eager", 10.0, 11.0), case("ort-cuda", 1.0, 0.5)]
    factors = script.fit(cases)
    assert factors["torch-eager"] == pytest.approx(math.sqrt(1.1 * 1.21)) == pytest.approx(1.153690)
    assert factors["ort-cuda"] == pytest.approx(0.5)
    # a row written under a residual is divided back to the kernel model's figure (model_ms, or predicted / factor)
    assert script.model_ms(case("torch-eager", 2.5, 1.0, residual_factor=1.25)) == pytest.approx(2.0)
    assert script.model_ms(case("torch-eager", 2.5, 1.0, model_ms=1.5, residual_factor=1.25)) == 1.5
    # a transferred prediction is not fitted on
    assert script.usable([case("torch-eager", 1.0, 1.0, calibrated_on="H200")]) == []


def test_cross_validation_predicts_each_set_from_the_others() -> None:
    script = fit_script()
    sets = {"a": [case("torch-eager", 1.0, 1.2)], "b": [case("torch-eager", 1.0, 1.5)]}
    rows = {r["held_out"]: r for r in script.cross_validation(sets)}
    # set a under b's factor 1.5: predicted 1.5 against 1.2 measured, +25%; the kernel model alone: -16.67%
    assert rows["a"]["factors"] == {"torch-eager": 1.5}
    assert rows["a"]["with_residual"] == {"cases": 1, "median_pct": 25.0, "p90_pct": 25.0, "low_cases": 0}
    assert rows["a"]["kernel_model"]["median_pct"] == pytest.approx(16.7)
    # set b under a's factor 1.2: 1.2 against 1.5, -20%, still low
    assert rows["b"]["with_residual"] == {"cases": 1, "median_pct": 20.0, "p90_pct": 20.0, "low_cases": 1}


def test_the_fitting_script_writes_a_file_the_predictor_reads(tmp_path: Path) -> None:
    import subprocess
    import sys

    for name, measured in (("s1", 1.2), ("s2", 1.5)):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(case("torch-half", 1.0, measured)) + "\n")
    out = tmp_path / "residuals.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "predict_fit_residual.py"),
                           str(tmp_path / "s1.jsonl"), str(tmp_path / "s2.jsonl"), "--out", str(out)],
                          capture_output=True, text=True, check=True)
    # two cases, ratios 1.2 and 1.5: the median of two logs is their mean, sqrt(1.8) = 1.341641
    assert "torch-half: x1.342 (2 cases)" in done.stdout
    got = load(str(out))["torch-half"]
    assert got.factor == pytest.approx(1.3416) and got.fit == fit_id({"torch-half": 1.3416})


def test_the_table_says_what_the_prediction_includes() -> None:
    from modelcost.report import console_predict

    cal = synthetic()
    fitted = {"torch-compile-cudagraph": Residual(1.25, "abcd1234")}
    pred = predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[], residuals=fitted)
    caption = str(console_predict.predictions_table([pred]).caption)
    assert "the kernel model x its backend's measured residual (x1.25 torch-compile-cudagraph" in caption
    alone = predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[], residuals={})
    assert "residual" not in str(console_predict.predictions_table([alone]).caption)


def test_the_committed_fit_is_the_script_s_fit_of_the_committed_sets() -> None:
    # predict_residuals.json names the sets it was fitted on; fitting them again gives its factors and its id, so
    # the file is what benchmarks/predict_fit_residual.py made of them (not a hand edit, not another set)
    script = fit_script()
    doc = json.loads(predict_residual.RESIDUAL_FILE.read_text())
    cases = [c for entry in doc["fitted_on"]["sets"] for c in script.usable(
        [json.loads(line) for line in (ROOT / entry["file"]).read_text().splitlines() if line.strip()])]
    assert len(cases) == doc["fitted_on"]["cases"] == 372
    factors = script.fit(cases)
    assert {b: round(f, 4) for b, f in factors.items()} == {b: r["factor"] for b, r in doc["backends"].items()}
    assert fit_id(factors) == doc["fit"]
