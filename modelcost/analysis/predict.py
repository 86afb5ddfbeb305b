"""Predicted latency from the static per-layer counts and a GPU's calibration (issue 28; core/calibration.py
says what a calibration holds and why it is built that way).

Per layer, at the config's batch and precision (element size e: 4 bytes fp32/tf32, 2 fp16/bf16):

* its kind (``layer_kind``): gemm, conv, attention, norm, elementwise or lookup; a zero-cost layer that gathers
  nothing (dropout at inference, a view) runs no kernel, and one that copies (a PyTorch cat, clone or dtype cast:
  its ``eager_kernels``) moves its bytes as an elementwise layer;
* kernel time = max(compute time, memory time). Compute: a GEMM inside the calibration's GEMM grid at the
  throughput interpolated between its measured corners (analysis/predict_gemm.py); other GEMMs and convs
  (implicit GEMM) at the calibrated efficiency of their shape class, quantized over the SMs in waves of tiles;
  a GEMM of at most ``GEMV_MAX_M``
  rows (a decode step's or a batch-1 linear) at the calibrated small-M time of its weight bytes instead
  (``gemv_us``: read-bound on the weight, so no separate memory term), and one of more rows but fewer than the grid's
  first M between that time and the grid's (``few_rows_us``); attention at the calibrated
  efficiency for its key length (``attention_keys``) and head size, over its query tiles in waves. Memory: the
  calibrated time of a memory-bound kernel moving the layer's bytes (weights + inputs + outputs at e bytes); a
  conv of several channels per group is its groups' GEMMs, a dense 3 x 3 stride-1 conv takes classes of its own
  where the calibration measured them (``core.calibration.conv_gemm``); a dense pointwise (1 x 1) conv whose
  class was not measured is the GEMM it is, from the grid (``_pointwise``). Under the eager
  families a norm or elementwise layer takes at least the time of its counted aten calls as one kernel each
  (``LayerCost.eager_kernels`` / ``eager_elements``: transformers' RMSNorm is 6-8 calls);
* the backend family's fusion: f kernels per layer of this kind. f = 0 drops the layer (fused into a
  neighbour); f < 1 scales a memory-bound layer's traffic by f; each kernel past the first adds one empty
  kernel's time (``kernel_gap_us``).

Per forward: host-issued backends (eager, compile, ORT) take max(sum of kernel times, the host's time to issue
them): the GPU waits for the host when the host is slower. The host's time (``host_ms``): for the eager families,
the forward's aten calls counted statically (CostReport.eager_ops: kernel launches and views) at the calibrated
cost per call (``Calibration.host_us``); otherwise kernels x the family's ``launch_us``. torch-half (the eager
family on the model cast to fp16) adds to that the extra its convs and BatchNorms cost the host in fp16
(``half_calls_us``: the count's calls of each class at ``Calibration.half_call_us``): its conv nets ran at batch 1
1.30x eager fp32's time on an H100 where one price per call predicted 1.02x. CUDA-graph backends take the sum of
kernel times + one ``graph_replay_us``.

A layer whose shape class (GEMM, conv), attention key length or head size the calibration did not measure takes the
nearest measured one, and the prediction says how much of its kernel time that is (``uncalibrated_pct``): the
validation's expected error does not cover it. It is a warning, not an error bar: on the third held-out set
the cases with 25% or more outside erred by a median 40% against 20% for the rest, on the fourth by 27% against
25% (BENCHMARKS.md).

The forward's time so found (the kernel model) is multiplied by its backend's measured residual
(analysis/predict_residual.py): the median by which held-out models ran slower than the kernel model predicted
them, for host-bound and device-bound forwards apart (``bound_of``). The prediction keeps both (``compute_ms`` +
``overhead_ms`` are the kernel model's, ``bound``, ``residual_factor``).

A GPU never calibrated is predicted from the nearest calibrated one (analysis/predict_transfer.py), and says
so. Every prediction carries the error the validation table publishes (``predict_errors.json``, written by
benchmarks/predict_validate.py) with the share of its cases predicted too low, or "error unknown" when the table
has no entry for it.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from modelcost.analysis.predict_residual import Residual, residual_for
from modelcost.analysis.predict_table import (
    ErrorEntry,
    RepeatEntry,
    expected_fields,
    repeat_fields,
    repeat_table,
    validation_table,
)
from modelcost.analysis.predict_gemm import GridPoints, grid_points, grid_time_us
from modelcost.analysis.roofline import ELEMENT_BYTES, _is_lookup, cost_batch_size, peak_key
from modelcost.analysis.summary import DTYPE_BYTES
from modelcost.core.calibration import (
    BACKEND_FAMILIES,
    GEMM_ALIGN,
    GEMV_MAX_M,
    GRID_M,
    GROUPS,
    LONG_GROUPED,
    MATMUL_MODES,
    NON_SQUARE,
    SIZE_CLASSES,
    THREE_BY_THREE,
    VOLUMETRIC,
    VOLUMETRIC_GROUPED,
    Calibration,
    HostCost,
    TimePoint,
    conv_gemm,
    conv_sorts,
    is_dilated,
    is_three_by_three,
    key_sort,
    ort_conv_kind,
    shape_class,
    wave_utilization,
    window_sort,
)
from modelcost.core.calibration import features as calibration_features
from modelcost.core.errors import ModelcostError
from modelcost.core.types import BenchResult, CostReport, EagerOps, LatencyPrediction, LayerCost

EAGER_FAMILIES = ("eager", "autocast")  # the families that run a forward's aten calls one kernel each
BINARY_OPS = ("add", "sub", "mul", "div", "where", "maximum", "minimum")  # read two inputs as large as the output
# Configs predicted when the run measured none: each family at the precisions it is deployed at.
DEFAULT_CONFIGS = (("torch-eager", "fp32"), ("torch-half", "fp16"), ("torch-compile-cudagraph", "fp16"),
                   ("torch-compile-cudagraph", "fp32"), ("ort-cuda", "fp32"), ("ort-cuda", "fp16"))


@dataclass(frozen=True)
class LayerEstimate:
    name: str
    kind: str
    compute_ms: float
    memory_ms: float
    kernels: float | None = None  # set: kernels that run whatever the fusion (a copy feeding an extern kernel)
    # a norm / elementwise layer's memory time when each of its counted aten calls is its own kernel (eager's way)
    eager_memory_ms: float | None = None
    # a GEMM / conv / attention layer's calls beside its main kernel that eager runs uncoalesced (a transposed
    # input copied to contiguous before a matmul): their time, added under the eager families only
    eager_extra_ms: float = 0.0
    unaligned: float = 1.0  # the unaligned-GEMM factor compute_ms holds (``unaligned_factor``; 1: none)
    # False: compute_ms took its efficiency from a shape class (or an attention key length / head size) the
    # calibration did not measure, the nearest one standing in (``_compute_ms``); LatencyPrediction.uncalibrated_pct
    calibrated: bool = True
    conv_kind: str | None = None  # a conv layer's ``ort_factor`` kind (core.calibration.ort_conv_kind)

    @property
    def time_ms(self) -> float:
        return max(self.compute_ms, self.memory_ms)


def layer_kind(layer: LayerCost) -> str | None:
    """The kind a layer's kernels are predicted as; None for a layer that runs no kernel. A zero-FLOP layer that
    launches kernels (a PyTorch cat, clone or dtype copy: ``eager_kernels``) moves memory as an elementwise one."""
    op = layer.op.lower()
    if _is_lookup(layer):
        return "lookup"
    if "attention" in op and layer.macs > 0:
        return "attention"
    if layer.groups is not None and layer.macs > 0:  # the count found a convolution (its name may say otherwise)
        return "conv"
    if layer.macs > 0:
        return "gemm"
    copies = layer.status == "zero_cost" and bool(layer.eager_kernels)
    if (layer.status != "counted" and not copies) or not layer.output_shapes:
        return None
    return "norm" if "norm" in op else "elementwise"


def _numel(shape: Sequence[int]) -> float:
    return float(math.prod(int(d) for d in shape))


def _out_elements(layer: LayerCost, scale: float) -> float:
    return sum(_numel(s) for s in layer.output_shapes) * scale


def gemm_dims(layer: LayerCost, scale: float) -> tuple[float, float, float]:
    """(M, N, K) of a matmul / linear (N = the output's last dim) or a conv as an implicit GEMM (N = output
    channels, M = batch x output pixels); K = MACs / (M x N); an einsum's as the count found them
    (``LayerCost.gemm_shapes``: its N may span several output dims). ``scale``: the batch over the counted batch,
    taken by M. XLNet-base's projections 'ibh,hnd->ibnd' read as N = 64 (d), M = 12x too large, moved twelve
    times their input's bytes: its fp16 batch 64 was predicted 37-73% slow (H100, device_2026-12-01)."""
    if len(layer.gemm_shapes) == 1:
        m, n, k = layer.gemm_shapes[0]
        return max(m * scale, 1.0), float(n), float(k)
    shape = layer.output_shapes[0] if layer.output_shapes else (1,)
    n = float(shape[1] if layer_kind(layer) == "conv" and len(shape) > 2 else shape[-1]) or 1.0
    m = max(_numel(shape) * scale / n, 1.0)
    k = max(layer.macs * scale / (m * n), 1.0)
    return m, n, k


