"""The latency predictor (issue 28): the calibration file, hand-derived predictions on a synthetic calibration,
the transfer to another GPU, the expected error, and the CLI's refusals on a machine without CUDA."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from modelcost import api

from modelcost.analysis.predict import (
    LayerEstimate,
    attention_efficiency,
    attention_keys,
    backend_layers,
    efficiency,
    estimate_layers,
    forward_ms,
    gemv_us,
    host_ms,
    layer_bytes,
    memory_us,
    predict,
)
from modelcost.analysis import predict as predict_module
from modelcost.analysis import predict_table
from modelcost.analysis.predict_table import ErrorEntry, expected_fields, validated_row
from modelcost.analysis.predict_transfer import calibration_for, predict_run, transfer
from modelcost.core import calibration as calib
from modelcost.core.calibration import (
    AttentionPoint,
    Calibration,
    Fusion,
    GemmPoint,
    GpuFingerprint,
    HostCost,
    TimePoint,
    wave_utilization,
)
from modelcost.core.errors import ModelcostError
from modelcost.core.types import (
    ComputeStats,
    CostReport,
    EagerOps,
    LayerCost,
    MemoryStats,
    ModelInfo,
    ParamStats,
    StorageStats,
)
from modelcost.hardware.specs import spec_from_table
from modelcost.report import console_predict

ROOT = Path(__file__).resolve().parents[2]


def synthetic(name: str = "Test GPU", **peaks: float) -> Calibration:
    """100 SMs, fp16 peak 100 TFLOP/s, fp32 50; memory kernels 2 us + 1 us per MB (1 TB/s); GEMM efficiency 0.5;
    attention 0.2 at 128 tokens, 0.4 at 1024 (head 64); eager launch 10 us per kernel; graph replay 20 us."""
    gpu = GpuFingerprint(name, 100, 1000.0, 1000.0, None, "9.0", peaks or {"fp16": 100.0, "fp32": 50.0})
    return Calibration(
        gpu=gpu, gemm_efficiency={"fp16": {"m:xl n:xl k:xl": 0.5}}, conv_efficiency={"fp16": {"m:xl n:s k:l": 0.25}},
        memory_curve=[TimePoint(0, 2.0), TimePoint(1_000_000, 3.0), TimePoint(1_000_000_000, 1002.0)],
        attention=[AttentionPoint("fp16", 128, 64, 0.2), AttentionPoint("fp16", 1024, 64, 0.4)],
        launch_us={"eager": 10.0, "compile": 5.0}, kernel_gap_us=1.0, graph_replay_us=20.0,
        fusion={"eager": Fusion("eager", {k: 1.0 for k in calib.KINDS}),
                "compile": Fusion("compile", {"gemm": 1.0, "attention": 1.0, "elementwise": 0.0, "norm": 0.5})})


def cost_of(*layers: LayerCost) -> CostReport:
    return CostReport(ModelInfo("m", "m.py", "pytorch"), [], [], ParamStats(), StorageStats(),
                      ComputeStats(complete=True), MemoryStats(), list(layers), batch_size=1)


# A 2048 x 2048 x 2048 matmul (a Linear of 2048 -> 2048 features over 2048 tokens, no bias).
GEMM = LayerCost("fc", "Linear", macs=2048**3, params=2048 * 2048, output_shapes=[(2048, 2048)],
                 macs_dtype="float32", status="counted")
GELU = LayerCost("act", "GELU", output_shapes=[(1024, 1024)], status="counted")
SDPA = LayerCost("attn", "scaled_dot_product_attention", macs=2 * 8 * 1024 * 1024 * 64,
                 output_shapes=[(1, 8, 1024, 64)], macs_dtype="float32", status="counted")


def test_wave_quantization() -> None:
    assert wave_utilization(100, 100) == 1.0  # one full wave
    assert wave_utilization(101, 100) == pytest.approx(101 / 200)  # a second wave with one tile busy
    assert wave_utilization(256, 100) == pytest.approx(256 / 300)


def test_gemm_at_known_efficiency_and_waves() -> None:
    cal = synthetic()
    [est] = estimate_layers(cost_of(GEMM), cal, "fp16", 1)
    # M = N = K = 2048: class m:xl n:xl k:xl, efficiency 0.5. Tiles (128 x 128): 16 x 16 = 256 on 100 SMs ->
    # 3 waves, 256 / 300 busy. Compute = 2 x 2048^3 / (100e12 x 0.5 x 256/300) s = 0.402653184 ms.
    assert est.compute_ms == pytest.approx(2 * 2048**3 * 300 / (100e12 * 0.5 * 256) * 1e3)
    assert est.compute_ms == pytest.approx(0.402653184)
    # Memory: (weights 2048^2 + input 2048^2 + output 2048^2) x 2 bytes = 25,165,824 B; on the curve
    # 3 us at 1 MB + 1 us per MB beyond -> 3 + 24.165824 = 27.165824 us.
    assert est.memory_ms == pytest.approx(27.165824e-3)
    # Eager: 1 kernel, host 10 us < 0.40 ms of GPU time -> no overhead. Graph: + 20 us replay.
    assert forward_ms([est], cal, "torch-eager") == pytest.approx((0.402653184, 0.0, 1))
    assert forward_ms([est], cal, "torch-compile-cudagraph") == pytest.approx((0.402653184, 0.020, 1))


def test_an_einsum_is_priced_as_the_matmul_the_count_found() -> None:
    # XLNet-base's query projection 'ibh,hnd->ibnd' at batch 64: 128 tokens x 64 = 8,192 rows, weight 768 x 12
    # heads x 64: M = 8,192, N = 768, K = 768 (LayerCost.gemm_shapes, formulas.einsum_gemm). Its output
    # (128, 64, 12, 64) alone reads N = 64 (d) and M = 98,304: the input read as 98,304 x 768 elements.
    proj = LayerCost("rel_attn.einsum", "einsum", macs=8192 * 768 * 768, output_shapes=[(128, 64, 12, 64)],
                     macs_dtype="float16", status="counted", gemm_shapes=[(8192, 768, 768)])
    assert predict_module.gemm_dims(proj, 1.0) == (8192, 768, 768)
    assert predict_module.gemm_dims(proj, 2.0) == (16384, 768, 768)  # another batch: M moves
    assert predict_module.gemm_dims(dataclasses.replace(proj, gemm_shapes=[]), 1.0) == (98304, 64, 768)
    # bytes at fp16: input 8,192 x 768 + output 8,192 x 768 elements (the weight is no parameter of this layer)
    # = 12,582,912 x 2 B = 25,165,824 B; read as the output's shape: (98,304 x 768 + 6,291,456) x 2 = 163,577,856 B
    assert predict_module.layer_bytes(proj, "gemm", 2.0, 1.0) == 25_165_824
    assert predict_module.layer_bytes(dataclasses.replace(proj, gemm_shapes=[]), "gemm", 2.0, 1.0) == 163_577_856


def test_a_memory_bound_layer_and_fusion() -> None:
    cal = synthetic()
    [est] = estimate_layers(cost_of(GELU), cal, "fp16", 1)
    # GELU over 1024 x 1024: read + write 2 x 1,048,576 x 2 B = 4,194,304 B -> 3 + 3.194304 us.
    assert est.memory_ms == pytest.approx(6.194304e-3) and est.compute_ms == 0.0
    # Eager: the host needs 10 us to issue it, the GPU 6.19 us -> 10 us in all (3.805696 us waiting on the host).
    kernel_ms, overhead_ms, kernels = forward_ms([est], cal, "torch-eager")
    assert (kernel_ms + overhead_ms, kernels) == (pytest.approx(0.010), 1)
    # torch.compile fuses elementwise layers away (0 kernels per layer): only the 20 us graph replay is left.
    assert forward_ms([est], cal, "torch-compile-cudagraph") == pytest.approx((0.0, 0.020, 0))
    # Batch 4 moves 4x the bytes: 3 + (16,777,216 - 1e6) / 1e6 = 18.777216 us.
    [est4] = estimate_layers(cost_of(GELU), cal, "fp16", 4)
    assert est4.memory_ms == pytest.approx(18.777216e-3)


def test_attention() -> None:
    cal = synthetic()
    [est] = estimate_layers(cost_of(SDPA), cal, "fp16", 1)
    # 4 x 8 heads x 1024^2 x 64 = 2,147,483,648 FLOPs at efficiency 0.4 (1024 tokens, head 64);
    # tiles 1 x 8 x 1024/128 = 64 on 100 SMs: one wave, 0.64 busy -> 2.147483648e9 / (1e14 x 0.4 x 0.64) s.
    assert est.compute_ms == pytest.approx(0.08388608)
    # log-linear between 128 (0.2) and 1024 (0.4): at sqrt(128 x 1024) halfway, 0.3.
    assert attention_efficiency(cal, "fp16", math.sqrt(128 * 1024), 64) == pytest.approx(0.3)


def test_short_windowed_attention() -> None:
    # Swin's windows: 49 tokens, head 32. A calibration from before the short points (128 tokens and up, head 64)
    # can only clamp to its first point: 0.2.
    cal = synthetic()
    assert attention_efficiency(cal, "fp16", 49, 32) == pytest.approx(0.2)
    # With points at 32 and 64 tokens of head 32 (0.01 and 0.04; a short sequence is one CTA of fixed cost, so
    # efficiency falls with the square of the length), head 32 is the nearest size and 49 lies between:
    # 0.01 + (ln 49 - ln 32) / (ln 64 - ln 32) x 0.03 = 0.01 + 0.614709 x 0.03 = 0.028441.
    cal.attention += [AttentionPoint("fp16", 32, 32, 0.01), AttentionPoint("fp16", 64, 32, 0.04)]
    assert attention_efficiency(cal, "fp16", 49, 32) == pytest.approx(0.01 + math.log(49 / 32) / math.log(2) * 0.03)
    # Head 64 keeps its own line (nearest size by ratio).
    assert attention_efficiency(cal, "fp16", 49, 64) == pytest.approx(0.2)


def test_the_share_of_time_outside_the_calibration_is_reported() -> None:
    # GEMM (2048^3) is class "m:l n:l k:l" (CLASS_SIZES: 1024 <= 2048 < 4096); with it measured, nothing is outside.
    cal = dataclasses.replace(synthetic(), gemm_efficiency={"fp16": {"m:l n:l k:l": 0.5}})
    assert predict(cost_of(GEMM), cal, "torch-compile-cudagraph", "fp16", 1, table=[]).uncalibrated_pct == 0.0
    # Beside it, Swin's first-stage window attention at batch 64 (4,096 windows x 3 heads of 49 tokens, head 32;
    # the calibration has 128-1024 tokens of head 64, so 128's 0.2 stands in):
    # 4 x 4096 x 3 x 49^2 x 32 = 3,776,446,464 FLOPs; 12,288 tiles on 100 SMs in 123 waves (12,288 / 12,300
    # busy) -> 3.776e9 / (1e14 x 0.2 x 0.999024) s = 189.006 us, above its memory time (q, k, v and output:
    # 4 x 4096 x 3 x 49 x 32 x 2 B = 154,140,672 B -> 3 + 153.140672 = 156.14 us).
    # The GEMM: 2 x 2048^3 FLOPs, 256 tiles of 128 x 128 in 3 waves (256 / 300 busy) at 0.5 -> 402.653 us.
    # Share outside: 189.006 / (189.006 + 402.653) = 31.9%.
    window = LayerCost("attn", "scaled_dot_product_attention", macs=2 * 4096 * 3 * 49 * 49 * 32,
                       output_shapes=[(4096, 3, 49, 32)], macs_dtype="float32", status="counted")
    pred = predict(cost_of(GEMM, window), cal, "torch-compile-cudagraph", "fp16", 1, table=[])
    attention_us = 3_776_446_464 / (1e14 * 0.2 * 12_288 / 12_300) * 1e6
    gemm_us = 2 * 2048**3 / (1e14 * 0.5 * 256 / 300) * 1e6
    assert pred.uncalibrated_pct == pytest.approx(round(100 * attention_us / (attention_us + gemm_us), 1)) == 31.9
    # At batch 1 (64 windows) the same attention comes out memory-bound (4 x 64 x 3 x 49 x 32 x 2 B = 2,408,448 B:
    # 3 + 1.408448 = 4.408 us, above its 3.07 us compute), and still counts as outside: its compute figure is the
    # one in doubt. 4.408448 / (4.408448 + 402.653) = 1.08%.
    small = dataclasses.replace(window, macs=2 * 64 * 3 * 49 * 49 * 32, output_shapes=[(64, 3, 49, 32)])
    pred = predict(cost_of(GEMM, small), cal, "torch-compile-cudagraph", "fp16", 1, table=[])
    assert pred.uncalibrated_pct == pytest.approx(round(100 * 4.408448 / (4.408448 + gemm_us), 1)) == 1.1
    # synthetic()'s table has only "m:xl n:xl k:xl": it stands in, and the whole time is outside.
    other = synthetic()
    assert predict(cost_of(GEMM), other, "torch-compile-cudagraph", "fp16", 1, table=[]).uncalibrated_pct == 100.0
    # The terminal's table names the share beside the expected error.
    table = console_predict.predictions_table([predict(cost_of(GEMM), other, "torch-eager", "fp16", 1, table=[])])
    assert "outside calibration" in [c.header for c in table.columns]
    assert list(table.columns[-1].cells) == ["100%"]
    # Its expected error is unknown (an empty table), and the caption says why, in the prediction's own words.
    assert list(table.columns[-2].cells) == ["unknown"]
    assert "; error unknown: the validation table has no entry for torch-eager fp16" in str(table.caption)


def test_a_reduced_attention_goes_by_its_key_length() -> None:
    # SegFormer-B0's first stage at 512 x 512: 16,384 queries over 256 keys (spatial reduction 8), 1 head of 32.
    # MACs 2 x 16384 x 256 x 32 = 268,435,456 -> keys = MACs / (2 x 1 x 1 x 16384 x 32) = 256.
    reduced = LayerCost("attn", "scaled_dot_product_attention", macs=2 * 16384 * 256 * 32,
                        output_shapes=[(1, 1, 16384, 32)], macs_dtype="float32", status="counted")
    assert attention_keys(reduced) == 256
    # Efficiency at 256 keys (head 64's line, the nearest): 0.2 + ln(256 / 128) / ln(1024 / 128) x 0.2 = 0.26667,
    # not the 0.4 the 16,384 queries would clamp to. 128 query tiles on 100 SMs: 2 waves, 0.64 busy.
    # 536,870,912 FLOPs / (1e14 x 0.266667 x 0.64) s = 31.457 us.
    [est] = estimate_layers(cost_of(reduced), synthetic(), "fp16", 1)
    assert est.compute_ms == pytest.approx(536_870_912 / (1e14 * (0.2 + 0.2 / 3) * 0.64) * 1e3)
    # self-attention: as many keys as queries
    assert attention_keys(SDPA) == 1024


def test_calibration_attention_shapes() -> None:
    from modelcost.bench.calibrate import attention_shape
    # From 128 tokens up: batch 4 x 16 heads. Below, batch x seq^2 is held at 128's, 4 x 128^2:
    # 64 tokens -> batch 4 x (128 / 64)^2 = 16; 32 tokens -> 4 x 4^2 = 64 (x 16 heads = 1,024 CTAs).
    assert [attention_shape(s) for s in (4096, 128, 64, 32)] == [(4, 16), (4, 16), (16, 16), (64, 16)]


def test_memory_curve_edges() -> None:
    cal = synthetic()
    cal.memory_curve[0] = TimePoint(4096, 2.0)
    assert memory_us(cal, 10) == 2.0  # below the first point (4 KiB): its time (the launch floor)
    assert memory_us(cal, 2_000_000_000) == pytest.approx(2002.0)  # past the last: its bandwidth (1 us / MB)


def test_transfer_by_spec_ratios() -> None:
    h100 = synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops)
    h100 = dataclasses.replace(h100, gpu=dataclasses.replace(h100.gpu, l2_cache_bytes=50 * 2**20))
    h200 = spec_from_table("H200")
    moved = transfer(h100, h200)
    # Same SMs and clocks on both: peaks unchanged. Bandwidth 3350 -> 4800 GB/s: a DRAM-bound point keeps its
    # 2 us floor and the rest scales by 3350/4800: 2 + 1000 x 3350/4800 = 699.9166... us. The 1 MB point fits
    # the 50 MiB L2: it scales by SMs x clock (ratio 1) and stays 3 us.
    assert moved.gpu.peak_tflops["fp16"] == pytest.approx(h100.gpu.peak_tflops["fp16"])
    assert [p.time_us for p in moved.memory_curve] == pytest.approx([2.0, 3.0, 2 + 1000 * 3350 / 4800])
    assert moved.gpu.name == "H200" and moved.gpu.bandwidth_gbps == pytest.approx(1000.0 * 4800 / 3350)
    cal, source = calibration_for(h200, [h100])
    assert source == "H100 SXM" and cal.gpu.name == "H200"
    pred = predict(cost_of(GEMM), cal, "torch-eager", "fp16", 1, calibrated_on=source, table=[])
    assert pred.transferred and pred.calibrated_on == "H100 SXM" and "transferred" not in pred.error_basis
    same, source = calibration_for(spec_from_table("H100 SXM"), [h100])
    assert source == "H100 SXM" and same.memory_curve == h100.memory_curve
    # The target as NVML reports this machine (an H200's memory clock x bus: a hair off the datasheet's 4800
    # GB/s) moves the calibration exactly as the table's H200 does: the ratios are taken table to table.
    nvml = dataclasses.replace(h200, name="NVIDIA H200", bandwidth_gbps=4812.8, source="nvml")
    assert transfer(h100, nvml).memory_curve == moved.memory_curve


def expected_error(*key: Any) -> tuple[float | None, float | None, str]:
    """(median %, p90 %, basis) of the expected-error fields a prediction takes for ``key`` (table, gpu, ...)."""
    fields = expected_fields(*key)
    return fields["expected_error_pct"], fields["expected_error_p90_pct"], fields["error_basis"]


def test_expected_error_comes_from_the_table_or_is_unknown() -> None:
    row = ErrorEntry("H100 SXM", "H100 SXM", "torch-eager", "fp16", 16, 6.5, 14.0, 31.0)
    assert expected_error([row], "H100 SXM", "H100 SXM", "torch-eager", "fp16")[:2] == (6.5, 14.0)
    median, p90, basis = expected_error([row], "H200", "H100 SXM", "torch-eager", "fp16")
    assert (median, p90) == (None, None) and basis.startswith("error unknown")
    pred = predict(cost_of(GEMM), synthetic(), "torch-eager", "fp16", 1, table=[])
    assert pred.expected_error_pct is None and pred.error_basis.startswith("error unknown")
    # a row that knows its bias says it: 12 of the 16 cases were predicted below their measurement = 75%
    low = dataclasses.replace(row, low_cases=12)
    assert expected_error([low], "H100 SXM", "H100 SXM", "torch-eager", "fp16")[2].endswith(
        "median 6.5%, p90 14.0%, worst 31.0%; 12 of 16 predicted below the measurement")
    fields = expected_fields([low], "H100 SXM", "H100 SXM", "torch-eager", "fp16")
    assert (fields["expected_error_pct"], fields["expected_error_p90_pct"], fields["expected_low_pct"]) == \
        (6.5, 14.0, 75.0)
    pred = dataclasses.replace(predict(cost_of(GEMM), synthetic(), "torch-eager", "fp16", 1, table=[]), **fields)
    assert console_predict._expected(pred) == "6% (p90 14%, 75% low)"  # the terminal's cell
    assert expected_fields([row], "H100 SXM", "H100 SXM", "torch-eager", "fp16")["expected_low_pct"] is None


def test_predict_run_without_calibration_says_what_to_run() -> None:
    with pytest.raises(ModelcostError, match="modelcost calibrate"):
        predict_run(cost_of(GEMM), [], [spec_from_table("H100 SXM")], [])


def test_calibration_round_trip_and_version_refusal(tmp_path: Path) -> None:
    cal = synthetic()
    path = calib.save(cal, tmp_path)
    assert path == tmp_path / "calibration" / "test-gpu.json"
    assert calib.load(path) == cal
    assert "file calibration/test-gpu.json" in (tmp_path / ".modelcost-manifest").read_text()  # cache --clear
    doc = json.loads(path.read_text())
    doc["schema"] = "modelcost.calibration/0"
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelcostError, match=r"schema 'modelcost.calibration/0', this modelcost reads "
                                             r"'modelcost.calibration/2'.*modelcost calibrate"):
        calib.load(path)
    assert calib.load_all(tmp_path) == []  # skipped, never half-read


def test_calibrate_without_cuda_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.cli import app

    monkeypatch.setattr("modelcost.bench.memory.cuda_available", lambda: False)
    result = CliRunner().invoke(app, ["calibrate"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "CUDA" in result.output


def test_predict_without_a_calibration_says_what_to_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from modelcost.cli import app

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["analyze", str(ROOT / "sample_models" / "resnet_tiny.onnx"), "--static",
                                      "--predict", "--target-gpu", "H100 SXM"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "run 'modelcost calibrate'" in result.output


def test_predict_on_a_target_gpu_from_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from modelcost.cli import app

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    cal = synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops)
    cal.gemm_efficiency["fp32"] = {"m:s n:s k:s": 0.3}
    cal.conv_efficiency["fp32"] = {"m:s n:s k:s": 0.3}
    cal.attention.append(AttentionPoint("fp32", 128, 64, 0.1))
    calib.save(cal, tmp_path)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["analyze", str(ROOT / "sample_models" / "resnet_tiny.onnx"), "--static",
                                      "--predict", "--target-gpu", "H100 SXM", "--json", str(out)])
    assert result.exit_code == 0, result.output
    preds = json.loads(out.read_text())["predictions"]
    assert {(p["backend"], p["precision"]) for p in preds} == {("torch-eager", "fp32"), ("torch-half", "fp16"),
                                                                ("torch-compile-cudagraph", "fp16"),
                                                                ("torch-compile-cudagraph", "fp32")}
    assert all(p["gpu"] == "H100 SXM" and p["latency_ms"] > 0 and p["measured_ms"] is None for p in preds)
    # The committed H100-on-H100 rows were validated with a calibration holding host_us and ort_factor; this
    # synthetic one holds neither, so it is another model and its error is unknown, said why, never borrowed.
    assert all(p["calibration_features"] == [] for p in preds)
    assert all(p["expected_error_pct"] is None and "was validated with a calibration with host_us" in p["error_basis"]
               for p in preds)
    # and says what it lacks, and that calibrating again measures it
    assert all(": it lacks host_us, ort_factor," in p["error_basis"] and "('modelcost calibrate' measures it)" in
               p["error_basis"] for p in preds)
    assert "predicted latency (--predict)" in result.output and "unknown" in result.output  # the terminal's table


def test_a_lookup_reads_only_its_rows() -> None:
    # An embedding of 128,256 x 2,048 gathering one row: it reads that row and writes it, 2 x 2,048 x 2 B =
    # 8,192 B -> 2 + 0.008192 us on the synthetic curve, not the 525 MB table (~527 us).
    emb = LayerCost("embed", "Embedding", params=128_256 * 2048, output_shapes=[(1, 1, 2048)], status="zero_cost")
    [est] = estimate_layers(cost_of(emb), synthetic(), "fp16", 1)
    assert est.kind == "lookup" and est.memory_ms == pytest.approx(2.008192e-3)


def test_a_schema_1_file_is_refused_in_one_line() -> None:
    # The first validation's H200 file: capped efficiencies, no bf16 / small-M tables -> re-run calibrate.
    with pytest.raises(ModelcostError, match=r"reads 'modelcost.calibration/2'; run 'modelcost calibrate' again"):
        calib.load(ROOT / "benchmarks" / "results" / "device_2026-11-26" / "nvidia-h200.json")


def test_an_efficiency_above_one_is_kept_so_a_calibrated_shape_comes_back_at_its_time() -> None:
    from modelcost.bench.calibrate import _efficiency

    # cuBLAS beat the 128 x 128-tile wave model by 4.4x at M 128, N = K 1024 (fp32): the efficiency stays 4.4
    assert _efficiency(4.4e-6, 1e-6) == pytest.approx(4.4)
    cal = synthetic()
    cal.gemm_efficiency["fp32"] = {"m:s n:l k:l": 4.4}
    fc = LayerCost("fc", "Linear", macs=128 * 1024 * 1024, params=1024 * 1024, output_shapes=[(1, 128, 1024)],
                   status="counted")
    [est] = estimate_layers(cost_of(fc), cal, "fp32", 1)
    # 2 x 128 x 1024^2 = 268,435,456 FLOPs at 50 TFLOP/s x 4.4 x (1 x 8 tiles / 100 SMs) = 15.252 us
    # (capped at 1 as in schema 1: 67.1 us, the 4.4x too slow batch-1 fp32 of the first validation)
    assert est.compute_ms == pytest.approx(268_435_456 / (50e12 * 4.4 * 0.08) * 1e3)
    assert est.compute_ms == pytest.approx(15.2520e-3, rel=1e-4)


def test_a_table_timed_in_another_tf32_mode_is_refused() -> None:
    cal = synthetic()
    cal.gemm_efficiency["fp32"] = {"m:xl n:xl k:xl": 0.8}
    cal.matmul_modes = {"fp32": "ieee", "tf32": "tf32"}
    assert estimate_layers(cost_of(GEMM), cal, "fp32", 1)  # fp32 runs TF32 off in every backend: ieee
    cal.matmul_modes["fp32"] = "tf32"  # a calibration whose fp32 GEMMs ran as TF32
    with pytest.raises(ModelcostError, match=r"fp32 GEMMs with the fp32 matmul mode 'tf32'.*modelcost calibrate"):
        estimate_layers(cost_of(GEMM), cal, "fp32", 1)


def small_m_calibration() -> Calibration:
    """4 TB/s; bf16 matrix-vector points: a 2048 x 8192 weight (33,554,432 B) read at the full 4 TB/s at M 1
    (8.388608 us) and a 4x larger one (8192 x 8192, 134,217,728 B) at 80% (41.9430 us); at M 16 each twice as long."""
    cal = synthetic()
    cal.gpu = dataclasses.replace(cal.gpu, bandwidth_gbps=4000.0, peak_tflops={"fp16": 100.0, "bf16": 100.0})
    small, large = 2048 * 8192 * 2, 8192 * 8192 * 2
    cal.gemv = [GemmPoint("bf16", m, 8192, k, m_factor * size / bw)
                for m, m_factor in ((1, 1), (16, 2)) for k, size, bw in ((2048, small, 4e6), (8192, large, 3.2e6))]
    return cal


def test_a_small_m_gemm_reads_its_weight_at_the_calibrated_bandwidth() -> None:
    cal = small_m_calibration()
    fc = LayerCost("fc", "Linear", macs=2048 * 8192, params=2048 * 8192, output_shapes=[(1, 1, 8192)],
                   status="counted")
    [est] = estimate_layers(cost_of(fc), cal, "bf16", 1)
    # M 1, a 2048 x 8192 bf16 weight: 33,554,432 B at the calibrated 4.0 TB/s (100% there) -> 8.388608 us,
    # no separate memory term; eager adds the host's 10 us launch: host-bound, 10 us
    assert (est.compute_ms, est.memory_ms) == (pytest.approx(8.388608e-3), 0.0)
    kernel_ms, overhead_ms, _ = forward_ms([est], cal, "torch-eager")
    assert kernel_ms + overhead_ms == pytest.approx(0.010)
    # A weight of twice the bytes (4096 x 8192: 67,108,864 B) sits halfway in log(bytes) between 100% and 80%:
    # 90% of 4 TB/s -> 67,108,864 / 3.6e6 = 18.641351 us
    wide = LayerCost("fc", "Linear", macs=4096 * 8192, params=4096 * 8192, output_shapes=[(1, 1, 8192)],
                     status="counted")
    assert estimate_layers(cost_of(wide), cal, "bf16", 1)[0].compute_ms == pytest.approx(18.641351e-3)
    # Batch 8 (M 8): linear between M 1 (8.388608 us) and M 16 (16.777216 us): 8.388608 x (1 + 7/15) = 12.30329 us
    assert estimate_layers(cost_of(fc), cal, "bf16", 8)[0].compute_ms == pytest.approx(8.388608e-3 * 22 / 15)
    # M 17 rows leaves the class: the tiled GEMM model (synthetic fp16 efficiency 0.5 by the nearest class)
    [tiled] = estimate_layers(cost_of(fc), cal, "bf16", 17)
    assert tiled.memory_ms > 0


def test_a_small_m_gemm_is_priced_from_the_points_of_its_orientation() -> None:
    # Two bf16 weights of the same 33,554,432 B at M 1 on a 4 TB/s GPU: 8192 x 2048 (more outputs than inputs) read
    # in 10 us, 2048 x 8192 in 12 us (C10 on the H100: 14.1 and 16.3 us). One line over log(bytes) held both at one
    # x and read the same (the slower) for either; each orientation now reads its own, and a square weight of the
    # same bytes (4096 x 4096) the mean of both fractions: 33,554,432 / 4e6 = 8.388608 us at 100%, so the fractions
    # are 0.8388608 and 0.6990507, mean 0.7689557 -> 8.388608 / 0.7689557 = 10.909091 us
    cal = synthetic()
    cal.gpu = dataclasses.replace(cal.gpu, bandwidth_gbps=4000.0)
    cal.gemv = [GemmPoint("bf16", 1, 8192, 2048, 10.0), GemmPoint("bf16", 1, 2048, 8192, 12.0)]
    assert gemv_us(cal, "bf16", 1, 8192, 2048) == pytest.approx(10.0)
    assert gemv_us(cal, "bf16", 1, 2048, 8192) == pytest.approx(12.0)
    assert gemv_us(cal, "bf16", 1, 4096, 4096) == pytest.approx(10.909091)
    # a calibration with no point of a weight's orientation prices it from all of them (here: the tall one alone)
    cal.gemv = [GemmPoint("bf16", 1, 2048, 8192, 12.0)]
    assert gemv_us(cal, "bf16", 1, 8192, 2048) == pytest.approx(12.0)


def validation_script() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("predict_validate", ROOT / "benchmarks" / "predict_validate.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_validation_script_writes_no_table_from_cases_without_a_calibration(tmp_path: Path) -> None:
    script = validation_script()
    failed = {"model": "resnet50", "error": "ModelcostError: --predict: no GPU calibration in /c; run ...",
              "trace": "Traceback ..."}
    with pytest.raises(SystemExit, match=r"resnet50 failed for want of a GPU calibration, so no table is written"):
        script.write_tables(tmp_path, [failed])
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_re_predicted_case_file_is_re_predicted_from_each_measurement_once(tmp_path: Path) -> None:
    # --repredict's own output holds each case once per calibration (here two), all with the stored measurement:
    # read back (gzipped, as the committed ones are kept) it gives each measurement once; a second measurement of
    # the same config, another figure, stays beside it
    import gzip
    import json

    script = validation_script()
    case = {"model": "resnet50", "gpu": "H100 SXM", "backend": "torch-eager", "precision": "fp32", "batch": 1}
    rows = [case | {"measured_ms": 5.0, "calibration": "c1"}, case | {"measured_ms": 5.0, "calibration": "c2"},
            case | {"measured_ms": 5.5, "calibration": "c1"}, {"model": "resnet50", "note": "a note"}]
    path = tmp_path / "cases.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    once = script.measured_once(script.read_cases(path))
    assert [(c["measured_ms"], c["calibration"]) for c in once] == [(5.0, "c1"), (5.5, "c1")]


def test_a_model_cut_short_keeps_the_cases_of_the_batches_it_finished(tmp_path: Path, monkeypatch) -> None:
    # The eighteenth set's RT-DETR was stopped by its call's timeout at batch 64 and kept nothing: the cases were
    # written when the whole model was done. Each batch's rows now go to the file as that batch finishes. A fake
    # api.run: batch 1 measures torch-half fp16 (1.5 ms) and predicts it, batch 64 fails
    import argparse
    from types import SimpleNamespace

    from modelcost.bench.stats import latency_stats
    from modelcost.core.types import BenchResult

    script = validation_script()

    def fake_run(source: str, options: Any) -> Any:
        batch = options.batch_sizes[0]
        if batch == 64:
            raise RuntimeError("stopped at batch 64")
        pred = predict(cost_of(GEMM), synthetic(), "torch-half", "fp16", batch)
        pred.measured_ms, pred.error_pct = 1.5, (pred.latency_ms - 1.5) / 1.5 * 100
        result = BenchResult("torch-half", "fp16", batch, "ok", latency_ms=latency_stats([1.5]))
        return SimpleNamespace(benchmarks=[result], predictions=[pred], notes=[], cost=cost_of(GEMM))

    monkeypatch.setattr(api, "run", fake_run)
    args = argparse.Namespace(configs="torch-half:fp16", batches="1,64")
    cases = tmp_path / "cases.jsonl"
    with pytest.raises(RuntimeError, match="stopped at batch 64"):
        script.run_model("resnet50", args, lambda rows: script.append_cases(cases, rows))
    [case] = script.read_cases(cases)
    assert (case["model"], case["backend"], case["batch"], case["measured_ms"]) == ("resnet50", "torch-half", 1, 1.5)


def test_the_validation_cases_carry_the_share_of_macs_in_convs() -> None:
    # The fit leaves out the fp32 torch cases of conv nets measured before abe4b94 by this share: a 3 x 3 conv of
    # 64 -> 64 channels at 56 x 56 (115,605,504 MACs) beside the 2048^3 GEMM (8,589,934,592 MACs): 115,605,504 /
    # 8,705,540,096 = 1.3%; a GELU adds none; no layers, no share
    script = validation_script()
    conv = LayerCost("c", "Conv2d", macs=115_605_504, output_shapes=[(1, 64, 56, 56)], status="counted", groups=1)
    assert script.conv_macs_pct(cost_of(conv, GEMM, GELU)) == 1.3
    assert script.conv_macs_pct(cost_of(conv)) == 100.0 and script.conv_macs_pct(cost_of(GELU)) == 0.0
    assert script.conv_macs_pct(cost_of()) is None and script.conv_macs_pct(None) is None


def test_a_validation_case_carries_the_nodes_its_measurement_ran_on_the_cpu() -> None:
    script = validation_script()
    pred = predict(cost_of(GEMM), synthetic(), "torch-eager", "fp16", 1)
    assert "cpu_nodes" not in script.case_row("fnet", pred, [], None)
    pred.measured_cpu_nodes = {"DFT": 24}
    assert script.case_row("fnet", pred, [], None)["cpu_nodes"] == {"DFT": 24}


def test_a_host_bound_case_is_priced_again_at_its_measuring_process_s_pace() -> None:
    # Issue time 2 + 4 = 6 ms (kernels 2 ms), residual x1.25, measured 9 ms. The measuring process's pace
    # (3,300 + 3,500) / 2 = 3,400 us against the calibration's 2,000: x1.7, so 10.2 ms x 1.25 = 12.75 ms, +41.7%.
    # At half the calibration's pace the issue time 3 ms stays above the kernels: 3.75 ms, -58.3%. At a tenth the
    # kernels (2 ms) set it: 2.5 ms. A device-bound case, or one without both paces, has none.
    script = validation_script()
    case = {"bound": "host", "compute_ms": 2.0, "overhead_ms": 4.0, "residual_factor": 1.25, "measured_ms": 9.0,
            "host_pace_us": [3300.0, 3500.0], "calibration_pace_us": 2000.0, "error_pct": 0.0}
    assert script.pace_scaled_pct(case) == pytest.approx((12.75 - 9) / 9 * 100)
    assert script.pace_scaled_pct(case | {"host_pace_us": [1000.0, 1000.0]}) == pytest.approx((3.75 - 9) / 9 * 100)
    assert script.pace_scaled_pct(case | {"host_pace_us": [200.0, 200.0]}) == pytest.approx((2.5 - 9) / 9 * 100)
    assert script.pace_scaled_pct(case | {"bound": "device"}) is None
    assert script.pace_scaled_pct({k: v for k, v in case.items() if k != "calibration_pace_us"}) is None
    lines = script.pace_lines([case, case | {"host_pace_us": [1000.0, 1000.0], "error_pct": -20.0}])
    assert lines[-1].startswith("2 cases: median / p90 |error| 10.0% / 20.0% as predicted, 50.0% / 58.3%")
    assert script.pace_lines([case | {"bound": "device"}]) == []


def test_a_validation_case_carries_its_host_s_pace() -> None:
    # the pinned CPU's pace before the warm-up and after the timed loop (BenchResult.extra.host_pace_us), beside
    # the calibration's host_processes; a case measured before it was kept has none
    script = validation_script()
    pred = predict(cost_of(GEMM), synthetic(), "torch-eager", "fp16", 1)
    assert script.case_row("m", pred, [], None, [3012.4, 3188.0])["host_pace_us"] == [3012.4, 3188.0]
    assert "host_pace_us" not in script.case_row("m", pred, [], None)


def test_the_validation_script_notes_a_config_it_did_not_measure() -> None:
    from modelcost.bench.stats import latency_stats
    from modelcost.core.types import BenchResult

    script = validation_script()
    ok = BenchResult("torch-eager", "fp32", 1, "ok", latency_ms=latency_stats([1.0]))
    failed = BenchResult("torch-half", "fp16", 1, "failed", reason="CUDNN_STATUS_NOT_SUPPORTED")
    wanted = {"torch-eager:fp32", "torch-half:fp16", "ort-cuda:fp16"}
    notes = script.unmeasured("r3d", 1, wanted, [ok, failed])
    assert [n["note"] for n in notes] == ["ort-cuda:fp16 not measured (not run)",
                                          "torch-half:fp16 not measured (failed: CUDNN_STATUS_NOT_SUPPORTED)"]


def test_the_validation_script_notes_a_config_it_measured_and_did_not_predict() -> None:
    from modelcost.bench.stats import latency_stats
    from modelcost.core.types import BenchResult

    script = validation_script()
    eager = BenchResult("torch-eager", "fp32", 1, "ok", latency_ms=latency_stats([2.5]))
    half = BenchResult("torch-half", "fp16", 1, "ok", latency_ms=latency_stats([1.25]))
    wanted = {"torch-eager:fp32", "torch-half:fp16"}
    rows = [{"model": "funnel", "batch": 1, "backend": "torch-eager", "precision": "fp32", "measured_ms": 2.5}]
    # eager has its case; torch-half was measured and has none: one note, with the measured median
    notes = script.unpredicted("funnel", 1, wanted, [eager, half], rows)
    assert [n["note"] for n in notes] == ["torch-half:fp16 measured (1.250 ms), not predicted (the run's predict "
                                          "notes say why, where it gave one)"]


def test_a_small_m_point_moves_with_the_bandwidth() -> None:
    cal = small_m_calibration()
    cal.gpu = dataclasses.replace(cal.gpu, name="H100 SXM", bandwidth_gbps=3350.0, l2_cache_bytes=50 * 2**20,
                                  sm_count=132, boost_clock_mhz=1980.0)
    moved = transfer(cal, spec_from_table("H200"))
    # 2048 x 8192 bf16 = 32 MiB fits the 50 MiB L2: x SMs x clock (1.0); 8192 x 8192 = 128 MiB does not:
    # x 3350 / 4800 (bandwidth)
    assert moved.gemv[0].time_us == pytest.approx(cal.gemv[0].time_us)
    assert moved.gemv[1].time_us == pytest.approx(cal.gemv[1].time_us * 3350 / 4800)


def test_the_validation_script_repredicts_stored_cases_from_another_calibration(monkeypatch: pytest.MonkeyPatch,
                                                                                tmp_path: Path) -> None:
    """--repredict (no GPU): each measured case predicted again for its own GPU from the one calibration given,
    measured_ms kept, error recomputed; a GPU the calibration is not of is transferred and says so."""
    import argparse

    script = validation_script()
    monkeypatch.setattr(script, "MODELS", {"tiny": (f"{ROOT}/tests/fixtures/tiny_cnn.py:make_model", "x=Bx3x64x64")})
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))  # restored after (prepare_cache sets it)
    cal = synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops)
    cal.gemm_efficiency["fp32"] = {"m:s n:s k:s": 0.3}
    cal.conv_efficiency["fp32"] = {"m:s n:s k:s": 0.3}
    stored = tmp_path / "stored.jsonl"
    # CUDA graphs and 8 x 8 x 64 x 64 fp32 activations (1 MiB): kernel-bound, so the transfer shows
    case = {"model": "tiny", "calibrated_on": "H200", "backend": "torch-compile-cudagraph", "precision": "fp32",
            "batch": 8,
            "predicted_ms": 99.0, "measured_ms": 0.5, "error_pct": 19700.0, "kernels": 1}
    why = ["end-to-end p50 5.3 ms is below the latency p50 269 ms it contains"]  # kept with its case
    stored.write_text("".join(json.dumps(case | {"gpu": gpu} | ({"unstable": why} if gpu == "H200" else {})) + "\n"
                              for gpu in ("H100 SXM", "H200")) +
                      json.dumps({"model": "tiny", "batch": 8, "note": "predict: ..."}) + "\n")
    args = argparse.Namespace(repredict=stored, calibration=[calib.save(cal, tmp_path / "src")], cache_dir=None,
                              calibrate=False, out=tmp_path / "out")
    args.out.mkdir()
    script.repredict(args)
    rows = script.read_cases(args.out / "cases.jsonl")
    assert [(r["gpu"], r["calibrated_on"]) for r in rows] == [("H100 SXM", "H100 SXM"), ("H200", "H100 SXM")]
    assert {r["calibration"] for r in rows} == {cal.created}
    cost = api.analyze_static(script.MODELS["tiny"][0], batch_size=8, input_shapes=["x=8x3x64x64"])
    for row in rows:
        own, _ = calibration_for(spec_from_table(row["gpu"]), [cal])
        want = predict(cost, own, "torch-compile-cudagraph", "fp32", 8, calibrated_on="H100 SXM").latency_ms
        assert row["predicted_ms"] == pytest.approx(want) and row["measured_ms"] == 0.5
        assert row["error_pct"] == pytest.approx((want - 0.5) / 0.5 * 100)  # recomputed, not the stored 19700
    assert rows[1]["predicted_ms"] != rows[0]["predicted_ms"]  # the H200 one moved by the spec ratios
    assert rows[0]["unstable"] == [] and rows[1]["unstable"] == why
    assert (args.out / "predict_validation.md").exists()
    with pytest.raises(SystemExit, match=r"cases.jsonl exists; give --repredict an --out without a cases.jsonl"):
        script.repredict(args)  # never appended to (nor over) the cases already there
    # two calibrations: every case from each in turn, the model counted once; the second (a graph replay 5 us
    # dearer) predicts the CUDA-graph case slower (5 us times the measured residual), each row naming its calibration
    slower = dataclasses.replace(cal, created="2026-11-27T00:00:00+00:00", graph_replay_us=cal.graph_replay_us + 5.0)
    both = argparse.Namespace(**{**vars(args), "out": tmp_path / "both",
                                 "calibration": [args.calibration[0], calib.save(slower, tmp_path / "src2")]})
    both.out.mkdir()
    script.repredict(both)
    twice = script.read_cases(both.out / "cases.jsonl")
    assert [(r["gpu"], r["calibration"]) for r in twice] == [
        ("H100 SXM", cal.created), ("H200", cal.created), ("H100 SXM", slower.created), ("H200", slower.created)]
    assert [r["predicted_ms"] for r in twice[:2]] == [r["predicted_ms"] for r in rows]
    assert twice[2]["predicted_ms"] > rows[0]["predicted_ms"]


def test_the_host_model_prices_the_counted_calls() -> None:
    # host_us for eager: 18 us per kernel call, 4 us per view call. A forward of 100 kernel calls and 50 views:
    # 100 x 18 + 50 x 4 = 2,000 us = 2.0 ms. Without counted calls (an ONNX model) or for a family the host model
    # does not price (compile): kernels x launch_us = 7 x 10 us = 0.07 ms (eager), 7 x 5 us = 0.035 ms (compile).
    cal = dataclasses.replace(synthetic(), host_us={"eager": HostCost(18.0, 4.0)})
    assert host_ms(cal, "eager", EagerOps(100, 50), 7) == pytest.approx(2.0)
    assert host_ms(cal, "eager", None, 7) == pytest.approx(0.07)
    assert host_ms(cal, "compile", EagerOps(100, 50), 7) == pytest.approx(0.035)
    # One 1 MB elementwise layer (3 us of GPU time on the synthetic curve) issued in 2.0 ms: the GPU waits for the
    # host, so the forward takes 2.0 ms, 1.997 ms of it overhead.
    layer = LayerEstimate("add", "elementwise", 0.0, 0.003)
    kernel_ms, overhead_ms, _ = forward_ms([layer], cal, "torch-eager", EagerOps(100, 50))
    assert (kernel_ms, kernel_ms + overhead_ms) == pytest.approx((0.003, 2.0))


def test_host_cost_round_trips_and_a_file_without_it_still_reads() -> None:
    cal = dataclasses.replace(synthetic(), host_us={"eager": HostCost(18.0, 4.0, ("linear", "views"))})
    doc = calib.to_dict(cal)
    assert calib.from_dict(doc).host_us == cal.host_us
    doc.pop("host_us")  # a schema-2 file written before host_us: predicted from launch_us, as it was
    assert calib.from_dict(doc).host_us == {}


def test_host_processes_round_trip_through_json_and_an_older_file_has_none() -> None:
    from modelcost.core.calibration import HostProcess

    pairs = [HostProcess(3100.0, 19.4), HostProcess(2600.5, None)]
    doc = json.loads(json.dumps(calib.to_dict(dataclasses.replace(synthetic(), host_processes=pairs))))
    assert doc["host_processes"][0] == {"pace_us": 3100.0, "eager_kernel_op_us": 19.4}
    assert calib.from_dict(doc).host_processes == pairs
    doc.pop("host_processes")  # C1-C5, written before the pairs
    assert calib.from_dict(doc).host_processes == []


def test_ort_layers_take_their_kind_s_calibrated_factor() -> None:
    # ort_factor fp16: GEMMs 1.5x torch's time, norms 2x. A GEMM layer of 0.1 ms and a norm of 0.01 ms become
    # 0.15 and 0.02 ms under ort-cuda; a conv (no factor) stays; torch-eager never takes the factor, nor fp32.
    cal = dataclasses.replace(synthetic(), ort_factor={"fp16": {"gemm": 1.5, "norm": 2.0}})
    layers = [LayerEstimate("fc", "gemm", 0.1, 0.02), LayerEstimate("ln", "norm", 0.0, 0.01),
              LayerEstimate("c", "conv", 0.05, 0.01)]
    ort = backend_layers(layers, cal, "ort-cuda", "fp16")
    assert [t for e in ort for t in (e.compute_ms, e.memory_ms)] == pytest.approx([0.15, 0.03, 0.0, 0.02, 0.05, 0.01])
    assert backend_layers(layers, cal, "torch-eager", "fp16") == layers
    assert backend_layers(layers, cal, "ort-cuda", "fp32") == layers
    doc = calib.to_dict(cal)
    assert calib.from_dict(doc).ort_factor == {"fp16": {"gemm": 1.5, "norm": 2.0}}


def test_a_dilated_ort_conv_takes_the_dilated_net_s_factor_others_the_3x3_net_s() -> None:
    # fp16 factors as an H100 measured them, rounded: the 3x3 net 4, the dilated net 12. Each conv layer is 0.1 ms
    # compute and 0.01 ms memory in torch's tables, so ORT's are 0.4 ms and, dilated, 1.2 ms of compute.
    cal = dataclasses.replace(synthetic(), ort_factor={"fp16": {"conv": 4.0, "conv-dilated": 12.0}})
    convs = {  # name -> (dilations, groups)
        "3x3": ((1, 1), 1), "dilated": ((2, 2), 1), "1-D dilated": ((4,), 1), "dw-dilated": ((2, 2), 64),
        "unknown dilation": (None, 1)}
    kinds = {name: calib.ort_conv_kind(d, g) for name, (d, g) in convs.items()}
    assert kinds == {"3x3": "conv", "dilated": "conv-dilated", "1-D dilated": "conv-dilated", "dw-dilated": "conv",
                     "unknown dilation": "conv"}
    layers = [LayerEstimate(n, "conv", 0.1, 0.01, conv_kind=kinds[n]) for n in ("3x3", "dilated")]
    ort = backend_layers(layers, cal, "ort-cuda", "fp16")
    assert [e.compute_ms for e in ort] == pytest.approx([0.4, 1.2])
    # a calibration from before the dilated net holds only the 3x3 net's "conv": every conv takes it
    old = dataclasses.replace(cal, ort_factor={"fp16": {"conv": 4.0}})
    assert [e.compute_ms for e in backend_layers(layers, old, "ort-cuda", "fp16")] == pytest.approx([0.4, 0.4])
    # and the count's layers carry their kind into the estimate: a dilated 3x3 conv, 8 -> 8 channels at 4 x 4
    conv = LayerCost("c", "Conv2d", macs=8 * 8 * 9 * 16, output_shapes=[(1, 8, 4, 4)], kernel_shape=(3, 3),
                     strides=(1, 1), dilations=(2, 2), groups=1)
    [est] = estimate_layers(cost_of(conv), synthetic(), "fp16", 1)
    assert est.kind == "conv" and est.conv_kind == "conv-dilated"
    # a prediction with the dilated net's factor is another model than one without it: its own feature
    assert "ort_conv_kinds" in calib.features(cal) and "ort_conv_kinds" not in calib.features(old)


def test_an_error_is_quoted_only_for_a_calibration_of_the_same_features() -> None:
    row = ErrorEntry("H100 SXM", "H100 SXM", "torch-eager", "fp32", 16, 10.7, 22.2, 30.5, ("host_us", "ort_factor"))
    assert expected_error([row], "H100 SXM", "H100 SXM", "torch-eager", "fp32", ("host_us", "ort_factor"))[:2] \
        == (10.7, 22.2)
    median, p90, basis = expected_error([row], "H100 SXM", "H100 SXM", "torch-eager", "fp32", ())
    assert (median, p90) == (None, None) and "with none of host_us, ort_factor, grouped_convs" in basis
    assert calib.features(dataclasses.replace(synthetic(), host_us={"eager": HostCost(1.0, 0.0)})) == ("host_us",)


def test_each_feature_set_finds_its_own_row_of_the_table() -> None:
    # The table keeps a row per calibration feature set (33a779b: the window convs' calibration got its own).
    # Looked up in the first row only, every calibration made with window convs read "error unknown" while its
    # row was in the table (found on a user's run, 2026-11-27).
    old = ErrorEntry("H100 SXM", "H100 SXM", "torch-eager", "fp32", 224, 14.6, 30.1, 60.0, ("host_us",))
    new = ErrorEntry("H100 SXM", "H100 SXM", "torch-eager", "fp32", 112, 15.0, 31.2, 61.0,
                     ("host_us", "conv_windows"))
    device = dataclasses.replace(old, cases=101, median_pct=9.8, bound="device")
    table = [device, old, new]
    assert expected_error(table, "H100 SXM", "H100 SXM", "torch-eager", "fp32", ("host_us",))[:2] == (14.6, 30.1)
    assert expected_error(table, "H100 SXM", "H100 SXM", "torch-eager", "fp32", ("host_us", "conv_windows"))[:2] \
        == (15.0, 31.2)
    # the bound's own row first, where it is of the prediction's features
    row, _ = validated_row(table, "H100 SXM", "H100 SXM", "torch-eager", "fp32", ("host_us",), bound="device")
    assert row == device
    row, _ = validated_row(table, "H100 SXM", "H100 SXM", "torch-eager", "fp32", ("host_us", "conv_windows"),
                           bound="device")
    assert row == new
    median, _, basis = expected_error(table, "H100 SXM", "H100 SXM", "torch-eager", "fp32", ("conv_windows",))
    assert median is None and "it lacks host_us" in basis


def test_a_grouped_conv_takes_the_grouped_classes() -> None:
    # A depthwise 3x3 conv and a dense 1x1 conv of the same implicit-GEMM class (M 4096 = xl, N 64 = s, K 9 and
    # 64 = s): the table keeps them apart (0.01 grouped, 0.5 dense), as a calibration with grouped_convs does.
    rows = {"m:xl n:s k:s": 0.5, "m:xl n:s k:s grouped": 0.01}
    table = {"fp16": rows}
    assert efficiency(table, "fp16", calib.shape_class(4096, 64, 9, grouped=True)) == 0.01
    assert efficiency(table, "fp16", calib.shape_class(4096, 64, 64)) == 0.5
    # a dense class the table lacks takes the nearest dense one, never a grouped one, and the other way round
    assert efficiency(table, "fp16", calib.shape_class(4096, 64, 300)) == 0.5
    assert efficiency(table, "fp16", calib.shape_class(4096, 300, 9, grouped=True)) == 0.01
    # an older calibration (no grouped classes): a grouped conv takes the dense classes, as before
    assert efficiency({"fp16": {"m:xl n:s k:s": 0.5}}, "fp16", calib.shape_class(4096, 64, 9, grouped=True)) == 0.5
    cal = dataclasses.replace(synthetic(), conv_efficiency=table)
    assert calib.features(cal) == ("grouped_convs",)


def test_a_conv_with_several_channels_per_group_is_priced_as_its_groups_gemms() -> None:
    # ResNeXt's 3x3 conv, 128 -> 128 channels in 32 groups (4 per group), 56 x 56 output at batch 1:
    # M = 3136 (xl), N = 128 (s), K = 4 x 9 = 36 (s) MACs per output element; MACs = 3136 x 128 x 36 = 14,450,688.
    assert calib.conv_gemm(3136, 128, 36, 1) == ("m:xl n:s k:s", 128, 1)  # dense
    assert calib.conv_gemm(3136, 128, 9, 128) == ("m:xl n:s k:s grouped", 128, 1)  # depthwise: its own classes
    assert calib.conv_gemm(3136, 128, 36, 32) == ("m:xl n:s k:s", 4, 32)  # 32 GEMMs of N = 4, a dense class
    conv = LayerCost("c", "Conv2d", macs=3136 * 128 * 36, output_shapes=[(1, 128, 56, 56)], macs_dtype="float32",
                     status="counted", groups=32)
    table = {"fp16": {"m:xl n:s k:s": 0.3, "m:xl n:s k:s grouped": 0.01}}
    cal = dataclasses.replace(synthetic(), conv_efficiency=table)
    [est] = estimate_layers(cost_of(conv), cal, "fp16", 1)
    # efficiency 0.3 (never the depthwise 0.01); tiles: 32 GEMMs x ceil(3136 / 128) = 25 x ceil(4 / 128) = 1 ->
    # 800 tiles on 100 SMs, 8 full waves. Compute = 2 x 14,450,688 / (100e12 x 0.3) s = 0.963379 us.
    assert est.compute_ms == pytest.approx(2 * 14_450_688 / (100e12 * 0.3) * 1e3)
    depthwise = dataclasses.replace(conv, macs=3136 * 128 * 9, groups=128)
    [est] = estimate_layers(cost_of(depthwise), cal, "fp16", 1)
    # 25 x 1 tiles on 100 SMs: 25 / 100 busy; 2 x 3,612,672 / (100e12 x 0.01 x 0.25) s = 28.901376 us
    assert est.compute_ms == pytest.approx(28.901376e-3)


def test_the_validation_summary_counts_the_cases_predicted_low() -> None:
    # three cases of one row: -20%, -5% (predicted low) and +10%: |error| median 10%, p90 (index int(0.9 x 3) = 2)
    # and worst 20%, 2 of 3 low; the overall line counts them too
    script = validation_script()
    base = {"model": "m", "gpu": "H100 SXM", "calibrated_on": "H100 SXM", "backend": "torch-eager",
            "precision": "fp32", "batch": 1, "features": []}
    summary = script.summarise([base | {"error_pct": e} for e in (-20.0, -5.0, 10.0)])
    [row] = summary["entries"]
    assert (row["median_pct"], row["p90_pct"], row["worst_pct"], row["low_cases"]) == (10.0, 20.0, 20.0, 2)
    assert summary["overall"]["low_cases"] == 2
    assert ErrorEntry(**{**row, "features": tuple(row["features"])}).low_cases == 2  # the table row reads back


def test_the_validation_summary_gives_each_bound_a_row_when_both_have_enough_cases() -> None:
    # torch-eager: 5 host-bound cases at +40% and 5 device-bound at -10%: the row of all ten (median of five 10s
    # and five 40s = 25%), and one per bound (40% none low; 10% all low). torch-half: 5 host-bound and 4
    # device-bound: the host bound gets its row; the device bound, one short of MIN_BOUND_ROW_CASES, does not (its
    # predictions quote the row of all). compile: every case device-bound: its one row is the row of all.
    script = validation_script()
    base = {"model": "m", "gpu": "H100 SXM", "calibrated_on": "H100 SXM", "precision": "fp32", "batch": 1,
            "features": []}
    cases = ([base | {"backend": "torch-eager", "bound": "host", "error_pct": 40.0}] * 5
             + [base | {"backend": "torch-eager", "bound": "device", "error_pct": -10.0}] * 5
             + [base | {"backend": "torch-half", "bound": "host", "error_pct": 30.0}] * 5
             + [base | {"backend": "torch-half", "bound": "device", "error_pct": 5.0}] * 4
             + [base | {"backend": "torch-compile-cudagraph", "bound": "device", "error_pct": 8.0}] * 6)
    rows = {(e["backend"], e["bound"]): e for e in script.summarise(cases)["entries"]}
    assert set(rows) == {("torch-eager", ""), ("torch-eager", "host"), ("torch-eager", "device"),
                         ("torch-half", ""), ("torch-half", "host"), ("torch-compile-cudagraph", "")}
    assert (rows["torch-eager", ""]["median_pct"], rows["torch-eager", ""]["cases"]) == (25.0, 10)
    assert (rows["torch-eager", "host"]["median_pct"], rows["torch-eager", "host"]["low_cases"]) == (40.0, 0)
    assert (rows["torch-eager", "device"]["median_pct"], rows["torch-eager", "device"]["low_cases"]) == (10.0, 5)


def test_a_prediction_quotes_its_bounds_row_else_the_row_of_all() -> None:
    every = ErrorEntry("H100 SXM", "H100 SXM", "torch-half", "fp16", 14, 34.0, 74.0, 85.0, low_cases=3)
    host = dataclasses.replace(every, cases=9, median_pct=51.0, p90_pct=85.0, low_cases=1, bound="host")
    table = [every, host]
    fields = expected_fields(table, "H100 SXM", "H100 SXM", "torch-half", "fp16", bound="host")
    assert fields["expected_error_pct"] == 51.0 and "9 held-out host-bound cases" in fields["error_basis"]
    # no device row: the row of all; a caller that names no bound (generation, training) gets the row of all too
    for bound in ("device", ""):
        fields = expected_fields(table, "H100 SXM", "H100 SXM", "torch-half", "fp16", bound=bound)
        assert fields["expected_error_pct"] == 34.0 and "14 held-out cases" in fields["error_basis"]


def test_an_eager_norm_is_charged_for_each_of_its_calls() -> None:
    # An RMSNorm of 1,000,000 elements (fp16: 2 MB out) whose counted calls are 6 kernels moving 9,000,000
    # elements. As a layer: (input + output) x 2 bytes = 4 MB -> 3 us + 3 us = 6 us on the synthetic curve
    # (3 us at 1 MB, 1 us per MB beyond). Per call: 6 x memory_us(9e6 x 2 / 6 = 3 MB) = 6 x 5 us = 30 us.
    norm = LayerCost("ln", "RMSNorm", output_shapes=[(1000, 1000)], status="counted", eager_kernels=6,
                     eager_elements=9_000_000)
    cal = synthetic()
    [est] = estimate_layers(cost_of(norm), cal, "fp16", 1)
    assert (est.memory_ms, est.eager_memory_ms) == pytest.approx((6e-3, 30e-3))
    # eager runs every call (kernel time 30 us); compile fuses the layer (its norm factor 0.5: half of 6 us)
    assert forward_ms([est], cal, "torch-eager")[0] == pytest.approx(30e-3)
    assert forward_ms([est], cal, "torch-compile-cudagraph")[0] == pytest.approx(3e-3)
    # an ONNX layer has no tally: the layer model alone
    [onnx] = estimate_layers(cost_of(dataclasses.replace(norm, eager_kernels=None, eager_elements=None)), cal,
                             "fp16", 1)
    assert onnx.eager_memory_ms is None and forward_ms([onnx], cal, "torch-eager")[0] == pytest.approx(6e-3)


def test_an_in_place_add_reads_two_tensors_like_an_add() -> None:
    # ResNet's residual `out += identity` is aten add_: it reads out and identity and writes out, 3 x 1,000,000
    # fp16 elements = 6 MB, as an add does (the op name's trailing '_' is the in-place form, not another op)
    for op in ("add", "add_"):
        layer = LayerCost("res", op, output_shapes=[(1000, 1000)], status="counted")
        assert layer_bytes(layer, "elementwise", 2.0, 1.0) == 6_000_000


def test_a_zero_flop_copy_is_priced_by_the_bytes_it_moves() -> None:
    # A cat writing 1,000,000 fp16 elements reads as many: (1e6 + 1e6) x 2 B = 4 MB -> 3 us + 3 us = 6 us on the
    # synthetic curve; an elementwise layer for the fusion (eager: 1 kernel; compile's elementwise factor 0:
    # fused into its consumer). A zero-cost layer with no kernel call (an ONNX Reshape, a view) runs nothing.
    cat = LayerCost("cat", "cat", output_shapes=[(1000, 1000)], status="zero_cost", eager_kernels=1,
                    eager_elements=2_000_000)
    cal = synthetic()
    [est] = estimate_layers(cost_of(cat), cal, "fp16", 1)
    assert (est.kind, est.memory_ms) == ("elementwise", pytest.approx(6e-3))
    assert forward_ms([est], cal, "torch-eager")[0] == pytest.approx(6e-3)
    assert forward_ms([est], cal, "torch-compile-cudagraph")[0] == 0.0
    assert estimate_layers(cost_of(dataclasses.replace(cat, eager_kernels=None)), cal, "fp16", 1) == []


def test_a_prediction_from_an_onnx_count_is_not_given_the_pytorch_count_s_error() -> None:
    # The table's rows validated predictions made from PyTorch counts; an ONNX file's nodes (MatMul + Add, an
    # erf GELU in five nodes) are other layers than the ones the fusion and ORT factors were learned on, so its
    # prediction is another model: error unknown, and why.
    row = ErrorEntry("Test GPU", "Test GPU", "ort-cuda", "fp16", 16, 16.0, 40.0, 60.0)
    onnx = cost_of(GEMM)
    onnx.model = ModelInfo("m", "m.onnx", "onnx")
    cal = synthetic()
    cal.launch_us["ort-cuda"], cal.fusion["ort-cuda"] = 10.0, Fusion("ort-cuda", {k: 1.0 for k in calib.KINDS})
    pred = predict(onnx, cal, "ort-cuda", "fp16", 1, table=[row], residuals={})
    assert pred.expected_error_pct is None and "from an ONNX file's count" in pred.error_basis
    # (no measured residual: the row was validated without one, test_predict_residual)
    assert predict(cost_of(GEMM), cal, "ort-cuda", "fp16", 1, table=[row], residuals={}).expected_error_pct == 16.0


def strided_synthetic() -> Calibration:
    """synthetic() with a transposed-copy curve 4x the contiguous one past its floor: 4 us + 4 us per MB (fp16)."""
    return dataclasses.replace(synthetic(), strided_curve={"2": [TimePoint(0, 4.0), TimePoint(1_000_000, 8.0),
                                                                 TimePoint(1_000_000_000, 4004.0)]})


def test_an_uncoalesced_call_is_priced_at_the_transposed_copy_rate() -> None:
    # A LayerNorm whose 2 counted calls move 3,000,000 fp16 elements, one of them (1,000,000 elements) reading
    # a transposed input. Contiguous call: 2,000,000 x 2 B = 4 MB -> 3 + 3 = 6 us on the memory curve.
    # Uncoalesced call: 2 MB on the transposed curve -> 8 + 4 x 1 = 12 us. Eager: 18 us. Without the curve (an
    # older calibration) the uncoalesced call is a contiguous one: 2 x memory_us(3 MB) = 2 x 5 = 10 us.
    norm = LayerCost("ln", "LayerNorm", output_shapes=[(1000, 1000)], status="counted", eager_kernels=2,
                     eager_elements=3_000_000, eager_strided_kernels=1, eager_strided_elements=1_000_000)
    [est] = estimate_layers(cost_of(norm), strided_synthetic(), "fp16", 1)
    assert est.eager_memory_ms == pytest.approx(18e-3)
    [old] = estimate_layers(cost_of(norm), synthetic(), "fp16", 1)
    assert old.eager_memory_ms == pytest.approx(10e-3)
    # A Linear that copies its transposed 3-D input to contiguous first (1,000,000 elements read + written):
    # eager adds that copy's 12 us to the GEMM; compile fuses it away (its own kernels), so adds nothing.
    fc = dataclasses.replace(GEMM, eager_kernels=2, eager_elements=20_000_000, eager_strided_kernels=1,
                             eager_strided_elements=1_000_000)
    cal = strided_synthetic()
    [est] = estimate_layers(cost_of(fc), cal, "fp16", 1)
    assert est.eager_extra_ms == pytest.approx(12e-3)
    eager, compiled = forward_ms([est], cal, "torch-eager")[0], forward_ms([est], cal, "torch-compile-cudagraph")[0]
    assert eager == pytest.approx(compiled + 12e-3)


def test_a_non_vectorized_call_is_priced_at_the_broadcast_product_rate() -> None:
    # An RMSNorm whose 3 counted calls move 3,000,000 fp16 elements, one of them (1,000,000 elements: the weight's
    # broadcast product) non-vectorized. synthetic()'s memory curve is 2 us + 1 us per MB: the two vectorized calls
    # share 4 MB, 2 x (2 + 2) = 8 us; the broadcast one moves 2 MB on a curve of 4 us + 2 us per MB past 1 MB:
    # 6 + 2 = 8 us. Eager: 16 us. A calibration without the curve prices it as vectorized: 3 x 4 = 12 us, as before.
    norm = LayerCost("norm", "LlamaRMSNorm", output_shapes=[(1000, 1000)], status="counted", eager_kernels=3,
                     eager_elements=3_000_000, eager_unvectorized_kernels=1, eager_unvectorized_elements=1_000_000)
    cal = dataclasses.replace(synthetic(), unvectorized_curve={"2": [
        TimePoint(0, 4.0), TimePoint(1_000_000, 6.0), TimePoint(1_000_000_000, 2004.0)]})
    [est] = estimate_layers(cost_of(norm), cal, "fp16", 1)
    assert est.eager_memory_ms == pytest.approx(16e-3)
    [old] = estimate_layers(cost_of(norm), synthetic(), "fp16", 1)
    assert old.eager_memory_ms == pytest.approx(12e-3)
    assert "unvectorized_elementwise" in calib.features(cal)
    assert "unvectorized_elementwise" not in calib.features(synthetic())
    assert calib.from_dict(json.loads(json.dumps(calib.to_dict(cal)))).unvectorized_curve == cal.unvectorized_curve
    # moved to an H200 as the memory curve moves: the DRAM-bound 1 GB point past the floor x 3350 / 4800
    h100 = dataclasses.replace(cal, gpu=dataclasses.replace(
        synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops).gpu, l2_cache_bytes=50 * 2**20))
    moved = transfer(h100, spec_from_table("H200"))
    assert [p.time_us for p in moved.unvectorized_curve["2"]] == pytest.approx([4.0, 6.0, 4 + 2000 * 3350 / 4800])


def test_a_cast_conv_net_runs_channels_last_so_the_count_s_layout_is_not_its_own() -> None:
    # torch-half casts a net of 2-D convs and runs it channels_last: the count's (contiguous) transposed operands
    # are not the run's, so its calls are priced as contiguous. fp32 eager and autocast keep the traced layout,
    # and a net without a 2-D / 3-D conv (Whisper's Conv1d) is not converted.
    conv = LayerCost("c", "Conv2d", groups=1, macs=1000, output_shapes=[(1, 8, 4, 4)], status="counted")
    conv1d = LayerCost("c", "Conv1d", groups=1, macs=1000, output_shapes=[(1, 8, 4)], status="counted")
    norm = LayerCost("ln", "LayerNorm", output_shapes=[(1000, 1000)], status="counted", eager_kernels=1,
                     eager_elements=2_000_000, eager_strided_kernels=1, eager_strided_elements=2_000_000)
    assert not predict_module.layout_as_counted(cost_of(conv, norm), "torch-half", "fp16")
    assert predict_module.layout_as_counted(cost_of(conv, norm), "torch-eager", "fp32")
    assert predict_module.layout_as_counted(cost_of(conv, norm), "torch-autocast", "fp16")
    assert predict_module.layout_as_counted(cost_of(conv1d, norm), "torch-half", "fp16")
    cal = strided_synthetic()
    # 4 MB contiguous: 3 + 3 = 6 us; uncoalesced: 8 + 4 x 3 = 20 us
    [_, est] = estimate_layers(cost_of(conv, norm), cal, "fp16", 1, strided=False)
    assert est.eager_memory_ms == pytest.approx(6e-3)
    [_, est] = estimate_layers(cost_of(conv, norm), cal, "fp16", 1)
    assert est.eager_memory_ms == pytest.approx(20e-3)


def test_an_unaligned_gemm_takes_the_calibrated_factor_under_torch_only() -> None:
    # A 2048 x 2044 x 2048 GEMM: N = 2044 is not a multiple of 8, so fp16 runs cuBLAS's 2-byte-aligned kernels
    # (calibrated 3x the padded GEMM's time); fp32 (IEEE, SIMT kernels) has no alignment rule; 2048 is aligned.
    # ORT's GEMMs take their calibrated factor over the aligned time instead (ort_factor gemm 1.5).
    cal = dataclasses.replace(synthetic(), unaligned_factor={"fp16": 3.0, "tf32": 1.2},
                              ort_factor={"fp16": {"gemm": 1.5}})
    odd = dataclasses.replace(GEMM, macs=2048 * 2044 * 2048, output_shapes=[(2048, 2044)])
    [aligned] = estimate_layers(cost_of(GEMM), cal, "fp16", 1)
    [est] = estimate_layers(cost_of(odd), cal, "fp16", 1)
    # same tiles (16 x 16 of 128) and class: the odd GEMM's compute is 2044 / 2048 of the aligned one's, x 3
    assert est.unaligned == 3.0 and est.compute_ms == pytest.approx(aligned.compute_ms * 2044 / 2048 * 3)
    assert predict_module.unaligned_factor(cal, "fp32", 2044, 2048) == 1.0
    assert predict_module.unaligned_factor(cal, "bf16", 2044, 2048) == 3.0  # bf16 takes fp16's factor
    assert predict_module.unaligned_factor(cal, "tf32", 2046, 2048) == 1.2  # TF32 wants 4 elements
    assert predict_module.unaligned_factor(cal, "tf32", 2044, 2048) == 1.0
    [ort] = backend_layers([est], cal, "ort-cuda", "fp16")
    assert ort.compute_ms == pytest.approx(aligned.compute_ms * 2044 / 2048 * 1.5)


def conv_of(cin: int, cout: int, size: int, window: int, groups: int = 1) -> LayerCost:
    """A stride-1 conv of ``cin`` -> ``cout`` channels in ``groups`` groups at ``size`` x ``size`` (batch 1)."""
    return LayerCost("c", "Conv2d", macs=size * size * cout * cin // groups * window * window,
                     output_shapes=[(1, cout, size, size)], macs_dtype="float32", status="counted", groups=groups,
                     kernel_shape=(window, window), strides=(1, 1), dilations=(1, 1))


def test_an_unaligned_conv_takes_the_calibrated_factor_under_every_backend() -> None:
    # A 78 -> 78 3 x 3 conv at 28 x 28: M = 784, N = 78, K = 78 x 9 = 702, so 78 input and output channels; 78 is
    # not a multiple of 8 (fp16) nor of 4 (TF32: 78 = 4 x 19 + 2), so fp16 takes 2.0 and tf32 1.2. Its compute in
    # synthetic()'s one conv class (0.25; 7 x 1 tiles of 128 on 100 SMs: 0.07 busy):
    # 2 x 784 x 78 x 702 / (100e12 x 0.25 x 0.07) s = 49.061 us, doubled 98.122 us (memory: ~2.4 us).
    cal = dataclasses.replace(synthetic(), unaligned_conv_factor={"fp16": 2.0, "tf32": 1.2},
                              ort_factor={"fp16": {"conv": 1.5}})
    conv = conv_of(78, 78, 28, 3)
    [est] = estimate_layers(cost_of(conv), cal, "fp16", 1)
    [plain] = estimate_layers(cost_of(conv), synthetic(), "fp16", 1)
    assert plain.compute_ms == pytest.approx(2 * 784 * 78 * 702 / (100e12 * 0.25 * 0.07) * 1e3)
    assert est.compute_ms == pytest.approx(2 * plain.compute_ms) == pytest.approx(98.122e-3, rel=1e-4)
    assert est.unaligned == 1.0  # the GEMM factor's field, which ORT divides back out, stays 1
    # ONNX Runtime runs cuDNN's convs too: its conv factor on top of the doubled time, 1.5 x 98.122 us
    [ort] = backend_layers([est], cal, "ort-cuda", "fp16")
    assert ort.compute_ms == pytest.approx(1.5 * est.compute_ms)
    factor = predict_module.unaligned_conv_factor
    assert factor(cal, "bf16", conv, 1.0) == 2.0  # bf16 takes fp16's factor
    assert factor(cal, "tf32", conv, 1.0) == 1.2 and factor(cal, "fp32", conv, 1.0) == 1.0  # IEEE fp32: no rule
    assert factor(cal, "fp16", conv, 64.0) == 2.0  # K and N are the batch's own: 64 x 784 rows, same channels
    # 80 channels: a multiple of 8 and of 4; 84: of 4 (TF32's) but not of 8 (fp16's); 78 -> 80 1 x 1: K = 78
    assert factor(cal, "fp16", conv_of(80, 80, 28, 3), 1.0) == 1.0
    assert (factor(cal, "fp16", conv_of(84, 84, 28, 3), 1.0), factor(cal, "tf32", conv_of(84, 84, 28, 3), 1.0)) \
        == (2.0, 1.0)
    assert factor(cal, "fp16", conv_of(78, 80, 28, 1), 1.0) == 2.0
    # 2 groups of 78 channels (156 -> 156): K = 78 x 9 per group, 78 out per group; 2 of 80: aligned
    assert factor(cal, "fp16", conv_of(156, 156, 28, 3, groups=2), 1.0) == 2.0
    assert factor(cal, "fp16", conv_of(160, 160, 28, 3, groups=2), 1.0) == 1.0
    # depthwise (78 groups of one channel, calibrated apart), an RGB stem (3 -> 78: 3 input channels, which cuDNN
    # pads itself) and a transposed conv are not judged
    assert factor(cal, "fp16", conv_of(78, 78, 28, 3, groups=78), 1.0) == 1.0
    assert factor(cal, "fp16", conv_of(3, 78, 112, 7), 1.0) == 1.0
    assert factor(cal, "fp16", dataclasses.replace(conv, op="ConvTranspose2d"), 1.0) == 1.0
    # so their estimates are those of the calibration without the factor, and so is the 78-channel conv's at fp32
    plain_cal = dataclasses.replace(cal, unaligned_conv_factor={})
    for same in (conv_of(80, 80, 28, 3), conv_of(78, 78, 28, 3, groups=78), conv_of(3, 78, 112, 7)):
        assert estimate_layers(cost_of(same), cal, "fp16", 1) == estimate_layers(cost_of(same), plain_cal, "fp16", 1)
    fp32_table = {"fp32": {"m:xl n:s k:l": 0.25}}
    assert estimate_layers(cost_of(conv), dataclasses.replace(cal, conv_efficiency=fp32_table), "fp32", 1) == \
        estimate_layers(cost_of(conv), dataclasses.replace(plain_cal, conv_efficiency=fp32_table), "fp32", 1)


def test_a_calibration_without_the_unaligned_conv_factor_predicts_as_before(monkeypatch) -> None:
    # The same net (an unaligned conv, an aligned one and a GEMM) on a calibration without the figure: every
    # config's prediction is the one the predictor gave before it had the factor at all, features unchanged
    cal = dataclasses.replace(synthetic(), ort_factor={"fp16": {"conv": 1.5, "gemm": 1.2}})
    cal.launch_us["ort-cuda"], cal.fusion["ort-cuda"] = 10.0, Fusion("ort-cuda", {k: 1.0 for k in calib.KINDS})
    cost = cost_of(conv_of(78, 78, 28, 3), conv_of(80, 80, 28, 3), GEMM)
    configs = [("torch-compile-cudagraph", "fp16"), ("torch-eager", "fp16"), ("ort-cuda", "fp16")]
    now = [predict(cost, cal, backend, precision, 64, table=[]) for backend, precision in configs]
    monkeypatch.setattr(predict_module, "unaligned_conv_factor", lambda *_: 1.0)
    assert now == [predict(cost, cal, backend, precision, 64, table=[]) for backend, precision in configs]
    assert "unaligned_convs" not in calib.features(cal)
    with_factor = dataclasses.replace(cal, unaligned_conv_factor={"fp16": 2.0})
    assert calib.features(with_factor)[-1] == "unaligned_convs"


def test_a_conv_of_several_channels_per_group_takes_its_own_classes_when_calibrated() -> None:
    # The ResNeXt conv above (M 3136, N 128 in 32 groups, K 36): with a calibration that measured such convs, one
    # GEMM over all 128 channels in the "groups" classes (25 x 1 tiles: a quarter of 100 SMs busy):
    # 2 x 14,450,688 / (100e12 x 0.05 x 0.25) s = 23.121 us.
    assert calib.conv_gemm(3136, 128, 36, 32, group_classes=True) == ("m:xl n:s k:s groups", 128, 1)
    assert calib.conv_gemm(3136, 128, 9, 128, group_classes=True) == ("m:xl n:s k:s grouped", 128, 1)
    # 64 output channels per group, the widest calibrate measures (GROUP_CHANNELS), take the class; SqueezeBERT's
    # 4 groups of 192 (N 768, K 192: m) are past it, so 4 GEMMs of N = 192 in the dense classes
    assert calib.conv_gemm(3136, 256, 576, 4, group_classes=True) == ("m:xl n:m k:l groups", 256, 1)
    assert calib.conv_gemm(3136, 768, 192, 4, group_classes=True) == ("m:xl n:m k:m", 192, 4)
    table = {"fp16": {"m:xl n:s k:s": 0.3, "m:xl n:s k:s grouped": 0.01, "m:xl n:s k:s groups": 0.05}}
    cal = dataclasses.replace(synthetic(), conv_efficiency=table)
    conv = LayerCost("c", "Conv2d", macs=3136 * 128 * 36, output_shapes=[(1, 128, 56, 56)], macs_dtype="float32",
                     status="counted", groups=32)
    [est] = estimate_layers(cost_of(conv), cal, "fp16", 1)
    assert est.compute_ms == pytest.approx(2 * 14_450_688 / (100e12 * 0.05 * 0.25) * 1e3)
    # a missing "groups" class takes the nearest of its sort, never a dense or depthwise one
    assert efficiency(table, "fp16", "m:xxl n:s k:s groups") == 0.05
    full = dataclasses.replace(cal, strided_curve=strided_synthetic().strided_curve, unaligned_factor={"fp16": 2.0},
                               unaligned_conv_factor={"fp16": 1.8, "tf32": 1.1})
    assert calib.features(full) == ("grouped_convs", "group_convs", "strided_copies", "unaligned_gemms",
                                    "unaligned_convs")
    doc = calib.from_dict(json.loads(json.dumps(calib.to_dict(full))))
    assert (doc.strided_curve, doc.unaligned_factor, doc.unaligned_conv_factor) == \
        (full.strided_curve, full.unaligned_factor, full.unaligned_conv_factor)
    # attention points under 128 tokens are one more mechanism (a calibration made before them clamps to 128's)
    short = dataclasses.replace(full, attention=[*full.attention, AttentionPoint("fp16", 32, 32, 0.01)])
    assert set(calib.features(short)) - set(calib.features(full)) == {"short_attention"}


def test_a_3x3_stride_1_conv_takes_its_own_classes_when_calibrated() -> None:
    # VGG's 3 x 3 conv of 64 -> 64 channels at 56 x 56, batch 1: M = 3,136 (xl), N = 64 (s), K = 64 x 9 = 576 (l);
    # 3,136 x 64 x 576 = 115,605,504 MACs. Its class measured by a 1 x 1 conv reads 0.3 of peak; the 3 x 3 class
    # (cuDNN's Winograd at fp32, above 1 by the direct MACs) 1.2. Tiles of 128: 25 x 1 = 25 on 100 SMs, a quarter
    # busy; fp32 peak 50 TFLOP/s: 2 x 115,605,504 / (50e12 x 1.2 x 0.25) s = 15.414 us; in the dense class 0.3:
    # 61.656 us.
    assert calib.conv_gemm(3136, 64, 576, 1, three_by_three=True) == ("m:xl n:s k:l 3x3", 64, 1)
    assert calib.is_three_by_three((3, 3)) and calib.is_three_by_three((3, 3), (1, 1), (1, 1))
    assert not calib.is_three_by_three((3, 3), (2, 2)) and not calib.is_three_by_three((3, 3), (1, 1), (2, 2))
    assert not calib.is_three_by_three((1, 1)) and not calib.is_three_by_three((3, 3, 3)) \
        and not calib.is_three_by_three(None)
    table = {"fp32": {"m:xl n:s k:l": 0.3, "m:xl n:s k:l 3x3": 1.2, "m:xl n:m k:xl 3x3": 0.9}}
    cal = dataclasses.replace(synthetic(), conv_efficiency=table)
    conv = LayerCost("c", "Conv2d", macs=115_605_504, output_shapes=[(1, 64, 56, 56)], macs_dtype="float32",
                     status="counted", groups=1, kernel_shape=(3, 3), strides=(1, 1), dilations=(1, 1))
    [est] = estimate_layers(cost_of(conv), cal, "fp32", 1)
    assert est.compute_ms == pytest.approx(2 * 115_605_504 / (50e12 * 1.2 * 0.25) * 1e3) and est.calibrated
    # stride 2, dilation 2 (DeepLab's atrous convs), a transposed 3 x 3 conv and a window the count does not
    # know take the dense class: no Winograd there
    for other in (dataclasses.replace(conv, strides=(2, 2)), dataclasses.replace(conv, dilations=(2, 2)),
                  dataclasses.replace(conv, op="ConvTranspose"), dataclasses.replace(conv, kernel_shape=None)):
        [dense] = estimate_layers(cost_of(other), cal, "fp32", 1)
        assert dense.compute_ms == pytest.approx(2 * 115_605_504 / (50e12 * 0.3 * 0.25) * 1e3)
        # ... and the dilated one counts as outside calibration: calibrate times no dilated conv, and cuDNN's
        # dilated kernels are not the dense class's (DeepLabV3-MobileNetV2 ran 1.7-2.4x its fp16 prediction)
        assert dense.calibrated == (other.dilations == (1, 1))
    # a calibration that kept no 3 x 3 classes apart prices it in the dense class, as before
    old = dataclasses.replace(cal, conv_efficiency={"fp32": {"m:xl n:s k:l": 0.3}})
    [before] = estimate_layers(cost_of(conv), old, "fp32", 1)
    assert before.compute_ms == pytest.approx(2 * 115_605_504 / (50e12 * 0.3 * 0.25) * 1e3)
    # a missing 3 x 3 class takes the nearest of its sort (1 + 1 steps away), never a dense one (0 steps)
    assert efficiency(table, "fp32", "m:xl n:s k:xl 3x3") == 1.2
    assert efficiency(table, "fp32", "m:xl n:m k:xl 3x3") == 0.9
    # a dense conv that is not 3 x 3 at stride 1 (R3D's 3 x 3 x 3, a strided 3 x 3) in a class only 3 x 3 convs
    # measured takes that class (the same implicit GEMM) before the nearest dense one (m:xl n:s k:l, 1 step)
    assert efficiency(table, "fp32", "m:xl n:m k:xl") == 0.9
    assert efficiency(table, "fp32", "m:xl n:s k:xl") == 0.3
    # ... and its class counts as measured ("outside calibration" is a class nothing measured)
    strided = dataclasses.replace(conv, strides=(2, 2), output_shapes=[(1, 256, 56, 56)], macs=3136 * 256 * 4608)
    wide = dataclasses.replace(cal, conv_efficiency={"fp32": {"m:xl n:m k:xl 3x3": 0.9}})
    assert estimate_layers(cost_of(strided), wide, "fp32", 1)[0].calibrated
    assert not estimate_layers(cost_of(conv), wide, "fp32", 1)[0].calibrated  # its 3x3 class m:xl n:s k:l: none
    # ... and a 3-D conv (R3D's 3 x 3 x 3 of 64 -> 64 channels over 1 x 56 x 56: K = 64 x 27 = 1,728, l) takes the
    # dense class of its implicit GEMM, m:xl n:s k:l at 0.3, as a 2-D conv of that GEMM would, and counts as
    # outside calibration: this calibration timed no 3-D conv, and X3D-M's ran 0.7-3.2x their prediction (the
    # twelfth held-out set)
    cube = dataclasses.replace(conv, op="Conv3d", kernel_shape=(3, 3, 3), strides=(1, 1, 1), dilations=(1, 1, 1),
                               output_shapes=[(1, 64, 1, 56, 56)], macs=3136 * 64 * 1728)
    [est3d] = estimate_layers(cost_of(cube), cal, "fp32", 1)
    assert est3d.compute_ms == pytest.approx(2 * 3136 * 64 * 1728 / (50e12 * 0.3 * 0.25) * 1e3)
    assert not est3d.calibrated
    # ... even where a 2-D conv of its implicit GEMM (128 output channels: m:xl n:m k:xl 3x3) counts as measured
    wider = dataclasses.replace(cube, output_shapes=[(1, 128, 1, 56, 56)], macs=3136 * 128 * 1728)
    flat2d = dataclasses.replace(wider, op="Conv2d", kernel_shape=(3, 3), strides=(2, 2), dilations=(1, 1),
                                 output_shapes=[(1, 128, 56, 56)])
    assert not estimate_layers(cost_of(wider), cal, "fp32", 1)[0].calibrated
    assert estimate_layers(cost_of(flat2d), cal, "fp32", 1)[0].calibrated
    # so does a 2-D conv of a window that is not square (TextNet's 1 x 3 and 3 x 1): calibrate's are 1, 3 and 7
    # square; its price is its implicit GEMM's as before (K = 64 x 3 = 192, m: m:xl n:s k:m, not measured; the
    # nearest dense class, m:xl n:s k:l, at 0.3)
    flat = dataclasses.replace(conv, kernel_shape=(1, 3), macs=3136 * 64 * 192)
    [est] = estimate_layers(cost_of(flat), cal, "fp32", 1)
    assert est.compute_ms == pytest.approx(2 * 3136 * 64 * 192 / (50e12 * 0.3 * 0.25) * 1e3) and not est.calibrated
    assert [predict_module.window_measured(dataclasses.replace(conv, kernel_shape=w), "m:xl n:s k:l")
            for w in ((1, 1), (7, 7), (5,), None, (3, 1), (1, 1, 1))] == [True, True, True, True, False, False]
    # the classes are a feature of their own: a validation made without them is another model
    assert "conv_3x3" in calib.features(cal) and "conv_3x3" not in calib.features(old)


def test_3d_and_non_square_convs_take_classes_of_their_own_when_calibrated() -> None:
    # Synthetic GPU: 100 SMs, tiles of 128, fp32 peak 50 TFLOP/s (as the 3 x 3 test above).
    # (classes s <= 128 < m <= 512 < l <= 2,048 < xl <= 8,192 < xxl)
    # * TextNet's 1 x 3 conv of 64 -> 64 channels at 56 x 56, batch 1: M = 3,136 (xl), N = 64 (s), K = 64 x 3 = 192
    #   (m): class m:xl n:s k:m 1xk at 0.6; 25 x 1 tiles on 100 SMs, a quarter busy:
    #   2 x 3,136 x 64 x 192 / (50e12 x 0.6 x 0.25) s.
    # * R3D's 3 x 3 x 3 conv of 64 -> 64 channels over 8 x 56 x 56 frames, batch 4: M = 4 x 8 x 56 x 56 = 100,352
    #   (xxl), N = 64 (s), K = 64 x 27 = 1,728 (l): m:xxl n:s k:l 3d at 0.5; 784 tiles in 8 waves of 100: 0.98.
    # * X3D's depthwise 3 x 3 x 3 conv of 216 channels over 16 x 14 x 14, batch 4: M = 12,544 (xxl), N = 216 (m),
    #   K = 27 (s): m:xxl n:m k:s grouped-3d at 0.01; 98 x 2 = 196 tiles in 2 waves: 0.98.
    table = {"fp32": {"m:xl n:s k:l": 0.3, "m:xl n:s k:m 1xk": 0.6, "m:xxl n:s k:l 3d": 0.5,
                      "m:xxl n:m k:s grouped-3d": 0.01}}
    cal = dataclasses.replace(synthetic(), conv_efficiency=table)
    flat = LayerCost("c", "Conv2d", macs=3136 * 64 * 192, output_shapes=[(1, 64, 56, 56)], macs_dtype="float32",
                     status="counted", groups=1, kernel_shape=(1, 3), strides=(1, 1), dilations=(1, 1))
    cube = dataclasses.replace(flat, op="Conv3d", macs=100_352 * 64 * 1728, output_shapes=[(4, 64, 8, 56, 56)],
                               kernel_shape=(3, 3, 3), strides=(1, 1, 1), dilations=(1, 1, 1))
    depthwise = dataclasses.replace(cube, macs=12_544 * 216 * 27, output_shapes=[(4, 216, 16, 14, 14)], groups=216)
    expected = [2 * 3136 * 64 * 192 / (50e12 * 0.6 * 0.25), 2 * 100_352 * 64 * 1728 / (50e12 * 0.5 * 0.98),
                2 * 12_544 * 216 * 27 / (50e12 * 0.01 * 0.98)]
    for layer, seconds in zip((flat, cube, depthwise), expected, strict=True):
        [est] = estimate_layers(cost_of(layer), cal, "fp32", 1)
        assert est.compute_ms == pytest.approx(seconds * 1e3) and est.calibrated
    assert calib.conv_gemm(3136, 64, 192, 1, window=calib.window_sort((1, 3))) == ("m:xl n:s k:m 1xk", 64, 1)
    assert [calib.window_sort(w) for w in ((3, 1), (3, 3), (5,), (1, 1, 1), None)] == ["1xk", "", "", "3d", ""]
    # a transposed 3-D conv takes none of them (calibrate times none): the 2-D classes, outside calibration
    [est] = estimate_layers(cost_of(dataclasses.replace(cube, op="ConvTranspose3d")), cal, "fp32", 1)
    assert not est.calibrated
    # S3D's 3 x 1 x 1 conv of 64 -> 64 channels over 8 x 56 x 56 frames, batch 1: M = 25,088 (xxl), N = 64 (s),
    # K = 64 x 3 = 192 (m): class m:xxl n:s k:m 3d, which calibrate did not time. The nearest class of its sort
    # (m:xxl n:s k:l 3d, 0.5: a 3 x 3 x 3 conv's) does not stand in: the 2-D classes of its implicit GEMM do,
    # m:xxl n:s k:m not measured either, so the nearest dense one, m:xl n:s k:l at 0.3; outside calibration.
    # 196 x 1 tiles on 100 SMs in 2 waves: 0.98.
    temporal = dataclasses.replace(cube, macs=25_088 * 64 * 192, output_shapes=[(1, 64, 8, 56, 56)],
                                   kernel_shape=(3, 1, 1))
    [est] = estimate_layers(cost_of(temporal), cal, "fp32", 1)
    assert est.compute_ms == pytest.approx(2 * 25_088 * 64 * 192 / (50e12 * 0.3 * 0.98) * 1e3)
    assert not est.calibrated
    # the classes are a feature of their own; a calibration without them is the 3 x 3 test's (outside calibration)
    assert "conv_windows" in calib.features(cal)
    old = dataclasses.replace(cal, conv_efficiency={"fp32": {"m:xl n:s k:l": 0.3}})
    assert "conv_windows" not in calib.features(old)


def test_a_long_grouped_1d_conv_takes_classes_of_its_own_when_calibrated() -> None:
    # wav2vec 2.0's positional conv: Conv1d 768 -> 768, 128 taps, 16 groups (48 channels each), over 49 frames at
    # batch 64: M = 64 x 49 = 3,136 (xl), N = 768 (l), K = 48 x 128 = 6,144 (xl); MACs = 3,136 x 768 x 6,144.
    # Synthetic GPU: 100 SMs, tiles of 128, fp32 peak 50 TFLOP/s; one GEMM over all channels: 25 x 6 = 150 tiles in
    # 2 waves of 100, 0.75 busy.
    # * calibrated (class m:xl n:l k:xl grouped-1d-long at 0.02): 2 x 3,136 x 768 x 6,144 / (50e12 x 0.02 x 0.75) s,
    #   inside calibration;
    # * a calibration without the class (the GROUPS class m:xl n:s k:m groups at 0.5, which 3 x 3 convs of K <= 576
    #   measured): the GROUPS classes of its implicit GEMM, the nearest (m:xl n:l k:xl groups not measured: 1 + 2
    #   steps to n:s k:m) at 0.5, outside calibration, as before the class existed.
    macs = 3136 * 768 * 6144
    pos = LayerCost("p", "Conv1d", macs=macs, output_shapes=[(64, 768, 49)], macs_dtype="float32", status="counted",
                    groups=16, kernel_shape=(128,), strides=(1,), dilations=(1,))
    base = synthetic()
    cal = dataclasses.replace(base, conv_efficiency={"fp32": {"m:xl n:s k:m groups": 0.5,
                                                              "m:xl n:l k:xl grouped-1d-long": 0.02}})
    [est] = estimate_layers(cost_of(pos), cal, "fp32", 1)
    assert est.compute_ms == pytest.approx(2 * macs / (50e12 * 0.02 * 0.75) * 1e3) and est.calibrated
    old = dataclasses.replace(cal, conv_efficiency={"fp32": {"m:xl n:s k:m groups": 0.5}})
    [before] = estimate_layers(cost_of(pos), old, "fp32", 1)
    assert before.compute_ms == pytest.approx(2 * macs / (50e12 * 0.5 * 0.75) * 1e3) and not before.calibrated
    # the sort: a 1-D window of more than LONG_TAPS (16) taps in groups of several channels; not a short one
    # (wav2vec2's feature encoder: 10 taps, dense), a dense long one, nor a depthwise long one (groups = channels)
    assert [calib.window_sort(w, g, 768) for w, g in (((128,), 16), ((17,), 16), ((16,), 16), ((128,), 1),
                                                        ((128,), 768), ((3, 3), 16))] == \
        ["grouped-1d-long", "grouped-1d-long", "", "", "", ""]
    assert calib.conv_gemm(3136, 768, 6144, 16, group_classes=True, window="grouped-1d-long") == \
        ("m:xl n:l k:xl grouped-1d-long", 768, 1)
    # priced from a class of another sort it is outside calibration; from its own, inside
    assert not predict_module.window_measured(pos, "m:xl n:s k:m groups")
    assert predict_module.window_measured(pos, "m:xl n:l k:xl grouped-1d-long")
    # the classes are a feature of their own
    assert "long_grouped_convs" in calib.features(cal) and "long_grouped_convs" not in calib.features(old)


def test_the_transposed_copy_curve_moves_with_the_bandwidth() -> None:
    # As the memory curve: a DRAM-bound point keeps the 4 us floor, the rest x 3350 / 4800 (H100 -> H200); the
    # 1 MB point fits the 50 MiB L2 and stays.
    h100 = dataclasses.replace(strided_synthetic(), gpu=dataclasses.replace(
        synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops).gpu, l2_cache_bytes=50 * 2**20))
    moved = transfer(h100, spec_from_table("H200"))
    assert [p.time_us for p in moved.strided_curve["2"]] == pytest.approx([4.0, 8.0, 4 + 4000 * 3350 / 4800])


def test_data_in_dram_moves_with_the_bandwidth_alone() -> None:
    # A calibration with a cold curve timed its curve and its small-M GEMMs with the data in DRAM, so a transfer
    # scales both by the bandwidth (3350 / 4800, H100 -> H200) even where they would fit the L2: the 1 MB cold
    # point keeps its 4 us floor and 4 more us x 3350 / 4800; a 2048 x 2048 fp16 weight (8 MB < 50 MiB) x the same.
    base = synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops)
    cold = dataclasses.replace(base, gpu=dataclasses.replace(base.gpu, l2_cache_bytes=50 * 2**20),
                               cold_curve=[TimePoint(262_144, 4.0), TimePoint(1_000_000, 8.0)],
                               gemv=[GemmPoint("fp16", 1, 2048, 2048, 10.0)])
    moved = transfer(cold, spec_from_table("H200"))
    assert [p.time_us for p in moved.cold_curve] == pytest.approx([4.0, 4 + 4 * 3350 / 4800])
    assert moved.gemv[0].time_us == pytest.approx(10.0 * 3350 / 4800)
    # without a cold curve the same weight was replayed from the L2: it moves with SMs x clock instead
    warm = transfer(dataclasses.replace(cold, cold_curve=[]), spec_from_table("H200"))
    assert warm.gemv[0].time_us != pytest.approx(moved.gemv[0].time_us)
    assert calib.features(cold)[-1] == "cold_weights"
    doc = calib.from_dict(json.loads(json.dumps(calib.to_dict(cold))))
    assert doc.cold_curve == cold.cold_curve


def test_a_ring_is_twice_the_l2() -> None:
    from modelcost.bench.calibrate import COLD_SIZES, ring_size

    l2 = 50 * 2**20
    # a 33.5 MB weight (Llama-3.2-1B's MLP, bf16): ceil(104,857,600 / 33,554,432) = 4 copies; a 537 MB head: 1
    assert ring_size(2048 * 8192 * 2, l2) == 4 and ring_size(131072 * 2048 * 2, l2) == 1
    assert ring_size(1024, l2) == 512  # capped (the cold curve starts at 256 KiB: 512 x 128 KiB tensors is 64 MiB)
    assert COLD_SIZES == (256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20)


def test_a_shared_layer_is_timed_call_by_call() -> None:
    # One Linear run three times (ALBERT's shared layer): the count sums 3 x 2048^3 MACs into one entry. Read as
    # one GEMM its K would be 3 x 2048 = 6,144; call by call it is three of test_gemm_at_known_efficiency_and_waves'
    # GEMM, 0.402653184 ms each: 1.207959552 ms in three kernels.
    cal = synthetic()
    shared = dataclasses.replace(GEMM, macs=3 * 2048**3, output_shapes=[(2048, 2048)] * 3, calls=3,
                                 call_macs=[2048**3] * 3)
    ests = estimate_layers(cost_of(shared), cal, "fp16", 1)
    assert [e.compute_ms for e in ests] == pytest.approx([0.402653184] * 3)
    assert forward_ms(ests, cal, "torch-compile-cudagraph")[2] == 3
    # a layer without its calls' MACs (an older report) stays one entry, as before
    assert len(estimate_layers(cost_of(dataclasses.replace(shared, call_macs=[])), cal, "fp16", 1)) == 1


def test_eager_calls_are_priced_by_the_bytes_they_move() -> None:
    # An RMSNorm-like layer of 4 eager calls over 4,000,000 elements that moved 12,000,000 bytes as counted (an fp32
    # round trip inside the model). The synthetic memory curve: 2 us + 1 us per MB.
    norm = LayerCost("norm", "RMSNorm", output_shapes=[(1000, 1000)], status="counted", eager_kernels=4,
                     eager_elements=4_000_000, eager_bytes=12_000_000)
    cal = synthetic()

    def eager_ms(cost: CostReport, precision: str) -> float:
        [est] = estimate_layers(cost, cal, precision, 1)
        return est.eager_memory_ms

    bf16_count = cost_of(norm)
    bf16_count.params = ParamStats(total=10, by_dtype={"bfloat16": 10})
    # counted in bf16, run in bf16: the counted bytes, 3 MB a call -> 4 x (2 + 3) = 20 us
    assert eager_ms(bf16_count, "bf16") == pytest.approx(20e-3)
    # counted in fp32, run in fp16: half the counted bytes, 1.5 MB a call -> 4 x 3.5 = 14 us
    fp32_count = cost_of(norm)
    fp32_count.params = ParamStats(total=10, by_dtype={"float32": 10})
    assert eager_ms(fp32_count, "fp16") == pytest.approx(14e-3)
    # a count without the bytes: the elements at the run's 2 bytes, 2 MB a call -> 4 x 4 = 16 us
    assert eager_ms(cost_of(dataclasses.replace(norm, eager_bytes=None)), "bf16") == pytest.approx(16e-3)


def test_a_transformers_conv1d_is_priced_as_the_matmul_it_runs() -> None:
    """transformers' Conv1D (GPT-1's and GPT-2's linears) is an addmm named like a conv. Read by its name, GPT-1's
    48 of them were priced as implicit-GEMM convs outside the calibration: its cases were predicted 7% to 419% slow,
    4.2-5.2x at batch 1 under compile and ORT (H100, device_2026-12-02). A conv is a layer whose count found a
    convolution."""
    pytest.importorskip("transformers")
    fixture = Path(__file__).parents[1] / "fixtures" / "hf_masked.py"
    cost = api.analyze_static(f"{fixture}:gpt2", batch_size=1, input_shapes=["input_ids=1x8:int64"])
    conv1d = [layer for layer in cost.layers if layer.op == "Conv1D"]
    # 2 layers x (c_attn, c_proj of attention, c_fc, c_proj of the MLP)
    assert len(conv1d) == 8 and all(layer.groups is None for layer in conv1d)
    assert {predict_module.layer_kind(layer) for layer in conv1d} == {"gemm"}
    # c_fc: 8 tokens x 32 -> 128 features (4 x n_embd): M = 8, N = 128, K = 32
    c_fc = next(layer for layer in conv1d if layer.name.endswith("mlp.c_fc"))
    assert predict_module.gemm_dims(c_fc, 1.0) == (8, 128, 32)
    conv = LayerCost("c", "Conv2d", macs=1000, output_shapes=[(1, 8, 4, 4)], status="counted", groups=1)
    assert predict_module.layer_kind(conv) == "conv"


def test_a_measurement_with_cpu_nodes_says_the_prediction_does_not_price_them() -> None:
    """FNet under ort-cuda: its 24 DFTs have no CUDA kernel in ONNX Runtime, so the measured figure holds CPU time
    (BenchResult.extra.cpu_nodes, bench/backends/ort_kernels.py) that no GPU prediction prices."""
    from modelcost.bench.stats import latency_stats
    from modelcost.core.measurement import MeasurementInfo
    from modelcost.core.types import BenchResult

    pred = predict(cost_of(GEMM), synthetic(), "torch-eager", "fp16", 1)
    pred = dataclasses.replace(pred, backend="ort-cuda", notes=[])
    measured = BenchResult("ort-cuda", "fp16", 1, "ok", latency_ms=latency_stats([40.0]),
                           extra=MeasurementInfo(cpu_nodes={"DFT": 24}))
    out = predict_module.with_measurement(pred, [measured])
    assert out.measured_ms == 40.0 and out.measured_cpu_nodes == {"DFT": 24}
    # the terminal's table marks the measurement and says why in its caption
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(console_predict.predictions_table([out]))
    text = console.export_text()
    assert "40.000*" in text and "the measurement ran nodes on the CPU that its backend has no kernel for (DFT x24)" \
        in " ".join(text.split())
    assert MeasurementInfo.from_json(MeasurementInfo(cpu_nodes={"DFT": 24}).to_json()).cpu_nodes == {"DFT": 24}


def test_a_prediction_carries_how_much_its_bound_s_measurement_repeats_on_another_machine(tmp_path: Path) -> None:
    # Two machines of one GPU kind measured the same configs (benchmarks/measure_repeat.py): a host-bound config
    # moved 2.0 -> 2.5 ms (|2.5 / 2 - 1| = 25%), a device-bound one 10.0 -> 10.1 ms (1%), a third measured once only
    import importlib.util

    spec = importlib.util.spec_from_file_location("measure_repeat", ROOT / "benchmarks" / "measure_repeat.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    def case(model: str, bound: str, ms: float) -> dict:
        return {"gpu": "Test GPU", "model": model, "backend": "torch-eager", "precision": "fp32", "batch": 1,
                "measured_ms": ms, "bound": bound}

    first = [case("a", "host", 2.0), case("b", "device", 10.0), case("c", "device", 5.0), {"model": "d", "note": "x"}]
    second = [case("a", "host", 2.5), case("b", "device", 10.1)]
    rows = script.repeats(first, second)
    assert rows == [{"gpu": "Test GPU", "bound": "device", "cases": 1, "median_pct": 1.0, "p90_pct": 1.0,
                     "worst_pct": 1.0},
                    {"gpu": "Test GPU", "bound": "host", "cases": 1, "median_pct": 25.0, "p90_pct": 25.0,
                     "worst_pct": 25.0}]
    table = tmp_path / "predict_errors.json"
    table.write_text(json.dumps({"entries": []}))
    script.merge(rows, table)
    repeats = predict_table.repeat_table(table)
    assert json.loads(table.read_text())["entries"] == [] and len(repeats) == 2
    assert predict_table.repeat_table(tmp_path / "none.json") == []
    # synthetic()'s GEMM under torch-compile-cudagraph is device-bound: it carries the device row's 1%; tiny
    # linears under eager are issued slower than they run (host-bound): 25%
    device = predict(cost_of(GEMM), synthetic(), "torch-compile-cudagraph", "fp16", 1, table=[], repeats=repeats)
    assert (device.bound, device.measured_repeat_pct, device.measured_repeat_p90_pct) == ("device", 1.0, 1.0)
    # three 8-wide linears of 64 MACs: 2 us of memory kernel each (synthetic()'s floor), issued at 10 us each
    tiny = dataclasses.replace(GEMM, macs=64, params=64, weight_bytes=128, activation_bytes=16, output_shapes=[(1, 8)])
    host = predict(cost_of(tiny, tiny, tiny), synthetic(), "torch-eager", "fp16", 1, table=[], repeats=repeats)
    assert (host.bound, host.measured_repeat_pct) == ("host", 25.0)
    other = dataclasses.replace(synthetic(), gpu=dataclasses.replace(synthetic().gpu, name="Other GPU"))
    assert predict(cost_of(GEMM), other, "torch-eager", "fp16", 1, table=[], repeats=repeats).measured_repeat_pct \
        is None  # not measured on that GPU
    # the terminal's caption says it once per GPU and bound
    caption = " ".join(str(console_predict.predictions_table([device, host]).caption).split())
    assert ("measured again on a second machine of the same GPU, device-bound configs on Test GPU 1% (p90 1%), "
            "host-bound configs on Test GPU 25% (p90 25%): no prediction can be held closer than its measurement "
            "repeats") in caption
