"""The cuBLAS workspace PyTorch gives each (cuBLAS handle, stream) on a CUDA device: memory a training step holds
that no tensor of the model owns, booked by the caching allocator (so ``torch.cuda.max_memory_allocated`` sees
it).

PyTorch sizes it from ``CUBLAS_WORKSPACE_CONFIG`` (``:SIZE:COUNT`` pairs, SIZE in KiB, summed), else by the
device: 32 MiB (``:4096:8``) on Hopper (compute capability 9.x) and later, which is also cuBLAS's recommendation
there, and ``:4096:2:16:8`` (8 MiB + 128 KiB) before. cuBLASLt shares that workspace. A training step makes two:
autograd runs backward on its own thread per device, and each thread takes its own handle. A step without them
(``CUBLAS_WORKSPACE_CONFIG=:0:0``) holds less by about two workspaces (benchmarks/train_peak_gpu_diag.py;
BENCHMARKS.md, 'Today's LLM architectures').
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

KIB = 1024
HOPPER_DEFAULT = ":4096:8"
EARLIER_DEFAULT = ":4096:2:16:8"
TRAINING_HANDLES = 2  # the forward's thread and autograd's backward thread


def workspace_config_bytes(config: str) -> int:
    """The bytes of one ``CUBLAS_WORKSPACE_CONFIG`` value (``:4096:8`` -> 32 MiB); one that PyTorch would not
    parse counts as the default it falls back to, which the caller decides: -1 here."""
    pairs = re.fullmatch(r"(?::\d+:\d+)+", config.strip())
    if pairs is None:
        return -1
    numbers = [int(n) for n in config.strip().split(":")[1:]]
    return sum(size * count for size, count in zip(numbers[::2], numbers[1::2], strict=True)) * KIB


def cublas_workspace_bytes(compute_major: int, env: Mapping[str, str] | None = None) -> int:
    """One handle's workspace on a device of compute capability ``compute_major``.x under ``env``."""
    env = os.environ if env is None else env
    default = workspace_config_bytes(HOPPER_DEFAULT if compute_major >= 9 else EARLIER_DEFAULT)
    chosen = env.get("CUBLAS_WORKSPACE_CONFIG")
    if chosen is None:
        return default
    size = workspace_config_bytes(chosen)
    return default if size < 0 else size


def training_workspace_bytes(compute_major: int, env: Mapping[str, str] | None = None) -> int:
    """What a training step's cuBLAS workspaces hold together (both threads')."""
    return TRAINING_HANDLES * cublas_workspace_bytes(compute_major, env)
