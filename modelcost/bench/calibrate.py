"""``modelcost calibrate``: the micro-benchmarks that fill a GPU's calibration (core/calibration.py says what
each figure means) in about two minutes.

Every kernel figure is timed inside a CUDA graph of ``reps`` back-to-back calls (bench.timing's CUDA-event
clock around one replay), so it holds kernel time and the gap between kernels but no host time: the host
costs are measured on their own (``launch_us``, by family, in bench/calibrate_fusion.py; ``host_us``, per aten
call, in bench/calibrate_host.py; ``half_call_us``, the extra of a conv or BatchNorm call in fp16, in its processes:
bench/calibrate_half.py).

* GEMM: one matmul per shape class (M, N, K each at ``CLASS_SIZES``) and precision (fp32 = TF32 off, tf32,
  fp16, bf16: hf-static-compile runs bf16 LLMs); TF32 is set by hardware/tf32.py, the switch the measured
  backends use, and the mode torch reports is recorded per table (``matmul_modes``); a class whose one call
  would take longer than ``MAX_CALL_MS`` at the dense peak is left out (the predictor takes the nearest class).
  Efficiencies are kept uncapped (core/calibration.py says why).
* the GEMM grid: ``torch.mm`` over M 64 ... 32,768 and N, K 128 ... 8,192, powers of two, per precision
  (bench/calibrate_gemm.py; ``gemm_grid``), which the predictor interpolates inside.
* conv: ResNet-, MobileNet- and ConvNeXt-like stages (3x3, 1x1, depthwise, 7x7 depthwise) and 3x3 convs of
  4-64 channels per group (``GROUP_CONVS``) at batch 1 and 32, and at batch 32 alone the large-M classes a
  batch-64 CNN spends its time in (``LARGE_M_CONVS``), and 3-D, non-square 2-D and long grouped 1-D convs
  (``WINDOW_CONVS``), channels-last at fp16, each filed under its implicit-GEMM class.
* unaligned GEMMs: four GEMMs whose N or K is odd, against the same GEMMs padded to a multiple of 8, per
  precision (``unaligned_factor``: the median ratio).
* unaligned convs: four convs whose channels are even but not a multiple of 8 (``UNALIGNED_CONVS``), against the same
  convs with both channel counts padded to a multiple of 8, per precision, cuDNN's autotuner on, channels-last at
  fp16 / bf16 (``unaligned_conv_factor``: the median ratio).
* small-M GEMMs: F.linear of M = ``GEMV_ROWS`` rows on ``GEMV_SHAPES`` weights (BERT-, Llama-3.2-1B-like and
  a 128k-vocabulary head), fp32 / fp16 / bf16: 9 x 3 x 3 = 81 points, each call on the next of a ring of
  weight copies twice the L2 in all (``ring_size``), so the weight comes from DRAM as a model's does.
* memory-bound: an in-place elementwise op (read + write) from 4 KiB to 1 GiB (``memory_curve``: one tensor,
  so up to the L2's size it stays there, as a layer's fresh activations may); the same on a ring of tensors
  twice the L2 (``cold_curve``, 256 KiB to 64 MiB: data from DRAM, as a KV cache's); a copy from a
  transposed source (``strided_curve``) and a matrix times a broadcast row (``unvectorized_curve``: TensorIterator's
  non-vectorized kernel), fp16 and fp32, over the same sizes.
* attention: SDPA (fp16, bf16, fp32) at query = key length 32 ... 4096, head size 32, 64 and 128; 64 heads x
  batch from 128 tokens up, and below 128 as many more as keep the FLOPs those of 128 (``attention_shape``):
  a short sequence is one CTA per (batch, head), so windowed and per-frame attention (Swin's 49-token windows)
  run thousands of them, whose fixed cost per CTA the long-sequence points cannot show.
* launch: one empty kernel's time in a graph (``kernel_gap_us``) and a one-kernel graph's replay.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from modelcost.bench.calibrate_gemm import gemm_grid
from modelcost.bench.model import to_channels_last
from modelcost.bench.timing import CudaEventClock
from modelcost.core.calibration import (
    CLASS_SIZES,
    GEMM_ALIGN,
    GEMV_ROWS,
    MATMUL_MODES,
    SIZE_CLASSES,
    AttentionPoint,
    Calibration,
    GemmPoint,
    TimePoint,
    conv_gemm,
    fingerprint,
    shape_class,
    wave_utilization,
    window_sort,
)
from modelcost.core.errors import ModelcostError
from modelcost.core.types import GpuSpec
from modelcost.hardware.tf32 import cudnn_autotune, matmul_mode, tf32_mode

MAX_CALL_MS = 5.0
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
CONV_PRECISIONS = ("fp32", "tf32", "fp16")  # no bf16 conv table: the predictor takes fp16's (the same tensor rate)
# (n, k) of the weight of the small-M GEMMs: BERT-base's linears, Llama-3.2-1B's (q / kv / o / MLP), a 4k x 14k
# MLP and a 128k-vocabulary head (2048 x 131072: 537 MB in bf16, 1 GB in fp32)
GEMV_SHAPES = ((768, 768), (3072, 768), (768, 3072), (512, 2048), (2048, 2048), (8192, 2048), (2048, 8192),
               (14336, 4096), (131072, 2048))
MEMORY_MAX_BYTES = 1 << 30
MEMORY_SIZES = tuple(4096 * 4**i for i in range(13) if 4096 * 4**i <= MEMORY_MAX_BYTES)  # 4 KiB ... 1 GiB
COLD_SIZES = tuple(s for s in MEMORY_SIZES if 256 << 10 <= s <= 64 << 20)  # 256 KiB ... 64 MiB moved
ATTENTION_SEQS = (32, 64, 128, 256, 512, 1024, 2048, 4096)
ATTENTION_DIMS = (32, 64, 128)
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
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision, torch.float32)


def _efficiency(ideal_s: float, measured_s: float) -> float:
    """ideal / measured, uncapped: above 1 where the library beat the wave model (core/calibration.py)."""
    return ideal_s / max(measured_s, 1e-12)


def gemm_table(torch: Any, gpu: GpuSpec, tile: int, progress: Progress,
               modes: dict[str, str]) -> dict[str, dict[str, float]]:
    """precision -> shape class -> efficiency: 2MNK / (peak x wave utilization) / measured time; ``modes`` gets
    the fp32 matmul mode torch reported while each fp32 / tf32 table was timed."""
    table: dict[str, dict[str, float]] = {}
    for precision in PRECISIONS:
        if not gpu.peak_tflops.get(precision):
            continue
        dtype, peak = _dtype(torch, precision), gpu.peak_tflops[precision] * 1e12
        rows = table.setdefault(precision, {})
        progress(f"GEMM efficiency, {precision}")
        with tf32_mode(precision == "tf32"):
            if precision in MATMUL_MODES:
                modes[precision] = matmul_mode(torch)
            _gemm_rows(torch, gpu, tile, dtype, peak, rows)
    return table


def _gemm_rows(torch: Any, gpu: GpuSpec, tile: int, dtype: Any, peak: float, rows: dict[str, float]) -> None:
    """One matmul per shape class (``CLASS_SIZES``) at ``dtype`` into ``rows``."""
    sizes = [(CLASS_SIZES[cm], CLASS_SIZES[cn], CLASS_SIZES[ck])
             for cm in SIZE_CLASSES for cn in SIZE_CLASSES for ck in SIZE_CLASSES]
    for m, n, k in sizes:
        if 2 * m * n * k / peak * 1e3 > MAX_CALL_MS:
            continue
        t_s = mm_us(torch, m, n, k, dtype) / 1e6
        util = wave_utilization(math.ceil(m / tile) * math.ceil(n / tile), int(gpu.sm_count or 1))
        rows[shape_class(m, n, k)] = _efficiency(2 * m * n * k / (peak * util), t_s)


def mm_us(torch: Any, m: int, n: int, k: int, dtype: Any) -> float:
    """Microseconds of one (m x k) @ (k x n) ``torch.mm`` at ``dtype`` (``graph_time_us``)."""
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    return graph_time_us(torch, lambda: torch.mm(a, b))


def l2_bytes(torch: Any, gpu: GpuSpec) -> int:
    """This GPU's L2 size: torch's figure, else the table's, else 50 MiB (an H100's)."""
    props = torch.cuda.get_device_properties(0)
    return int(getattr(props, "L2_cache_size", 0) or gpu.l2_cache_bytes or 50 << 20)


def ring_size(footprint_bytes: float, l2: int) -> int:
    """Copies of a tensor of ``footprint_bytes`` that a ring must cycle through for each call to find its data
    in DRAM: twice the L2 in all (LRU-like replacement keeps none of the ring's next tensor), at most 512."""
    return max(1, min(512, math.ceil(2 * l2 / max(footprint_bytes, 1.0))))


def ring_time_us(torch: Any, call: Callable[[Any], Any], ring: list[Any]) -> float:
    """Microseconds per ``call`` when each call takes the next tensor of ``ring`` (``graph_time_us`` of one pass)."""
    return graph_time_us(torch, lambda: [call(t) for t in ring]) / len(ring)


def gemv_points(torch: Any, progress: Progress, l2: int) -> list[GemmPoint]:
    """F.linear of ``GEMV_ROWS`` rows on each ``GEMV_SHAPES`` weight, per precision: the small-M class. Each call
    reads the next of a ring of weight copies (``ring_size``): a model's weights are read from DRAM, each once a
    forward, and one weight replayed from a CUDA graph stays in the L2 up to its size (Llama-3.2-1B's 33.5 MB MLP
    weights then read at 4.3 TB/s, above the H100's 3.35 TB/s DRAM)."""
    import torch.nn.functional as F

    out = []
    for precision in ("fp32", "fp16", "bf16"):
        dtype = _dtype(torch, precision)
        progress(f"small-M GEMMs, {precision}")
        with tf32_mode(False):  # fp32 as the backends run it (TF32 off); no effect on fp16 / bf16
            for n, k in GEMV_SHAPES:
                w = torch.randn(n, k, device="cuda", dtype=dtype)
                ws = [w] + [w.clone() for _ in range(ring_size(w.numel() * w.element_size(), l2) - 1)]
                for m in GEMV_ROWS:
                    x = torch.randn(m, k, device="cuda", dtype=dtype)
                    t_us = ring_time_us(torch, lambda w, x=x: F.linear(x, w), ws)
                    out.append(GemmPoint(precision, m, n, k, t_us))
                del w, ws
    return out


# (batch, in channels, out channels, spatial, kernel, groups = in channels when depthwise)
# large M (batch x pixels > 8,192) at the N and K where batch-64 CNNs spend most of their conv time: without them a
# batch-64 ResNet-like stage was priced from the nearest measured class (benchmarks/results/device_2026-11-26j: 82%
# of Wide-ResNet-50-2's batch-64 conv MACs, 98% of RegNetX-3.2GF's outside the table); the last one fills the
# 3 x 3 class of AlexNet's batch-64 192 -> 384 conv (M 10,816, N 384, K 1,728), which 1 x 1 convs measured before
LARGE_M_CONVS = [(32, c, co, s, kk, g) for (c, co, s, kk, g) in (
    (64, 64, 56, 1, 1), (256, 256, 56, 1, 1), (256, 1024, 28, 1, 1), (1024, 1024, 28, 1, 1), (1024, 256, 28, 1, 1),
    (256, 256, 28, 3, 1), (256, 128, 56, 3, 1), (1024, 1024, 14, 1, 1), (1024, 1024, 14, 3, 1),
    (768, 768, 32, 7, 768), (256, 256, 56, 3, 16), (128, 256, 28, 3, 1))]
CONVS = [(b, c, co, s, kk, g) for b in (1, 32) for (c, co, s, kk, g) in (
    (64, 64, 56, 3, 1), (128, 128, 28, 3, 1), (256, 256, 14, 3, 1), (512, 512, 7, 3, 1),
    (64, 256, 56, 1, 1), (256, 64, 56, 1, 1), (1024, 256, 14, 1, 1), (512, 2048, 7, 1, 1),
    (3, 64, 112, 7, 1), (32, 32, 112, 3, 32), (144, 144, 56, 3, 144), (384, 384, 14, 7, 384),
    # several channels per group (``GROUPS`` classes): 4, 8, 16, 32 and 64 per group
    (128, 128, 56, 3, 32), (256, 256, 28, 3, 32), (512, 512, 14, 3, 32), (1024, 1024, 7, 3, 32),
    (256, 256, 28, 3, 4))] + LARGE_M_CONVS
# (batch, input channels, output channels, frames / pixels, window, groups) of the convs whose window calibrate's
# ``CONVS`` lack, each filed in its sort's classes (core.calibration.window_sort): 3-D ones as video nets run them
# (R3D-18's dense 3 x 3 x 3 at two stages, X3D's pointwise 1 x 1 x 1 and depthwise 3 x 3 x 3) and dense 2-D ones of a
# non-square window (TextNet's 1 x 3 and 3 x 1, Inception-v3's 1 x 7), at the large M a batch of them spends its
# time in; and wav2vec 2.0's positional conv (768 -> 768, 128 taps, 16 groups: a ``LONG_GROUPED`` one) over a second
# of audio's 49 frames at batch 1, 32 and 64 and over ten seconds' 499 at batch 1: M of 49 to 3,136, four classes
WINDOW_CONVS = [
    (4, 64, 64, (8, 56, 56), (3, 3, 3), 1), (4, 256, 256, (4, 14, 14), (3, 3, 3), 1),
    (4, 64, 256, (8, 28, 28), (1, 1, 1), 1), (4, 216, 216, (16, 14, 14), (3, 3, 3), 216),
    (32, 64, 64, (56, 56), (1, 3), 1), (32, 256, 256, (14, 14), (3, 1), 1), (32, 192, 192, (17, 17), (1, 7), 1),
    *((b, 768, 768, (frames,), (128,), 16) for b, frames in ((1, 49), (1, 499), (32, 49), (64, 49)))]
# (M, N, K) of the unaligned GEMMs: N or K odd; each is timed against itself padded to a multiple of 8
UNALIGNED_GEMMS = ((16384, 251, 512), (16384, 512, 251), (8192, 1001, 1024), (8192, 1024, 1001))
# (batch, in channels, out channels, pixels, window) of the unaligned convs: channels even but not a multiple of 8
# (nor of TF32's 4), as wide as the stages of nets whose widths come from growth rates or multipliers: HarDNet-68 (88%
# of its conv MACs in such convs), HRNet-W18-small (30%) and MixNet-L (28%) ran fp16 at batch 64 1.5-2.3x their
# prediction on an H100 where their fp32 cases read within ~15%. Dense 3 x 3 and 1 x 1 convs at batch 32, at the
# pixels such widths run at: each is timed against itself padded to a multiple of 8 (78 -> 80, 142 -> 144, 46 -> 48)
UNALIGNED_CONVS = ((32, 78, 78, 28, 3), (32, 142, 142, 14, 3), (32, 78, 142, 28, 1), (32, 46, 46, 56, 3))


def conv_table(torch: Any, gpu: GpuSpec, tile: int, progress: Progress) -> dict[str, dict[str, float]]:
    """precision -> implicit-GEMM class -> efficiency (the mean over the convs of a class). Timed with cuDNN's
    autotuner on, as the torch backends run convs (bench/backends/torch_backends.py) and ONNX Runtime's CUDA EP
    searches its algorithms: by cuDNN's heuristics alone the fp32 3 x 3 class m:xxl n:m k:xl read 0.45 of peak,
    autotuned 1.10 (Winograd; H100, benchmarks/results/device_2026-11-26k)."""
    table: dict[str, dict[str, float]] = {}
    for precision in CONV_PRECISIONS:
        dtype, peak = _dtype(torch, precision), gpu.peak_tflops[precision] * 1e12
        progress(f"conv efficiency, {precision}")
        with tf32_mode(precision == "tf32"), cudnn_autotune():
            found = _conv_rows(torch, gpu, tile, dtype, peak, channels_last=precision == "fp16")
        table[precision] = {key: sum(v) / len(v) for key, v in found.items()}
    return table


def conv_shapes() -> list[tuple[int, int, int, tuple[int, ...], tuple[int, ...], int]]:
    """``CONVS`` (square 2-D windows) and ``WINDOW_CONVS``, each as (batch, input channels, output channels, frames /
    pixels, window, groups)."""
    return [(b, c, co, (s, s), (kk, kk), g) for b, c, co, s, kk, g in CONVS] + WINDOW_CONVS


def _conv_rows(torch: Any, gpu: GpuSpec, tile: int, dtype: Any, peak: float,
               channels_last: bool) -> dict[str, list[float]]:
    """Each of ``conv_shapes`` at ``dtype``, channels-last or not (a 3-D conv's is ``channels_last_3d``), padded to
    keep its size: efficiencies by implicit-GEMM class."""
    found: dict[str, list[float]] = {}
    for b, c, co, size, window, g in conv_shapes():
        t_s = conv_us(torch, (b, c, co, size, window, g), dtype, channels_last) / 1e6
        m, k = b * math.prod(size), c // g * math.prod(window)
        key, n, gemms = conv_gemm(m, co, k, g, group_classes=True, three_by_three=g == 1 and window == (3, 3),
                                  window=window_sort(window, g, co))
        util = wave_utilization(gemms * math.ceil(m / tile) * math.ceil(n / tile), int(gpu.sm_count or 1))
        found.setdefault(key, []).append(_efficiency(2 * m * co * k / (peak * util), t_s))
    return found


def memory_curve(torch: Any, progress: Progress) -> list[TimePoint]:
    """Time of an in-place elementwise kernel (x *= 1: reads and writes x) by bytes moved."""
    progress("memory-bound kernels by size")
    points = []
    for size in MEMORY_SIZES:
        x = torch.empty(size // 2 // 2, device="cuda", dtype=torch.float16)  # size bytes moved = 2 x the tensor
        points.append(TimePoint(size, graph_time_us(torch, lambda x=x: x.mul_(1.0))))
        del x
    return points


def cold_curve(torch: Any, progress: Progress, l2: int) -> list[TimePoint]:
    """``memory_curve`` with each call on the next of a ring of tensors (``ring_size``), at the sizes an L2 could
    hold (``COLD_SIZES``): the time of a kernel whose data comes from DRAM, as a KV cache's does in a decode step
    (``memory_curve``'s one tensor, replayed, stays in the L2; from twice the L2 up the two curves agree)."""
    progress("memory-bound kernels by size, data in DRAM")
    points = []
    for size in COLD_SIZES:
        xs = [torch.empty(size // 4, device="cuda", dtype=torch.float16) for _ in range(ring_size(size / 2, l2))]
        points.append(TimePoint(size, ring_time_us(torch, lambda x: x.mul_(1.0), xs)))
        del xs
    return points


def _curves_by_size(torch: Any, timed: Callable[[Any, int], tuple[int, Callable[[], Any]]]) -> dict[str,
                                                                                           list[TimePoint]]:
    """Per element size ("2": fp16, "4": fp32), a point per ``MEMORY_SIZES`` size: ``timed(dtype, n)`` makes the
    tensors of one kernel over ``n`` elements (half the size's bytes) and gives (the bytes it moves, the call)."""
    curves: dict[str, list[TimePoint]] = {}
    for dtype in (torch.float16, torch.float32):
        elem = torch.finfo(dtype).bits // 8
        points = curves.setdefault(str(elem), [])
        for size in MEMORY_SIZES:
            moved, call = timed(dtype, size // 2 // elem)
            points.append(TimePoint(moved, graph_time_us(torch, call)))
            del call  # its tensors, before the next size's
    return curves


def strided_curve(torch: Any, progress: Progress) -> dict[str, list[TimePoint]]:
    """Time of a copy from a transposed source (``dst.copy_(src.mT)``: TensorIterator's non-vectorized kernel,
    reads across the fastest dimension) by bytes moved, per element size (2: fp16, 4: fp32)."""
    progress("transposed copies by size")

    def copy(dtype: Any, n: int) -> tuple[int, Callable[[], Any]]:
        rows = 2 ** (int(math.log2(n)) // 2)
        src = torch.empty(n // rows, rows, device="cuda", dtype=dtype)
        dst = torch.empty(rows, n // rows, device="cuda", dtype=dtype)
        return 2 * dst.numel() * dst.element_size(), lambda: dst.copy_(src.mT)

    return _curves_by_size(torch, copy)


def unvectorized_curve(torch: Any, progress: Progress) -> dict[str, list[TimePoint]]:
    """Time of a matrix times a broadcast row (``torch.mul(x, w, out=o)``, w of one row: RMSNorm's weight), which
    TensorIterator runs by its non-vectorized kernel, by bytes moved (x read, o written), per element size."""
    progress("broadcast products by size")

    def product(dtype: Any, n: int) -> tuple[int, Callable[[], Any]]:
        cols = min(2048, max(n // 4, 1))  # at least 4 rows: a one-row product is collapsed and vectorized
        x = torch.empty(n // cols, cols, device="cuda", dtype=dtype)
        w, out = torch.empty(cols, device="cuda", dtype=dtype), torch.empty_like(x)
        return 2 * x.numel() * x.element_size(), lambda: torch.mul(x, w, out=out)

    return _curves_by_size(torch, product)


def unaligned_factors(torch: Any, gpu: GpuSpec, progress: Progress) -> dict[str, float]:
    """precision -> median over ``UNALIGNED_GEMMS`` of (the GEMM's time) / (the same GEMM with N and K padded to a
    multiple of 8): what missing 16-byte alignment costs (core/calibration.GEMM_ALIGN)."""
    out = {}
    for precision in GEMM_ALIGN:
        if not gpu.peak_tflops.get(precision):
            continue
        progress(f"unaligned GEMMs, {precision}")
        dtype, ratios = _dtype(torch, precision), []
        with tf32_mode(precision == "tf32"):
            for m, n, k in UNALIGNED_GEMMS:
                unaligned_us = mm_us(torch, m, n, k, dtype)
                ratios.append(unaligned_us / mm_us(torch, m, -(-n // 8) * 8, -(-k // 8) * 8, dtype))
        out[precision] = round(statistics.median(ratios), 3)
    return out


def unaligned_conv_factors(torch: Any, gpu: GpuSpec, progress: Progress) -> dict[str, float]:
    """precision -> median over ``UNALIGNED_CONVS`` of (the conv's time) / (the same conv with input and output
    channels padded to a multiple of 8): what channels that miss the alignment cost a cuDNN conv
    (core/calibration.GEMM_ALIGN), which ``unaligned_factors``' GEMMs do not show. Timed as the torch backends run
    convs: cuDNN's autotuner on, channels-last at the 2-byte precisions (the cast backends' layout), contiguous at
    TF32 (fp32 tensors, TF32 allowed in cuDNN as in matmul: hardware/tf32.tf32_mode)."""
    out = {}
    for precision in GEMM_ALIGN:
        if not gpu.peak_tflops.get(precision):
            continue
        progress(f"unaligned convs, {precision}")
        dtype, ratios, channels_last = _dtype(torch, precision), [], precision != "tf32"
        with tf32_mode(precision == "tf32"), cudnn_autotune():
            for b, c, co, size, window in UNALIGNED_CONVS:
                unaligned_us = conv_us(torch, (b, c, co, (size, size), (window, window), 1), dtype, channels_last)
                padded = (b, -(-c // 8) * 8, -(-co // 8) * 8, (size, size), (window, window), 1)
                ratios.append(unaligned_us / conv_us(torch, padded, dtype, channels_last))
        out[precision] = round(statistics.median(ratios), 3)
    return out


def conv_us(torch: Any, shape: tuple[int, int, int, tuple[int, ...], tuple[int, ...], int], dtype: Any,
            channels_last: bool) -> float:
    """Microseconds of one conv of ``shape`` (batch, input channels, output channels, frames / pixels, window,
    groups: ``conv_shapes``' rows; a 3-D window a Conv3d, a 1-D one a Conv1d), padded to keep its size, no bias, at
    ``dtype``, channels-last or not (a 3-D conv's is ``channels_last_3d``, a 1-D one's has none), replayed from a
    CUDA graph (``graph_time_us``)."""
    b, c, co, size, window, groups = shape
    x = torch.randn(b, c, *size, device="cuda", dtype=dtype)
    kind = {1: torch.nn.Conv1d, 3: torch.nn.Conv3d}.get(len(window), torch.nn.Conv2d)
    conv = kind(c, co, window, padding=tuple(w // 2 for w in window), groups=groups, bias=False).to(x.device, dtype)
    if channels_last:
        conv, x = conv._apply(to_channels_last), to_channels_last(x)
    with torch.inference_mode():
        return graph_time_us(torch, lambda: conv(x))


def attention_shape(seq_len: int) -> tuple[int, int]:
    """(batch, heads) of the calibration's SDPA at ``seq_len``: 4 x 16 from 128 tokens up; below, the batch grows
    by (128 / seq_len)^2, so the FLOPs (batch x seq^2) stay those of 128 tokens (32 tokens: 64 x 16 = 1,024
    CTAs, several waves on any GPU, as a windowed model's thousands of short attentions are)."""
    return 4 * max(1, (128 // seq_len) ** 2), 16


def attention_points(torch: Any, gpu: GpuSpec, tile: int, progress: Progress) -> list[AttentionPoint]:
    """SDPA efficiency: 4 x B x H x S^2 x D FLOPs / (peak x wave utilization over B x H x S/tile) / time."""
    import torch.nn.functional as F

    out = []
    for precision in ("fp16", "bf16", "fp32"):
        dtype, peak = _dtype(torch, precision), gpu.peak_tflops[precision] * 1e12
        progress(f"attention, {precision}")
        for d, s in [(d, s) for d in ATTENTION_DIMS for s in ATTENTION_SEQS]:
            b, h = attention_shape(s)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
            with tf32_mode(False):  # fp32 SDPA as the backends run it (TF32 off)
                t_s = graph_time_us(torch, lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v)) / 1e6
            util = wave_utilization(b * h * math.ceil(s / tile), int(gpu.sm_count or 1))
            out.append(AttentionPoint(precision, s, d, _efficiency(4 * b * h * s * s * d / (peak * util), t_s)))
    return out


def graph_costs(torch: Any, progress: Progress) -> tuple[float, float]:
    """(kernel_gap_us: one tiny kernel back-to-back in a graph, graph_replay_us: a one-kernel graph's replay
    less that kernel)."""
    progress("kernel gap and graph replay")
    x = torch.zeros(1, device="cuda")
    gap_us = graph_time_us(torch, lambda: x.add_(1.0), reps=200)
    one_us = graph_time_us(torch, lambda: x.add_(1.0), reps=1)
    return gap_us, max(one_us - gap_us, 0.0)


class StageClock:
    """A progress callback that also times each stage: the time from one message to the next is the first's,
    summed over repeats (``Calibration.stage_s``). calibrate ran 178.7 s on an H100 against its 180 s bar
    (benchmarks/results/device_2026-12-01) with nothing saying where the time went."""

    def __init__(self, progress: Progress, clock: Callable[[], float] = time.perf_counter) -> None:
        self.progress, self.clock = progress, clock
        self.stage_s: dict[str, float] = {}
        self._current: tuple[str, float] | None = None

    def __call__(self, what: str) -> None:
        now = self.clock()
        self._close(now)
        self._current = (what, now)
        self.progress(what)

    def stop(self) -> dict[str, float]:
        """Close the running stage; the seconds per stage so far, rounded to 0.1 s."""
        if self._current is not None:
            self._close(self.clock())
        return {what: round(s, 1) for what, s in self.stage_s.items()}

    def _close(self, now: float) -> None:
        if self._current is not None:
            what, began = self._current
            self.stage_s[what] = self.stage_s.get(what, 0.0) + now - began
            self._current = None


def calibrate(gpu: GpuSpec, progress: Progress | None = None, *, fusion: bool = True) -> Calibration:
    """Measure ``gpu`` (this machine's CUDA device 0). ``fusion`` False: leave out the backend families'
    kernel counts and launch costs (the slow part: torch.compile and ONNX export of small nets)."""
    from modelcost.core.lazy import require
    from modelcost.core.text import utc_timestamp

    torch = require("torch")
    if not torch.cuda.is_available():
        raise ModelcostError("calibrate measures a CUDA GPU, and torch sees none here")
    say = StageClock(progress or (lambda what: None))
    t0 = time.perf_counter()
    cal = Calibration(gpu=fingerprint(gpu), created=utc_timestamp(), torch_version=str(torch.__version__))
    with torch.inference_mode():  # every TF32 switch through hardware/tf32.py, restored after each table
        cal.gemm_efficiency = gemm_table(torch, gpu, cal.tile_m, say, cal.matmul_modes)
        cal.gemm_grid = gemm_grid(torch, gpu, say, {p: _dtype(torch, p) for p in PRECISIONS}, MAX_CALL_MS,
                                  graph_time_us)
        l2 = l2_bytes(torch, gpu)
        cal.gemv = gemv_points(torch, say, l2)
        cal.memory_curve = memory_curve(torch, say)
        cal.cold_curve = cold_curve(torch, say, l2)
        cal.strided_curve = strided_curve(torch, say)
        cal.unvectorized_curve = unvectorized_curve(torch, say)
        cal.unaligned_factor = unaligned_factors(torch, gpu, say)
        cal.unaligned_conv_factor = unaligned_conv_factors(torch, gpu, say)
        cal.attention = attention_points(torch, gpu, cal.attention_tile, say)
        cal.kernel_gap_us, cal.graph_replay_us = graph_costs(torch, say)
    cal.conv_efficiency = conv_table(torch, gpu, cal.tile_m, say)
    torch.cuda.empty_cache()
    if fusion:
        from modelcost.bench.calibrate_fusion import learn_fusion

        from modelcost.bench.calibrate_half import PRECISION as HALF_PRECISION
        from modelcost.bench.calibrate_host import across_processes, measure_process

        here, host_notes = measure_process(torch, say)
        say("host cost per aten call, in fresh processes")
        host, spread_notes = across_processes(here)
        cal.host_us, cal.host_processes = host.cost, list(host.processes)
        cal.half_call_us = {HALF_PRECISION: host.half_us} if host.half_us else {}
        cal.fusion, cal.launch_us, notes = learn_fusion(torch, say, tiny_us=host.tiny_us)
        cal.notes += notes + host_notes + spread_notes
        if "ort-cuda" in cal.fusion:  # onnxruntime-gpu is here
            from modelcost.bench.calibrate_ort import learn_ort_factor, measured_use_tf32

            cal.ort_factor, ort_notes = learn_ort_factor(torch, say)
            cal.ort_use_tf32 = measured_use_tf32(cal.ort_factor)
            cal.notes += ort_notes
    cal.stage_s = say.stop()
    cal.elapsed_s = round(time.perf_counter() - t0, 1)
    return cal
