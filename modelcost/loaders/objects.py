"""Models given as Python objects (library use): an ``nn.Module`` with example inputs, an ``onnx.ModelProto``.

An ``nn.Module`` is counted on a meta copy (its weights are neither copied nor read) and benchmarked as it is
(on the CPU; a copy per other device). Its inputs come from ``example_inputs`` (a tensor, a tuple/list of
tensors, or a dict name -> tensor; ``(shape, dtype)`` pairs work too) or from ``--input-shape``-style shapes.
An ``onnx.ModelProto`` is saved to a temporary folder (removed by the returned cleanup) and loaded from there,
since ONNX Runtime and the export cache work on files.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.loaders.base import LoadOptions


def is_torch_module(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def is_onnx_proto(obj: Any) -> bool:
    onnx = sys.modules.get("onnx")
    return onnx is not None and isinstance(obj, onnx.ModelProto)


def meta_copy(module: Any) -> Any:
    """A copy of ``module`` whose parameters and buffers are meta tensors (no weight is copied)."""
    import copy

    import torch

    memo: dict[int, Any] = {}
    for p in module.parameters():
        memo[id(p)] = torch.nn.Parameter(torch.empty_like(p, device="meta"), requires_grad=p.requires_grad)
    for b in module.buffers():
        memo[id(b)] = torch.empty_like(b, device="meta")
    return copy.deepcopy(module, memo).eval()


def load_module(module: Any, example_inputs: Any, options: LoadOptions, name: str | None = None) -> Any:
    """A ``LoadedTorch`` of an ``nn.Module`` you already have."""
    import copy

    import torch

    from modelcost.loaders.torch_loader import LoadedTorch, _example_specs, forward_names, shapes_from_options

    name = name or type(module).__name__
    source = f"<nn.Module {name}>"
    meta = meta_copy(module)
    if example_inputs is not None:
        raw = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else example_inputs
        specs_at = _example_specs(source, lambda: raw, forward_names(module), options)
        inputs, high, examples = specs_at(options.batch_size)
    else:
        why = "no example_inputs were given"
        inputs, high, examples, specs_at = shapes_from_options(source, module, options, why), {}, {}, None

    def build(device: str) -> Any:
        on_device = all(t.device.type == device for t in [*module.parameters(), *module.buffers()])
        return module if on_device else copy.deepcopy(module).to(device)

    batch = inputs[0].shape[0] if inputs and inputs[0].shape else None
    return LoadedTorch(name, source, "pytorch", meta, inputs, batch, input_high=high, examples=examples, build=build,
                       specs_at=(lambda b: specs_at(b)[0]) if specs_at else None)


def load_onnx_proto(proto: Any, options: LoadOptions, name: str | None = None) -> tuple[Any, Callable[[], None]]:
    """(``LoadedOnnx`` of ``proto`` saved to a temporary file, a cleanup that removes the file)."""
    import shutil
    import tempfile
    from pathlib import Path

    import onnx

    from modelcost.loaders.onnx_loader import load_onnx

    name = name or proto.graph.name or "model"
    folder = Path(tempfile.mkdtemp(prefix="modelcost-proto-"))
    path = folder / f"{''.join(c if c.isalnum() or c in '-_.' else '_' for c in name)}.onnx"
    try:
        onnx.save(proto, str(path))
        loaded = load_onnx(str(path), options)
    except (ValueError, OSError) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ModelcostError(f"cannot save the ONNX model {name!r} to load it: {exc}") from exc
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    loaded.source = f"<onnx.ModelProto {name}>"
    return loaded, lambda: shutil.rmtree(folder, ignore_errors=True)
