"""``recommend --predict``'s pre-screen (issue 28): which candidate configs need no measurement because their
predicted latency, even at the predictor's expected error, cannot beat the best one or meet the limits.

Judging only (the predictions come from analysis/predict.py through runs/predict.py). Each prediction is taken as
the interval latency x (1 -/+ e), e = its validated p90 error (``LatencyPrediction.expected_error_p90_pct``):

* a config whose whole interval is above ``--max-latency-ms``, or whose throughput (batch / latency) is below
  ``--min-throughput`` even at the interval's low end, fails that limit: skipped;
* the reference: the best of the configs that surely meet every limit (their whole interval inside them). A
  latency limit is only sure when it is checked on the median or the mean (the prediction is a median; a p99
  limit is never sure from it), and a memory or accuracy limit is never sure (nothing here predicts them);
* a config whose best case (latency x (1 - e)) is worse on the objective than the reference's worst case
  (latency x (1 + e)) cannot win: skipped. Throughput compares batch / latency.

When any candidate's expected error is unknown, nothing is skipped and the note says so: a screen from a guessed
error would hide configs that might win.
"""

from __future__ import annotations

from collections.abc import Sequence

from modelcost.core.types import LatencyPrediction
from modelcost.decide.constraints import Constraints

Key = tuple[str, str, int]  # backend, precision, batch
SURE_STATS = ("p50", "mean")  # latency statistics a predicted median can vouch for


def _key(p: LatencyPrediction) -> Key:
    return p.backend, p.precision, p.batch_size


def _label(p: LatencyPrediction) -> str:
    return f"{p.backend} {p.precision} batch {p.batch_size}"


def _interval(p: LatencyPrediction) -> tuple[float, float]:
    e = (p.expected_error_p90_pct or 0.0) / 100
    return p.latency_ms * max(1 - e, 0.0), p.latency_ms * (1 + e)


def _ips(p: LatencyPrediction, latency_ms: float) -> float:
    return p.batch_size * 1000 / latency_ms if latency_ms > 0 else float("inf")


def _predicted(p: LatencyPrediction) -> str:
    return (f"predicted {p.latency_ms:.3f} ms, p90 error {p.expected_error_p90_pct:.0f}% "
            f"({_interval(p)[0]:.3f}-{_interval(p)[1]:.3f} ms)")


def _fails_limits(p: LatencyPrediction, c: Constraints) -> str | None:
    low, high = _interval(p)
    if c.max_latency_ms is not None and low > c.max_latency_ms:
        return f"{_predicted(p)}: above --max-latency-ms {c.max_latency_ms:g} even at its low end"
    if c.min_throughput_ips is not None and _ips(p, low) < c.min_throughput_ips:
        return f"{_predicted(p)}: under --min-throughput {c.min_throughput_ips:g}/s even at its low end"
    return None


def _surely_meets(p: LatencyPrediction, c: Constraints) -> bool:
    high = _interval(p)[1]
    if c.max_memory_gb is not None or c.max_accuracy_drop_pct is not None:
        return False
    if c.max_latency_ms is not None and (c.latency_stat not in SURE_STATS or high > c.max_latency_ms):
        return False
    return c.min_throughput_ips is None or _ips(p, high) >= c.min_throughput_ips


def prescreen(preds: Sequence[LatencyPrediction], constraints: Constraints,
              objective: str = "throughput") -> tuple[dict[Key, str], list[str]]:
    """(config -> why it is not measured, notes) for the candidates ``preds`` (module doc)."""
    unknown = [_label(p) for p in preds if p.expected_error_p90_pct is None]
    if unknown:
        return {}, [f"pre-screen (--predict): every config measured, none skipped: the predictor's expected error is "
                    f"unknown for {', '.join(unknown[:4])}{' ...' if len(unknown) > 4 else ''} (no validation row; "
                    "benchmarks/predict_validate.py measures it)"]
    skip = {_key(p): why for p in preds if (why := _fails_limits(p, constraints)) is not None}
    sure = [p for p in preds if _key(p) not in skip and _surely_meets(p, constraints)]
    if sure:
        if objective == "latency":
            ref = min(sure, key=lambda p: _interval(p)[1])
            bar = _interval(ref)[1]
            for p in preds:
                if _key(p) not in skip and _interval(p)[0] > bar:
                    skip[_key(p)] = (f"{_predicted(p)}: slower even at its low end than {_label(ref)} at its high "
                                     f"end ({bar:.3f} ms)")
        else:
            ref = max(sure, key=lambda p: _ips(p, _interval(p)[1]))
            bar = _ips(ref, _interval(ref)[1])
            for p in preds:
                if _key(p) not in skip and _ips(p, _interval(p)[0]) < bar:
                    skip[_key(p)] = (f"{_predicted(p)}: lower throughput even at its best "
                                     f"({_ips(p, _interval(p)[0]):,.0f}/s) than {_label(ref)} at its worst "
                                     f"({bar:,.0f}/s)")
    notes = [f"pre-screen (--predict): {len(preds) - len(skip)} of {len(preds)} predicted configs measured"
             + (f"; skipped: {', '.join(_label(p) for p in preds if _key(p) in skip)}" if skip else "")]
    if not sure and not skip:
        notes.append("pre-screen (--predict): no config surely meets every limit from its prediction alone (a "
                     "memory or accuracy limit, or a latency limit on a tail statistic), so none is ruled out "
                     "against another")
    return skip, notes
