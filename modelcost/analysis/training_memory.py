"""Training memory by part, optimizer-step FLOPs, and the largest batch that fits: pure arithmetic on what
the training counter measured (``analysis/training.py``). No torch here.

Optimizer step, FLOPs per trainable parameter element (docs/COUNTING.md):

* SGD ``p -= lr * g``: 2; SGD with momentum ``b = mu * b + g; p -= lr * b``: 4;
* Adam ``m = b1 m + (1 - b1) g`` (3), ``v = b2 v + (1 - b2) g^2`` (4), ``p -= lr * (m / c1) / (sqrt(v / c2) + eps)``
  (7: two bias corrections, sqrt, add eps, divide, multiply by lr, subtract): 14; AdamW adds the decoupled
  decay ``p -= (lr * wd) * p`` (multiply, subtract): 16;
* AMP fp16's grad scaler: unscaling (1 multiply) and the inf/nan check (1) per gradient element: 2 more.

Optimizer states, elements per trainable parameter element: SGD 0, momentum 1, Adam / AdamW 2; stored in the
parameters' dtype, or fp32 when fp32 master weights are kept for half-precision parameters.

Predicted peak (``PEAK_BASIS``): the persistent bytes (weights, master weights, optimizer states) + inputs +
all saved activations + the outputs and their gradient + every parameter gradient. Backward frees activations
as it makes gradients, so this bounds the peak from above by at most the smaller of the two; the optimizer step
(gradients + states + one parameter-sized temporary of the multi-tensor kernels) is taken when it is larger.
"""

from __future__ import annotations

from modelcost.core.errors import ModelcostError
from modelcost.core.training import OPTIMIZERS, TrainConfig, TrainingMemory

OPTIMIZER_FLOPS_PER_ELEMENT = {"sgd": 2, "momentum": 4, "adam": 14, "adamw": 16}
OPTIMIZER_STATES_PER_ELEMENT = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
GRAD_SCALER_FLOPS_PER_ELEMENT = 2
PEAK_BASIS = ("persistent (weights, master weights, optimizer states) + inputs + saved activations + outputs and "
              "their gradient + all parameter gradients (an upper bound: backward frees activations as it makes "
              "gradients), or the optimizer step (+ one parameter-sized temporary) when larger")


def check_optimizer(name: str) -> str:
    key = name.lower().replace("-", "").replace("_", "")
    key = {"sgdmomentum": "momentum", "sgdm": "momentum"}.get(key, key)
    if key not in OPTIMIZERS:
        raise ModelcostError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")
    return key


def optimizer_flops(trainable_elements: int, config: TrainConfig) -> int:
    per = OPTIMIZER_FLOPS_PER_ELEMENT[check_optimizer(config.optimizer)]
    if config.precision == "amp_fp16":
        per += GRAD_SCALER_FLOPS_PER_ELEMENT
    return trainable_elements * per


def is_pure_half(precision: str) -> bool:
    return precision in ("bf16", "fp16")


def persistent_bytes(weight_bytes: int, trainable_elements: int, trainable_bytes: int,
                     config: TrainConfig) -> tuple[int, int, int, int]:
    """(weights, gradients, optimizer states, master weights) in bytes. Gradients take the parameters' dtype."""
    states = OPTIMIZER_STATES_PER_ELEMENT[check_optimizer(config.optimizer)]
    master = is_pure_half(config.precision) and config.master_weights
    state_bytes = states * (4 * trainable_elements if master else trainable_bytes)
    return weight_bytes, trainable_bytes, state_bytes, (4 * trainable_elements if master else 0)


def _persistent(mem: TrainingMemory) -> int:
    return mem.weights_bytes + mem.master_weights_bytes + mem.optimizer_state_bytes


def step_bytes(mem: TrainingMemory) -> int:
    """The forward + backward bound at the batch ``mem`` was counted at."""
    return _persistent(mem) + mem.gradients_bytes + mem.inputs_bytes + mem.activations_bytes + 2 * mem.outputs_bytes


def optimizer_step_bytes(mem: TrainingMemory) -> int:
    """Weights, masters, states, gradients and one parameter-sized temporary (gradients take the parameters'
    dtype, so the temporary is as large as the gradients)."""
    return _persistent(mem) + 2 * mem.gradients_bytes


def peak(mem: TrainingMemory) -> int:
    return max(step_bytes(mem), optimizer_step_bytes(mem))


def max_batch(mem: TrainingMemory, memory_bytes: int, margin: float) -> int:
    """The largest batch whose predicted peak fits ``memory_bytes x (1 - margin)`` (0 if none does)."""
    usable = memory_bytes * (1.0 - margin)
    per_sample = mem.activations_per_sample_bytes
    if per_sample <= 0 or optimizer_step_bytes(mem) > usable:
        return 0
    return max(0, int((usable - mem.fixed_bytes) // per_sample))


def predicted_peak_at(mem: TrainingMemory, batch_size: int) -> int:
    """The predicted peak at another batch: fixed + per-sample slope x batch (exact for what grows linearly),
    or the optimizer step when that is larger."""
    return max(int(mem.fixed_bytes + mem.activations_per_sample_bytes * batch_size), optimizer_step_bytes(mem))
