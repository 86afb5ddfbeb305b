"""The sweep's results database: one SQLite file, one row per (config, run), written as each config finishes.

docs/SWEEP_SCHEMA.md documents every table and column. The schema is versioned like the JSON report
(``meta.schema`` = ``modelcost.sweep/1``); a file of another version is refused with one line, never altered.
Only the sweep's driver process writes (workers hand their rows to it), each row in its own transaction, so
a crash or Ctrl-C loses at most the configs still running. Standard library only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.text import utc_timestamp

SCHEMA = "modelcost.sweep/1"

RUN_COLUMNS = ("run_id", "label", "started", "finished", "status", "engine", "workers", "wall_s", "command",
               "plan_path", "plan_toml", "host", "configs_planned", "configs_skipped", "notes")

# (name, SQL type). JSON-encoded columns are listed in JSON_COLUMNS.
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("result_id", "INTEGER PRIMARY KEY AUTOINCREMENT"), ("run_id", "INTEGER NOT NULL REFERENCES runs(run_id)"),
    ("config_key", "TEXT NOT NULL"), ("model_name", "TEXT NOT NULL"), ("model_source", "TEXT NOT NULL"),
    ("model_hash", "TEXT NOT NULL"), ("input_shapes", "TEXT"), ("backend", "TEXT NOT NULL"),
    ("precision", "TEXT NOT NULL"), ("batch_size", "INTEGER NOT NULL"), ("status", "TEXT NOT NULL"),
    ("reason", "TEXT"), ("device_kind", "TEXT"), ("device_name", "TEXT"), ("device_uuid", "TEXT"),
    ("driver", "TEXT"), ("host", "TEXT"), ("versions", "TEXT"), ("versions_key", "TEXT"), ("worker", "TEXT"),
    ("started", "TEXT"), ("finished", "TEXT"), ("duration_s", "REAL"), ("latency_p50_ms", "REAL"),
    ("latency_p90_ms", "REAL"), ("latency_p99_ms", "REAL"), ("latency_ci95_rel", "REAL"),
    ("throughput_ips", "REAL"), ("gpu_memory_peak_bytes", "INTEGER"), ("params", "INTEGER"), ("macs", "INTEGER"),
    ("flops", "INTEGER"), ("weight_bytes", "INTEGER"), ("block_medians_ms", "TEXT"), ("timing", "TEXT"),
    ("command", "TEXT"), ("result_json", "TEXT"), ("static_json", "TEXT"),
)
JSON_COLUMNS = {"input_shapes", "versions", "block_medians_ms", "result_json", "static_json"}
RESUMABLE = ("ok", "unavailable")  # a config with one of these on the same device type + versions is not re-run

_DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT, started TEXT NOT NULL, finished TEXT,
  status TEXT NOT NULL, engine TEXT NOT NULL, workers INTEGER, wall_s REAL, command TEXT, plan_path TEXT,
  plan_toml TEXT, host TEXT, configs_planned INTEGER, configs_skipped INTEGER, notes TEXT);
CREATE TABLE IF NOT EXISTS results ({", ".join(f"{n} {t}" for n, t in RESULT_COLUMNS)});
CREATE INDEX IF NOT EXISTS results_resume ON results (config_key, device_name, versions_key, status);
CREATE INDEX IF NOT EXISTS results_run ON results (run_id);
"""


class ResultsDB:
    """The database file. ``create``: make it when missing (the sweep); readers pass False."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise ModelcostError(
                f"no results database at {self.path} (make one with 'modelcost sweep PLAN --db {self.path}')"
            )
        if create and self.path.is_dir():
            raise ModelcostError(f"--db {self.path} is a folder; give a file path, e.g. results.sqlite")
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=30.0)
            self.conn.row_factory = sqlite3.Row
            self._check_schema(create)
        except sqlite3.DatabaseError as exc:
            raise ModelcostError(f"{self.path} is not a modelcost results database ({exc})") from None

    def _check_schema(self, create: bool) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" in tables:
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or row[0] != SCHEMA:
                found = row[0] if row else "none"
                raise ModelcostError(f"{self.path} has schema {found}; this modelcost reads {SCHEMA}")
            return
        if tables:
            raise ModelcostError(f"{self.path} is an SQLite file but not a modelcost results database")
        if not create:
            raise ModelcostError(f"{self.path} is empty: no sweep has written to it")
        self.conn.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
        with self.conn:
            self.conn.executescript(_DDL)
            self.conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA,))

    def close(self) -> None:
        self.conn.close()

    # -- runs ---------------------------------------------------------------------------------------------
    def start_run(self, **fields: Any) -> int:
        fields = {"started": utc_timestamp(), "status": "running", **fields}
        if "notes" in fields:
            fields["notes"] = json.dumps(fields["notes"])
        cols = [c for c in RUN_COLUMNS if c in fields]
        with self.conn:
            cur = self.conn.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                    [fields[c] for c in cols])
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def finish_run(self, run_id: int, status: str, wall_s: float, notes: Sequence[str] = (),
                   skipped: int | None = None) -> None:
        with self.conn:
            self.conn.execute("UPDATE runs SET finished=?, status=?, wall_s=?, notes=?, "
                              "configs_skipped=COALESCE(?, configs_skipped) WHERE run_id=?",
                              (utc_timestamp(), status, round(wall_s, 3), json.dumps(list(notes)), skipped, run_id))

    def runs(self) -> list[dict[str, Any]]:
        rows = [dict(r) for r in self.conn.execute("SELECT * FROM runs ORDER BY run_id")]
        for r in rows:
            r["notes"] = json.loads(r["notes"]) if r["notes"] else []
        return rows

    def resolve_run(self, ref: str) -> int:
        """A run by id, by label (the latest with it), or 'latest' / 'previous'."""
        runs = self.runs()
        if not runs:
            raise ModelcostError(f"{self.path} holds no runs")
        if ref in ("latest", "previous"):
            if ref == "previous" and len(runs) < 2:
                raise ModelcostError(f"{self.path} holds one run: there is no 'previous'")
            return int(runs[-1 if ref == "latest" else -2]["run_id"])
        if ref.isdigit() and any(r["run_id"] == int(ref) for r in runs):
            return int(ref)
        labelled = [r for r in runs if r["label"] == ref]
        if labelled:
            return int(labelled[-1]["run_id"])
        known = ", ".join(f"{r['run_id']}" + (f" ({r['label']})" if r["label"] else "") for r in runs)
        raise ModelcostError(f"no run {ref!r} in {self.path}; runs: {known}")

    # -- results ------------------------------------------------------------------------------------------
    def insert_result(self, row: dict[str, Any]) -> None:
        """One row, committed at once."""
        names = [n for n, _ in RESULT_COLUMNS if n != "result_id" and n in row]
        values = [json.dumps(row[n]) if n in JSON_COLUMNS and row[n] is not None else row[n] for n in names]
        with self.conn:
            self.conn.execute(f"INSERT INTO results ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                              values)

    def done_keys(self) -> set[tuple[str, str, str]]:
        """(config_key, device_name, versions_key) of every result a resume may skip."""
        marks = ", ".join("?" * len(RESUMABLE))
        q = f"SELECT config_key, device_name, versions_key FROM results WHERE status IN ({marks})"
        return {(r[0], r[1], r[2]) for r in self.conn.execute(q, RESUMABLE)}

    def results(self, where: str = "", params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        rows = [dict(r) for r in self.conn.execute(f"SELECT * FROM results {where} ORDER BY result_id", tuple(params))]
        for r in rows:
            for c in JSON_COLUMNS:
                r[c] = json.loads(r[c]) if r[c] else None
        return rows
