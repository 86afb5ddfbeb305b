"""Live device bytes over one training step: every storage from its allocation to its release, as the CUDA
caching allocator counts them for ``torch.cuda.max_memory_allocated``.

A ``TorchDispatchMode`` sees every aten op (forward, autograd's backward, the optimizer's foreach kernels).
After each op it registers the storages of the op's outputs that it does not know yet, at their size rounded
up to a multiple of 512 bytes (the caching allocator's block granularity: ``kMinBlockSize`` in
``c10/cuda/CUDACachingAllocator.cpp``), and appends the live total to ``timeline``, with the operand copies a
matrix product makes inside its kernel while it runs (``training_scratch``). A storage leaves when it is
freed: a weak reference to its Python object (which PyTorch keeps as long as the C++ storage lives) calls back.
The tracker holds no tensor, so it changes no lifetime (autograd's gradient stealing, which looks at reference
counts, runs as it would without it). Storages that existed before (weights, optimizer states, inputs) are
registered with ``track``. The same mode runs on meta tensors (no memory) and on real ones (the tests
check the two agree).

What it cannot see: other memory a kernel takes for itself without returning it (cuBLAS / cuDNN workspaces,
fused kernels' scratch), and allocator fragmentation (``max_memory_allocated`` has none by definition).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from modelcost.analysis.training_scratch import operand_copies_bytes

BLOCK_BYTES = 512  # the CUDA caching allocator rounds every block up to a multiple of this


def storage_key(t: torch.Tensor) -> int | None:
    """The identity of ``t``'s storage (shared by its views), or None for tensors without a plain storage."""
    try:
        return t.untyped_storage()._cdata
    except Exception:  # noqa: BLE001 - tensors without a plain storage
        return None


def tensors_in(value: Any) -> list[torch.Tensor]:
    """The tensors anywhere in ``value`` (nested lists, tuples, dicts)."""
    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def rounded(nbytes: int, block: int = BLOCK_BYTES) -> int:
    """Bytes the caching allocator books for a storage of ``nbytes`` (0 stays 0: no block is taken)."""
    return 0 if nbytes <= 0 else -(-nbytes // block) * block


class LiveBytes(TorchDispatchMode):
    """Tracks live storages on ``device_type`` ("meta", "cpu", "cuda") and the live total after every op."""

    def __init__(self, device_type: str, block: int = BLOCK_BYTES) -> None:
        super().__init__()
        self.device_type = device_type
        self.block = block
        self.current_bytes = 0
        self.peak_bytes = 0
        self.timeline: list[int] = []  # live bytes after each op (during it, with its operand copies)
        self.ops: list[str] = []  # the op of each timeline entry
        self.marks: dict[str, int] = {}  # phase name -> index of its first timeline entry
        self._sizes: dict[int, int] = {}  # id(storage object) -> booked bytes
        self._refs: dict[int, weakref.ref] = {}

    def track(self, *values: Any) -> None:
        """Register the storages of tensors that exist before the step (weights, states, inputs)."""
        for t in tree_flatten(values)[0]:
            if isinstance(t, torch.Tensor):
                self._register(t)
        self.peak_bytes = max(self.peak_bytes, self.current_bytes)

    def ignore(self, *values: Any) -> None:
        """Storages never to count (host-side bookkeeping such as the optimizer's step counters, which live on
        the CPU beside CUDA parameters)."""
        for t in tree_flatten(values)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == self.device_type:
                self._sizes.setdefault(id(t.untyped_storage()), 0)

    def mark(self, phase: str) -> None:
        self.marks[phase] = len(self.timeline)

    def phase_peak(self, phase: str, until: str | None = None) -> int:
        """The largest live total from ``phase``'s mark up to ``until``'s (or the end)."""
        start = self.marks.get(phase, 0)
        end = self.marks.get(until, len(self.timeline)) if until else len(self.timeline)
        return max(self.timeline[start:end], default=self.current_bytes)

    def _register(self, t: torch.Tensor) -> None:
        if t.device.type != self.device_type or t.is_sparse or t.is_nested:
            return
        try:
            st = t.untyped_storage()
        except (RuntimeError, NotImplementedError):  # tensors without a plain storage
            return
        key = id(st)
        size = rounded(st.nbytes(), self.block)
        old = self._sizes.get(key)
        if old is not None:
            if old != size:  # resized in place (resize_, set_)
                self.current_bytes += size - old
                self._sizes[key] = size
            return
        self._sizes[key] = size
        self.current_bytes += size
        self._refs[key] = weakref.ref(st, lambda _ref, key=key: self._release(key))

    def _release(self, key: int) -> None:
        self.current_bytes -= self._sizes.pop(key, 0)
        self._refs.pop(key, None)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = func._overloadpacket.__name__
        copies = sum(rounded(n, self.block) for n in operand_copies_bytes(name, args))
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._register(t)
        # the op's own copies are live beside its operands and its output until it returns
        self.timeline.append(self.current_bytes + copies)
        self.ops.append(name)
        self.peak_bytes = max(self.peak_bytes, self.current_bytes + copies)
        return out
