"""Run one config in a child process and turn whatever happened into one database row.

Both engines call ``measure_config``: the local workers (``workers.py``) and each Ray task (``ray_engine.py``).
The child is ``python -m modelcost.sweep.child``; it is killed after the plan's ``timeout_s``. A child that dies
(signal, segfault, out-of-memory kill) leaves its config ``failed`` with the reason, and the worker goes on with
the next config. It is ``oom`` only on evidence (``died_of_oom``): killed by SIGKILL while the kernel's OOM killer
counted a kill (``oom_kills``: /proc/vmstat and this cgroup's counters), or last words that say the memory ran
out. A SIGKILL alone is not evidence: ``kill -9`` and schedulers send it too. The request, answer and log files
live in the sweep's scratch folder (``scratch.py``).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelcost.core.errors import is_out_of_memory_text
from modelcost.core.measurement import MeasurementInfo
from modelcost.core.text import utc_timestamp
from modelcost.sweep import scratch
from modelcost.sweep.adapter import static_key
from modelcost.sweep.identity import DeviceIdentity, versions_key
from modelcost.sweep.plan import Config

STDERR_TAIL_CHARS = 2000


def bench_command(config: Config) -> str:
    """The ``modelcost bench`` command that measures the same config by hand."""
    parts = ["modelcost", "bench", config.source, "--backends", config.backend, "--precisions", config.precision,
             "--batch-sizes", str(config.batch_size), "--device", config.device]
    for shape in config.input_shapes:
        parts += ["--input-shape", shape]
    if config.trust_pickle:
        parts.append("--trust-pickle")
    return shlex.join(parts)


def run_child(config: Config, timing: dict[str, Any], timeout_s: float, cuda_visible: str | None,
              on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
              cpus: list[int] | None = None) -> dict[str, Any]:
    """The child's answer (``child.py``), or {"error", "oom"} built from how it died. ``cpus``: the host CPUs
    the child may use (a GPU worker's own block), else all of this process's."""
    env = dict(os.environ)
    if cuda_visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible
    env["MODELCOST_SWEEP_PARENT"] = str(os.getpid())  # child.py: a child whose sweep died before it started ends
    env.pop("MODELCOST_SWEEP_CPUS", None)
    if cpus:
        env["MODELCOST_SWEEP_CPUS"] = ",".join(map(str, cpus))
    kills = oom_kills()
    with scratch.config_dir() as tmp:
        request, answer, log = Path(tmp) / "request.json", Path(tmp) / "answer.json", Path(tmp) / "stderr.txt"
        static = scratch.make_root() / f"static-{static_key(config)}.json"  # one static analysis per model and batch
        request.write_text(json.dumps({"config": config.as_dict(), "timing": timing, "static_path": str(static)}),
                           encoding="utf-8")
        with open(log, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "modelcost.sweep.child", str(request), str(answer)],
                                    stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env)
            if on_start is not None:
                on_start(proc)
            try:
                rc = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                return {"error": f"timed out after {timeout_s:g} s (the child process was killed)", "oom": False}
        if answer.is_file():
            return json.loads(answer.read_text(encoding="utf-8"))
        tail = log.read_text(encoding="utf-8", errors="replace")[-STDERR_TAIL_CHARS:]
    oom, evidence = died_of_oom(rc, tail, kills)
    return {"error": _death(rc, tail) + (f"; {evidence}" if evidence else ""), "oom": oom, "stderr_tail": tail}


def _counter_files() -> list[str]:
    """/proc/vmstat, and this process's cgroup counters (v2 memory.events, v1 memory.oom_control), as mounted
    at the cgroup root (a container) or under the path /proc/self/cgroup names."""
    paths = ["/proc/vmstat", "/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"]
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, where = (line.split(":", 2) + ["", ""])[:3]
        if where in ("", "/"):
            continue
        if controllers == "":
            paths.append(f"/sys/fs/cgroup{where}/memory.events")
        elif "memory" in controllers.split(","):
            paths.append(f"/sys/fs/cgroup/memory{where}/memory.oom_control")
    return paths


def oom_kills() -> dict[str, int]:
    """The kernel's counts of processes its out-of-memory killer ended (``oom_kill``), by file, where readable."""
    counts = {}
    for path in dict.fromkeys(_counter_files()):
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            name, _, value = line.partition(" ")
            if name == "oom_kill" and value.strip().isdigit():
                counts[path] = int(value)
    return counts


def died_of_oom(rc: int, tail: str, kills_before: dict[str, int]) -> tuple[bool, str]:
    """Whether a child that died without an answer ran out of memory, and the evidence in words ('' if none)."""
    if rc == -getattr(signal, "SIGKILL", 9):
        now = oom_kills()
        grew = [f"oom_kill in {path} went from {n} to {now[path]}" for path, n in kills_before.items()
                if now.get(path, n) > n]
        if grew:
            return True, f"the kernel's out-of-memory killer killed a process meanwhile ({'; '.join(grew)})"
    last = [line for line in tail.splitlines() if line.strip()][-3:]
    if is_out_of_memory_text("\n".join(last)):
        return True, "its last output says the memory ran out"
    return False, ""


def _death(rc: int, tail: str) -> str:
    last = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        how = f"the worker's child process was killed by signal {-rc} ({name})"
    else:
        how = f"the worker's child process exited with status {rc}"
    return f"{how}; last output: {last[:300]}" if last else how


def row_for(config: Config, answer: dict[str, Any], device: DeviceIdentity, versions: dict[str, str],
            worker: str, started: str, duration_s: float) -> dict[str, Any]:
    """The ``results`` row of one finished config (docs/SWEEP_SCHEMA.md)."""
    row: dict[str, Any] = {
        "config_key": config.key, "model_name": config.model_name, "model_source": config.source,
        "model_hash": config.model_hash, "input_shapes": list(config.input_shapes), "backend": config.backend,
        "precision": config.precision, "batch_size": config.batch_size, "device_kind": device.kind,
        "device_name": device.name, "device_uuid": device.uuid, "driver": device.driver, "host": device.host,
        "versions": versions, "versions_key": versions_key(versions), "worker": worker, "started": started,
        "finished": utc_timestamp(), "duration_s": round(duration_s, 3), "command": bench_command(config),
    }
    result = answer.get("result")
    if result is None:
        row.update(status="oom" if answer.get("oom") else "failed", reason=answer.get("error") or "no result")
        return row
    static = answer.get("static") or {}
    lat = result.get("latency_ms") or {}
    info = MeasurementInfo.from_json(result.get("extra"))
    notes = list(answer.get("notes") or [])
    if notes:
        result = {**result, "notes": [*result.get("notes", []), *notes]}
    row.update(status=result["status"], reason=result.get("reason"), latency_p50_ms=lat.get("p50"),
               latency_p90_ms=lat.get("p90"), latency_p99_ms=lat.get("p99"),
               latency_ci95_rel=info.median_ci95_rel, throughput_ips=result.get("throughput_ips"),
               gpu_memory_peak_bytes=result.get("gpu_memory_peak_bytes"), params=static.get("params"),
               macs=static.get("macs"), flops=static.get("flops"), weight_bytes=static.get("weight_bytes"),
               block_medians_ms=info.block_medians_ms, timing=result.get("timing"), result_json=result,
               static_json=answer.get("static"), unstable=[str(f) for f in result.get("unstable") or []])
    return row


def measure_config(config: Config, timing: dict[str, Any], timeout_s: float, device: DeviceIdentity,
                   versions: dict[str, str], worker: str, cuda_visible: str | None,
                   on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
                   cpus: list[int] | None = None) -> dict[str, Any]:
    started, t0 = utc_timestamp(), time.perf_counter()
    answer = run_child(config, timing, timeout_s, cuda_visible, on_start, cpus)
    return row_for(config, answer, device, versions, worker, started, time.perf_counter() - t0)
