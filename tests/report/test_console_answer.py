"""The console answer of a GPU analyze run (issue 26), on a realistic finished run built without a GPU
(tests/gpu_run.py: ResNet-50's counts, the default sweep on an H100 with screened, unavailable, failed and
out-of-memory rows): what the run found comes first, the whole answer fits a screen, and nothing the console
leaves out is lost from the report files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from modelcost.core.types import RunReport
from modelcost.decide.recommend import run_pick
from modelcost.report.console_run import print_run
from tests.gpu_run import resnet50_h100_run, with_gpu

SCREEN_LINES = 60


def _answer(run: RunReport, width: int) -> str:
    buf = io.StringIO()
    print_run(run, run_pick(run.benchmarks), Console(file=buf, width=width, emoji=False, highlight=False),
              title="benchmarks: zoo:resnet50")
    return buf.getvalue()


@pytest.fixture(scope="module")
def run() -> RunReport:
    return with_gpu(resnet50_h100_run())


@pytest.mark.parametrize("width", [100, 120])
def test_the_gpu_answer_fits_a_screen(run: RunReport, width: int) -> None:
    text = _answer(run, width)
    lines = text.splitlines()
    assert len(lines) <= SCREEN_LINES, text  # was 317 lines at width 100 before issue 26
    assert max(len(line.rstrip()) for line in lines) <= width
    assert lines[0].startswith("What this run found")
    # every config that ran has its one line: 9 measured, 4 screened, 1 out of memory, 1 failed
    for r in run.benchmarks:
        if r.status != "unavailable":
            assert any(line.split()[:3] == [r.backend, r.precision, str(r.batch_size)] for line in lines), r
    assert sum(" screened [" in line for line in lines) == 4
    assert any(line.strip().startswith("[5] out of memory at batch 128") for line in lines)
    # a backend that cannot run here: one line per reason, its precisions named
    joined = " ".join(text.split())
    assert "ort-tensorrt (fp32, fp16): unavailable — onnxruntime has no TensorRT execution provider" in joined
    assert "torch-cpu (fp32), ort-cpu (fp32): unavailable — a CPU backend" in joined


def test_the_found_block_names_the_fastest_and_the_most_throughput(run: RunReport) -> None:
    found = _answer(run, 120).split("\n\n")[0]
    # fastest at batch 1: torch-compile-cudagraph fp16, p50 0.6021 ms; cv = std / mean = 0.01 / 1.005 = 1.0%
    assert "fastest at batch 1: torch-compile-cudagraph fp16, p50 0.6021 ms ±1.0%" in found
    # most throughput: tensorrt fp16 at batch 128: 128 / 11.93 ms = 10,729 images/s
    assert "most throughput: tensorrt fp16 b128, 10,729 IPS" in found
    # decide's pick (best throughput, no constraints) and how sure: 10,729 / 9,808 (the next) = +9.4%
    assert "pick (best throughput, no constraints): tensorrt fp16 b128; sure: ahead of " \
           "torch-compile-cudagraph fp16 b128 beyond the timing noise (+9.4% IPS)" in " ".join(found.split())
    assert "4,089,184,256 MACs" in found and "all ops counted" in found
    assert "9 of 19 configs measured in full; 4 screened out, 1 out of memory, 1 failed, 4 unavailable" in \
        " ".join(found.split())


def test_incomplete_counts_are_said_in_the_found_block(run: RunReport) -> None:
    import dataclasses

    cost = dataclasses.replace(run.cost, compute=dataclasses.replace(
        run.cost.compute, complete=False, uncounted_ops={"DeformConv": 3}, incomplete_reasons=["DeformConv x3"]))
    found = " ".join(_answer(dataclasses.replace(run, cost=cost), 120).split("\n\n")[0].split())
    assert "≥ 4,089,184,256 MACs" in found
    assert "warning: the counts are incomplete" in found and "not counted: DeformConv x3" in found


MEASURED = ("latency_ms", "e2e_latency_ms", "throughput_ips", "first_inference_ms", "build_s",
            "gpu_memory_peak_bytes", "power_w_mean", "energy_j_per_inference", "gpu_util_mean", "sm_clock_mhz_mean",
            "accuracy")


def _figures(entry: dict) -> dict[str, float]:
    """Every measured number of one JSON benchmark entry, by its dotted key."""
    out: dict[str, float] = {}
    for key in MEASURED:
        value = entry.get(key)
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items() if isinstance(v, (int, float))})
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    return out


def _in_csv(row: dict[str, str], value: float) -> bool:
    return any(cell and _same(cell, value) for cell in row.values())


def _same(cell: str, value: float) -> bool:
    try:
        return float(cell) == pytest.approx(value, rel=1e-12, abs=0)
    except ValueError:
        return False


def test_the_cli_answer_fits_and_the_report_files_keep_every_measured_figure(tmp_path: Path, monkeypatch) -> None:
    from modelcost import api

    def fake_run(model, options, progress=None, run=None):  # noqa: ANN001 - the pipeline's stages, already done
        done = with_gpu(resnet50_h100_run())
        for name in ("cost", "benchmarks", "gpu", "device", "notes", "layer_tables"):
            setattr(run, name, getattr(done, name))
        for stage in ("static", "benchmarks", "roofline"):
            progress(stage, run)
        return run

    monkeypatch.setattr(api, "run", fake_run)
    folder, out = tmp_path / "report", tmp_path / "run.json"
    res = CliRunner().invoke(api_app(), ["analyze", "zoo:resnet50", "--out", str(folder), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert len(res.stdout.splitlines()) <= SCREEN_LINES, res.stdout
    assert res.stdout.startswith("What this run found")
    doc = json.loads(out.read_text())
    rows = list(csv.DictReader((folder / "benchmarks.csv").open()))
    md = (folder / "report.md").read_text()
    assert "What this run found" in md and "pick (best throughput, no constraints): tensorrt fp16 b128" in md
    assert "Per-layer intensity vs the fp32 ridge point" in md  # the console leaves it to the report
    for entry, row in zip(doc["benchmarks"], rows, strict=True):
        assert (row["backend"], row["precision"], row["batch_size"]) == \
            (entry["backend"], entry["precision"], str(entry["batch_size"]))
        missing = [k for k, v in _figures(entry).items() if not _in_csv(row, v)]
        assert not missing, (entry["backend"], entry["precision"], entry["batch_size"], missing)
        if entry["reason"]:
            assert entry["reason"] in row["reason"] and entry["reason"].replace("_", "\\_")[:60] in md


def api_app():  # noqa: ANN201
    from modelcost.cli import app

    return app
