"""The sweep plan (TOML -> configs) and the results database (schema, runs, resume keys). No measuring."""

from __future__ import annotations

import sqlite3

import pytest

from modelcost.core.errors import ModelcostError
from modelcost.sweep.db import SCHEMA, ResultsDB
from modelcost.sweep.identity import source_hash, versions, versions_key
from modelcost.sweep.plan import Config, expand, parse_plan

PLAN = """
[sweep]
backends = ["ort-cuda", "tensorrt"]
precisions = ["fp32", "fp16", "int8"]
batch_sizes = [1, 64]

[timing]
min_time_s = 0.2

[constraints]
max_latency_ms = 10

[[models]]
source = "zoo:resnet50"

[[models]]
source = "model.onnx"
name = "bert"
precisions = ["fp16", "bf16"]
batch_sizes = [8]
"""


def test_plan_expands_model_x_backend_x_precision_x_batch() -> None:
    plan = parse_plan(PLAN)
    configs = expand(plan, "cuda", {"zoo:resnet50": "h1", "model.onnx": "h2"})
    # resnet50: ort-cuda offers fp32, fp16 of the [sweep] list (int8 is not one of its precisions: left out),
    # tensorrt offers fp32, fp16, int8 -> (2 + 3) pairs x 2 batch sizes = 10.
    # bert names its own precisions: kept even where the backend lacks one (reported unavailable) ->
    # 2 backends x 2 precisions x 1 batch size = 4. Total 14.
    assert len(configs) == 14
    assert [c.label for c in configs[:3]] == ["resnet50 ort-cuda fp32 b1", "resnet50 ort-cuda fp32 b64",
                                              "resnet50 ort-cuda fp16 b1"]
    assert {c.precision for c in configs if c.model_name == "bert"} == {"fp16", "bf16"}
    assert plan.timing == {"min_time_s": 0.2} and plan.constraints == {"max_latency_ms": 10}


def test_plan_defaults_to_the_device_backends_and_batch_1() -> None:
    plan = parse_plan('[[models]]\nsource = "m.onnx"\n')
    configs = expand(plan, "cpu", {"m.onnx": "h"})
    # CPU backends: torch-cpu and ort-cpu, each fp32 only, batch 1 -> 2 configs.
    assert sorted(c.backend for c in configs) == ["ort-cpu", "torch-cpu"]
    assert {c.batch_size for c in configs} == {1}


def test_config_key_is_stable_and_ignores_the_model_name() -> None:
    a = Config("a", "m.onnx", "h", "ort-cpu", "fp32", 1, "cpu")
    b = Config("b", "m.onnx", "h", "ort-cpu", "fp32", 1, "cpu")
    assert a.key == b.key and a.key != Config("a", "m.onnx", "h2", "ort-cpu", "fp32", 1, "cpu").key
    assert Config.from_dict(a.as_dict()) == a


@pytest.mark.parametrize("text, words", [
    ("[[models]]\nname = 'x'\n", "needs source"),
    ("[sweep]\nbackends = ['ort-cpu']\n", "no [[models]]"),
    ("[sweep]\nbackend = ['ort-cpu']\n[[models]]\nsource='m.onnx'\n", "unknown key(s) backend"),
    ("[[models]]\nsource='m.onnx'\nbackends=['nope']\n", "unknown backend 'nope'"),
    ("[[models]]\nsource='m.onnx'\nprecisions=['fp64']\n", "unknown precision(s) fp64"),
    ("[[models]]\nsource='m.onnx'\ninput_shapes=['x:1x3']\n", "NAME=DIMS"),
    ("[[models]]\nsource='a/m.onnx'\n[[models]]\nsource='b/m.onnx'\n", "share a name (m)"),
    ("[[models]]\nsource='m.onnx'\nbatch_sizes=[0]\n", "batch_sizes item 1: must be >= 1"),
    ("[timing]\nmin_time_s = 5\nmax_time_s = 1\n[[models]]\nsource='m.onnx'\n", "1.0 is below min_time_s 5.0"),
    ("[[models]\n", "not valid TOML"),
])
def test_bad_plans_get_one_clear_line(text: str, words: str) -> None:
    with pytest.raises(ModelcostError, match=None) as info:
        parse_plan(text)
    assert words in str(info.value)


