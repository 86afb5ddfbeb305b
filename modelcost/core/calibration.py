"""A GPU's calibration (issue 28): what its kernels really achieve, measured once by ``modelcost calibrate``
(bench/calibrate.py) and read by the latency predictor (analysis/predict.py).

The decomposition follows two published predictors. NeuSight (ASPLOS 2025) splits a kernel into output tiles,
runs them in waves of one tile per SM, and bounds each wave by the roofline; Habitat (USENIX ATC 2021) moves a
measured kernel time to another GPU by the ratio of waves and of the roof (bandwidth or clock) that bounds it.
Here every figure is a fraction of the GPU's own roof, so it moves to another GPU with that GPU's peaks:

* GEMM and conv (as an implicit GEMM: M = batch x output pixels, N = output channels, K = the rest) efficiency
  by shape class: each of M, N, K falls in one of ``SIZE_CLASSES`` (edges ``SIZE_EDGES``); depthwise convs
  have classes of their own (``shape_class(..., grouped=True)``; ``conv_gemm`` says which class a conv takes).
  Efficiency is the fraction of the dense peak reached *after* wave quantization: a GEMM of
  T = ceil(M/tile_m) x ceil(N/tile_n) output tiles runs in W = ceil(T / SMs) waves, of which only T / (W x SMs)
  of the slots are busy, so time = 2MNK / (peak x efficiency x T / (W x SMs)).
  The efficiency is kept as measured, above 1 where the library beat that model (cuBLAS picks smaller tiles or
  split-K for a grid of few tiles: an fp32 GEMM of M = 128 rows reached several times the 128 x 128-tile bound),
  so a GEMM of a calibrated shape is predicted at its measured time. Schema 1 capped it at 1, which predicted
  the batch-1 fp32 transformers of the first validation 1.9-3.6x too slow.
* the GEMM grid (``gemm_grid``: measured (precision, M, N, K, time) points, M over ``GRID_M`` and N, K over
  ``GRID_NK``, powers of two): where a GEMM's shape lies inside it, the predictor interpolates the reached
  fraction of the dense peak over log M, log N, log K between the eight measured corners
  (analysis/predict_gemm.py) instead of taking its class's one point through the wave model. The wave model with
  a fixed 128 x 128 tile priced a class's shapes below one wave at one time (8,192 x 256 x 256 as 4,096 x 256 x
  256: 64 and 128 tiles on 132 SMs), where cuBLAS's own tiles and waves made it twice the time. Added within
  schema 2 (feature "gemm_grid"): a file without it predicts by class.
* small-M GEMMs (M <= ``GEMV_MAX_M`` rows: decode steps, batch-1 linear layers): read-bound on the weight, so
  timed by weight bytes (``gemv``: measured (precision, M, N, K, time) points; the predictor interpolates the
  reached fraction of the bandwidth over log(weight bytes), between the measured M). A file with ``cold_curve``
  timed them with the weight in DRAM (a ring of copies), as a model reads it; an older one replayed one weight,
  which a 50 MB L2 holds up to its size (added within schema 2).
* precision modes: ``matmul_modes`` records, per table precision, the fp32 matmul mode torch reported while it
  was timed ("ieee" = TF32 off, "tf32"), set through hardware/tf32.py, the switch every measured backend uses
  (fp32 = TF32 off in torch and in ONNX Runtime's CUDA EP, tf32 = on); the predictor refuses a table timed in
  another mode than its precision runs in.
* memory-bound kernels by bytes moved: a time curve (a kernel of b bytes takes ``time_us``, interpolated
  linearly between measured sizes; larger ones at the last point's bandwidth); ``cold_curve``: the same with
  the data in DRAM, for sizes an L2 could hold (a decode step's KV-cache reads; added within schema 2).
* attention (SDPA) efficiency by query length and head size, quantized over (batch x heads x query tiles).
* per-kernel costs: ``launch_us`` by backend family (host time to issue one kernel of a small layer),
  ``kernel_gap_us`` (GPU time of one empty kernel back-to-back in a CUDA graph: what an extra, tiny kernel of
  a layer adds) and ``graph_replay_us`` (one graph launch). The GEMM, conv, memory and attention figures are
  timed inside CUDA graphs, so they hold no host time.
* fusion per backend family: kernels one layer of each kind becomes (eager, autocast, compile, ORT CUDA),
  learned from torch.profiler kernel counts of small calibration nets.
* the host's cost of an eager forward (``host_us``, eager and autocast): microseconds per aten call that launches
  a kernel and per call that only makes a view (core/eager_ops.py sorts them), fitted over host-bound calibration
  nets (bench/calibrate_host.py). A forward's aten calls are counted statically (CostReport.eager_ops), so the
  host time of a model whose layers run many small ops (an RMSNorm is seven, a rotary embedding ten) is priced by
  what it issues, not by its layers. Added within schema 2: a file without it predicts from ``launch_us``.
* layout-mismatched elementwise kernels (``strided_curve``, element bytes -> a time curve like ``memory_curve``):
  a copy or elementwise call whose operand is read across the output's fastest dimension (a transposed operand:
  Whisper's and MLP-Mixer's residual stream after a transpose) runs TensorIterator's non-vectorized kernel with
  uncoalesced reads, measured at 4-5x the contiguous time per byte on an H100 (benchmarks/kernel_mix.py). The
  static count tallies such calls per layer (``LayerCost.eager_strided_kernels`` / ``eager_strided_elements``).
  Added within schema 2: a file without it prices them as contiguous.
* non-vectorized elementwise kernels (``unvectorized_curve``, element bytes -> a time curve): a pointwise call or
  copy with an operand broadcast, laid out otherwise or of another dtype runs TensorIterator's non-vectorized kernel
  (``LayerCost.eager_unvectorized_kernels``, analysis/torch_counter.unvectorized), timed as a product of a matrix
  and a broadcast row (RMSNorm's weight). In the H100's eager Llama-3.2-1B prefill at batch 8 such calls (RMSNorm's
  products and widening casts, the rotary embedding's) moved 1.5-2.3 TB/s where vectorized ones moved 3.0-3.5, and
  the predictor priced them at the vectorized rate (benchmarks/results/device_2026-11-26g/llm). Added within schema
  2: a file without it prices them as vectorized.
* unaligned GEMMs (``unaligned_factor``, precision -> time of a GEMM whose N or K is not a multiple of 8
  elements over the same GEMM padded to one): cuBLAS's tensor-core kernels need 16-byte-aligned rows, and
  fall back to 2-byte-aligned ones (MLP-Mixer's 196 tokens, GPT-2's 50,257-word head). Added within schema 2.
* unaligned convs (``unaligned_conv_factor``, precision -> time of a channels-last cuDNN conv whose input or output
  channels are even but not a multiple of the alignment over the same conv with both padded up to one): on an H100,
  nets whose convs mostly have such channels (HarDNet-68: 88% of conv MACs; HRNet-W18-small 30%; MixNet-L 28%) ran
  fp16 at batch 64 1.5-2.3x their prediction under compile, torch-half and ONNX Runtime, their fp32 cases within
  ~15%. Added within schema 2: a file without it prices such a conv as an aligned one.
* convs of several channels per group (ResNeXt, RegNet) have classes of their own (``GROUPS`` key suffix), kept
  apart from dense and depthwise ones. Added within schema 2: a file without them prices such a conv as its
  groups' dense GEMMs (``conv_gemm``).
* dense 3 x 3 stride-1 convs have classes of their own (``THREE_BY_THREE`` key suffix): cuDNN runs them by
  algorithms of their own (Winograd at fp32, above 1 "of peak" by the direct MACs). Added within schema 2: a
  file without them prices such a conv in the dense classes, where 1 x 1 convs may have measured its class.
* grouped 1-D convs of a long window (``LONG_GROUPED`` key suffix: wav2vec 2.0's positional conv, 128 taps in 16
  groups) have classes of their own: cuDNN runs them by CUDA-core kernels at every precision. Added within schema 2
  (feature "long_grouped_convs"): a file without them prices such a conv in the ``GROUPS`` classes of its implicit
  GEMM and counts it as outside calibration.
* 3-D convs and dense 2-D convs of a non-square window have classes of their own (``VOLUMETRIC``,
  ``VOLUMETRIC_GROUPED`` for depthwise 3-D ones, ``NON_SQUARE`` key suffixes): cuDNN runs them by kernels of their
  own. Added within schema 2: a file without them prices such a conv in the 2-D classes of its implicit GEMM and
  counts it as outside calibration.
* ONNX Runtime's kernels against torch's (``ort_factor``, precision -> layer kind -> ORT time / torch time), from
  GPU-bound calibration nets run both ways (bench/calibrate_ort.py): an ort-cuda layer's time is the tables'
  (torch's kernels) times its factor. Added within schema 2: a file without it predicts ort-cuda as torch.
  A dense dilated conv takes the factor of a dilated net (``conv-dilated``, ``ort_conv_kind``): with ``use_tf32``
  off (below), ONNX Runtime's fp16 convs ran on CUDA-core kernels, the dilated ones 12x torch-half's time on an H100
  where the 3 x 3 net's read 4x (with it on, 1.8x and 2.0x). A file without it gives every conv the 3 x 3 net's
  ``conv``.
  Each precision's factor records the CUDA EP's ``use_tf32`` it was measured with (``ort_use_tf32``, feature
  "ort_fp16_default"). Until 1838ed7 the ort-cuda backend and this stage turned it off for fp16 sessions too, and
  ONNX Runtime's fp16 convs then ran without tensor cores (FCN-ResNet-50 at batch 64 205.5 ms, 37.4 ms with it on:
  benchmarks/results/device_2026-12-06). Added within schema 2: a file without it holds the factor of those
  sessions, which ort-cuda no longer builds; its fp16 predictions have no validation row of their own.
* each host process's pace beside its eager price (``host_processes``: ``HostProcess``, one per process
  ``host_us`` was measured in): the pure-Python loop the benchmarks time before and after every GPU loop
  (bench.timing.host_pace_us) and that process's eager cost per aten call. A process's host on the lent VMs runs
  at a pace of its own (BENCHMARKS.md, issue 27; calibrate's four processes read 14.7-23.3 us per eager call in
  one lease), so whether the price follows the pace is what these pairs and the measurements' own paces
  (``BenchResult.extra.host_pace_us``) can tell. Added within schema 2; not a prediction feature.
* the host's extra price of a call in half precision (``half_call_us``, precision -> class -> microseconds per call,
  the classes of core/eager_ops.HALF_PRICED): what a dense, depthwise or grouped conv or a BatchNorm costs the host in
  fp16 as torch-half issues it (the model cast with .half(), a conv net channels_last) over the same call in fp32
  contiguous (negative where the fp16 call is the cheaper), timed in calibrate's host processes
  (bench/calibrate_half.py). torch-half is the eager family, priced per call at eager fp32's ``host_us``; on an H100
  its conv nets ran at batch 1 1.30x eager fp32's time where that one price predicted 1.02x, a BatchNorm of fp16
  weights costing 37.9 us per call against 16.0 (benchmarks/results/device_2026-12-04/hostops). Only fp16 is measured:
  bf16 takes nothing. Added within schema 2 (feature "half_calls"): a file without it prices torch-half's calls at
  eager fp32's price.

The file: JSON, ``schema`` = ``SCHEMA``; one per GPU in ``<cache>/calibration/<gpu>.json``, written atomically
and recorded in the cache's manifest (core.owned), so ``modelcost cache --clear`` removes it. A file of another
schema version is refused by name, never half-read.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.types import GpuSpec

SCHEMA_VERSION = 2  # 2: uncapped efficiencies, bf16 tables, the small-M (GEMV) points, matmul_modes
SCHEMA = f"modelcost.calibration/{SCHEMA_VERSION}"
FOLDER = "calibration"

SIZE_EDGES = (128, 512, 2048, 8192)  # a dimension <= 128 is "s", <= 512 "m", <= 2048 "l", <= 8192 "xl"
SIZE_CLASSES = ("s", "m", "l", "xl", "xxl")
# The size calibrate measures each class at: the top of "s" (small dimensions are memory-bound, and a smaller
# one is then predicted by its bytes), the geometric middle of the others.
CLASS_SIZES = {"s": 128, "m": 256, "l": 1024, "xl": 4096, "xxl": 12288}

# A GEMM of at most this many rows is timed as weight-read-bound (``gemv``): the rows calibrate measures, from
# first principles the M at which a matrix-vector kernel (one output tile row, the weight streamed once) is
# what the libraries pick; beyond it the tiled GEMM classes apply.
GEMV_MAX_M = 16
GEMV_ROWS = (1, 4, 16)
# The GEMM grid's sizes (``gemm_grid``): rows from a batch-1 sequence's to a batch-64 image transformer's tokens,
# columns and depth from a small model's hidden size to a large MLP's
GRID_M = tuple(64 << i for i in range(10))  # 64 ... 32,768
GRID_NK = tuple(128 << i for i in range(7))  # 128 ... 8,192
# The fp32 matmul mode each table precision is timed (and every measured backend runs) in: the one mapping.
MATMUL_MODES = {"fp32": "ieee", "tf32": "tf32"}

# Layer kinds the predictor sorts layers into (analysis/predict.py) and fusion tables are kept by.
KINDS = ("gemm", "conv", "attention", "norm", "elementwise", "lookup")

# Backend -> (fusion family: whose kernels-per-layer table applies, overhead: "host" = every kernel issued by
# the host, "graph" = one CUDA-graph replay). The one owner of this mapping: calibrate and predict both ask it.
BACKEND_FAMILIES: dict[str, tuple[str, str]] = {
    "torch-eager": ("eager", "host"),
    "torch-half": ("eager", "host"),
    "torch-autocast": ("autocast", "host"),
    "torch-cudagraph": ("eager", "graph"),
    "torch-compile": ("compile", "host"),
    "torch-compile-cudagraph": ("compile", "graph"),
    "hf-static-compile": ("compile", "graph"),
    "ort-cuda": ("ort-cuda", "host"),
}
FAMILIES = ("eager", "autocast", "compile", "ort-cuda")


def size_class(n: float) -> str:
    """The class of one GEMM dimension (``SIZE_EDGES``): 's' (<= 128) ... 'xxl' (> 8192)."""
    for edge, name in zip(SIZE_EDGES, SIZE_CLASSES, strict=False):
        if n <= edge:
            return name
    return SIZE_CLASSES[-1]


def wave_utilization(tiles: float, sm_count: int) -> float:
    """Busy fraction of the SM slots: T tiles run in W = ceil(T / SMs) waves, T / (W x SMs) of them busy
    (100 tiles on 100 SMs: 1.0; 101 tiles: 2 waves, 101 / 200)."""
    tiles = max(math.ceil(tiles), 1)
    return tiles / (math.ceil(tiles / sm_count) * sm_count)


GROUPED = "grouped"  # the conv table's fourth key part: a depthwise conv, kept apart from dense ones
GROUPS = "groups"  # ... a conv of several channels per group (ResNeXt's 32 groups of 4-32 channels)
# ... a dense 3 x 3 stride-1 conv: cuDNN runs it by algorithms a 1 x 1 conv of its implicit-GEMM class has not
# (Winograd at fp32: priced from classes that 1 x 1 convs had measured, AlexNet, RepVGG-A0 and VGG-16 at batch 64
# in fp32 ran in 0.42-0.61 of their predicted time; benchmarks/results/device_2026-11-26j)
THREE_BY_THREE = "3x3"
# ... a 3-D conv (Conv3d: R3D's dense 3 x 3 x 3, X3D's pointwise 1 x 1 x 1), a depthwise one (X3D's 3 x 3 x 3), and
# a dense 2-D conv of a non-square window (TextNet's 1 x 3 and 3 x 1, Inception's 1 x 7): cuDNN runs them by kernels
# of their own. Priced from 2-D classes of square windows, X3D-M ran torch-half fp16 at batch 64 in 3.2x its
# prediction and TextNet-small compile fp16 in 0.44x (the twelfth held-out set, BENCHMARKS.md)
VOLUMETRIC, VOLUMETRIC_GROUPED, NON_SQUARE = "3d", "grouped-3d", "1xk"
# ... a grouped 1-D conv of several channels per group and a long window (more than ``LONG_TAPS`` taps): wav2vec 2.0's
# positional conv (768 -> 768, 128 taps, 16 groups: K = 6,144 per group) and its kin (HuBERT, WavLM, SEW). cuDNN runs
# it by CUDA-core kernels at every precision (a direct grouped kernel at batch 1, one implicit GEMM per group at batch
# 64, fp16 as fp32; benchmarks/results/device_2026-11-26f/kernel_mix). Priced in the ``GROUPS`` classes, which 3 x 3
# convs of K <= 576 measured, WavLM Base+ read fp16 -54% to -64% under compile and ONNX Runtime at batch 64 where its
# fp32 read within 15% (the eighteenth held-out set, BENCHMARKS.md)
LONG_GROUPED, LONG_TAPS = "grouped-1d-long", 16
# The output channels per group calibrate's ``GROUPS`` convs span (bench/calibrate.CONVS: 4 to 64, 3 x 3 kernels).
# A grouped conv of more per group is priced as its groups' dense GEMMs instead: SqueezeBERT's 4 groups of 192
# channels, priced from the 64-per-group class, read 3-10x slow (benchmarks/results/device_2026-11-26k/ninth).
GROUP_CHANNELS = (4, 64)
# The alignment (elements) cuBLAS's tensor-core GEMM kernels want of N and K at 2-byte precisions (16 bytes), and
# at TF32 (4-byte elements, 16 bytes); IEEE fp32 runs SIMT kernels that want none.
GEMM_ALIGN = {"fp16": 8, "bf16": 8, "tf32": 4}


def key_sort(key: str) -> str:
    """The sort of a conv / GEMM class key: '' (dense), ``GROUPED`` (depthwise), ``GROUPS``, ``THREE_BY_THREE``,
    ``VOLUMETRIC``, ``VOLUMETRIC_GROUPED`` or ``NON_SQUARE``."""
    parts = key.split()
    return parts[3] if len(parts) > 3 else ""


def shape_class(m: float, n: float, k: float, grouped: bool = False) -> str:
    """'m:s n:l k:m': the class key of a GEMM (or implicit-GEMM conv) of these dimensions; 'm:xxl n:s k:s
    grouped' for a grouped conv (a depthwise conv's K of 9 is a dense 1x1 conv's class, at a hundredth of its
    efficiency: one mean over both charged ResNet's 1x1 convs like depthwise ones)."""
    key = f"m:{size_class(m)} n:{size_class(n)} k:{size_class(k)}"
    return f"{key} {GROUPED}" if grouped else key


