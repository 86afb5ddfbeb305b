"""ort-cuda fp16 sessions keep ONNX Runtime's default ``use_tf32`` (on) since 1838ed7: with it off, ORT's fp16 convs
left out their tensor-core kernels (FCN-ResNet-50 at batch 64 on an H100: 205.5 ms off, 37.4 ms on). A calibration
records the option its ORT factor was measured with (``Calibration.ort_use_tf32``, feature "ort_fp16_default"), and
the validation's tables leave out the ort-cuda fp16 cases measured with it off (benchmarks/predict_validate.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from modelcost.bench.calibrate_ort import measured_use_tf32
from modelcost.core import calibration as calib
from tests.analysis.test_predict import synthetic, validation_script

FACTOR = {"fp32": {"conv": 1.1}, "fp16": {"conv": 1.4}}


def test_the_option_is_recorded_per_measured_precision() -> None:
    # fp32: off (full fp32, as torch-eager); fp16: ORT's default, on; a precision without factors records nothing
    assert measured_use_tf32(FACTOR) == {"fp32": "0", "fp16": "1"}
    assert measured_use_tf32({"fp32": {"conv": 1.1}, "fp16": {}}) == {"fp32": "0"}


def test_the_feature_is_held_only_with_an_fp16_factor_measured_at_the_default() -> None:
    old = dataclasses.replace(synthetic(), ort_factor=FACTOR)
    new = dataclasses.replace(old, ort_use_tf32={"fp32": "0", "fp16": "1"})
    assert "ort_fp16_default" not in calib.features(old)
    assert calib.features(new)[-1] == "ort_fp16_default"
    # the option without an fp16 factor is not the feature
    assert "ort_fp16_default" not in calib.features(dataclasses.replace(new, ort_factor={"fp32": {"conv": 1.1}}))
    doc = json.loads(json.dumps(calib.to_dict(new)))
    assert calib.from_dict(doc).ort_use_tf32 == {"fp32": "0", "fp16": "1"}
    doc.pop("ort_use_tf32")  # a schema-2 file written before the field
    assert calib.from_dict(doc).ort_use_tf32 == {}


def case(backend: str, precision: str, error_pct: float, **extra: object) -> dict:
    return {"model": "m", "gpu": "G", "calibrated_on": "G", "backend": backend, "precision": precision, "batch": 64,
            "error_pct": error_pct, "features": [], "residual": "", "bound": "device"} | extra


def test_the_tables_leave_out_ort_fp16_cases_measured_with_use_tf32_off(tmp_path: Path) -> None:
    script = validation_script()
    assert script.measured_options("ort-cuda", "fp16") == {"ort_use_tf32": "1"}
    assert script.measured_options("ort-cuda", "fp32") == {"ort_use_tf32": "0"}
    assert script.measured_options("torch-half", "fp16") == {}
    old_fp16 = case("ort-cuda", "fp16", -80.0)  # no option recorded: measured before 1838ed7, with it off
    new_fp16 = case("ort-cuda", "fp16", 10.0, ort_use_tf32="1")
    old_fp32 = case("ort-cuda", "fp32", 20.0)  # fp32 ran with it off then as now: kept
    assert [script.obsolete(c) for c in (old_fp16, new_fp16, old_fp32)] == [True, False, False]
    summary = script.summarise([old_fp16, new_fp16, old_fp32])
    rows = {(e["backend"], e["precision"]): e for e in summary["entries"]}
    assert rows[("ort-cuda", "fp16")]["cases"] == 1 and rows[("ort-cuda", "fp16")]["median_pct"] == 10.0
    assert summary["overall"]["cases"] == 2
    assert summary["left_out"] == {"ort-cuda fp16 measured with use_tf32 off (obsolete)": 1}
    # merging: a committed row whose cases were all left out goes too (an H200's ort-cuda fp16, here)
    script.TABLE = tmp_path / "predict_errors.json"
    stale = {"gpu": "H", "calibrated_on": "H", "backend": "ort-cuda", "precision": "fp16", "cases": 9}
    kept = stale | {"backend": "torch-half"}
    script.TABLE.write_text(json.dumps({"entries": [stale, kept]}))
    script.merge_table(script.summarise([case("ort-cuda", "fp16", -80.0, gpu="H", calibrated_on="H")]))
    assert json.loads(script.TABLE.read_text())["entries"] == [kept]