# the precision whose table stands in where a calibration has none of its own (the same tensor-core rate / mode)
TABLE_FALLBACK = {"bf16": "fp16", "tf32": "fp32"}


def _rows(table: dict[str, dict[str, float]], precision: str) -> dict[str, float]:
    return table.get(precision) or table.get(TABLE_FALLBACK.get(precision, ""), {})


def efficiency(table: dict[str, dict[str, float]], precision: str, key: str) -> float:
    """The calibrated efficiency of a shape class; a missing class takes the nearest measured one of its sort
    (fewest size-class steps; a dense one first the same class measured by 3 x 3 convs), bf16 takes fp16's table
    when it has none of its own."""
    rows = _rows(table, precision)
    if not rows:
        raise ModelcostError(f"the calibration has no efficiency table for {precision}")
    found = measured_as(rows, key)
    if found is not None:
        return rows[found]
    order = list(SIZE_CLASSES)
    # the nearest class of the same sort (dense, depthwise or several channels per group), or of any sort where
    # the table has none of it (a calibration that kept no grouped convs apart)
    alike = [k for k in rows if key_sort(k) == key_sort(key)] or list(rows)

    def steps(other: str) -> int:
        return sum(abs(order.index(a.split(":")[1]) - order.index(b.split(":")[1]))
                   for a, b in zip(key.split()[:3], other.split()[:3], strict=True))

    return rows[min(alike, key=steps)]


def measured_as(rows: dict[str, float], key: str) -> str | None:
    """The row that measured this shape class: its own, or for a dense conv (a 1 x 1, a strided or 3-D 3 x 3) in a
    class only 3 x 3 convs measured, theirs: the same implicit GEMM, nearer than any other class (R3D-18's 3 x 3 x 3
    convs read 1.8x slow from the nearest 1 x 1 one); None where the class was not measured."""
    if key in rows:
        return key
    three = f"{key} {THREE_BY_THREE}"
    return three if not key_sort(key) and three in rows else None


def _attention_line(cal: Calibration, precision: str, head_dim: float) -> tuple[int, list[tuple[int, float]]]:
    """(the calibrated head size nearest ``head_dim``, its (sequence length, efficiency) points in order)."""
    pts = [p for p in cal.attention if p.precision == precision] or \
        [p for p in cal.attention if p.precision == TABLE_FALLBACK.get(precision)]
    if not pts:
        raise ModelcostError(f"the calibration has no attention figures for {precision}")
    dim = min({p.head_dim for p in pts}, key=lambda d: abs(math.log(d / max(head_dim, 1))))
    return dim, sorted((p.seq_len, p.efficiency) for p in pts if p.head_dim == dim)


def check_matmul_mode(cal: Calibration, precision: str) -> None:
    """Refuse a calibration whose ``precision`` table was timed in another fp32 matmul mode than the backends run
    that precision in (core/calibration.MATMUL_MODES: fp32 = TF32 off, tf32 = on)."""
    want, got = MATMUL_MODES.get(precision), cal.matmul_modes.get(precision)
    if want and got and got != want:
        raise ModelcostError(f"the calibration of {cal.gpu.name} timed its {precision} GEMMs with the fp32 matmul "
                             f"mode {got!r}, but {precision} runs in {want!r}: run 'modelcost calibrate' again")


