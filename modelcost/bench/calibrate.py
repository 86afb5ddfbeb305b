"""``modelcost calibrate``: the micro-benchmarks that fill a GPU's calibration (core/calibration.py says what
each figure means) in about two minutes.

Every kernel figure is timed inside a CUDA graph of ``reps`` back-to-back calls (bench.timing's CUDA-event
clock around one replay), so it holds kernel time and the gap between kernels but no host time: the host
costs are measured on their own (``launch_us``, by family, in bench/calibrate_fusion.py).

* GEMM: one matmul per shape class (M, N, K each at ``CLASS_SIZES``) and precision (fp32 = TF32 off, tf32,
  fp16); a class whose one call would take longer than ``MAX_CALL_MS`` at the dense peak is left out (the
  predictor takes the nearest class).
* conv: ResNet-, MobileNet- and ConvNeXt-like stages (3x3, 1x1, depthwise, 7x7 depthwise) at batch 1 and 32,
  channels_last at fp16, each filed under its implicit-GEMM class.
* memory-bound: an in-place elementwise op (read + write) from 4 KiB to 1 GiB.
* attention: SDPA at 64 heads x batch, query = key length 128 ... 4096, head size 64 and 128.
* launch: one empty kernel's time in a graph (``kernel_gap_us``) and a one-kernel graph's replay.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from modelcost.bench.timing import CudaEventClock
from modelcost.core.calibration import (
    CLASS_SIZES,
    SIZE_CLASSES,
    AttentionPoint,
    Calibration,
    TimePoint,
    fingerprint,
    shape_class,
    wave_utilization,
)
from modelcost.core.errors import ModelcostError
from modelcost.core.types import GpuSpec

MAX_CALL_MS = 5.0
PRECISIONS = ("fp32", "tf32", "fp16")
MEMORY_SIZES = tuple(4096 * 4**i for i in range(13))  # 4 KiB ... 64 GiB, cut at MEMORY_MAX_BYTES
MEMORY_MAX_BYTES = 1 << 30
ATTENTION_SEQS = (128, 256, 512, 1024, 2048, 4096)
ATTENTION_DIMS = (64, 128)
Progress = Callable[[str], None]


def graph_time_us(torch: Any, fn: Callable[[], Any], reps: int = 0, target_ms: float = 2.0) -> float:
    """Microseconds per call of ``fn`` when ``reps`` calls replay back-to-back from one CUDA graph (median of
    5 replays). ``reps`` 0: as many as make one replay about ``target_ms`` (at least 1, at most 200)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    clock = CudaEventClock(torch)
    if reps <= 0:
        one_ms = min(clock.time_ms(fn) for _ in range(3))
        reps = max(1, min(200, int(target_ms / max(one_ms, 1e-3))))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    graph.replay()
    times = sorted(clock.time_ms(graph.replay) for _ in range(5))
    del graph
    return times[2] * 1e3 / reps


def _dtype(torch: Any, precision: str) -> Any:
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    return torch.float16 if precision == "fp16" else torch.float32


def gemm_table(torch: Any, gpu: GpuSpec, tile: int, progress: Progress) -> dict[str, dict[str, float]]:
    """precision -> shape class -> efficiency: 2MNK / (peak x wave utilization) / measured time."""
    table: dict[str, dict[str, float]] = {}
    for precision in PRECISIONS:
        dtype, peak = _dtype(torch, precision), gpu.peak_tflops[precision] * 1e12
        rows = table.setdefault(precision, {})
        progress(f"GEMM efficiency, {precision}")
        for cm in SIZE_CLASSES:
            for cn in SIZE_CLASSES:
                for ck in SIZE_CLASSES:
                    m, n, k = CLASS_SIZES[cm], CLASS_SIZES[cn], CLASS_SIZES[ck]
                    if 2 * m * n * k / peak * 1e3 > MAX_CALL_MS:
                        continue
                    a = torch.randn(m, k, device="cuda", dtype=dtype)
                    b = torch.randn(k, n, device="cuda", dtype=dtype)
                    t_s = graph_time_us(torch, lambda a=a, b=b: torch.mm(a, b)) / 1e6
                    util = wave_utilization(math.ceil(m / tile) * math.ceil(n / tile), int(gpu.sm_count or 1))
                    rows[shape_class(m, n, k)] = min(2 * m * n * k / (peak * util) / t_s, 1.0)
    return table


# (batch, in channels, out channels, spatial, kernel, groups = in channels when depthwise)
CONVS = [(b, c, co, s, kk, g) for b in (1, 32) for (c, co, s, kk, g) in (
    (64, 64, 56, 3, 1), (128, 128, 28, 3, 1), (256, 256, 14, 3, 1), (512, 512, 7, 3, 1),
    (64, 256, 56, 1, 1), (256, 64, 56, 1, 1), (1024, 256, 14, 1, 1), (512, 2048, 7, 1, 1),
    (3, 64, 112, 7, 1), (32, 32, 112, 3, 32), (144, 144, 56, 3, 144), (384, 384, 14, 7, 384))]


