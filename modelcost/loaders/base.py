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


MODEL_SUFFIXES = (".onnx", ".pt2", ".pt", ".pth", ".ts", ".torchscript", ".jit")


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
    if path.is_dir():
        inside = sorted(p.name for p in path.iterdir() if p.suffix.lower() in MODEL_SUFFIXES)[:5]
        hint = f"; it holds {', '.join(inside)}: give one of them" if inside else ""
        raise ModelcostError(f"{source}: is a directory, not a model file (.onnx, .pt2, .pt or file.py:factory){hint}")
    if path.exists():
        raise ModelcostError(
            f"{source}: unknown model file type {suffix or '(no suffix)'!r}; expected .onnx, .pt2, .pt/.pth "
            "(TorchScript or, with --trust-pickle, a pickled module), or path/to/file.py:factory"
        )
    raise ModelcostError(
        f"{source}: no such file, and not a model reference; use model.onnx, path/to/file.py:factory, "
        "package.module:factory or zoo:NAME (see 'modelcost zoo')"
    )


def check_source(source: str) -> str:
    """``source_kind`` plus the checks that cost nothing (a zoo name that exists), so that a command taking two
    models, or one that counts before it measures, says a typo at once instead of after the other work."""
    kind = source_kind(source)
    if kind == "zoo":
        from modelcost.loaders.zoo import ZOO

        if source.removeprefix("zoo:") not in ZOO:
            raise ModelcostError(f"{source}: no such zoo model; choose one of {', '.join(ZOO)} (see 'modelcost zoo')")
    return kind
