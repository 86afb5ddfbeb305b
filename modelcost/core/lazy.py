"""Import heavy or optional dependencies only when they are used.

``require("onnxruntime", hint="pip install onnxruntime")`` returns the module or raises
``MissingDependencyError`` with one line saying what to install (never a bare ImportError traceback).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from modelcost.core.errors import MissingDependencyError

INSTALL_HINTS: dict[str, str] = {
    "torch": "pip install torch",
    "onnx": "pip install onnx",
    "onnxruntime": "pip install onnxruntime  (or 'modelcost[gpu]' for onnxruntime-gpu)",
    "onnxruntime-gpu": "pip install 'modelcost[gpu]' (onnxruntime-gpu)",
    "onnxconverter_common": "pip install onnxconverter-common",
    "tensorrt": "pip install 'modelcost[tensorrt]'",
    "pynvml": "pip install nvidia-ml-py",
    "matplotlib": "pip install matplotlib",
    "torchvision": "pip install torchvision",
    "onnxscript": "pip install onnxscript",
    "ray": "pip install 'modelcost[sweep]' (Ray)",
}


def require(name: str, hint: str | None = None) -> ModuleType:
    """Import ``name`` or raise MissingDependencyError naming the package to install."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        top = name.split(".")[0]
        how = hint or INSTALL_HINTS.get(top, f"pip install {top}")
        raise MissingDependencyError(f"{name} is not installed ({exc.__class__.__name__}: {exc}); {how}") from exc


def available(name: str) -> bool:
    """True when ``name`` imports; never raises."""
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken install is as unavailable as a missing one
        return False
    return True
