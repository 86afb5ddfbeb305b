"""A realistic finished GPU ``analyze`` run, built without a GPU: ResNet-50's static counts (the totals of
``modelcost analyze zoo:resnet50 --static``) and the benchmarks an H100 run gives it (the default sweep at batch 1
and the searched batch 128), screened, unavailable, failed and out-of-memory rows included, each with a reason as
long as the real ones. The console tests (test_console_answer.py) render it; nothing here measures."""

from __future__ import annotations

from modelcost.core.measurement import MeasurementInfo
from modelcost.core.types import (
    AccuracyStats,
    BenchResult,
    ComputeStats,
    CostReport,
    DeviceInfo,
    LatencyStats,
    LayerCost,
    MemoryStats,
    ModelInfo,
    ParamStats,
    RunReport,
    StorageStats,
    TensorSpec,
)

MACS = 4_089_184_256  # modelcost analyze zoo:resnet50 --static (batch 1)
PARAMS = 25_557_032

TORCH_TIMING = ("GPU time between CUDA events around the forward call on the current stream (inputs already on "
                "the GPU; no host<->device copies)")
ORT_TIMING = ("GPU time between CUDA events on ONNX Runtime's compute stream around run_with_iobinding (inputs and "
              "outputs bound on the GPU; no host<->device copies)")
TRT_TIMING = ("GPU time between CUDA events around execute_async_v3 on the engine's stream (inputs and outputs "
              "already on the GPU; no host<->device copies)")
TIMING = {"torch": TORCH_TIMING, "ort": ORT_TIMING, "tensorrt": TRT_TIMING}


