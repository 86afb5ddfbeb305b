"""Atomic file writes: a temporary file in the same folder, flushed, then renamed over the target."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from modelcost.core.errors import ModelcostError


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically. A path that cannot be written (no permission, a read-only or
    pseudo file system, a folder in the way) is the user's problem: one ModelcostError line, no traceback."""
    path = Path(path)
    try:
        return _write(path, data)
    except OSError as exc:
        why = exc.strerror or exc.__class__.__name__
        if exc.filename and Path(exc.filename) != path and not Path(exc.filename).name.startswith(f".{path.name}."):
            why = f"{why}: {exc.filename}"  # e.g. a parent that is a file, not the temporary file
        raise ModelcostError(f"cannot write {path}: {why}; choose another path") from exc


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a report is as readable as any file the user writes
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))