def window_sort(kernel_shape: Sequence[int] | None, groups: int = 1, out_channels: int = 0) -> str:
    """The class sort a conv's window asks for: ``VOLUMETRIC`` for a 3-D window, ``NON_SQUARE`` for a 2-D one whose
    sides differ, ``LONG_GROUPED`` for a 1-D one of more than ``LONG_TAPS`` taps whose ``groups`` hold several of its
    ``out_channels`` each, '' for the rest (other 1-D and square 2-D windows, the ones calibrate's ``CONVS`` have; an
    unknown window)."""
    window = tuple(kernel_shape or ())
    if len(window) == 3:
        return VOLUMETRIC
    if len(window) == 1 and int(window[0]) > LONG_TAPS and 1 < groups < out_channels:
        return LONG_GROUPED
    return NON_SQUARE if len(window) == 2 and window[0] != window[1] else ""


def conv_gemm(m: float, n: float, k: float, groups: int = 1, group_classes: bool = False,
              three_by_three: bool = False, window: str = "") -> tuple[str, float, int]:
    """(class key, N of one GEMM, GEMMs) of a conv as implicit GEMM(s): M = batch x output pixels, N = output
    channels, K = input channels per group x kernel area (the MACs of one output element).
    * dense (groups 1): one GEMM, a dense class; a 3 x 3 stride-1 one (``three_by_three``, where the calibration
      measured such convs apart: ``is_three_by_three``) in a class of its own (``THREE_BY_THREE``); a 3-D or a
      non-square one (``window``: its ``window_sort``, where the calibration measured such convs) in its sort's;
    * depthwise (groups = output channels): one GEMM over all channels, a grouped class (what calibrate measured:
      K of 9-49, memory-bound, a hundredth of a dense class's efficiency), a 3-D one (``window`` ``VOLUMETRIC``)
      in ``VOLUMETRIC_GROUPED``;
    * a grouped 1-D conv of a long window (``window`` ``LONG_GROUPED``, where the calibration measured such convs):
      one GEMM over all channels in a class of its own, whatever its channels per group;
    * grouped with several output channels per group (ResNeXt's 32 groups), where the calibration measured such
      convs (``group_classes``) and up to as many per group as they had (``GROUP_CHANNELS``): one GEMM over all
      channels in a class of its own (``GROUPS``), as cuDNN runs it (one kernel for all groups);
    * else: ``groups`` GEMMs of N / groups channels each, priced in the dense classes of that shape. A depthwise
      class for ResNeXt-50's grouped 3x3 convs (4-32 channels per group) predicted the whole net at 2.8x its
      measured time (torch.compile fp16, batch 64); these dense GEMMs of 4-32 columns, 1.5-3x (eager fp16)."""
    if window == LONG_GROUPED:
        return f"{shape_class(m, n, k)} {LONG_GROUPED}", n, 1
    if window and groups <= 1:
        return f"{shape_class(m, n, k)} {window}", n, 1
    if groups <= 1:
        return (f"{shape_class(m, n, k)} {THREE_BY_THREE}" if three_by_three else shape_class(m, n, k)), n, 1
    if window == VOLUMETRIC and groups >= n:
        return f"{shape_class(m, n, k)} {VOLUMETRIC_GROUPED}", n, 1
    if groups >= n:
        return shape_class(m, n, k, grouped=True), n, 1
    if group_classes and n / groups <= GROUP_CHANNELS[1]:
        return f"{shape_class(m, n, k)} {GROUPS}", n, 1
    return shape_class(m, n / groups, k), n / groups, int(groups)


