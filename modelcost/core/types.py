"""The plain data every layer of modelcost passes around.

Standard library only. Counts are integers; byte sizes end in ``_bytes``; times in ``_ms`` / ``_s``.
MACs are stored, FLOPs are stored separately (FLOPs = 2 x MACs + the documented cost of the other ops,
see ``modelcost.analysis.formulas``), never one mistaken for the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from modelcost.core.assumptions import DataAssumption
from modelcost.core.measurement import FinalistRepeats, MeasurementInfo
from modelcost.core.prediction import LatencyPrediction
from modelcost.core.training import TrainingReport

Dim = int | str  # a concrete size, or the name of a symbolic dimension
Shape = tuple[Dim, ...]


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output: name, shape (symbolic dims as strings) and dtype name ("float32")."""

    name: str
    shape: Shape
    dtype: str

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)


@dataclass(frozen=True)
class ModelInfo:
    name: str
    source: str  # what the user passed: a path, "zoo:resnet50", "pkg.mod:factory"
    format: str  # "onnx" | "pytorch" | "torchscript" | "torch.export"
    file_size_bytes: int | None = None  # on disk, external data included; None for in-memory models
    opset: int | None = None


@dataclass
class LayerCost:
    """Cost of one ONNX node, or of the ops one PyTorch leaf module (or top-level call site) ran."""

    name: str
    op: str  # ONNX op type, or the module class / aten op name
    macs: int = 0
    flops: int = 0
    params: int = 0
    output_shapes: list[tuple[int, ...]] = field(default_factory=list)
    macs_dtype: str | None = None  # precision the MACs run in ("float32", "int8", ...)
    weight_bytes: int = 0
    activation_bytes: int = 0  # bytes of this layer's outputs
    status: str = "counted"  # "counted" | "zero_cost" | "uncounted"
    groups: int | None = None  # a convolution's groups (1: dense; = channels: depthwise); None for other layers
    # PyTorch only: the aten calls of this layer that launch a kernel in eager (core/eager_ops.py), and the tensor
    # elements of their inputs and outputs (what they read and write; an expanded view counts at its own size)
    eager_kernels: int | None = None
    eager_elements: int | None = None
    # ... of them, the calls that read an input across the output's fastest dimension (a transposed operand:
    # analysis/torch_counter.reads_across), which eager runs uncoalesced, and their elements
    eager_strided_kernels: int | None = None
    eager_strided_elements: int | None = None
    # the bytes of eager_elements in the dtypes the count ran them in (an fp32 upcast inside a bf16 model at 4 bytes)
    eager_bytes: int | None = None
    # times the layer ran in one forward: a module called again (ALBERT's one shared layer, ResNet's one ReLU per
    # block), or an aten op called again in one module's scope (attention's two bmm), sums its calls' costs and
    # outputs into one entry (PyTorch; an ONNX node runs once); call_macs: each call's MACs when it ran more than once
    calls: int = 1
    call_macs: list[int] = field(default_factory=list)
    # a convolution's window (ONNX's attribute names; PyTorch's kernel, stride and dilation), one entry per spatial
    # dim; None for other layers. The predictor times a dense 3 x 3 stride-1 conv from classes of its own: cuDNN
    # runs it by algorithms (Winograd at fp32) that a 1 x 1 conv of the same implicit-GEMM shape does not have
    kernel_shape: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    dilations: tuple[int, ...] | None = None
    # each call's (M, N, K) as one matmul where the output's shape does not tell them (an einsum: formulas.einsum_gemm),
    # one per call when every call has one, else empty: the predictor's GEMM class and bytes (predict.gemm_dims)
    gemm_shapes: list[tuple[int, int, int]] = field(default_factory=list)
    # PyTorch only: of eager_kernels, the pointwise calls and copies TensorIterator runs by its non-vectorized kernel
    # (an operand broadcast, of another layout or dtype, or a strided output: analysis/torch_counter.unvectorized;
    # not the transposed ones above), and their elements. RMSNorm's weight and rsqrt products and a rotary
    # embedding's ran at half the bandwidth of vectorized calls (H100, benchmarks/results/device_2026-11-26g/llm)
    eager_unvectorized_kernels: int | None = None
    eager_unvectorized_elements: int | None = None


@dataclass
class ParamStats:
    total: int = 0
    trainable: int | None = None  # PyTorch only; None for ONNX
    by_dtype: dict[str, int] = field(default_factory=dict)
    shared: int = 0  # parameters reachable under more than one name, counted once in total
    buffers: int = 0  # PyTorch buffers (running stats, ...), not in total
    constants: int = 0  # ONNX Constant-node / non-weight constant elements, not in total