def _interp(points: Sequence[tuple[float, float]], x: float) -> float:
    """y at ``x``, linear between the sorted (x, y) ``points``, the end values beyond them."""
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    i = bisect.bisect_left([p[0] for p in points], x)
    (x0, y0), (x1, y1) = points[i - 1], points[i]
    return y0 + (x - x0) / (x1 - x0) * (y1 - y0) if x1 != x0 else y0


def _orientation(n: float, k: float) -> int:
    """1 for a weight of more output rows than inputs (n > k), -1 for fewer, 0 for a square one."""
    return (n > k) - (n < k)


def gemv_us(cal: Calibration, precision: str, m: float, n: float, k: float) -> float | None:
    """Time of a small-M GEMM (m <= GEMV_MAX_M rows, weight n x k) from the calibrated points: the fraction of
    the bandwidth the measured ones reached reading their weight, interpolated over log(weight bytes) at each
    measured row count and linearly between the row counts around ``m``; None when the calibration has none.

    Only the points of the weight's orientation (``_orientation``; square ones serve both, and a square weight takes
    them all) make the line: at the same bytes a weight of more output rows reads faster (the H100, C10 in
    benchmarks/results/device_2026-12-06/h100_cal: 8192 x 2048 at 2.39 TB/s and 2048 x 8192 at 2.06, 3072 x 768 at
    0.98 and 768 x 3072 at 0.64), and one line of both had two points at one x, of which it read the slower for
    either (Llama-3.2-1B's gate and up projections priced as its down projection). Points at one x are averaged."""
    table = {"bf16": "bf16", "fp16": "fp16", "tf32": "fp32"}.get(precision, precision)
    pts = [p for p in cal.gemv if p.precision == table] or \
        [p for p in cal.gemv if p.precision == {"bf16": "fp16"}.get(table, "")]
    if not pts or m > GEMV_MAX_M:
        return None
    elem = ELEMENT_BYTES.get(peak_key(precision), 4.0)
    bw = cal.gpu.bandwidth_gbps * 1e3  # bytes per us
    weight = n * k * elem

    side = _orientation(n, k)
    alike = [p for p in pts if side == 0 or _orientation(p.n, p.k) in (0, side)] or pts

    def at_rows(rows: int) -> float:
        by_x: dict[float, list[float]] = {}
        for p in alike:
            if p.m == rows:
                by_x.setdefault(math.log(p.n * p.k * elem), []).append(p.n * p.k * elem / bw / p.time_us)
        line = sorted((x, sum(ys) / len(ys)) for x, ys in by_x.items())
        return weight / (bw * _interp(line, math.log(weight)))

    rows = sorted({p.m for p in alike})
    return _interp([(r, at_rows(r)) for r in rows], m)


def few_rows_us(cal: Calibration, precision: str, grid: GridPoints, m: float, n: float, k: float) -> float | None:
    """Time of a GEMM of more rows than the small-M points (``GEMV_MAX_M``) and fewer than the grid's first M
    (``GRID_M[0]``, 64): linear in M between the small-M points' time at ``GEMV_MAX_M`` rows (``gemv_us``) and the
    grid's at its first M (``grid_time_us``), the grid's alone where the calibration has no small-M points; None
    outside those rows or where the grid does not answer at its first M (the class model then prices it).

    Such a GEMM (a second of audio's 49 frames, ViT-B/32's 50 tokens, at batch 1) reads its weight once and fills
    one row of tiles whatever its rows, so its time is near both ends'. The class model priced it by its FLOPs from a
    class measured at 128 rows, a fraction of that: wav2vec 2.0 Base's GEMMs ran 1.24 ms of kernels at batch 1 in
    fp32 (benchmarks/results/device_2026-11-26f/kernel_mix) where the model priced 0.46, and on the H100 (C13,
    benchmarks/results/device_2026-12-08) HuBERT Large under compile at batch 1 read -42% (fp32) and -33% (fp16),
    -12% and -8% priced so; CLIP ViT-B/32 (C12) -57% and -56%, -28% and -29%."""
    if not GEMV_MAX_M < m < GRID_M[0]:
        return None
    top = grid_time_us(grid, GRID_M[0], n, k)
    if top is None:
        return None
    low = gemv_us(cal, precision, GEMV_MAX_M, n, k)
    if low is None:
        return top
    return low + (m - GEMV_MAX_M) / (GRID_M[0] - GEMV_MAX_M) * (top - low)


def memory_us(cal: Calibration, size_bytes: float) -> float:
    """Time of a memory-bound kernel moving ``size_bytes``: linear between calibrated sizes, the smallest
    size's time below it, the last segment's bandwidth beyond the largest."""
    if not cal.memory_curve:
        raise ModelcostError("the calibration has no memory-bound curve")
    return _curve_us(cal.memory_curve, size_bytes)


def dram_us(cal: Calibration, size_bytes: float) -> float:
    """Time of a memory-bound kernel whose data comes from DRAM (a decode step's KV-cache reads): the calibrated
    curve of such kernels (``Calibration.cold_curve``) within its sizes, never below ``memory_us``; outside them, or
    without one, ``memory_us`` (from twice the L2 up the two agree, and below the first cold size a kernel's
    time is its launch)."""
    pts = cal.cold_curve
    if pts and pts[0].size_bytes <= size_bytes <= pts[-1].size_bytes:
        return max(_curve_us(pts, size_bytes), memory_us(cal, size_bytes))
    return memory_us(cal, size_bytes)


def strided_us(cal: Calibration, size_bytes: float, elem: float) -> float:
    """Time of an uncoalesced (transposed-operand) kernel moving ``size_bytes`` of ``elem``-byte elements, from
    the calibrated curve of that element size (``Calibration.strided_curve``; the nearest size's where there is
    none of it), or as a contiguous kernel where the calibration has no such curve."""
    return _element_curve_us(cal, cal.strided_curve, size_bytes, elem)


def unvectorized_us(cal: Calibration, size_bytes: float, elem: float) -> float:
    """Time of a non-vectorized elementwise kernel (an operand broadcast, of another layout or dtype:
    ``LayerCost.eager_unvectorized_kernels``) moving ``size_bytes``, from the calibrated curve of the nearest element
    size (``Calibration.unvectorized_curve``), or as a vectorized one where the calibration has none."""
    return _element_curve_us(cal, cal.unvectorized_curve, size_bytes, elem)


