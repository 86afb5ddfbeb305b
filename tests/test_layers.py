"""The dependency direction is one way: a module never imports a higher layer (STYLE.md).

    cli -> sweep -> api -> runs -> decide -> analysis / bench / report -> hardware -> loaders -> core

``runs`` holds one module per command (inference, recommend, compare, train, llm) over shared steps; ``decide``
judges figures and measures nothing; ``analysis`` and ``bench`` do not import each other; ``report`` sees only
``core`` types; ``runs`` does not import ``api`` (the facade re-exports it). Every import counts, also those
inside functions (the lazy ones).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "modelcost"

# package part -> the parts it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "loaders": {"core"},
    "hardware": {"core", "loaders"},
    "analysis": {"core", "loaders", "hardware"},
    "bench": {"core", "loaders", "hardware"},
    "report": {"core"},
    "decide": {"core", "loaders", "hardware", "analysis", "bench", "report"},
    # one module per command over shared steps (load, static or a note, GPU + rooflines, checkpointed report)
    "runs": {"core", "loaders", "hardware", "analysis", "bench", "report", "decide"},
    "api": {"core", "loaders", "hardware", "analysis", "bench", "report", "decide", "runs"},
    # sweeps drive many runs through the api (each config in a child process): a client of api, below the CLI
    "sweep": {"core", "loaders", "hardware", "analysis", "bench", "report", "decide", "runs", "api"},
    "cli": {"core", "loaders", "hardware", "analysis", "bench", "report", "decide", "runs", "api", "sweep"},
    "__init__": {"core"},
    "__main__": {"cli"},
}


def part_of(module: str) -> str | None:
    """'modelcost.bench.model' -> 'bench'; 'modelcost.api' -> 'api'; outside the package -> None."""
    parts = module.split(".")
    if parts[0] != "modelcost":
        return None
    # the package itself, or a name of it (__version__); __main__ is a module of its own
    if len(parts) == 1 or (parts[1].startswith("__") and parts[1] != "__main__"):
        return "__init__"
    return parts[1]


def from_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a ``from X import ...`` in a module of ``package`` reads: ``from ..bench import model``
    in ``modelcost.analysis`` -> 'modelcost.bench'."""
    base = node.module or ""
    if not node.level:
        return base
    up = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(up + ([base] if base else []))


def imports_in(source: str, package: str) -> list[tuple[int, str]]:
    """(line, imported module) of every import in ``source``, a module of ``package``; inside functions too."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            if base == "modelcost":  # from modelcost import api -> modelcost.api
                found += [(node.lineno, f"modelcost.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def violations() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        own = part_of(".".join(rel.with_suffix("").parts))
        assert own is not None
        package = ".".join(rel.with_suffix("").parts[:-1])
        for line, target in imports_in(path.read_text(), package):
            other = part_of(target)
            if other is None or other == own or other == "__init__":
                continue
            if other not in ALLOWED.get(own, set()):
                out.append(f"{rel}:{line} ({own}) imports {target} ({other})")
    return out


def test_no_module_imports_a_higher_layer() -> None:
    assert violations() == []


@pytest.mark.parametrize("source, expected", [
    ("from modelcost.cli.app import app\n", ["modelcost.cli.app"]),
    ("def f():\n    from modelcost import api\n", ["modelcost.api"]),
    ("import modelcost.bench.model\n", ["modelcost.bench.model"]),
    ("from ..bench import model\n", ["modelcost.bench"]),
])
def test_the_scan_sees_lazy_relative_and_package_imports(source: str, expected: list[str]) -> None:
    # the checker itself: an import inside a function counts, 'from modelcost import api' names the module
    assert [name for _, name in imports_in(source, "modelcost.analysis")] == expected
    assert part_of(expected[0]) in {"cli", "api", "bench"}


def test_tests_mirror_the_packages() -> None:
    """tests/README.md: every test folder is named after a package of modelcost (fixtures/ and fuzz/ hold shared
    code), every top-level test file is one the README lists as cross-cutting, and no two test files share a
    basename (pytest's prepend import mode imports each under its basename)."""
    tests = Path(__file__).resolve().parent
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders - {"fixtures", "fuzz"} <= packages, "a tests/ folder that is no modelcost package"
    readme = (tests / "README.md").read_text()
    assert [p.name for p in sorted(tests.glob("test_*.py")) if f"`{p.name}`" not in readme] == []
    names = [p.name for p in tests.rglob("test_*.py") if "fixtures" not in p.parts]
    assert sorted({n for n in names if names.count(n) > 1}) == []
