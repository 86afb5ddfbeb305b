"""Roofline arithmetic on a hand-built model whose every figure is derived in the comments.

The model: one Linear 1024 -> 1024 (bias) then a GELU, analysed at batch 4, fp32.
  MACs   = 4 x 1024 x 1024 = 4,194,304
  FLOPs  = 2 x MACs + bias 4 x 1024 = 8,392,704 (Linear) + GELU 5 x 4096 = 20,480  -> 8,413,184 in all
  params = 1024 x 1024 + 1024 = 1,049,600 -> 4,198,400 bytes at fp32
  input  = output = 4 x 1024 x 4 B = 16,384 bytes; each layer's output 16,384 bytes (4,096 fp32 elements)
The GPU: 10 TFLOP/s fp32, 100 TFLOP/s bf16, 1000 GB/s, 1 MiB L2 (ridge fp32 = 10 FLOP/B, bf16 = 100).
"""

from __future__ import annotations

import pytest

from modelcost.analysis.roofline import (
    OVERHEAD_RATIO,
    _owner,
    cost_batch_size,
    layer_rooflines,
    model_traffic,
    peak_key,
    roofline_point,
    what_if,
)
from modelcost.core.errors import ModelcostError
from modelcost.core.types import (
    BenchResult,
    ComputeStats,
    CostReport,
    GpuSpec,
    LatencyStats,
    LayerCost,
    LayerProfile,
    LayerTime,
    MemoryStats,
    ModelInfo,
    ParamStats,
    StorageStats,
    TensorSpec,
)
from modelcost.hardware.specs import spec_from_table

LINEAR_FLOPS = 8_392_704
GELU_FLOPS = 20_480
FLOPS = LINEAR_FLOPS + GELU_FLOPS  # 8,413,184
PARAMS = 1_049_600


def make_cost() -> CostReport:
    layers = [
        LayerCost("fc1", "Linear", macs=4_194_304, flops=LINEAR_FLOPS, params=PARAMS, macs_dtype="float32",
                  weight_bytes=4 * PARAMS, activation_bytes=16_384),
        LayerCost("act", "GELU", macs=0, flops=GELU_FLOPS, activation_bytes=16_384),
    ]
    return CostReport(
        model=ModelInfo("toy", "toy", "pytorch"),
        inputs=[TensorSpec("x", (4, 1024), "float32")], outputs=[TensorSpec("y", (4, 1024), "float32")],
        params=ParamStats(total=PARAMS, by_dtype={"float32": PARAMS}),
        storage=StorageStats(bytes=4 * PARAMS), compute=ComputeStats(macs=4_194_304, flops=FLOPS),
        memory=MemoryStats(weight_bytes=4 * PARAMS, input_bytes=16_384, output_bytes=16_384, activation_bytes=32_768),
        layers=layers, batch_size=4,
    )


def make_gpu() -> GpuSpec:
    return GpuSpec(name="toy GPU", architecture="toy", peak_tflops={"fp32": 10.0, "bf16": 100.0, "fp16": 100.0},
                   bandwidth_gbps=1000.0, l2_cache_bytes=1 << 20)


def result(
    precision: str, batch: int, p50_ms: float, backend: str = "torch-eager", device: str = "cuda"
) -> BenchResult:
    lat = LatencyStats(count=10, p50=p50_ms, p90=p50_ms, p95=p50_ms, p99=p50_ms, mean=p50_ms, std=0.0,
                       min=p50_ms, max=p50_ms)
    return BenchResult(backend=backend, precision=precision, batch_size=batch, status="ok", latency_ms=lat,
                       device=device)


def test_peak_keys() -> None:
    assert [peak_key(p) for p in ("fp32", "tf32", "fp16", "bf16", "int8", "fp8", "fp16-autocast")] == \
        ["fp32", "tf32", "fp16", "bf16", "int8", "fp8", "fp16"]
    with pytest.raises(ModelcostError):
        peak_key("mixed")


def test_cost_batch_size() -> None:
    cost = make_cost()
    assert cost_batch_size(cost) == 4
    cost.batch_size = None
    assert cost_batch_size(cost) == 4  # the first input's first dim


