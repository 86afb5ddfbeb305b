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
from modelcost.sweep.compare import compare_runs
from modelcost.sweep.noise import stored_baseline
from modelcost.sweep.results import best_configs, filter_rows, plan_constraints

A_RUNS = [10.0, 10.1, 9.9]  # per-run p50s of run A's three repeats: ln spread sd 0.0100 (1.0%)


def _lat(p50: float, count: int = 100) -> dict[str, float]:
    return {"count": count, "p50": p50, "p90": p50 * 1.1, "p95": p50 * 1.2, "p99": p50 * 1.5, "mean": p50,
            "std": 0.1, "min": p50 * 0.9, "max": p50 * 2, "cv": 0.01}


def _row(run: int, key: str, backend: str, batch: int, p50: float | None, status: str = "ok",
         device: str = "NVIDIA H200", model: str = "resnet50", repeat: int = 1, unstable: list[str] | None = None,
         model_hash: str = "h", count: int = 100) -> dict[str, object]:
    result = {"status": status, "latency_ms": _lat(p50, count) if p50 else None,
              "throughput_ips": batch / p50 * 1e3 if p50 else None, "timing": "device time (CUDA events)",
              "unstable": unstable or []}
    return {"run_id": run, "config_key": key, "model_name": model, "model_source": "zoo:" + model,
            "model_hash": model_hash, "backend": backend, "precision": "fp16", "batch_size": batch, "status": status,
            "reason": None if status == "ok" else "CUDA out of memory", "device_name": device, "versions_key": "v",
            "latency_p50_ms": p50, "latency_p99_ms": p50 * 1.5 if p50 else None,
            "throughput_ips": result["throughput_ips"], "block_medians_ms": [p50] * 4 if p50 else None,
            "result_json": result, "finished": f"2026-11-2{run}T10:00:0{repeat}+00:00", "timing": result["timing"],
            "repeat": repeat, "unstable": unstable or []}


def _repeats(run: int, key: str, backend: str, batch: int, factor: float, **kw: object) -> list[dict[str, object]]:
    return [_row(run, key, backend, batch, p * factor, repeat=i + 1, **kw) for i, p in enumerate(A_RUNS)]


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite"
    db = ResultsDB(path)
    a = db.start_run(label="base", engine="local", workers=1, repeats=3,
                     plan_toml="[constraints]\nobjective = 'throughput'\n")
    b = db.start_run(label="nightly", engine="local", workers=2, repeats=3,
                     plan_toml="[constraints]\nmax_latency_ms = 100\n[[models]]\nsource='zoo:resnet50'\n")
    rows = [
        *_repeats(a, "k-10pct", "ort-cuda", 1, 1.0), *_repeats(b, "k-10pct", "ort-cuda", 1, 1.10),
        *_repeats(a, "k-1pct", "tensorrt", 1, 1.0), *_repeats(b, "k-1pct", "tensorrt", 1, 1.01),
        *_repeats(a, "k-same", "torch-half", 1, 1.0), *_repeats(b, "k-same", "torch-half", 1, 1.0),
        *_repeats(a, "k-lost", "tensorrt", 64, 1.0), _row(b, "k-lost", "tensorrt", 64, None, status="oom"),
        _row(a, "k-fixed", "ort-cuda", 64, None, status="failed"), *_repeats(b, "k-fixed", "ort-cuda", 64, 1.0),
        _row(b, "k-bert", "ort-cuda", 1, 5.0, model="bert", device="NVIDIA H100"),
    ]
    for r in rows:
        db.insert_result(r)
    db.finish_run(a, "complete", 60.0)
    db.finish_run(b, "complete", 31.0)
    db.close()
    return path


