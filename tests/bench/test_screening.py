"""Issue 9 on the CPU: the screening rule, the saturating-batch search, and both through a real ort-cpu sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelcost.bench.base import BenchConfig
from modelcost.bench.batch_search import saturating_batch
from modelcost.bench.screening import after_screening, dominator, screen_out_reason, screening_config, speed_rank
from modelcost.core.types import BenchResult, LatencyStats


def res(backend: str, batch: int, p50: float) -> BenchResult:
    lat = LatencyStats(count=20, p50=p50, p90=p50, p95=p50, p99=p50, mean=p50, std=0.0, min=p50, max=p50)
    return BenchResult(backend, "fp32", batch, "ok", latency_ms=lat, throughput_ips=batch / p50 * 1e3)


def test_screening_config_is_never_longer_than_asked():
    full = BenchConfig(min_time_s=1.0, min_iters=50, max_time_s=20.0)
    s = screening_config(full)
    assert (s.min_time_s, s.min_iters, s.max_time_s, s.target_rel_ci) == (0.1, 10, 1.0, 0.03)
    assert (s.warmup_min_cuda_s, s.e2e_min_iters) == (0.1, 0)  # no end-to-end loop while screening
    # the full measurement that follows a screening of the same session: no warm-up floor, the settle rule stays
    after = after_screening(full)
    assert (after.warmup_min_cuda_s, after.warmup_settle, after.min_time_s) == (0.0, full.warmup_settle, 1.0)
    short = BenchConfig(min_time_s=0.01, min_iters=3, max_time_s=0.1)
    s = screening_config(short)
    assert (s.min_time_s, s.min_iters, s.max_time_s) == (0.01, 3, 0.1)


def test_dominated_only_beyond_the_margin():
    # Same batch: throughput = 1/p50, so 'dominated' = slower by more than 10% on both axes.
    fast = res("a", 1, 1.0)
    close = res("b", 1, 1.09)  # 9% slower: inside the 10% margin -> kept for the full measurement
    slow = res("c", 1, 1.2)  # 1.0 x 1.1 = 1.1 < 1.2 and 1000 > 833.3 x 1.1 = 916.7 -> dominated
    assert dominator(close, [fast]) is None
    assert dominator(slow, [fast]) is fast
    # Another batch: 8/4 ms = 2000 ips beats on throughput but not on latency -> never dominates batch 1.
    assert dominator(slow, [res("d", 8, 4.0)]) is None
    why = screen_out_reason(slow, [fast])
    assert why.startswith("screened out: a fp32 b1 is faster by more than 10%") and "1,000.0 vs 833.3 ips" in why


def test_a_constraint_failing_beyond_the_margin_screens_out():
    r = res("a", 1, 30.0)
    def rejects(x: BenchResult, margin: float) -> str | None:
        return "p99 latency 30 ms > 20 ms" if x.latency_ms.p99 > 20 * (1 + margin) else None

    why = screen_out_reason(r, [], rejects=rejects)
    assert why == "screened out: p99 latency 30 ms > 20 ms (by more than the 10% screening margin)"


def test_only_a_config_that_meets_the_constraints_screens_others_out():
    # recommend --max-accuracy-drop-pct 0.1: the fp16 config is 3x faster but drops 0.5% (cosine 0.995); it cannot
    # be the answer, so it must not screen out the slower fp32 config that may be.
    from modelcost.core.types import AccuracyStats
    from modelcost.decide.constraints import Constraints, screening_rejects

    fast16, slow32 = res("a", 1, 1.0), res("b", 1, 3.0)
    fast16.precision = "fp16"
    fast16.accuracy = AccuracyStats(max_abs_err=0.1, max_rel_err=0.1, cosine=0.995, top1_agreement=None)
    slow32.accuracy = AccuracyStats(max_abs_err=0.0, max_rel_err=0.0, cosine=1.0, top1_agreement=None)
    rejects = screening_rejects(Constraints(max_accuracy_drop_pct=0.1))
    assert rejects(fast16, -0.1) is not None and screen_out_reason(slow32, [fast16], rejects=rejects) is None
    # without that constraint it dominates as before
    assert screen_out_reason(slow32, [fast16], rejects=screening_rejects(Constraints())) is not None
    # a dominator's constrained figure that was not measured (no accuracy) counts as failing: it screens out nothing
    fast16.accuracy = None
    assert screen_out_reason(slow32, [fast16], rejects=rejects) is None
    # ... and must meet the limit by more than the margin: 18 ms against --max-latency-ms 20 is inside 20 / 1.1
    lat = screening_rejects(Constraints(max_latency_ms=20.0))
    assert lat(res("a", 1, 18.0), -0.1) is None and lat(res("a", 1, 18.5), -0.1) is not None


def test_likely_fast_configs_are_screened_first():
    pairs = [("torch-eager", "fp32"), ("torch-compile-cudagraph", "bf16"), ("torch-compile-cudagraph", "fp16"),
             ("ort-cuda", "fp16")]
    assert sorted(pairs, key=speed_rank)[0] == ("torch-compile-cudagraph", "fp16")


def test_saturating_batch_doubles_while_ips_grows_more_than_5_percent():
    # IPS: b1 100, b2 190 (+90%), b4 350 (+84%), b8 600 (+71%), b16 620 (+3.3% <= 5%): stop, choose 8.
    table = {1: 100.0, 2: 190.0, 4: 350.0, 8: 600.0, 16: 620.0, 32: 640.0}
    s = saturating_batch(table.get)
    assert s.batch == 8 and [b for b, _ in s.trail] == [1, 2, 4, 8, 16]
    assert "doubling to 16 added +3.3% IPS" in s.reason


def test_saturating_batch_stops_at_memory_and_at_the_cap():
    s = saturating_batch({1: 10.0, 2: 20.0, 4: None}.get)  # b4 out of memory: choose 2
    assert s.batch == 2 and s.reason == "batch 4 did not run (out of memory)"
    s = saturating_batch({1: 10.0, 2: "the model's inputs fix the batch dimension at 1"}.get)
    assert s.batch == 1 and s.reason == "batch 2 did not run (the model's inputs fix the batch dimension at 1)"
    s = saturating_batch(lambda b: float(b), max_batch=16)  # linear forever: stops at the cap
    assert s.batch == 16 and "largest batch searched (16)" in s.reason
    assert saturating_batch(lambda b: None).batch == 1


def _fast(tmp_path: Path, **kw) -> BenchConfig:
    base = dict(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.02, min_iters=5, max_time_s=0.3,
                e2e_min_iters=2, e2e_max_s=0.02, cache_dir=tmp_path / "cache")
    base.update(kw)
    return BenchConfig(**base)


def _tiny():
    import torch

    from modelcost.bench.model import from_module
    from modelcost.core.types import TensorSpec

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.LazyLinear(10))
    net(torch.zeros(1, 3, 16, 16))
    return from_module(net.eval(), lambda b: [TensorSpec("x", (b, 3, 16, 16), "float32")], name="tiny")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_screened_sweep_reports_every_config(tmp_path: Path) -> None:
    # torch-cpu and ort-cpu at batch 1 and 4: every config ends as "ok" (full measurement) or "screened" with its
    # screening figures and the reason; nothing is silently missing, and the order is the plan's.
    from modelcost.bench.runner import run_benchmarks

    results, _ = run_benchmarks(_tiny(), backends=["torch-cpu", "ort-cpu"], batch_sizes=[1, 4],
                                config=_fast(tmp_path), screen=True)
    assert [(r.backend, r.batch_size) for r in results] == [("torch-cpu", 1), ("torch-cpu", 4), ("ort-cpu", 1),
                                                            ("ort-cpu", 4)]
    for r in results:
        assert r.status in ("ok", "screened") and r.latency_ms is not None
        if r.status == "screened":  # no end-to-end loop in a screening, and the row says so
            assert r.reason.startswith("screened out:") and r.extra.measurement == "screening"
            assert r.e2e_latency_ms is None and r.extra.e2e_timing.startswith("not measured")
        else:
            assert r.extra.measurement == "full (after screening)" and r.extra.screening_p50_ms > 0
            # the accuracy of the screening's outputs: the same session on the same inputs, compared once
            assert r.accuracy is not None and r.extra.accuracy_outputs.startswith("this session's screening")
            assert r.e2e_latency_ms is not None and r.e2e_latency_ms.p50 > 0
    # A rejects() that refuses batch 4 screens out exactly the batch-4 configs.
    results, _ = run_benchmarks(_tiny(), backends=["ort-cpu"], batch_sizes=[1, 4], config=_fast(tmp_path),
                                screen=True, rejects=lambda r, m: "batch 4 refused" if r.batch_size == 4 else None)
    assert {r.batch_size: r.status for r in results} == {1: "ok", 4: "screened"}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_throughput_batch_search_on_ort_cpu(tmp_path: Path) -> None:
    from modelcost.bench.batch_search import find_throughput_batch

    search = find_throughput_batch(_tiny(), [("ort-cpu", "fp32")], _fast(tmp_path), max_batch=64)
    assert search is not None and search.probe == "ort-cpu fp32"
    assert search.trail[0][0] == 1 and all(ips and ips > 0 for _, ips in search.trail)
    assert search.batch in [b for b, _ in search.trail] and search.reason
    assert "throughput batch" in search.describe()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_batch_search_releases_its_runner_while_the_long_lived_objects_are_still_frozen(tmp_path: Path,
                                                                                         monkeypatch) -> None:
    """The probe runner's release collects (``free_device_memory``): inside the freeze, so the collection scans
    only what the search made, not torch and the model (bench.memory.long_lived_frozen)."""
    import gc

    from modelcost.bench import lifecycle
    from modelcost.bench.batch_search import find_throughput_batch

    frozen_at_release: list[int] = []
    monkeypatch.setattr(lifecycle, "free_device_memory", lambda: frozen_at_release.append(gc.get_freeze_count()))
    assert gc.get_freeze_count() == 0
    search = find_throughput_batch(_tiny(), [("ort-cpu", "fp32")], _fast(tmp_path), max_batch=4, device="cpu")
    assert search is not None and frozen_at_release and all(n > 0 for n in frozen_at_release), frozen_at_release
    assert gc.get_freeze_count() == 0  # thawed after


def test_probe_is_the_eager_half_model_whether_or_not_the_sweep_runs_it() -> None:
    from modelcost.bench.batch_search import pick_probe

    # The default GPU sweep has no torch-half row; the probe still is torch-half fp16 where it can run (no compile
    # or engine build per probed batch), else the first registry probe (registry.probe_order) the plan runs, else
    # the plan's first config.
    plan = [("torch-compile-cudagraph", "fp16"), ("ort-cuda", "fp32"), ("ort-cuda", "fp16")]
    assert pick_probe(plan, lambda pair: pair == ("torch-half", "fp16")) == ("torch-half", "fp16")
    assert pick_probe(plan) == ("ort-cuda", "fp16")
    assert pick_probe([("torch-compile-cudagraph", "fp16")]) == ("torch-compile-cudagraph", "fp16")
    assert pick_probe([]) is None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_probe_on_the_cpu_may_be_a_backend_the_plan_does_not_run(tmp_path: Path) -> None:
    from modelcost.bench.batch_search import find_throughput_batch

    # a PyTorch model, the plan runs ort-cpu only: torch-cpu fp32 comes first in registry.probe_order() and runs here
    search = find_throughput_batch(_tiny(), [("ort-cpu", "fp32")], _fast(tmp_path), max_batch=4, device="cpu")
    assert search is not None and search.probe == "torch-cpu fp32"


def _dynamic_batch_onnx(path: Path) -> Path:
    """y = x @ W with x [batch, 4] (batch symbolic), W 4x3: 12 MACs per item."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "W")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