def resnet50_cost() -> CostReport:
    """ResNet-50 at batch 1: the real totals, and 53 conv layers + the classifier that share its MACs."""
    layers = [LayerCost(f"layer{i // 16 + 1}.{i % 16}.conv", "Conv2d", groups=1, macs=75_000_000 + 1_000_000 * (i % 7),
                        flops=2 * (75_000_000 + 1_000_000 * (i % 7)), params=200_000 + 10_000 * i,
                        output_shapes=[(1, 256, 56 // (1 + i // 16), 56 // (1 + i // 16))], macs_dtype="float32",
                        weight_bytes=4 * (200_000 + 10_000 * i), activation_bytes=802_816) for i in range(53)]
    layers.append(LayerCost("fc", "Linear", macs=2_048_000, flops=4_096_000, params=2_049_000,
                            output_shapes=[(1, 1000)], macs_dtype="float32", weight_bytes=8_196_000,
                            activation_bytes=4_000))
    return CostReport(
        model=ModelInfo("resnet50", "zoo:resnet50", "pytorch"),
        inputs=[TensorSpec("x", (1, 3, 224, 224), "float32")], outputs=[TensorSpec("y", (1, 1000), "float32")],
        params=ParamStats(total=PARAMS, trainable=PARAMS, by_dtype={"float32": PARAMS}, buffers=53_120),
        storage=StorageStats(bytes=4 * PARAMS, by_dtype={"float32": 4 * PARAMS}, fp16_bytes=2 * PARAMS,
                             int8_bytes=PARAMS, int4_bytes=PARAMS // 2),
        compute=ComputeStats(macs=MACS, flops=8_211_935_232, macs_by_dtype={"float32": MACS},
                             flops_by_op={"Conv2d": 8_178_368_512, "Linear": 4_096_000, "BatchNorm2d": 29_470_720},
                             macs_by_op={"Conv2d": 4_087_136_256, "Linear": 2_048_000}),
        memory=MemoryStats(weight_bytes=4 * PARAMS, input_bytes=602_112, output_bytes=4_000,
                           activation_bytes=110_247_936, peak_activation_bytes=12_845_056,
                           arithmetic_intensity=38.3),
        layers=layers, batch_size=1)


def _lat(p50: float, n: int, cv: float = 0.01) -> LatencyStats:
    return LatencyStats(count=n, p50=p50, p90=p50 * (1 + 2 * cv), p95=p50 * (1 + 3 * cv), p99=p50 * (1 + 5 * cv),
                        mean=p50 * (1 + cv / 2), std=p50 * cv, min=p50 * (1 - cv), max=p50 * (1 + 8 * cv))


def _ok(backend: str, precision: str, batch: int, p50: float, family: str, *, n: int = 0, top1: float | None = None,
        memory_gib: float = 0.4) -> BenchResult:
    lat = _lat(p50, n or max(50, int(20_000 / p50)))  # as many runs as about 20 s of timing
    acc = None if precision == "fp32" else AccuracyStats(max_abs_err=2.3e-3 * batch ** 0.1, max_rel_err=0.011,
                                                         cosine=0.9999871, top1_agreement=top1 or 0.998)
    return BenchResult(
        backend, precision, batch, "ok", latency_ms=lat, throughput_ips=batch / (p50 / 1000),
        e2e_latency_ms=_lat(p50 * 1.4 + 0.05, lat.count), first_inference_ms=p50 * 37, build_s=1.7 + batch / 100,
        gpu_memory_peak_bytes=int(memory_gib * 2**30 * (1 + batch / 40)), power_w_mean=310.0 + batch,
        energy_j_per_inference=(310.0 + batch) * p50 / 1000 / batch, gpu_util_mean=0.93, sm_clock_mhz_mean=1980.0,
        accuracy=acc, device="cuda", timing=TIMING[family],
        extra=MeasurementInfo(measurement="full (after screening)", screening_p50_ms=p50 * 1.02))


def _screened(backend: str, precision: str, batch: int, p50: float, by: BenchResult) -> BenchResult:
    assert by.latency_ms is not None and by.throughput_ips is not None
    ips = batch / (p50 / 1000)
    reason = (f"screened out: {by.backend} {by.precision} b{by.batch_size} is faster by more than 10% on both "
              f"latency ({by.latency_ms.p50:.4f} vs {p50:.4f} ms p50) and throughput ({by.throughput_ips:,.1f} vs "
              f"{ips:,.1f} ips); figures from the short screening measurement")
    return BenchResult(backend, precision, batch, "screened", reason=reason, latency_ms=_lat(p50, 60, 0.02),
                       throughput_ips=ips, device="cuda", timing=TORCH_TIMING,
                       extra=MeasurementInfo(measurement="screening"))


def resnet50_h100_run() -> RunReport:
    """The finished run; rooflines and layer tables are added by the pipeline's own steps (``with_gpu``)."""
    best_b1 = _ok("torch-compile-cudagraph", "fp16", 1, 0.6021, "torch")
    trt_b128 = _ok("tensorrt", "fp16", 128, 11.93, "tensorrt", memory_gib=0.9)
    eager_b1 = _ok("torch-eager", "fp32", 1, 3.412, "torch", n=5_861)
    rows = [
        eager_b1, _ok("torch-eager", "fp32", 128, 71.45, "torch", memory_gib=2.6),
        _screened("torch-autocast", "fp16", 1, 4.873, best_b1), _ok("torch-autocast", "fp16", 128, 29.81, "torch"),
        _ok("torch-cudagraph", "fp16", 1, 0.9125, "torch"),
        _screened("torch-cudagraph", "fp16", 128, 19.77, trt_b128),
        best_b1, _ok("torch-compile-cudagraph", "fp16", 128, 13.05, "torch"),
        _screened("ort-cuda", "fp32", 1, 2.981, best_b1), _screened("ort-cuda", "fp32", 128, 58.02, trt_b128),
        _ok("ort-cuda", "fp16", 1, 1.472, "ort"),
        BenchResult("ort-cuda", "fp16", 128, "oom", device="cuda",
                    reason="out of memory at batch 128; larger batches of this backend were skipped"),
        _ok("tensorrt", "fp16", 1, 0.6514, "tensorrt"), trt_b128,
        BenchResult("tensorrt", "int8", 1, "failed", device="cuda",
                    reason="engine build failed: [TRT] IBuilder::buildSerializedNetwork: Error Code 4: Internal "
                           "Error (Calibration failure occurred with no scaling factors detected. This could be due "
                           "to no int8 calibrator or insufficient custom scales for network layers.)"),
    ]
    for precision in ("fp32", "fp16"):  # an unavailable backend has one row per precision, at no batch size
        rows.append(BenchResult("ort-tensorrt", precision, 0, "unavailable", device="cuda",
                                reason="onnxruntime has no TensorRT execution provider (install onnxruntime-gpu: "
                                       "'modelcost[gpu]')"))
    for backend in ("torch-cpu", "ort-cpu"):
        rows.append(BenchResult(backend, "fp32", 0, "unavailable", device="cpu",
                                reason="a CPU backend: the default sweep on a GPU machine times the GPU backends "
                                       "(--backends torch-cpu,ort-cpu or --device cpu times them)"))
    device = DeviceInfo("cuda", "NVIDIA H100 80GB HBM3", driver="550.54.15", cuda="12.4", compute_capability="9.0",
                        memory_bytes=85_520_809_984, sm_count=132)
    notes = ["cache: exports and engines in /root/.cache/modelcost (412.3 MiB in 9 entries; 'modelcost cache' "
             "lists them, 'modelcost cache --clear' empties it)",
             "batch search: throughput saturates at batch 128 on tensorrt fp16 (within 5% of batch 256)"]
    return RunReport(cost=resnet50_cost(), benchmarks=rows, device=device, notes=notes,
                     created="2026-11-26T10:00:00Z", command="modelcost analyze zoo:resnet50")


def with_gpu(run: RunReport) -> RunReport:
    """What the pipeline adds after the benchmarks: the H100's spec, each GPU result's roofline point and the
    per-layer tables (its own functions, so the fixture cannot drift from them)."""
    from modelcost.runs import gpu as pipeline
    from modelcost.hardware.specs import spec_from_table

    pipeline.attach_gpu(run, gpu=spec_from_table("H100 SXM"))
    run.layer_tables = pipeline.layer_tables(run)
    return run
