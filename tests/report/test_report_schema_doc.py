"""docs/REPORT_SCHEMA.md cannot drift from the JSON report.

Every key path in the doc's tables (rows starting ``| `path` |``) must exist in a real report, and every key
of that report must be documented. The report comes from a real CPU run of ``modelcost analyze`` (ort-cpu,
``--profile-layers``, ``--out``: so ``layer_profile`` and ``recommendation`` are filled). What a CPU run
leaves null (``gpu``, ``benchmarks[].roofline``), the constraint checks of a recommendation and the
``comparison`` key are filled by the real serialisers from real objects.

Path notation (as in the doc): ``a.b`` key b of object a; ``a[]`` every element of list a; ``a{}`` every
value of map a. A key whose type column starts with ``map`` has free keys: the reverse check does not
descend into it unless the doc lists ``a{}`` paths under it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.core.decisions import Comparison, ModelSide, SpeedupEstimate
from modelcost.core.types import (
    AccuracyStats,
    BenchResult,
    CeilingMeasurement,
    LatencyStats,
)
from modelcost.decide.constraints import Constraints
from modelcost.decide.recommend import recommend
from modelcost.hardware.specs import spec_from_table
from modelcost.report.folder import comparison_to_dict, recommendation_to_dict
from modelcost.report.json_report import to_plain

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "REPORT_SCHEMA.md"
ROW = re.compile(r"^\| `([^`]+)` \| ([^|]*?(?:\\\|[^|]*?)*) \|")
# Keys a CPU run cannot write: each must still be set somewhere in the code (a MeasurementInfo field).
GPU_OR_COMPARE_EXTRA = ("modelcost/bench/runner.py", "modelcost/bench/interleaved.py",  # MeasurementInfo fields set
                        "modelcost/runs/finalists.py")


def documented() -> dict[str, str]:
    """path -> type column, for every key row of the doc."""
    rows: dict[str, str] = {}
    for line in DOC.read_text().splitlines():
        m = ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"documented twice: {m.group(1)}"
            rows[m.group(1)] = m.group(2).strip()
    return rows


def _tokens(path: str) -> list[str]:
    """'a.b[].c{}[].d' -> ['a', 'b', '[]', 'c', '{}', '[]', 'd']."""
    out: list[str] = []
    for part in path.split("."):
        name = part.rstrip("[]{}")
        if name:
            out.append(name)
        out += re.findall(r"\[\]|\{\}", part[len(name):])
    return out


def missing(doc: Any, tokens: list[str], where: str = "") -> list[str]:
    """The concrete places where ``tokens`` does not resolve in ``doc`` (an empty list/map counts as missing)."""
    if not tokens:
        return []
    head, rest = tokens[0], tokens[1:]
    if head in ("[]", "{}"):
        items = (list(enumerate(doc)) if head == "[]" and isinstance(doc, list)
                 else list(doc.items()) if head == "{}" and isinstance(doc, dict) else None)
        if not items:
            return [f"{where}{head} (empty or not a {'list' if head == '[]' else 'map'})"]
        return [m for k, v in items for m in missing(v, rest, f"{where}[{k!r}]")]
    if not isinstance(doc, dict) or head not in doc:
        return [f"{where}.{head}"]
    value = doc[head]
    if rest and value is None:
        return [f"{where}.{head} is null"]
    return missing(value, rest, f"{where}.{head}")


def undocumented(doc: Any, rows: dict[str, str], prefix: str = "") -> list[str]:
    """Key paths of ``doc`` (normalised to the doc's notation) that the doc does not list."""
    out: list[str] = []
    if isinstance(doc, list):
        for item in doc:
            out += undocumented(item, rows, prefix + "[]")
        return out
    if not isinstance(doc, dict):
        return out
    for key, value in doc.items():
        path = f"{prefix}.{key}" if prefix else key
        if path not in rows:
            out.append(path)
            continue
        if rows[path].startswith("map"):
            if any(p.startswith(path + "{}") for p in rows):
                for v in value.values():
                    out += undocumented(v, rows, path + "{}")
            continue
        out += undocumented(value, rows, path)
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("schema")
    folder, out = tmp / "report", tmp / "x.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MODELCOST_CACHE_DIR", str(tmp / "cache"))
        result = CliRunner().invoke(app, [
            "analyze", str(ROOT / "sample_models" / "resnet_tiny.onnx"), "--backends", "ort-cpu", "--batch-sizes",
            "1", "--min-time-s", "0.05", "--min-iters", "100", "--max-time-s", "1", "--profile-layers",
            "--target-gpu", "H100 SXM", "--out", str(folder),
            "--json", str(out)])
    assert result.exit_code == 0, result.output
    plain = json.loads(out.read_text())
    doc = json.loads((folder / "report.json").read_text())
    assert {k: v for k, v in doc.items() if k != "recommendation"} == plain  # --json == report.json minus the extra
    return _fill_what_a_cpu_run_leaves_out(doc)


