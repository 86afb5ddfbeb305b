"""The predictor's validation table (``predict_errors.json``, written by benchmarks/predict_validate.py): its rows,
and which row's error a prediction quotes (analysis/predict.py's module doc says why a prediction carries one).

A row holds only for predictions of the same GPU, calibration GPU, backend and precision, from a calibration of
the same optional mechanisms (core.calibration.features), the same sort of static count (PyTorch or ONNX) and
the same measured-residual fit (analysis/predict_residual.py); for any other the prediction reads "error
unknown" and says why. Never a guess.

A row may cover one bound only (``ErrorEntry.bound``: the host-bound or the device-bound predictions of its
validation, analysis/predict.bound_of): a prediction quotes its own bound's row where the table has one, else the
row of all its cases. On the seventh held-out set torch-half's host-bound cases erred by a median 51% and its
device-bound ones by 22%; one row for both would have quoted 34% to each.

The file also holds how much a measurement itself repeats on a second machine of the same GPU kind, by bound
(``RepeatEntry``, written by benchmarks/measure_repeat.py): over two pairs of H100 leases the same host-bound configs
moved by a median 15% (p90 56%, 36 configs) and the device-bound ones by 1.1% (p90 12%, 60). A prediction carries its
bound's figure (``repeat_fields``): no prediction of a host-bound config can be held closer than that.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelcost.core.calibration import FEATURES as CALIBRATION_FEATURES

VALIDATION_FILE = Path(__file__).with_name("predict_errors.json")


@dataclass(frozen=True)
class ErrorEntry:
    """One row of the validation table: the error of predictions for this GPU, calibration, backend and
    precision over ``cases`` held-out models and batches."""

    gpu: str
    calibrated_on: str
    backend: str
    precision: str
    cases: int
    median_pct: float
    p90_pct: float
    worst_pct: float
    features: tuple[str, ...] = ()  # the calibration's optional mechanisms it was validated with (core.calibration)
    low_cases: int | None = None  # of ``cases``, those predicted below the measurement (None: an older row)
    count: str = "pytorch"  # the static count the validated predictions came from ("pytorch" or "onnx")
    residual: str = ""  # the measured residual's fit the predictions took (analysis/predict_residual.py; "": none)
    bound: str = ""  # "host" / "device": the row holds that bound's cases only (analysis/predict.bound_of); "": all


@dataclass(frozen=True)
class RepeatEntry:
    """How much the measurement of the same configs moved from one machine of a GPU kind to another, for one
    bound: median, p90 and worst of |second / first - 1| x 100 over ``cases`` configs."""

    gpu: str
    bound: str  # "host" / "device" (analysis/predict.bound_of, as the first machine's predictions judged them)
    cases: int
    median_pct: float
    p90_pct: float
    worst_pct: float


def table_document(path: str | Path | None = None) -> Any:
    """The table file's parsed JSON (``VALIDATION_FILE`` by default), read once per version of the file (its path,
    size and modification time): every prediction takes both its error rows and its repeat figures from it. Raises
    OSError / ValueError as reading it would."""
    where = Path(path or VALIDATION_FILE)
    stat = where.stat()
    return _parsed(str(where), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _parsed(where: str, mtime_ns: int, size_bytes: int) -> Any:
    """``where``'s JSON; the time and size only key the cache (``table_document``). Callers read it, never change it."""
    return json.loads(Path(where).read_text(encoding="utf-8"))


def repeat_table(path: str | Path | None = None) -> list[RepeatEntry]:
    """The committed repeat figures (benchmarks/measure_repeat.py writes them); empty when there are none."""
    try:
        return [RepeatEntry(**row) for row in table_document(path).get("repeats", [])]
    except (OSError, ValueError, TypeError):
        return []


def repeat_fields(repeats: Sequence[RepeatEntry], gpu: str, bound: str) -> dict[str, Any]:
    """The repeat fields of a LatencyPrediction of ``bound`` on ``gpu`` (None where not measured)."""
    row = next((r for r in repeats if (r.gpu, r.bound) == (gpu, bound)), None)
    return {"measured_repeat_pct": row.median_pct if row else None,
            "measured_repeat_p90_pct": row.p90_pct if row else None}


def validation_table(path: str | Path | None = None) -> list[ErrorEntry]:
    """The committed validation table (benchmarks/predict_validate.py writes it); empty when there is none."""
    try:
        return [ErrorEntry(**{**row, "features": tuple(row.get("features", ()))})
                for row in table_document(path).get("entries", [])]
    except (OSError, ValueError, TypeError):
        return []