ORT_CONV_KINDS = ("conv", "conv-dilated")  # ort_factor's conv kinds (ort_conv_kind)


def ort_conv_kind(dilations: Sequence[int] | None = None, groups: int = 1) -> str:
    """The ``ort_factor`` kind of a conv: "conv-dilated" for a dense conv of a dilation above 1 (calibrate's
    dilated net), "conv" (its 3 x 3 net) for every other. ONNX Runtime's fp16 convs run on CUDA-core kernels
    whose speed depends on the shape, and a dilated one worst: on an H100 (onnxruntime 1.31,
    benchmarks/ort_fp16_conv_diag.py) four 256-channel 3 x 3 convs at batch 64 ran fp16 in 4 ms by Winograd and
    in 17 ms at dilation 2 (fp32: 11.7). Kinds of their own for pointwise and grouped convs, measured on nets of
    their own, were tried and dropped: re-predicting sets 1-10 with them put ort-cuda fp16 at batch 64 at 31.5%
    and 32.7% median error against 29.6% with the 3 x 3 net's factor (BENCHMARKS.md)."""
    return "conv-dilated" if groups <= 1 and is_dilated(dilations) else "conv"


def is_dilated(dilations: Sequence[int] | None) -> bool:
    """Whether a conv has a dilation above 1 in some dimension; an unknown dilation counts as 1."""
    return any(int(d) > 1 for d in dilations or ())