@dataclass
class StorageStats:
    bytes: int = 0  # parameter bytes at their stored dtypes
    by_dtype: dict[str, int] = field(default_factory=dict)
    buffer_bytes: int = 0
    file_size_bytes: int | None = None
    external_data_bytes: int | None = None
    fp16_bytes: int = 0  # what the parameters would take stored at fp16 / int8 / int4
    int8_bytes: int = 0
    int4_bytes: int = 0


@dataclass
class ComputeStats:
    macs: int = 0
    flops: int = 0
    macs_by_dtype: dict[str, int] = field(default_factory=dict)
    flops_by_op: dict[str, int] = field(default_factory=dict)
    macs_by_op: dict[str, int] = field(default_factory=dict)
    uncounted_ops: dict[str, int] = field(default_factory=dict)  # op -> occurrences
    zero_cost_ops: dict[str, int] = field(default_factory=dict)  # op -> occurrences
    complete: bool = True  # False: some op that may carry MACs was not counted; the totals are lower bounds
    incomplete_reasons: list[str] = field(default_factory=list)  # one line per reason ("MatMul x16: ...")


@dataclass
class MemoryStats:
    weight_bytes: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    activation_bytes: int = 0  # sum of every intermediate tensor produced
    peak_activation_bytes: int = 0  # max bytes of simultaneously live activations, topological order
    arithmetic_intensity: float = 0.0  # FLOPs / (weight + input + activation bytes)


@dataclass(frozen=True)
class EagerOps:
    """The aten calls one forward makes, as eager execution issues them (core/eager_ops.py sorts them): those
    that launch a GPU kernel (a new tensor, or one written in place) and those that only make a view or read
    metadata. Both cost host time; the latency predictor's host model (analysis/predict.py) is priced per call.
    ``by_class``: the calls of each class whose host price differs in half precision (core/eager_ops.HALF_PRICED:
    convs, depthwise and grouped convs, BatchNorms; a class with no call is left out), which torch-half's host time
    adds at their calibrated extra price (``Calibration.half_call_us``)."""

    kernel_ops: int
    view_ops: int
    by_class: dict[str, int] = field(default_factory=dict)


