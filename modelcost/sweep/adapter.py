"""The ONE place a sweep measures a config: static figures and one benchmark, through ``modelcost.api``.

It runs inside the config's child process (``child.py``), never in the sweep's driver, so a crash or an
out-of-memory in a backend cannot take the sweep down.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from modelcost.sweep.plan import Config


def run_config(config: Config, timing: dict[str, Any]) -> dict[str, Any]:
    """Measure ``config``; returns {"result": BenchResult as JSON, "static": summary or None, "device": DeviceInfo
    as JSON or None, "notes": [...]}. The static analysis failing is a note, not a failure of the config."""
    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.core.errors import ModelcostError
    from modelcost.report.json_report import to_plain

    notes: list[str] = []
    static = None
    try:
        cost = api.analyze_static(config.source, batch_size=config.batch_size, input_shapes=list(config.input_shapes),
                                  trust_pickle=config.trust_pickle)
        static = {"params": cost.params.total, "macs": cost.compute.macs, "flops": cost.compute.flops,
                  "weight_bytes": cost.storage.bytes, "batch_size": cost.batch_size,
                  "uncounted_ops": dict(cost.compute.uncounted_ops)}
    except ModelcostError as exc:
        notes.append(f"static analysis failed: {exc}")
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
    return {"result": to_plain(result), "static": static, "device": to_plain(device), "notes": notes}
