"""A sweep across a cluster through Ray: each config is one Ray task.

A GPU config's task asks for one whole GPU (``num_gpus=1``), so Ray's scheduler guarantees that no two timing
runs share a GPU on any node; Ray pins the task with CUDA_VISIBLE_DEVICES. A CPU config's task asks for one CPU
(``num_cpus=1``). Inside the task the config runs in a child process exactly as on a local worker
(``child_run.measure_config``), so a crash or OOM becomes the config's ``failed`` / ``oom`` row; a task whose
Ray worker itself dies becomes a ``failed`` row too (tasks are not retried: a retry would time on another
GPU). Rows flow back to the driver, which alone writes the one database. No scheduler of our own.

``address``: 'local' starts a Ray instance on this machine (``--workers`` CPUs, every visible GPU) and stops it
at the end; 'auto' joins the running cluster (``ray start --head`` first); anything else is a cluster address.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelcost.core.lazy import INSTALL_HINTS, require
from modelcost.core.text import first_line, utc_timestamp
from modelcost.sweep.plan import Config

RAY_HINT = f"{INSTALL_HINTS['ray']}; or run the sweep without --ray (one worker per local GPU)"


def _task(config_dict: dict[str, Any], timing: dict[str, Any], timeout_s: float,
          done: set[tuple[str, str, str]]) -> dict[str, Any]:
    """Runs on a Ray worker: skip (resume) or measure the config there; returns {"skip": ...} or {"row": ...}."""
    import platform

    from modelcost.sweep.child_run import measure_config
    from modelcost.sweep.identity import cpu_identity, current_gpu, versions, versions_key

    config = Config.from_dict(config_dict)
    gpu = current_gpu() if config.device == "cuda" else None
    device = gpu or cpu_identity()
    v = versions()
    if (config.key, device.name, versions_key(v)) in done:
        return {"skip": config_dict}
    worker = f"ray:{platform.node()}:{gpu.uuid if gpu else f'cpu-pid{os.getpid()}'}"
    return {"row": measure_config(config, timing, timeout_s, device, v, worker, None, None, _gpu_cpus(gpu))}


def _gpu_cpus(gpu: Any) -> list[int] | None:
    """The node's CPUs split in one block per GPU; this task's GPU (by its NVML index) gets its block, so two
    GPU tasks on one node never time from the same host core."""
    if gpu is None:
        return None
    from modelcost.sweep.identity import all_gpus, cpu_block

    gpus = all_gpus()
    index = next((i for i, (_, g) in enumerate(gpus) if g.uuid == gpu.uuid), None)
    return None if index is None else cpu_block(index, len(gpus))


class RayEngine:
    def __init__(self, address: str, workers: int | None, timing: dict[str, Any], timeout_s: float,
                 versions: dict[str, str], done: set[tuple[str, str, str]]) -> None:
        self.ray = require("ray", RAY_HINT)
        self.address, self.timing, self.timeout_s, self.versions, self.done = address, timing, timeout_s, versions, done
        self.started_here = False
        self._init(workers)
        resources = self.ray.cluster_resources()
        self.gpus, self.cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
        self.size = self.gpus or self.cpus
        self.notes = [(f"Ray ({self.address}): {self.gpus} GPU(s), {self.cpus} CPU(s) in the cluster; each GPU config "
                      "was a task with num_gpus=1 (one whole GPU: no two timing runs shared one), each CPU config "
                      "a task with num_cpus=1")]
        if self.cpus > 1:
            self.notes.append("CPU configs ran up to one per CPU at once: their timings shared the hosts' cores")

    def _init(self, workers: int | None) -> None:
        ray = self.ray
        if self.address == "local":  # workers of this machine import modelcost from where the driver does
            import modelcost

            paths = (str(Path(modelcost.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", ""))
            env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}}
            from modelcost.sweep.identity import visible_gpus

            ray.init(num_cpus=workers or os.cpu_count(), num_gpus=len(visible_gpus()), include_dashboard=False,
                     runtime_env=env, log_to_driver=False, configure_logging=False)
            self.started_here = True
        else:
            try:  # a cluster: modelcost must be installed on its nodes (pip install 'modelcost[sweep]')
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
            except ConnectionError as exc:
                from modelcost.core.errors import ModelcostError

                raise ModelcostError(f"{{ray}} {self.address}: cannot reach a Ray cluster ({exc}); start one with "
                                     "'ray start --head', or use {ray} local", fields="ray") from None

    def run(self, configs: list[Config], emit: Callable[[dict[str, Any]], None],
            skipped: Callable[[Config], None]) -> None:
        ray = self.ray
        remote = ray.remote(max_retries=0)(_task)
        pending: dict[Any, Config] = {}
        for c in configs:
            opts = {"num_gpus": 1, "num_cpus": 1} if c.device == "cuda" else {"num_cpus": 1}
            pending[remote.options(**opts).remote(c.as_dict(), self.timing, self.timeout_s, self.done)] = c
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    config = pending.pop(ref)
                    out = self._get(ref, config)
                    if "skip" in out:
                        skipped(config)
                    else:
                        emit(out["row"])
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        finally:
            if self.started_here:
                ray.shutdown()

    def _get(self, ref: Any, config: Config) -> dict[str, Any]:
        from modelcost.sweep.child_run import bench_command

        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # the task's worker died or the task could not run
            text = first_line(exc, with_type=False)
            return {"row": {
                "config_key": config.key, "model_name": config.model_name, "model_source": config.source,
                "model_hash": config.model_hash, "input_shapes": list(config.input_shapes), "backend": config.backend,
                "precision": config.precision, "batch_size": config.batch_size, "status": "failed",
                "reason": f"the Ray task died: {exc.__class__.__name__}: {text[:300]}", "worker": "ray",
                "finished": utc_timestamp(), "command": bench_command(config)}}
