"""Nothing lost, nothing let in (issue 24): a damaged or read-only results database, a folder SQLite cannot use,
configs that cannot run (a missing model, out of memory, a backend the model cannot use), the stored command, and
the sweep's scratch folders after SIGTERM and SIGKILL."""

from __future__ import annotations

import hashlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli.app import app
from modelcost.core.errors import ModelcostError
from modelcost.sweep.db import ResultsDB
from tests.cli.test_cli_analyze import assert_one_error_line as _one_line
from tests.sweep.test_sweep_run import TIMING

ROOT = Path(__file__).resolve().parents[2]
ONNX = ROOT / "sample_models" / "dynamic_batch.onnx"
CNN = f"{ROOT / 'tests' / 'fixtures' / 'tiny_cnn.py'}:make_model"
SLOW = f"{ROOT / 'tests' / 'fixtures' / 'slow_factory.py'}:make_model"


def _db(path: Path, rows: int = 1) -> Path:
    db = ResultsDB(path)
    run = db.start_run(label="a", engine="local", workers=1)
    for i in range(rows):
        db.insert_result({"run_id": run, "config_key": f"k{i}", "model_name": "m", "model_source": "m.onnx",
                          "model_hash": "h", "backend": "ort-cpu", "precision": "fp32", "batch_size": 1,
                          "status": "ok", "device_name": "cpu X", "versions_key": "v", "latency_p50_ms": 1.0,
                          "result_json": {"status": "ok", "notes": ["x" * 400]}})
    db.finish_run(run, "complete", 1.0)
    db.close()
    return path