def _element_curve_us(cal: Calibration, curves: dict[str, list[TimePoint]], size_bytes: float, elem: float) -> float:
    """``size_bytes`` on the curve of the element size nearest ``elem`` among ``curves`` (element bytes -> curve),
    never faster than a contiguous kernel (``memory_us``), which stands in where there is no curve."""
    if not curves:
        return memory_us(cal, size_bytes)
    near = min(curves, key=lambda e: abs(float(e) - elem))
    return max(_curve_us(curves[near], size_bytes), memory_us(cal, size_bytes))


def _curve_us(pts: Sequence[TimePoint], size_bytes: float) -> float:
    sizes = [p.size_bytes for p in pts]
    if size_bytes <= sizes[0]:
        return pts[0].time_us
    i = min(bisect.bisect_left(sizes, size_bytes), len(pts) - 1)
    a, b = pts[i - 1], pts[i]
    slope = (b.time_us - a.time_us) / (b.size_bytes - a.size_bytes) if b.size_bytes != a.size_bytes else 0.0
    return a.time_us + slope * (size_bytes - a.size_bytes)


def attention_efficiency(cal: Calibration, precision: str, seq_len: float, head_dim: float) -> float:
    """Calibrated SDPA efficiency at the nearest head size, linear in log(sequence length) between points."""
    return _along(_attention_line(cal, precision, head_dim)[1], seq_len)


def _along(line: Sequence[tuple[int, float]], seq_len: float) -> float:
    """The efficiency of an attention line (``_attention_line``) at ``seq_len``: ``_interp`` in log(length)."""
    return _interp([(math.log(s), eff) for s, eff in line], math.log(max(seq_len, 1)))


def attention_keys(layer: LayerCost) -> float:
    """The key length of an attention layer, from its count: MACs = 2 x batch x heads x queries x keys x head size
    (q k^T and the weighted sum of v). A flash kernel runs one CTA per (batch, head, query tile), and each CTA
    walks the keys: its work, and so the calibrated efficiency (measured with queries = keys), goes by the key
    length. SegFormer's reduced attention (16,384 queries over 256 keys) is a short attention per CTA, not a
    long one. A count without the four dimensions: the query length."""
    shape = layer.output_shapes[0]
    if len(shape) != 4 or not layer.macs or not all(shape):
        return float(shape[-2])
    b, h, sq, d = shape
    return layer.macs / (2.0 * b * h * sq * d)


def _peak_flops(cal: Calibration, precision: str) -> float:
    key = peak_key(precision)
    peak = cal.gpu.peak_tflops.get(key)
    if not peak:
        raise ModelcostError(f"{cal.gpu.name}: no {key} peak, so {precision} cannot be predicted")
    return peak * 1e12


def _compute_ms(layer: LayerCost, kind: str, cal: Calibration, precision: str, scale: float,
                grid: GridPoints) -> tuple[float, bool]:
    """(compute time, whether the calibration measured the layer's GEMM / conv shape class, or its attention's
    key length and head size: ``LayerEstimate.calibrated``); ``grid``: the GEMM grid at ``precision``
    (``predict_gemm.grid_points``)."""
    peak, sms = _peak_flops(cal, precision), cal.gpu.sm_count
    flops = 2.0 * layer.macs * scale
    if kind == "attention":
        b, h, sq, d = (list(layer.output_shapes[0]) + [1, 1, 1, 1])[:4] if len(layer.output_shapes[0]) == 4 \
            else (1, 1, layer.output_shapes[0][-2], 64)
        skv = attention_keys(layer)
        util = wave_utilization(b * scale * h * math.ceil(sq / cal.attention_tile), sms)
        dim, line = _attention_line(cal, precision, d)
        return flops / (peak * _along(line, skv) * util) * 1e3, dim == d and line[0][0] <= skv <= line[-1][0]
    m, n, k = gemm_dims(layer, scale)
    check_matmul_mode(cal, precision)
    grid_us = (few_rows_us(cal, precision, grid, m, n, k) or grid_time_us(grid, m, n, k)) if kind == "gemm" else None
    if grid_us is not None:
        return grid_us / 1e3, True
    if kind == "conv":
        sorts, table = conv_sorts(cal), cal.conv_efficiency
        three = THREE_BY_THREE in sorts and _three_by_three(layer)
        window = _window(layer)
        key, n_gemm, gemms = conv_gemm(m, n, k, layer.groups or 1, GROUPS in sorts, three, window)
        if window and measured_as(_rows(table, precision), key) is None:
            # a window sort's class calibrate did not time (or a calibration without such classes): the 2-D
            # classes of its implicit GEMM stand in, not the nearest class of its sort (one conv each), still
            # outside calibration (``window_measured``)
            key, n_gemm, gemms = conv_gemm(m, n, k, layer.groups or 1, GROUPS in sorts, three)
        # calibrate times no dilated conv: its class stands in, and cuDNN's dilated kernels are others (the
        # eleventh set's DeepLabV3-MobileNetV2, its depthwise convs dilated 2 and 4, ran torch-half and compile
        # fp16 at batch 64 1.7x and 2.4x its prediction, where MobileNetV2 itself reads -6% to +5%)
        measured = measured_as(_rows(table, precision), key) is not None and not is_dilated(layer.dilations)
        if _pointwise(layer) and (layer.groups or 1) == 1 and not measured:
            grid_us = grid_time_us(grid, m, n, k)
            if grid_us is not None:
                return grid_us / 1e3, not window  # a 3-D pointwise conv's kernels are cuDNN's, not the grid's GEMM
        n = n_gemm
        # nor a 3-D or non-square conv outside its own sort's classes (``window_measured``)
        measured = measured and window_measured(layer, key)
    else:
        gemms, key, table = 1, shape_class(m, n, k), cal.gemm_efficiency
        measured = measured_as(_rows(table, precision), key) is not None
    eff = efficiency(table, precision, key)
    util = wave_utilization(gemms * math.ceil(m / cal.tile_m) * math.ceil(n / cal.tile_n), sms)
    # a grouped conv priced as its groups' dense GEMMs (wider groups than calibrate's, or a calibration without
    # such convs) was not measured as it runs: cuDNN's grouped kernels are not its groups' GEMMs
    return flops / (peak * eff * util) * 1e3, gemms == 1 and measured


def _window(layer: LayerCost) -> str:
    """A conv layer's ``window_sort`` ('' for a transposed conv: calibrate times none)."""
    return "" if "transpose" in layer.op.lower() else _conv_sort(layer)


