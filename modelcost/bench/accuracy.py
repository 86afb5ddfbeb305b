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
from typing import TYPE_CHECKING, Any

from modelcost.core.types import AccuracyStats

if TYPE_CHECKING:
    import numpy as np

CHUNK = 1 << 18  # elements per float64 chunk on the host (2 MiB each for y and r)
DEVICE_CHUNK = 1 << 24  # ... on a GPU (128 MiB each)


def _max(a: float, b: float) -> float:
    """max that keeps a NaN (an output that overflowed must not read as a small error)."""
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def looks_like_class_scores(output: np.ndarray, batch_size: int) -> bool:
    return output.ndim == 2 and output.shape[0] == batch_size and output.shape[1] > 1


def compare(
    outputs: Sequence[Any], reference: Sequence[np.ndarray], *, batch_size: int, reference_name: str
) -> AccuracyStats:
    """Compare ``outputs`` with ``reference`` (same count, same shapes). Raises ValueError when they differ.
    ``outputs``: numpy arrays, or torch tensors (a CUDA session's outputs where they are: the sums then run on the GPU,
    the reference going there chunk by chunk, since outputs can be large: BENCHMARKS.md, 'Figures that used to live in
    docstrings')."""
    if len(outputs) != len(reference):
        raise ValueError(f"{len(outputs)} outputs against {len(reference)} in the reference")
    for i, (y, r) in enumerate(zip(outputs, reference, strict=True)):
        if tuple(y.shape) != tuple(r.shape):
            raise ValueError(f"output {i} has shape {tuple(y.shape)}, the reference {tuple(r.shape)}")
    if not outputs:
        raise ValueError("no outputs to compare")
    on_torch = type(outputs[0]).__module__.startswith("torch")
    max_abs, max_rel, dot, yy, rr, top1 = (_sums_torch if on_torch else _sums_numpy)(outputs, reference, batch_size)
    ny, nr = math.sqrt(yy), math.sqrt(rr)
    if ny == 0.0 and nr == 0.0:
        cosine = 1.0
    elif ny == 0.0 or nr == 0.0:
        cosine = 0.0
    else:
        cosine = float(min(1.0, max(-1.0, dot / (ny * nr))))
    return AccuracyStats(max_abs_err=max_abs, max_rel_err=max_rel, cosine=cosine, top1_agreement=top1,
                         reference=reference_name)


Sums = tuple[float, float, float, float, float, "float | None"]  # max abs, max rel, <y,r>, <y,y>, <r,r>, top-1


def _sums_numpy(outputs: Sequence[Any], reference: Sequence[np.ndarray], batch_size: int) -> Sums:
    import numpy as np

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
    top1 = None
    first, first_ref = np.asarray(outputs[0]), np.asarray(reference[0])
    if looks_like_class_scores(first_ref, batch_size):
        top1 = float(np.mean(np.argmax(first, axis=1) == np.argmax(first_ref, axis=1)))
    return max_abs, max_rel, dot, yy, rr, top1


def _sums_torch(outputs: Sequence[Any], reference: Sequence[np.ndarray], batch_size: int) -> Sums:
    """The same sums in float64 where the outputs are, accumulated there (one synchronisation at the end)."""
    import numpy as np
    import torch

    device = outputs[0].device
    refs = [torch.from_numpy(np.ascontiguousarray(r)).to(device) for r in reference]
    ref_max = max((float(r.abs().max()) for r in refs if r.numel()), default=0.0)
    floor = max(ref_max * 1e-3, float(np.finfo(np.float64).tiny))
    zero = torch.zeros((), dtype=torch.float64, device=device)
    max_abs, max_rel, dot, yy, rr = zero, zero, zero, zero, zero
    for out, ref in zip(outputs, refs, strict=True):
        y_flat, r_flat = out.detach().reshape(-1), ref.reshape(-1)
        for start in range(0, y_flat.numel(), DEVICE_CHUNK):
            y = y_flat[start:start + DEVICE_CHUNK].double()
            r = r_flat[start:start + DEVICE_CHUNK].double()
            diff = (y - r).abs()
            max_abs = torch.maximum(max_abs, diff.max())  # propagates a NaN, as the numpy path does
            max_rel = torch.maximum(max_rel, (diff / r.abs().clamp_min(floor)).max())
            dot, yy, rr = dot + y @ r, yy + y @ y, rr + r @ r
    top1 = None
    if looks_like_class_scores(reference[0], batch_size):
        top1 = float((outputs[0].argmax(dim=1) == refs[0].argmax(dim=1)).double().mean())
    a, b, c, d, e = (float(v) for v in torch.stack([max_abs, max_rel, dot, yy, rr]).cpu())
    return a, b, c, d, e, top1
