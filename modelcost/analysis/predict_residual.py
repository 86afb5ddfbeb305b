"""The latency predictor's measured residual (issue 28): per backend, the factor by which held-out models ran
slower than the kernel model (analysis/predict.py) predicted them, fitted on the validation's stored cases by
benchmarks/predict_fit_residual.py and committed as ``predict_residuals.json``.

Why a factor: the kernel model prices each layer at the efficiency calibrate measured on well-shaped kernels
(aligned GEMMs, dense convs, one SDPA), and a real model's kernels are less so: odd shapes and layouts, casts and
copies the static count does not see, a library's Python between the calls. On four held-out sets (32
architectures, 372 H100 cases, BENCHMARKS.md) the kernel model predicted low in most cases of every backend.
A factor takes out that bias, not the spread between models; the file keeps what it did to each set when fitted
on the other three (``cross_validation``), and a set measured after the fit is its clean test.

predicted latency = the kernel model's (kernel time + overhead) x the backend's factor. A backend the file does
not name (generation and training backends) takes no factor. The fit has an id (a hash of its factors) that
every validation row names (``ErrorEntry.residual``): a row validated under another fit, or none, is not this
predictor's error, and reads "error unknown".
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

RESIDUAL_FILE = Path(__file__).with_name("predict_residuals.json")
SCHEMA = "modelcost.predict-residuals/1"


@dataclass(frozen=True)
class Residual:
    factor: float  # predicted latency = the kernel model's x factor
    fit: str  # the fit's id (``fit_id``); "" for none


NONE = Residual(1.0, "")


def fit_id(factors: Mapping[str, float]) -> str:
    """The id of a fit: 8 hex digits of its factors (backend -> factor, rounded as stored), so a refit that
    moves any factor is another fit."""
    text = json.dumps({k: round(v, 4) for k, v in sorted(factors.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


@functools.lru_cache(maxsize=4)
def load(path: str | None = None) -> dict[str, Residual]:
    """backend -> Residual of the committed file (or ``path``); empty when there is none or it does not read: the
    kernel model's prediction then stands alone, and its validation rows (fit "") still apply."""
    try:
        doc = json.loads(Path(path or RESIDUAL_FILE).read_text(encoding="utf-8"))
        if doc.get("schema") != SCHEMA:
            return {}
        factors = {str(b): float(row["factor"]) for b, row in doc["backends"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
    fit = fit_id(factors)
    return {b: Residual(f, fit) for b, f in factors.items() if f > 0}


def residual_for(backend: str, residuals: Mapping[str, Residual] | None = None) -> Residual:
    """The residual ``backend``'s predictions take (``residuals``: default the committed file)."""
    return (load() if residuals is None else residuals).get(backend, NONE)