def _conv_sort(layer: LayerCost) -> str:
    """``window_sort`` of a conv layer's window, groups and output channels (``gemm_dims``' N)."""
    return window_sort(layer.kernel_shape, int(layer.groups or 1), int(gemm_dims(layer, 1.0)[1]))


def window_measured(layer: LayerCost, key: str) -> bool:
    """Whether a conv layer priced in class ``key`` was priced from convs of its window's sort: any other 1-D or
    square 2-D window (calibrate's ``CONVS`` are 1 x 1, 3 x 3 and 7 x 7); a 3-D, a non-square 2-D or a long grouped
    1-D one only in a class of its own sort (``VOLUMETRIC``, ``VOLUMETRIC_GROUPED``, ``NON_SQUARE``,
    ``LONG_GROUPED``: calibrate's ``WINDOW_CONVS``). Else it took the 2-D (or ``GROUPS``) classes of its implicit
    GEMM (a calibration without such convs), and counts as outside calibration: cuDNN runs them by other kernels.
    In the twelfth held-out set, X3D-M's 3-D convs so priced
    (depthwise 3 x 3 x 3, pointwise) ran torch-half fp16 at batch 64 in 3.2x their prediction and compile fp32 in
    0.72x; TextNet-small's 1 x 3 and 3 x 1 convs, in 2-D classes that the 7 x 7 stem and 1 x 1 convs measured,
    ran compile fp16 at batch 64 in 0.44x (fp32: 0.87x).

    A class of its sort is taken only where calibrate timed that class itself (``_compute_ms``): the nearest
    one of its sort stood in for the rest at first, and the first calibration with such convs (H100,
    benchmarks/results/device_2026-12-01) priced X3D-M's ORT fp16 batch 64 at 2.8x its measured time and
    raised the twelfth set's p90 from 68.7% (the same calibration without the classes) to 87.2%; with the class
    itself or the 2-D classes, 59.8%."""
    # a transposed conv asks no window sort (``_window``), so its key never carries one
    return not _conv_sort(layer) or key_sort(key) in (VOLUMETRIC, VOLUMETRIC_GROUPED, NON_SQUARE, LONG_GROUPED)


def _pointwise(layer: LayerCost) -> bool:
    """Whether a conv layer is pointwise: a forward (not transposed) conv of a 1 x 1 (1-D: 1) window, a GEMM over
    the pixels (M = batch x output pixels, N = output channels, K = input channels). A dense one whose conv class
    was not measured is priced by the GEMM grid as that GEMM: SqueezeBERT's 768 -> 768 Conv1d at batch 1 (M 128),
    priced from the nearest conv class, read 8x slow on the H200 (fp32). A grouped one is not: cuDNN's grouped
    kernels ran SqueezeBERT's 4 groups of 192 channels 2-3x slower than the grid's GEMMs (fp16, batch 64)."""
    return "transpose" not in layer.op.lower() and bool(layer.kernel_shape) and \
        all(int(d) == 1 for d in layer.kernel_shape or ())


def _three_by_three(layer: LayerCost) -> bool:
    """Whether a conv layer takes the ``THREE_BY_THREE`` classes: a forward (not transposed) 3 x 3 conv at stride
    and dilation 1 (``core.calibration.is_three_by_three``)."""
    return "transpose" not in layer.op.lower() and is_three_by_three(layer.kernel_shape, layer.strides,
                                                                      layer.dilations)


def unaligned_factor(cal: Calibration, precision: str, n: float, k: float) -> float:
    """The calibrated slowdown of a GEMM whose N or K is not a multiple of the alignment its precision's
    tensor-core kernels want (core/calibration.GEMM_ALIGN), 1 otherwise or where the calibration has none.
    N and K as the count gives them: a K that is not a whole number (a layer of several matmuls) is not judged."""
    align = GEMM_ALIGN.get(precision)
    factor = cal.unaligned_factor.get(precision) or cal.unaligned_factor.get({"bf16": "fp16"}.get(precision, ""))
    if not align or not factor or k != int(k):
        return 1.0
    return factor if int(n) % align or int(k) % align else 1.0


def unaligned_conv_factor(cal: Calibration, precision: str, layer: LayerCost, scale: float) -> float:
    """The calibrated slowdown of a cuDNN conv whose input or output channels per group are not a multiple of the
    alignment its precision's tensor-core kernels want (core/calibration.GEMM_ALIGN), 1 otherwise or where the
    calibration has none (bf16 takes fp16's). On an H100, HarDNet-68, HRNet-W18-small and MixNet-L, whose convs
    mostly have such channels (88%, 30%, 28% of conv MACs), ran fp16 at batch 64 1.5-2.3x their prediction.
    Not judged: a depthwise conv (cuDNN's own kernels, calibrated apart), a transposed one (its K is not its input
    channels times the window), one of at most 4 input channels per group (an RGB stem: cuDNN pads its 3 channels
    itself, and calibrate's 3-channel stem conv already times that), and a K that is not a whole number of windows."""
    align = GEMM_ALIGN.get(precision)
    factor = cal.unaligned_conv_factor.get(precision) or \
        cal.unaligned_conv_factor.get({"bf16": "fp16"}.get(precision, ""))
    if not align or not factor or not layer.kernel_shape or "transpose" in layer.op.lower():
        return 1.0
    _, n, k = gemm_dims(layer, scale)  # N = output channels; K = input channels per group x window elements
    groups = layer.groups or 1
    per_group_in = k / math.prod(int(d) for d in layer.kernel_shape)
    if (groups > 1 and groups >= n) or per_group_in <= 4 or abs(per_group_in - round(per_group_in)) > 1e-6:
        return 1.0
    return factor if round(per_group_in) % align or round(n / groups) % align else 1.0


def layer_bytes(layer: LayerCost, kind: str, elem: float, scale: float) -> float:
    """Bytes a layer's kernels move at ``elem`` bytes per element: weights + inputs + outputs (inputs of a
    conv, norm or elementwise layer taken as large as its output; of a binary op, two of them); a lookup reads
    only the rows it gathers."""
    out = _out_elements(layer, scale)
    if kind == "gemm":
        m, n, k = gemm_dims(layer, scale)
        return (layer.params + m * k + out) * elem
    if kind == "attention":
        return 4 * out * elem  # q, k, v read (self-attention: each as large as the output) + the output written
    if kind == "lookup":
        return 2 * out * elem  # the rows gathered (as many as the output holds) read and written, not the table
    inputs = 2 * out if layer.op.lower().rsplit(".", 1)[-1].rstrip("_") in BINARY_OPS else out  # add_: in place
    return (layer.params + inputs + out) * elem


