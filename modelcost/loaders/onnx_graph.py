"""Graph utilities shared by the loader's checks and the analysis: what a node reads, and the outer-scope names a
subgraph reads (ONNX subgraphs may read any name of an enclosing graph without declaring it)."""

from __future__ import annotations

from typing import Any


def node_reads(node: Any) -> list[str]:
    """What a node reads: its inputs and the outer-scope names of its subgraphs."""
    reads = list(node.input)
    for attr in node.attribute:
        for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            reads.extend(implicit_inputs(sub))
    return reads


def implicit_inputs(graph: Any) -> list[str]:
    """Outer-scope names a subgraph (or its nested subgraphs) reads, in first-use order."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    defined.add("")
    used: dict[str, None] = {}
    for node in graph.node:
        reads = list(node.input)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                reads.extend(implicit_inputs(sub))
        for name in reads:
            if name not in defined:
                used.setdefault(name, None)
        defined.update(node.output)
    return list(used)