def _missing_model_plan(folder: Path, name: str = "plan.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / name
    plan.write_text(f'[sweep]\nbackends = ["ort-cpu"]\ntimeout_s = 60\n{TIMING}\n'
                    f'[[models]]\nsource = "{folder / "gone.onnx"}"\nname = "gone"\n')
    return plan


# -- a damaged database -----------------------------------------------------------------------------------------

def test_a_database_damaged_past_its_first_pages_is_one_line_and_never_appended_to(tmp_path: Path) -> None:
    path = _db(tmp_path / "r.sqlite", rows=60)
    size = path.stat().st_size
    # 60 rows of ~0.5 KB: the results table spans pages well past the schema (page 1) and meta / runs (2-5);
    # overwrite the middle third of the file, so the file opens and its schema reads, but its rows do not.
    with open(path, "r+b") as f:
        f.seek(size // 3)
        f.write(b"\xde\xad\xbe\xef" * (size // 12))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    runner = CliRunner()
    _one_line(runner.invoke(app, ["results", str(path)]), "damaged")
    _one_line(runner.invoke(app, ["results", str(path), "--report", str(tmp_path / "x.md")]), "damaged")
    plan = _missing_model_plan(tmp_path)
    res = runner.invoke(app, ["sweep", str(plan), "--db", str(path), "--force"])
    _one_line(res, "damaged", "new --db")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest  # not one byte appended
    assert not (tmp_path / "x.md").exists()


def test_a_run_whose_stored_plan_no_longer_parses_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    db.start_run(label="a", engine="local", workers=1, plan_toml="[constraints\nmax_latency_ms = 1\n")
    db.close()
    _one_line(CliRunner().invoke(app, ["results", str(path), "--report", str(tmp_path / "x.md")]),
              "runs.plan_toml", "[constraints]")


@pytest.mark.parametrize(("column", "value", "words"), [
    ("model_name", 5, "model_name of result 1 holds int '5', not text"),  # a record whose type byte was damaged
    ("backend", None, "backend of result 1 holds NoneType"),  # NOT NULL column read back as NULL
    ("block_medians_ms", 7, "block_medians_ms of result 1 holds int"),  # a JSON column holding a number
])
def test_a_row_whose_values_are_not_of_their_columns_types_is_one_line(tmp_path: Path, column: str, value: object,
                                                                      words: str) -> None:
    """SQLite keeps any type in any column, so a damaged record can read back fine but hold an integer where the
    sweep wrote text (seen by tests/fuzz/fuzz_surfaces.py: a TypeError in json.loads and in the results table)."""
    import sqlite3

    path = _db(tmp_path / "r.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA writable_schema = 1")
        # What a damaged record holds cannot be written through SQL as it is: a TEXT column turns 5 into '5' and
        # NOT NULL refuses NULL. So the stored schema loses the column's type and constraint for this one update.
        conn.execute("UPDATE sqlite_master SET sql = replace(replace(sql, ?, ?), ?, ?) WHERE name = 'results'",
                     (f"{column} TEXT NOT NULL", column, f"{column} TEXT", column))
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE results SET {column} = ? WHERE result_id = 1", (value,))
    _one_line(CliRunner().invoke(app, ["results", str(path)]), "damaged", words)


def test_a_text_file_is_still_not_a_results_database(tmp_path: Path) -> None:
    text = tmp_path / "t.sqlite"
    text.write_text("not sqlite at all, just text " * 50)
    _one_line(CliRunner().invoke(app, ["results", str(text)]), "not a modelcost results database")


# -- folders and read-only files ------------------------------------------------------------------------------

@pytest.fixture()
def read_only() -> Iterator[Callable[[Path], None]]:
    """make(path): a file or folder nobody may write, even root (chmod, plus chattr +i where root ignores modes)."""
    made: list[Path] = []

    def make(path: Path) -> None:
        path.chmod(0o555 if path.is_dir() else 0o444)
        made.append(path)
        if os.access(path, os.W_OK):  # root: the mode does not bind
            done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
            if done.returncode != 0 or os.access(path, os.W_OK):
                pytest.skip("cannot make a path read-only here (root without chattr +i)")

    yield make
    for path in reversed(made):
        _writable(path)


def _writable(path: Path) -> None:
    if path.exists():
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        path.chmod(0o755 if path.is_dir() else 0o644)


def test_sweep_says_what_is_wrong_with_the_db_path(tmp_path: Path, read_only: Callable[[Path], None]) -> None:
    plan = _missing_model_plan(tmp_path / "plans")
    runner = CliRunner()
    missing = tmp_path / "nowhere" / "r.sqlite"
    _one_line(runner.invoke(app, ["sweep", str(plan), "--db", str(missing)]), "--db", "does not exist")
    locked = tmp_path / "locked"
    locked.mkdir()
    _db(locked / "r.sqlite")
    frozen_file = _db(tmp_path / "frozen.sqlite")
    digest = hashlib.sha256(frozen_file.read_bytes()).hexdigest()
    read_only(locked)
    read_only(frozen_file)
    _one_line(runner.invoke(app, ["sweep", str(plan), "--db", str(locked / "r.sqlite")]), "not writable")
    _one_line(runner.invoke(app, ["sweep", str(plan), "--db", str(locked / "new.sqlite")]), "not writable")
    _one_line(runner.invoke(app, ["sweep", str(plan), "--db", str(frozen_file)]), "read-only")
    assert hashlib.sha256(frozen_file.read_bytes()).hexdigest() == digest
    # Reading needs no write: a database in a read-only folder (no room for SQLite's -shm file) still lists.
    res = runner.invoke(app, ["results", str(locked / "r.sqlite")])
    assert res.exit_code == 0 and "1 result(s)" in res.output, res.output
    res = runner.invoke(app, ["results", str(frozen_file)])
    assert res.exit_code == 0 and "1 result(s)" in res.output, res.output


def test_a_write_ahead_log_that_cannot_be_read_is_said_not_skipped(tmp_path: Path,
                                                                    read_only: Callable[[Path], None]) -> None:
    """A sweep killed before its log was folded into the file leaves rows in ``-wal``; in a read-only folder
    SQLite cannot read them without its ``-shm`` file, and an 'immutable' read would silently miss them."""
    folder = tmp_path / "killed"
    folder.mkdir()
    path = folder / "r.sqlite"
    db = ResultsDB(path)
    db.conn.execute("PRAGMA wal_autocheckpoint=0")
    db.start_run(label="a", engine="local", workers=1)  # held in the -wal file only
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in ("", "-wal"):  # the file and its log, as a killed driver leaves them (the -shm is lost)
        (copy / f"r.sqlite{suffix}").write_bytes(Path(f"{path}{suffix}").read_bytes())
    db.close()
    read_only(copy)
    _one_line(CliRunner().invoke(app, ["results", str(copy / "r.sqlite")]), "-wal", "writable folder")


# -- configs that cannot run -----------------------------------------------------------------------------------

def test_out_of_memory_errors_are_told_from_other_failures() -> None:
    import numpy as np
    import torch

    from modelcost.core.errors import NotEnoughMemoryError, is_out_of_memory

    try:
        np.empty(10**15, dtype=np.float64)  # 8 PB: numpy refuses at once (no such allocation exists)
    except MemoryError as exc:
        numpy_oom: BaseException = exc
    wrapped = ModelcostError("m.py:make_model: example_inputs() raised RuntimeError: ...")
    wrapped.__cause__ = RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory")
    for exc in (torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"), numpy_oom, wrapped,
                RuntimeError("CUDA error: out of memory"), NotEnoughMemoryError("batch 10^9: inputs need 500 GiB"),
                RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Failed to allocate memory for buffer"),
                RuntimeError("std::bad_alloc")):
        assert is_out_of_memory(exc), exc
    for exc in (ValueError("shape mismatch"), RuntimeError("memory format not supported"), KeyError("memory"),
                ModelcostError("m.onnx: no such file")):
        assert not is_out_of_memory(exc), exc


def test_a_child_killed_by_sigkill_is_oom_only_when_the_kernel_killed_for_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.sweep import child_run

    counts = iter([{"/proc/vmstat": 3}, {"/proc/vmstat": 4}])
    monkeypatch.setattr(child_run, "oom_kills", lambda: next(counts))
    before = child_run.oom_kills()
    oom, why = child_run.died_of_oom(-signal.SIGKILL, "", before)
    assert oom and "out-of-memory killer" in why and "/proc/vmstat" in why
    # The same death with no OOM kill recorded: SIGKILL alone proves nothing (`kill -9`, a scheduler): failed.
    monkeypatch.setattr(child_run, "oom_kills", lambda: {"/proc/vmstat": 3})
    assert child_run.died_of_oom(-signal.SIGKILL, "", {"/proc/vmstat": 3})[0] is False
    assert child_run.died_of_oom(-signal.SIGABRT, "terminate called\n  what():  std::bad_alloc\n", {})[0] is True
    # an old warning in the log does not make a segfault an OOM: only the last lines say how the child died
    tail = "warning: out of memory, retrying with a smaller workspace\n" + "kernel ok\n" * 5 + "Segmentation fault\n"
    assert child_run.died_of_oom(-signal.SIGSEGV, tail, {})[0] is False


@pytest.mark.slow
def test_configs_that_cannot_run_are_recorded_honestly_and_nothing_measured_exits_1(tmp_path: Path) -> None:
    folder = tmp_path / "my plans"  # a space: the stored command must quote it
    folder.mkdir()
    plan = folder / "plan.toml"
    plan.write_text(
        f'[sweep]\ntimeout_s = 120\n{TIMING}\n'
        f'[[models]]\nsource = "{ONNX}"\nname = "tiny"\ninput_shapes = ["tokens=1x8x16", "mask=1x8"]\n'
        'backends = ["torch-cpu"]\n'  # an ONNX model on a PyTorch backend: unavailable, as analyze says
        f'[[models]]\nsource = "{CNN}"\nname = "cnn"\ninput_shapes = ["x=1x3x16x16"]\nbackends = ["torch-cpu"]\n'
        'batch_sizes = [1000000000]\n'  # 10^9 x 3 x 16 x 16 float32 inputs = 3 TB: out of memory
        f'[[models]]\nsource = "{ONNX}"\nname = "huge"\ninput_shapes = ["tokens=1x8x16", "mask=1x8"]\n'
        'backends = ["ort-cpu"]\nbatch_sizes = [1000000000]\n'  # refused before it runs: inputs alone ~500 GiB
        f'[[models]]\nsource = "{folder / "gone.onnx"}"\nname = "gone"\nbackends = ["ort-cpu"]\n')
    db_path = tmp_path / "r.sqlite"
    res = CliRunner().invoke(app, ["sweep", str(plan), "--db", str(db_path), "--label", "it's"])
    assert res.exit_code == 1 and "nothing was measured" in res.output, res.output
    db = ResultsDB(db_path, create=False)
    rows = {r["model_name"]: r for r in db.results()}
    run = db.runs()[0]
    db.close()
    assert {k: r["status"] for k, r in rows.items()} == {"tiny": "unavailable", "cnn": "oom", "huge": "oom",
                                                      "gone": "failed"}, {k: r["reason"] for k, r in rows.items()}
    assert rows["tiny"]["reason"] == "PyTorch backends need a PyTorch model"
    assert "no such file" in rows["gone"]["reason"]
    assert shlex.split(run["command"]) == ["modelcost", "sweep", str(plan), "--db", str(db_path), "--label", "it's"]
    assert shlex.split(rows["gone"]["command"])[2] == str(folder / "gone.onnx")


# -- scratch folders -------------------------------------------------------------------------------------------

def _sweep_process(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """A sweep whose one config takes 30 s to load its model, with its temporary folder under tmp_path/tmp."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(f'[sweep]\nbackends = ["torch-cpu"]\ntimeout_s = 120\n{TIMING}\n'
                    f'[[models]]\nsource = "{SLOW}"\nname = "slow"\n')
    env = {**os.environ, "TMPDIR": str(tmp),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "modelcost", "sweep", str(plan), "--db", str(tmp_path / "r.sqlite")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not list(tmp.glob("modelcost-sweep-*/**/request.json")):
        time.sleep(0.1)
    if not list(tmp.glob("modelcost-sweep-*/**/request.json")):
        proc.kill()
        pytest.fail(f"no config started: {proc.communicate()[0]}")
    return proc, tmp


@pytest.mark.slow
def test_sigterm_leaves_no_scratch_folder(tmp_path: Path) -> None:
    proc, tmp = _sweep_process(tmp_path)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 143, out
    assert not list(tmp.glob("modelcost-sweep-*")), out


@pytest.mark.slow
def test_sigkill_leftovers_are_removed_by_the_next_sweep_and_nothing_else_is(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.sweep import scratch

    proc, tmp = _sweep_process(tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    left = list(tmp.glob("modelcost-sweep-*"))
    assert len(left) == 1 and (left[0] / scratch.MARKER).is_file()
    strangers = [tmp / "modelcost-sweep-someone-elses", tmp / "unrelated"]  # no marker: never ours to remove
    for s in strangers:
        s.mkdir()
    live = tmp / f"modelcost-sweep-{os.getppid()}-x"  # a live owner (this test's parent process): kept
    live.mkdir()
    scratch.mark(live, os.getppid())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    plan = _missing_model_plan(tmp_path / "p")
    res = CliRunner().invoke(app, ["sweep", str(plan), "--db", str(tmp_path / "b.sqlite")])
    assert "nothing was measured" in res.output, res.output
    assert sorted(tmp.iterdir()) == sorted([*strangers, live])


def test_scratch_markers_name_their_owner(tmp_path: Path) -> None:
    from modelcost.sweep import scratch

    own = scratch.make_root(tmp_path)
    assert own.name.startswith(f"modelcost-sweep-{os.getpid()}-") and scratch.owner_alive(own)
    dead = tmp_path / "modelcost-sweep-dead"
    dead.mkdir()
    scratch.mark(dead, 2**22 + 12345)  # above Linux's default pid_max (2^22): no such process
    assert not scratch.owner_alive(dead)
    assert scratch.remove_stale(tmp_path) == [dead] and own.is_dir()
    scratch.remove_own()
    assert not own.exists()


def test_a_removal_cut_short_keeps_the_marker_so_the_next_sweep_tries_again(
        tmp_path: Path, read_only: Callable[[Path], None]) -> None:
    from modelcost.sweep import scratch

    dead = tmp_path / "modelcost-sweep-dead"
    (dead / "config-1").mkdir(parents=True)
    (dead / "config-1" / "answer.json").write_text("{}")
    scratch.mark(dead, 2**22 + 12345)
    read_only(dead / "config-1")  # a file that cannot go yet, as one a dying child is still writing
    assert scratch.remove_stale(tmp_path) == [] and (dead / scratch.MARKER).is_file()
    _writable(dead / "config-1")
    assert scratch.remove_stale(tmp_path) == [dead] and not dead.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_whose_sweep_died_before_it_started_ends_at_once() -> None:
    """The sweep's pid travels to the child: one whose sweep was killed before the child could ask to die with
    it (already handed to another parent) ends, rather than time a config nobody records and write its answer
    into a scratch folder the next sweep is removing."""
    code = "from modelcost.sweep.child import _die_with_parent\n_die_with_parent()\nprint('alive')"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MODELCOST_SWEEP_PARENT": str(2**22 + 12345)}  # no such pid
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "alive" not in done.stdout, (done.stdout, done.stderr)
    env["MODELCOST_SWEEP_PARENT"] = str(os.getpid())  # its real parent: it runs
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60).stdout.strip() == "alive"


def test_results_refuses_a_bad_report_name_before_writing_any_output(tmp_path: Path) -> None:
    """Found by the fuzzer: 'results DB --json abc --report 1000000000' wrote abc, then refused the report name.
    Every output is now checked and made before any is written."""
    path = _db(tmp_path / "r.sqlite")
    res = CliRunner().invoke(app, ["results", str(path), "--json", str(tmp_path / "abc"), "--report",
                                   str(tmp_path / "1000000000")])
    _one_line(res, "--report", "end it in .md or .html")
    assert sorted(os.listdir(tmp_path)) == ["r.sqlite"]