def is_three_by_three(kernel_shape: Sequence[int] | None, strides: Sequence[int] | None = None,
                      dilations: Sequence[int] | None = None) -> bool:
    """Whether a conv's window is 3 x 3 at stride 1 and dilation 1 (``THREE_BY_THREE``'s classes); an unknown
    stride or dilation counts as 1."""
    return tuple(kernel_shape or ()) == (3, 3) and all(v == 1 for v in (*(strides or ()), *(dilations or ())))


@dataclass(frozen=True)
class GpuFingerprint:
    """Which GPU a calibration was measured on, and the figures a transfer to another GPU scales by."""

    name: str
    sm_count: int
    boost_clock_mhz: float
    bandwidth_gbps: float
    l2_cache_bytes: int | None = None
    compute_capability: str | None = None
    peak_tflops: dict[str, float] = field(default_factory=dict)

    def key(self) -> str:
        """A short tag of the figures: a calibration is only used for a GPU whose figures match."""
        l2 = f"{self.l2_cache_bytes // 2**20}MiB" if self.l2_cache_bytes else "l2?"
        return f"{self.sm_count}sm-{self.boost_clock_mhz:.0f}mhz-{self.bandwidth_gbps:.0f}gbps-{l2}"


def fingerprint(gpu: GpuSpec) -> GpuFingerprint:
    """The fingerprint of a GpuSpec (NVML or table); refuses one without the figures a prediction needs."""
    missing = [k for k in ("sm_count", "boost_clock_mhz", "bandwidth_gbps") if not getattr(gpu, k)]
    if missing:
        raise ModelcostError(f"GPU {gpu.name!r}: no {', '.join(missing)} known, so it cannot be calibrated or "
                             "predicted for")
    return GpuFingerprint(gpu.name, int(gpu.sm_count or 0), float(gpu.boost_clock_mhz or 0),
                          float(gpu.bandwidth_gbps or 0), gpu.l2_cache_bytes, gpu.compute_capability,
                          dict(gpu.peak_tflops))


