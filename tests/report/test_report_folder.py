"""The report folder: every file written, atomically, the INCOMPLETE mark in every format, plots embedded."""

from __future__ import annotations

import csv
import json
import os
import re

import pytest

from tests.report import test_report_data as data
from modelcost.core.types import RunReport
from modelcost.decide.constraints import Constraints
from modelcost.decide.recommend import recommend
from modelcost.report.folder import default_dir, write_report_folder


def test_complete_folder(tmp_path):
    r = data.run()
    samples = tmp_path / "nvml_samples.csv"
    samples.write_text("timestamp,utilization.gpu [%]\n0.0,99\n")
    rec = recommend(r.benchmarks, Constraints(max_latency_ms=2))
    out = write_report_folder(r, tmp_path / "out", samples, recommendation=rec)
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert names == [".modelcost-manifest", "benchmarks.csv", "nvml_samples.csv", "plots", "plots/latency.png",
                     "plots/layers.png", "plots/memory.png", "plots/ops.png", "plots/roofline.png",
                     "plots/throughput.png", "report.html", "report.json", "report.md"]
    # the manifest records every file written (and the plots folder made), so a later run may replace them
    manifest = (out / ".modelcost-manifest").read_text().splitlines()[1:]
    files = [n for n in names if n not in (".modelcost-manifest", "plots")]
    assert sorted(manifest) == sorted(["folder plots", *(f"file {n}" for n in files)])
    doc = json.loads((out / "report.json").read_text())
    assert doc["complete"] is True and doc["schema"].startswith("modelcost.report/")
    # p99 = 1.2 x p50: fp32 b8 has p99 2.4 ms > 2 ms; fp16 b8 (1.44 ms, 8 / 1.2 ms = 6667 ips) is the best.
    assert doc["recommendation"]["best"] == {"backend": "ort-cuda", "precision": "fp16", "batch_size": 8,
                                             "latency_ms_p99": pytest.approx(1.44), "throughput_ips":
                                             pytest.approx(6666.666, rel=1e-6), "role": None}
    md = (out / "report.md").read_text()
    assert "INCOMPLETE" not in md
    assert "Recommended: ort-cuda fp16 b8" in md
    assert "![Throughput vs batch size per backend](plots/throughput.png)" in md
    assert "tiny<net>|x" not in md and "tiny\\<net\\>\\|x" in md  # escaped, so the table does not break
    assert "tensorrt (fp16): unavailable — TensorRT not installed" in md  # grouped by reason
    html = (out / "report.html").read_text()
    assert html.count('src="data:image/png;base64,') == 6  # roofline (report/roofline_plot.py) included
    assert "http://" not in html and "https://" not in html  # nothing to fetch
    assert "tiny&lt;net&gt;|x" in html
    rows = list(csv.DictReader((out / "benchmarks.csv").open()))
    assert len(rows) == 5 and {r["run_complete"] for r in rows} == {"true"}
    assert rows[4]["status"] == "unavailable" and rows[4]["latency_ms_p50"] == ""  # not measured: empty, not 0
    assert float(rows[0]["throughput_ips"]) == pytest.approx(1000.0)  # batch 1 / 1.0 ms


def test_incomplete_run_is_marked_in_every_format(tmp_path):
    out = write_report_folder(data.run(complete=False), tmp_path / "out")
    assert json.loads((out / "report.json").read_text())["complete"] is False
    assert (out / "report.md").read_text().startswith("# modelcost report")
    assert "> **INCOMPLETE: the run was interrupted" in (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    assert '<div class="banner" role="alert">INCOMPLETE' in html and "(INCOMPLETE)</title>" in html
    assert {r["run_complete"] for r in csv.DictReader((out / "benchmarks.csv").open())} == {"false"}
    assert "interrupted by the user (Ctrl-C)" in (out / "report.md").read_text()


def test_default_folder_name_and_no_clobber(tmp_path):
    r = data.run()
    first = write_report_folder(r, root=tmp_path, plots=False)
    assert first.name == "tiny-net-x-20261122-101112"
    second = write_report_folder(r, root=tmp_path, plots=False)
    assert second.name == "tiny-net-x-20261122-101112-2"
    assert default_dir(RunReport(created="not a time"), root=tmp_path).name.startswith("run-")


def test_static_only_run_without_benchmarks(tmp_path):
    out = write_report_folder(RunReport(cost=data.cost(), command="analyze --static"), tmp_path / "s")
    assert (out / "benchmarks.csv").read_text().count("\n") == 1  # the header only
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["layers.png", "ops.png"]
    assert "## Benchmarks" not in (out / "report.md").read_text()


def test_writes_are_atomic(tmp_path, monkeypatch):
    # A crash while writing the HTML leaves the earlier files whole and no temporary files behind.
    from modelcost.report import folder

    out = tmp_path / "out"
    write_report_folder(data.run(), out, plots=False)
    before = (out / "report.html").read_text()

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(folder, "render_html", boom, raising=False)
    import modelcost.report.html as html_mod

    monkeypatch.setattr(html_mod, "render_html", boom)
    with pytest.raises(KeyboardInterrupt):
        write_report_folder(data.run(complete=False), out, plots=False)
    assert json.loads((out / "report.json").read_text())["complete"] is False  # written before the crash
    assert (out / "report.html").read_text() == before  # the old file, whole
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]


