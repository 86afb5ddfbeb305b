"""What every loader takes, and which loader a source string goes to."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from modelcost.core.errors import ModelcostError


@dataclass(frozen=True)
class LoadOptions:
    batch_size: int | None = None
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    input_dtypes: dict[str, str] = field(default_factory=dict)  # --input-shape NAME=DIMS:DTYPE, canonical names
    trust_pickle: bool = False  # unpickling runs code: only with the user's explicit --trust-pickle


def source_kind(source: str) -> str:
    """'onnx' | 'torchscript' | 'torch.export' | 'pickle' | 'factory' | 'zoo' | 'torchvision'.

    Files are told apart by suffix; ``zoo:NAME`` and ``torchvision:NAME`` by prefix; ``a/b.py:fn`` and
    ``pkg.mod:fn`` are factories."""
    if source.startswith("zoo:"):
        return "zoo"
    if source.startswith("torchvision:"):
        return "torchvision"
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return "onnx"
    if suffix == ".pt2":
        return "torch.export"
    if suffix in {".pt", ".pth", ".ts", ".torchscript", ".jit", ".bin"}:
        return "torchscript_or_pickle"
    if ":" in source:
        return "factory"
    if path.exists():
        raise ModelcostError(
            f"{source}: unknown model file type {suffix or '(no suffix)'!r}; expected .onnx, .pt2, .pt/.pth "
            "(TorchScript or, with --trust-pickle, a pickled module), or path/to/file.py:factory"
        )
    raise ModelcostError(
        f"{source}: no such file, and not a model reference; use model.onnx, path/to/file.py:factory, "
        "package.module:factory or zoo:NAME (see 'modelcost zoo')"
    )
