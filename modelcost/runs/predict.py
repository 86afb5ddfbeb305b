"""``--predict`` (issue 28): predicted latencies from this machine's or another GPU's calibration, beside the
measured ones. The calibration is looked for before any work, so a missing one is one line at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.types import GpuSpec, RunReport
from modelcost.runs.gpu import this_gpu

NO_GPU_NOTE = "predict: no GPU to predict for (none here): name one with --target-gpu"


def calibrations() -> list[Any]:
    """Every calibration in the cache; none is a ModelcostError that says what to run."""
    from modelcost.core.calibration import folder, load_all

    found = load_all()
    if not found:
        raise ModelcostError(f"{{predict}}: no GPU calibration in {folder()}; run 'modelcost calibrate' on a GPU "
                             "first (the one to predict, or one like it)", fields="predict")
    return found


def target_gpus(here: GpuSpec | None, target_gpu: str | GpuSpec | None) -> list[GpuSpec]:
    """The GPUs --predict predicts for: this machine's (NVML, first: measurements go beside its predictions)
    and the named one."""
    from modelcost.hardware.specs import spec_from_table

    here = here if here is not None else this_gpu(required=False)
    gpus = [here] if here is not None and here.source == "nvml" else []
    if isinstance(target_gpu, str):
        gpus.append(spec_from_table(target_gpu))
    elif target_gpu is not None:
        gpus.append(target_gpu)
    return gpus


def attach_predictions(report: RunReport, target_gpu: str | None, found: list[Any]) -> RunReport:
    """``report.predictions`` on this machine's GPU (beside its measurements) and on ``target_gpu``."""
    from modelcost.analysis.predict import require_complete
    from modelcost.analysis.predict_transfer import predict_run

    assert report.cost is not None
    try:
        require_complete(report.cost)  # once for the run: not one note per config (predict_run's way)
    except ModelcostError as exc:
        report.notes.append(f"predict: {exc}")
        return report
    gpus = target_gpus(report.gpu, target_gpu)
    if not gpus:
        report.notes.append(NO_GPU_NOTE)
        return report
    report.predictions, notes = predict_run(report.cost, report.benchmarks, gpus, found)
    report.notes += notes
    return report


def attach_llm_predictions(report: Any, layer_counts: dict[tuple[int, int, int], Any], target_gpu: str | GpuSpec | None,
                           found: list[Any], backends: Sequence[str] | None) -> Any:
    """``report.predictions`` (an LlmReport's): TTFT and TPOT of every point under each backend (the measured
    ones, else ``backends``, else hf-eager and hf-static-compile) on this GPU, beside its measurements, and on
    ``target_gpu``."""
    from modelcost.analysis.predict_llm import DEFAULT_BACKENDS, LLM_BACKENDS, predict_point, with_measurements
    from modelcost.analysis.predict_transfer import calibration_for

    gpus = target_gpus(None, target_gpu)
    if not gpus:
        report.notes.append(NO_GPU_NOTE)
        return report
    measured = [r.backend for r in report.benchmarks if r.status == "ok"]
    wanted = [b for b in dict.fromkeys(measured or backends or DEFAULT_BACKENDS) if b in LLM_BACKENDS]
    for i, gpu in enumerate(gpus):
        cal, source = calibration_for(gpu, found)
        for point in report.points:
            prefill, decode = layer_counts[(point.batch_size, point.prompt_len, point.gen_len)]
            for backend in wanted:
                try:
                    pred = predict_point(prefill, decode, point, cal, backend, report.dtype, calibrated_on=source)
                except ModelcostError as exc:
                    report.notes.append(f"predict: {backend} batch {point.batch_size} on {cal.gpu.name}: {exc}")
                    continue
                if pred.ttft.transferred:
                    pred.ttft.notes.append(cal.notes[-1])
                report.predictions.append(with_measurements(pred, report.benchmarks) if i == 0 and
                                          gpu.source == "nvml" else pred)
    return report


def attach_train_predictions(report: Any, loaded: Any, statics: dict[str, Any], configs: Sequence[tuple[str, str, int]],
                             target_gpu: str | GpuSpec | None, found: list[Any]) -> Any:
    """``report.predictions`` (a TrainingReport's): the step time of each (precision, variant, batch) on this GPU,
    beside its measurement, and on ``target_gpu``; ``statics``: the training counts of each precision."""
    from modelcost.analysis.predict_train import predict_step, with_measurement
    from modelcost.analysis.predict_transfer import calibration_for
    from modelcost.analysis.torch_counter import analyze_torch

    gpus = target_gpus(None, target_gpu)
    if not gpus:
        report.notes.append(NO_GPU_NOTE)
        return report
    forward = analyze_torch(loaded)  # the per-layer forward the step's kernels are modelled from
    for i, gpu in enumerate(gpus):
        cal, source = calibration_for(gpu, found)
        for precision, variant, batch in configs:
            try:
                pred = predict_step(forward, statics[precision], cal, precision, variant, batch, calibrated_on=source)
            except ModelcostError as exc:
                report.notes.append(f"predict: {precision} {variant} batch {batch} on {cal.gpu.name}: {exc}")
                continue
            if pred.transferred:
                pred.notes.append(cal.notes[-1])
            report.predictions.append(with_measurement(pred, report.benchmarks) if i == 0 and gpu.source == "nvml"
                                      else pred)
    return report


def calibration_here() -> Any | None:
    """The cache's calibration of this machine's GPU (NVML), None when there is no GPU or it was never
    calibrated: what a sweep keeps beside its results (sweep/db.py, table calibrations)."""
    from modelcost.analysis.predict_transfer import canonical_name
    from modelcost.core.calibration import load_all

    here = this_gpu(required=False)
    if here is None or here.source != "nvml":
        return None
    name = canonical_name(here.name)
    return next((cal for cal in load_all() if canonical_name(cal.gpu.name) == name), None)


def prescreen_plan(report: RunReport, plan: Any, batches: Sequence[int], found: list[Any], constraints: Any,
                   objective: str) -> None:
    """``recommend --predict``: predict every (backend, precision, batch) of ``plan`` on this GPU and mark those
    that cannot win (decide/prescreen.py) as not to be measured (``plan.prescreened``: their rows, status
    "screened", the prediction in the reason); the notes say what was skipped, or why nothing was."""
    from modelcost.analysis.predict import predict
    from modelcost.analysis.predict_transfer import calibration_for
    from modelcost.core.types import BenchResult
    from modelcost.decide.prescreen import prescreen

    here = target_gpus(report.gpu, None)
    if not here or report.cost is None or not report.cost.compute.complete:
        why = "no GPU here to predict for" if not here else "no complete static counts to predict from"
        report.notes.append(f"pre-screen (--predict): every config measured: {why}")
        return
    cal, source = calibration_for(here[0], found)
    preds, unpredicted = [], []
    for backend, precision in plan.runnable:
        for batch in batches:
            try:
                preds.append(predict(report.cost, cal, backend, precision, batch, calibrated_on=source))
            except ModelcostError:
                unpredicted.append(f"{backend} {precision} batch {batch}")
    skip, notes = prescreen(preds, constraints, objective)
    report.notes += notes
    if unpredicted:
        report.notes.append(f"pre-screen (--predict): measured without a prediction (no model for them): "
                            f"{', '.join(unpredicted)}")
    plan.prescreened = {key: BenchResult(*key, "screened", reason=f"pre-screen (--predict): {why}")
                        for key, why in skip.items()}
