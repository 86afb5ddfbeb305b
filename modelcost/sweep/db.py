"""The sweep's results database: one SQLite file, one row per (config, run), written as each config finishes.

docs/SWEEP_SCHEMA.md documents every table and column. The schema is versioned like the JSON report
(``meta.schema`` = ``modelcost.sweep/2``). A ``modelcost.sweep/1`` file is read as it is (its rows read as one
repeat each, their stability flags taken from ``result_json``); the sweep's writer adds the version-2 columns
and table to it, the flags copied from ``result_json`` into the new column (nothing is removed or changed). A
file of another version is refused with one line, never altered.
Only the sweep's driver process writes (workers hand their rows to it), each row in its own transaction, so
a crash or Ctrl-C loses at most the configs still running. The writer refuses a damaged file (quick check), a
read-only one and a folder SQLite cannot keep its journal in; readers never write; every SQLite error is one line
that says what is wrong with the file (``_problem``). Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.text import utc_timestamp

SCHEMA = "modelcost.sweep/2"
OLD_SCHEMAS = ("modelcost.sweep/1",)  # read as they are; the writer adds what version 2 added

# (name, SQL type) of a run. JSON-encoded: notes.
RUN_COLUMN_TYPES: tuple[tuple[str, str], ...] = (
    ("run_id", "INTEGER PRIMARY KEY AUTOINCREMENT"), ("label", "TEXT"), ("started", "TEXT NOT NULL"),
    ("finished", "TEXT"), ("status", "TEXT NOT NULL"), ("engine", "TEXT NOT NULL"), ("workers", "INTEGER"),
    ("wall_s", "REAL"), ("command", "TEXT"), ("plan_path", "TEXT"), ("plan_toml", "TEXT"), ("host", "TEXT"),
    ("configs_planned", "INTEGER"), ("configs_skipped", "INTEGER"), ("notes", "TEXT"),
    ("repeats", "INTEGER"), ("skipped_configs", "TEXT"),  # version 2
)
RUN_COLUMNS = tuple(name for name, _ in RUN_COLUMN_TYPES)

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
    ("repeat", "INTEGER"), ("unstable", "TEXT"),  # version 2
)
JSON_COLUMNS = {"input_shapes", "versions", "block_medians_ms", "result_json", "static_json", "unstable"}
RUN_JSON_COLUMNS = ("notes", "skipped_configs")
RESUMABLE = ("ok", "unavailable")  # a config with one of these on the same device type + versions is not re-run
# Added by version 2: (table, column, SQL type) of the two tables version 1 had.
V2_COLUMNS = (("runs", "repeats", "INTEGER"), ("runs", "skipped_configs", "TEXT"), ("results", "repeat", "INTEGER"),
              ("results", "unstable", "TEXT"))
# (name, SQL type) of a noise baseline: one config identity's between-run spread, stored by 'results --noise'.
NOISE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("model_name", "TEXT NOT NULL"), ("backend", "TEXT NOT NULL"), ("precision", "TEXT NOT NULL"),
    ("batch_size", "INTEGER NOT NULL"), ("device_name", "TEXT NOT NULL"), ("sd_log", "REAL NOT NULL"),
    ("df", "INTEGER NOT NULL"), ("runs", "TEXT"), ("recorded", "TEXT NOT NULL"),
)
NOISE_KEY = ("model_name", "backend", "precision", "batch_size", "device_name")
_NOISE_DDL = (f"CREATE TABLE IF NOT EXISTS noise_baseline ({', '.join(f'{n} {t}' for n, t in NOISE_COLUMNS)}, "
              f"PRIMARY KEY ({', '.join(NOISE_KEY)}))")

# (name, SQL type) of a GPU calibration (core/calibration.py) a sweep ran beside: the whole file, kept once per
# (fingerprint, schema, created). A table added within version 2: a file without it reads as holding none, and the
# sweep's writer adds it (an older modelcost reading the file ignores it).
CALIBRATION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("gpu_name", "TEXT NOT NULL"), ("fingerprint", "TEXT NOT NULL"), ("schema", "TEXT NOT NULL"),
    ("created", "TEXT NOT NULL"), ("run_id", "INTEGER"), ("calibration_json", "TEXT NOT NULL"),
    ("recorded", "TEXT NOT NULL"),
)
CALIBRATION_KEY = ("fingerprint", "schema", "created")
_CALIBRATION_DDL = (f"CREATE TABLE IF NOT EXISTS calibrations "
                    f"({', '.join(f'{n} {t}' for n, t in CALIBRATION_COLUMNS)}, "
                    f"PRIMARY KEY ({', '.join(CALIBRATION_KEY)}))")

_DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs ({", ".join(f"{n} {t}" for n, t in RUN_COLUMN_TYPES)});
CREATE TABLE IF NOT EXISTS results ({", ".join(f"{n} {t}" for n, t in RESULT_COLUMNS)});
CREATE INDEX IF NOT EXISTS results_resume ON results (config_key, device_name, versions_key, status);
CREATE INDEX IF NOT EXISTS results_run ON results (run_id);
{_NOISE_DDL};
{_CALIBRATION_DDL};
"""


