"""bench.screening_record: a config that an earlier run's figures show hopelessly slow is not measured again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modelcost.bench.base import BenchConfig
from modelcost.bench.screening_record import REUSE_FACTOR, beaten_earlier
from modelcost.core.types import BenchResult, LatencyStats


def res(backend: str, batch: int, p50: float) -> BenchResult:
    lat = LatencyStats(count=20, p50=p50, p90=p50, p95=p50, p99=p50, mean=p50, std=0.0, min=p50, max=p50)
    return BenchResult(backend, "fp32", batch, "ok", latency_ms=lat, throughput_ips=batch / p50 * 1e3)


def earlier(p50: float, batch: int = 1) -> dict:
    return {"p50_ms": p50, "throughput_ips": batch / p50 * 1e3, "measurement": "screening",
            "measured_utc": "2026-11-23T18:00:00+00:00"}


def test_only_more_than_twice_as_fast_on_both_counts() -> None:
    # Batch 1: throughput = 1000 / p50. A config measured now at 1.0 ms (1,000 ips) beats an earlier 2.1 ms
    # (476.2 ips) by 2.1x on both -> not measured again; an earlier 1.9 ms is inside the 2x -> measured.
    now = [res("fast", 1, 1.0)]
    assert REUSE_FACTOR == 2.0
    row = beaten_earlier("slow", "fp32", 1, earlier(2.1), now)
    assert row is not None and row.status == "screened" and row.latency_ms is None and row.throughput_ips is None
    assert "fast fp32 b1, measured now (1.0000 ms p50, 1,000.0 ips), is more than 2x faster" in row.reason
    assert "(2.1000 ms p50, 476.2 ips; screening measurement of 2026-11-23T18:00:00+00:00" in row.reason
    assert row.reason.endswith("--fresh measures it again") and row.extra.earlier_run.p50_ms == 2.1
    assert beaten_earlier("slow", "fp32", 1, earlier(1.9), now) is None
    # Batch 8 at 4 ms (2,000 ips) beats an earlier batch-1 4.5 ms (222 ips) on throughput but not latency: kept.
    assert beaten_earlier("slow", "fp32", 1, earlier(4.5), [res("big", 8, 4.0)]) is None
    # A config that cannot be the answer (fails a constraint) beats nothing.
    assert beaten_earlier("slow", "fp32", 1, earlier(2.1), now, qualifies=lambda r: False) is None
    # A row with no figures of this run (itself left out) beats nothing.
    assert beaten_earlier("slow", "fp32", 1, earlier(2.1), [BenchResult("x", "fp32", 1, "screened")]) is None


def _tiny():
    import torch

    from modelcost.bench.model import from_module
    from modelcost.core.types import TensorSpec

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.LazyLinear(10))
    net(torch.zeros(1, 3, 16, 16))
    return from_module(net.eval(), lambda b: [TensorSpec("x", (b, 3, 16, 16), "float32")], name="tiny")


def _fast(tmp_path: Path, **kw) -> BenchConfig:
    base = dict(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.02, min_iters=5, max_time_s=0.3,
                e2e_min_iters=2, e2e_max_s=0.02, cache_dir=tmp_path / "cache")
    base.update(kw)
    return BenchConfig(**base)


def _slow_down(cache: Path, label: str, factor: float) -> None:
    """Make an earlier run's figure of ``label`` ``factor`` times slower (as if it had lost by that much), and every
    other earlier figure unbeatable (the tiny model's backends differ by more than 2x of their own at times)."""
    (path,) = (cache / "screening").glob("*.json")
    data = json.loads(path.read_text())
    for name, row in data["rows"].items():
        row["p50_ms"], row["throughput_ips"] = ((row["p50_ms"] * factor, row["throughput_ips"] / factor)
                                                if name == label else (1e-9, 1e15))
    path.write_text(json.dumps(data))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_rerun_leaves_out_what_lost_by_more_than_2x(tmp_path: Path) -> None:
    from modelcost.bench.runner import run_benchmarks

    def sweep(**kw) -> dict:
        model = _tiny()
        rejects = kw.pop("rejects", None)
        results, _ = run_benchmarks(model, backends=["ort-cpu", "torch-cpu"], batch_sizes=[1, 4],
                                    config=_fast(tmp_path, **kw), screen=True, rejects=rejects)
        return {(r.backend, r.batch_size): r for r in results}

    first = sweep()  # an empty record: everything measured, and written down
    assert all(r.latency_ms is not None for r in first.values())
    _slow_down(tmp_path / "cache", "torch-cpu fp32 b4", 50.0)  # as if torch-cpu had been 50x slower at batch 4
    again = sweep()
    left_out = again[("torch-cpu", 4)]
    assert left_out.status == "screened" and left_out.latency_ms is None
    assert "ort-cpu fp32" in left_out.reason and "earlier run" in left_out.reason
    assert all(r.latency_ms is not None for k, r in again.items() if k != ("torch-cpu", 4))
    # The record keeps the earlier figure with its own date: a left-out row is never written as if measured anew.
    (path,) = (tmp_path / "cache" / "screening").glob("*.json")
    kept = json.loads(path.read_text())["rows"]["torch-cpu fp32 b4"]
    assert kept["measured_utc"] == left_out.extra.earlier_run.measured_utc
    # --fresh measures it; so does a run whose faster configs fail the constraints (here none meets them by the
    # screening margin, the test a config must pass to screen another out)
    assert sweep(reuse_earlier=False)[("torch-cpu", 4)].latency_ms is not None
    _slow_down(tmp_path / "cache", "torch-cpu fp32 b4", 50.0)
    refused = sweep(rejects=lambda r, margin: "over the limit" if margin < 0 else None)
    assert refused[("torch-cpu", 4)].latency_ms is not None
    # other measurement settings are another record: nothing of this one is used
    _slow_down(tmp_path / "cache", "torch-cpu fp32 b4", 50.0)
    assert sweep(min_iters=6)[("torch-cpu", 4)].latency_ms is not None


def test_every_batch_left_out_means_not_even_prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.bench import registry
    from modelcost.bench.reference import Reference
    from modelcost.bench.runner import run_benchmarks

    config = _fast(tmp_path)
    run_benchmarks(_tiny(), backends=["ort-cpu", "torch-cpu"], batch_sizes=[1], config=config, screen=True)
    _slow_down(tmp_path / "cache", "torch-cpu fp32 b1", 50.0)
    real = registry.get_backend
    prepared = []

    def spy(name: str):
        backend = real(name)
        prepare = backend.prepare

        def counted(*args, **kw):
            prepared.append(name)
            return prepare(*args, **kw)

        backend.prepare = counted
        return backend

    monkeypatch.setattr(registry, "get_backend", spy)
    monkeypatch.setattr(Reference, "get", lambda self, batch: "no reference (this test counts the sweep's backends)")
    results, _ = run_benchmarks(_tiny(), backends=["ort-cpu", "torch-cpu"], batch_sizes=[1], config=config,
                                screen=True)
    assert [r.status for r in results if r.backend == "torch-cpu"] == ["screened"]
    assert prepared == ["ort-cpu"]


def test_cli_rerun_reports_the_left_out_row_and_fresh_measures_it(tmp_path: Path, monkeypatch) -> None:
    # recommend on the CPU with screening on, twice: the second run leaves out batch 4 (its earlier figure made 50x
    # slower, so this run's batch 1 beats it by more than 2x) and every output says why; --fresh measures it.
    from typer.testing import CliRunner

    from modelcost.cli.app import app
    from tests.decide.test_quantize import make_convnet

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    model = make_convnet(tmp_path / "convnet.onnx", channels=8)
    args = ["recommend", str(model), "--backends", "ort-cpu", "--batch-sizes", "1,4", "--screen", "--device", "cpu",
            "--min-time-s", "0", "--min-iters", "100", "--max-time-s", "0.3", "--warmup", "3"]
    assert CliRunner().invoke(app, args).exit_code == 0
    _slow_down(tmp_path / "cache", "ort-cpu fp32 b4", 50.0)
    out = tmp_path / "rep"
    r = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "recommended: ort-cpu fp32 b1" in r.output
    doc = json.loads((out / "report.json").read_text())
    (row,) = [b for b in doc["benchmarks"] if b["batch_size"] == 4]
    assert row["status"] == "screened" and row["latency_ms"] is None and "earlier run" in row["reason"]
    assert row["extra"]["earlier_run"]["measurement"] in ("screening", "full (after screening)")
    assert row["extra"]["earlier_run"]["beaten_by_more_than"] == 2.0
    # the console and the Markdown say it in one line (a warm run leaves out a dozen configs), the JSON row in full
    summary = "ort-cpu fp32 b4: left out of this run, each beaten more than 2x on latency and throughput"
    assert summary in (out / "report.md").read_text() and summary in " ".join(r.output.split())
    _slow_down(tmp_path / "cache", "ort-cpu fp32 b4", 50.0)
    fresh = tmp_path / "fresh.json"  # --json: report.json's rows without drawing a folder's plots again
    assert CliRunner().invoke(app, [*args, "--fresh", "--json", str(fresh)]).exit_code == 0
    doc = json.loads(fresh.read_text())
    assert all(b["latency_ms"] is not None for b in doc["benchmarks"])


def test_left_out_rows_are_named_in_one_line_grouped_by_config() -> None:
    from modelcost.core.measurement import EarlierRun
    from modelcost.report.sections_bench import left_out_line

    def row(backend: str, batch: int, when: str) -> BenchResult:
        r = BenchResult(backend, "fp32", batch, "screened", reason="...")
        r.extra.earlier_run = EarlierRun(2.1, 480.0, "screening", when, 2.0)
        return r

    rows = [row("torch-eager", 1, "2026-11-23T18:55:59+00:00"), row("torch-eager", 64, "2026-11-23T18:56:01+00:00"),
            row("ort-cuda", 1, "2026-11-23T18:56:25+00:00"), BenchResult("x", "fp16", 1, "failed", reason="boom")]
    assert left_out_line(rows) == (
        "torch-eager fp32 b1, b64; ort-cuda fp32 b1: left out of this run, each beaten more than 2x on latency "
        "and throughput by a config measured now against its own figures from an earlier run "
        "(2026-11-23T18:55:59+00:00 to 2026-11-23T18:56:25+00:00; each row's reason has them; --fresh measures "
        "every config)")
    assert left_out_line(rows[3:]) is None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_model_that_cannot_be_hashed_is_measured_in_full_without_a_record(tmp_path: Path, monkeypatch) -> None:
    from modelcost.bench.model import BenchModel
    from modelcost.bench.runner import run_benchmarks

    def broken(self):  # noqa: ANN001, ANN202
        raise OSError("weights unreadable")

    monkeypatch.setattr(BenchModel, "content_hash", broken)
    results, _ = run_benchmarks(_tiny(), backends=["torch-cpu"], batch_sizes=[1], config=_fast(tmp_path), screen=True)
    assert [r.status for r in results] == ["ok"] and not (tmp_path / "cache" / "screening").exists()
