"""What modelcost wrote into a folder it shares with the user (the cache, an ``--out`` report folder), so that
it removes or replaces only that and never a file of the user's (issue 24).

Every writer records what it made in the folder's manifest, ``<root>/.modelcost-manifest``, one line each,
after the file is in place (a crash in between leaves a file nobody claims: it is then left alone, never
removed):

* ``file REL``: a file modelcost wrote; removed by ``remove_owned``, replaceable by a later run.
* ``folder REL``: a folder modelcost made (``make_folder``); removed once empty, never with what else is in it.
* ``tree REL``: a folder modelcost made and handed to a program that fills it with files of its own naming
  (torch.compile's inductor caches, ONNX Runtime's TensorRT engines: ``claim_tree``); it goes whole. A folder
  of that name that was there before is not claimed, and nothing in it is ever removed.

Paths are relative to the root, in POSIX form. A line that does not name a path inside the root (absolute,
``..``) is ignored, and nothing is removed through a symbolic link: a manifest can never make modelcost touch a
file outside its folder. Lines are appended with one ``write`` each (O_APPEND), so concurrent writers (a
background export, a compile child) do not lose each other's lines.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MANIFEST = ".modelcost-manifest"
KINDS = ("file", "folder", "tree")
_HEADER = "# what modelcost wrote in this folder: only these are ever removed or replaced by it\n"


@dataclass(frozen=True)
class Manifest:
    """The parsed manifest of one folder (empty when there is none)."""

    root: Path
    files: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()
    trees: frozenset[str] = frozenset()

    @classmethod
    def load(cls, root: str | Path) -> Manifest:
        root = Path(root)
        found: dict[str, set[str]] = {k: set() for k in KINDS}
        try:
            text = (root / MANIFEST).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        for line in text.splitlines():
            kind, _, rel = line.partition(" ")
            if kind in found and _valid(rel):
                found[kind].add(rel)
        return cls(root, frozenset(found["file"]), frozenset(found["folder"]), frozenset(found["tree"]))

    def claims(self, rel: str, st: os.stat_result) -> bool:
        """Whether what was found at ``rel`` (``st``: its lstat) is modelcost's: a recorded file that is still a
        plain file (a link or folder put in its place is not), or anything inside a folder handed to another
        program."""
        return self.in_tree(rel) or (rel in self.files and stat.S_ISREG(st.st_mode))

    def in_tree(self, rel: str) -> bool:
        """Whether ``rel`` lies inside a folder handed to another program (the folder itself is no file)."""
        return any(rel.startswith(t + "/") for t in self.trees)

    def lines(self) -> list[str]:
        return [f"{kind} {rel}" for kind, rels in (("tree", self.trees), ("folder", self.folders),
                                                   ("file", self.files)) for rel in sorted(rels)]


@dataclass(frozen=True)
class Removal:
    """What ``remove_owned`` removed and what it could not."""

    removed: list[str] = field(default_factory=list)  # files (relative paths)
    failed: list[str] = field(default_factory=list)  # files of modelcost's still there (no permission, say)


def _valid(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return bool(rel) and not rel.startswith("/") and "\\" not in rel and all(p not in ("", ".", "..") for p in parts) \
        and parts[0] != MANIFEST and "\n" not in rel and "\0" not in rel


def relative(root: str | Path, path: str | Path) -> str | None:
    """``path`` relative to ``root`` in POSIX form, or None when it is not inside ``root``."""
    root_abs, path_abs = os.path.abspath(root), os.path.abspath(path)
    if os.path.commonpath([root_abs, path_abs]) != root_abs or root_abs == path_abs:
        return None
    rel = PurePosixPath(*Path(os.path.relpath(path_abs, root_abs)).parts).as_posix()
    return rel if _valid(rel) else None


def _append(root: Path, kind: str, paths: Iterable[str | Path]) -> None:
    """Add lines to the manifest (those already there are not repeated). Best effort: a manifest that cannot be
    written only means these files are left alone later, never that another is removed."""
    rels = [r for r in (relative(root, p) for p in paths) if r is not None]
    if not rels:
        return
    have = set(Manifest.load(root).lines())
    new = [f"{kind} {r}" for r in dict.fromkeys(rels) if f"{kind} {r}" not in have]
    if not new:
        return
    try:
        fd = os.open(root / MANIFEST, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError:
        return
    try:
        data = ("".join(f"{line}\n" for line in new)).encode("utf-8")
        if os.fstat(fd).st_size == 0:
            data = _HEADER.encode("utf-8") + data
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def record(root: str | Path, *paths: str | Path) -> None:
    """Say that modelcost wrote these files under ``root`` (call it once each file is in place)."""
    _append(Path(root), "file", paths)


def record_folder(root: str | Path, folder: str | Path) -> None:
    """Say that modelcost made ``folder`` (renamed into place, say): it goes once empty."""
    _append(Path(root), "folder", [folder])


def record_tree(root: str | Path, folder: str | Path) -> None:
    """Say that ``folder`` and everything in it are modelcost's: a folder this process made for itself
    (``tempfile.mkdtemp``), or for another program to fill (``claim_tree``)."""
    _append(Path(root), "tree", [folder])


def write(root: str | Path, path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` under ``root`` atomically (``core.atomic``), making the folders it needs, and
    record it as modelcost's. Raises OSError as the file system does."""
    from modelcost.core.atomic import replace_atomically

    make_folder(root, Path(path).parent)
    replace_atomically(Path(path), data)
    record(root, path)
    return Path(path)


