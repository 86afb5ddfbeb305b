"""``modelcost results``: filters, best config per model and GPU, run-vs-run regressions, JSON / Markdown / HTML,
on a database filled with hand-made rows (the figures below are chosen so the verdicts can be derived by hand)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli.app import app
from modelcost.sweep.db import ResultsDB
from modelcost.sweep.results import best_configs, compare_runs, filter_rows, plan_constraints

A_BLOCKS = [10.0, 10.2, 9.8, 10.1, 9.9, 10.0, 10.2, 9.8, 10.1, 9.9]


def _lat(p50: float) -> dict[str, float]:
    return {"count": 100, "p50": p50, "p90": p50 * 1.1, "p95": p50 * 1.2, "p99": p50 * 1.5, "mean": p50,
            "std": 0.1, "min": p50 * 0.9, "max": p50 * 2, "cv": 0.01}


def _row(run: int, key: str, backend: str, batch: int, blocks: list[float] | None, status: str = "ok",
         device: str = "NVIDIA H200", model: str = "resnet50") -> dict[str, object]:
    p50 = sorted(blocks)[len(blocks) // 2] if blocks else None
    result = {"status": status, "latency_ms": _lat(p50) if p50 else None,
              "throughput_ips": batch / p50 * 1e3 if p50 else None, "timing": "device time (CUDA events)"}
    return {"run_id": run, "config_key": key, "model_name": model, "model_source": "zoo:" + model,
            "model_hash": "h", "backend": backend, "precision": "fp16", "batch_size": batch, "status": status,
            "reason": None if status == "ok" else "CUDA out of memory", "device_name": device, "versions_key": "v",
            "latency_p50_ms": p50, "throughput_ips": result["throughput_ips"], "block_medians_ms": blocks,
            "result_json": result, "finished": f"2026-11-2{run}T10:00:00+00:00", "timing": result["timing"]}


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite"
    db = ResultsDB(path)
    a = db.start_run(label="base", engine="local", workers=1, plan_toml="[constraints]\nobjective = 'throughput'\n")
    b = db.start_run(label="nightly", engine="local", workers=2,
                     plan_toml="[constraints]\nmax_latency_ms = 100\n[[models]]\nsource='zoo:resnet50'\n")
    rows = [
        _row(a, "k-10pct", "ort-cuda", 1, A_BLOCKS), _row(b, "k-10pct", "ort-cuda", 1, [x * 1.10 for x in A_BLOCKS]),
        _row(a, "k-1pct", "tensorrt", 1, A_BLOCKS), _row(b, "k-1pct", "tensorrt", 1, [x * 1.01 for x in A_BLOCKS]),
        _row(a, "k-same", "torch-half", 1, [10.0, 11.0] * 5), _row(b, "k-same", "torch-half", 1, [11.0, 10.0] * 5),
        _row(a, "k-lost", "tensorrt", 64, A_BLOCKS), _row(b, "k-lost", "tensorrt", 64, None, status="oom"),
        _row(a, "k-fixed", "ort-cuda", 64, None, status="failed"), _row(b, "k-fixed", "ort-cuda", 64, A_BLOCKS),
        _row(b, "k-bert", "ort-cuda", 1, [5.0] * 10, model="bert", device="NVIDIA H100"),
    ]
    for r in rows:
        db.insert_result(r)
    db.finish_run(a, "complete", 60.0)
    db.finish_run(b, "complete", 31.0)
    db.close()
    return path


def test_compare_flags_only_changes_beyond_noise_and_tolerance(db_path: Path) -> None:
    db = ResultsDB(db_path, create=False)
    a, b, changes = compare_runs(db, "base", "nightly", tolerance_pct=2.0)
    by = {c.label: c for c in changes}
    assert (a, b) == (1, 2) and len(changes) == 5  # k-bert is only in run B
    # B = 1.10 x A in every block: every log-ratio is ln(1/1.1), sd 0, so the interval is the point 1/1.1:
    # B slower by 10.0% >= 2%: a regression.
    ten = by["resnet50 ort-cuda fp16 b1"]
    assert ten.regression and math.isclose(ten.ci.ratio, 1 / 1.10) and "B slower by 10.0%" in ten.verdict
    # B = 1.01 x A: significant (the interval is the point 1/1.01) but 1.0% < the 2% tolerance: not flagged.
    one = by["resnet50 tensorrt fp16 b1"]
    assert not one.regression and "within the 2% tolerance" in one.verdict
    # Blocks 10, 11 vs 11, 10: log-ratios +-ln(1.1) in equal numbers, mean 0: no significant difference.
    same = by["resnet50 torch-half fp16 b1"]
    assert not same.regression and same.verdict.startswith("no significant difference")
    # ok in A, oom in B: a regression; failed in A, ok in B: not one.
    assert by["resnet50 tensorrt fp16 b64"].regression and "ok -> oom" in by["resnet50 tensorrt fp16 b64"].verdict
    assert not by["resnet50 ort-cuda fp16 b64"].regression
    # Tolerance 15%: the 10% slowdown passes.
    assert not any(c.regression for c in compare_runs(db, "1", "2", tolerance_pct=15.0)[2] if c.ci is not None)


def test_filters_and_best_config(db_path: Path) -> None:
    db = ResultsDB(db_path, create=False)
    assert len(filter_rows(db, gpu="h100")) == 1
    assert len(filter_rows(db, backend="tensorrt", batch=64)) == 2
    assert len(filter_rows(db, run="nightly", status="ok")) == 5  # all of B but the oom one
    assert len(filter_rows(db, since="2026-11-22")) == 6 and len(filter_rows(db, until="2026-11-21")) == 5
    constraints, objective = plan_constraints(db)  # the latest run's plan
    assert constraints.max_latency_ms == 100 and objective == "throughput"
    best = {(b.model, b.gpu): b.recommendation.best for b in best_configs(filter_rows(db), constraints, objective)}
    # resnet50 on H200, latest rows: ort-cuda b1 at p50 11.0 ms (10 x 1.1; 1 / 11.0 ms = 90.9 ips),
    # tensorrt b1 at 10.1 ms (99.0 ips), torch-half b1 at 11.0 (90.9), ort-cuda b64 at 10.0 ms (6400 ips),
    # tensorrt b64 oom. p99 = 1.5 x p50 = 15 ms <= 100 ms for all: the best throughput is ort-cuda b64.
    r = best[("resnet50", "NVIDIA H200")]
    assert (r.backend, r.batch_size) == ("ort-cuda", 64) and math.isclose(r.throughput_ips, 6400.0)
    assert best[("bert", "NVIDIA H100")].backend == "ort-cuda"


def test_results_cli_compare_exit_code_json_and_reports(db_path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["results", str(db_path), "--compare", "base", "nightly"])
    assert res.exit_code == 1, res.output  # two regressions: a CI job fails
    assert "2 regression(s)" in res.output and "REGRESSION" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--compare", "base", "nightly", "--tolerance-pct", "15",
                              "--backend", "tensorrt"])
    assert res.exit_code == 1  # the config lost to OOM still counts
    res = runner.invoke(app, ["results", str(db_path), "--json", "-", "--model", "bert"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["schema"] == "modelcost.sweep/1" and [r["model_name"] for r in doc["rows"]] == ["bert"]
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    for path in (md, html):
        res = runner.invoke(app, ["results", str(db_path), "--report", str(path)])
        assert res.exit_code == 0, res.output
    text = md.read_text()
    assert "## Best config per model and GPU" in text and "## GPU x model (best throughput config)" in text
    assert "| NVIDIA H200 | 6400 ips (ort-cuda fp16 b64) | - |" in text  # the GPU x model table, hand-checked
    assert html.read_text().startswith("<!DOCTYPE html>") and "Best config per model and GPU" in html.read_text()
    res = runner.invoke(app, ["results", str(db_path)])
    assert res.exit_code == 0 and "11 result(s)" in res.output


def test_results_cli_bad_input_is_one_line(tmp_path: Path, db_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["results", str(tmp_path / "none.sqlite")])
    assert res.exit_code == 1 and "no results database" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--compare", "base", "nope"])
    assert res.exit_code == 1 and "no run 'nope'" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--report", str(tmp_path / "r.txt")])
    assert res.exit_code == 1 and "end it in .md or .html" in res.output