def _fill_what_a_cpu_run_leaves_out(doc: dict[str, Any]) -> dict[str, Any]:
    gpu = spec_from_table("H100 SXM")
    gpu.measurements.append(CeilingMeasurement("copy", "", 2900.0, "GB/s", spec=3350.0, fraction_of_spec=0.87,
                                               shape="1.00 GiB", median_ms=0.74, iterations=50))
    doc["gpu"] = to_plain(gpu)
    row = doc["benchmarks"][0]
    lat = LatencyStats(**{k: v for k, v in row["latency_ms"].items() if k != "cv"})
    measured = BenchResult(row["backend"], row["precision"], row["batch_size"], row["status"], latency_ms=lat,
                           throughput_ips=row["throughput_ips"], device="NVIDIA H100 80GB HBM3")
    from modelcost import api
    from modelcost.analysis.roofline import roofline_point

    cost = api.analyze_static(str(ROOT / "sample_models" / "resnet_tiny.onnx"))
    measured.backend, measured.precision = "ort-cuda", "fp32"
    point = roofline_point(cost, measured, gpu)
    assert point is not None
    row["roofline"] = to_plain(point)
    # The folder's own recommendation has no constraints, so no checks: one with constraints shows their keys.
    doc["recommendation"]["checks"] = recommendation_to_dict(
        recommend([measured], Constraints(max_latency_ms=100.0, min_throughput_ips=1.0)))["checks"]
    side = ModelSide("resnet_tiny", "resnet_tiny.onnx", "fp32", 82487, 80168, {"float32": 80168}, 20042, 5329216,
                     10807946, {"float32": 5329216}, {"Conv": 5})
    speed = SpeedupEstimate("ort-cpu", 1, "fp32", "int8", 10, 20, 0.14, 0.10, 1.4, 40.0, 35.0, 45.0, "t", "faster",
                            True, ["hint"], [0.14], [0.10])
    acc = AccuracyStats(0.01, 0.02, 0.999, 1.0, "base (resnet_tiny) on ort-cpu")
    cmp = Comparison(side, dataclasses.replace(side, precision="int8"), [speed], [("ort-cpu", acc)], "generated",
                     ["skipped"], ["note"], True, {"key": 1})
    doc["comparison"] = comparison_to_dict(cmp)
    doc["training"] = _training_on_the_cpu()
    doc["predictions"] = _a_prediction(cost, measured)
    doc["training"]["predictions"] = doc["predictions"]  # train --predict: the same LatencyPrediction type
    # An ONNX model asks no values on meta: the assumptions of a PyTorch model that reads one (.item())
    asked = api.analyze_static(f"{ROOT / 'tests' / 'fixtures' / 'asks_values.py'}:length_slice").assumptions
    assert asked
    doc["assumptions"] = to_plain(asked)
    doc["training"]["assumptions"] = to_plain(asked)  # zoo:bert-tiny asks none; the step's list is the same type
    return doc