def test_compare_judges_on_the_noise_between_runs(db_path: Path) -> None:
    db = ResultsDB(db_path, create=False)
    cmp = compare_runs(db, "base", "nightly", tolerance_pct=2.0)
    by = {c.label: c for c in cmp.changes}
    assert (cmp.a_id, cmp.b_id) == (1, 2) and len(cmp.changes) == 4
    # B = 1.10 x A in every repeat: d = ln 1.1 exactly; both sides' ln spread sd 0.0100 (ln 10, ln 10.1, ln 9.9),
    # pooled over 4 df, se = 0.0100 x sqrt(2/3) = 0.0082: t = 0.0953 / 0.0082 = 11.7, p < 0.001, kept by BH at 5%
    # over the 4 configs judged (threshold for the smallest: 0.05 / 4): 10.0% slower >= 2%: a regression.
    ten = by["resnet50 ort-cuda fp16 b1"]
    assert ten.regression and ten.judgement.change_pct == pytest.approx(10.0) and ten.runs == (3, 3)
    # B = 1.01 x A: t = 0.00995 / 0.0082 = 1.2, p = 0.29: not kept; the 95% interval's half-width
    # t(0.975, 4) x 0.0082 = 2.776 x 0.0082 = 2.3% is under the 10% resolution: no change.
    assert by["resnet50 tensorrt fp16 b1"].verdict == "no change"
    assert by["resnet50 torch-half fp16 b1"].verdict == "no change"
    # ok in A, oom in B: a regression (no figure to judge, the config was lost).
    lost = by["resnet50 tensorrt fp16 b64"]
    assert lost.regression and lost.detail.startswith("ok -> oom")
    # failed in A, measured in B; bert only in B: both left out, each with why.
    why = {o.label: o.why for o in cmp.left_out}
    assert why["resnet50 ort-cuda fp16 b64"] == "no figure in run A (failed); run B measured it"
    assert why["bert ort-cuda fp16 b1"] == "only in run B: run A did not measure it"
    # Tolerance 15%: the 10% slowdown is kept but within the tolerance, not a regression.
    loose = {c.label: c for c in compare_runs(db, "1", "2", tolerance_pct=15.0).changes}
    assert loose["resnet50 ort-cuda fp16 b1"].verdict == "no change"


def test_single_runs_are_too_noisy_until_a_baseline_is_stored(tmp_path: Path) -> None:
    """One run a side: no between-run spread is known, so no verdict; a baseline stored from A/A runs makes the
    same two runs judgeable. A baseline that holds one of the runs compared is worked out again without it."""
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    ids = [db.start_run(label=f"r{i}", engine="local") for i in range(5)]
    # r0, r1, r2: A/A (the same code measured three times: 10.0, 10.2, 10.0 ms); r3 (10.0) vs r4: 20% slower.
    for run, p50 in zip(ids, (10.0, 10.2, 10.0, 10.0, 12.0), strict=True):
        db.insert_result(_row(run, "k", "ort-cuda", 1, p50, model_hash="aa" if run < 5 else "bb"))
    db.close()
    runner = CliRunner()
    res = runner.invoke(app, ["results", str(path), "--compare", "r3", "r4"])
    assert res.exit_code == 0 and "too noisy to judge" in res.output and "--repeats" in res.output, res.output
    res = runner.invoke(app, ["results", str(path), "--noise", "--save-noise", "--run", "r0"])
    assert res.exit_code == 1 and "measured twice" in res.output  # one run selected: nothing to store
    # Runs 1-3 hold the same content "aa": 10.0, 10.2, 10.0 -> ln sd 0.0114 over 2 df (rows finish on day 2N).
    res = runner.invoke(app, ["results", str(path), "--noise", "--save-noise", "--until", "2026-11-23"])
    assert res.exit_code == 0, res.output
    db = ResultsDB(path, create=False)
    (stored,) = db.noise()
    assert stored["df"] == 2 and stored["sd_log"] == pytest.approx(0.01143, abs=1e-4) and stored["runs"] == [1, 2, 3]
    db.close()
    # With the baseline: d = ln 1.2 = 0.182, se = 0.0114 x sqrt 2 = 0.0162, t = 11.3 on 2 df: p = 0.008, a
    # regression; the content change is noted, the pair still compared by name.
    res = runner.invoke(app, ["results", str(path), "--compare", "r3", "r4"])
    assert res.exit_code == 1 and "REGRESSION" in res.output and "model content changed" in res.output, res.output
    # A baseline over runs 1-4 (r3, compared now, among them: 10.0, 10.2, 10.0, 10.0, 3 df) is stored; judging
    # r3 vs r4 leaves r3 out of it again: the spread of runs 1-3 (2 df), the verdict and its figures as above.
    res = runner.invoke(app, ["results", str(path), "--noise", "--save-noise", "--until", "2026-11-24"])
    assert res.exit_code == 0, res.output
    db = ResultsDB(path, create=False)
    assert db.noise()[0]["runs"] == [1, 2, 3, 4] and db.noise()[0]["df"] == 3
    (left,) = stored_baseline(db, leave_out=(4, 5)).values()
    assert (left.df, left.sd_log) == (2, pytest.approx(0.01143, abs=1e-4))
    (every,) = stored_baseline(db).values()  # nothing left out: the stored figure
    assert every.df == 3
    assert stored_baseline(db, leave_out=(1, 2, 3, 4)) == {}  # nothing left to measure the noise with
    judged = compare_runs(db, "r3", "r4").changes[0].judgement
    assert judged.contrast.df == 2 and judged.verdict == "regression"
    db.close()