def cast_model(family: str, precision: str | None) -> bool:
    """Whether a forward of ``family`` at ``precision`` runs the model cast to a 2-byte precision (torch-half, or its
    CUDA graph): the eager family at fp16 / bf16. Its layout (``layout_as_counted``) and its host price
    (``half_calls_us``) differ from the fp32 forward the count traced."""
    return family == "eager" and precision is not None and ELEMENT_BYTES.get(peak_key(precision), 4.0) == 2


def layout_as_counted(cost: CostReport, backend: str, precision: str) -> bool:
    """Whether ``backend`` runs the forward in the memory layout the count traced it in (contiguous, fp32): not
    the eager family at a 2-byte precision (the cast model: modelcost's cast backends run a net of 2-D / 3-D
    convs channels_last, bench/backends/torch_backends.py) on such a net. Only then do the count's transposed
    operands (``LayerCost.eager_strided_kernels``) say where eager reads uncoalesced."""
    if not cast_model(BACKEND_FAMILIES.get(backend, ("",))[0], precision):
        return True
    return not any(layer_kind(layer) == "conv" and layer.output_shapes and len(layer.output_shapes[0]) >= 4
                   for layer in cost.layers)


def per_call(layer: LayerCost, kind: str | None) -> list[LayerCost]:
    """A GEMM, conv or attention layer that ran ``calls`` times (a shared module: ALBERT's one layer, 12 times;
    attention's two bmm in one scope) as its calls, each with its own outputs and MACs (``call_macs``), so that
    its shape class, key length and waves are one call's, not the sum's (ALBERT's K read 12 x 768). Other layers
    stay one entry: their bytes are the calls' sum, and eager prices their aten calls one kernel each already.
    The rest of a call's figures (FLOPs, eager calls and elements) are its share of the MACs."""
    calls, macs = layer.calls, layer.call_macs
    if kind not in ("gemm", "conv", "attention") or calls <= 1 or len(macs) != calls or not layer.macs \
            or len(layer.output_shapes) % calls:
        return [layer]
    each = len(layer.output_shapes) // calls

    def part(value: int | None, share: int) -> int | None:
        return None if value is None else round(value * share / layer.macs)

    return [dataclasses.replace(layer, macs=m, flops=part(layer.flops, m), calls=1, call_macs=[],
                                output_shapes=layer.output_shapes[i * each:(i + 1) * each],
                                eager_kernels=part(layer.eager_kernels, m),
                                eager_elements=part(layer.eager_elements, m),
                                eager_strided_kernels=part(layer.eager_strided_kernels, m),
                                eager_strided_elements=part(layer.eager_strided_elements, m),
                                eager_unvectorized_kernels=part(layer.eager_unvectorized_kernels, m),
                                eager_unvectorized_elements=part(layer.eager_unvectorized_elements, m),
                                eager_bytes=part(layer.eager_bytes, m),
                                gemm_shapes=layer.gemm_shapes[i:i + 1] if len(layer.gemm_shapes) == calls else [])
            for i, m in enumerate(macs) if m]


def estimate_layers(cost: CostReport, cal: Calibration, precision: str, batch_size: int,
                    strided: bool = True) -> list[LayerEstimate]:
    """Kernel time of every layer that runs one, at ``batch_size`` and ``precision`` (no fusion applied);
    ``strided`` False: the count's transposed operands are not the run's (``layout_as_counted``), and eager's
    calls are priced as contiguous ones."""
    scale = batch_size / cost_batch_size(cost)
    elem = ELEMENT_BYTES.get(peak_key(precision), 4.0)
    run_bytes = elem / count_element_bytes(cost)  # eager calls' counted bytes -> the run's (``_eager_memory_ms``)
    grid = grid_points(cal, precision)
    out = []
    for layer in (call for entry in cost.layers for call in per_call(entry, layer_kind(entry))):
        if not strided and layer.eager_strided_kernels:
            layer = dataclasses.replace(layer, eager_strided_kernels=0, eager_strided_elements=0)
        kind = layer_kind(layer)
        if kind is None:
            continue
        dims = gemm_dims(layer, scale) if kind == "gemm" else None
        small = gemv_us(cal, precision, *dims) if dims else None
        if small is not None:
            out.append(LayerEstimate(layer.name, kind, small / 1e3, 0.0))
            continue
        compute, calibrated = _compute_ms(layer, kind, cal, precision, scale, grid) \
            if kind in ("gemm", "conv", "attention") else (0.0, True)
        slower = unaligned_factor(cal, precision, *dims[1:]) if dims else 1.0
        if kind == "conv":  # in compute under every backend, ONNX Runtime's too (its convs are cuDNN's), not in
            # ``unaligned``: the GEMM factor, which ``backend_layers`` divides back out for ORT's own GEMM kernels
            compute *= unaligned_conv_factor(cal, precision, layer, scale)
        memory = memory_us(cal, layer_bytes(layer, kind, elem, scale)) / 1e3
        out.append(LayerEstimate(layer.name, kind, compute * slower, memory, eager_memory_ms=_eager_memory_ms(
            layer, kind, cal, elem, scale, run_bytes), eager_extra_ms=_strided_ms(layer, cal, elem, scale)
            if kind in ("gemm", "conv", "attention") else 0.0, unaligned=slower, calibrated=calibrated,
            conv_kind=ort_conv_kind(layer.dilations, layer.groups or 1) if kind == "conv" else None))
    return out


def _strided_ms(layer: LayerCost, cal: Calibration, elem: float, scale: float) -> float:
    """Time of a layer's uncoalesced calls (``LayerCost.eager_strided_kernels``: a transposed operand), each a
    kernel of an equal share of their elements at the calibrated transposed-copy rate (``strided_us``)."""
    calls, elements = layer.eager_strided_kernels or 0, layer.eager_strided_elements or 0
    if not calls or not elements:
        return 0.0
    return calls * strided_us(cal, elements * scale * elem / calls, elem) / 1e3


