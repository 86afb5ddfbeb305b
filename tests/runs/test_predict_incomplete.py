"""--predict on a model whose static count is incomplete: no prediction, and a note that says why (the seventh
held-out set's Funnel measured eight configs on the GPU machine and none was predicted, with no word of why)."""

from __future__ import annotations

from modelcost.core.types import RunReport
from modelcost.runs.predict import attach_predictions
from tests.analysis.test_predict import GEMM, cost_of, synthetic


def test_an_incomplete_count_predicts_nothing_and_says_why() -> None:
    cost = cost_of(GEMM)
    cost.compute.complete = False
    cost.compute.incomplete_reasons = ["aten::diff x2: no MAC formula"]
    report = attach_predictions(RunReport(cost=cost), "H100 SXM", [synthetic("H100 SXM")])
    assert report.predictions == []
    assert report.notes == ["predict: the static counts are incomplete (aten::diff x2: no MAC formula), so no "
                            "latency can be predicted"]


def test_a_complete_count_is_predicted_on_the_target_gpu() -> None:
    report = attach_predictions(RunReport(cost=cost_of(GEMM)), "H100 SXM", [synthetic("H100 SXM")])
    assert report.predictions and all(p.gpu == "H100 SXM" for p in report.predictions)
    assert not any("incomplete" in n for n in report.notes)