class ResultsDB:
    """The database file. ``create``: the sweep's writer (made when missing, refused when damaged); readers pass
    False and only read (``_reader_uri``). Every SQLite error becomes one line that says what is wrong."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        if create:
            _check_writable(self.path)
            target, existed = str(self.path), self.path.is_file() and self.path.stat().st_size > 0
        else:
            if not self.path.is_file():
                raise ModelcostError(
                    f"no results database at {self.path} (make one with 'modelcost sweep PLAN {{db}} {self.path}')",
                    fields="db")
            target, existed = _reader_uri(self.path), True
        conn = None
        try:
            conn = sqlite3.connect(target, timeout=30.0, uri=not create)
            conn.row_factory = sqlite3.Row
            conn.text_factory = _text
            self.conn = conn
            self._check_schema(create)
            if create and existed:
                self._check_integrity()
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.DatabaseError | UnicodeDecodeError):
                raise ModelcostError(_problem(self.path, _as_sqlite(exc), "open it")) from None
            raise

    def _check_schema(self, create: bool) -> None:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" in tables:
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            found = row[0] if row else "none"
            if found not in (SCHEMA, *OLD_SCHEMAS):
                raise ModelcostError(f"{self.path} has schema {found}; this modelcost reads {SCHEMA} and "
                                     f"{', '.join(OLD_SCHEMAS)}")
            self.schema = found
            if create and found != SCHEMA:
                self._upgrade()
            if create:
                with self.conn:
                    self.conn.execute(_CALIBRATION_DDL)
            return
        if tables:
            raise ModelcostError(f"{self.path} is an SQLite file but not a modelcost results database")
        if not create:
            raise ModelcostError(f"{self.path} is empty: no sweep has written to it")
        self.conn.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
        with self.conn:
            self.conn.executescript(_DDL)
            self.conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA,))
        self.schema = SCHEMA

    def _upgrade(self) -> None:
        """A version-1 file the sweep writes to: add version 2's columns and table, in one transaction."""
        with self.conn:
            for table, column, sql in V2_COLUMNS:
                have = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {sql}")
            self.conn.execute(_NOISE_DDL)
            with contextlib.suppress(sqlite3.OperationalError):  # an SQLite without JSON functions: left NULL
                self.conn.execute("UPDATE results SET unstable = COALESCE(json_extract(result_json, '$.unstable'), "
                                  "'[]') WHERE unstable IS NULL AND json_valid(result_json)")
            self.conn.execute("UPDATE meta SET value=? WHERE key='schema'", (SCHEMA,))
        self.schema = SCHEMA

    def _check_integrity(self) -> None:
        """The writer refuses a damaged file rather than add rows to it (SQLite's quick check reads every page)."""
        found = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check(1)")]
        if found != ["ok"]:
            problems = " ".join(" ".join(found).split()).replace("*** in database main *** ", "")
            raise sqlite3.DatabaseError(f"database disk image is malformed: {problems[:300]}")

    @contextmanager
    def _sql(self, doing: str) -> Iterator[None]:
        try:
            yield
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise ModelcostError(_problem(self.path, _as_sqlite(exc), doing)) from None

    def _typed(self, row: dict[str, Any], columns: tuple[tuple[str, str], ...], where: str) -> dict[str, Any]:
        """``row`` as read, refused when a value is not of its column's type (SQLite stores any type in any
        column, so a damaged record can read back an integer where text was written, or NULL where none may be)."""
        for name, sql in columns:
            value, kind = row.get(name), sql.split()[0]
            bad = (value is None and "NOT NULL" in sql) or (value is not None and not isinstance(
                value, {"TEXT": str, "INTEGER": int, "REAL": (int, float)}[kind]))
            if bad:
                raise ModelcostError(f"{self.path} is damaged: {name} of {where} holds {type(value).__name__} "
                                     f"{str(value)[:40]!r}, not {kind.lower()}. {_rescue(self.path)}")
        return row

    def _json(self, text: str | None, where: str) -> Any:
        try:
            return json.loads(text) if text else None
        except ValueError:
            raise ModelcostError(f"{self.path} is damaged: {where} is not JSON. {_rescue(self.path)}") from None

    def close(self) -> None:
        self.conn.close()

    # -- runs ---------------------------------------------------------------------------------------------
    def start_run(self, **fields: Any) -> int:
        fields = {"started": utc_timestamp(), "status": "running", **fields}
        for name in RUN_JSON_COLUMNS:
            if fields.get(name) is not None:
                fields[name] = json.dumps(fields[name])
        cols = [c for c in RUN_COLUMNS if c in fields]
        with self._sql("record the run"), self.conn:
            cur = self.conn.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                                    [fields[c] for c in cols])
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def finish_run(self, run_id: int, status: str, wall_s: float, notes: Sequence[str] = (),
                   skipped: int | None = None, skipped_configs: Sequence[dict[str, str]] | None = None) -> None:
        """Close the run. ``skipped_configs``: {"config_key", "label"} of each config a resume skipped."""
        listed = None if skipped_configs is None else json.dumps(list(skipped_configs))
        with self._sql("close the run"), self.conn:
            self.conn.execute("UPDATE runs SET finished=?, status=?, wall_s=?, notes=?, "
                              "configs_skipped=COALESCE(?, configs_skipped), "
                              "skipped_configs=COALESCE(?, skipped_configs) WHERE run_id=?",
                              (utc_timestamp(), status, round(wall_s, 3), json.dumps(list(notes)), skipped, listed,
                               run_id))

    def runs(self) -> list[dict[str, Any]]:
        with self._sql("read its runs"):
            rows = [dict(r) for r in self.conn.execute("SELECT * FROM runs ORDER BY run_id")]
        for r in rows:
            self._typed(r, RUN_COLUMN_TYPES, f"run {r.get('run_id')}")
            r["notes"] = self._json(r["notes"], f"the notes of run {r['run_id']}") or []
            r["skipped_configs"] = self._json(r.get("skipped_configs"), f"skipped_configs of run {r['run_id']}")
            r["repeats"] = r.get("repeats") or 1  # version 1: one pass
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
        with self._sql("add a result"), self.conn:
            self.conn.execute(f"INSERT INTO results ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                              values)

    def done_counts(self) -> dict[tuple[str, str, str], int]:
        """(config_key, device_name, versions_key) -> how many results a resume may count as measured: ``ok`` or
        ``unavailable``, and not flagged unstable (an unstable row is measured again)."""
        marks = ", ".join("?" * len(RESUMABLE))
        q = (f"SELECT config_key, device_name, versions_key, COUNT(*) FROM results WHERE status IN ({marks}) "
             "AND (unstable IS NULL OR unstable = '[]') GROUP BY config_key, device_name, versions_key")
        with self._sql("read what was measured"):
            return {(r[0], r[1], r[2]): int(r[3]) for r in self.conn.execute(q, RESUMABLE)}

    def done_keys(self) -> set[tuple[str, str, str]]:
        """(config_key, device_name, versions_key) of every result a resume may skip."""
        return set(self.done_counts())

    def results(self, where: str = "", params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        with self._sql("read its results"):
            rows = [dict(r) for r in self.conn.execute(f"SELECT * FROM results {where} ORDER BY result_id",
                                                       tuple(params))]
        for r in rows:
            self._typed(r, RESULT_COLUMNS, f"result {r.get('result_id')}")
            for c in JSON_COLUMNS:
                r[c] = self._json(r.get(c), f"{c} of result {r['result_id']}")
            _version1_defaults(r)
        return rows

    # -- noise baseline -----------------------------------------------------------------------------------
    def save_noise(self, rows: Iterable[dict[str, Any]]) -> int:
        """Store (replace) the noise baseline of each config identity in ``rows`` (NOISE_COLUMNS but
        ``recorded``); returns how many were stored."""
        names = [n for n, _ in NOISE_COLUMNS]
        now, n = utc_timestamp(), 0
        with self._sql("store the noise baseline"), self.conn:
            for row in rows:
                values = {**row, "recorded": now, "runs": json.dumps(row.get("runs") or [])}
                self.conn.execute(f"INSERT OR REPLACE INTO noise_baseline ({', '.join(names)}) VALUES "
                                  f"({', '.join('?' * len(names))})", [values.get(c) for c in names])
                n += 1
        return n

    def noise(self) -> list[dict[str, Any]]:
        """The stored noise baseline, one row per config identity ([] in a version-1 file)."""
        if self.schema != SCHEMA:
            return []
        with self._sql("read the noise baseline"):
            rows = [dict(r) for r in self.conn.execute(f"SELECT * FROM noise_baseline ORDER BY {', '.join(NOISE_KEY)}")]
        for r in rows:
            self._typed(r, NOISE_COLUMNS, f"the noise baseline of {r.get('model_name')!r}")
            r["runs"] = self._json(r["runs"], "runs of the noise baseline") or []
        return rows


    # -- calibrations -------------------------------------------------------------------------------------
    def save_calibration(self, cal: Any, run_id: int | None) -> bool:
        """Keep ``cal`` (a core.calibration.Calibration) with the run that first ran beside it; False when this
        very calibration (same GPU fingerprint, schema and creation time) is already kept."""
        from modelcost.core.calibration import to_dict

        row = {"gpu_name": cal.gpu.name, "fingerprint": f"{cal.gpu.name}|{cal.gpu.key()}", "schema": cal.schema,
               "created": cal.created or "", "run_id": run_id, "calibration_json": json.dumps(to_dict(cal)),
               "recorded": utc_timestamp()}
        names = [n for n, _ in CALIBRATION_COLUMNS]
        with self._sql("keep the calibration"), self.conn:
            cur = self.conn.execute(f"INSERT OR IGNORE INTO calibrations ({', '.join(names)}) VALUES "
                                    f"({', '.join('?' * len(names))})", [row[n] for n in names])
        return cur.rowcount == 1

    def calibrations(self) -> list[dict[str, Any]]:
        """The kept calibrations, oldest first, each with ``calibration`` (the file's JSON document); [] in a file
        written before the table existed."""
        with self._sql("read its calibrations"):
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "calibrations" not in tables:
                return []
            rows = [dict(r) for r in self.conn.execute("SELECT * FROM calibrations ORDER BY recorded, rowid")]
        for r in rows:
            self._typed(r, CALIBRATION_COLUMNS, f"the calibration of {r.get('gpu_name')!r}")
            r["calibration"] = self._json(r.pop("calibration_json"), f"the calibration of {r['gpu_name']!r}")
        return rows


def _version1_defaults(row: dict[str, Any]) -> None:
    """A version-1 row: one repeat, its stability flags from the stored benchmark result."""
    if row.get("repeat") is None:
        row["repeat"] = 1
    if row.get("unstable") is None:
        flags = (row.get("result_json") or {}).get("unstable") if isinstance(row.get("result_json"), dict) else None
        row["unstable"] = [str(f) for f in flags] if isinstance(flags, list) else []


def _as_sqlite(exc: BaseException) -> sqlite3.DatabaseError:
    """A UnicodeDecodeError from SQLite (a damaged schema name, or an error message quoting damaged bytes, that
    Python cannot decode) is the file's damage, said as SQLite says it."""
    if isinstance(exc, sqlite3.DatabaseError):
        return exc
    return sqlite3.DatabaseError(f"database disk image is malformed: text that is not UTF-8 ({exc.reason})")


def _text(data: bytes) -> str:
    """SQLite text as read: a damaged record can hold bytes that are not UTF-8, said as damage (a DatabaseError,
    worded like every other) instead of a UnicodeDecodeError."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise sqlite3.DatabaseError(f"database disk image is malformed: text not UTF-8 ({exc.reason})") from None


def _rescue(path: Path) -> str:
    return f"'sqlite3 {path} .recover' may rescue the rows it still holds; a sweep can start a new --db"


def _check_writable(path: Path) -> None:
    """The sweep's --db: a file it can write, in a folder where SQLite can keep its -wal and -shm files."""
    if path.is_dir():
        raise ModelcostError(f"{{db}} {path} is a folder; give a file path, e.g. results.sqlite", fields="db")
    folder = path.parent
    if not folder.is_dir():
        raise ModelcostError(f"{{db}} {path}: the folder {folder} does not exist; make it first or choose "
                             f"another {{db}}", fields="db")
    if not os.access(folder, os.W_OK | os.X_OK):
        reader = f" ('modelcost results {path}' still reads it there)" if path.is_file() else ""
        raise ModelcostError(f"{{db}} {path}: the folder {folder} is not writable, and SQLite keeps its journal "
                             f"files (-wal, -shm) beside the database; choose a {{db}} in a writable folder{reader}",
                             fields="db")
    if path.exists() and not os.access(path, os.W_OK):
        raise ModelcostError(f"{{db}} {path} is read-only and the sweep adds its rows to it: make it writable or "
                             f"choose another {{db}} ('modelcost results {path}' reads it as it is)", fields="db")


def _reader_uri(path: Path) -> str:
    """How a reader opens ``path``: read-write where it may (SQLite then tidies its -wal / -shm files on close),
    else read-only. In a folder it cannot write there is no room for SQLite's -shm file, so immutable, unless a
    -wal file holds rows not yet in the database: those only a -shm file lets SQLite read (``_problem`` says so
    when it is missing), and an immutable read would silently leave them out."""
    uri = path.resolve().as_uri()
    if os.access(path.parent, os.W_OK | os.X_OK):
        return f"{uri}?mode={'rw' if os.access(path, os.W_OK) else 'ro'}"
    return f"{uri}?mode=ro" if _wal_bytes(path) else f"{uri}?mode=ro&immutable=1"


def _wal_bytes(path: Path) -> int:
    try:
        return Path(f"{path}-wal").stat().st_size
    except OSError:
        return 0


def _problem(path: Path, exc: sqlite3.DatabaseError, doing: str) -> str:
    """One line for an SQLite error: what is wrong with the file, and what to do."""
    text = str(exc)
    low = text.lower()
    if "file is not a database" in low:
        return f"{path} is not a modelcost results database (SQLite: {text})"
    if "malformed" in low or "corrupt" in low:
        return f"{path} is damaged (SQLite: {text}); modelcost does not add to it. {_rescue(path)}"
    if _wal_bytes(path) and not os.access(path.parent, os.W_OK | os.X_OK):
        return (f"{path}: its -wal file holds rows not yet in the database (a sweep that was killed), and SQLite "
                f"cannot read them in the read-only folder {path.parent}: copy the database with its -wal file to "
                "a writable folder, or make this one writable")
    if "readonly" in low or "read-only" in low:
        return f"{path} is read-only (SQLite: {text}); make it writable or choose another --db"
    if "locked" in low or "busy" in low:
        return f"{path} is locked by another process (SQLite: {text}); try again when it is done"
    if "full" in low:
        return f"{path}: the disk is full (SQLite: {text}); free some space and run the same command to resume"
    return f"{path}: SQLite could not {doing} ({text})"