def _eager_memory_ms(layer: LayerCost, kind: str, cal: Calibration, elem: float, scale: float,
                     run_bytes: float) -> float | None:
    """Memory time of a norm or elementwise layer as eager runs it: each of its kernel-launching aten calls a
    kernel of an equal share of the bytes they read and write, the uncoalesced ones (a transposed operand) at their
    own rate (``_strided_ms``). The bytes: ``LayerCost.eager_bytes`` (each tensor in the dtype the count ran it in:
    transformers' RMSNorm makes 8 calls with an fp32 round trip inside a bf16 model) x ``run_bytes`` (the run's
    element size over the count's), scaled to the batch; a count without them, ``eager_elements`` at ``elem``
    bytes. The non-vectorized calls (an operand broadcast, of another layout or dtype) take their share of the bytes
    at their own calibrated rate (``unvectorized_us``). None without the tally (an ONNX model)."""
    if kind not in ("norm", "elementwise") or not layer.eager_kernels or layer.eager_elements is None:
        return None
    # apart only where the calibration timed them: else they share the vectorized calls' bytes, as before the tally
    slow_calls, slow_elements = (layer.eager_unvectorized_kernels or 0, layer.eager_unvectorized_elements or 0) \
        if cal.unvectorized_curve else (0, 0)
    calls = layer.eager_kernels - (layer.eager_strided_kernels or 0) - slow_calls
    elements = layer.eager_elements - (layer.eager_strided_elements or 0) - slow_elements

    def size_of(n: float) -> float:  # the run's bytes of ``n`` of the layer's counted elements
        if layer.eager_bytes and layer.eager_elements:
            return layer.eager_bytes * n / layer.eager_elements * run_bytes * scale
        return n * scale * elem

    plain = calls * memory_us(cal, size_of(elements) / calls) / 1e3 if calls > 0 and elements > 0 else 0.0
    slow = slow_calls * unvectorized_us(cal, size_of(slow_elements) / slow_calls, elem) / 1e3 \
        if slow_calls > 0 and slow_elements > 0 else 0.0
    return plain + slow + _strided_ms(layer, cal, elem, scale)


def count_element_bytes(cost: CostReport) -> float:
    """The element size of the dtype the count ran in: its parameters' most common one (4 without parameters)."""
    by_dtype = cost.params.by_dtype
    if not by_dtype:
        return 4.0
    dtype = max(by_dtype, key=lambda d: by_dtype[d])
    return float(DTYPE_BYTES.get(str(dtype).removeprefix("torch."), 4))  # the one dtype-size table (summary.py)


def backend_layers(layers: list[LayerEstimate], cal: Calibration, backend: str,
                   precision: str) -> list[LayerEstimate]:
    """The layers' kernel times as ``backend`` runs them: the tables hold torch's kernels; an ort-cuda layer takes
    its kind's calibrated factor (``Calibration.ort_factor``: ONNX Runtime's time over torch's; a conv its conv
    kind's, or the 3 x 3 net's ``conv`` where the calibration predates the conv kinds), others as they are."""
    factor = cal.ort_factor.get(precision, {}) if BACKEND_FAMILIES.get(backend, ("",))[0] == "ort-cuda" else {}
    if not factor:
        return layers
    # ORT's time is its factor over the aligned GEMM's: on the one unaligned net measured (MLP-Mixer's 196-token
    # MLP, fp16 b64, benchmarks/kernel_mix.py) ORT's GEMM kernels took 2.94 ms against torch's 3.49 ms, of which
    # torch's 2-byte-aligned kernels 1.44: the torch.mm factor is not ORT's
    def of(e: LayerEstimate) -> float:
        return factor.get(e.conv_kind or e.kind, factor.get(e.kind, 1.0))

    return [dataclasses.replace(e, compute_ms=e.compute_ms / e.unaligned * of(e), memory_ms=e.memory_ms * of(e),
                                unaligned=1.0) for e in layers]


def host_ms(cal: Calibration, family: str, eager_ops: EagerOps | None, kernels: float,
            precision: str | None = None) -> float:
    """The host's time to issue one forward: its aten calls at the calibrated cost per call where the forward's
    calls were counted and the calibration prices them (``Calibration.host_us``), plus, for the cast model
    (``precision``), its half-precision calls' extra price (``half_calls_us``); else the kernels at the family's
    ``launch_us`` (a calibration without host_us, an ONNX model, a compiled family)."""
    cost = per_call_cost(cal, family, eager_ops)
    if cost is not None and eager_ops is not None:
        # a class's extra may be negative (bench/calibrate_half.py); the host's time never is
        return max(cost.kernel_op_us * eager_ops.kernel_ops + cost.view_op_us * eager_ops.view_ops
                   + half_calls_us(cal, family, precision, eager_ops), 0.0) / 1e3
    return kernels * cal.launch_us[family] / 1e3


def per_call_cost(cal: Calibration, family: str, eager_ops: EagerOps | None) -> HostCost | None:
    """The price per aten call ``host_ms`` issues a forward of ``family`` at: the calibration's (or the pool's,
    analysis/predict_host.py) where the forward's calls were counted and the calibration prices the family; None
    where the forward is priced per kernel instead (``launch_us``)."""
    return cal.host_us.get(family) if eager_ops is not None else None


def pooled_from(cal: Calibration, backend: str, eager_ops: EagerOps | None, bound: str) -> int:
    """``LatencyPrediction.host_pooled_from``: the calibrations pooled into ``cal.host_us`` (analysis/predict_host.py)
    where this forward is host-bound and its host time came from that price per aten call (``per_call_cost``),
    else 0 (a price per kernel, a graph replay, or a device-bound forward)."""
    priced = per_call_cost(cal, BACKEND_FAMILIES[backend][0], eager_ops) is not None
    return cal.host_pooled_from if bound == "host" and priced else 0


def half_calls_us(cal: Calibration, family: str, precision: str | None, eager_ops: EagerOps) -> float:
    """What the forward's convs and BatchNorms cost the host beyond eager fp32's price per call when the eager
    family runs the model cast to a 2-byte precision (torch-half): each counted call of a class
    (``EagerOps.by_class``) at its calibrated extra (``Calibration.half_call_us[precision]``). 0 for every other
    family (autocast has a price of its own, compile and ORT issue no aten calls, a CUDA graph replays), at 4-byte
    precisions, and where the calibration did not time that precision (bf16: calibrate times fp16 alone). The
    extra was timed channels_last, as torch-half runs a net of 2-D / 3-D convs; a net of 1-D convs, which it runs
    contiguous, takes the same price."""
    if not cast_model(family, precision):
        return 0.0
    extra = cal.half_call_us.get(precision, {})
    return sum(extra.get(name, 0.0) * calls for name, calls in eager_ops.by_class.items())


