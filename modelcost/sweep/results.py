"""Reading a results database back: filters, the best config per model and GPU, and run-vs-run regressions.

Best config: per (model, GPU name) the latest row of each config, then ``decide.recommend.recommend`` with the
constraints and objective of the latest run's plan ([constraints]; default: the highest throughput).

Regressions (``compare_runs``): per config measured ``ok`` in both runs on the same GPU type (config key + device
name; library versions may differ, that is what a nightly run checks), the 95% interval of RUN_A latency /
RUN_B latency from the two runs' block medians (``benchmarks[].extra.block_medians_ms``), paired by position,
with ``compare``'s statistics (``decide/speedup.py``: a t interval on the mean log-ratio). A config regressed
when the whole interval says RUN_B is slower AND the point estimate is at least ``tolerance_pct`` slower (so a
statistically clear but tiny change does not fail a CI job); a config ``ok`` in RUN_A and not in RUN_B regressed
too. Blocks are timed in two separate runs, so a shift common to a whole run (clocks, another tenant) is inside
the interval only as far as it varied within each run: compare runs of the same machine kind.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.measurement import MeasurementInfo
from modelcost.core.text import first_line
from modelcost.core.types import AccuracyStats, BenchResult, LatencyStats
from modelcost.sweep.db import SCHEMA, ResultsDB

FILTERS = ("model", "gpu", "backend", "precision", "batch", "status", "run", "since", "until")


def filter_rows(db: ResultsDB, *, model: str | None = None, gpu: str | None = None, backend: str | None = None,
                precision: str | None = None, batch: int | None = None, status: str | None = None,
                run: str | None = None, since: str | None = None, until: str | None = None) -> list[dict[str, Any]]:
    """Rows matching every given filter. ``gpu``: a substring of the device name (case-insensitive);
    ``since`` / ``until``: ISO dates or times compared with the row's finish time; ``run``: id, label, 'latest'."""
    where, params = [], []
    for col, value in (("model_name", model), ("backend", backend), ("precision", precision), ("status", status),
                       ("batch_size", batch)):
        if value is not None:
            where.append(f"{col} = ?")
            params.append(value)
    if gpu is not None:
        where.append("LOWER(device_name) LIKE ?")
        params.append(f"%{gpu.lower()}%")
    if since is not None:
        where.append("finished >= ?")
        params.append(since)
    if until is not None:
        where.append("finished < ?")
        params.append(until if "T" in until else f"{until}T99")  # a date: the whole day
    if run is not None:
        where.append("run_id = ?")
        params.append(db.resolve_run(run))
    return db.results("WHERE " + " AND ".join(where) if where else "", params)


