"""Environment flags, parsed in one place ("0", "false", "no", "off" and "" are false)."""

from __future__ import annotations

import os

_FALSE = {"", "0", "false", "no", "off"}


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in _FALSE