def forward_ms(layers: Iterable[LayerEstimate], cal: Calibration, backend: str,
               eager_ops: EagerOps | None = None, precision: str | None = None) -> tuple[float, float, int]:
    """(kernel time, overhead, kernels) of one forward under ``backend``'s fusion and launch model;
    ``eager_ops``: the forward's aten calls (CostReport.eager_ops), which the host model prices (``host_ms``) at
    ``precision`` (None: as fp32)."""
    if backend not in BACKEND_FAMILIES:
        raise ModelcostError(f"backend {backend!r}: no prediction model (known: {', '.join(BACKEND_FAMILIES)})")
    family, overhead = BACKEND_FAMILIES[backend]
    fusion = cal.fusion.get(family)
    if fusion is None or family not in cal.launch_us:
        raise ModelcostError(f"the calibration of {cal.gpu.name} has no {family} figures (rerun modelcost calibrate)")
    kernel_ms = kernels = 0.0
    for est in layers:
        if est.kernels is not None:
            kernel_ms += est.time_ms + max(est.kernels - 1.0, 0.0) * cal.kernel_gap_us / 1e3
            kernels += est.kernels
            continue
        f = fusion.kernels_per_layer.get(est.kind, 1.0)
        if f <= 0:
            continue
        memory = est.memory_ms * min(f, 1.0) if est.compute_ms == 0 else est.memory_ms
        extra = 0.0
        if family in EAGER_FAMILIES:
            if est.eager_memory_ms is not None:
                memory = max(memory, est.eager_memory_ms)  # eager runs every counted call: no fusion to save bytes
            extra = est.eager_extra_ms
        kernel_ms += max(est.compute_ms, memory) + extra + max(f - 1.0, 0.0) * cal.kernel_gap_us / 1e3
        kernels += f
    if overhead == "graph":
        return kernel_ms, cal.graph_replay_us / 1e3, round(kernels)
    issue_ms = host_ms(cal, family, eager_ops, kernels, precision)
    return kernel_ms, max(issue_ms - kernel_ms, 0.0), round(kernels)


def bound_of(backend: str, overhead_ms: float) -> str:
    """"host" where the kernel model has the host issue a forward slower than its kernels run (a host-issued
    family with overhead left over: ``forward_ms``), else "device" (a CUDA-graph replay is not the host's issue
    time). The measured residual is fitted per bound (analysis/predict_residual.py)."""
    return "host" if BACKEND_FAMILIES[backend][1] == "host" and overhead_ms > 0 else "device"


def require_complete(cost: CostReport) -> None:
    """A ModelcostError saying why where the static counts are incomplete: the kernel model prices every layer,
    and a layer left uncounted would be priced at nothing (predict, predict_llm, and --predict's note for a run,
    runs/predict.attach_predictions)."""
    if not cost.compute.complete:
        why = "; ".join(cost.compute.incomplete_reasons) or "incomplete"
        raise ModelcostError(f"the static counts are incomplete ({why}), so no latency can be predicted")


def predict(cost: CostReport, cal: Calibration, backend: str, precision: str, batch_size: int, *,
            calibrated_on: str | None = None, table: Sequence[ErrorEntry] | None = None,
            residuals: Mapping[str, Residual] | None = None,
            repeats: Sequence[RepeatEntry] | None = None) -> LatencyPrediction:
    """The predicted latency of one config on ``cal``'s GPU: the kernel model's times the backend's measured
    residual (analysis/predict_residual.py). ``calibrated_on``: the GPU the calibration was measured on, when
    ``cal`` was transferred from it (predict_transfer.transfer); ``table``: the validation table, ``residuals``:
    backend -> Residual, ``repeats``: how much measurements repeat on a second machine (default: the committed
    ones)."""
    require_complete(cost)
    layers = backend_layers(estimate_layers(cost, cal, precision, batch_size,
                                            layout_as_counted(cost, backend, precision)), cal, backend, precision)
    kernel_ms, overhead_ms, kernels = forward_ms(layers, cal, backend, cost.eager_ops, precision)
    bound = bound_of(backend, overhead_ms)
    total_ms = sum(est.time_ms for est in layers)
    outside_ms = sum(est.time_ms for est in layers if not est.calibrated)
    name = cal.gpu.name
    calibrated_on = calibrated_on or name
    count = "onnx" if cost.model.format == "onnx" else "pytorch"  # TorchScript and torch.export: the torch counter
    residual = residual_for(backend, bound, residuals)
    expected = expected_fields(validation_table() if table is None else table, name, calibrated_on, backend,
                               precision, calibration_features(cal), count, residual.fit, bound)
    return LatencyPrediction(gpu=name, backend=backend, precision=precision, batch_size=batch_size,
                             latency_ms=(kernel_ms + overhead_ms) * residual.factor, compute_ms=kernel_ms,
                             overhead_ms=overhead_ms, bound=bound, residual_factor=residual.factor,
                             residual_fit=residual.fit,
                             kernels=kernels, calibrated_on=calibrated_on, transferred=calibrated_on != name,
                             host_pooled_from=pooled_from(cal, backend, cost.eager_ops, bound),
                             calibration_features=list(calibration_features(cal)),
                             uncalibrated_pct=round(100.0 * outside_ms / total_ms, 1) if total_ms else 0.0,
                             **expected, **repeat_fields(repeat_table() if repeats is None else repeats, name, bound))


def with_measurement(pred: LatencyPrediction, results: Iterable[BenchResult]) -> LatencyPrediction:
    """``pred`` with the run's median of the same backend, precision and batch beside it, when measured."""
    for r in results:
        if (r.backend, r.precision, r.batch_size) == (pred.backend, pred.precision, pred.batch_size) \
                and r.status == "ok" and r.latency_ms is not None and r.latency_ms.p50 > 0:
            pred.measured_ms = r.latency_ms.p50
            pred.error_pct = (pred.latency_ms - pred.measured_ms) / pred.measured_ms * 100
            pred.measured_cpu_nodes = r.extra.cpu_nodes  # FNet's DFTs under ort-cuda: CPU time in the figure
    return pred
