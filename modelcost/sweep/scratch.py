"""The sweep's scratch folders: where each config's request, answer and stderr log live while it runs.

Every process that starts config children (the sweep's driver, whose worker threads start them; a Ray worker)
owns one folder ``<tmp>/modelcost-sweep-<pid>-<random>`` holding the marker file ``MARKER``: its pid and the
process's start time (so a pid reused by another process is not taken for the owner). Each config gets a folder
inside it, removed when the config ends. The driver removes its own folder when the run ends, Ctrl-C and SIGTERM
included; a folder left by a process that was killed (SIGKILL, a crash, a power cut) is removed by the next
sweep on this machine once its owner is gone. Only folders of this user that carry the marker are ever removed.
Standard library only.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

PREFIX = "modelcost-sweep-"
MARKER = ".modelcost-sweep-owner"

_own: dict[tuple[int, Path], Path] = {}  # (pid, base) -> the folder that process made there
_lock = threading.Lock()


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux /proc), or None where that cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return text.rsplit(")", 1)[1].split()[19]  # field 22 (starttime); the fields after ')' start at 3
    except (OSError, IndexError):
        return None


def mark(folder: Path, pid: int) -> None:
    """Write ``folder``'s marker: owned by process ``pid``."""
    (folder / MARKER).write_text(json.dumps({"pid": pid, "start": _start_time(pid)}), encoding="utf-8")


def owner_alive(folder: Path) -> bool:
    """Whether the process named in ``folder``'s marker may still be running (an unreadable marker: yes)."""
    try:
        owner = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        pid = int(owner["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, another user's
        return True
    then, now = owner.get("start"), _start_time(pid)
    return then is None or now is None or then == now


def make_root(base: str | Path | None = None) -> Path:
    """This process's scratch folder under ``base`` (default: the temporary folder), made on first use."""
    where = Path(base or tempfile.gettempdir())
    key = (os.getpid(), where)
    with _lock:
        folder = _own.get(key)
        if folder is None or not folder.is_dir():
            folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=where))
            mark(folder, os.getpid())
            if not _own:
                atexit.register(remove_own)
            _own[key] = folder
    return folder


def config_dir() -> tempfile.TemporaryDirectory[str]:
    """A folder for one config inside this process's scratch folder (a context manager; removed on exit)."""
    return tempfile.TemporaryDirectory(prefix="config-", dir=make_root(), ignore_cleanup_errors=True)


def _remove(folder: Path) -> bool:
    """Remove ``folder``, its marker last: a removal cut short (a dying child still writing its answer) leaves the
    marker, so the next sweep tries again instead of the folder staying forever."""
    for entry in list(folder.iterdir()) if folder.is_dir() else []:
        if entry.name == MARKER:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
    try:
        if {e.name for e in folder.iterdir()} - {MARKER}:
            return False
        (folder / MARKER).unlink(missing_ok=True)
        folder.rmdir()
    except OSError:
        return False
    return True


def remove_own() -> None:
    """Remove the scratch folders this process made (harmless to call twice)."""
    with _lock:
        mine = [k for k in _own if k[0] == os.getpid()]
        for key in mine:
            folder = _own.pop(key)
            try:
                _remove(folder)
            except OSError:  # gone already, or not ours to list: a later sweep removes what is left
                pass


def remove_stale(base: str | Path | None = None) -> list[Path]:
    """Remove the scratch folders under ``base`` whose owner is gone; returns them. Folders without the marker,
    of another user, or links are never touched."""
    where = Path(base or tempfile.gettempdir())
    removed = []
    for folder in sorted(where.glob(f"{PREFIX}*")):
        try:
            if folder.is_symlink() or not folder.is_dir() or not (folder / MARKER).is_file():
                continue
            if hasattr(os, "getuid") and folder.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        try:
            if not owner_alive(folder) and _remove(folder):
                removed.append(folder)
        except OSError:
            continue
    return removed
