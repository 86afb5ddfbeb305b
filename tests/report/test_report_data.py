"""A complete synthetic run (static analysis, benchmarks, roofline, GPU) that the report tests render.

The figures are made up but consistent: throughput = batch / p50 latency.
"""

from __future__ import annotations

from modelcost.core.decisions import Comparison, ModelSide, SpeedupEstimate
from modelcost.core.types import (
    AccuracyStats, BenchResult, ComputeStats, CostReport, DeviceInfo, GpuSpec, LatencyStats, LayerCost,
    MemoryStats, ModelInfo, ParamStats, RooflinePoint, RunReport, StorageStats, TensorSpec,
)


def lat(p50: float) -> LatencyStats:
    return LatencyStats(count=200, p50=p50, p90=p50 * 1.05, p95=p50 * 1.08, p99=p50 * 1.2, mean=p50 * 1.02,
                        std=p50 * 0.03, min=p50 * 0.97, max=p50 * 1.5)


def cost() -> CostReport:
    layers = [
        LayerCost("conv1", "Conv", groups=1, macs=1_000_000, flops=2_000_000, params=864,
                  output_shapes=[(1, 32, 16, 16)], macs_dtype="float32"),
        LayerCost("relu1", "Relu", flops=8192, output_shapes=[(1, 32, 16, 16)]),
        LayerCost("fc", "Gemm", macs=320, flops=650, params=330, output_shapes=[(1, 10)], macs_dtype="float32"),
    ]
    return CostReport(
        model=ModelInfo("tiny<net>|x", "tiny.onnx", "onnx", file_size_bytes=5000, opset=17),
        inputs=[TensorSpec("x", (1, 3, 16, 16), "float32")], outputs=[TensorSpec("y", (1, 10), "float32")],
        params=ParamStats(total=1194, by_dtype={"float32": 1194}),
        storage=StorageStats(bytes=4776, by_dtype={"float32": 4776}, file_size_bytes=5000),
        compute=ComputeStats(macs=1_000_320, flops=2_008_842, macs_by_dtype={"float32": 1_000_320},
                             flops_by_op={"Conv": 2_000_000, "Relu": 8192, "Gemm": 650},
                             macs_by_op={"Conv": 1_000_000, "Gemm": 320}, uncounted_ops={"MysteryOp": 2}),
        memory=MemoryStats(weight_bytes=4776, input_bytes=3072, output_bytes=40, activation_bytes=65576,
                           peak_activation_bytes=65536, arithmetic_intensity=27.5),
        layers=layers, notes=["If node 'cond': then-branch assumed"], batch_size=1,
    )


def bench(backend: str, precision: str, batch: int, p50: float, mem: int | None = 200 << 20,
          roofline: bool = True, acc: bool = False) -> BenchResult:
    rp = RooflinePoint(achieved_tflops=0.5, peak_tflops=60.0, mfu=0.5 / 60, achieved_gbps=100.0, peak_gbps=3350.0,
                       intensity=27.5, ridge_point=17.9, bound="overhead", lower_bound_ms=0.01,
                       measured_over_bound=p50 / 0.01, bytes_moved=70000, bytes_basis="weights + inputs + outputs")
    return BenchResult(backend=backend, precision=precision, batch_size=batch, status="ok", latency_ms=lat(p50),
                       throughput_ips=batch / p50 * 1000, e2e_latency_ms=lat(p50 * 1.5), build_s=1.25,
                       first_inference_ms=30.0, gpu_memory_peak_bytes=mem, power_w_mean=210.0,
                       energy_j_per_inference=0.0021, roofline=rp if roofline else None, device="NVIDIA H100",
                       timing="CUDA events around one forward; inputs already on the GPU",
                       accuracy=AccuracyStats(1e-3, 2e-3, 0.999998, 1.0, "ort-cuda fp32") if acc else None)


def run(complete: bool = True) -> RunReport:
    benches = [bench("ort-cuda", "fp32", 1, 1.0), bench("ort-cuda", "fp32", 8, 2.0),
               bench("ort-cuda", "fp16", 1, 0.8, acc=True), bench("ort-cuda", "fp16", 8, 1.2, acc=True),
               BenchResult("tensorrt", "fp16", 1, "unavailable", reason="TensorRT not installed")]
    gpu = GpuSpec(name="NVIDIA H100 80GB HBM3", architecture="Hopper", compute_capability="9.0", sm_count=132,
                  tensor_clock_mhz=1830, bandwidth_gbps=3352.3, peak_tflops={"fp32": 66.9, "fp16": 989.4},
                  sparse_peak_tflops={"fp16": 1978.9}, source="nvml")
    return RunReport(cost=cost(), benchmarks=benches, gpu=gpu, device=DeviceInfo("cuda", "NVIDIA H100 80GB HBM3"),
                     complete=complete, notes=[] if complete else ["interrupted by the user (Ctrl-C)"],
                     created="2026-11-22T10:11:12+00:00", command="bench tiny.onnx")


def comparison() -> Comparison:
    side = ModelSide("tiny", "tiny.onnx", "fp32", 5000, 4776, {"float32": 4776}, 1194, 1_000_320, 2_008_842,
                     {"float32": 1_000_320}, {"Conv": 1, "Gemm": 1})
    cand = ModelSide("tiny.int8", "tiny.int8.onnx", "int8", 2000, 1400, {"int8": 1194, "float32": 206}, 1194,
                     1_000_320, 2_008_842, {"int8": 1_000_320}, {"Conv": 1, "Gemm": 1, "QuantizeLinear": 2})
    sp = SpeedupEstimate("ort-cuda", 1, "fp32", "int8", 10, 20, 1.0, 1.02, 0.98, -2.0, -3.0, -1.0, "t interval",
                         "slower by 2.0% (95% CI 1.0–3.1%)", True,
                         ["INT8 kernels not used by this backend: QDQ ran as DequantizeLinear + float Conv"])
    return Comparison(base=side, candidate=cand, speed=[sp],
                      accuracy=[("ort-cuda", AccuracyStats(0.02, 0.05, 0.9995, 1.0, "base"))],
                      data="generated: standard normal, 8 samples")


def test_sample_run_is_consistent():
    r = run()
    assert all(b.throughput_ips == b.batch_size / b.latency_ms.p50 * 1000 for b in r.benchmarks if b.status == "ok")