def latest_per_config(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last row of each (config, device name), in first-seen order."""
    out: dict[tuple[str, str | None], dict[str, Any]] = {}
    for r in rows:
        out[(r["config_key"], r["device_name"])] = r
    return list(out.values())


def bench_result(row: dict[str, Any]) -> BenchResult:
    """The row's BenchResult (figures only: no roofline or layer profile), for the recommendation code."""
    d = row.get("result_json") or {}
    lat = d.get("latency_ms")
    acc = d.get("accuracy")
    latency = LatencyStats(**{k: v for k, v in lat.items() if k != "cv"}) if lat else None
    return BenchResult(
        backend=row["backend"], precision=row["precision"], batch_size=row["batch_size"], status=row["status"],
        reason=row.get("reason"), latency_ms=latency,
        throughput_ips=d.get("throughput_ips"), gpu_memory_peak_bytes=d.get("gpu_memory_peak_bytes"),
        accuracy=AccuracyStats(**acc) if acc else None, device=row.get("device_name") or "",
        timing=d.get("timing", ""), budget_hit=bool(d.get("budget_hit")), notes=list(d.get("notes", [])),
        extra=MeasurementInfo.from_json(d.get("extra")))


def plan_constraints(db: ResultsDB) -> tuple[Any, str]:
    """(Constraints, objective) from the latest run's plan."""
    from modelcost.decide.recommend import Constraints

    runs = db.runs()
    text = runs[-1]["plan_toml"] if runs else ""
    try:
        given = dict(tomllib.loads(text).get("constraints", {})) if text else {}
        objective = given.pop("objective", "throughput")
        return Constraints(**given), objective
    except (ValueError, TypeError) as exc:  # a file edited or damaged since the sweep wrote it
        raise ModelcostError(f"{db.path}: the plan of run {runs[-1]['run_id']} (runs.plan_toml) does not give "
                             f"valid [constraints] ({first_line(exc)})") from None


@dataclass
class Best:
    model: str
    gpu: str
    recommendation: Any  # core.decisions.Recommendation
    rows: list[dict[str, Any]] = field(default_factory=list)


def best_configs(rows: Sequence[dict[str, Any]], constraints: Any, objective: str = "throughput") -> list[Best]:
    from modelcost.decide.recommend import recommend

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in latest_per_config(rows):
        groups.setdefault((r["model_name"], r["device_name"] or "?"), []).append(r)
    return [Best(model, gpu, recommend([bench_result(r) for r in group], constraints, objective), group)
            for (model, gpu), group in groups.items()]


@dataclass
class Change:
    label: str  # "resnet50 ort-cuda fp16 b64"
    gpu: str
    a_ms: float | None
    b_ms: float | None
    verdict: str
    regression: bool
    ci: Any = None  # decide.speedup.SpeedupCI (A latency / B latency) or None


def compare_runs(db: ResultsDB, run_a: str, run_b: str, tolerance_pct: float = 2.0) -> tuple[int, int, list[Change]]:
    """(run A id, run B id, one Change per config in both runs) — see the module docstring."""
    a_id, b_id = db.resolve_run(run_a), db.resolve_run(run_b)
    return a_id, b_id, compare_rows(db.results("WHERE run_id = ?", (a_id,)), db.results("WHERE run_id = ?", (b_id,)),
                                    tolerance_pct)


def compare_rows(rows_a: Sequence[dict[str, Any]], rows_b: Sequence[dict[str, Any]],
                 tolerance_pct: float = 2.0) -> list[Change]:
    """One Change per (config, device name) in both lists (the last row of each when one repeats)."""
    a_rows = {(r["config_key"], r["device_name"]): r for r in rows_a}
    b_rows = {(r["config_key"], r["device_name"]): r for r in rows_b}
    return [_change(a_rows[k], b_rows[k], k[1] or "?", tolerance_pct) for k in a_rows if k in b_rows]


def _change(a: dict[str, Any], b: dict[str, Any], gpu: str, tolerance_pct: float) -> Change:
    from modelcost.decide.speedup import speedup_ci, verdict

    lab = f"{a['model_name']} {a['backend']} {a['precision']} b{a['batch_size']}"
    if a["status"] != "ok" or b["status"] != "ok":
        lost = a["status"] == "ok"
        text = f"{a['status']} -> {b['status']}" + (f" ({b['reason']})" if lost and b["reason"] else "")
        return Change(lab, gpu, a["latency_p50_ms"], b["latency_p50_ms"], text, lost)
    ba, bb = a["block_medians_ms"] or [], b["block_medians_ms"] or []
    n = min(len(ba), len(bb))
    if n < 2:
        return Change(lab, gpu, a["latency_p50_ms"], b["latency_p50_ms"],
                      "no interval: fewer than 2 timing blocks in a run (not judged)", False)
    ci = speedup_ci(ba[:n], bb[:n])  # ratio = A latency / B latency: below 1 = B slower
    slower_pct = (1 / ci.ratio - 1) * 100
    regressed = ci.significant and ci.ratio_high < 1.0 and slower_pct >= tolerance_pct
    text = verdict(ci).replace("faster", "B faster").replace("slower", "B slower")
    if ci.significant and not regressed and ci.ratio_high < 1.0:
        text += f" (within the {tolerance_pct:g}% tolerance)"
    return Change(lab, gpu, a["latency_p50_ms"], b["latency_p50_ms"], text, regressed, ci)


def export_json(rows: Sequence[dict[str, Any]]) -> str:
    return json.dumps({"schema": SCHEMA, "rows": list(rows)}, indent=2)