@dataclass(frozen=True)
class TimePoint:
    """A memory-bound kernel moving ``size_bytes`` (read + written) took ``time_us``."""

    size_bytes: int
    time_us: float


@dataclass(frozen=True)
class AttentionPoint:
    """SDPA at this precision, query = key length and head size reached ``efficiency`` of the dense peak
    (after wave quantization over batch x heads x query tiles)."""

    precision: str
    seq_len: int
    head_dim: int
    efficiency: float


@dataclass(frozen=True)
class GemmPoint:
    """A GEMM of ``m`` rows, ``n`` columns and depth ``k`` at this precision took ``time_us``: a small-M point
    (``gemv``: y = x W^T, W of n x k, read from DRAM) or a point of the GEMM grid (``gemm_grid``: (m x k) @ (k x n))."""

    precision: str
    m: int
    n: int
    k: int
    time_us: float


@dataclass(frozen=True)
class Fusion:
    """Kernels one layer of each kind becomes under a backend family, and the nets it was learned from."""

    family: str
    kernels_per_layer: dict[str, float]
    learned_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostCost:
    """Host microseconds one eager forward spends per aten call that launches a kernel and per view call,
    and the calibration nets the two were fitted over."""

    kernel_op_us: float
    view_op_us: float
    learned_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostProcess:
    """One process ``host_us`` was measured in: its host's pace (microseconds of bench.timing.host_pace_us's
    loop, the mean of one run before and one after its measurements) and its eager price per kernel-launching aten
    call (None where it measured no eager price)."""

    pace_us: float
    eager_kernel_op_us: float | None = None


