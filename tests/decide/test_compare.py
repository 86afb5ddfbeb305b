"""compare: the speedup statistics on synthetic samples with known answers, then the interleaved measurement."""

from __future__ import annotations

import math
import random

import pytest

from modelcost.bench.interleaved import interleaved_order
from modelcost.decide.speedup import speedup_ci, t975, verdict


def test_t_quantiles_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 5, 9, 19, 29, 30, 35, 50, 99, 500):
        assert t975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=0.002)


def test_t_interval_by_hand():
    # Log-ratios ln(2), ln(2), ln(2)*1.1, ln(2)*0.9: mean = ln 2, sd = ln2 * sqrt((0 + 0 + .01 + .01) / 3)
    # = ln2 * 0.08165; half width = t(0.975, 3) * sd / sqrt(4) = 3.182 * 0.08165 * 0.6931 / 2 = 0.09004.
    base = [2.0, 2.0, 2.0 ** 1.1, 2.0 ** 0.9]
    cand = [1.0, 1.0, 1.0, 1.0]
    ci = speedup_ci(base, cand)
    assert ci.ratio == pytest.approx(2.0)
    half = 3.182 * math.log(2) * math.sqrt(0.02 / 3) / 2
    assert ci.ratio_low == pytest.approx(2.0 * math.exp(-half))
    assert ci.ratio_high == pytest.approx(2.0 * math.exp(half))
    assert ci.significant
    assert verdict(ci) == f"faster by 100.0% (95% CI {ci.percent_low:.1f}–{ci.percent_high:.1f}%)"


def _blocks(n: int, base_ms: float, cand_ms: float, noise: float, seed: int, drift: float = 0.0):
    """Block medians with multiplicative noise and a shared drift (both sides of a pair see the same clock)."""
    rng = random.Random(seed)
    base, cand = [], []
    for i in range(n):
        clock = 1.0 + drift * i
        base.append(base_ms * clock * math.exp(rng.gauss(0, noise)))
        cand.append(cand_ms * clock * math.exp(rng.gauss(0, noise)))
    return base, cand


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_known_speedup_is_found_and_covered(method):
    # True ratio 10 / 8 = 1.25: "faster by 25%". With 1% noise and 20 pairs the interval is about +-1%.
    base, cand = _blocks(20, 10.0, 8.0, 0.01, seed=1, drift=0.01)
    ci = speedup_ci(base, cand, method=method)
    assert ci.percent_low < 25.0 < ci.percent_high
    assert ci.percent_high - ci.percent_low < 4.0
    assert verdict(ci).startswith("faster by 2")


def test_known_slowdown_words():
    # True ratio 10 / 12.5 = 0.8: the candidate takes 25% longer -> "slower by 25%".
    base, cand = _blocks(20, 10.0, 12.5, 0.01, seed=2)
    text = verdict(speedup_ci(base, cand))
    assert text.startswith("slower by 2")
    slow = float(text.split()[2].rstrip("%"))
    assert slow == pytest.approx(25.0, abs=1.5)


def test_equal_speed_is_no_significant_difference():
    # Same true latency: over 200 seeds the 95% interval must contain 0 about 95% of the time.
    misses = 0
    for seed in range(200):
        base, cand = _blocks(10, 5.0, 5.0, 0.03, seed=seed)
        ci = speedup_ci(base, cand)
        misses += ci.significant
    assert misses <= 20  # expected 10 (5%); 20 would be p < 0.002 under a correct interval
    base, cand = _blocks(10, 5.0, 5.0, 0.03, seed=3)
    ci = speedup_ci(base, cand)
    if not ci.significant:
        assert verdict(ci).startswith("no significant difference (estimate ")


