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

Schema 2 (seventeenth session) fits a factor per backend *and bound* where a bound has enough cases
(``MIN_BOUND_CASES``): a host-issued forward whose kernel model says the host is slower than its kernels (``host``:
batch 1, mostly) and the rest (``device``). The two miss by different amounts, because they are priced by
different parts of the calibration: a host-bound forward by the host's price per aten call or per kernel, learned
on tiny calibration nets, and a real model's forward issues slower than those (1.59x in eager, 1.67x in
torch-half), while ONNX Runtime's price per kernel, learned on a tiny Linear stack, is high (x0.57). On six
held-out sets (572 H100 cases) a factor per bound took the cross-validated median |error| of every set down
(from 15-24% to 14-18%) and its p90 (from 57-87% to 42-62%), and the seventh set, measured after the fit, read
19.2% / 68.7% against 20.8% / 78.0% under the one-factor fit before it: BENCHMARKS.md. A bound without its own
factor takes the backend's. The host-bound factors are relative to the host price the calibration kept, which
moves between processes (BENCHMARKS.md, issue 28's seventeenth session).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

RESIDUAL_FILE = Path(__file__).with_name("predict_residuals.json")
SCHEMA = "modelcost.predict-residuals/2"
SCHEMAS = ("modelcost.predict-residuals/1", SCHEMA)  # 1: one factor per backend, no bound
MIN_BOUND_CASES = 12  # a bound with fewer fitted cases takes its backend's factor


@dataclass(frozen=True)
class Residual:
    factor: float  # predicted latency = the kernel model's x factor
    fit: str  # the fit's id (``fit_id``); "" for none


NONE = Residual(1.0, "")


def fit_id(factors: Mapping[str, float]) -> str:
    """The id of a fit: 8 hex digits of its factors (``key`` -> factor, rounded as stored: a backend, or a backend
    and bound ``backend/bound``), so a refit that moves any factor is another fit."""
    text = json.dumps({k: round(v, 4) for k, v in sorted(factors.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def key(backend: str, bound: str | None = None) -> str:
    """A factor's key: the backend's own, or ``backend/bound``."""
    return f"{backend}/{bound}" if bound else backend


@functools.lru_cache(maxsize=4)
def load(path: str | None = None) -> dict[str, Residual]:
    """``key`` -> Residual of the committed file (or ``path``): each backend's, and its bounds' where fitted; empty
    when there is none or it does not read: the kernel model's prediction then stands alone, and its validation
    rows (fit "") still apply."""
    try:
        doc = json.loads(Path(path or RESIDUAL_FILE).read_text(encoding="utf-8"))
        if doc.get("schema") not in SCHEMAS:
            return {}
        factors: dict[str, float] = {}
        for b, row in doc["backends"].items():
            factors[key(str(b))] = float(row["factor"])
            for bound, sub in (row.get("bound") or {}).items():
                factors[key(str(b), str(bound))] = float(sub["factor"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}
    fit = fit_id(factors)
    return {k: Residual(f, fit) for k, f in factors.items() if f > 0}


def residual_for(backend: str, bound: str | None = None,
                 residuals: Mapping[str, Residual] | None = None) -> Residual:
    """The residual a prediction of ``backend`` at ``bound`` ("host" or "device", analysis/predict.bound_of) takes:
    its bound's factor, else its backend's, else none (``residuals``: default the committed file)."""
    table = load() if residuals is None else residuals
    return table.get(key(backend, bound)) or table.get(key(backend), NONE)
