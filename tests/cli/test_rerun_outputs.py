"""Output paths that already exist: a second run replaces the first run's files (atomically, and says so); a path
that really cannot be written is still refused before anything is measured."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.cli.options import check_writable, publish_samples, staged_samples
from modelcost.core.errors import ModelcostError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
CONV = str(Path(__file__).resolve().parents[2] / "sample_models" / "conv_float.onnx")
FAST = ("--device", "cpu", "--backends", "ort-cpu", "--min-time-s", "0", "--min-iters", "3", "--max-time-s", "0.05",
        "--warmup", "1")
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # root may write anything: permission refusals cannot show


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def stale(path: Path) -> Path:
    path.write_text("left by an earlier run\n")
    return path


# --- check_writable ------------------------------------------------------------------------------------------


def test_an_existing_file_is_accepted_for_every_file_option(tmp_path: Path) -> None:
    files = tuple(stale(tmp_path / n) for n in ("r.json", "s.csv", "r.png"))
    check_writable(files=files, folders=(tmp_path, tmp_path / "new" / "deeper"))  # no error


@pytest.mark.parametrize("want_folder", [False, True])
def test_the_wrong_kind_of_path_is_refused(tmp_path: Path, want_folder: bool) -> None:
    path = tmp_path / "thing"
    path.write_text("x") if want_folder else path.mkdir()
    with pytest.raises(ModelcostError, match="it is a (file|folder); choose another path"):
        check_writable(folders=(path,)) if want_folder else check_writable(files=(path,))


def test_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelcostError, match="is not a writable folder"):
        check_writable(files=(stale(tmp_path / "f.txt") / "r.json",))


@pytest.mark.skipif(ROOT, reason="root can write a read-only file or folder")
def test_a_read_only_file_or_folder_is_refused(tmp_path: Path) -> None:
    ro_file = stale(tmp_path / "r.json")
    ro_file.chmod(0o444)
    with pytest.raises(ModelcostError, match="the file is read-only"):
        check_writable(files=(ro_file,))
    ro_dir = tmp_path / "ro"
    ro_dir.mkdir()
    ro_dir.chmod(0o555)
    try:
        with pytest.raises(ModelcostError, match="is not a writable folder"):
            check_writable(files=(ro_dir / "r.json",))
    finally:
        ro_dir.chmod(0o755)


# --- the staged NVML samples CSV -----------------------------------------------------------------------------


def test_samples_of_a_failed_run_leave_the_old_file_and_no_staging_folder(tmp_path: Path) -> None:
    final = stale(tmp_path / "s.csv")
    with pytest.raises(RuntimeError), staged_samples(final) as staged:
        assert staged is not None and staged.name == "s.csv" and staged.parent != tmp_path
        raise RuntimeError("the run failed before its outputs were written")
    assert final.read_text() == "left by an earlier run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


def test_published_samples_replace_the_old_file(tmp_path: Path) -> None:
    final = stale(tmp_path / "s.csv")
    with staged_samples(final) as staged:
        with staged.open("a") as fh:  # two rows appended by the sampler during the run
            fh.write("ort-cpu,fp32,1\nort-cpu,fp32,1\n")
        line = publish_samples(staged, final)
    assert line == f"NVML samples: {final} (2 rows; replaced the previous file)"
    assert final.read_text().startswith("backend,precision,batch_size,") and final.read_text().count("\n") == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


# --- each file option, through the CLI -----------------------------------------------------------------------


def test_analyze_static_json_twice(tmp_path: Path) -> None:
    out = stale(tmp_path / "out.json")
    result = invoke("analyze", CONV, "--static", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert f"JSON report: {out} (replaced the previous file)" in result.stdout
    assert json.loads(out.read_text())["schema"] == "modelcost.report/1"


def test_bench_replaces_json_and_samples_csv_and_accepts_an_existing_plot_path(tmp_path: Path) -> None:
    js, csv, png = stale(tmp_path / "b.json"), stale(tmp_path / "s.csv"), stale(tmp_path / "r.png")
    result = invoke("bench", CONV, *FAST, "--json", str(js), "--samples-csv", str(csv), "--roofline-plot", str(png))
    assert result.exit_code == 0, result.output
    assert f"JSON report: {js} (replaced the previous file)" in result.stdout
    # No GPU here: the CSV is this run's, with its header and no rows (not the old file, not appended to).
    assert f"NVML samples: {csv} (header only: no GPU was sampled; replaced the previous file)" in result.stdout
    assert csv.read_text().splitlines()[0].startswith("backend,precision,batch_size,")
    assert len(csv.read_text().splitlines()) == 1
    assert json.loads(js.read_text())["benchmarks"][0]["status"] == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "r.png", "s.csv"]  # no staging left behind


def test_recommend_replaces_the_samples_csv(tmp_path: Path) -> None:
    csv = stale(tmp_path / "s.csv")
    result = invoke("recommend", CONV, *FAST, "--latency-stat", "p50", "--batch-size", "1", "--samples-csv", str(csv))
    assert result.exit_code == 0, result.output
    assert f"NVML samples: {csv} (header only" in result.stdout and "replaced the previous file" in result.stdout
    assert len(csv.read_text().splitlines()) == 1


def test_gpu_name_json_twice(tmp_path: Path) -> None:
    out = stale(tmp_path / "gpu.json")
    result = invoke("gpu", "--name", "A100", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert f"GPU spec JSON: {out} (replaced the previous file)" in result.stdout
    assert json.loads(out.read_text())["gpu"]["name"]


def test_a_folder_in_the_way_is_still_refused_up_front(tmp_path: Path) -> None:
    (tmp_path / "out.json").mkdir()
    result = invoke("bench", CONV, *FAST, "--json", str(tmp_path / "out.json"))
    assert result.exit_code == 1
    assert "it is a folder; choose another path" in result.stderr
    assert "benchmarks:" not in result.stdout  # refused before anything was measured