def test_verdicts_use_one_convention_in_words():
    """A candidate 2.2x slower (ratio 1 / 2.2 = 0.4545) is '120.0% slower' whether significant or not; the signed
    throughput change (0.4545 - 1) x 100 = -54.5% is never printed."""
    from modelcost.decide.speedup import SpeedupCI, in_words

    assert in_words(1 / 2.2) == "120.0% slower" and in_words(1.25) == "25.0% faster"
    wide = SpeedupCI(1 / 2.2, 1 / 4.0, 1.1, 4, "t")  # the interval crosses 1: not significant
    text = verdict(wide)
    # ends: 1 / 0.25 - 1 = 300% slower; 1.1 - 1 = 10% faster
    assert text == "no significant difference (estimate 120.0% slower, 95% CI from 300.0% slower to 10.0% faster)"
    assert "-" not in text.replace("95% CI", "")
    assert verdict(SpeedupCI(1 / 2.2, 1 / 2.3, 1 / 2.1, 10, "t")).startswith("slower by 120.0% (95% CI 110.0–130.0%)")


def test_drift_cancels_in_pairs():
    # A 50% drift over the run would swamp a 5% speedup in unpaired means; paired log-ratios keep it.
    base, cand = _blocks(16, 10.0, 10.0 / 1.05, 0.002, seed=4, drift=0.03)
    ci = speedup_ci(base, cand)
    assert ci.percent_low < 5.0 < ci.percent_high
    assert ci.significant


def test_bad_blocks():
    with pytest.raises(ValueError):
        speedup_ci([1.0], [1.0])
    with pytest.raises(ValueError):
        speedup_ci([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        speedup_ci([1.0, 0.0], [1.0, 1.0])


def test_interleaved_order_is_abba():
    assert interleaved_order(4) == [("base", "candidate"), ("candidate", "base"),
                                    ("base", "candidate"), ("candidate", "base")]


# ---------------------------------------------------------------------------------------------------
# End to end on the CPU (ONNX Runtime CPU provider), small models, few short blocks.

import json  # noqa: E402

from modelcost import api  # noqa: E402
from modelcost.bench.base import BenchConfig  # noqa: E402
from modelcost.decide import diagnose  # noqa: E402
from tests.decide.test_quantize import make_convnet, specs_for  # noqa: E402

FAST = dict(backends=["ort-cpu"], rounds=4, runs_per_block=5)


def fast_config() -> BenchConfig:
    return BenchConfig(device="cpu", warmup=3, warmup_max_s=0.3, min_time_s=0.0, min_iters=3, max_time_s=0.5)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from modelcost.decide.quantize import quantize_int8

    d = tmp_path_factory.mktemp("cmp")
    small = make_convnet(d / "small.onnx", channels=8, size=16)
    big = make_convnet(d / "big.onnx", channels=64, size=16)  # (64/8)^2 = 64x the MACs of the second conv
    q = quantize_int8(small, d / "small.int8.onnx", specs_for=specs_for(), samples=8, chunk=4)
    return {"small": small, "big": big, "int8": q.path}


def test_compare_int8_end_to_end(models, tmp_path):
    run, cmp, folder = api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[1, 4],
                                   config=fast_config(), out=str(tmp_path / "rep"), **FAST)
    assert run.complete and cmp.complete and folder == tmp_path / "rep"
    assert [(s.backend, s.batch_size) for s in cmp.speed] == [("ort-cpu", 1), ("ort-cpu", 4)]
    assert cmp.base.precision == "fp32" and cmp.candidate.precision == "int8"
    assert cmp.candidate.op_counts["QuantizeLinear"] >= 3 and "QuantizeLinear" not in cmp.base.op_counts
    for s in cmp.speed:
        assert s.blocks == 4 and s.runs_per_block == 5
        assert s.verdict.startswith(("faster by", "slower by", "no significant difference"))
        assert s.ci_low <= s.percent <= s.ci_high
    roles = [(r.role, r.batch_size, r.latency_ms.count) for r in run.benchmarks]
    assert roles == [("base", 1, 20), ("candidate", 1, 20), ("base", 4, 20), ("candidate", 4, 20)]  # 4 blocks x 5
    (backend, acc), = cmp.accuracy
    assert backend == "ort-cpu" and acc.cosine > 0.98 and acc.top1_agreement is not None
    assert "generated inputs of batch 4" in cmp.data
    doc = json.loads((folder / "report.json").read_text())
    assert doc["complete"] is True and len(doc["comparison"]["speed"]) == 2
    md = (folder / "report.md").read_text()
    assert "INCOMPLETE" not in md and "## Comparison" in md and "plots/speedup.png" in md


def test_known_slower_and_faster_candidates(models):
    # The big net does ~60x the arithmetic of the small one: candidate big must be "slower", small "faster".
    _, slow, _ = api.compare(str(models["small"]), str(models["big"]), batch_sizes=[4], config=fast_config(),
                             write=False, **FAST)
    assert slow.speed[0].verdict.startswith("slower by") and slow.speed[0].ratio < 0.5
    _, fast, _ = api.compare(str(models["big"]), str(models["small"]), batch_sizes=[4], config=fast_config(),
                             write=False, **FAST)
    assert fast.speed[0].verdict.startswith("faster by") and fast.speed[0].significant
    assert fast.speed[0].hints == []  # a large, significant speedup needs no explaining


def test_one_model_two_precisions(models):
    # MODEL@PRECISION asks the backend for that precision; the CPU provider has no fp16, so it is listed, not run.
    _, cmp, _ = api.compare(str(models["small"]), str(models["small"]) + "@fp16", batch_sizes=[1],
                            config=fast_config(), write=False, **FAST)
    assert (cmp.base.name, cmp.candidate.name) == ("small@fp32", "small@fp16")
    assert cmp.candidate.precision == "fp16" and cmp.speed == []
    assert cmp.skipped == ["ort-cpu: ort-cpu has no fp16 (it has fp32)"]


def test_accuracy_on_data_file(models, tmp_path):
    data = tmp_path / "d.npz"
    np_ = pytest.importorskip("numpy")
    np_.savez(data, x=np_.random.default_rng(0).standard_normal((6, 3, 16, 16)).astype(np_.float32))
    _, cmp, _ = api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[4], data=str(data),
                            config=fast_config(), write=False, **FAST)
    assert cmp.data == f"--data {data} (6 samples)"  # chunks of 4 and 2, concatenated
    assert cmp.accuracy[0][1].top1_agreement is not None