def _a_prediction(cost: Any, measured: BenchResult) -> list[Any]:
    """``--predict``'s key: a real prediction of resnet_tiny from a synthetic calibration, a measurement beside it
    and a transfer note (a CPU run has no calibration to read)."""
    from modelcost.analysis.predict import predict, with_measurement
    from modelcost.core.calibration import KINDS, Calibration, Fusion, GpuFingerprint, TimePoint

    cal = Calibration(GpuFingerprint("H100 SXM", 132, 1980.0, 3350.0, None, "9.0", {"fp32": 66.9}),
                      gemm_efficiency={"fp32": {"m:s n:s k:s": 0.3}}, conv_efficiency={"fp32": {"m:s n:s k:s": 0.3}},
                      memory_curve=[TimePoint(4096, 2.0), TimePoint(2**30, 700.0)], launch_us={"ort-cuda": 5.0},
                      fusion={"ort-cuda": Fusion("ort-cuda", {k: 1.0 for k in KINDS})})
    pred = with_measurement(predict(cost, cal, "ort-cuda", "fp32", measured.batch_size, calibrated_on="H100 SXM",
                                    table=[]), [measured])
    pred.notes.append("transferred from ...")
    return [to_plain(pred)]


def _training_on_the_cpu() -> dict[str, Any]:
    """``modelcost train``'s key: a real static count and one real (CPU) measured step of a tiny model."""
    from modelcost import api
    from modelcost.bench.base import BenchConfig

    # a budget of 0.3 s: a handful of real steps, the same keys (a median still unsettled stays an "ok" row)
    quick = BenchConfig(warmup=2, warmup_max_s=0.2, min_time_s=0.05, min_iters=3, max_time_s=0.3)
    report = api.train("zoo:bert-tiny", input_shapes=["input_ids=1x16"], batch_sizes=[1], device="cpu",
                       bench_config=quick, memory_bytes=2**30)
    assert report.benchmarks[0].status == "ok"
    return to_plain(report)


def test_the_doc_has_key_tables() -> None:
    rows = documented()
    assert len(rows) > 200
    for path in ("schema", "compute.macs", "layers[].output_shapes", "benchmarks[].latency_ms.p50",
                 "benchmarks[].latency_ms.cv", "benchmarks[].e2e_latency_ms", "benchmarks[].accuracy.cosine"):
        assert path in rows, path


def test_every_documented_key_exists_in_a_real_report(report: dict[str, Any]) -> None:
    problems = []
    sources = "".join((ROOT / f).read_text() for f in GPU_OR_COMPARE_EXTRA)
    for path in documented():
        where = missing(report, _tokens(path))
        if where and path.startswith("benchmarks[].extra."):
            key = path.rsplit(".", 1)[1]  # written only on a GPU with NVML, or by compare: a field that is set
            written = re.search(rf"\.extra\.{key}\b", sources)
            where = [] if written else [f"not in the report, nor written by {GPU_OR_COMPARE_EXTRA}"]
        problems += [f"{path}: {w}" for w in where]
    assert not problems, "\n".join(problems)


def test_every_key_of_a_real_report_is_documented(report: dict[str, Any]) -> None:
    extra = undocumented(report, documented())
    assert not extra, "keys of the report missing from docs/REPORT_SCHEMA.md:\n" + "\n".join(extra)


def test_null_not_zero_for_what_a_cpu_run_does_not_measure(report: dict[str, Any]) -> None:
    """The doc says these are null on the CPU, never 0: check it on the real run."""
    row = report["benchmarks"][0]
    assert row["status"] == "ok" and row["device"] != ""
    for key in ("gpu_memory_peak_bytes", "power_w_mean", "energy_j_per_inference", "gpu_util_mean",
                "sm_clock_mhz_mean"):
        assert row[key] is None, key
    assert report["device"]["kind"] == "cpu" and report["device"]["sm_count"] is None
    assert report["params"]["trainable"] is None  # ONNX does not record requires_grad
    assert row["throughput_ips"] == pytest.approx(row["batch_size"] / row["latency_ms"]["p50"] * 1e3)
    lat = row["latency_ms"]
    assert lat["cv"] == pytest.approx(lat["std"] / lat["mean"])
    assert row["extra"]["clock"] == "perf_counter" and "perf_counter" in row["timing"]
