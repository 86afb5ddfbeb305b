"""The cache folder: where it is, what it holds and how large it is, and emptying it.

modelcost keeps files that are slow to make under one folder (``$MODELCOST_CACHE_DIR``, else
``$XDG_CACHE_HOME/modelcost``, else ``~/.cache/modelcost``): ONNX exports of PyTorch models (a BERT-base export
is ~440 MB), fp16 and Q/DQ INT8 copies, TensorRT engines and timing caches, the engines of ONNX Runtime's
TensorRT provider, torch.compile's inductor caches, measured GPU ceilings, and the figures of earlier screening
runs (bench.screening_record). Nothing is ever evicted on its own, so a run that used the cache says where it is
and how large it has grown, and ``modelcost cache --clear`` empties it.

Only what modelcost wrote is counted and removed: every writer records its files in the folder's manifest
(``core.owned``), and a file it did not record, wherever it lies (beside the entries, inside ``onnx/``, in a
folder of its own), is listed as left alone and never deleted. The folders modelcost hands to torch.compile and
to ONNX Runtime's TensorRT provider (``inductor/``, ``ort-tensorrt/``) go whole, when modelcost made them.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from modelcost.core import owned
from modelcost.core.env import cache_root
from modelcost.core.units import binary_bytes

# top-level entry -> what it holds (``onnx-qdq-<kind>`` folders are matched by prefix)
ENTRIES = {
    "onnx": "ONNX exports of PyTorch models",
    "onnx-fp16": "fp16 copies of ONNX models",
    "onnx-qdq-": "Q/DQ INT8 / FP8 copies of ONNX models",
    "tensorrt": "TensorRT engines and timing caches",
    "ort-tensorrt": "engines of ONNX Runtime's TensorRT provider",
    "ceilings": "measured GPU ceilings",
    "calibration": "GPU calibrations of the latency predictor (modelcost calibrate)",
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
    others: list[str] = field(default_factory=list)  # files modelcost did not write (relative paths), left alone
    not_removed: list[str] = field(default_factory=list)  # files of modelcost's that --clear could not remove

    @property
    def size_bytes(self) -> int:
        return sum(e.size_bytes for e in self.entries)

    @property
    def files(self) -> int:
        return sum(e.files for e in self.entries)


def cache_directory(directory: str | Path | None = None) -> Path:
    return Path(directory) if directory else cache_root()


def _what(name: str) -> str | None:
    if name in ENTRIES:
        return ENTRIES[name]
    return ENTRIES["onnx-qdq-"] if name.startswith("onnx-qdq-") else None


def _entries(files: dict[str, os.stat_result]) -> list[CacheEntry]:
    """modelcost's files grouped by their first folder."""
    totals: dict[str, tuple[int, int, float]] = {}
    for rel, st in files.items():
        name = rel.split("/")[0]
        size, count, newest = totals.get(name, (0, 0, 0.0))
        totals[name] = (size + st.st_size, count + 1, max(newest, st.st_mtime))
    return [CacheEntry(name, _what(name) or "other files modelcost wrote", *totals[name]) for name in sorted(totals)]


def cache_usage(directory: str | Path | None = None) -> CacheUsage:
    """What modelcost wrote in the cache folder, entry by entry (its first folder), and what else is there: the
    files in the entries' folders one by one, any other folder as one name (an absent folder holds nothing)."""
    root = cache_directory(directory)
    if not root.is_dir():
        return CacheUsage(root)
    found = owned.survey(root, look_into=lambda rel: _what(rel.split("/")[0]) is not None)
    return CacheUsage(root, _entries(found.owned), found.foreign)


def clear_cache(directory: str | Path | None = None) -> CacheUsage:
    """Remove everything modelcost wrote in the cache (and only that); returns what was there, and what was
    left alone."""
    usage = cache_usage(directory)
    if not usage.directory.is_dir():
        return usage
    removal = owned.remove_owned(usage.directory)
    return dataclasses.replace(usage, not_removed=removal.failed)


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
    root = cache_directory(directory)
    entries = _entries(owned.owned_files(root)) if root.is_dir() else []  # the manifest's files only: quick
    if not any(e.newest_mtime >= since - MTIME_SLACK_S for e in entries):
        return None
    parts = ", ".join(f"{e.what} {binary_bytes(e.size_bytes)}" for e in entries if e.files)
    size = sum(e.size_bytes for e in entries)
    return (f"cache: {root} holds {binary_bytes(size)} ({parts}); 'modelcost cache' lists it, "
            "'modelcost cache --clear' empties it")
