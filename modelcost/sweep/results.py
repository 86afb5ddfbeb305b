"""Reading a results database back: filters and the best config per model and GPU. Run-vs-run regressions are
``sweep/compare.py``'s; the noise between runs ``sweep/noise.py``'s.

Best config: per (model, GPU name), each config's rows of the latest run that measured it (every repeat of
``sweep --repeats``), then ``decide.recommend.recommend`` with the constraints and objective of the latest run's
plan ([constraints]; default: the highest throughput). A config with several runs is ranked on the run whose p50
is the median of its runs (of an even count, the lower middle one), and its between-run spread (pooled with a
stored noise baseline) widens the interval within which two configs tie (``extra.between_run_ci95_rel``). Rows
keep their stability flags (``BenchResult.unstable``), so an unstable row is never picked without the word.
"""

from __future__ import annotations

import dataclasses
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


def latest_runs_per_config(rows: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each (config, device name)'s rows of the latest run that has it (its repeats), in first-seen order."""
    out: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for r in rows:
        group = out.setdefault((r["config_key"], r["device_name"]), [])
        if group and group[-1]["run_id"] != r["run_id"]:
            group.clear()
        group.append(r)
    return list(out.values())


def representative(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The row a config with several runs is ranked on: the one whose p50 is the median of the measured runs (of
    an even count the lower middle one); the last row when none is measured."""
    from modelcost.sweep.noise import measured

    ok = sorted((r for r in runs if measured(r)), key=lambda r: r["latency_p50_ms"])
    return ok[(len(ok) - 1) // 2] if ok else runs[-1]


def bench_result(row: dict[str, Any], between_run_rel: float | None = None) -> BenchResult:
    """The row's BenchResult (figures only: no roofline or layer profile), for the recommendation code, with its
    stability flags; ``between_run_rel``: the relative 95% half-width of its figure between runs, when known."""
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
        unstable=list(row.get("unstable") or []),
        extra=dataclasses.replace(MeasurementInfo.from_json(d.get("extra")), between_run_ci95_rel=between_run_rel))


def plan_constraints(db: ResultsDB) -> tuple[Any, str]:
    """(Constraints, objective) from the latest run's plan."""
    from modelcost.decide.constraints import Constraints

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


def best_configs(rows: Sequence[dict[str, Any]], constraints: Any, objective: str = "throughput",
                 baseline: dict[Any, Any] | None = None) -> list[Best]:
    """The recommendation per (model, GPU name) (module docstring); ``baseline``: the stored noise baseline
    (``sweep/noise.stored_baseline``)."""
    from modelcost.decide.noise import NO_SPREAD, between_run_rel
    from modelcost.decide.recommend import recommend
    from modelcost.sweep.noise import figure_of, identity

    groups: dict[tuple[str, str], list[BenchResult]] = {}
    shown: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for runs in latest_runs_per_config(rows):
        row = representative(runs)
        fig = figure_of(runs)
        rel = between_run_rel(fig, (baseline or {}).get(identity(row), NO_SPREAD)) if fig else None
        key = (row["model_name"], row["device_name"] or "?")
        groups.setdefault(key, []).append(bench_result(row, rel))
        shown.setdefault(key, []).append(row)
    return [Best(model, gpu, recommend(results, constraints, objective), shown[(model, gpu)])
            for (model, gpu), results in groups.items()]


def export_json(rows: Sequence[dict[str, Any]]) -> str:
    return json.dumps({"schema": SCHEMA, "rows": list(rows)}, indent=2)

