"""No import cycle between modelcost's modules, except inside the op registries (issue 26).

tests/test_layers.py keeps the layers one way; this keeps the modules of one layer one way too. Every import
counts: at module level, inside functions (the lazy ones) and under ``TYPE_CHECKING`` (a type that needs an
import from above is a dependency all the same). ``from pkg import name`` is an edge to the submodule
``pkg.name`` when there is one, else to ``pkg`` itself. A cycle is reported as a chain of modules, each with the
line of its import of the next: ``bench.base:19 -> bench.model:141 -> bench.base``.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

from tests.test_layers import PACKAGE, from_module

# The op registries may stay cycles for now: each is one table of formulas split into families by kind of op.
# The registry module defines ``register`` and ``OpCost``, each family imports them to register its formulas,
# and the registry imports its families so that importing it registers them all (and re-exports a few
# formulas). Opening them means one registry module under both front ends (issue 26: "all the better").
OP_REGISTRIES: tuple[frozenset[str], ...] = (
    frozenset(f"modelcost.analysis.{name}" for name in (
        "torch_ops", "torch_ops_backward", "torch_ops_composite", "torch_ops_flops", "torch_ops_mac",
        "torch_ops_moe")),
    frozenset(f"modelcost.analysis.{name}" for name in (
        "onnx_ops", "onnx_ops_contrib", "onnx_ops_flops", "onnx_ops_mac")),
)

Graph = dict[str, dict[str, int]]  # module -> {module it imports: line of the first such import}


def package_sources(root: Path = PACKAGE) -> dict[str, tuple[str, str]]:
    """module name -> (source, the package its relative imports start from); a package is its __init__."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        package = ".".join(parts[:-1])
        name = package if parts[-1] == "__init__" else ".".join(parts)
        out[name] = (path.read_text(), package)
    return out


def import_graph(sources: dict[str, tuple[str, str]]) -> Graph:
    """Edges between the modules of ``sources`` (see the module docstring); imports from outside are left out."""

    def known(name: str) -> str | None:  # the module itself, else the nearest package above it that we have
        while name and name not in sources:
            name = name.rpartition(".")[0]
        return name or None

    graph: Graph = {name: {} for name in sources}
    for name, (source, package) in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = from_module(node, package)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in sources else known(base) for a in node.names]
            else:
                continue
            for target in targets:
                if target is not None and target != name:
                    graph[name].setdefault(target, node.lineno)
    return graph


def components(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while not members or members[-1] != v:
                members.append(stack.pop())
            if len(members) > 1:
                found.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def shortest_cycle(graph: Graph, start: str, within: set[str]) -> list[str]:
    """The shortest import chain from ``start`` back to itself through the modules ``within`` (breadth first)."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w not in within or w in came_from:
                continue
            came_from[w] = v
            if w == start:
                chain = [start]
                while chain[-1] != start or len(chain) == 1:
                    chain.append(came_from[chain[-1]])
                return chain[::-1]
            queue.append(w)
    raise AssertionError(f"{start} is in no cycle")


def readable(graph: Graph, chain: list[str]) -> str:
    """'bench.base:19 -> bench.model:141 -> bench.base': each module with the line of its import of the next."""
    short = [name.removeprefix("modelcost.") for name in chain]
    return " -> ".join([f"{s}:{graph[a][b]}" for s, a, b in zip(short, chain, chain[1:])] + [short[-1]])


def cycles(graph: Graph, allowed: tuple[frozenset[str], ...] = OP_REGISTRIES) -> list[str]:
    """One readable chain per module of each cycle (duplicates dropped), except cycles inside one allowed set."""
    out: list[str] = []
    for members in components(graph):
        if any(set(members) <= registry for registry in allowed):
            continue
        seen: set[frozenset[str]] = set()
        for start in members:
            chain = shortest_cycle(graph, start, set(members))
            if frozenset(chain) not in seen:
                seen.add(frozenset(chain))
                out.append(readable(graph, chain))
    return out


def test_no_import_cycle_outside_the_op_registries() -> None:
    found = cycles(import_graph(package_sources()))
    assert not found, "import cycles:\n" + "\n".join(found)


def test_the_op_registries_named_here_exist() -> None:
    # a renamed registry module must not turn the exception into a silent wildcard
    sources = package_sources()
    assert all(name in sources for registry in OP_REGISTRIES for name in registry)


def test_the_scan_sees_lazy_type_checking_relative_and_submodule_imports() -> None:
    sources = {
        "p": ("from p.a import A\n", "p"),  # a package __init__ re-exporting a name of its submodule
        "p.a": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import B\n", "p"),
        "p.b": ("def f():\n    from . import c\n", "p"),  # lazy and relative, 'c' a submodule
        "p.c": ("import p.a\n", "p"),
        "p.d": ("from p import A\n", "p"),  # a name of the package, not a submodule: an edge to 'p'
    }
    graph = import_graph(sources)
    assert graph == {"p": {"p.a": 1}, "p.a": {"p.b": 3}, "p.b": {"p.c": 2}, "p.c": {"p.a": 1}, "p.d": {"p": 1}}
    # one cycle of three modules, reported once whichever module it starts from
    assert cycles(graph, allowed=()) == ["p.a:3 -> p.b:2 -> p.c:1 -> p.a"]
    assert cycles(graph, allowed=(frozenset({"p.a", "p.b", "p.c"}),)) == []
