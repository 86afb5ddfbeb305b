"""``--predict`` (issue 28): predicted latencies from this machine's or another GPU's calibration, beside the
measured ones. The calibration is looked for before any work, so a missing one is one line at once."""

from __future__ import annotations

from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport
from modelcost.runs.gpu import this_gpu


def calibrations() -> list[Any]:
    """Every calibration in the cache; none is a ModelcostError that says what to run."""
    from modelcost.core.calibration import folder, load_all

    found = load_all()
    if not found:
        raise ModelcostError(f"{{predict}}: no GPU calibration in {folder()}; run 'modelcost calibrate' on a GPU "
                             "first (the one to predict, or one like it)", fields="predict")
    return found


def attach_predictions(report: RunReport, target_gpu: str | None, found: list[Any]) -> RunReport:
    """``report.predictions`` on this machine's GPU (beside its measurements) and on ``target_gpu``."""
    from modelcost.analysis.predict_transfer import predict_run
    from modelcost.hardware.specs import spec_from_table

    assert report.cost is not None
    here = report.gpu if report.gpu is not None else this_gpu(required=False)
    gpus = [here] if here is not None and here.source == "nvml" else []
    gpus += [spec_from_table(target_gpu)] if target_gpu else []
    if not gpus:
        report.notes.append("predict: no GPU to predict for (none here): name one with --target-gpu")
        return report
    report.predictions, notes = predict_run(report.cost, report.benchmarks, gpus, found)
    report.notes += notes
    return report