def test_interrupt_keeps_what_finished(models, tmp_path, monkeypatch):
    from modelcost.bench.interleaved import Interleaved

    original = Interleaved.time_pair

    def second_pair_interrupted(self, backend, batch, sessions, notes):
        if batch == 4:
            raise KeyboardInterrupt
        return original(self, backend, batch, sessions, notes)

    monkeypatch.setattr(Interleaved, "time_pair", second_pair_interrupted)
    run, cmp, folder = api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[1, 4],
                                   config=fast_config(), out=str(tmp_path / "r"), **FAST)
    assert not run.complete and not cmp.complete and len(cmp.speed) == 1
    doc = json.loads((folder / "report.json").read_text())
    assert doc["complete"] is False and doc["comparison"]["complete"] is False
    assert "interrupted by the user (Ctrl-C)" in (folder / "report.md").read_text()
    assert "INCOMPLETE" in (folder / "report.html").read_text()


class HardCrash(BaseException):
    """Stands for a backend taking the process down: nothing after it runs."""


def test_checkpoint_survives_a_hard_crash(models, tmp_path, monkeypatch):
    from modelcost.bench.interleaved import Interleaved

    original = Interleaved.time_pair

    def crash_on_second(self, backend, batch, sessions, notes):
        if batch == 4:
            raise HardCrash
        return original(self, backend, batch, sessions, notes)

    monkeypatch.setattr(Interleaved, "time_pair", crash_on_second)
    with pytest.raises(HardCrash):
        api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[1, 4], config=fast_config(),
                    out=str(tmp_path / "r"), **FAST)
    doc = json.loads((tmp_path / "r" / "report.json").read_text())  # the checkpoint after batch 1
    assert doc["complete"] is False and [s["batch_size"] for s in doc["comparison"]["speed"]] == [1]
    assert "INCOMPLETE" in (tmp_path / "r" / "report.md").read_text()


def test_failing_backend_is_reported_not_fatal(models, monkeypatch):
    from modelcost.bench.backends import ort

    def broken(self, batch_size, host_inputs):
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(ort.OrtRunner, "session", broken)
    run, cmp, _ = api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[1], config=fast_config(),
                              write=False, **FAST)
    assert cmp.speed == [] and cmp.skipped == ["ort-cpu b1: RuntimeError: kernel exploded"]


