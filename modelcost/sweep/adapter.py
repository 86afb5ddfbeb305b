"""The ONE place a sweep measures a config: static figures and one benchmark, through ``modelcost.api``.

It runs inside the config's child process (``child.py``), never in the sweep's driver, so a crash or an
out-of-memory in a backend cannot take the sweep down.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from modelcost.sweep.plan import Config


def static_key(config: Config) -> str:
    """What a config's static figures depend on: the model's content, its input shapes and the batch size (not the
    backend, precision or repeat): configs that share it share one static analysis in a sweep (``run_config``)."""
    ident = [config.model_hash, list(config.input_shapes), config.batch_size]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:20]


def run_config(config: Config, timing: dict[str, Any], static_path: Path | None = None) -> dict[str, Any]:
    """Measure ``config``; returns {"result": BenchResult as JSON, "static": summary or None, "device": DeviceInfo
    as JSON or None, "notes": [...]}. The static analysis failing is a note, not a failure of the config.

    The benchmark runs first, in a process that has done nothing else yet: the static analysis imports torch's
    compiler stack and fills the heap with the traced graph, which a launch-bound timing loop would run beside.
    ``static_path``: where the sweep keeps this model's static figures at this batch (``static_key``); the first
    config to need them writes them there and the others read them back, so a sweep analyses each (model, batch)
    once, not once per backend, precision and repeat."""
    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.core.errors import ModelcostError
    from modelcost.report.json_report import to_plain

    notes: list[str] = []
    bench_config = BenchConfig(**{**timing, "device": config.device})
    results, device = api.run_benchmarks(
        config.source, backends=[config.backend], precisions=[config.precision], batch_sizes=[config.batch_size],
        input_shapes=list(config.input_shapes), trust_pickle=config.trust_pickle, config=bench_config)
    # A row of batch 0 answers for every batch: the backend never got as far as one (unavailable for this model
    # or machine, as the bench's plan asks the registry, or it failed / ran out of memory while being prepared).
    mine = [r for r in results if (r.backend, r.precision) == (config.backend, config.precision)
            and r.batch_size in (config.batch_size, 0)]
    if not mine:
        raise ModelcostError(f"the benchmark returned no result for {config.label}")
    result = max(mine, key=lambda r: r.batch_size)
    if result.batch_size == 0:
        result = replace(result, batch_size=config.batch_size)
    static = _stored_static(static_path)
    if static is None:
        try:
            static = _static(config)
        except ModelcostError as exc:
            notes.append(f"static analysis failed: {exc}")
        else:
            _store_static(static_path, static)
    return {"result": to_plain(result), "static": static, "device": to_plain(device), "notes": notes}


def _static(config: Config) -> dict[str, Any]:
    from modelcost import api

    cost = api.analyze_static(config.source, batch_size=config.batch_size, input_shapes=list(config.input_shapes),
                              trust_pickle=config.trust_pickle)
    return {"params": cost.params.total, "macs": cost.compute.macs, "flops": cost.compute.flops,
            "weight_bytes": cost.storage.bytes, "batch_size": cost.batch_size,
            "uncounted_ops": dict(cost.compute.uncounted_ops)}


def _stored_static(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _store_static(path: Path | None, static: dict[str, Any]) -> None:
    if path is None or not path.parent.is_dir():
        return
    from modelcost.report.atomic import atomic_write_text

    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(static))
