"""The cache folder: where it is, what it holds and how large it is, and emptying it.

modelcost keeps files that are slow to make under one folder (``$MODELCOST_CACHE_DIR``, else
``$XDG_CACHE_HOME/modelcost``, else ``~/.cache/modelcost``): ONNX exports of PyTorch models (a BERT-base export
is ~440 MB), fp16 and Q/DQ INT8 copies, TensorRT engines and timing caches, the engines of ONNX Runtime's
TensorRT provider, torch.compile's inductor caches, measured GPU ceilings, and the figures of earlier screening
runs (bench.screening_record). Nothing is ever evicted on its own, so a run that used the cache says where it is
and how large it has grown, and ``modelcost cache --clear`` empties it.

Only the entries modelcost writes are counted and removed: when the variable points at a folder that holds
other files too, those are listed as left alone, never deleted.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from modelcost.bench.base import default_cache_dir
from modelcost.core.units import binary_bytes

# top-level entry -> what it holds (``onnx-qdq-<kind>`` folders are matched by prefix)
ENTRIES = {
    "onnx": "ONNX exports of PyTorch models",
    "onnx-fp16": "fp16 copies of ONNX models",
    "onnx-qdq-": "Q/DQ INT8 / FP8 copies of ONNX models",
    "tensorrt": "TensorRT engines and timing caches",
    "ort-tensorrt": "engines of ONNX Runtime's TensorRT provider",
    "ceilings": "measured GPU ceilings",
    "screening": "figures of earlier screening runs (configs that lost by more than 2x are not measured again)",
    "inductor": "torch.compile's on-disk caches (FX graphs, kernels, autotuning)",
    "compile-ahead": "markers of torch.compile graphs already compiled into inductor's caches",
}
MTIME_SLACK_S = 2.0  # file systems that keep mtimes to the second (or two, FAT) still count as "since"


@dataclass(frozen=True)
class CacheEntry:
    name: str  # folder name under the cache directory
    what: str
    size_bytes: int
    files: int
    newest_mtime: float  # seconds since the epoch; 0.0 when empty


@dataclass(frozen=True)
class CacheUsage:
    directory: Path
    entries: list[CacheEntry] = field(default_factory=list)
    others: list[str] = field(default_factory=list)  # names in the folder that modelcost did not write

    @property
    def size_bytes(self) -> int:
        return sum(e.size_bytes for e in self.entries)

    @property
    def files(self) -> int:
        return sum(e.files for e in self.entries)


def cache_directory(directory: str | Path | None = None) -> Path:
    return Path(directory) if directory else default_cache_dir()


def _what(name: str) -> str | None:
    if name in ENTRIES:
        return ENTRIES[name]
    return ENTRIES["onnx-qdq-"] if name.startswith("onnx-qdq-") else None


def _walk(path: Path) -> tuple[int, int, float]:
    """(bytes, files, newest mtime) of everything under ``path``; links are not followed."""
    size = files = 0
    newest = 0.0
    for root, _dirs, names in os.walk(path):
        for name in names:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:  # removed while walking (another run's temporary folder)
                continue
            size, files, newest = size + st.st_size, files + 1, max(newest, st.st_mtime)
    return size, files, newest


def cache_usage(directory: str | Path | None = None) -> CacheUsage:
    """What the cache folder holds, entry by entry (an absent folder holds nothing)."""
    root = cache_directory(directory)
    if not root.is_dir():
        return CacheUsage(root)
    entries, others = [], []
    for child in sorted(root.iterdir()):
        what = _what(child.name)
        if what is None or not child.is_dir() or child.is_symlink():
            others.append(child.name)
            continue
        entries.append(CacheEntry(child.name, what, *_walk(child)))
    return CacheUsage(root, entries, others)


def clear_cache(directory: str | Path | None = None) -> CacheUsage:
    """Remove every entry modelcost wrote; returns what was there (and what was left alone)."""
    usage = cache_usage(directory)
    for entry in usage.entries:
        shutil.rmtree(usage.directory / entry.name, ignore_errors=True)
    return usage


def mark_used(path: str | Path) -> None:
    """Touch a cached file that was reused, so ``usage_note`` counts the run as one that used the cache."""
    try:
        os.utime(path)
    except OSError:  # read-only cache: the note is then only left out
        pass


def run_started() -> float:
    """The time to pass to ``usage_note`` as ``since``: now."""
    return time.time()


def usage_note(directory: str | Path | None, since: float) -> str | None:
    """One line saying where the cache is and how large, when a file in it was written or reused since
    ``since`` (``run_started()`` before the run); None when the run did not touch it."""
    usage = cache_usage(directory)
    if not any(e.newest_mtime >= since - MTIME_SLACK_S for e in usage.entries):
        return None
    parts = ", ".join(f"{e.what} {binary_bytes(e.size_bytes)}" for e in usage.entries if e.files)
    return (f"cache: {usage.directory} holds {binary_bytes(usage.size_bytes)} ({parts}); 'modelcost cache' lists it, "
            "'modelcost cache --clear' empties it")
