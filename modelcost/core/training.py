"""The plain data of a training analysis: what one step (forward + backward + optimizer step) costs, the
memory it needs by part, and the measured steps.

Standard library only. MACs and FLOPs are stored apart (FLOPs = 2 x MACs + the documented cost of the other
ops); byte sizes end in ``_bytes``; times in ``_ms``. JSON: the ``training`` key (docs/REPORT_SCHEMA.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from modelcost.core.assumptions import DataAssumption
from modelcost.core.prediction import LatencyPrediction


OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
TRAIN_PRECISIONS = ("fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16")


@dataclass(frozen=True)
class TrainConfig:
    """How a step is set up. ``precision``: fp32, tf32 (fp32 storage, TF32 matmuls), amp_fp16 / amp_bf16
    (autocast; fp32 weights, gradients and optimizer states), bf16 / fp16 (pure: the model cast, no master
    copy unless ``master_weights``). ``checkpointing``: activation checkpointing of repeated blocks
    (analysis/training_checkpoint.py). ``kernels``: the device whose fused attention kernels the simulated step
    runs ("cuda" or "cpu": analysis/training_attention.py); a step measured on the CPU is simulated with "cpu"."""

    optimizer: str = "adamw"
    precision: str = "fp32"
    master_weights: bool = False
    checkpointing: bool = False
    input_requires_grad: bool = False
    memory_margin: float = 0.10  # share of the card kept free for the CUDA context, workspaces, fragmentation
    kernels: str = "cuda"


@dataclass
class TrainingMemory:
    """Bytes of one training step by part; ``peak_bytes`` is the predicted peak (how: ``peak_basis``)."""

    weights_bytes: int = 0
    gradients_bytes: int = 0
    optimizer_state_bytes: int = 0
    master_weights_bytes: int = 0
    activations_bytes: int = 0  # saved for backward (autograd's saved tensors, storages counted once)
    inputs_bytes: int = 0
    outputs_bytes: int = 0
    peak_bytes: int = 0  # the simulated step's largest live total (analysis/training_peak.py)
    peak_phase: str = ""  # where it is reached: "forward", "backward" or "optimizer"
    forward_peak_bytes: int = 0  # the largest live total in each phase of the simulated step
    backward_peak_bytes: int = 0
    optimizer_peak_bytes: int = 0
    peak_upper_bound_bytes: int = 0  # every saved activation and every gradient at once (the former prediction)
    activations_per_sample_bytes: float = 0.0  # how much the peak grows per extra sample, near batch_size
    fixed_bytes: int = 0  # the peak's part that does not grow with the batch, near batch_size
    peak_lines: list[tuple[int, float]] = field(default_factory=list)  # (fixed, per sample): peak(B) = max over them
    peak_basis: str = ""


@dataclass
class TrainingBench:
    """One measured training configuration (``status`` "ok" | "oom" | "failed" | "unavailable")."""

    precision: str
    batch_size: int
    status: str
    reason: str | None = None
    variant: str = "eager"  # "eager" | "compile"
    step_time_ms: float | None = None  # median
    step_time_p90_ms: float | None = None
    step_time_std_ms: float | None = None
    samples: int = 0
    samples_per_second: float | None = None
    tokens_per_second: float | None = None  # when the input is a token sequence
    peak_memory_bytes: int | None = None  # torch.cuda.max_memory_allocated over the timed steps
    predicted_peak_bytes: int | None = None  # the simulated step's, plus the cuBLAS workspaces on a GPU
    predicted_workspace_bytes: int | None = None  # of which cuBLAS workspaces (hardware/workspace.py)
    mfu: float | None = None  # model FLOPs per step / step time / spec peak of the precision
    mfu_measured: float | None = None  # against the measured matmul ceiling, when cached
    peak_tflops: float | None = None
    achieved_tflops: float | None = None
    memory_cap_bytes: int | None = None  # set_per_process_memory_fraction, when capped
    device: str = ""
    timing: str = ""  # what step_time_ms includes, in words


@dataclass
class TrainingReport:
    """Static cost of one training step at ``batch_size``, and the measured runs (``benchmarks``)."""

    model: str
    batch_size: int
    optimizer: str
    precision: str
    forward_macs: int = 0
    forward_flops: int = 0
    backward_macs: int = 0
    backward_flops: int = 0
    backward_input_grad_macs: int = 0
    backward_weight_grad_macs: int = 0
    optimizer_flops: int = 0
    flops_per_step: int = 0
    macs_per_step: int = 0
    macs_per_sample: int = 0
    flops_per_sample: int = 0
    tokens_per_sample: int | None = None
    trainable_params: int = 0
    frozen_params: int = 0
    memory: TrainingMemory = field(default_factory=TrainingMemory)
    max_batch_size: int | None = None
    max_batch_memory_bytes: int | None = None  # the memory the largest batch was fitted into
    max_batch_target: str | None = None  # which GPU (or "given")
    checkpointing: bool = False
    recompute_flops: int = 0  # forward FLOPs run again under activation checkpointing (not in flops_per_step)
    uncounted_ops: dict[str, int] = field(default_factory=dict)  # op -> occurrences, forward and backward
    benchmarks: list[TrainingBench] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the step failed on meta: figures are partial (exit 1)
    assumptions: list[DataAssumption] = field(default_factory=list)  # values the model asked on meta
    predictions: list[LatencyPrediction] = field(default_factory=list)  # --predict (analysis/predict_train.py)
