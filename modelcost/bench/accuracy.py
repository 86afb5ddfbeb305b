"""How far a config's outputs are from the FP32 reference's, on the same inputs.

All outputs together, as one flat vector each, in float64 (worked through in chunks of ``CHUNK`` elements, so a
large output, BERT-base's 25 M at batch 256, costs no float64 copy of itself and a tenth of a second, not seconds):

* ``max_abs_err`` = max |y - r|
* ``max_rel_err`` = max |y - r| / max(|r|, floor), with ``floor`` = 1e-3 x max|r|: elements smaller than
  0.1% of the largest reference magnitude are measured against that floor, so values near zero do not turn a
  tiny absolute error into a huge ratio;
* ``cosine`` = <y, r> / (|y| |r|) (1.0 when both are all zero);
* ``top1_agreement``: only when the first output looks like class scores, i.e. it is 2-D ``[batch, classes]``
  with ``classes > 1`` and its first dim equals the batch size: the fraction of rows whose argmax agrees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from modelcost.core.types import AccuracyStats

if TYPE_CHECKING:
    import numpy as np

CHUNK = 1 << 18  # elements per float64 chunk (2 MiB each for y and r)


def _max(a: float, b: float) -> float:
    """max that keeps a NaN (an output that overflowed must not read as a small error)."""
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def looks_like_class_scores(output: np.ndarray, batch_size: int) -> bool:
    return output.ndim == 2 and output.shape[0] == batch_size and output.shape[1] > 1


def compare(
    outputs: Sequence[np.ndarray], reference: Sequence[np.ndarray], *, batch_size: int, reference_name: str
) -> AccuracyStats:
    """Compare ``outputs`` with ``reference`` (same count, same shapes). Raises ValueError when they differ."""
    import numpy as np

    if len(outputs) != len(reference):
        raise ValueError(f"{len(outputs)} outputs against {len(reference)} in the reference")
    for i, (y, r) in enumerate(zip(outputs, reference, strict=True)):
        if tuple(y.shape) != tuple(r.shape):
            raise ValueError(f"output {i} has shape {tuple(y.shape)}, the reference {tuple(r.shape)}")
    if not outputs:
        raise ValueError("no outputs to compare")
    ref_max = max((float(np.max(np.abs(r))) for r in reference if np.size(r)), default=0.0)
    floor = max(ref_max * 1e-3, np.finfo(np.float64).tiny)
    max_abs = max_rel = dot = yy = rr = 0.0
    for out, ref in zip(outputs, reference, strict=True):
        y_flat, r_flat = np.asarray(out).reshape(-1), np.asarray(ref).reshape(-1)
        for start in range(0, y_flat.size, CHUNK):
            y = y_flat[start:start + CHUNK].astype(np.float64)
            r = r_flat[start:start + CHUNK].astype(np.float64)
            diff = np.abs(y - r)
            max_abs = _max(max_abs, float(diff.max()))
            max_rel = _max(max_rel, float((diff / np.maximum(np.abs(r), floor)).max()))
            dot, yy, rr = dot + float(y @ r), yy + float(y @ y), rr + float(r @ r)
    ny, nr = math.sqrt(yy), math.sqrt(rr)
    if ny == 0.0 and nr == 0.0:
        cosine = 1.0
    elif ny == 0.0 or nr == 0.0:
        cosine = 0.0
    else:
        cosine = float(min(1.0, max(-1.0, dot / (ny * nr))))
    top1 = None
    first, first_ref = np.asarray(outputs[0]), np.asarray(reference[0])
    if looks_like_class_scores(first_ref, batch_size):
        top1 = float(np.mean(np.argmax(first, axis=1) == np.argmax(first_ref, axis=1)))
    return AccuracyStats(max_abs_err=max_abs, max_rel_err=max_rel, cosine=cosine, top1_agreement=top1,
                         reference=reference_name)