@dataclass
class CostReport:
    """The static analysis of one model at one set of input shapes."""

    model: ModelInfo
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    params: ParamStats
    storage: StorageStats
    compute: ComputeStats
    memory: MemoryStats
    layers: list[LayerCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # assumptions: If branch taken, Loop trip count, ...
    problems: list[str] = field(default_factory=list)  # bad input met on the way (wrong input shape, ...): exit 1
    batch_size: int | None = None
    assumptions: list[DataAssumption] = field(default_factory=list)  # values the model asked on meta (PyTorch)
    eager_ops: EagerOps | None = None  # PyTorch only: the forward's aten calls (kernel-launching / views)


# ---------------------------------------------------------------------------------------------------
# Benchmarks


@dataclass(frozen=True)
class LatencyStats:
    """Summary of repeated latency samples, all in milliseconds."""

    count: int
    p50: float
    p90: float
    p95: float
    p99: float
    mean: float
    std: float
    min: float
    max: float

    @property
    def cv(self) -> float:
        """Coefficient of variation (std / mean)."""
        return self.std / self.mean if self.mean else 0.0


@dataclass(frozen=True)
class AccuracyStats:
    max_abs_err: float
    max_rel_err: float
    cosine: float
    top1_agreement: float | None = None  # only when the output looks like class scores
    reference: str = ""  # which config was the reference


@dataclass
class DeviceInfo:
    kind: str  # "cuda" | "cpu"
    name: str
    driver: str | None = None
    cuda: str | None = None
    compute_capability: str | None = None
    memory_bytes: int | None = None
    sm_count: int | None = None


@dataclass(frozen=True)
class RooflinePoint:
    """Where one measured config sits against the device's two roofs."""

    achieved_tflops: float
    peak_tflops: float  # spec (datasheet-consistent) dense peak for the precision used
    mfu: float  # achieved / spec peak
    achieved_gbps: float
    peak_gbps: float
    intensity: float  # FLOPs per byte moved
    ridge_point: float  # peak FLOP/s / peak bytes/s
    bound: str  # "compute" | "memory" | "overhead"
    lower_bound_ms: float  # max(FLOPs / peak, bytes / bandwidth)
    measured_over_bound: float
    bytes_moved: int
    bytes_basis: str  # which bytes were counted, in words
    measured_peak_tflops: float | None = None  # from `modelcost gpu --measure`, when cached
    mfu_measured: float | None = None
    roof: str = ""  # which roof is lower at this intensity: "compute" | "memory" (bound adds "overhead")
    compute_ms: float = 0.0  # FLOPs / peak FLOP/s
    memory_ms: float = 0.0  # bytes_moved / peak bandwidth
    peak_key: str = ""  # which peak was used: "fp32" (CUDA cores), "tf32", "bf16", "fp16", "int8", "fp8"
    flops: int = 0  # model FLOPs at the benchmark's batch size


@dataclass
class GpuSpec:
    """A GPU's theoretical limits, from NVML / CUDA properties or from the built-in table (what-if)."""

    name: str
    architecture: str
    compute_capability: str | None = None
    sm_count: int | None = None
    cuda_cores_per_sm: int | None = None
    tensor_cores_per_sm: int | None = None
    base_clock_mhz: int | None = None
    boost_clock_mhz: int | None = None
    max_clock_mhz: int | None = None
    tensor_clock_mhz: int | None = None  # the clock the datasheet's tensor peaks use
    memory_bytes: int | None = None
    bus_width_bits: int | None = None
    memory_clock_mhz: int | None = None
    bandwidth_gbps: float | None = None  # GB/s, 1e9 bytes
    power_limit_w: float | None = None
    driver: str | None = None
    peak_tflops: dict[str, float] = field(default_factory=dict)  # dense, by precision ("fp32", "bf16", ...)
    sparse_peak_tflops: dict[str, float] = field(default_factory=dict)  # 2:4 structured sparsity
    measured_tflops: dict[str, float] = field(default_factory=dict)  # from --measure
    measured_gbps: float | None = None
    source: str = "table"  # "nvml" | "table"
    l2_cache_bytes: int | None = None
    measurements: list[CeilingMeasurement] = field(default_factory=list)  # from --measure, with clocks
    notes: list[str] = field(default_factory=list)  # where a figure came from, what did not match


# What became of one benchmark config (docs/REPORT_SCHEMA.md, benchmarks[].status): measured; not run here
# (not installed, no GPU, a model kind it does not take); failed (the reason says how); out of memory (larger
# batches of that backend skipped); measured by the short screening run only and dropped (bench.screening)
Status = Literal["ok", "unavailable", "failed", "oom", "screened"]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass
class BenchResult:
    backend: str  # registry name, e.g. "torch-eager", "ort-cuda", "tensorrt"
    precision: str  # "fp32", "tf32", "fp16", "bf16", "int8", "fp8"
    batch_size: int
    status: Status
    reason: str | None = None
    latency_ms: LatencyStats | None = None  # device time (CUDA events) on GPU; wall time on CPU
    throughput_ips: float | None = None  # batch / median latency
    e2e_latency_ms: LatencyStats | None = None  # host-side, host<->device copies included
    first_inference_ms: float | None = None
    build_s: float | None = None  # compile / engine build / session creation
    gpu_memory_peak_bytes: int | None = None
    power_w_mean: float | None = None
    energy_j_per_inference: float | None = None
    gpu_util_mean: float | None = None
    sm_clock_mhz_mean: float | None = None
    throttle_reasons: list[str] = field(default_factory=list)
    accuracy: AccuracyStats | None = None
    roofline: RooflinePoint | None = None
    layer_profile: LayerProfile | None = None  # measured time per module / ONNX node (bench/profile.py)
    device: str = ""
    timing: str = ""  # what the latency figure includes, in words
    budget_hit: bool = False  # the time budget ended the run before the median settled to +-1%
    role: str = ""  # comparison runs: "base" | "candidate"; "" otherwise
    model: str = ""  # comparison runs: the name of the model this result timed; "" otherwise
    unstable: list[str] = field(default_factory=list)  # why the timings are too noisy to decide on (bench/stability.py)
    notes: list[str] = field(default_factory=list)
    extra: MeasurementInfo = field(default_factory=MeasurementInfo)  # how the figures were taken (JSON: extra)


INTERRUPTED_BY_USER = "the user (Ctrl-C)"  # what the library knows of a KeyboardInterrupt


def interrupted_note(by: str) -> str:
    return f"interrupted by {by}: this report holds what finished before it stopped"


@dataclass
class RunReport:
    """Everything one run produced: the static analysis, the benchmarks, the GPU. ``complete`` is False when
    the run was interrupted or a backend crashed and what is here is what finished."""

    cost: CostReport | None = None
    benchmarks: list[BenchResult] = field(default_factory=list)
    gpu: GpuSpec | None = None
    device: DeviceInfo | None = None
    complete: bool = True
    notes: list[str] = field(default_factory=list)
    created: str = ""  # ISO-8601 time
    command: str = ""
    what_if: list[WhatIf] = field(default_factory=list)  # lower bounds on the --target-gpu (and this GPU)
    layer_tables: list[LayerTable] = field(default_factory=list)  # per-layer roofline (terminal only, not JSON)
    training: TrainingReport | None = None  # modelcost train (core/training.py)
    predictions: list[LatencyPrediction] = field(default_factory=list)  # --predict (analysis/predict.py)
    # Run facts that code reads (the notes say them to a reader; nothing reads a note back):
    interrupted_by: str | None = None  # "the user (Ctrl-C)", "SIGTERM": set by ``mark_interrupted`` only
    no_roofline_reason: str | None = None  # why no config was placed on the roofline (runs/gpu.py)
    finalist_repeats: FinalistRepeats | None = None  # the finalists measured again (runs/finalists.py)
    cache_summary: str | None = None  # where the export / engine cache is and how large (runs/inference.py)

    def mark_interrupted(self, by: str = INTERRUPTED_BY_USER) -> None:
        """The one way a run is marked interrupted: ``complete`` False, ``interrupted_by`` and the one note that
        says it. A caller that knows better (the CLI knows the signal) marks it again: the note is replaced."""
        if self.interrupted_by is not None:
            self.notes[:] = [n for n in self.notes if n != interrupted_note(self.interrupted_by)]
        self.complete = False
        self.interrupted_by = by
        self.notes.append(interrupted_note(by))


# ---------------------------------------------------------------------------------------------------
# GPU limits, per-layer time and what-if estimates (modelcost.hardware, analysis/roofline.py)


@dataclass
class CeilingMeasurement:
    """One ceiling measured by ``modelcost gpu --measure``: a large matmul at one precision, or a
    device-to-device copy, with the clocks and throttle reasons NVML saw while it ran."""

    kind: str  # "matmul" | "copy"
    precision: str  # "fp32" (TF32 off), "tf32", "fp16", "bf16", "int8", "fp8"; "" for the copy
    value: float | None  # TFLOP/s (matmul) or GB/s (copy, read + write); None when it failed
    unit: str  # "TFLOP/s" | "GB/s"
    spec: float | None = None  # the spec peak for the same precision / the spec bandwidth
    fraction_of_spec: float | None = None
    shape: str = ""  # "8192x8192x8192" or "1.00 GiB"
    median_ms: float | None = None  # per iteration
    iterations: int = 0
    sm_clock_mhz_min: float | None = None
    sm_clock_mhz_mean: float | None = None
    mem_clock_mhz_mean: float | None = None
    power_w_mean: float | None = None
    throttle_reasons: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class LayerTime:
    """Measured time of one module (PyTorch, exclusive of its child modules) or ONNX node, per inference."""

    name: str
    op: str
    time_ms: float
    calls: int = 1  # calls per inference
    covers: list[str] = field(default_factory=list)  # original layer names it covers (ORT fused nodes)


@dataclass
class LayerProfile:
    """Per-layer time from the framework's own profiler (torch.profiler or ONNX Runtime profiling)."""

    source: str  # "torch.profiler" | "onnxruntime"
    time_kind: str  # what time_ms is, in words ("CUDA kernel time", "CPU time", ...)
    runs: int
    total_ms: float  # sum of the layers' times per inference
    wall_ms: float | None = None  # wall time per inference while profiling (profiler overhead included)
    layers: list[LayerTime] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LayerRoofline:
    """One row of "where the time goes vs where the FLOPs are"."""

    name: str
    op: str
    flops: int
    flops_share: float  # of the model's FLOPs
    bytes_moved: int
    intensity: float  # FLOPs per byte
    bound: str  # "compute" | "memory": this layer's intensity against the device's ridge point
    lower_bound_ms: float
    time_ms: float | None = None  # measured (LayerProfile), when there is one
    time_share: float | None = None
    achieved_tflops: float | None = None
    layers: int = 1  # static-analysis layers folded into this row


@dataclass(frozen=True)
class WhatIf:
    """Lower-bound latency of a model on a GPU from the table: max(FLOPs / peak, bytes / bandwidth)."""

    gpu: str
    precision: str
    peak_key: str
    batch_size: int
    flops: int
    bytes_moved: int
    bytes_basis: str
    peak_tflops: float
    peak_gbps: float
    compute_ms: float
    memory_ms: float
    lower_bound_ms: float
    bound: str  # "compute" | "memory"
    max_throughput_ips: float  # batch / lower bound: no run can beat it


@dataclass
class LayerTable:
    """One per-layer roofline table of a run: "where the time goes vs where the FLOPs are" for a profiled
    result, or the static per-layer intensity against the first GPU result's ridge point."""

    title: str
    rows: list[LayerRoofline]
    profile: LayerProfile | None = None
