"""Which aten calls of an eager forward launch a GPU kernel: one rule for the static count
(analysis/torch_counter.py, on the meta device) and for the calibration that prices them (bench/calibrate_host.py,
on the GPU), so the predictor's host model counts what it was calibrated on.

A call launches a kernel when it writes memory: it is an in-place or out= op (its schema mutates an argument),
or one of its tensor outputs lives in a storage none of its tensor inputs live in (a new tensor). Anything else
(a view, a reshape of a contiguous tensor, detach, a metadata read) issues no kernel, but its host time is real:
it is counted apart, as a view op. A call without tensor outputs (``item``, ``size``) is a view op too (a
device-to-host copy is a copy, not a kernel, as the calibration's profiler counts leave copies out).
"""

from __future__ import annotations

from collections.abc import Iterable


def launches_kernel(mutable: bool, input_storages: Iterable[int], output_storages: Iterable[int]) -> bool:
    """True for a call that writes memory (module doc). Storages are identified by any key that tells two apart
    (a storage's data pointer or its id while the run lasts)."""
    if mutable:
        return True
    inputs = set(input_storages)
    return any(key not in inputs for key in output_storages)
