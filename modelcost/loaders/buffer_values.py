"""The values of a module's small buffers, kept while the module is built on (or moved to) the meta device.

The counters run a module on meta: its buffers have shapes and no values. Code that reads a buffer's value then
gets a made-up answer from the data oracle (analysis/data_oracle.py: zeros for integers). transformers' EnCodec
keeps each conv's stride, kernel size and padding as int64 buffers (``register_buffer("stride",
torch.tensor(stride))``) and pads its input by a length computed from them: with zeros for them it padded to a
length of 0 ("input (W: 24000) is too small. Calculated output W: 0") and the count failed. Such buffers are made
from Python data while the factory runs: ``record_while_building`` watches ``torch.tensor`` / ``torch.as_tensor``
there (under the meta device they keep no data) and keeps the data of the small ones; a factory that builds on a
real device leaves its buffers real, and their values are read before they are moved. ``LoadedTorch.buffer_values``
carries them by buffer name; the oracle takes them as exact twins.
"""

from __future__ import annotations

from typing import Any

LIMIT_ELEMENTS = 1 << 16  # only small buffers: sizes, strides, positions, masks; never a weight-sized one


def data_value(out: Any, data: Any) -> Any | None:
    """The Python data ``data`` that the meta tensor ``out`` was made from (``torch.tensor(data)``), as a CPU
    tensor of ``out``'s dtype and shape; None where a tensor is inside it (its copy is an op of its own) or it does
    not convert. Shared with the data oracle's constants (analysis/data_oracle.py)."""
    import torch
    from torch.utils._pytree import tree_flatten

    if any(isinstance(v, torch.Tensor) for v in tree_flatten(data)[0]):
        return None
    try:
        return torch.tensor(data, dtype=out.dtype, device="cpu").reshape(out.shape)
    except (TypeError, ValueError, RuntimeError):
        return None


def record_while_building() -> Any:
    """A mode to enter while a factory runs (``loaders.torch_loader.build_on``); ``of_buffers`` reads it after."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_flatten, tree_map

    def key(t: Any) -> tuple | None:
        try:
            return t.untyped_storage()._cdata, t.storage_offset(), tuple(t.shape), tuple(t.stride())
        except Exception:  # noqa: BLE001 - a tensor without a plain storage
            return None

    class MadeFromData(TorchFunctionMode):
        """Keeps the value of each small meta tensor made while it is active from Python data, or by a torch
        function from tensors whose values it keeps (EnCodec's ``kernel_size - stride``). Values are keyed by
        the tensor's storage and view (``nn.Buffer`` wraps a tensor in a new object of the same storage); the
        tensors are held until the build ends, so no storage of theirs is reused for another one meanwhile."""

        def __init__(self) -> None:
            super().__init__()
            self.values: dict[tuple, Any] = {}
            self.held: list[Any] = []

        def value(self, t: Any) -> Any:
            k = key(t) if isinstance(t, torch.Tensor) and t.is_meta else None
            return self.values.get(k) if k is not None else None

        def _keep(self, out: Any, value: Any) -> None:
            if isinstance(value, torch.Tensor) and tuple(value.shape) == tuple(out.shape) \
                    and (k := key(out)) is not None:
                self.values[k] = value.detach().to(out.dtype)
                self.held.append(out)

        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if not (isinstance(out, torch.Tensor) and out.is_meta and out.numel() <= LIMIT_ELEMENTS):
                return out
            if func in (torch.tensor, torch.as_tensor) and (args or "data" in kwargs):
                self._keep(out, data_value(out, args[0] if args else kwargs["data"]))
                return out
            inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
            if inputs and all(self.value(t) is not None for t in inputs):
                real = tree_map(lambda v: self.value(v) if isinstance(v, torch.Tensor) else v, (args, kwargs))
                real_kwargs = {k: ("cpu" if k == "device" else v) for k, v in real[1].items()}
                try:
                    self._keep(out, func(*real[0], **real_kwargs))
                except Exception:  # noqa: BLE001 - a function that does not run on the values: no value kept
                    return out
            return out

    return MadeFromData()


def of_buffers(module: Any, recorder: Any) -> dict[str, Any]:
    """Buffer name -> its value on the CPU, for each small buffer of ``module`` whose value is known: recorded by
    ``recorder`` when it was made on meta, or read from a real device."""
    known: dict[str, Any] = {}
    for name, buf in module.named_buffers():
        if buf.numel() > LIMIT_ELEMENTS:
            continue
        if not buf.is_meta:
            known[name] = buf.detach().to("cpu").clone()
        elif (value := recorder.value(buf)) is not None:
            known[name] = value.clone()
    return known
