"""Whether an exported ONNX file computes what its module computes, checked once when the file is made.

An exporter can write a file that runs wrongly or not at all: the TorchScript exporter wrote a wrong transpose in
CANINE-s's character encoder, so ONNX Runtime failed on the file at every batch, and the export was reported as
made (benchmarks/predict_models_fresh12.py). So before a file is published to the cache, ONNX Runtime's CPU
provider runs it at ``PARITY_BATCH``, one sample where the trace ran two (a batch the trace baked in shows), on
the model's own seeded inputs, beside the module on the same inputs (bench/export.py runs the module). The file
disagrees when ONNX Runtime fails on it, its outputs differ in number or shape, or their cosine with the
module's (``bench.accuracy.compare``, all outputs as one vector) is below ``MIN_COSINE``. Float32 on both sides:
a right file reads 1 - 1e-9 or so.

It runs with one thread (the export may run beside a timed loop: bench/export_ahead.py) and never on a GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelcost.core.text import first_line

PARITY_BATCH = 1
MIN_COSINE = 0.999


@dataclass(frozen=True)
class Parity:
    """The check's finding: ``agrees`` None where it could not judge (``why`` says why)."""

    agrees: bool | None
    why: str


def check_parity(path: Path, feed: dict[str, Any], reference: Sequence[Any]) -> Parity:
    """Run the file on ONNX Runtime's CPU provider with ``feed`` (input name -> array, at ``PARITY_BATCH``) and
    compare its outputs with ``reference`` (the module's on the same inputs, as numpy arrays, in order)."""
    import numpy as np

    from modelcost.bench.accuracy import compare

    try:
        import onnxruntime as ort
    except ImportError:
        return Parity(None, "not checked against torch (onnxruntime is not installed)")
    if not all(np.isfinite(r).all() for r in reference):
        return Parity(None, "not checked against torch (the module's own outputs are not finite)")
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4  # a file that fails is this check's finding, said once: not ORT's error log too
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        wanted = {i.name for i in session.get_inputs()}
        outputs = session.run(None, {n: a for n, a in feed.items() if n in wanted})
    except Exception as exc:  # noqa: BLE001 - any failure to run the file is the finding
        return Parity(False, f"ONNX Runtime fails on the file at batch {PARITY_BATCH}: {first_line(exc, 300)}")
    try:
        stats = compare([np.asarray(o, dtype=np.float32) for o in outputs], reference, batch_size=PARITY_BATCH,
                        reference_name="torch")
    except ValueError as exc:
        return Parity(False, f"the file's outputs are not the module's at batch {PARITY_BATCH}: {exc}")
    if not stats.cosine >= MIN_COSINE:  # a NaN cosine disagrees too
        return Parity(False, f"the file computes other values than the module at batch {PARITY_BATCH} (cosine "
                             f"{stats.cosine:.4f}, max relative error {stats.max_rel_err:.2g})")
    return Parity(True, f"matches torch at batch {PARITY_BATCH} on ONNX Runtime's CPU, max relative error "
                        f"{stats.max_rel_err:.1g}")