def test_nothing_comparable_fails_the_gate(db_path: Path, tmp_path: Path) -> None:
    db = ResultsDB(db_path)
    c = db.start_run(label="other", engine="local")
    db.insert_result(_row(c, "k-vit", "ort-cuda", 1, 3.0, model="vit"))
    db.close()
    res = CliRunner().invoke(app, ["results", str(db_path), "--compare", "nightly", "other"])
    assert res.exit_code == 1 and "no config is comparable" in res.output, res.output
    assert "only in run A" in res.output and "nothing was checked" in res.output


def test_a_resumed_run_says_what_it_did_not_measure(db_path: Path) -> None:
    db = ResultsDB(db_path)
    c = db.start_run(label="resumed", engine="local")
    for r in _repeats(c, "k-same", "torch-half", 1, 1.0):
        db.insert_result(r)
    db.finish_run(c, "complete", 5.0, skipped=1, skipped_configs=[{"config_key": "k-10pct",
                                                                   "label": "resnet50 ort-cuda fp16 b1"}])
    cmp = compare_runs(db, "base", "resumed")
    why = {o.label: o.why for o in cmp.left_out}
    assert why["resnet50 ort-cuda fp16 b1"].startswith("only in run A: run B skipped it as already measured by an "
                                                       "earlier run (a resume")
    assert [ch.label for ch in cmp.changes] == ["resnet50 torch-half fp16 b1"]
    db.close()


def test_a_model_edit_still_compares_by_name_and_notes_the_content_change(tmp_path: Path) -> None:
    """The issue's case: a one-character edit of the model file changes its content hash (and so every config
    key); the gate still pairs the configs by model name and says the content changed."""
    from modelcost.sweep.identity import source_hash

    model = tmp_path / "m.py"
    model.write_text("def make():\n    return 1\n")
    before = source_hash(f"{model}:make")
    model.write_text("def make():\n    return 2\n")
    after = source_hash(f"{model}:make")
    assert before != after
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    a, b = db.start_run(engine="local"), db.start_run(engine="local")
    for r in _repeats(a, "key-" + before[:6], "ort-cuda", 1, 1.0, model_hash=before):
        db.insert_result(r)
    for r in _repeats(b, "key-" + after[:6], "ort-cuda", 1, 1.0, model_hash=after):
        db.insert_result(r)
    db.close()
    res = CliRunner().invoke(app, ["results", str(path), "--compare", "1", "2"])
    assert res.exit_code == 0 and "1 config(s) compared" in res.output, res.output
    assert f"model content changed (hash {before[:8]} -> {after[:8]})" in " ".join(res.output.split())