FAST = ("--device", "cpu", "--backends", "ort-cpu", "--min-time-s", "0.02", "--min-iters", "5", "--max-time-s", "0.2",
        "--warmup", "2")


def test_batch_sizes_bind_a_symbolic_batch(tmp_path: Path) -> None:
    # Issue 9: '--batch-sizes 1,4' on a dynamic-batch export used to stop with "unbound dimension 'batch'".
    # The static part is reported at the first size (12 MACs per item x 1), each size is benchmarked.
    import json

    from typer.testing import CliRunner

    from modelcost.cli import app

    model = _dynamic_batch_onnx(tmp_path / "m.onnx")
    result = CliRunner().invoke(app, ["analyze", str(model), "--batch-sizes", "1,4", *FAST, "--json",
                                      str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["compute"]["macs"] == 12
    assert sorted(b["batch_size"] for b in doc["benchmarks"]) == [1, 4]


def test_batch_sizes_auto_searches_on_the_cpu(tmp_path: Path) -> None:
    # '--batch-sizes auto': batch 1 and the saturating batch, the search said in the run notes.
    import json

    from typer.testing import CliRunner

    from modelcost.cli import app

    model = _dynamic_batch_onnx(tmp_path / "m.onnx")
    result = CliRunner().invoke(app, ["bench", str(model), "--batch-sizes", "auto", *FAST, "--json",
                                      str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    notes = [n for n in doc["run_notes"] if n.startswith("throughput batch ")]
    assert len(notes) == 1 and "probed with ort-cpu fp32" in notes[0]
    chosen = int(notes[0].split()[2])
    assert sorted({b["batch_size"] for b in doc["benchmarks"]}) == sorted({1, chosen})


def test_probe_measurement_is_the_screening_one_with_a_short_warm_up():
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.batch_search import probe_config
    from modelcost.bench.screening import screening_config

    full = BenchConfig()
    probe, screen = probe_config(full), screening_config(full)
    assert (probe.warmup_max_s, probe.max_time_s) == (0.3, 0.5)  # the screening's 0.5 s and 1.0 s, capped
    assert screen.warmup_max_s == 0.5
    assert (probe.min_time_s, probe.min_iters, probe.target_rel_ci) == (screen.min_time_s, screen.min_iters,
                                                                       screen.target_rel_ci)
    tiny = BenchConfig(warmup_max_s=0.05, min_time_s=0.1, max_time_s=0.2)  # never longer than asked
    assert (probe_config(tiny).warmup_max_s, probe_config(tiny).max_time_s) == (0.05, 0.2)
