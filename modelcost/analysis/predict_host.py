"""The host's price per aten call a prediction uses (issue 28): the calibration's own, or the median of the stored
calibrations of the same GPU kind where the calibration's own price looks like one more draw of theirs.

Why. A host-bound forward (batch 1 under torch-eager and torch-half, an LLM's eager prefill) is priced by
``Calibration.host_us``: microseconds per aten call, measured by calibrate in four fresh processes, the median
kept. On the lent machines each process draws a host pace of its own (BENCHMARKS.md, issue 27), so the four
processes read, say, 12.8 / 19.8 / 12.9 / 12.6 us, and the medians of twelve H100 calibrations run from 11.5 to
21.6 us. The price a measurement later meets is another draw, not the calibration's: re-predicting the held-out
sets 11-17 from each stored calibration, the signed median error of the host-bound cases ran from -27.5% to +31.9%
with the calibration's own price, and from -5.3% to +2.6% with every calibration's price replaced by the median
of the calibrations' medians (BENCHMARKS.md, the twenty-ninth session). So a prediction takes that pooled price.

When. The pool (``host_prices.json``, written by benchmarks/host_price_pool.py from the stored calibrations) is
per GPU kind, by its canonical name, and stands in only where it holds ``MIN_CALIBRATIONS`` or more and the
calibration's own eager price is within ``POOL_RATIO`` of the pooled one: a calibration outside that band was
measured on another sort of host (a workstation's fast CPU, say), and its own price is the better guess. The
prediction says which price it used (``LatencyPrediction.host_pooled_from``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

from modelcost.core.calibration import Calibration, HostCost

POOL_FILE = Path(__file__).with_name("host_prices.json")
SCHEMA = "modelcost.host-prices/1"
MIN_CALIBRATIONS = 3  # a pool of fewer calibrations does not stand in
POOL_RATIO = 2.0  # the own eager price within [pooled / 2, pooled x 2]: the same sort of host


@dataclasses.dataclass(frozen=True)
class HostPool:
    """The pooled price of one GPU kind: each family's median ``HostCost`` over ``calibrations`` files."""

    calibrations: int
    host_us: dict[str, HostCost]


@functools.lru_cache(maxsize=4)
def load(path: str | None = None) -> dict[str, HostPool]:
    """GPU (canonical name) -> HostPool of the committed file (or ``path``); empty when there is none or it does
    not read: every calibration then keeps its own price."""
    try:
        doc = json.loads(Path(path or POOL_FILE).read_text(encoding="utf-8"))
        if doc.get("schema") != SCHEMA:
            return {}
        return {str(gpu): HostPool(int(row["calibrations"]),
                                   {f: HostCost(float(c["kernel_op_us"]), float(c["view_op_us"]))
                                    for f, c in row["host_us"].items()})
                for gpu, row in doc["gpus"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def pool_for(cal: Calibration, gpu: str, pools: dict[str, HostPool] | None = None) -> HostPool | None:
    """The pool that stands in for ``cal``'s own price (``gpu``: the canonical name of the GPU it was measured
    on), or None (module doc: too few calibrations pooled, or the own price outside the band)."""
    pool = (load() if pools is None else pools).get(gpu)
    own, pooled = cal.host_us.get("eager"), (pool.host_us.get("eager") if pool else None)
    if pool is None or pool.calibrations < MIN_CALIBRATIONS or own is None or pooled is None:
        return None
    ratio = own.kernel_op_us / pooled.kernel_op_us if pooled.kernel_op_us > 0 else 0.0
    return pool if 1.0 / POOL_RATIO <= ratio <= POOL_RATIO else None


def with_pooled_host(cal: Calibration, gpu: str, pools: dict[str, HostPool] | None = None) -> Calibration:
    """``cal`` with the pooled price of each family the pool and the calibration both hold, and
    ``host_pooled_from`` set to the pool's size; ``cal`` itself where no pool stands in (``pool_for``)."""
    pool = pool_for(cal, gpu, pools)
    if pool is None:
        return cal
    host = {family: pool.host_us.get(family, cost) for family, cost in cal.host_us.items()}
    return dataclasses.replace(cal, host_us=host, host_pooled_from=pool.calibrations)