def test_plot_failure_does_not_lose_the_report(tmp_path, monkeypatch):
    from modelcost.report import plots

    def broken(*a, **k):
        raise RuntimeError("no fonts")

    monkeypatch.setattr(plots, "latency_percentiles", broken)
    out = write_report_folder(data.run(), tmp_path / "o")
    md = (out / "report.md").read_text()
    assert "plot 'latency' not drawn: RuntimeError: no fonts" in md
    assert re.search(r"plots/throughput\.png", md)


def test_api_write_report_hook_adds_the_recommendation(tmp_path):
    # What analyze / bench call: the folder plus a "best throughput" recommendation when configs were measured.
    from modelcost import api

    out = api.write_report(data.run(), str(tmp_path / "b"))
    doc = json.loads((out / "report.json").read_text())
    assert doc["recommendation"]["best"]["precision"] == "fp16" and doc["recommendation"]["constraints"] == {}
    # Pareto by p99: fp16 b1 (0.96 ms, 1250 ips), fp16 b8 (1.44 ms, 6667 ips); the fp32 configs are dominated.
    assert [(c["precision"], c["batch_size"]) for c in doc["recommendation"]["pareto"]] == [("fp16", 1), ("fp16", 8)]
    static = api.write_report(RunReport(cost=data.cost()), str(tmp_path / "s"))
    assert "recommendation" not in json.loads((static / "report.json").read_text())


def test_real_cpu_bench_run_report(tmp_path):
    # A real (tiny) benchmark on ONNX Runtime's CPU provider, written through the hook: every figure in the CSV
    # is one the run measured.
    from tests.decide.test_quantize import make_convnet

    from modelcost import api
    from modelcost.bench.base import BenchConfig

    net = make_convnet(tmp_path / "net.onnx", channels=8)
    run = RunReport(cost=api.analyze_static(str(net), batch_size=1), command="bench")
    config = BenchConfig(device="cpu", warmup=3, warmup_max_s=0.3, min_time_s=0.0, min_iters=5, max_time_s=0.3)
    _, run.device = api.run_benchmarks(str(net), backends=["ort-cpu"], batch_sizes=[1, 2], config=config,
                                       results=run.benchmarks)
    out = api.write_report(run, str(tmp_path / "r"))
    rows = list(csv.DictReader((out / "benchmarks.csv").open()))
    assert [(r["backend"], r["batch_size"], r["status"]) for r in rows] == [("ort-cpu", "1", "ok"),
                                                                            ("ort-cpu", "2", "ok")]
    for r in rows:
        assert float(r["throughput_ips"]) == pytest.approx(int(r["batch_size"]) / float(r["latency_ms_p50"]) * 1e3)
        assert r["gpu_memory_peak_bytes"] == "" and r["power_w_mean"] == ""  # CPU: not measured, not zero
    assert (out / "plots" / "throughput.png").is_file() and not (out / "plots" / "memory.png").exists()


def test_writing_the_folder_leaves_the_run_as_it_was(tmp_path):
    # The writer builds its own copy: the caller's RunReport keeps its notes, created time and completeness,
    # even when the samples CSV is missing (a note in the report) and the run had no creation time.
    run = data.run()
    run.created = ""
    before = (list(run.notes), run.created, run.complete)
    folder = write_report_folder(run, tmp_path / "r", samples_csv=tmp_path / "missing.csv")
    assert (list(run.notes), run.created, run.complete) == before
    doc = json.loads((folder / "report.json").read_text())
    assert doc["created"] and any("missing.csv was not found" in n for n in doc["run_notes"])


def test_every_plot_is_drawn_once(tmp_path, monkeypatch):
    # A layout engine (constrained, tight) or bbox_inches="tight" makes savefig draw a figure twice, once to measure
    # and once to render: most of a report folder's CPU time (issue 24 item 9). Six plots, six draws.
    from matplotlib.figure import Figure

    draws = []
    real = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(self), real(self, renderer))[1])
    out = write_report_folder(data.run(), tmp_path / "out")
    pngs = sorted(p.name for p in (out / "plots").iterdir())
    assert len(pngs) == 6 and len(draws) == 6, (pngs, len(draws))
