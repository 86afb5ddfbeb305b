"""Real sweeps on the CPU (ort-cpu configs of a tiny ONNX model, each in its own child process): a config whose
process is killed, resume, --force, a driver killed mid-sweep, and a real local Ray instance with 2 CPU workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli.app import app
from modelcost.sweep.db import ResultsDB

ROOT = Path(__file__).resolve().parents[2]
ONNX = ROOT / "sample_models" / "dynamic_batch.onnx"
CRASH = f"{ROOT / 'tests' / 'fixtures' / 'sweep_crash.py'}:make_model"
TIMING = """
[timing]
warmup = 2
min_time_s = 0.05
min_iters = 20
max_time_s = 0.3
e2e_min_iters = 2
e2e_max_s = 0.05
"""

# One xdist group: groups are handed to the test processes first, largest first, so the Ray test
# (the longest single test, a minute or more) starts early instead of last while the other process idles
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sweep"), pytest.mark.usefixtures("stable_children")]


def _plan(tmp_path: Path, batches: str = "[1, 2]", crash: bool = True) -> Path:
    text = f'[sweep]\nbackends = ["ort-cpu"]\nbatch_sizes = {batches}\ntimeout_s = 120\n{TIMING}\n'
    text += f'[[models]]\nsource = "{ONNX}"\nname = "tiny"\ninput_shapes = ["tokens=1x8x16", "mask=1x8"]\n'
    if crash:
        text += f'[[models]]\nsource = "{CRASH}"\nname = "crashes"\nbatch_sizes = [1]\n'
    path = tmp_path / "plan.toml"
    path.write_text(text)
    return path


def _statuses(db_path: Path, run: int | None = None) -> dict[str, str]:
    db = ResultsDB(db_path, create=False)
    rows = db.results("WHERE run_id = ?", (run,)) if run else db.results()
    db.close()
    return {f"{r['model_name']} b{r['batch_size']}": r["status"] for r in rows}


def test_a_killed_worker_fails_its_config_the_others_go_on_and_resume_skips(tmp_path: Path) -> None:
    db_path = tmp_path / "r.sqlite"
    plan = _plan(tmp_path)
    runner = CliRunner()
    res = runner.invoke(app, ["sweep", str(plan), "--db", str(db_path), "--label", "first"])
    assert res.exit_code == 0, res.output
    db = ResultsDB(db_path, create=False)
    rows = {f"{r['model_name']} b{r['batch_size']}": r for r in db.results()}
    assert {k: r["status"] for k, r in rows.items()} == {"tiny b1": "ok", "tiny b2": "ok", "crashes b1": "failed"}
    assert "killed by signal 9 (SIGKILL)" in rows["crashes b1"]["reason"]
    ok = rows["tiny b1"]
    assert ok["latency_p50_ms"] > 0 and len(ok["block_medians_ms"]) >= 2 and ok["worker"] == "cpu0"
    assert ok["model_hash"] and ok["versions"]["python"] and ok["device_kind"] == "cpu"
    assert ok["command"].startswith("modelcost bench ") and "--backends ort-cpu" in ok["command"]
    assert ok["static_json"]["macs"] == ok["macs"] > 0
    assert db.runs()[0]["status"] == "complete" and db.runs()[0]["label"] == "first"
    db.close()
    # Resume: both ok configs are skipped, the failed one is tried again.
    res = runner.invoke(app, ["sweep", str(plan), "--db", str(db_path)])
    assert res.exit_code == 0 and "2 skipped" in res.output, res.output
    assert _statuses(db_path, 2) == {"crashes b1": "failed"}
    # --force measures everything again.
    res = runner.invoke(app, ["sweep", str(plan), "--db", str(db_path), "--force"])
    assert res.exit_code == 0 and "0 skipped" in res.output, res.output
    assert len(_statuses(db_path, 3)) == 3


def test_a_driver_killed_mid_sweep_keeps_what_finished_and_the_rerun_resumes(tmp_path: Path) -> None:
    db_path = tmp_path / "r.sqlite"
    plan = _plan(tmp_path, batches="[1, 2, 3, 4]", crash=False)
    cmd = [sys.executable, "-m", "modelcost", "sweep", str(plan), "--db", str(db_path)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    try:
        while time.time() < deadline and not (db_path.exists() and _count(db_path) >= 1):
            time.sleep(0.2)
        assert _count(db_path) >= 1, "no config finished in time"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    kept = _count(db_path)
    assert 1 <= kept < 4
    db = ResultsDB(db_path, create=False)
    assert db.runs()[0]["status"] == "running" and db.runs()[0]["finished"] is None  # it never got to finish
    db.close()
    res = CliRunner().invoke(app, ["sweep", str(plan), "--db", str(db_path)])
    assert res.exit_code == 0 and f"{kept} skipped" in res.output, res.output
    assert sorted(_statuses(db_path).values()) == ["ok"] * 4


def _count(db_path: Path) -> int:
    try:
        db = ResultsDB(db_path, create=False)
    except Exception:  # noqa: BLE001 - the driver is still creating it
        return 0
    try:
        return len(db.results("WHERE status = 'ok'"))
    finally:
        db.close()


def test_ray_local_instance_with_two_cpu_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    import modelcost
    from modelcost.sweep.plan import load_plan
    from modelcost.sweep.run import run_sweep

    # Starting a local Ray instance is most of this test's time (a GCS, a raylet, an API server and two agents:
    # about 10 s of CPU, half a minute on a busy 2-core machine), so both sweeps share one: each sweep's ray.init
    # and ray.shutdown are recorded; the first sweep's shutdown waits for the end of the test, and the resume's
    # init finds that instance up.
    calls: list[tuple[str, dict]] = []
    real_init, real_shutdown = ray.init, ray.shutdown

    def init(**kwargs: object) -> None:
        calls.append(("init", kwargs))
        if not ray.is_initialized():
            real_init(**kwargs)

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append(("shutdown", {})))
    db_path = tmp_path / "r.sqlite"
    plan = load_plan(_plan(tmp_path, batches="[1, 2, 4]"))
    try:
        summary = run_sweep(plan, str(db_path), workers=2, ray="local")
        assert summary.status == "complete" and summary.measured == 4
        db = ResultsDB(db_path, create=False)
        rows = db.results()
        by = {f"{r['model_name']} b{r['batch_size']}": r for r in rows}
        assert {k: r["status"] for k, r in by.items()} == {"tiny b1": "ok", "tiny b2": "ok", "tiny b4": "ok",
                                                          "crashes b1": "failed"}
        assert "killed by signal 9 (SIGKILL)" in by["crashes b1"]["reason"]
        assert all(r["worker"].startswith("ray:") for r in rows)
        assert len({r["worker"] for r in rows}) >= 2  # two Ray worker processes took tasks
        run = db.runs()[0]
        assert run["engine"] == "ray:local" and run["workers"] == 2 and "num_gpus=1" in run["notes"][0]
        db.close()
        again = run_sweep(plan, str(db_path), workers=2, ray="local")  # resume through Ray: the ok ones skip
        assert again.skipped == 3 and again.measured == 1
    finally:
        real_shutdown()
    # each sweep started a local instance of 2 CPUs whose workers import this modelcost, and stopped it at its end
    assert [name for name, _ in calls] == ["init", "shutdown", "init", "shutdown"]
    here = str(Path(modelcost.__file__).resolve().parents[1])
    for _, kwargs in calls[::2]:
        assert kwargs["num_cpus"] == 2 and here in kwargs["runtime_env"]["env_vars"]["PYTHONPATH"], kwargs


def _without_ray(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m modelcost ARGS`` in a process where ``import ray`` fails as if it were not installed."""
    block = tmp_path / "block"
    block.mkdir(exist_ok=True)
    (block / "sitecustomize.py").write_text("import sys\nsys.modules['ray'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(block), str(ROOT)]), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "modelcost", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300, check=False)


def test_without_ray_the_local_workers_run_and_ray_asks_for_the_extra(tmp_path: Path) -> None:
    plan = _plan(tmp_path, batches="[1]", crash=False)
    local = _without_ray(tmp_path, "sweep", str(plan), "--db", str(tmp_path / "a.sqlite"), "--workers", "1")
    assert local.returncode == 0 and "1 measured (1 ok)" in local.stdout, local.stderr
    with_ray = _without_ray(tmp_path, "sweep", str(plan), "--db", str(tmp_path / "b.sqlite"), "--ray", "local")
    lines = [line for line in with_ray.stderr.splitlines() if line.strip()]
    assert with_ray.returncode == 1 and "Traceback" not in with_ray.stderr and len(lines) == 1, with_ray.stderr
    assert "ray is not installed" in lines[0] and "pip install 'modelcost[sweep]'" in lines[0]


@pytest.mark.gpu
def test_gpu_workers_each_own_one_gpu(tmp_path: Path) -> None:
    """On a GPU machine: every GPU config runs on a worker pinned to one GPU by UUID; with two or more GPUs,
    two workers use two different GPUs."""
    from modelcost.sweep.identity import visible_gpus
    from modelcost.sweep.plan import parse_plan
    from modelcost.sweep.run import run_sweep

    n = min(2, len(visible_gpus()))
    # torch-eager at fp32 only (its tf32 row would double the configs): 4 batch sizes = 4 configs
    text = (f'[sweep]\nbackends = ["torch-eager"]\nprecisions = ["fp32"]\nbatch_sizes = [1, 2, 4, 8]\n{TIMING}\n'
            f'[[models]]\nsource = "{ROOT / "tests" / "fixtures" / "tiny_cnn.py"}:make_model"\nname = "tiny_cnn"\n'
            'input_shapes = ["x=1x3x16x16"]\n')
    summary = run_sweep(parse_plan(text), str(tmp_path / "r.sqlite"), workers=n)
    db = ResultsDB(tmp_path / "r.sqlite", create=False)
    rows = db.results()
    assert summary.by_status == {"ok": 4}, [r["reason"] for r in rows]
    assert all(r["device_kind"] == "cuda" and r["device_uuid"].startswith("GPU-") for r in rows)
    assert len({r["device_uuid"] for r in rows}) == len({r["worker"] for r in rows}) == n or n == 1
    assert "no two configs were ever timed on the same GPU at once" in db.runs()[0]["notes"][0]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])  # Ctrl-C, and `timeout` / a scheduler
def test_ctrl_c_marks_the_run_interrupted_and_keeps_what_finished(tmp_path: Path, sig: signal.Signals) -> None:
    db_path = tmp_path / "r.sqlite"
    plan = _plan(tmp_path, batches="[1, 2, 3, 4]", crash=False)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "modelcost", "sweep", str(plan), "--db", str(db_path)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (db_path.exists() and _count(db_path) >= 1):
        time.sleep(0.2)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    # 130 for Ctrl-C, 143 (128 + 15) for SIGTERM, as every modelcost command exits on a signal (cli/signals.py)
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130) and "run the same command to resume" in out, out
    db = ResultsDB(db_path, create=False)
    run = db.runs()[0]
    assert run["status"] == "interrupted" and run["finished"] is not None
    assert all(r["status"] == "ok" for r in db.results())  # the config cut short is not recorded as failed
    db.close()