def test_fp32_batch_8_is_overhead_bound() -> None:
    # Batch 8 = 2x the analysed batch: FLOPs 2 x 8,413,184 = 16,826,368.
    # Bytes: weights 1,049,600 x 4 = 4,198,400 + inputs/outputs 2 x 32,768 = 65,536; the Linear's output at
    # batch 8 is 8,192 fp32 elements = 32,768 B < 1 MiB L2, so not counted -> 4,263,936.
    # compute 16,826,368 / 10e12 s = 0.0016826 ms; memory 4,263,936 / 1e12 s = 0.0042639 ms -> memory roof;
    # measured 1.0 ms = 234.5x the bound > 10 -> "overhead".
    p = roofline_point(make_cost(), result("fp32", 8, 1.0), make_gpu())
    assert p is not None
    assert p.flops == 16_826_368 and p.bytes_moved == 4_263_936
    assert p.compute_ms == pytest.approx(0.0016826368)
    assert p.memory_ms == pytest.approx(0.004263936)
    assert p.lower_bound_ms == pytest.approx(0.004263936)
    assert p.roof == "memory" and p.bound == "overhead"
    assert p.measured_over_bound == pytest.approx(1.0 / 0.004263936)
    assert p.achieved_tflops == pytest.approx(0.016826368)  # 16,826,368 FLOP / 1 ms
    assert p.mfu == pytest.approx(0.0016826368)  # / 10 TFLOP/s
    assert p.achieved_gbps == pytest.approx(4.263936)  # 4,263,936 B / 1 ms
    assert p.intensity == pytest.approx(16_826_368 / 4_263_936)  # 3.946 FLOP/B
    assert p.ridge_point == pytest.approx(10.0)  # 10e12 / 1e12
    assert p.peak_key == "fp32" and "weights once at fp32" in p.bytes_basis
    assert p.mfu_measured is None


def test_bf16_is_memory_bound_and_uses_measured_ceiling() -> None:
    # bf16 at batch 8: weights 1,049,600 x 2 = 2,099,200 + io 65,536 = 2,164,736 B -> 0.0021647 ms at 1 TB/s;
    # compute 16,826,368 / 100e12 = 0.00016826 ms. Measured 0.005 ms = 2.31x -> "memory".
    gpu = make_gpu()
    gpu.measured_tflops = {"bf16": 80.0}
    p = roofline_point(make_cost(), result("bf16", 8, 0.005), gpu)
    assert p is not None
    assert p.bytes_moved == 2_164_736
    assert p.bound == "memory" and p.roof == "memory"
    assert p.measured_over_bound == pytest.approx(0.005 / 0.002164736)
    achieved = 16_826_368 / 5e-6 / 1e12  # 3.365 TFLOP/s
    assert p.mfu == pytest.approx(achieved / 100)
    assert p.measured_peak_tflops == 80.0 and p.mfu_measured == pytest.approx(achieved / 80)


def test_large_batch_is_compute_bound_and_counts_activations_beyond_l2() -> None:
    # Batch 4096 = 1024x: FLOPs 8,413,184 x 1024 = 8,615,100,416.
    # Bytes at bf16: weights 2,099,200 + io 32,768 x 1024 = 33,554,432 + the Linear's output:
    # 4,096 x 1024 elements x 2 B = 8,388,608 B > 1 MiB L2 -> written and read back: 16,777,216.
    # Total 52,430,848 B -> 0.05243 ms; compute 8,615,100,416 / 100e12 = 0.08615 ms -> compute roof.
    p = roofline_point(make_cost(), result("bf16", 4096, 0.1), make_gpu())
    assert p is not None
    assert p.bytes_moved == 52_430_848
    assert p.compute_ms == pytest.approx(0.08615100416)
    assert p.bound == "compute" and p.measured_over_bound == pytest.approx(0.1 / 0.08615100416)
    assert "1 conv/matmul outputs larger than the 1 MiB L2" in p.bytes_basis


