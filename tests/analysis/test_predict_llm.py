"""llm --predict (issue 28): TTFT and TPOT of a generation point on the synthetic calibration of test_predict.py,
every figure derived by hand; the measured median beside the prediction; the CLI on a tiny config."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.analysis.predict_table import ErrorEntry
from modelcost.analysis.predict_llm import predict_point, with_measurements
from modelcost.core import calibration as calib
from modelcost.core.errors import ModelcostError
from modelcost.core.llm import DecodeCost, GenerationPoint, GenerationResult, KvCache, PrefillCost
from modelcost.core.types import EagerOps, LayerCost
from modelcost.hardware.specs import spec_from_table
from tests.analysis.test_predict import cost_of, synthetic

# The synthetic calibration's memory curve is 2 us + 1 us per MB (linear from (0, 2 us) through (1 MB, 3 us) on);
# every GEMM class takes efficiency 0.5 of 100 TFLOP/s (fp16); 100 SMs, 128 x 128 tiles; eager launch 10 us per
# kernel; compile fuses elementwise layers away (0 kernels) and halves norms; graph replay 20 us.
Q_DECODE = LayerCost("q", "Linear", macs=2048 * 2048, params=2048 * 2048, output_shapes=[(1, 1, 2048)],
                     status="counted")
SDPA_DECODE = LayerCost("attn", "scaled_dot_product_attention", macs=8 * 101 * 64 * 2,
                        output_shapes=[(1, 8, 1, 64)], status="counted")
HEAD = LayerCost("lm_head", "Linear", macs=2048 * 1000, params=2048 * 1000, output_shapes=[(1, 1, 1000)],
                 status="counted")
Q_PREFILL = LayerCost("q", "Linear", macs=100 * 2048 * 2048, params=2048 * 2048, output_shapes=[(1, 100, 2048)],
                      status="counted")
SDPA_PREFILL = LayerCost("attn", "scaled_dot_product_attention", macs=2 * 8 * 100 * 100 * 64,
                         output_shapes=[(1, 8, 100, 64)], status="counted")


def point(prompt: int = 100, gen: int = 100, elements: int = 1024, size: int = 1000) -> GenerationPoint:
    # one attention layer whose K and V take ``size`` B per position of one sequence; ``elements`` K and V
    # elements per position: 1024 = 2 x 8 heads x 64, the query's heads (no grouped-query attention, n_rep 1)
    return GenerationPoint(1, prompt, gen, KvCache("fp16", elements, size, 0, 0),
                           PrefillCost(1, 1, 1, 1, 1.0, "last", 0), DecodeCost(gen - 1, [], 0, 0, 0, 0), 0)


def predicted(backend: str):  # noqa: ANN201
    return predict_point(cost_of(Q_PREFILL, SDPA_PREFILL, HEAD), cost_of(Q_DECODE, SDPA_DECODE, HEAD), point(),
                         synthetic(), backend, "fp16", table=[])


def test_decode_step_static_cache_compiled() -> None:
    tpot = predicted("hf-static-compile").tpot
    # q: M 1, N 2048, K 2048: compute 2 x 2048^2 / (1e14 x 0.5 x 16 tiles / 100 SMs) = 1.048576 us; memory
    #    (2048^2 weights + 2048 in + 2048 out) x 2 B = 8,396,800 B -> 10.3968 us (memory-bound: the weights).
    # attention: the static cache holds P + G = 200 positions, all read: 200 x 1,000 B -> 2.2 us.
    # cache update: the new position's K and V, 1,000 B moved twice (read, written) over 2 kernels -> compile
    #    fuses them away (elementwise: 0 kernels).
    # argmax over 1,000 logits x 2 B = 2,000 B -> 2.002 us, a norm-like reduction: compile keeps half -> 1.001 us.
    # lm_head: M 1, N 1000, K 2048: memory (2,048,000 + 2,048 + 1,000) x 2 = 4,102,096 B -> 6.102096 us.
    # kernels 10.3968 + 2.2 + 1.001 + 6.102096 = 19.699896 us, + 20 us graph replay.
    assert tpot.compute_ms == pytest.approx(19.699896e-3)
    assert tpot.latency_ms == pytest.approx(39.699896e-3)
    assert tpot.kernels == 4  # q, attention, lm_head, half an argmax: round(3.5)


def test_decode_step_dynamic_cache_eager() -> None:
    tpot = predicted("hf-eager").tpot
    # dynamic cache: the mean step attends P + G/2 = 150 positions: 150,000 B -> 2.15 us; its update (torch.cat)
    # copies the whole cache: 2 x 150,000 B over 2 kernels -> 2 x 2.15 us. Kernels: 10.3968 + 2.15 + 4.3 + 2.002 +
    # 6.102096 = 24.950896 us, 6 kernels; the host needs 6 x 10 us = 60 us to issue them: host-bound.
    assert tpot.compute_ms == pytest.approx(24.950896e-3)
    assert (tpot.latency_ms, tpot.kernels) == (pytest.approx(0.060), 6)


def test_prefill_eager_in_every_backend() -> None:
    # q: M 100, N 2048, K 2048: 2 x 100 x 2048^2 = 838,860,800 FLOPs / (1e14 x 0.5 x 16/100) = 104.8576 us
    #    (memory (4,194,304 + 2 x 204,800) x 2 B -> 11.2 us: compute-bound).
    # attention: 2 x 10,240,000 FLOPs at efficiency 0.2 (100 tokens, below the first point), 8 heads x 1 query
    #    tile = 8 of 100 SMs busy: 20,480,000 / (1e14 x 0.2 x 0.08) = 12.8 us.
    # cache writes: 100 positions x 1,000 B, moved twice over 2 kernels: 100,000 B each -> 2 x 2.1 us.
    # argmax 2.002 us, lm_head 6.102096 us. Sum 129.961696 us > 6 kernels x 10 us of host time.
    ttft = predicted("hf-eager").ttft
    assert ttft.latency_ms == pytest.approx(129.961696e-3) and ttft.kernels == 6
    # A static cache passes SDPA its mask over all P + G = 200 allocated keys, not P = 100: attention x 2 ->
    # 25.6 us, so 129.961696 + 12.8 = 142.761696 us (n_rep 1: no K / V expansion).
    ttft = predicted("hf-static-compile").ttft
    assert ttft.latency_ms == pytest.approx(142.761696e-3) and ttft.kernels == 6


def test_grouped_query_attention_expands_kv_in_the_compiled_static_decode() -> None:
    # 8 query heads x 64 over K / V of 256 elements per position (2 x 2 heads x 64): n_rep = 512 / 128 = 4;
    # 512 B per position, static cache of 200 positions: kv_read = 102,400 B.
    gqa = point(elements=256, size=512)
    prefill, decode = cost_of(Q_PREFILL, SDPA_PREFILL, HEAD), cost_of(Q_DECODE, SDPA_DECODE, HEAD)
    tpot = predict_point(prefill, decode, gqa, synthetic(), "hf-static-compile", "fp16", table=[]).tpot
    # repeat_kv: 2 copies, each reading 51,200 B and writing 4 x 51,200 B = 256,000 B -> 2.256 us, one kernel
    # each (they feed SDPA: never fused); SDPA reads the 4x copies: 409,600 B -> 2.4096 us.
    # q 10.3968 + SDPA 2.4096 + 2 x 2.256 + argmax 1.001 + lm_head 6.102096 = 24.421496 us (+ 20 us replay);
    # kernels 1 + 1 + 2 + 0.5 + 1 = 5.5 -> 6.
    assert tpot.compute_ms == pytest.approx(24.421496e-3)
    assert (tpot.latency_ms, tpot.kernels) == (pytest.approx(44.421496e-3), 6)
    # the eager static decode packs the query (transformers' pack_gqa): SDPA reads the cache once, 102,400 B ->
    # 2.1024 us, no copies; eager keeps the cache update (the new position's 512 B read and written, 2 kernels of
    # 512 B -> 2.000512 us) and the whole argmax (2.002 us): 10.3968 + 2.1024 + 4.001024 + 2.002 + 6.102096 us
    eager = predict_point(prefill, decode, gqa, synthetic(), "hf-static", "fp16", table=[]).tpot
    assert eager.compute_ms == pytest.approx(24.60432e-3)


def test_the_host_model_prices_each_step_s_calls() -> None:
    # With host_us (eager: 18 us per kernel call, 4 per view) and counted calls, the host's time is the calls':
    # the counted prefill's 300 kernel calls and 200 views, + the loop's slice and argmax (1 + 1): hf-eager's
    # prefill 301 x 18 + 201 x 4 = 6,222 us (far above its 130 us of kernels: host-bound).
    cal = synthetic()
    cal.host_us = {"eager": calib.HostCost(18.0, 4.0)}
    prefill = dataclasses.replace(cost_of(Q_PREFILL, SDPA_PREFILL, HEAD), eager_ops=EagerOps(300, 200))
    decode = dataclasses.replace(cost_of(Q_DECODE, SDPA_DECODE, HEAD), eager_ops=EagerOps(100, 60))
    gqa = point(elements=256, size=512)  # n_rep 4 (the test above)
    eager = predict_point(prefill, decode, gqa, cal, "hf-eager", "fp16", table=[])
    assert eager.ttft.latency_ms == pytest.approx(6.222)
    # the decode step: 101 x 18 + 61 x 4 = 2,062 us
    assert eager.tpot.latency_ms == pytest.approx(2.062)
    # A static cache's prefill expands K and V in its one attention layer (repeat_kv: an expand and a copy, each
    # of K and V): + 2 kernel calls and 2 views: 303 x 18 + 203 x 4 = 6,266 us. Its compiled decode is one graph
    # replay: no host model.
    static = predict_point(prefill, decode, gqa, cal, "hf-static-compile", "fp16", table=[])
    assert static.ttft.latency_ms == pytest.approx(6.266)
    assert static.tpot.overhead_ms == pytest.approx(0.020)


def test_eager_attention_is_refused_not_predicted_without_its_cache_reads() -> None:
    # eager attention is two matmuls whose K / V operand predict.layer_bytes does not see: no SDPA layer, no
    # place for the KV-cache reads; refused rather than predicted too fast
    with pytest.raises(ModelcostError, match="no attention layer the predictor knows"):
        predict_point(cost_of(Q_PREFILL, HEAD), cost_of(Q_DECODE, HEAD), point(), synthetic(), "hf-eager", "fp16",
                      table=[])


def test_each_phase_has_its_own_validated_error_or_none() -> None:
    rows = [ErrorEntry("Test GPU", "Test GPU", "hf-static-compile/tpot", "fp16", 2, 4.0, 7.0, 9.0)]
    pred = predict_point(cost_of(Q_PREFILL, SDPA_PREFILL, HEAD), cost_of(Q_DECODE, SDPA_DECODE, HEAD), point(),
                         synthetic(), "hf-static-compile", "fp16", table=rows)
    assert (pred.tpot.expected_error_pct, pred.tpot.expected_error_p90_pct) == (4.0, 7.0)
    assert pred.ttft.expected_error_pct is None and pred.ttft.error_basis.startswith("error unknown")


def test_measured_median_beside_the_prediction() -> None:
    pred = predicted("hf-static-compile")
    runs = [GenerationResult("hf-static-compile", "fp16", 1, 100, 100, "ok", ttft_ms=0.2, tpot_ms=v)
            for v in (0.04, 0.05, 0.06)]
    with_measurements(pred, [*runs, GenerationResult("hf-eager", "fp16", 1, 100, 100, "ok", tpot_ms=9.0)])
    # median of the three repeats: 0.05 ms; error (0.039699896 - 0.05) / 0.05 = -20.6%
    assert pred.tpot.measured_ms == 0.05 and pred.tpot.error_pct == pytest.approx(-20.600208)
    assert pred.ttft.measured_ms == 0.2


def test_llm_predict_from_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from modelcost.cli import app

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    calib.save(synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops), tmp_path)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                  "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
                                  "vocab_size": 100, "max_position_embeddings": 256}))
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["llm", str(config), "--static", "--predict", "--target-gpu", "H100 SXM",
                                      "-p", "16", "-g", "4", "-b", "1,2", "--dtype", "fp16", "--json", str(out)])
    assert result.exit_code == 0, result.output
    preds = json.loads(out.read_text())["llm"]["predictions"]
    assert {(p["ttft"]["backend"], p["ttft"]["batch_size"]) for p in preds} == {
        (b, n) for b in ("hf-eager", "hf-static-compile") for n in (1, 2)}
    assert all(p["tpot"]["latency_ms"] > 0 and p["tpot"]["error_basis"].startswith("error unknown") for p in preds)
    assert "predicted generation latency" in result.output


def test_a_decode_step_reads_its_kv_cache_at_the_dram_curve() -> None:
    # The KV cache is read from DRAM, and a calibration with a cold curve prices those reads by it. Cold curve:
    # 100,000 B in 10 us, 1,000,000 B in 19 us (against the warm curve's 2.1 and 3 us). The step reads the static
    # cache's 200 positions x 1,000 B = 200,000 B: 10 + (100,000 / 900,000) x 9 = 11 us, against the warm 2.2 us
    # of test_decode_step_static_cache_compiled: the step's kernels gain 8.8 us, 19.699896 -> 28.499896 us.
    cal = dataclasses.replace(synthetic(), cold_curve=[calib.TimePoint(100_000, 10.0),
                                                       calib.TimePoint(1_000_000, 19.0)])
    tpot = predict_point(cost_of(Q_PREFILL, SDPA_PREFILL, HEAD), cost_of(Q_DECODE, SDPA_DECODE, HEAD), point(),
                         cal, "hf-static-compile", "fp16", table=[]).tpot
    assert tpot.compute_ms == pytest.approx(28.499896e-3)
    assert "cold_weights" in tpot.calibration_features
    # beyond the cold curve's sizes the warm curve stands (from twice the L2 up they agree), and below its first
    # size too (a kernel's launch): 50,000 B -> the warm 2.05 us
    from modelcost.analysis.predict import dram_us

    assert dram_us(cal, 2_000_000) == pytest.approx(4.0) and dram_us(cal, 50_000) == pytest.approx(2.05)
    # never below the warm curve where the cold one was measured faster
    fast = dataclasses.replace(cal, cold_curve=[calib.TimePoint(100_000, 0.5), calib.TimePoint(1_000_000, 0.5)])
    assert dram_us(fast, 200_000) == pytest.approx(2.2)
