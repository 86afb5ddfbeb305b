"""What every loader takes, and which loader a source string goes to."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from modelcost.core.errors import ModelcostError


@dataclass(frozen=True)
class LoadOptions:
    batch_size: int | None = None
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    input_dtypes: dict[str, str] = field(default_factory=dict)  # --input-shape NAME=DIMS:DTYPE, canonical names
    trust_pickle: bool = False  # unpickling runs code: only with the user's explicit --trust-pickle
    attn_implementation: str | None = None  # --attn-implementation of a transformers model (loaders/attention.py)


MODEL_SUFFIXES = (".onnx", ".pt2", ".pt", ".pth", ".ts", ".torchscript", ".jit")
_FILE_KINDS = {".onnx": "onnx", ".pt2": "torch.export", **dict.fromkeys(
    (".pt", ".pth", ".ts", ".torchscript", ".jit", ".bin"), "torchscript_or_pickle")}


def factory_file(target: str) -> bool:
    """Whether a factory's ``target`` (the part before its last ':') is a Python file rather than a module name."""
    return target.endswith(".py") or "/" in target or "\\" in target


def rebase_source(source: str, folder: Path) -> str:
    """``source`` with its file part, when that is a relative path, taken from ``folder`` instead of the working
    directory (a sweep plan's sources are relative to the plan's file): ``m.onnx``, ``sub/f.py:make`` and ``~/m.pt``
    name files; ``zoo:NAME``, ``torchvision:NAME``, ``package.module:factory`` and absolute paths stay as they are."""
    if source.startswith(("zoo:", "torchvision:")):
        return source
    head, tail = source, ""
    if Path(source).suffix.lower() not in _FILE_KINDS and ":" in source:  # a factory: path/file.py:fn or pkg.mod:fn
        target, _, attr = source.rpartition(":")
        if not factory_file(target):
            return source
        head, tail = target, ":" + attr
    if Path(head).is_absolute():
        return source
    path = Path(head).expanduser()
    return (str(path) if path.is_absolute() else os.path.normpath(folder.absolute() / path)) + tail


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
    if suffix in _FILE_KINDS:
        return _FILE_KINDS[suffix]
    if ":" in source:
        return "factory"
    if path.is_dir():
        inside = sorted(p.name for p in path.iterdir() if p.suffix.lower() in MODEL_SUFFIXES)[:5]
        hint = f"; it holds {', '.join(inside)}: give one of them" if inside else ""
        raise ModelcostError(f"{source}: is a directory, not a model file (.onnx, .pt2, .pt or file.py:factory){hint}")
    if path.exists():
        raise ModelcostError(
            f"{source}: unknown model file type {suffix or '(no suffix)'!r}; expected .onnx, .pt2, .pt/.pth "
            "(TorchScript or, with {trust_pickle}, a pickled module), or path/to/file.py:factory",
            fields="trust_pickle")
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
