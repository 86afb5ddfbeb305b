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

Predicted peak (``PEAK_BASIS``): simulated by ``training_peak`` (one steady-state step on meta tensors, every
storage followed from allocation to release, rounded like the CUDA caching allocator). It is run at the batch
asked for and at twice it; the live bytes after each op are then a line in the batch (every tensor's size is
affine in it), and the peak at batch B is the largest of those lines at B: ``peak_lines`` keeps the few lines
of their upper envelope (``envelope``), so other batches and the largest batch that fits need no new run.

Upper bound (``upper_bound``, the former prediction): persistent (weights, master weights, optimizer states) +
inputs + all saved activations + the outputs and their gradient + every parameter gradient, or the optimizer
step (+ one parameter-sized temporary) when larger; backward frees activations as it makes gradients, so the
simulated peak is below it.
"""

from __future__ import annotations

from modelcost.core.errors import ModelcostError
from modelcost.core.training import OPTIMIZERS, TrainConfig, TrainingMemory

OPTIMIZER_FLOPS_PER_ELEMENT = {"sgd": 2, "momentum": 4, "adam": 14, "adamw": 16}
OPTIMIZER_STATES_PER_ELEMENT = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
GRAD_SCALER_FLOPS_PER_ELEMENT = 2
PEAK_BASIS = ("simulated: one steady-state step (forward, loss, backward, optimizer step with foreach kernels) run "
              "on meta tensors, each storage counted from allocation to release and rounded up to 512 bytes as the "
              "CUDA caching allocator books it (what torch.cuda.max_memory_allocated reports), with the copies a "
              "matrix product makes of operands BLAS cannot read in place; other batch sizes from the same step at "
              "two batch sizes; not included: other cuBLAS / cuDNN workspaces; eager execution (torch.compile "
              "usually needs less)")
UPPER_BOUND_BASIS = ("persistent (weights, master weights, optimizer states) + inputs + saved activations + outputs "
                     "and their gradient + all parameter gradients, or the optimizer step (+ one parameter-sized "
                     "temporary) when larger")


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
    """The forward + backward part of the upper bound at the batch ``mem`` was counted at."""
    return _persistent(mem) + mem.gradients_bytes + mem.inputs_bytes + mem.activations_bytes + 2 * mem.outputs_bytes


def optimizer_step_bytes(mem: TrainingMemory) -> int:
    """Weights, masters, states, gradients and one parameter-sized temporary (gradients take the parameters'
    dtype, so the temporary is as large as the gradients): the optimizer-step part of the upper bound."""
    return _persistent(mem) + 2 * mem.gradients_bytes


def upper_bound(mem: TrainingMemory) -> int:
    """Every saved activation and every gradient alive at once (the prediction before the simulation)."""
    return max(step_bytes(mem), optimizer_step_bytes(mem))


Line = tuple[int, float]  # (bytes at batch 0, bytes per sample)


def lines_from_timelines(first: list[int], second: list[int], batch: int) -> list[Line]:
    """Live bytes after each op at ``batch`` and at ``2 * batch`` (the same ops in the same order) -> one line per
    op: intercept 2 x first - second, slope (second - first) / batch."""
    return [(2 * a - b, (b - a) / batch) for a, b in zip(first, second, strict=True)]


def pair_ops(first: list[str], second: list[str], max_skipped: int = 64) -> list[tuple[int, int]] | None:
    """Indices of the same op in two runs that differ by a few ops (a reduction over the batch that batch 1
    does not need, ...): walk both, skipping an op of the run with more left when they differ. None when more
    than ``max_skipped`` ops would be skipped."""
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < len(first) and j < len(second):
        if first[i] == second[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif len(second) - j >= len(first) - i:
            j += 1
        else:
            i += 1
        if (i + j) - 2 * len(pairs) > max_skipped:
            return None
    skipped = len(first) + len(second) - 2 * len(pairs)
    return pairs if skipped <= max_skipped else None


def envelope(lines: list[Line], from_batch: int = 1) -> list[Line]:
    """The lines of the upper envelope of ``lines`` over batches >= ``from_batch``, by growing slope (the
    convex hull trick): a line is dropped when no batch from ``from_batch`` on makes it the largest."""
    best: dict[float, int] = {}
    for a, s in lines:
        best[s] = max(best.get(s, a), a)
    hull: list[Line] = []
    for s, a in sorted(best.items()):
        while hull and hull[-1][0] + hull[-1][1] * from_batch <= a + s * from_batch:
            hull.pop()  # the steeper line is already at least as high at from_batch: it wins everywhere after
        while len(hull) >= 2 and _crossing(hull[-2], (a, s)) <= _crossing(hull[-2], hull[-1]):
            hull.pop()
        hull.append((a, s))
    return hull


def _crossing(p: Line, q: Line) -> float:
    """The batch where line q (steeper) overtakes line p."""
    return (p[0] - q[0]) / (q[1] - p[1])


def predicted_peak_at(mem: TrainingMemory, batch_size: int) -> int:
    """The predicted peak at ``batch_size``: the largest of ``peak_lines`` there (the line through the analysed
    batch when there are none)."""
    lines = mem.peak_lines or [(mem.fixed_bytes, mem.activations_per_sample_bytes)]
    return round(max(a + s * batch_size for a, s in lines))


def peak_line_at(lines: list[Line], batch_size: int) -> Line:
    """The line of ``lines`` that is the largest at ``batch_size``."""
    return max(lines, key=lambda line: line[0] + line[1] * batch_size)


def max_batch(mem: TrainingMemory, memory_bytes: int, margin: float) -> int:
    """The largest batch whose predicted peak fits ``memory_bytes x (1 - margin)`` (0 if none does)."""
    usable = memory_bytes * (1.0 - margin)
    lines = mem.peak_lines or [(mem.fixed_bytes, mem.activations_per_sample_bytes)]
    if predicted_peak_at(mem, 1) > usable:
        return 0
    fits = [int((usable - a) // s) for a, s in lines if s > 0]
    return max(0, min(fits)) if fits else 0