def test_unavailable_backend_is_listed(models):
    _, cmp, _ = api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[1], config=fast_config(),
                            write=False, backends=["ort-cpu", "tensorrt"], rounds=2, runs_per_block=3)
    assert len(cmp.speed) == 1
    assert cmp.skipped[0].startswith("tensorrt: ")


def test_graph_facts_of_int8_on_cpu(models):
    # The CPU provider fuses Q/DQ around Conv and Gemm into QLinearConv (x2) and QGemm (x1).
    import numpy as np

    x = {"x": np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)}
    facts = diagnose.ort_graph_facts(models["int8"], "ort-cpu", x)
    assert facts.ops.get("QLinearConv") == 2 and facts.ops.get("QGemm") == 1 and facts.int8_ops >= 3
    assert set(facts.nodes_by_provider) == {"CPUExecutionProvider"} and facts.fallback_ops == {}
    assert diagnose.ort_graph_facts(models["int8"], "tensorrt") is None  # compiled away: nothing to inspect


def test_hints_from_measurements():
    # ORT CUDA-like graph: Q/DQ kept, no integer op -> INT8 kernels not used.
    facts = diagnose.GraphFacts("ort-cuda", int8_ops=0, quantize=54, dequantize=107, float_compute=54)
    h = diagnose.hints(backend="ort-cuda", batch_size=1, candidate_precision="int8", faster=False, base_ms=2.0,
                       base_by_batch={1: 2.0, 64: 20.0}, facts=facts)
    fell = diagnose.GraphFacts("ort-cuda", fallback_ops={"DequantizeLinear": 3, "QuantizeLinear": 1})
    assert diagnose._kernel_hints("int8", "ort-cuda", fell)[0] == (
        "4 nodes of the candidate fell back from CUDAExecutionProvider to another provider (ONNX Runtime "
        "profiling: DequantizeLinear x3, QuantizeLinear x1), with host<->device copies around them")
    assert h[0].startswith("INT8 kernels not used by ort-cuda: after ONNX Runtime's optimisation the candidate "
                           "still has 107 DequantizeLinear and 54 QuantizeLinear nodes")
    # 64x the work in 10x the time: fixed per-call costs dominate at batch 1 (measured scaling, no roofline).
    assert "overhead-bound at batch 1 (measured): batch 64 does 64x the work in 10.0x the time" in h[1]
    h = diagnose.hints(backend="ort-cuda", batch_size=64, candidate_precision="fp16", faster=False, base_ms=20.0,
                       base_by_batch={64: 20.0}, bound="memory")
    assert h == ["memory-bound at batch 64 (roofline of the base): the time goes to moving bytes; a candidate "
                 "that still moves float activations between ops saves little"]
    h = diagnose.hints(backend="ort-cuda", batch_size=1, candidate_precision="fp16", faster=False, base_ms=0.05,
                       base_by_batch={}, bound="overhead", over_bound=40.0)
    assert "overhead-bound at batch 1 (measured 40x the roofline lower bound)" in h[0]
    assert h[1] == "one call takes only 50 µs: per-call overhead dominates"
    assert diagnose.hints(backend="x", batch_size=1, candidate_precision="fp32", faster=False, base_ms=5.0,
                          base_by_batch={})[0].startswith("no cause found in what was measured")


def _cli(args):
    from typer.testing import CliRunner

    from modelcost.cli.app import app

    return CliRunner().invoke(app, args)