def make_folder(root: str | Path, folder: str | Path) -> Path:
    """``folder`` (under ``root``) with every missing level made; the levels made here are recorded, so they go
    once empty. ``root`` itself is made when missing, never recorded. Raises OSError as ``mkdir`` does."""
    root, folder = Path(root), Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    rel = relative(root, folder)
    if rel is None:
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    made, level = [], root
    for part in PurePosixPath(rel).parts:
        level = level / part
        try:
            level.mkdir()
            made.append(level)
        except FileExistsError:
            if not level.is_dir():
                raise
    _append(root, "folder", made)
    return folder


def claim_tree(root: str | Path, folder: str | Path) -> bool:
    """Make ``folder`` for another program to fill: when it is made here, everything that comes under it is
    modelcost's (recorded as a tree). A folder that was already there is used as it is, claimed only when an
    earlier run made it. Returns whether it is modelcost's."""
    root, folder = Path(root), Path(folder)
    make_folder(root, folder.parent)
    rel = relative(root, folder)
    try:
        folder.mkdir()
    except FileExistsError:
        return rel is not None and rel in Manifest.load(root).trees
    if rel is None:
        return False
    record_tree(root, folder)
    return True


@dataclass(frozen=True)
class Survey:
    """What a shared folder holds: modelcost's files (relative path -> lstat) and everything else."""

    owned: dict[str, os.stat_result] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)  # files, links, and folders ("name/") not looked into


def owned_files(root: str | Path, manifest: Manifest | None = None) -> dict[str, os.stat_result]:
    """modelcost's files under ``root`` (relative path -> lstat), from the manifest alone: nothing else is read,
    however much the folder holds."""
    root = Path(root)
    manifest = manifest or Manifest.load(root)
    found: dict[str, os.stat_result] = {}
    for rel in manifest.files:
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue
        if manifest.claims(rel, st) and _real_dirs(root, rel):
            found[rel] = st
    for tree in manifest.trees:
        if _real_dirs(root, tree, itself=True):
            found.update(_walk(root, root / tree))
    return found


