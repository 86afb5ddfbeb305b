"""The sweep's driver: plan -> configs -> an engine (local workers or Ray) -> one database row per config.

A run is recorded in ``runs`` before anything is measured and closed with its status and wall time at the end
(``complete``, ``interrupted`` on Ctrl-C, ``failed`` when the driver itself broke). Rows are committed one by one
as configs finish. ``repeats``: the run makes that many passes over the plan, one after the other (pass 1 over
every config, then pass 2, ...), each config in its own child process every time, so a config's repeats are
independent processes spread over the run's time rather than back to back; each row records its pass. Resume: in
pass k a config is skipped when k of its (config key, device name, versions) rows are ``ok`` or ``unavailable``
and not flagged unstable, unless ``force``. The configs' scratch files live in this process's scratch folder
(``scratch.py``), removed when the run ends however it ends; a sweep first removes the folders that killed sweeps
left behind.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.sweep import scratch
from modelcost.sweep.db import ResultsDB
from modelcost.sweep.identity import source_hash, versions, visible_gpus
from modelcost.sweep.plan import Config, Plan, expand


@dataclass
class SweepSummary:
    run_id: int
    planned: int  # configs x repeats
    measured: int = 0
    skipped: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    status: str = "running"
    notes: list[str] = field(default_factory=list)

    @property
    def measured_nothing(self) -> bool:
        """Configs ran, not one of them was measured ``ok`` (every one failed, ran out of memory or could not run
        here), and none was skipped as measured before (a resume that retried only what failed is not this)."""
        return self.measured > 0 and not self.by_status.get("ok") and not self.skipped


Event = Callable[[str, Any, SweepSummary], None]  # ("row", row) | ("skip", Config) | ("start", [Config])


def run_sweep(plan: Plan, db_path: str, *, workers: int | None = None, force: bool = False, label: str | None = None,
              ray: str | None = None, command: str = "", on_event: Event | None = None,
              repeats: int = 1) -> SweepSummary:
    """Run ``plan`` into the database at ``db_path``, ``repeats`` passes (module docstring). ``ray``: None (local
    workers), 'local' (start a Ray instance here), 'auto' (the running cluster) or a cluster address."""
    if repeats < 1:
        raise ModelcostError(f"{{repeats}} {repeats}: give 1 or more passes over the plan", fields="repeats")
    db = ResultsDB(db_path)
    scratch.remove_stale()
    hashes = model_hashes(plan)
    engine_name = "local" if ray is None else f"ray:{ray}"
    done = db.done_counts() if not force else {}
    try:
        engine, notes = _engine(plan, workers, ray, _done_by(done, 1))
    except BaseException:
        db.close()
        raise
    # The plan's default backends: the GPU ones where the workers have GPUs (a Ray cluster's, or this machine's).
    configs = expand(plan, "cuda" if getattr(engine, "gpus", 0) or visible_gpus() else "cpu", hashes)
    run_id = db.start_run(label=label, engine=engine_name, workers=engine.size, command=command,
                          plan_path=plan.path, plan_toml=plan.text, host=platform.node(),
                          configs_planned=len(configs), notes=notes, repeats=repeats)
    summary = SweepSummary(run_id=run_id, planned=len(configs) * repeats, notes=notes)
    if ray is None and visible_gpus():
        _keep_calibration(db, run_id, summary.notes)
    emit = on_event or (lambda *_: None)
    emit("start", configs, summary)
    skipped: dict[str, str] = {}
    current = {"pass": 1}

    def on_row(row: dict[str, Any]) -> None:
        row = {**row, "run_id": run_id, "repeat": current["pass"]}
        db.insert_result(row)
        summary.measured += 1
        summary.by_status[row["status"]] = summary.by_status.get(row["status"], 0) + 1
        emit("row", row, summary)

    def on_skip(config: Config) -> None:
        summary.skipped += 1
        skipped[config.key] = config.label
        emit("skip", config, summary)

    t0 = time.perf_counter()
    try:
        for k in range(1, repeats + 1):
            current["pass"] = k
            engine.done = _done_by(done, k)
            engine.run(configs, on_row, on_skip)
        summary.status = "complete"
    except KeyboardInterrupt:
        summary.status = "interrupted"
        summary.notes.append(
            "interrupted (Ctrl-C or SIGTERM): configs that finished are in the database; re-run to resume"
        )
        raise
    except BaseException:
        summary.status = "failed"
        raise
    finally:
        summary.wall_s = time.perf_counter() - t0
        scratch.remove_own()
        try:
            db.finish_run(run_id, summary.status, summary.wall_s, summary.notes, skipped=summary.skipped,
                          skipped_configs=[{"config_key": k, "label": v} for k, v in skipped.items()])
        except ModelcostError:  # the file broke under the run (disk full, ...): the error that stopped it is told
            if summary.status == "complete":
                raise
        finally:
            db.close()
    return summary


def _keep_calibration(db: ResultsDB, run_id: int, notes: list[str]) -> None:
    """Keep this GPU's calibration (the cache's, what --predict uses) in the database beside the run's results."""
    from modelcost.runs.predict import calibration_here

    try:
        cal = calibration_here()
    except ModelcostError as exc:  # NVML or the cache could not be read: the sweep goes on without it
        notes.append(f"calibration not kept: {exc}")
        return
    if cal is not None and db.save_calibration(cal, run_id):
        notes.append(f"the calibration of {cal.gpu.name} ({cal.created or 'undated'}) is kept in the database")


def _done_by(counts: dict[tuple[str, str, str], int], k: int) -> set[tuple[str, str, str]]:
    """The resume keys pass ``k`` skips: those measured at least ``k`` times already."""
    return {key for key, n in counts.items() if n >= k}


def model_hashes(plan: Plan) -> dict[str, str]:
    """source -> content hash of each model of the plan (what identifies its configs in the database)."""
    return {m.source: source_hash(m.source) for m in plan.models}


def planned_configs(plan: Plan) -> list[Config]:
    """The configs a local run of ``plan`` on this machine would measure, in order (``sweep --dry-run``): the
    GPU backends by default where a GPU is visible, else the CPU ones. Nothing is loaded or measured."""
    return expand(plan, "cuda" if visible_gpus() else "cpu", model_hashes(plan))


def _engine(plan: Plan, workers: int | None, ray: str | None, done: set[tuple[str, str, str]]) -> tuple[Any, list[str]]:
    v = versions()
    if ray is not None:
        from modelcost.sweep.ray_engine import RayEngine

        eng = RayEngine(address=ray, workers=workers, timing=plan.timing, timeout_s=plan.timeout_s, versions=v,
                        done=done)
        return eng, list(eng.notes)
    from modelcost.sweep.workers import LocalEngine, make_slots

    slots, notes = make_slots(workers)
    eng = LocalEngine(slots, plan.timing, plan.timeout_s, v, done)
    return eng, notes
