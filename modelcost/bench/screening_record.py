"""What earlier runs measured, so a run need not screen again a config that lost by a wide margin (issue 9).

The idea is TensorRT's timing cache applied to the choice of a deployment: a config that an earlier run of the
same model on the same GPU found hopelessly slow need not be set up and screened again to be dropped again.

* **What is kept.** A screening run (``bench.screening``) writes every figure it measured itself (p50 latency and
  throughput per backend x precision x batch, screening or full measurement, with the time it was taken) to
  ``<cache>/screening/<key>.json``. The key holds everything those figures depend on: the model's content hash,
  the GPU (name, UUID, driver, CUDA) or the CPU, the software (torch, cuDNN, ONNX Runtime, modelcost, Python) and
  the measurement settings; each row also keeps its input shapes. A figure of an earlier run is never written
  again as if measured anew, so a row keeps the date it was really measured.
* **When a config is not measured.** Its row in the record is at most ``MAX_AGE_S`` (7 days) old, and a config measured
  *in this run*, that meets the caller's constraints, beats that earlier figure by more than ``REUSE_FACTOR`` (2x) on
  both latency and throughput. Ten times the 10% screening margin, and above the run-to-run spread of launch-bound
  batch-1 figures (BENCHMARKS.md, 'Fifth session', 'Figures that used to live in docstrings').
* **What the report says.** Such a row has status ``screened`` and *no figures of this run*: its reason quotes
  the earlier figures with their date, and names the config of this run that beats them. ``--fresh`` (analyze,
  bench, recommend) measures every config again; a run without screening (``--no-screen``, ``--exhaustive``)
  reuses nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.core.measurement import EarlierRun
from modelcost.core import owned
from modelcost.core.text import config_label, utc_timestamp
from modelcost.core.types import BenchResult, DeviceInfo

REUSE_FACTOR = 2.0
MAX_AGE_S = 7 * 24 * 3600
_SETTINGS = ("warmup", "warmup_settle", "warmup_max_s", "warmup_min_cuda_s", "pin_cpu", "min_time_s", "min_iters",
             "max_time_s", "target_rel_ci", "compile_mode", "compile_graphs", "seed")
Qualifies = Callable[[BenchResult], bool]


def software() -> dict[str, str]:
    """The versions a figure depends on: the packages' from their metadata (ONNX Runtime is not imported for it),
    cuDNN's from torch."""
    from importlib import metadata

    import torch

    versions = {"python": sys.version.split()[0], "cudnn": str(torch.backends.cudnn.version())}
    for package in ("torch", "onnxruntime-gpu", "onnxruntime", "modelcost"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    return versions


def record_key(model_hash: str, device: DeviceInfo, uuid: str | None, config: BenchConfig) -> dict[str, Any]:
    return {"model": model_hash, "device": dataclasses.asdict(device), "uuid": uuid, "software": software(),
            "settings": {name: getattr(config, name) for name in _SETTINGS}}


class ScreeningRecord:
    """The record of one key: earlier figures to consult, this run's figures to add, one ``save`` at the end."""

    def __init__(self, path: Path, key: dict[str, Any], rows: dict[str, dict[str, Any]],
                 cache_dir: Path | None = None) -> None:
        self.path, self.key, self.rows = path, key, rows
        self.cache_dir = Path(cache_dir) if cache_dir is not None else path.parent.parent

    @classmethod
    def open(cls, cache_dir: Path, key: dict[str, Any]) -> ScreeningRecord:
        """The record of ``key`` (empty when there is none, or it cannot be read)."""
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24]
        path = Path(cache_dir) / "screening" / f"{digest}.json"
        rows: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("key") == json.loads(json.dumps(key, default=str)):
                rows = dict(data.get("rows", {}))
        except (OSError, ValueError, AttributeError):
            rows = {}
        return cls(path, key, rows, Path(cache_dir))

    def add(self, result: BenchResult, inputs: str) -> None:
        """Keep a figure measured in this run (nothing else is ever written)."""
        if result.latency_ms is None or not result.throughput_ips or result.status not in ("ok", "screened"):
            return
        self.rows[config_label(result)] = {
            "p50_ms": result.latency_ms.p50, "throughput_ips": result.throughput_ips, "inputs": inputs,
            "measurement": result.extra.measurement or "full", "measured_utc": utc_timestamp(),
            "measured_at_s": time.time()}

    def earlier(self, backend: str, precision: str, batch: int, inputs: str) -> dict[str, Any] | None:
        row = self.rows.get(f"{backend} {precision} b{batch}")
        if row is None or row.get("inputs") != inputs or time.time() - float(row.get("measured_at_s", 0)) > MAX_AGE_S:
            return None
        return row

    def save(self) -> None:
        """Write the record (best effort: a cache that cannot be written costs the next run time, nothing else)."""
        with contextlib.suppress(OSError):
            data = json.dumps({"key": self.key, "rows": self.rows}, indent=1, default=str).encode("utf-8")
            owned.write(self.cache_dir, self.path, data)


def beaten_earlier(backend: str, precision: str, batch: int, earlier: dict[str, Any], measured: Iterable[BenchResult],
                   qualifies: Qualifies | None = None) -> BenchResult | None:
    """The row of a config not measured again: status ``screened``, no figures of this run, the earlier ones and
    the config of this run that beats them by more than ``REUSE_FACTOR`` in its reason; None when no config
    measured in this run (and meeting the constraints: ``qualifies``) does."""
    lat, thr = float(earlier["p50_ms"]), float(earlier["throughput_ips"])
    for other in measured:
        if other.latency_ms is None or not other.throughput_ips or other.status not in ("ok", "screened"):
            continue
        if other.latency_ms.p50 * REUSE_FACTOR < lat and other.throughput_ips > thr * REUSE_FACTOR:
            if qualifies is not None and not qualifies(other):
                continue
            reason = (f"screened out without a measurement in this run: {config_label(other)}, measured now "
                      f"({other.latency_ms.p50:.4f} ms p50, {other.throughput_ips:,.1f} ips), is more than "
                      f"{REUSE_FACTOR:g}x faster on both latency and throughput than this config's figures from an "
                      f"earlier run ({lat:.4f} ms p50, {thr:,.1f} ips; {earlier['measurement']} measurement of "
                      f"{earlier['measured_utc']}, same model, GPU, software and settings); --fresh measures it again")
            row = BenchResult(backend, precision, batch, "screened", reason=reason)
            row.extra.measurement = "none in this run (an earlier run's figures, in the reason)"
            row.extra.earlier_run = EarlierRun(lat, thr, str(earlier["measurement"]), str(earlier["measured_utc"]),
                                               REUSE_FACTOR)
            return row
    return None