def test_overhead_threshold_is_exclusive() -> None:
    # Exactly 10x the bound is still the roof's class; above it is overhead.
    lower = 0.002164736  # bf16 batch 8, see above
    at = roofline_point(make_cost(), result("bf16", 8, lower * OVERHEAD_RATIO), make_gpu())
    above = roofline_point(make_cost(), result("bf16", 8, lower * OVERHEAD_RATIO * 1.01), make_gpu())
    assert at is not None and above is not None
    assert at.bound == "memory" and above.bound == "overhead"


def test_no_point_for_cpu_failed_or_unknown_precision() -> None:
    cost, gpu = make_cost(), make_gpu()
    assert roofline_point(cost, result("fp32", 8, 1.0, backend="torch-cpu", device="cpu"), gpu) is None
    assert roofline_point(cost, result("fp32", 8, 1.0, backend="ort-cpu"), gpu) is None
    failed = BenchResult("torch-eager", "fp32", 8, "failed", reason="boom")
    assert roofline_point(cost, failed, gpu) is None
    assert roofline_point(cost, result("int8", 8, 1.0), gpu) is None  # no int8 peak on this GPU


def test_unknown_l2_counts_every_matmul_output() -> None:
    gpu = make_gpu()
    gpu.l2_cache_bytes = None
    moved, basis = model_traffic(make_cost(), 4, "fp32", None)
    # 4,198,400 + 32,768 + 2 x 16,384 (the Linear's output, written and read) = 4,263,936
    assert moved == 4_263_936 and "size unknown" in basis


def test_what_if_on_h100() -> None:
    # H100 SXM, bf16, batch 4: FLOPs 8,413,184 -> 8,413,184 / 989.43e12 s = 8.503e-6 ms;
    # bytes 2,099,200 + 32,768 (Linear output 8,192 B < 50 MiB L2) = 2,131,968 -> / 3350e9 = 6.364e-4 ms.
    w = what_if(make_cost(), spec_from_table("H100 SXM"), "bf16")
    assert w.batch_size == 4 and w.flops == FLOPS and w.bytes_moved == 2_131_968
    assert w.compute_ms == pytest.approx(FLOPS / 989.42976e12 * 1e3)
    assert w.memory_ms == pytest.approx(2_131_968 / 3350e9 * 1e3)
    assert w.bound == "memory" and w.lower_bound_ms == pytest.approx(w.memory_ms)
    assert w.max_throughput_ips == pytest.approx(4 / (w.memory_ms / 1e3))
    # batch 64 scales FLOPs by 16
    assert what_if(make_cost(), spec_from_table("H100 SXM"), "bf16", 64).flops == 16 * FLOPS
    with pytest.raises(ModelcostError, match="no fp8 peak"):
        what_if(make_cost(), spec_from_table("A100 SXM"), "fp8")


def test_layer_rooflines_static() -> None:
    # fc1 at fp32, batch 4: weights 4,198,400 + output 16,384 + input (the graph input) 16,384 = 4,231,168 B;
    # intensity 8,392,704 / 4,231,168 = 1.98 < ridge 10 -> memory.
    # act: output 16,384 + input (fc1's output) 16,384 = 32,768 B; 20,480 / 32,768 = 0.625 -> memory.
    rows = layer_rooflines(make_cost(), make_gpu(), "fp32")
    by = {r.name: r for r in rows}
    assert by["fc1"].bytes_moved == 4_231_168 and by["fc1"].bound == "memory"
    assert by["fc1"].intensity == pytest.approx(LINEAR_FLOPS / 4_231_168)
    assert by["fc1"].flops_share == pytest.approx(LINEAR_FLOPS / FLOPS)
    assert by["act"].bytes_moved == 32_768 and by["act"].intensity == pytest.approx(0.625)
    assert rows[0].name == "fc1"  # sorted by FLOPs without a profile
    assert by["fc1"].lower_bound_ms == pytest.approx(4_231_168 / 1e12 * 1e3)


