"""Atomic file writes: a temporary file in the same folder, flushed, then renamed over the target."""

from __future__ import annotations

from pathlib import Path

from modelcost.core import owned
from modelcost.core.atomic import replace_atomically
from modelcost.core.errors import ModelcostError


def atomic_write_bytes(path: Path, data: bytes, *, record_in: Path | None = None) -> Path:
    """Write ``data`` to ``path`` atomically. A path that cannot be written (no permission, a read-only or
    pseudo file system, a folder in the way) is the user's problem: one ModelcostError line, no traceback.
    ``record_in``: a folder shared with the user (a report folder): the file, and the folders made for it, are
    recorded in its manifest as modelcost's (``core.owned``), so a later run may replace them."""
    path = Path(path)
    try:
        if record_in is None:
            return replace_atomically(path, data)
        return owned.write(record_in, path, data)
    except OSError as exc:
        why = exc.strerror or exc.__class__.__name__
        if exc.filename and Path(exc.filename) != path and not Path(exc.filename).name.startswith(f".{path.name}."):
            why = f"{why}: {exc.filename}"  # e.g. a parent that is a file, not the temporary file
        raise ModelcostError(f"cannot write {path}: {why}; choose another path") from exc


def atomic_write_text(path: Path, text: str, *, record_in: Path | None = None) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), record_in=record_in)
