"""Device memory: give it back between configs, and say which device the figures come from.

Peak memory per config is measured two ways, and every result says which (``BenchResult.notes``):
PyTorch backends use ``torch.cuda.max_memory_allocated`` (reset when the config starts, so it holds the weights,
inputs, activations and workspaces of this config only); ONNX Runtime and TensorRT allocate outside PyTorch, so
for them it is NVML's device memory in use, the peak sampled during the timed run minus what was in use just
before the backend was prepared (their arenas, workspaces and weights; anything else on the GPU would distort it).
"""

from __future__ import annotations

import contextlib
import gc
import platform
from collections.abc import Iterator
from typing import Any

from modelcost.core.types import DeviceInfo


_FROZEN = [0]  # nesting depth of long_lived_frozen


@contextlib.contextmanager
def long_lived_frozen() -> Iterator[None]:
    """While a sweep runs, what existed before it (imported modules, the loaded model's graph: hundreds of
    thousands of objects with torch, inductor and transformers loaded) is moved out of the garbage collector's
    sight (``gc.freeze``), so the ``gc.collect()`` of ``free_device_memory`` between configs scans only what the
    sweep made, and a run makes a dozen (BENCHMARKS.md, 'Fourth session'). Nothing the sweep allocates is frozen;
    everything is unfrozen after the outermost block. A static ``llm`` count runs in it too, for the full
    collections its counted forwards trigger (BENCHMARKS.md, 'Today's LLM architectures'). So do each backend of an
    interleaved comparison, each training step and a generation measurement: each collects."""
    if _FROZEN[0] == 0:
        gc.freeze()
    _FROZEN[0] += 1
    try:
        yield
    finally:
        _FROZEN[0] -= 1
        if _FROZEN[0] == 0:
            gc.unfreeze()


def no_nvidia_device() -> bool:
    """True when this machine certainly has no NVIDIA GPU, told without importing torch (seconds of a command's start:
    BENCHMARKS.md, 'Sixth session'): Linux without the driver's device nodes and /proc entry (or WSL's /dev/dxg), or
    macOS."""
    import os
    import sys

    if sys.platform == "darwin":
        return True
    if not sys.platform.startswith("linux"):
        return False
    return not any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia", "/dev/dxg"))


def cuda_available() -> bool:
    import sys

    if "torch" not in sys.modules and no_nvidia_device():
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def free_device_memory() -> None:
    """Drop Python references' garbage and return PyTorch's cached blocks to the driver."""
    gc.collect()
    if cuda_available():
        import torch

        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def create_cuda_context_in_background() -> None:
    """Make the CUDA context in a helper thread now, while this thread goes on with CPU work (materialising and
    hashing the model's weights, starting the compile workers). Creating it takes a while (BENCHMARKS.md, 'Figures that
    used to live in docstrings') and happens inside an allocation, which releases the GIL; torch's lazy initialisation
    is thread-safe (a CUDA call of this thread waits for it). Nothing is kept: the one-element tensor goes back to the
    caching allocator."""
    import threading

    def create() -> None:
        with contextlib.suppress(Exception):  # no context here: the first CUDA call of the sweep says why
            import torch

            torch.empty(1, device="cuda")

    threading.Thread(target=create, daemon=True, name="modelcost-cuda-context").start()


def cuda_uuid() -> str | None:
    """NVML's "GPU-..." UUID of PyTorch's current device (so NVML samples the same GPU)."""
    try:
        import torch

        uuid = torch.cuda.get_device_properties(torch.cuda.current_device()).uuid
    except Exception:  # noqa: BLE001 - older torch or no device
        return None
    text = str(uuid)
    return text if text.startswith("GPU-") else f"GPU-{text}"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def device_info(kind: str, nvml: Any = None, handle: Any = None) -> DeviceInfo:
    """What ran the benchmarks: the CUDA device PyTorch uses, or the host CPU."""
    if kind != "cuda":
        import os

        return DeviceInfo(kind="cpu", name=f"{_cpu_name()} ({os.cpu_count()} logical cores)")
    if not cuda_available():
        return DeviceInfo(kind="cuda", name="no CUDA device")
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    driver = None
    if nvml is not None:
        try:
            driver = nvml.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else str(driver)
        except Exception:  # noqa: BLE001
            driver = None
    return DeviceInfo(kind="cuda", name=props.name, driver=driver, cuda=torch.version.cuda,
                      compute_capability=f"{props.major}.{props.minor}", memory_bytes=int(props.total_memory),
                      sm_count=int(props.multi_processor_count))


def available_host_bytes() -> int | None:
    """Host memory available to new allocations: /proc/meminfo's MemAvailable, else physical memory; None when
    the OS tells neither."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None