def test_layer_rooflines_with_profile() -> None:
    # Time 3 + 1 + 1 = 5 us: fc1 60%, act 20%, top-level 20%. fc1 achieved 8,392,704 / 3e-6 s = 2.80 TFLOP/s.
    profile = LayerProfile(source="torch.profiler", time_kind="CUDA kernel time", runs=1, total_ms=0.005, layers=[
        LayerTime("fc1", "Linear", 0.003), LayerTime("act", "GELU", 0.001),
        LayerTime("(top-level forward)", "ops", 0.001)])
    rows = layer_rooflines(make_cost(), make_gpu(), "fp32", profile=profile)
    by = {r.name: r for r in rows}
    assert rows[0].name == "fc1"
    assert by["fc1"].time_share == pytest.approx(0.6)
    assert by["fc1"].achieved_tflops == pytest.approx(LINEAR_FLOPS / 3e-6 / 1e12)
    assert by["(top-level forward)"].flops == 0 and by["(top-level forward)"].time_share == pytest.approx(0.2)


def test_layer_rooflines_with_fused_onnx_nodes() -> None:
    profile = LayerProfile(source="onnxruntime", time_kind="CPU time", runs=1, total_ms=0.004,
                           layers=[LayerTime("fused_gemm_gelu", "FusedGemm", 0.004, covers=["fc1", "act"])])
    rows = layer_rooflines(make_cost(), make_gpu(), "fp32", profile=profile)
    assert len(rows) == 1 and rows[0].flops == FLOPS and rows[0].layers == 2 and rows[0].time_share == 1.0


def test_owner_by_prefix() -> None:
    names = {"layer1", "layer1.0", "fc"}
    assert _owner("layer1.0.conv1", names) == "layer1.0"
    assert _owner("layer1.1.conv1", names) == "layer1"
    assert _owner("fc", names) == "fc"
    assert _owner("/conv/Conv", {"/conv/Conv_fused"}) == "/conv/Conv_fused"
    assert _owner("head", names) is None


def test_onnx_profile_joins_a_pytorch_analysis_by_module_path() -> None:
    # ORT nodes from torch.onnx.export are named '/fc1/MatMul', '/fc1/Add', '/act/Gelu': they are summed per
    # module path (fc1: 2 + 1 = 3 us) and joined with the PyTorch layers 'fc1' and 'act'; a fused node with no
    # path takes the path of the first node it covers.
    profile = LayerProfile(source="onnxruntime", time_kind="CPU time", runs=1, total_ms=0.006, layers=[
        LayerTime("/fc1/MatMul", "MatMul", 0.002), LayerTime("/fc1/Add", "Add", 0.001),
        LayerTime("BiasGelu", "BiasGelu", 0.003, covers=["/act/Gelu"])])
    rows = {r.name: r for r in layer_rooflines(make_cost(), make_gpu(), "fp32", profile=profile)}
    assert set(rows) == {"fc1", "act"}
    assert rows["fc1"].time_ms == pytest.approx(0.003) and rows["fc1"].flops == LINEAR_FLOPS
    assert rows["fc1"].op == "Linear"  # mixed node ops: the static layer's op
    assert rows["act"].time_share == pytest.approx(0.5) and rows["act"].op == "BiasGelu"


def test_embedding_tables_count_only_the_rows_gathered() -> None:
    # Add an Embedding of 1,000 x 1024 = 1,024,000 params whose output is 4 x 1024 fp32 (16,384 B) in front of
    # the Linear. fp32, batch 4: weights = (2,073,600 - 1,024,000) x 4 = 4,198,400 (the Linear only)
    # + rows gathered 16,384 + io 32,768 + 2 x 16,384 (Linear output, L2 unknown) = 4,280,320.
    cost = make_cost()
    cost.layers.insert(0, LayerCost("emb", "Embedding", params=1_024_000, activation_bytes=16_384))
    cost.params.total += 1_024_000
    cost.storage.bytes += 4 * 1_024_000
    moved, basis = model_traffic(cost, 4, "fp32", None)
    assert moved == 4_280_320 and "1 embedding tables gather" in basis
    # A table tied to a projection of the same size is read whole by it: it stays in the weights.
    cost.layers.append(LayerCost("lm_head", "Linear", macs=1, flops=2, params=1_024_000, activation_bytes=4))
    moved_tied, _ = model_traffic(cost, 4, "fp32", None)
    assert moved_tied == 4 * 2_073_600 + 32_768 + 2 * 16_384 + 2 * 4