@dataclass
class Calibration:
    gpu: GpuFingerprint
    created: str = ""
    torch_version: str = ""
    tile_m: int = 128
    tile_n: int = 128
    attention_tile: int = 128  # query rows per attention block
    gemm_efficiency: dict[str, dict[str, float]] = field(default_factory=dict)  # precision -> class -> fraction
    conv_efficiency: dict[str, dict[str, float]] = field(default_factory=dict)
    memory_curve: list[TimePoint] = field(default_factory=list)
    attention: list[AttentionPoint] = field(default_factory=list)
    gemv: list[GemmPoint] = field(default_factory=list)
    matmul_modes: dict[str, str] = field(default_factory=dict)  # table precision -> "ieee" | "tf32" when timed
    launch_us: dict[str, float] = field(default_factory=dict)  # backend family -> host us per kernel
    kernel_gap_us: float = 0.0
    graph_replay_us: float = 0.0
    fusion: dict[str, Fusion] = field(default_factory=dict)
    host_us: dict[str, HostCost] = field(default_factory=dict)  # family -> host cost per aten call (eager ones)
    host_processes: list[HostProcess] = field(default_factory=list)  # each host_us process's pace and eager price
    # not measured: set on a prediction's copy where the stored calibrations' pooled host_us stands in for this
    # one's (analysis/predict_host.py): how many calibrations were pooled; 0: host_us is this calibration's own
    host_pooled_from: int = 0
    # precision -> HALF_PRICED class -> extra host us per call over the same call in fp32 (torch-half's host time)
    half_call_us: dict[str, dict[str, float]] = field(default_factory=dict)
    ort_factor: dict[str, dict[str, float]] = field(default_factory=dict)  # precision -> kind -> ORT / torch time
    # precision -> the CUDA EP's use_tf32 its ort_factor was measured with (bench.backends.ort.use_tf32); empty:
    # before 1838ed7, when fp16 sessions too ran with it off
    ort_use_tf32: dict[str, str] = field(default_factory=dict)
    strided_curve: dict[str, list[TimePoint]] = field(default_factory=dict)  # element bytes ("2", "4") -> curve
    unvectorized_curve: dict[str, list[TimePoint]] = field(default_factory=dict)  # element bytes -> curve
    # memory_curve with the data in DRAM (a ring of tensors twice the L2): KV-cache reads; its calibrate also timed
    # the gemv points on a ring of weights (feature "cold_weights")
    cold_curve: list[TimePoint] = field(default_factory=list)
    unaligned_factor: dict[str, float] = field(default_factory=dict)  # precision -> unaligned / padded GEMM time
    # precision -> unaligned / padded channels-last conv time (channels per group not a multiple of GEMM_ALIGN)
    unaligned_conv_factor: dict[str, float] = field(default_factory=dict)
    gemm_grid: list[GemmPoint] = field(default_factory=list)  # GEMMs over GRID_M x GRID_NK x GRID_NK, timed
    elapsed_s: float = 0.0
    # seconds per calibrate stage (its progress messages, summed where one repeats), for the 3-minute bar
    stage_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    schema: str = SCHEMA