def conv_table(torch: Any, gpu: GpuSpec, tile: int, progress: Progress) -> dict[str, dict[str, float]]:
    """precision -> implicit-GEMM class -> efficiency (the mean over the convs of a class)."""
    table: dict[str, dict[str, float]] = {}
    for precision in PRECISIONS:
        dtype, peak = _dtype(torch, precision), gpu.peak_tflops[precision] * 1e12
        progress(f"conv efficiency, {precision}")
        found: dict[str, list[float]] = {}
        fmt = torch.channels_last if precision == "fp16" else torch.contiguous_format
        for b, c, co, s, kk, g in CONVS:
            conv = torch.nn.Conv2d(c, co, kk, padding=kk // 2, groups=g, bias=False).to("cuda", dtype)
            conv = conv.to(memory_format=fmt)
            x = torch.randn(b, c, s, s, device="cuda", dtype=dtype).to(memory_format=fmt)
            with torch.inference_mode():
                t_s = graph_time_us(torch, lambda conv=conv, x=x: conv(x)) / 1e6
            m, n, k = b * s * s, co, c // g * kk * kk
            util = wave_utilization(math.ceil(m / tile) * math.ceil(n / tile), int(gpu.sm_count or 1))
            found.setdefault(shape_class(m, n, k), []).append(min(2 * m * n * k / (peak * util) / t_s, 1.0))
        table[precision] = {key: sum(v) / len(v) for key, v in found.items()}
    return table


def memory_curve(torch: Any, progress: Progress) -> list[TimePoint]:
    """Time of an in-place elementwise kernel (x *= 1: reads and writes x) by bytes moved."""
    progress("memory-bound kernels by size")
    points = []
    for size in MEMORY_SIZES:
        if size > MEMORY_MAX_BYTES:
            break
        x = torch.empty(size // 2 // 2, device="cuda", dtype=torch.float16)  # size bytes moved = 2 x the tensor
        points.append(TimePoint(size, graph_time_us(torch, lambda x=x: x.mul_(1.0))))
        del x
    return points


def attention_points(torch: Any, gpu: GpuSpec, tile: int, progress: Progress) -> list[AttentionPoint]:
    """SDPA efficiency: 4 x B x H x S^2 x D FLOPs / (peak x wave utilization over B x H x S/tile) / time."""
    import torch.nn.functional as F

    out = []
    for precision in ("fp16", "fp32"):
        dtype, peak = _dtype(torch, precision), gpu.peak_tflops[precision] * 1e12
        progress(f"attention, {precision}")
        for d in ATTENTION_DIMS:
            for s in ATTENTION_SEQS:
                b, h = 4, 16
                q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
                t_s = graph_time_us(torch, lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v)) / 1e6
                util = wave_utilization(b * h * math.ceil(s / tile), int(gpu.sm_count or 1))
                out.append(AttentionPoint(precision, s, d, min(4 * b * h * s * s * d / (peak * util) / t_s, 1.0)))
    return out


def graph_costs(torch: Any, progress: Progress) -> tuple[float, float]:
    """(kernel_gap_us: one tiny kernel back-to-back in a graph, graph_replay_us: a one-kernel graph's replay
    less that kernel)."""
    progress("kernel gap and graph replay")
    x = torch.zeros(1, device="cuda")
    gap_us = graph_time_us(torch, lambda: x.add_(1.0), reps=200)
    one_us = graph_time_us(torch, lambda: x.add_(1.0), reps=1)
    return gap_us, max(one_us - gap_us, 0.0)


def calibrate(gpu: GpuSpec, progress: Progress | None = None, *, fusion: bool = True) -> Calibration:
    """Measure ``gpu`` (this machine's CUDA device 0). ``fusion`` False: leave out the backend families'
    kernel counts and launch costs (the slow part: torch.compile and ONNX export of small nets)."""
    from modelcost.core.lazy import require
    from modelcost.core.text import utc_timestamp

    torch = require("torch")
    if not torch.cuda.is_available():
        raise ModelcostError("calibrate measures a CUDA GPU, and torch sees none here")
    say = progress or (lambda what: None)
    t0 = time.perf_counter()
    cal = Calibration(gpu=fingerprint(gpu), created=utc_timestamp(), torch_version=str(torch.__version__))
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        with torch.inference_mode():
            cal.gemm_efficiency = gemm_table(torch, gpu, cal.tile_m, say)
            cal.memory_curve = memory_curve(torch, say)
            cal.attention = attention_points(torch, gpu, cal.attention_tile, say)
            cal.kernel_gap_us, cal.graph_replay_us = graph_costs(torch, say)
        cal.conv_efficiency = conv_table(torch, gpu, cal.tile_m, say)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    torch.cuda.empty_cache()
    if fusion:
        from modelcost.bench.calibrate_fusion import learn_fusion

        cal.fusion, cal.launch_us, notes = learn_fusion(torch, say)
        cal.notes += notes
    cal.elapsed_s = round(time.perf_counter() - t0, 1)
    return cal