def test_source_hash_follows_the_file_content(tmp_path) -> None:
    f = tmp_path / "m.onnx"
    f.write_bytes(b"one")
    h1 = source_hash(str(f))
    f.write_bytes(b"two")
    assert source_hash(str(f)) != h1
    assert source_hash("zoo:resnet50") == source_hash("zoo:resnet50") != source_hash("zoo:bert-base")
    assert "python" in versions() and len(versions_key(versions())) == 16


def _row(run_id: int, **kw: object) -> dict[str, object]:
    base = {"run_id": run_id, "config_key": "k1", "model_name": "m", "model_source": "m.onnx", "model_hash": "h",
            "backend": "ort-cpu", "precision": "fp32", "batch_size": 1, "status": "ok", "device_name": "cpu X",
            "versions_key": "v1", "versions": {"python": "3"}, "block_medians_ms": [1.0, 2.0]}
    return {**base, **kw}


def test_db_records_runs_rows_and_resume_keys(tmp_path) -> None:
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    run = db.start_run(label="nightly", engine="local", workers=2)
    db.insert_result(_row(run))
    db.insert_result(_row(run, config_key="k2", status="failed", reason="boom"))
    db.insert_result(_row(run, config_key="k3", status="unavailable"))
    db.finish_run(run, "complete", 1.5, ["note"], skipped=0)
    db.close()
    db = ResultsDB(path, create=False)
    # ok and unavailable rows are resumable; a failed one is measured again.
    assert db.done_keys() == {("k1", "cpu X", "v1"), ("k3", "cpu X", "v1")}
    rows = db.results()
    assert rows[0]["versions"] == {"python": "3"} and rows[0]["block_medians_ms"] == [1.0, 2.0]
    assert db.runs()[0]["notes"] == ["note"] and db.runs()[0]["status"] == "complete"
    assert db.resolve_run("nightly") == run == db.resolve_run("latest") == db.resolve_run(str(run))
    with pytest.raises(ModelcostError, match="no run 'x'"):
        db.resolve_run("x")
    with pytest.raises(ModelcostError, match="no 'previous'"):
        db.resolve_run("previous")
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone()[0] == SCHEMA


def test_db_refuses_other_files(tmp_path) -> None:
    with pytest.raises(ModelcostError, match="no results database"):
        ResultsDB(tmp_path / "none.sqlite", create=False)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ModelcostError, match="not a modelcost results database"):
        ResultsDB(other)
    newer = tmp_path / "newer.sqlite"
    ResultsDB(newer).close()
    con = sqlite3.connect(newer)
    con.execute("UPDATE meta SET value='modelcost.sweep/9'")
    con.commit()
    with pytest.raises(ModelcostError, match="has schema modelcost.sweep/9"):
        ResultsDB(newer)
    text = tmp_path / "t.sqlite"
    text.write_text("not sqlite at all, just text " * 50)
    with pytest.raises(ModelcostError, match="not a modelcost results database"):
        ResultsDB(text)


def test_schema_doc_lists_every_column_and_only_those(tmp_path) -> None:
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "SWEEP_SCHEMA.md").read_text()
    documented: dict[str, set[str]] = {}
    table = None
    for line in doc.splitlines():
        m = re.match(r"## Table `(\w+)`", line)
        if m:
            table = m.group(1)
            documented[table] = set()
        elif table and (c := re.match(r"\| `(\w+)` \|", line)):
            documented[table].add(c.group(1))
    con = sqlite3.connect(ResultsDB(tmp_path / "r.sqlite").path)
    tables = ("runs", "results", "meta", "noise_baseline", "calibrations")
    actual = {t: {row[1] for row in con.execute(f"PRAGMA table_info({t})")} for t in tables}
    assert documented == actual


def test_db_keeps_the_calibration_a_sweep_ran_with(tmp_path) -> None:
    from modelcost.core import calibration as calib
    from tests.analysis.test_predict import synthetic

    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    run = db.start_run(label="a", engine="local", workers=1)
    cal = synthetic("H100 SXM")
    assert db.save_calibration(cal, run) is True
    assert db.save_calibration(cal, run + 1) is False  # the same calibration again: kept once, with its first run
    db.close()
    rows = ResultsDB(path, create=False).calibrations()
    # keyed by the GPU's fingerprint (name + SMs, clock, bandwidth, L2) and the calibration's schema version
    assert [(r["gpu_name"], r["fingerprint"], r["schema"], r["run_id"]) for r in rows] == [
        ("H100 SXM", "H100 SXM|100sm-1000mhz-1000gbps-l2?", calib.SCHEMA, run)]
    assert calib.from_dict(rows[0]["calibration"]) == cal  # the whole file, read back as it was