def validated_row(table: Sequence[ErrorEntry], gpu: str, calibrated_on: str, backend: str, precision: str,
                  features: Sequence[str] = (), count: str = "pytorch", residual: str = "",
                  bound: str = "") -> tuple[ErrorEntry | None, str]:
    """The validation row for exactly this GPU, calibration GPU, backend and precision, validated with a
    calibration of the same ``features`` (core.calibration.features: a prediction from a calibration with other
    mechanisms is another model) and from the same sort of static ``count`` (an ONNX file's nodes are not the
    PyTorch layers the calibration's fusion and ORT factors were learned on), under the same ``residual`` fit
    (analysis/predict_residual.py: another factor is another predictor), and the basis text;
    (None, "error unknown: ...") when there is none. Never a guess. The row of the prediction's ``bound`` comes
    before the row of all cases (module doc)."""
    rows = sorted((r for r in table if (r.gpu, r.calibrated_on, r.backend, r.precision) == (gpu, calibrated_on,
                                                                                           backend, precision)
                   and r.bound in {bound, ""}), key=lambda r: r.bound != bound)
    # the table holds a row per calibration feature set (the window convs' calibrations have rows of their own):
    # the prediction's own set is looked for among them all, not only in the first row (which read every
    # calibration with window convs as unknown while its rows were there)
    if not rows:
        return None, (f"error unknown: the validation table has no entry for {backend} {precision} on {gpu} "
                      f"calibrated on {calibrated_on} (benchmarks/predict_validate.py makes one)")
    same = [r for r in rows if tuple(r.features) == tuple(features)]
    if not same:
        row = rows[0]
        return None, (f"error unknown: {backend} {precision} on {gpu} calibrated on {calibrated_on} was "
                      f"validated with a calibration {_with(row.features)}, and this one is "
                      f"{_with(features)}{_differ(row.features, features)} (benchmarks/predict_validate.py "
                      "validates it)")
    row = same[0]
    if row.count != count:
        return None, (f"error unknown: {backend} {precision} on {gpu} was validated on predictions from "
                      f"{_COUNTS.get(row.count, row.count)}, and this one is from {_COUNTS.get(count, count)} "
                      "(benchmarks/predict_validate_onnx.py measures that gap; no table row comes from it)")
    if row.residual != residual:
        return None, (f"error unknown: {backend} {precision} on {gpu} was validated {_fit(row.residual)}, and "
                      f"this prediction is {_fit(residual)} (benchmarks/predict_validate.py validates it)")
    which = f"{row.bound}-bound " if row.bound else ""
    basis = (f"validation ({row.cases} held-out {which}cases, calibrated on {row.calibrated_on}): median "
             f"{row.median_pct:.1f}%, p90 {row.p90_pct:.1f}%, worst {row.worst_pct:.1f}%")
    if row.low_cases is not None:
        basis += f"; {row.low_cases} of {row.cases} predicted below the measurement"
    return row, basis


_COUNTS = {"pytorch": "PyTorch counts", "onnx": "an ONNX file's count"}


def _fit(residual: str) -> str:
    return f"under the measured residual fit {residual}" if residual else "without a measured residual"


def expected_fields(table: Sequence[ErrorEntry], gpu: str, calibrated_on: str, backend: str, precision: str,
                    features: Sequence[str] = (), count: str = "pytorch", residual: str = "",
                    bound: str = "") -> dict[str, Any]:
    """The expected-error fields of a LatencyPrediction from ``validated_row``: median and p90 |error| %, the
    basis, and the share of the validation's cases predicted below their measurement (None where unknown)."""
    row, basis = validated_row(table, gpu, calibrated_on, backend, precision, features, count, residual, bound)
    low = None if row is None or row.low_cases is None or not row.cases else 100.0 * row.low_cases / row.cases
    return {"expected_error_pct": row.median_pct if row else None,
            "expected_error_p90_pct": row.p90_pct if row else None, "error_basis": basis, "expected_low_pct": low}


def _differ(validated: Sequence[str], held: Sequence[str]) -> str:
    """What the calibration lacks that the validation had (a calibration from an earlier modelcost: calibrate
    again measures it) and what it holds that the validation did not."""
    lacks = [f for f in validated if f not in held]
    more = [f for f in held if f not in validated]
    parts = ([f"it lacks {', '.join(lacks)} ('modelcost calibrate' measures it)"] if lacks else []) + (
        [f"it also holds {', '.join(more)}"] if more else [])
    return f": {'; '.join(parts)}" if parts else ""


def _with(features: Sequence[str]) -> str:
    return f"with {', '.join(features)}" if features else f"with none of {', '.join(CALIBRATION_FEATURES)}"