def survey(root: str | Path, look_into: Callable[[str], bool] = lambda rel: False) -> Survey:
    """Every file under ``root`` but the manifest, modelcost's or not, links never followed. Only the folders
    that lead to modelcost's files are looked into, and those ``look_into`` names (relative path): any other
    folder is named as one foreign entry, so a cache pointed at a large folder of the user's is not read."""
    root = Path(root)
    manifest = Manifest.load(root)
    ways = {str(PurePosixPath(rel).parents[i]) for rel in manifest.files | manifest.folders | manifest.trees
            for i in range(len(PurePosixPath(rel).parents) - 1)} | manifest.folders | manifest.trees
    survey = Survey()
    for here, dirs, names in os.walk(root):
        base = Path(os.path.relpath(here, root)).as_posix()
        prefix = "" if base == "." else f"{base}/"
        for name in list(dirs):
            rel = prefix + name
            if os.path.islink(os.path.join(here, name)):
                names.append(name)  # a link: listed as a file, never followed
                dirs.remove(name)
            elif not (rel in ways or manifest.in_tree(rel) or look_into(rel)):
                survey.foreign.append(f"{rel}/")
                dirs.remove(name)
        for name in names:
            rel = prefix + name
            try:
                st = os.lstat(os.path.join(here, name))
            except OSError:  # removed meanwhile (another run's temporary file)
                continue
            if rel == MANIFEST:
                continue
            if manifest.claims(rel, st):
                survey.owned[rel] = st
            else:
                survey.foreign.append(rel)
    survey.foreign.sort()
    return survey


def _walk(root: Path, folder: Path) -> dict[str, os.stat_result]:
    """Every file and link under ``folder`` (relative to ``root``), links never followed."""
    found = {}
    for here, dirs, names in os.walk(folder):
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(here, d)))]:
            full = os.path.join(here, name)
            try:
                found[Path(os.path.relpath(full, root)).as_posix()] = os.lstat(full)
            except OSError:
                continue
    return found


def _real_dirs(root: Path, rel: str, itself: bool = False) -> bool:
    """Whether every folder from ``root`` down to ``rel``'s parent (and ``rel`` itself, with ``itself``) is a real
    folder: nothing is removed through a link."""
    parts = PurePosixPath(rel).parts
    level = root
    for part in parts if itself else parts[:-1]:
        level = level / part
        try:
            if not stat.S_ISDIR(os.lstat(level).st_mode):
                return False
        except OSError:
            return False
    return True


def foreign(root: str | Path, rels: Iterable[str]) -> list[str]:
    """Those of ``rels`` (paths under ``root`` modelcost is about to write) where something it did not write is
    in the way: a file, folder or link not recorded in the manifest, or reached through a link."""
    root = Path(root)
    manifest = Manifest.load(root)
    found = []
    for rel in rels:
        try:
            st = os.lstat(root / rel)
        except OSError:  # nothing there (or a file where a folder should be: the write says so itself)
            continue
        if not (manifest.claims(rel, st) and _real_dirs(root, rel)):
            found.append(rel)
    return found


def remove_owned(root: str | Path) -> Removal:
    """Remove what the manifest says modelcost wrote under ``root``, and nothing else: recorded files (plain
    files only: a link put in the place of one is not modelcost's), folders handed to other programs (whole),
    then the folders it made, once empty. The manifest keeps what is still there (a folder that holds the
    user's files); it is removed when nothing is."""
    root = Path(root)
    manifest = Manifest.load(root)
    owned = owned_files(root, manifest)
    for tree in sorted(manifest.trees):
        if _real_dirs(root, tree, itself=True):
            shutil.rmtree(root / tree, ignore_errors=True)
    for rel in owned:
        if not manifest.in_tree(rel) and _real_dirs(root, rel):
            try:
                os.unlink(root / rel)
            except OSError:  # gone already, or no permission: counted below
                pass
    removed = [rel for rel in owned if not os.path.lexists(root / rel)]
    for rel in sorted(manifest.folders, key=lambda r: -r.count("/")):  # the deepest first
        if _real_dirs(root, rel, itself=True):
            try:
                os.rmdir(root / rel)
            except OSError:  # not empty (the user's files in it), or gone
                pass
    _rewrite(root, manifest)
    return Removal(removed, [r for r in owned if r not in set(removed)])


def _rewrite(root: Path, manifest: Manifest) -> None:
    """Keep in the manifest only what is still there."""
    from modelcost.core.atomic import replace_atomically

    kept = Manifest(root, *(frozenset(r for r in rels if os.path.lexists(root / r))
                            for rels in (manifest.files, manifest.folders, manifest.trees)))
    try:
        if kept.lines():
            replace_atomically(root / MANIFEST, (_HEADER + "".join(f"{line}\n" for line in kept.lines())).encode())
        else:
            (root / MANIFEST).unlink(missing_ok=True)
    except OSError:
        pass