def test_filters_and_best_config(db_path: Path) -> None:
    db = ResultsDB(db_path, create=False)
    assert len(filter_rows(db, gpu="h100")) == 1
    assert len(filter_rows(db, backend="tensorrt", batch=64)) == 4  # A's 3 repeats, B's oom row
    assert len(filter_rows(db, run="nightly", status="ok")) == 13  # all 14 of B but the oom one
    assert len(filter_rows(db, since="2026-11-22")) == 14 and len(filter_rows(db, until="2026-11-21")) == 13
    constraints, objective = plan_constraints(db)  # the latest run's plan
    assert constraints.max_latency_ms == 100 and objective == "throughput"
    best = {(b.model, b.gpu): b.recommendation.best for b in best_configs(filter_rows(db), constraints, objective)}
    # resnet50 on H200, each config's latest run (B), ranked on the run whose p50 is the median of its 3 runs
    # (9.9, 10.0, 10.1 x the factor): ort-cuda b1 at 11.0 ms (90.9 ips), tensorrt b1 at 10.1 ms (99.0 ips),
    # torch-half b1 at 10.0 ms (100 ips), ort-cuda b64 at 10.0 ms (6400 ips), tensorrt b64 oom. p99 = 1.5 x p50
    # <= 100 ms for all: the best throughput is ort-cuda b64.
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
    assert doc["schema"] == "modelcost.sweep/2" and [r["model_name"] for r in doc["rows"]] == ["bert"]
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    for path in (md, html):
        res = runner.invoke(app, ["results", str(db_path), "--report", str(path)])
        assert res.exit_code == 0, res.output
    text = md.read_text()
    assert "## Best config per model and GPU" in text and "## GPU x model (best throughput config)" in text
    assert "| NVIDIA H200 | 6400 ips (ort-cuda fp16 b64) | - |" in text  # the GPU x model table, hand-checked
    assert html.read_text().startswith("<!DOCTYPE html>") and "Best config per model and GPU" in html.read_text()
    res = runner.invoke(app, ["results", str(db_path)])
    assert res.exit_code == 0 and "27 result(s)" in res.output


def test_results_cli_bad_input_is_one_line(tmp_path: Path, db_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["results", str(tmp_path / "none.sqlite")])
    assert res.exit_code == 1 and "no results database" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--compare", "base", "nope"])
    assert res.exit_code == 1 and "no run 'nope'" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--report", str(tmp_path / "r.txt")])
    assert res.exit_code == 1 and "end it in .md or .html" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--save-noise"])
    assert res.exit_code == 1 and "give --noise too" in res.output
    res = runner.invoke(app, ["results", str(db_path), "--compare", "base", "1"])
    assert res.exit_code == 1 and "both name run 1" in res.output


def test_an_unstable_row_is_never_best_without_the_word(tmp_path: Path) -> None:
    """Issue 27: a row the run flagged unstable (p99 19x p50) was stored as ok and picked as a model's best. Now the
    flag is stored and read back: resnet50's unstable ort-cuda b64 (the highest throughput) is left out and the
    why column says so; bert, all of whose rows are unstable, gets a tentative pick marked unstable."""
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    run = db.start_run(engine="local", plan_toml="[[models]]\nsource='zoo:resnet50'\n")
    flag = ["tail: p99 19.0x p50 (limit 3x)"]
    for r in (_row(run, "r64", "ort-cuda", 64, 5.0, unstable=flag), _row(run, "r1", "ort-cuda", 1, 1.0),
              _row(run, "b1", "ort-cuda", 1, 2.0, model="bert", unstable=flag),
              _row(run, "b8", "ort-cuda", 8, 4.0, model="bert", unstable=flag)):
        db.insert_result(r)
    db.close()
    md = tmp_path / "r.md"
    res = CliRunner().invoke(app, ["results", str(path), "--report", str(md)])
    assert res.exit_code == 0, res.output
    best = [line for line in md.read_text().splitlines() if line.startswith(("| resnet50 | NVIDIA", "| bert | NVIDIA"))]
    # resnet50: ort-cuda b1 (1000 ips), not the unstable b64 (64 / 5 ms = 12,800 ips), which the why column names.
    assert best[0].startswith("| resnet50 | NVIDIA H200 | ort-cuda fp16 b1 |") and "1 left out as unstable" in best[0]
    # bert: only unstable rows: the pick (b8, 8 / 4 ms = 2000 ips > 1 / 2 ms = 500 ips) says unstable beside it.
    assert best[1].startswith("| bert | NVIDIA H200 | ort-cuda fp16 b8 (unstable) (tentative) |"), best[1]
    assert "tentative, not reliable: unstable timings (tail: p99 19.0x p50" in best[1]
    assert "unstable" in CliRunner().invoke(app, ["results", str(path)]).output  # the listing shows the flag


