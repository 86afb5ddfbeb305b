"""What a result is keyed by when a sweep resumes: the model's content, the device, the library versions.

- Model content hash (``source_hash``): SHA-256 of the model file's bytes (an ONNX file, plus its external-data
  files beside it when it names them; a .pt / .pt2 file); of the Python file and the factory name for
  ``file.py:factory``; of the module's file for ``pkg.mod:factory``; and of ``zoo:NAME`` / ``torchvision:NAME``
  with the version of the package that defines the model (modelcost / torchvision), since those are code.
- Device (``device_identity``): NVML's name, UUID and driver of the GPU a worker owns, or the host CPU's name.
- Versions (``versions``): the installed distributions that time a config, read from package metadata
  (nothing is imported).
Standard library only (NVML through nvidia-ml-py, lazily).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as md
import importlib.util
import json
import os
import platform
from dataclasses import asdict, dataclass
from pathlib import Path

_DISTRIBUTIONS = ("modelcost", "torch", "onnxruntime", "onnxruntime-gpu", "tensorrt", "onnx", "transformers",
                  "torchvision")


def _file_hash(h: hashlib._Hash, path: Path) -> None:
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def source_hash(source: str) -> str:
    """The model's content hash (module docstring), hex. A source that is not there hashes its text only:
    the child process then reports why it cannot be loaded."""
    h = hashlib.sha256()
    kind_prefix = source.split(":", 1)[0]
    if kind_prefix in ("zoo", "torchvision"):
        h.update(f"{source}\0{_version('modelcost' if kind_prefix == 'zoo' else 'torchvision')}".encode())
        return h.hexdigest()
    path = Path(source)
    if path.is_file():
        _file_hash(h, path)
        for extra in sorted(path.parent.glob(path.name + ".data")) if path.suffix == ".onnx" else []:
            _file_hash(h, extra)
        return h.hexdigest()
    head = source.rpartition(":")[0]
    h.update(source.encode())
    if head and Path(head).is_file():
        _file_hash(h, Path(head))
    elif head:
        try:
            spec = importlib.util.find_spec(head)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin and Path(spec.origin).is_file():
            _file_hash(h, Path(spec.origin))
    return h.hexdigest()


def versions() -> dict[str, str]:
    """Python and the installed distributions that matter to a timing (absent ones left out)."""
    out = {"python": platform.python_version()}
    for dist in _DISTRIBUTIONS:
        v = _version(dist)
        if v is not None:
            out[dist] = v
    return out


def versions_key(v: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class DeviceIdentity:
    kind: str  # "cuda" | "cpu"
    name: str  # "NVIDIA H200" / the CPU's model name
    uuid: str | None = None  # "GPU-..." (what CUDA_VISIBLE_DEVICES pins a worker to)
    driver: str | None = None
    host: str = ""

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)


def cpu_identity() -> DeviceIdentity:
    from modelcost.bench.memory import _cpu_name

    return DeviceIdentity("cpu", f"{_cpu_name()} ({os.cpu_count()} logical cores)", host=platform.node())


def all_gpus() -> list[tuple[str, DeviceIdentity]]:
    """(NVML index, identity) of every GPU of this machine, whatever CUDA_VISIBLE_DEVICES says. Empty without
    NVML or without a GPU."""
    try:
        import pynvml as nvml

        nvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no library, no driver, no GPU: a CPU-only machine
        return []
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        gpus = []
        for i in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            gpus.append((str(i), DeviceIdentity("cuda", _text(nvml.nvmlDeviceGetName(handle)),
                                                _text(nvml.nvmlDeviceGetUUID(handle)), driver, platform.node())))
        return gpus
    except Exception:  # noqa: BLE001
        return []
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def visible_gpus() -> list[DeviceIdentity]:
    """The GPUs this process may use (NVML; honours an existing CUDA_VISIBLE_DEVICES of indices or UUIDs)."""
    gpus = all_gpus()
    wanted = os.environ.get("CUDA_VISIBLE_DEVICES")
    if wanted is None:
        return [g for _, g in gpus]
    picked = []
    for item in (w.strip() for w in wanted.split(",") if w.strip()):
        match = [g for i, g in gpus if item == i or (g.uuid and g.uuid.startswith(item))]
        if not match:
            break  # CUDA stops at the first entry it cannot resolve
        picked.append(match[0])
    return picked


def cpu_block(index: int, count: int) -> list[int] | None:
    """The ``index``-th of ``count`` contiguous, disjoint blocks of the CPUs this process may use (None when the
    platform cannot pin or there are fewer CPUs than blocks). A GPU worker's child runs on its block, so the
    benchmark's pinning to "the highest CPU of its set" gives every GPU worker its own host core."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None or count < 1:
        return None
    cpus = sorted(getter(0))
    if len(cpus) < count:
        return None
    size = len(cpus) // count
    return cpus[index * size:(index + 1) * size]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def current_gpu() -> DeviceIdentity | None:
    """The one GPU this process was given (a Ray task with num_gpus=1): the first visible one."""
    gpus = visible_gpus()
    return gpus[0] if gpus else None
