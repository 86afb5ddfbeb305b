"""A GEMM's time from the calibration's GEMM grid (core/calibration.py, ``gemm_grid``).

The grid holds measured times of (M x K) @ (K x N) at powers of two (``GRID_M``, ``GRID_NK``). A GEMM inside it
is priced at the throughput (2MNK / time) interpolated linearly in log throughput over log M, log N and log K
between the cell's eight corners: the library's own tile, split-K and wave choices at the measured shapes, and
a smooth path between them, instead of one class point moved by a fixed-tile wave model. Beyond the largest
sizes the throughput of the edge is kept (large GEMMs run full waves at a flat rate); below the smallest M, N or
K the grid does not answer (``None``: the class model and the small-M points do). A corner left out (a call
over calibrate's time limit) drops out of the weights; a cell with no corner measured does not answer.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence

from modelcost.core.calibration import GRID_M, GRID_NK, Calibration

# a precision with no grid of its own takes this one's (the same tensor-core rate); unlike the class tables'
# predict.TABLE_FALLBACK, tf32 does not take fp32's: a tf32 GEMM without a tf32 grid is better priced by the
# class table's own tf32 row than by IEEE fp32's grid, several times slower
GRID_FALLBACK = {"bf16": "fp16"}


GridPoints = Mapping[tuple[int, int, int], float]


def grid_points(cal: Calibration, precision: str) -> GridPoints:
    """(m, n, k) -> time_us of the grid at ``precision`` (or its stand-in): indexed once per prediction, not per
    layer."""
    for name in (precision, GRID_FALLBACK.get(precision, "")):
        found = {(p.m, p.n, p.k): p.time_us for p in cal.gemm_grid if p.precision == name and p.time_us > 0}
        if found:
            return found
    return {}


def _bracket(sizes: Sequence[int], x: float) -> tuple[tuple[int, float], ...] | None:
    """((size, weight), ...) of the one or two grid sizes around ``x`` (linear in log size); ``x`` above the
    largest: the largest alone; below the smallest: None."""
    if x < sizes[0]:
        return None
    if x >= sizes[-1]:
        return ((sizes[-1], 1.0),)
    i = bisect.bisect_right(sizes, x) - 1
    lo, hi = sizes[i], sizes[i + 1]
    w = math.log(x / lo) / math.log(hi / lo)
    return ((lo, 1.0 - w), (hi, w)) if w > 0 else ((lo, 1.0),)


def grid_time_us(points: GridPoints, m: float, n: float, k: float) -> float | None:
    """Microseconds of an (m x k) @ (k x n) GEMM from the grid's ``points`` (``grid_points``; module doc), or None
    where it does not answer."""
    axes = (_bracket(GRID_M, m), _bracket(GRID_NK, n), _bracket(GRID_NK, k))
    if not points or any(a is None for a in axes):
        return None
    log_rate, weights = 0.0, 0.0
    for gm, wm in axes[0]:
        for gn, wn in axes[1]:
            for gk, wk in axes[2]:
                t_us = points.get((gm, gn, gk))
                w = wm * wn * wk
                if t_us is None or w <= 0:
                    continue
                log_rate += w * math.log(2.0 * gm * gn * gk / t_us)
                weights += w
    if weights <= 0:
        return None
    return 2.0 * m * n * k / math.exp(log_rate / weights)

