"""The versioned JSON report (docs/REPORT_SCHEMA.md documents every key)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from modelcost.core.measurement import MeasurementInfo
from modelcost.core.types import CostReport, RunReport

SCHEMA = "modelcost.report/1"


def to_plain(obj: Any) -> Any:
    """Dataclasses -> dicts, tuples -> lists, NaN/inf -> None (JSON has none of them)."""
    if isinstance(obj, MeasurementInfo):  # the fields given, under today's keys (core.measurement)
        return to_plain(obj.to_json())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        if hasattr(obj, "cv") and "std" in out:
            out["cv"] = to_plain(obj.cv)
        return out
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def cost_to_dict(cost: CostReport) -> dict[str, Any]:
    d = to_plain(cost)
    d["inputs"] = [{"name": t["name"], "shape": t["shape"], "dtype": t["dtype"]} for t in d["inputs"]]
    return d


def run_to_dict(run: RunReport) -> dict[str, Any]:
    """The whole document. Static keys sit at the top level (``model``, ``params``, ``compute``, ...)."""
    doc: dict[str, Any] = {"schema": SCHEMA, "complete": run.complete, "created": run.created, "command": run.command}
    if run.cost is not None:
        doc.update(cost_to_dict(run.cost))
    doc["benchmarks"] = to_plain(run.benchmarks)
    doc["gpu"] = to_plain(run.gpu)
    doc["what_if"] = to_plain(run.what_if)
    doc["device"] = to_plain(run.device)
    doc["run_notes"] = list(run.notes)
    doc["predictions"] = to_plain(run.predictions)
    doc["finalist_repeats"] = to_plain(run.finalist_repeats)
    if run.training is not None:
        doc["training"] = to_plain(run.training)
    return doc


def write_json(run: RunReport, path: str | Path, sections: dict[str, Any] | None = None, *,
               record_in: Path | None = None) -> Path:
    """Write atomically: a temporary file beside the target, then rename. ``sections``: more top-level keys after
    the run's (a recommendation, a comparison). ``record_in``: the report folder whose manifest records it."""
    from modelcost.report.atomic import atomic_write_text

    doc = run_to_dict(run) | (sections or {})
    return atomic_write_text(Path(path), json.dumps(doc, indent=2, sort_keys=False) + "\n", record_in=record_in)