def test_cli_compare(models, tmp_path):
    out = tmp_path / "c"
    r = _cli(["compare", str(models["small"]), str(models["int8"]), "--backends", "ort-cpu", "--device", "cpu",
              "--rounds", "3", "--runs-per-block", "3", "--warmup-max-s", "0.2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "small.int8 (int8) vs small (fp32)" in r.output
    assert "accuracy on ort-cpu: cosine" in r.output and f"report: {out}" in r.output
    assert sorted(p.name for p in out.iterdir()) == [".modelcost-manifest", "benchmarks.csv", "plots", "report.html",
                                                     "report.json", "report.md"]


def test_cli_compare_writes_no_folder_unasked(models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = _cli(["compare", str(models["small"]), str(models["small"]), "--backends", "ort-cpu", "--device", "cpu",
              "--rounds", "2", "--runs-per-block", "2", "--warmup-max-s", "0.1"])
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "reports").exists() and "report:" not in r.output


def test_cli_compare_bad_input(models, tmp_path):
    r = _cli(["compare", str(models["small"]), str(tmp_path / "nope.onnx"), "--device", "cpu"])
    assert r.exit_code == 1 and "Traceback" not in r.output and "error" in r.output
    r = _cli(["compare", str(models["small"]), str(models["small"]), "--device", "cpu", "--rounds", "1"])
    assert r.exit_code != 0 and "Traceback" not in r.output
    r = _cli(["compare", str(models["small"]), str(models["small"]), "--device", "cpu", "--method", "magic"])
    assert r.exit_code == 1 and "--method 'magic'" in r.output


# ---------------------------------------------------------------------------------------------------
# On a GPU (run by the lead on an H100 / H200): ONNX Runtime's CUDA provider, CUDA-event timing.

from conftest import requires_cuda  # noqa: E402


def _ort_cuda_or_skip():
    ort = pytest.importorskip("onnxruntime")
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("onnxruntime-gpu (CUDA execution provider) not installed")


@pytest.mark.gpu
@requires_cuda
def test_gpu_compare_fp16_and_int8_on_ort_cuda(models, tmp_path):
    _ort_cuda_or_skip()
    from modelcost.decide.quantize import convert_fp16

    half = convert_fp16(models["big"], tmp_path / "big.fp16.onnx").path
    config = BenchConfig(device="cuda", warmup=5, warmup_max_s=2.0)
    run, cmp, folder = api.compare(str(models["big"]), str(half), backends=["ort-cuda"], batch_sizes=[1, 64],
                                   rounds=6, config=config, out=str(tmp_path / "fp16"))
    assert run.complete and [s.batch_size for s in cmp.speed] == [1, 64]
    assert all(r.timing.startswith("GPU time between CUDA events") for r in run.benchmarks)
    assert cmp.accuracy[0][1].cosine > 0.999
    assert run.gpu is not None and (folder / "report.html").is_file()
    # ORT's CUDA provider keeps Q/DQ as DequantizeLinear + float ops (it has no INT8 conv kernels).
    facts = diagnose.ort_graph_facts(models["int8"], "ort-cuda")
    assert facts.int8_ops == 0 and facts.dequantize > 0
    _, cmp8, _ = api.compare(str(models["small"]), str(models["int8"]), backends=["ort-cuda"], batch_sizes=[1],
                             rounds=6, config=config, write=False)
    s = cmp8.speed[0]
    if not (s.significant and s.ratio > 1):
        assert any(h.startswith("INT8 kernels not used by ort-cuda") for h in s.hints)


def test_a_side_without_static_analysis_has_unknown_figures_not_zeros(tmp_path):
    from modelcost.decide.compare import model_side

    side = model_side("x", str(tmp_path / "missing.onnx"), None, {})
    assert side.storage_bytes is None and side.params is None and side.macs is None and side.flops is None


def test_an_incomplete_count_is_a_lower_bound_in_the_comparison() -> None:
    from modelcost.core.decisions import ModelSide
    from modelcost.report.sections_decide import _side_row

    # a side whose static count missed an op: its MACs cell says "at least", never a plain figure
    partial = ModelSide(name="m", source="m.onnx", macs=1_000, compute_complete=False)
    whole = ModelSide(name="m", source="m.onnx", macs=1_000)
    assert _side_row("base", partial)[7] == "≥1,000" and _side_row("base", whole)[7] == "1,000"


def test_a_backend_collects_with_the_long_lived_heap_frozen(models, monkeypatch):
    """Each backend's runners are released (lifecycle.release: a gc.collect) with torch, onnxruntime and the
    models out of the collector's sight (bench.memory.long_lived_frozen: 0.2 s a collection otherwise)."""
    import gc

    seen: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: (seen.append(gc.get_freeze_count()), collect(*a))[1])
    api.compare(str(models["small"]), str(models["int8"]), batch_sizes=[1], config=fast_config(), write=False,
                **FAST)
    assert seen and min(seen) > 0
    assert gc.get_freeze_count() == 0  # thawed after