# the optional mechanisms a calibration may hold
FEATURES = ("host_us", "ort_factor", "grouped_convs", "group_convs", "strided_copies", "unaligned_gemms",
            "short_attention", "cold_weights", "gemm_grid", "large_m_convs", "conv_3x3", "ort_conv_kinds",
            "conv_windows", "unvectorized_elementwise", "unaligned_convs", "half_calls", "ort_fp16_default",
            "long_grouped_convs")
SHORT_ATTENTION_TOKENS = 128  # attention points below this length: one CTA per (batch, head), calibrated apart


def features(cal: Calibration) -> tuple[str, ...]:
    """The optional mechanisms this calibration holds ("host_us", "ort_factor", "grouped_convs": a conv table
    that keeps depthwise convs apart, "group_convs": ... and convs of several channels per group,
    "strided_copies": ``strided_curve``, "unaligned_gemms": ``unaligned_factor``, "short_attention": attention
    points under ``SHORT_ATTENTION_TOKENS``, "cold_weights": ``cold_curve`` and gemv points timed on weights in
    DRAM, "gemm_grid": ``gemm_grid``, "large_m_convs": dense conv classes of M above 8,192 with N and K above 128
    (bench/calibrate.LARGE_M_CONVS), "conv_3x3": classes of dense 3 x 3 stride-1 convs kept apart,
    ``THREE_BY_THREE``), "ort_conv_kinds": ``ort_factor`` of each of ``ORT_CONV_KINDS``, not the 3 x 3 net's
    alone), "conv_windows": classes of 3-D and of non-square 2-D convs kept apart, ``VOLUMETRIC``, ``NON_SQUARE``,
    "unvectorized_elementwise": ``unvectorized_curve``, "unaligned_convs": ``unaligned_conv_factor``, "half_calls":
    ``half_call_us``, "ort_fp16_default": an fp16 ``ort_factor`` measured with ``use_tf32`` at ONNX Runtime's
    default, as ort-cuda runs fp16 since 1838ed7: ``ort_use_tf32``, "long_grouped_convs": classes of grouped 1-D convs
    of a long window kept apart, ``LONG_GROUPED``). A prediction
    made with other ones is another model, so the validation table keeps them with each row
    (analysis/predict_table.validated_row)."""
    sorts = conv_sorts(cal)
    held = {"host_us": bool(cal.host_us), "ort_factor": bool(cal.ort_factor), "grouped_convs": GROUPED in sorts,
            "group_convs": GROUPS in sorts, "strided_copies": bool(cal.strided_curve),
            "unaligned_gemms": bool(cal.unaligned_factor),
            "short_attention": any(p.seq_len < SHORT_ATTENTION_TOKENS for p in cal.attention),
            "cold_weights": bool(cal.cold_curve), "gemm_grid": bool(cal.gemm_grid),
            "large_m_convs": any(_large_m(key) for table in cal.conv_efficiency.values() for key in table),
            "conv_3x3": THREE_BY_THREE in sorts,
            "ort_conv_kinds": any(k in f for f in cal.ort_factor.values() for k in ORT_CONV_KINDS[1:]),
            "conv_windows": bool({VOLUMETRIC, NON_SQUARE} & sorts),
            "unvectorized_elementwise": bool(cal.unvectorized_curve),
            "unaligned_convs": bool(cal.unaligned_conv_factor), "half_calls": bool(cal.half_call_us),
            "ort_fp16_default": "fp16" in cal.ort_factor and cal.ort_use_tf32.get("fp16") == "1",
            "long_grouped_convs": LONG_GROUPED in sorts}
    return tuple(name for name in FEATURES if held[name])


def _large_m(key: str) -> bool:
    """Whether a conv class key is dense with M 'xxl' and N and K above 's' (``features``' "large_m_convs")."""
    m, n, k = key.split()[:3]
    return key_sort(key) == "" and m == "m:xxl" and n != "n:s" and k != "k:s"


def conv_sorts(cal: Calibration) -> set[str]:
    """The sorts of conv class the calibration's conv tables keep (``key_sort``: '' dense, ``GROUPED``,
    ``GROUPS``, ``THREE_BY_THREE``)."""
    return {key_sort(key) for table in cal.conv_efficiency.values() for key in table}


