"""``sweep --repeats N`` (real child processes on the CPU) and reading a database of the previous schema version."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli.app import app
from modelcost.sweep.db import SCHEMA, ResultsDB

ROOT = Path(__file__).resolve().parents[2]
ONNX = ROOT / "sample_models" / "dynamic_batch.onnx"
# Written by modelcost.sweep/1 (this repository at acf6feb): run 1 "old", two ok rows of resnet18 on a CPU, the
# ort-cpu one flagged unstable ("busy machine") only inside result_json, as version 1 stored it.
OLD_DB = ROOT / "tests" / "fixtures" / "sweep_v1.sqlite"
PLAN = f"""
[sweep]
backends = ["ort-cpu"]
batch_sizes = [1]
timeout_s = 120
[timing]
warmup = 2
min_time_s = 0.05
min_iters = 20
max_time_s = 0.2
e2e_min_iters = 2
e2e_max_s = 0.05
[[models]]
source = "{ONNX}"
name = "tiny"
input_shapes = ["tokens=1x8x16", "mask=1x8"]
"""


@pytest.mark.slow
@pytest.mark.usefixtures("stable_children")
def test_repeats_cycle_the_plan_and_resume_adds_only_missing_passes(tmp_path: Path) -> None:
    plan, db_path = tmp_path / "plan.toml", tmp_path / "r.sqlite"
    plan.write_text(PLAN)
    runner = CliRunner()
    res = runner.invoke(app, ["sweep", str(plan), "--db", str(db_path), "--repeats", "2", "--label", "a"])
    assert res.exit_code == 0 and "1 config(s) x 2 passes" in res.output, res.output
    db = ResultsDB(db_path, create=False)
    rows = db.results()
    assert [r["repeat"] for r in rows] == [1, 2]
    assert all(r["status"] == "ok" and r["unstable"] == [] for r in rows), [(r["status"], r["unstable"]) for r in rows]
    run = db.runs()[0]
    assert run["repeats"] == 2 and "--repeats 2" in run["command"] and run["skipped_configs"] == []
    db.close()
    # 3 passes asked, 2 already measured: passes 1 and 2 skip the config, pass 3 measures it.
    res = runner.invoke(app, ["sweep", str(plan), "--db", str(db_path), "--repeats", "3"])
    assert res.exit_code == 0 and "1 measured" in res.output and "2 skipped" in res.output, res.output
    db = ResultsDB(db_path, create=False)
    assert [r["repeat"] for r in db.results("WHERE run_id = 2")] == [3]
    assert db.runs()[1]["skipped_configs"][0]["label"] == "tiny ort-cpu fp32 b1"
    db.close()


def test_a_version_1_database_reads_and_the_writer_upgrades_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(OLD_DB, path)
    db = ResultsDB(path, create=False)  # a reader changes nothing
    assert db.schema == "modelcost.sweep/1" and db.noise() == []
    rows = {r["backend"]: r for r in db.results()}
    assert rows["ort-cpu"]["unstable"] == ["busy machine: load average 4.0 on 2 CPUs"]
    assert rows["ort-cpu"]["repeat"] == 1
    assert rows["torch-cpu"]["unstable"] == [] and db.runs()[0]["repeats"] == 1
    db.close()
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone()[0] == "modelcost.sweep/1"
    db = ResultsDB(path)  # the sweep's writer: adds version 2's columns, copies the flags
    assert db.schema == SCHEMA
    # Resume counts only the stable row: the unstable one is measured again.
    assert set(db.done_counts()) == {("k-torch-cpu", "Test CPU (2 logical cores)", "v1")}
    db.close()
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == SCHEMA
    assert con.execute("SELECT unstable FROM results ORDER BY result_id").fetchall() == [
        ('["busy machine: load average 4.0 on 2 CPUs"]',), ("[]",)]
