"""``calibrate``: measure this machine's GPU for the latency predictor (issue 28) and keep the file in the cache
(``core/calibration.py``; the micro-benchmarks are ``bench/calibrate.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.runs.gpu import this_gpu


def calibrate(*, fusion: bool = True, on_message: Callable[[str], None] | None = None) -> tuple[Any, Path]:
    """Measure GPU 0 (under 3 minutes); the calibration and where it was written."""
    from modelcost.bench.calibrate import calibrate as measure
    from modelcost.bench.memory import cuda_available
    from modelcost.core import calibration

    if not cuda_available():
        raise ModelcostError("calibrate measures a CUDA GPU, and there is none here (torch sees no CUDA device); "
                             "run it on the GPU you want predictions for")
    spec = this_gpu(cached_ceilings=False)
    cal = measure(spec, progress=on_message or (lambda _what: None), fusion=fusion)
    return cal, calibration.save(cal)