def test_a_database_from_before_calibrations_still_reads(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    ResultsDB(path).close()
    con = sqlite3.connect(path)
    con.execute("DROP TABLE calibrations")  # a modelcost.sweep/2 file written before the table existed
    con.commit()
    con.close()
    assert ResultsDB(path, create=False).calibrations() == []  # a reader adds nothing
    assert "calibrations" not in {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    db = ResultsDB(path)  # the sweep's writer adds the table; the schema stays version 2
    assert db.calibrations() == [] and db.schema == SCHEMA == "modelcost.sweep/2"
    db.close()


def test_block_medians_split_the_samples_in_timing_order() -> None:
    from modelcost.bench.stats import block_medians

    # 25 samples, 5 per block at least -> min(10, 25 // 5) = 5 blocks of 5: medians of 0-4, 5-9, ... = 2, 7, 12, 17, 22.
    assert block_medians([float(i) for i in range(25)]) == [2.0, 7.0, 12.0, 17.0, 22.0]
    # 103 samples -> 10 blocks of 10 (the last 3 left out): medians 4.5, 14.5, ..., 94.5.
    assert block_medians([float(i) for i in range(103)]) == [4.5 + 10 * k for k in range(10)]
    assert block_medians([1.0] * 9) is None  # 9 // 5 = 1 block: no interval can be made


def test_gpu_workers_get_disjoint_cpu_blocks_and_one_gpu_each(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from modelcost.sweep import identity, workers
    from modelcost.sweep.identity import DeviceIdentity, cpu_block

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    # 16 CPUs in 2 blocks of 16 // 2 = 8; in 3 blocks of 16 // 3 = 5 (CPU 15 is left to the driver).
    assert cpu_block(0, 2) == list(range(8)) and cpu_block(1, 2) == list(range(8, 16))
    assert cpu_block(2, 3) == [10, 11, 12, 13, 14]
    gpus = [DeviceIdentity("cuda", "NVIDIA H200", f"GPU-{i}", "580", "h") for i in range(2)]
    monkeypatch.setattr(workers, "visible_gpus", lambda: gpus)
    slots, notes = workers.make_slots(None)  # default: one worker per visible GPU
    assert [(s.name, s.cuda_visible, s.cpus[-1]) for s in slots] == [("gpu0", "GPU-0", 7), ("gpu1", "GPU-1", 15)]
    assert "no two configs were ever timed on the same GPU at once" in notes[0] and "gpu1: 8-15" in notes[1]
    assert len(workers.make_slots(1)[0]) == 1
    with pytest.raises(ModelcostError, match="shows 2 GPU"):
        workers.make_slots(3)
    monkeypatch.setattr(identity, "all_gpus", lambda: [(str(i), g) for i, g in enumerate(gpus)])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1")
    assert identity.visible_gpus() == [gpus[1]]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,7,0")  # CUDA stops at the first entry it cannot resolve
    assert identity.visible_gpus() == [gpus[1]]


def test_a_sweep_on_a_calibrated_gpu_keeps_its_calibration(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.sweep.run import _keep_calibration
    from tests.analysis.test_predict import synthetic

    db = ResultsDB(tmp_path / "r.sqlite")
    run = db.start_run(label="a", engine="local", workers=1)
    notes: list[str] = []
    monkeypatch.setattr("modelcost.runs.predict.calibration_here", lambda: None)
    _keep_calibration(db, run, notes)  # a GPU never calibrated: nothing kept, nothing said
    assert db.calibrations() == [] and notes == []
    monkeypatch.setattr("modelcost.runs.predict.calibration_here", lambda: synthetic("H100 SXM"))
    _keep_calibration(db, run, notes)
    _keep_calibration(db, run, notes)  # the next pass / resume: already kept, said once
    assert len(db.calibrations()) == 1 and notes == ["the calibration of H100 SXM (undated) is kept in the database"]