def to_dict(cal: Calibration) -> dict[str, Any]:
    doc = dataclasses.asdict(cal)
    doc.pop("host_pooled_from")  # a prediction's copy's, not a measurement: never written
    return {"schema": doc.pop("schema"), **doc}


def from_dict(doc: Any, where: str = "calibration") -> Calibration:
    """The Calibration a JSON document holds; refuses another schema version, naming both."""
    if not isinstance(doc, dict):
        raise ModelcostError(f"{where}: not a calibration (a JSON object is expected)")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise ModelcostError(f"{where}: calibration schema {schema!r}, this modelcost reads {SCHEMA!r}; "
                             "run 'modelcost calibrate' again on that GPU")
    try:
        fusion = {k: Fusion(v["family"], dict(v["kernels_per_layer"]), tuple(v.get("learned_from", ())))
                  for k, v in doc.get("fusion", {}).items()}
        host = {k: HostCost(float(v["kernel_op_us"]), float(v["view_op_us"]), tuple(v.get("learned_from", ())))
                for k, v in doc.get("host_us", {}).items()}
        return Calibration(
            gpu=GpuFingerprint(**doc["gpu"]), created=doc.get("created", ""),
            torch_version=doc.get("torch_version", ""), tile_m=int(doc["tile_m"]), tile_n=int(doc["tile_n"]),
            attention_tile=int(doc.get("attention_tile", 128)),
            gemm_efficiency={p: dict(t) for p, t in doc["gemm_efficiency"].items()},
            conv_efficiency={p: dict(t) for p, t in doc["conv_efficiency"].items()},
            memory_curve=[TimePoint(**p) for p in doc["memory_curve"]],
            attention=[AttentionPoint(**p) for p in doc["attention"]],
            gemv=[GemmPoint(**p) for p in doc["gemv"]], matmul_modes=dict(doc["matmul_modes"]),
            launch_us={k: float(v) for k, v in doc["launch_us"].items()}, kernel_gap_us=float(doc["kernel_gap_us"]),
            graph_replay_us=float(doc["graph_replay_us"]), fusion=fusion, host_us=host,
            host_processes=[HostProcess(float(h["pace_us"]), None if h.get("eager_kernel_op_us") is None
                                        else float(h["eager_kernel_op_us"])) for h in doc.get("host_processes", [])],
            half_call_us={p: {c: float(us) for c, us in t.items()} for p, t in doc.get("half_call_us", {}).items()},
            ort_factor={p: {k: float(v) for k, v in t.items()} for p, t in doc.get("ort_factor", {}).items()},
            ort_use_tf32={str(p): str(v) for p, v in doc.get("ort_use_tf32", {}).items()},
            strided_curve={e: [TimePoint(**p) for p in c] for e, c in doc.get("strided_curve", {}).items()},
            unvectorized_curve={e: [TimePoint(**p) for p in c]
                                for e, c in doc.get("unvectorized_curve", {}).items()},
            unaligned_factor={p: float(v) for p, v in doc.get("unaligned_factor", {}).items()},
            unaligned_conv_factor={p: float(v) for p, v in doc.get("unaligned_conv_factor", {}).items()},
            cold_curve=[TimePoint(**p) for p in doc.get("cold_curve", [])],
            gemm_grid=[GemmPoint(**p) for p in doc.get("gemm_grid", [])],
            elapsed_s=float(doc.get("elapsed_s", 0.0)),
            stage_s={str(k): float(v) for k, v in doc.get("stage_s", {}).items()}, notes=list(doc.get("notes", [])))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelcostError(f"{where}: a {SCHEMA} file with a missing or malformed key ({exc})") from None


def folder(cache_dir: str | Path | None = None) -> Path:
    from modelcost.core.env import cache_root

    return Path(cache_dir or cache_root()) / FOLDER


def slug(gpu_name: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", gpu_name.lower()).strip("-") or "gpu"


def path_for(gpu_name: str, cache_dir: str | Path | None = None) -> Path:
    return folder(cache_dir) / f"{slug(gpu_name)}.json"


def save(cal: Calibration, cache_dir: str | Path | None = None) -> Path:
    """Write ``cal`` atomically into the cache and record it in the cache's manifest."""
    from modelcost.core import owned
    from modelcost.core.env import cache_root

    root = Path(cache_dir or cache_root())
    data = (json.dumps(to_dict(cal), indent=2) + "\n").encode("utf-8")
    return owned.write(root, path_for(cal.gpu.name, root), data)


def load(path: str | Path) -> Calibration:
    """The calibration in ``path``; one line naming the file when it cannot be read or is of another schema."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelcostError(f"calibration {path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ModelcostError(f"calibration {path}: not JSON ({exc})") from None
    return from_dict(doc, f"calibration {path}")


def load_all(cache_dir: str | Path | None = None) -> list[Calibration]:
    """Every readable calibration of this schema in the cache (others are skipped: ``calibrate`` rewrites them)."""
    found = []
    base = folder(cache_dir)
    for path in sorted(base.glob("*.json")) if base.is_dir() else []:
        try:
            found.append(load(path))
        except ModelcostError:
            continue
    return found
