"""Predicted time of one training step (``train --predict``, issue 28) from the forward's per-layer counts, the
training counts (analysis/training.py) and a GPU's calibration (analysis/predict.py models a forward).

A step = forward + backward + optimizer step:

* forward: every layer as ``predict.estimate_layers`` times it, at the step's batch and compute precision;
* backward: per layer, its compute time x r, r = the step's counted backward MACs / forward MACs (the input-
  and weight-gradient products are the forward's GEMMs with their dimensions permuted, run at the same
  calibrated efficiency), and its memory time x 2 for a GEMM / conv / attention layer (two products, each moving
  about what the forward's did) or x 1.5 for the rest (the backward reads the saved input and the incoming
  gradient and writes one gradient: 3 tensors for the forward's 2); a GEMM / conv layer's backward is 2 kernels;
* optimizer step: one memory-bound pass over what it reads and writes, from the counted memory: weights and
  optimizer state (and fp32 master weights) read and written, gradients read: 2 W + G + 2 S + 2 M bytes.

Backend model (``TRAIN_BACKENDS``): the eager variant issues every kernel from the host (autocast's fusion
table under AMP), the compile variant is torch.compile without CUDA graphs. Its expected error is the validation
row of backend ``train-<variant>``, or "error unknown".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from modelcost.analysis.predict import (
    LayerEstimate,
    estimate_layers,
    forward_ms,
    memory_us,
)
from modelcost.analysis.predict_table import ErrorEntry, expected_fields, validation_table
from modelcost.core.calibration import Calibration
from modelcost.core.calibration import features as calibration_features
from modelcost.core.errors import ModelcostError
from modelcost.core.training import TrainingBench, TrainingReport
from modelcost.core.types import CostReport, LatencyPrediction

# training precision -> the compute precision of its GEMMs (what the calibration's tables and peaks are kept by)
COMPUTE_PRECISION = {"fp32": "fp32", "tf32": "tf32", "amp_fp16": "fp16", "fp16": "fp16", "amp_bf16": "bf16",
                     "bf16": "bf16"}
MATMUL_KINDS = ("gemm", "conv", "attention")


def train_backend(variant: str, precision: str) -> str:
    """The forward model (predict.BACKEND_FAMILIES) of a training variant at a precision."""
    if variant == "compile":
        return "torch-compile"
    if variant == "eager":
        return "torch-autocast" if precision.startswith("amp_") else "torch-eager"
    raise ModelcostError(f"variant {variant!r}: no training prediction model (known: eager, compile)")


def backward_layers(forward: Sequence[LayerEstimate], ratio: float) -> list[LayerEstimate]:
    """The backward's kernels of each forward layer (module doc): compute x ``ratio``, memory x 2 split over
    two kernels for a GEMM-like layer, memory x 1.5 in one kernel for the rest."""
    out = []
    for est in forward:
        if est.kind in MATMUL_KINDS:
            half = LayerEstimate(f"{est.name}.grad", est.kind, est.compute_ms * ratio / 2, est.memory_ms)
            out += [half, dataclasses.replace(half, name=f"{est.name}.wgrad")]
        else:
            out.append(LayerEstimate(f"{est.name}.grad", est.kind, est.compute_ms * ratio, 1.5 * est.memory_ms))
    return out


def optimizer_bytes(report: TrainingReport) -> int:
    """Bytes the optimizer step moves: weights, states and master weights read and written, gradients read."""
    m = report.memory
    return 2 * m.weights_bytes + m.gradients_bytes + 2 * m.optimizer_state_bytes + 2 * m.master_weights_bytes


def predict_step(forward: CostReport, report: TrainingReport, cal: Calibration, precision: str, variant: str,
                 batch_size: int, *, calibrated_on: str | None = None,
                 table: Sequence[ErrorEntry] | None = None) -> LatencyPrediction:
    """The predicted time of one training step at ``batch_size`` (``forward`` and ``report`` counted at
    ``report.batch_size``; MACs scale with the batch, the optimizer's bytes do not)."""
    if not forward.compute.complete or report.uncounted_ops:
        raise ModelcostError("the static counts are incomplete, so no step time can be predicted")
    if precision not in COMPUTE_PRECISION:
        raise ModelcostError(f"training precision {precision!r}: no prediction model "
                             f"(known: {', '.join(COMPUTE_PRECISION)})")
    if report.forward_macs <= 0:
        raise ModelcostError("the forward counts no MACs, so the backward cannot be scaled from it")
    compute = COMPUTE_PRECISION[precision]
    fwd = estimate_layers(forward, cal, compute, batch_size)
    steps = [*fwd, *backward_layers(fwd, report.backward_macs / report.forward_macs)]
    kernel_ms, overhead_ms, kernels = forward_ms(steps, cal, train_backend(variant, precision))
    kernel_ms += memory_us(cal, optimizer_bytes(report)) / 1e3
    calibrated_on = calibrated_on or cal.gpu.name
    backend = f"train-{variant}"
    expected = expected_fields(validation_table() if table is None else table, cal.gpu.name, calibrated_on,
                               backend, precision, calibration_features(cal))
    return LatencyPrediction(gpu=cal.gpu.name, backend=backend, precision=precision, batch_size=batch_size,
                             latency_ms=kernel_ms + overhead_ms, compute_ms=kernel_ms, overhead_ms=overhead_ms,
                             kernels=kernels + 1, calibrated_on=calibrated_on,
                             transferred=calibrated_on != cal.gpu.name,
                             calibration_features=list(calibration_features(cal)), **expected)


def with_measurement(pred: LatencyPrediction, results: Sequence[TrainingBench]) -> LatencyPrediction:
    """``pred`` with the measured median step time of the same variant, precision and batch, when measured."""
    for r in results:
        if (f"train-{r.variant}", r.precision, r.batch_size) == (pred.backend, pred.precision, pred.batch_size) \
                and r.status == "ok" and r.step_time_ms:
            pred.measured_ms = r.step_time_ms
            pred.error_pct = (pred.latency_ms - r.step_time_ms) / r.step_time_ms * 100
    return pred
