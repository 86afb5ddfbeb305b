"""Environment flags, parsed in one place ("0", "false", "no", "off" and "" are false)."""

from __future__ import annotations

import os
from pathlib import Path

_FALSE = {"", "0", "false", "no", "off"}


def cache_root() -> Path:
    """Where modelcost caches (ONNX exports, measured GPU ceilings): ``$MODELCOST_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/modelcost``, else ``~/.cache/modelcost``."""
    if os.environ.get("MODELCOST_CACHE_DIR"):
        return Path(os.environ["MODELCOST_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "modelcost"


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in _FALSE
