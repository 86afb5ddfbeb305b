"""``modelcost llm`` measured part and CLI: the generation loop at tiny size on CPU (it runs, the KV cache is
right, backends agree), the CLI end to end, and on a GPU (@pytest.mark.gpu) both transformers backends."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from modelcost.bench.generation import engine_status, generate, measure_generation
from modelcost.cli import app
from modelcost.loaders.llm_loader import load_causal_lm

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory):
    from transformers import LlamaConfig

    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=128).save_pretrained(folder)
    return str(folder)


def _no_cache_greedy(model, ids, n: int, zoo: bool):
    """Greedy decoding that re-runs the whole sequence each step (no cache): the reference."""
    seq = ids
    for _ in range(n):
        logits = model(seq) if zoo else model(input_ids=seq, use_cache=False).logits
        seq = torch.cat([seq, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return seq[:, ids.shape[1]:]


@pytest.mark.parametrize("source", ["zoo:llama-tiny", "config"])
def test_cached_loop_matches_full_recompute(source, tiny_config) -> None:
    lm = load_causal_lm(tiny_config if source == "config" else source, "fp32")
    torch.manual_seed(0)
    model = lm.build("cpu", torch.float32)
    ids = torch.randint(1, 1000, (2, 12))
    tokens, steps_ms = generate(lm, model, "hf-eager", ids, 6)
    assert tokens.shape == (2, 6) and len(steps_ms) == 6  # TTFT + 5 decode steps
    with torch.no_grad():
        assert torch.equal(tokens, _no_cache_greedy(model, ids, 6, zoo=source != "config"))


def test_static_cache_generates_the_same_tokens(tiny_config) -> None:
    lm = load_causal_lm(tiny_config, "fp32")
    torch.manual_seed(0)
    model = lm.build("cpu", torch.float32)
    ids = torch.randint(1, 1000, (2, 12))
    eager, _ = generate(lm, model, "hf-eager", ids, 5)
    static, _ = generate(lm, model, "hf-static", ids, 5)
    assert torch.equal(eager, static)


def test_measure_generation_cpu(tiny_config) -> None:
    lm = load_causal_lm(tiny_config, "fp32")
    results = measure_generation(lm, backends=["hf-eager", "hf-static", "hf-static-compile", "vllm"],
                                 batch_sizes=[1, 2], prompt_len=8, gen_len=4, precision="fp32", device="cpu", runs=2)
    by = {(r.backend, r.batch_size): r for r in results}
    ok = by[("hf-eager", 2)]
    assert ok.status == "ok" and ok.runs == 2
    assert ok.ttft_stats.count == 2 and ok.tpot_stats.count == 2 * 3  # 2 runs x (G - 1) decode steps
    # tokens/s = B * G / median end-to-end time
    assert ok.tokens_per_second == pytest.approx(2 * 4 / (ok.e2e_ms.p50 / 1e3))
    assert ok.peak_memory_bytes is None  # not measured on CPU, never 0
    assert by[("hf-static", 1)].status == "ok"
    assert "needs CUDA" in by[("hf-static-compile", 1)].reason
    assert ("vllm", 2) not in by  # an absent engine is reported once, not per batch
    assert by[("vllm", 1)].status == "unavailable" and by[("vllm", 1)].reason


def test_engine_status_never_measures() -> None:
    for name, reason in engine_status():
        assert name in reason or "not installed" in reason


def test_cli_static_json(tmp_path) -> None:
    out = tmp_path / "llm.json"
    result = CliRunner().invoke(app, ["llm", "zoo:llama-tiny", "--static", "-p", "16", "-g", "4", "-b", "1,2",
                                      "--dtype", "fp16", "--target-gpu", "H100 SXM", "--json", str(out),
                                      "--out", str(tmp_path / "folder")])
    assert result.exit_code == 0, result.output
    assert "lower bounds on H100 SXM" in result.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "modelcost.llm/1"
    llm = doc["llm"]
    # llama-tiny: 2 layers x 2 KV heads x 32 dims x K and V x 2 bytes = 512 bytes per token
    assert llm["kv_cache"]["bytes_per_token"] == 512
    assert [p["batch_size"] for p in llm["points"]] == [1, 2]
    assert llm["bounds"]["gpu"] == "H100 SXM"
    assert (tmp_path / "folder" / "report.json").is_file() and (tmp_path / "folder" / "report.md").is_file()


def test_cli_measured_cpu(tiny_config) -> None:
    result = CliRunner().invoke(app, ["llm", tiny_config, "-p", "8", "-g", "3", "--dtype", "fp32",
                                      "--backends", "hf-eager", "--runs", "1"])
    assert result.exit_code == 0, result.output
    assert "measured generation" in result.output and "hf-eager" in result.output


def test_cli_bad_source_one_line() -> None:
    result = CliRunner().invoke(app, ["llm", "zoo:resnet18", "--static"])
    assert result.exit_code == 1
    assert "takes no KV cache" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["llm", "zoo:llama-tiny", "--static", "-p", "0"])
    assert result.exit_code == 1 and "--prompt-len" in result.output


@pytest.mark.gpu
def test_gpu_backends_measure_and_agree(tiny_config) -> None:
    from modelcost import api

    report = api.llm(tiny_config, prompt_lens=[32], gen_lens=[8], batch_sizes=[1, 4], dtype="bf16",
                     measure=True, backends=["hf-eager", "hf-static-compile"], runs=2)
    ok = [r for r in report.benchmarks if r.status == "ok"]
    assert len(ok) == 4, [(r.backend, r.status, r.reason) for r in report.benchmarks]
    for r in ok:
        assert r.peak_memory_bytes and r.peak_memory_bytes > 0
        assert r.predicted_peak_memory_bytes and r.ttft_bound_ratio and r.ttft_bound_ratio >= 1.0
        assert r.tpot_bound_ratio and r.tpot_bound_ratio >= 1.0 and 0 < r.bandwidth_utilization <= 1.0
    lm = load_causal_lm(tiny_config, "bf16")
    torch.manual_seed(0)
    model = lm.build("cuda", torch.bfloat16)
    ids = torch.randint(1, 1000, (2, 16), device="cuda")
    eager, _ = generate(lm, model, "hf-eager", ids, 6)
    static, _ = generate(lm, model, "hf-static", ids, 6)
    assert eager.shape == static.shape == (2, 6)


def test_compiled_static_decode_traces_whole(tiny_config) -> None:
    """The hf-static-compile decode step compiles as one graph (fullgraph=True) and generates the eager tokens;
    on CPU through the aot_eager backend (the GPU uses mode="reduce-overhead": CUDA graphs)."""
    from modelcost.bench.generation import _static_runner
    from modelcost.bench.timing import clock_for

    lm = load_causal_lm(tiny_config, "fp32")
    torch.manual_seed(0)
    model = lm.build("cpu", torch.float32)
    ids = torch.randint(1, 1000, (2, 8))
    torch._dynamo.reset()
    run = _static_runner(lm, model, 2, 8, 5, "cpu", compiled=True,
                         compile_kwargs={"backend": "aot_eager", "fullgraph": True})
    tokens = run(ids, clock_for("cpu"))
    eager, _ = generate(lm, model, "hf-eager", ids, 5)
    assert torch.equal(tokens, eager)


def test_repeats_measure_the_point_again(tiny_config) -> None:
    lm = load_causal_lm(tiny_config, "fp32")
    results = measure_generation(lm, backends=["hf-eager"], batch_sizes=[1], prompt_len=8, gen_len=3,
                                 precision="fp32", device="cpu", runs=1, warmup=0, repeats=2)
    assert [r.notes for r in results] == [["repeat 1 of 2"], ["repeat 2 of 2"]]
    assert all(r.status == "ok" and r.tpot_stats.count == 2 for r in results)


def test_gpu_benchmark_script_smoke(tmp_path, capsys) -> None:
    """benchmarks/llm_gpu.py end to end on CPU with --tiny (no figure: it proves the script runs)."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "llm_gpu.py"
    spec = importlib.util.spec_from_file_location("llm_gpu", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "llm_gpu.json"
    assert module.main(["--tiny", "--device", "cpu", "--batch-sizes", "1,2", "--prompt-len", "8", "--gen-len", "3",
                        "--runs", "1", "--backends", "hf-eager,vllm", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert len(doc["repeatability"]) == 2  # hf-eager at B=1 and B=2, each measured twice
    assert [p["batch_size"] for p in doc["llm"]["points"]] == [1, 2]
    assert sum(r["backend"] == "vllm" for r in doc["llm"]["benchmarks"]) == 1
    assert "repeatability hf-eager B=1" in capsys.readouterr().out


def test_warm_up_runs_until_two_generations_agree() -> None:
    from modelcost.bench.generation import warm_up

    # step times (TTFT first, then decode steps) of successive generations: medians of the decode steps are
    # 23, 20, 19.8 -> 20 vs 23 differ by 13% (> 2%), 19.8 vs 20 by 1% -> settled after the third
    runs = iter([[50, 23, 23, 23], [40, 20, 20, 20], [40, 19.8, 19.8, 19.8], [40, 19.8, 19.8, 19.8]])
    assert warm_up(lambda: next(runs), minimum=1) == 3
    # never settling: stops at `most`; asking for more than `most` runs them all; 0 = no warm-up
    drift = iter([[1, float(i)] for i in range(1, 30)])
    assert warm_up(lambda: next(drift), minimum=1, most=4) == 4
    flat = iter([[1, 5.0]] * 10)
    assert warm_up(lambda: next(flat), minimum=6, most=4) == 6
    assert warm_up(lambda: [1.0, 1.0], minimum=0) == 0


def test_gc_paused_pauses_and_restores_the_collector():
    import gc

    from modelcost.bench.generation import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()  # a caller that had it off keeps it off
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_clock_note_says_what_the_gpu_did_and_nothing_without_samples():
    from types import SimpleNamespace

    from modelcost.bench.generation import _clock_note
    from modelcost.hardware.nvml_sampler import SamplerSummary

    busy = SamplerSummary(samples=40, sm_clock_mhz_mean=1412.5, sm_clock_mhz_min=1095.0, gpu_util_mean=37.2)
    assert _clock_note(SimpleNamespace(summary=busy)) == ("GPU during the timed runs: SM clock mean 1,412 MHz "
                                                          "(min 1,095), busy 37%")
    assert _clock_note(SimpleNamespace(summary=SamplerSummary())) is None  # NVML answered nothing
    assert _clock_note(None) is None  # off CUDA


def test_a_measurement_whose_runs_disagree_is_flagged_unstable_and_says_why():
    from types import SimpleNamespace

    from modelcost.bench.generation import unstable_reason

    assert unstable_reason([14.10, 14.20, 14.15]) is None  # 0.7% apart: repeats
    assert unstable_reason([15.0]) is None  # one run: nothing to compare
    # the H100's eager decode (llm_eager_jitter, gc-paused rows): 12.570 / 16.595 / 20.858 ms per token, GPU ~17% busy
    why = unstable_reason([12.570, 16.595, 20.858], SimpleNamespace(gpu_util_mean=17.0))
    assert why == ("the 3 timed runs' TPOT medians range 12.570-20.858 ms (66% apart, over the 5% this tool "
                   "accepts); the GPU was busy 17% of the time, so the decode is launch-bound and runs at the pace "
                   "of the host CPU, which varied")
    busy = unstable_reason([1.50, 1.60], SimpleNamespace(gpu_util_mean=96.0))  # 6.7%: GPU-bound, no CPU story
    assert busy == "the 2 timed runs' TPOT medians range 1.500-1.600 ms (7% apart, over the 5% this tool accepts)"


def test_generation_collects_with_the_long_lived_heap_frozen(tiny_config, monkeypatch) -> None:
    """The collection before each timed block (generation.gc_paused) scans only what the measurement made, not
    torch, transformers and the model (0.2 s a collection with them in sight); everything is thawed after."""
    import gc

    seen: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: (seen.append(gc.get_freeze_count()), collect(*a))[1])
    lm = load_causal_lm(tiny_config, "fp32")
    results = measure_generation(lm, backends=["hf-eager"], prompt_len=4, gen_len=2, precision="fp32", device="cpu",
                                 runs=1)
    assert results[0].status == "ok"
    assert seen and min(seen) > 0
    assert gc.get_freeze_count() == 0
