"""Realistic benchmark inputs from the input specs: never zeros.

* floating inputs: standard normal values (``randn``), at the input's dtype (bfloat16 inputs are made as
  float32 on the host and cast by the backend);
* integer inputs: valid indices. Token ids are uniform in ``[0, vocab)`` where ``vocab`` is the size of the
  embedding table the input indexes (found from the ONNX graph's Gather or by probing the PyTorch module's
  ``nn.Embedding`` layers); an input named like an attention mask gets ones, a token-type / segment input
  values in {0, 1}, a position input ``0..seq-1``. When the table size cannot be found the values are in
  {0, 1} and a note says so;
* boolean inputs: ones when named like a mask, else random.

The same seed gives the same arrays, so every backend sees the same inputs (accuracy is compared on them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from modelcost.core.types import TensorSpec
from modelcost.loaders.binding import bind, call_bound

if TYPE_CHECKING:
    import numpy as np

_FLOAT = {"float32", "float", "float16", "half", "float64", "double", "bfloat16"}
_INT = {"int64", "int32", "int16", "int8", "uint8", "long", "int"}


def _kind(name: str) -> str:
    n = name.lower()
    if "mask" in n:
        return "mask"
    if "token_type" in n or "segment" in n:
        return "segment"
    if "position" in n or n in {"pos", "pos_ids"}:
        return "position"
    return "ids"


def make_host_inputs(
    specs: Sequence[TensorSpec], *, int_high: dict[str, int] | None = None, seed: int = 0
) -> tuple[list[np.ndarray], list[str]]:
    """One host array per spec (shapes must be concrete), and notes on what was assumed."""
    import numpy as np

    rng = np.random.default_rng(seed)
    int_high = int_high or {}
    arrays: list[np.ndarray] = []
    notes: list[str] = []
    for spec in specs:
        if not spec.is_static:
            raise ValueError(f"input {spec.name!r} has unbound dims {spec.shape}")
        shape = tuple(int(d) for d in spec.shape)
        dtype = spec.dtype.lower()
        if dtype in _FLOAT:
            if dtype in {"float16", "half"}:
                np_dtype = np.float16
            elif dtype in {"float64", "double"}:
                np_dtype = np.float64
            else:
                np_dtype = np.float32
            arrays.append(rng.standard_normal(shape, dtype=np.float32).astype(np_dtype))
        elif dtype in _INT or dtype == "bool":
            arrays.append(_int_input(spec, shape, int_high.get(spec.name), rng, notes))
        else:
            raise ValueError(f"input {spec.name!r}: cannot make values of dtype {spec.dtype!r}")
    return arrays, notes


def _int_input(spec: TensorSpec, shape: tuple[int, ...], high: int | None, rng: Any, notes: list[str]) -> np.ndarray:
    import numpy as np

    np_dtype = bool if spec.dtype == "bool" else np.dtype(spec.dtype if spec.dtype not in {"long", "int"} else "int64")
    kind = _kind(spec.name)
    if kind == "mask":
        return np.ones(shape, dtype=np_dtype)
    if spec.dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if kind == "segment":
        return rng.integers(0, min(2, high or 2), size=shape).astype(np_dtype)
    if kind == "position" and len(shape) >= 1:
        return np.broadcast_to(np.arange(shape[-1]) % (high or shape[-1]), shape).astype(np_dtype).copy()
    if high is None or high < 1:
        notes.append(f"input {spec.name!r}: the size of the table it indexes is unknown; its values are in {{0, 1}}")
        high = 2
    return rng.integers(0, high, size=shape).astype(np_dtype)


# ------------------------------------------------------------------------------------------------------------
# Where do integer inputs point?

_PASSTHROUGH = {"Cast", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity", "Expand"}


def onnx_int_ranges(model: Any) -> dict[str, int]:
    """``{input name: rows of the smallest table it indexes}`` for graph inputs that reach a Gather's indices
    (directly or through Cast/Unsqueeze/Reshape/...), from the initializers' dims; no weight bytes are read."""
    graph = model.graph
    inits = {t.name: list(t.dims) for t in graph.initializer}
    origin = {i.name: i.name for i in graph.input if i.name not in inits}
    ranges: dict[str, int] = {}
    for node in graph.node:  # nodes are in topological order in a valid model
        if node.op_type in _PASSTHROUGH and node.input and node.input[0] in origin:
            for out in node.output:
                origin[out] = origin[node.input[0]]
        elif node.op_type == "Gather" and len(node.input) >= 2 and node.input[1] in origin:
            dims = inits.get(node.input[0])
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            if dims and 0 <= axis < len(dims) and dims[axis] > 0:
                src = origin[node.input[1]]
                ranges[src] = min(ranges.get(src, dims[axis]), dims[axis])
    return ranges


def torch_int_ranges(module: Any, specs: Sequence[TensorSpec], keywords: Sequence[str] | None = None
                     ) -> dict[str, int]:
    """Probe ``module`` (on CPU, batch as given; called by keyword with ``keywords``: ``loaders.binding``) with
    valid all-ones integer inputs and record which ``nn.Embedding`` / ``nn.EmbeddingBag`` each integer input
    reaches directly."""
    import torch

    tensors = []
    for spec in specs:
        shape = tuple(int(d) for d in spec.shape)
        if spec.dtype in _FLOAT:
            tensors.append(torch.randn(shape, dtype=torch.float32))
        else:
            tensors.append(torch.ones(shape, dtype=torch.bool if spec.dtype == "bool" else torch.int64))
    if not any(not t.is_floating_point() for t in tensors):
        return {}
    ranges: dict[str, int] = {}

    def hook(mod: Any, args: tuple[Any, ...]) -> None:
        for spec, t in zip(specs, tensors, strict=True):
            if args and args[0] is t:
                ranges[spec.name] = min(ranges.get(spec.name, mod.num_embeddings), mod.num_embeddings)

    handles = [m.register_forward_pre_hook(hook) for m in module.modules()
               if isinstance(m, (torch.nn.Embedding, torch.nn.EmbeddingBag))]
    try:
        with torch.no_grad():
            call_bound(module, bind(tensors, keywords))
    except Exception:  # noqa: BLE001 - a probe only; values fall back to {0, 1} with a note
        pass
    finally:
        for h in handles:
            h.remove()
    return ranges
