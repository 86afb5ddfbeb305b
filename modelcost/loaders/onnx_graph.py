"""Graph utilities shared by the loader's checks and the analysis: what a node reads, and the outer-scope names a
subgraph reads (ONNX subgraphs may read any name of an enclosing graph without declaring it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def node_subgraphs(node: Any) -> list[Any]:
    """The subgraphs a node carries (If branches, Loop / Scan bodies), in attribute order."""
    subs = []
    for attr in node.attribute:
        if attr.HasField("g"):
            subs.append(attr.g)
        subs.extend(attr.graphs)
    return subs


def all_graphs(graph: Any) -> Iterator[Any]:
    """The graph and every subgraph, depth first."""
    yield graph
    for node in graph.node:
        for sub in node_subgraphs(node):
            yield from all_graphs(sub)


def node_reads(node: Any) -> list[str]:
    """What a node reads: its inputs and the outer-scope names of its subgraphs."""
    reads = list(node.input)
    for sub in node_subgraphs(node):
        reads.extend(implicit_inputs(sub))
    return reads


def implicit_inputs(graph: Any) -> list[str]:
    """Outer-scope names a subgraph (or its nested subgraphs) reads, in first-use order."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    defined.add("")
    used: dict[str, None] = {}
    for node in graph.node:
        for name in node_reads(node):
            if name not in defined:
                used.setdefault(name, None)
        defined.update(node.output)
    return list(used)