def test_throughput_ranks_on_the_median_and_the_why_column_says_what_was_left_out(tmp_path: Path) -> None:
    """Issue 27's 2xH100 report: under "constraints: none" the b64 rows (55 samples, under the 100 a p99 needs)
    were dropped without a word and the b1 row at 786 ips named best, "3 of 8 measured configs meet the
    constraints". The throughput objective ranks on p50 (6 samples suffice), and no constraint count is printed."""
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    run = db.start_run(engine="local", plan_toml="[[models]]\nsource='zoo:resnet50'\n")
    db.insert_result(_row(run, "b64", "torch-half", 64, 5.379, count=55))  # 64 / 5.379 ms = 11,898 ips
    db.insert_result(_row(run, "b1", "ort-cuda", 1, 1.272, count=400))  # 786 ips
    db.insert_result(_row(run, "b1few", "tensorrt", 1, 1.0, count=3))  # 3 samples: the median needs 6
    db.close()
    md = tmp_path / "r.md"
    assert CliRunner().invoke(app, ["results", str(path), "--report", str(md)]).exit_code == 0
    line = next(x for x in md.read_text().splitlines() if x.startswith("| resnet50 | NVIDIA"))  # the best table
    assert line.startswith("| resnet50 | NVIDIA H200 | torch-half fp16 b64 |") and "11898" in line
    assert "meet the constraints" not in line and "the best throughput of 3 measured configs" in line
    assert "1 left out for too few samples (tensorrt fp16 b1: not ranked, p50 from 3 samples" in line


def test_noise_report_and_its_plot(db_path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["results", str(db_path), "--noise"])
    # 5 configs of resnet50 on the H200 measured in 2+ runs with a figure (k-10pct, k-1pct, k-same: 6 rows each;
    # k-lost: A's 3; k-fixed: B's 3). Spreads: k-10pct's runs 9.9 .. 11.11 -> 12.2%; k-1pct 9.9 .. 10.201 ->
    # 3.0%; the other three 10.1 / 9.9 - 1 = 2.02%, just over 2%. Within 2%: 0 of 5; within 5%: 4 of 5 = 80%.
    assert res.exit_code == 0, res.output
    assert "figures that repeat: 0% within 2%, 80% within 5%" in res.output
    md, html = tmp_path / "n.md", tmp_path / "n.html"
    for path in (md, html):
        assert runner.invoke(app, ["results", str(db_path), "--report", str(path)]).exit_code == 0
    assert "## Noise between runs" in md.read_text() and "](n_noise.png)" in md.read_text()
    assert (tmp_path / "n_noise.png").read_bytes().startswith(b"\x89PNG")
    assert 'data-plot="noise"' in html.read_text()


def test_the_results_table_never_prints_exponent_notation(tmp_path: Path) -> None:
    """A sub-microsecond p50 and a six-figure throughput read as numbers, as everywhere else (core.units.number):
    '%g' printed them as 1.234e-05 and 1.5e+05."""
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    run = db.start_run(label="tiny", engine="local")
    row = _row(run, "k", "ort-cpu", 1, 0.00001234)
    row["throughput_ips"] = 150_000.0
    db.insert_result(row)
    db.close()
    res = CliRunner().invoke(app, ["results", str(path)])
    assert res.exit_code == 0, res.output
    assert "0.00001234" in res.output and "150,000" in res.output, res.output
    assert "e-0" not in res.output and "e+0" not in res.output
