"""Writing a file atomically: a temporary file in the same folder, flushed and synced, then renamed over the
target, so a reader sees the old file or the new one, never half of one. report.atomic adds the user-facing error."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; raises OSError as the file system does (the temporary file removed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; the file is as readable as any the user writes
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


def scratch_beside(path: Path) -> Path:
    """A new empty file of this process's own beside ``path`` (as readable as any file the user writes), for a
    writer that takes a path; rename it over ``path`` once whole, remove it on failure. A fixed name could be
    another run's file, or the user's."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
    finally:
        os.close(fd)
    return Path(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
