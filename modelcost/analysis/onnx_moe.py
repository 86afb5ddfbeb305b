"""The rows a mixture of experts routes to each expert in an ONNX graph, which shape inference cannot know.

A sparse MoE exported from PyTorch in Mixtral's style (``torch.where(one_hot(topk_indices)[e])``, gather the
tokens, the expert's MLP, ``index_add_`` back) gives expert e a data-dependent number of rows: a NonZero over
expert e's slice of the one-hot mask of the TopK indices, and every shape after it is unknown. Every (token,
slot) pair of the TopK picks exactly one expert, so the row counts of the experts sum to T x k (the elements of
the TopK indices) whatever the routing. When the NonZero of every expert is found, they are bound here to the
uniform share, rows // n each (one more for the first rows % n experts): the experts' total rows, and so their
MACs and FLOPs when the experts are of one size, are exact; a per-expert figure is the uniform routing's.

Recognised (anything else stays unbound, and the count partial):

* the mask: ``OneHot(I, depth >= n, values [0, v != 0])`` or ``Equal(I with a unit axis, arange(depth >= n))``
  (TorchScript's and dynamo's one_hot), I the TopK indices through element-preserving ops (Cast, Reshape,
  Unsqueeze, ...), n the TopK axis; then Cast / Identity / Transpose, the expert axis followed;
* an expert's slice: ``I == e`` for a constant e (``torch.where(top_k_indices == e)``), or a Gather on the
  mask's expert axis with one index, either a constant e (a loop over the experts unrolled by the exporter) or
  position i of the *hit list* ``NonZero(ReduceSum(mask over the other axes) > 0)`` (TorchScript's trace of
  transformers' eager experts, ``for expert in expert_hit``), whose length the Split that unrolls it fixes: the
  graph runs only when exactly that many experts are hit, and they hold every row;
* its rows: a NonZero of the slice through Cast / Identity / Transpose / Reshape / Squeeze / Unsqueeze / Flatten.
  A NonZero of the whole mask gets T x k rows.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelcost.analysis.onnx_fold import scalar_int

_SAME_ELEMENTS = frozenset({"Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Transpose"})
_MASK_KEEPING = frozenset({"Cast", "Identity", "Transpose"})
_HIT_REDUCTIONS = frozenset({"ReduceSum", "ReduceMax"})


@dataclass(frozen=True)
class Router:
    """One TopK that routes tokens: ``tokens`` x ``k`` of ``experts`` = ``rows`` (token, expert) pairs."""

    name: str
    tokens: int
    k: int
    experts: int

    @property
    def rows(self) -> int:
        return self.tokens * self.k


@dataclass(frozen=True)
class _Mask:
    """A tensor holding the one-hot routing mask of ``router`` (zero / non-zero), its expert axis ``axis``."""

    router: Router
    root: str  # the OneHot / Equal output
    axis: int
    depth: int


@dataclass
class RoutingBinding:
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # NonZero output -> its bound static shape
    routers: dict[str, tuple[Router, int]] = field(default_factory=dict)  # mask root -> (router, experts sharing)

    def notes(self) -> list[str]:
        lines = []
        for router, sharing in self.routers.values():
            low, extra = divmod(router.rows, sharing)
            share = f"{low} each" if not extra else f"{low + 1} or {low}"
            lines.append(
                f"mixture of experts routed by TopK {router.name!r}: {router.tokens} tokens x top-{router.k} of "
                f"{router.experts} experts = {router.rows} routed rows; each expert's rows depend on the routing "
                f"and are taken as the uniform share ({share} over {sharing} experts); their total, and so the "
                "experts' MACs when the experts are of one size, is exact whatever the routing"
            )
        return lines


def share(rows: int, n: int, i: int) -> int:
    """Expert ``i``'s uniform share of ``rows`` over ``n`` experts; the shares of 0..n-1 sum to ``rows``."""
    low, extra = divmod(rows, n)
    return low + (1 if i < extra else 0)


class _Graph:
    def __init__(self, graph: Any, static: Callable[[str], tuple[int, ...] | None], values: dict[str, Any]):
        self.static = static
        self.values = values
        self.producer = {o: n for n in graph.node for o in n.output if o}
        self.masks: dict[str, _Mask | None] = {}  # _mask's answers

    def node(self, name: str) -> Any | None:
        node = self.producer.get(name)
        return node if node is not None and node.domain in ("", "ai.onnx") else None

    def value(self, name: str, kinds: str = "iu") -> Any | None:
        """A folded value of a numeric kind (a malformed file may fold strings or bools anywhere)."""
        value = self.values.get(name) if name else None
        return value if value is not None and value.dtype.kind in kinds else None

    def int_value(self, name: str) -> int | None:
        return scalar_int(self.values.get(name) if name else None)


def _attr(node: Any, name: str, default: int) -> int | None:
    """An int attribute, ``default`` when absent, None when of another type (a malformed file)."""
    a = next((a for a in node.attribute if a.name == name), None)
    return default if a is None else a.i if a.type == 2 else None  # AttributeProto.INT


def _ints(node: Any, name: str) -> list[int] | None:
    """An ints attribute, None when absent or of another type."""
    a = next((a for a in node.attribute if a.name == name), None)
    return list(a.ints) if a is not None and a.type == 7 else None  # AttributeProto.INTS


def _router(g: _Graph, name: str) -> Router | None:
    """The router whose TopK indices ``name`` holds (through element-preserving ops), or None."""
    node = g.node(name)
    while node is not None and node.op_type in _SAME_ELEMENTS:
        name = node.input[0]
        node = g.node(name)
    if node is None or node.op_type != "TopK" or len(node.output) < 2 or node.output[1] != name:
        return None
    xs, ys = g.static(node.input[0]), g.static(name)
    if not xs or ys is None or len(ys) != len(xs):
        return None
    axis = _attr(node, "axis", -1)
    if axis is None:
        return None
    n, k = xs[axis % len(xs)], ys[axis % len(xs)]
    if not 0 < k <= n:
        return None
    return Router(node.name or node.output[0], math.prod(ys) // k, k, n)


def _one_hot(g: _Graph, node: Any) -> tuple[Router, int, int] | None:
    """(router, expert axis, depth) of OneHot(TopK indices, depth, [0, v != 0])."""
    router = _router(g, node.input[0]) if len(node.input) == 3 else None
    depth, values = g.value(node.input[1], "iuf"), g.value(node.input[2], "iufb")
    if router is None or depth is None or depth.size != 1 or values is None or values.size != 2:
        return None
    depth = float(depth.reshape(()))  # any numeric type by the spec
    off, on = values.reshape(-1).tolist()
    rank = len(g.static(node.input[0]) or ()) + 1
    if off != 0 or on == 0:
        return None
    axis = _attr(node, "axis", -1)
    return (router, axis % rank, int(depth)) if axis is not None and depth.is_integer() else None


def _equal_arange(g: _Graph, node: Any) -> tuple[Router, int, int] | None:
    """(router, expert axis, depth) of Equal(TopK indices with a unit axis, arange(depth)) in either order."""
    for ours, theirs in (node.input, reversed(node.input)):
        router, table, shape = _router(g, ours), g.value(theirs), g.static(ours)
        if router is None or table is None or shape is None:
            continue
        rank = max(len(shape), table.ndim)
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        dims = (1,) * (rank - table.ndim) + tuple(table.shape)
        axes = [i for i, d in enumerate(dims) if d != 1]
        flat = table.reshape(-1).tolist()
        if len(axes) == 1 and padded[axes[0]] == 1 and flat == list(range(len(flat))):
            return router, axes[0], len(flat)
    return None


def _mask(g: _Graph, name: str) -> _Mask | None:
    """``name`` as the routing mask (through Cast / Identity / Transpose), or None."""
    chain = []
    while name not in g.masks and (node := g.node(name)) is not None and node.op_type in _MASK_KEEPING:
        chain.append(node)
        name = node.input[0]
    if name not in g.masks:
        g.masks[name] = _mask_root(g, name)
    mask = g.masks[name]
    for node in reversed(chain):
        if mask is not None and node.op_type == "Transpose":
            perm = _ints(node, "perm") or list(reversed(range(len(g.static(node.input[0]) or ()))))
            mask = _Mask(mask.router, mask.root, perm.index(mask.axis), mask.depth) if mask.axis in perm else None
        g.masks[node.output[0]] = mask
    return mask


def _mask_root(g: _Graph, name: str) -> _Mask | None:
    node = g.node(name)
    found = None
    if node is not None and node.op_type == "OneHot":
        found = _one_hot(g, node)
    elif node is not None and node.op_type == "Equal" and len(node.input) == 2:
        found = _equal_arange(g, node)
    if found is None or found[2] < found[0].experts:
        return None
    return _Mask(found[0], name, found[1], found[2])


def _hit_list(g: _Graph, nonzero: Any) -> _Mask | None:
    """The mask whose hit list ``nonzero`` is: NonZero(ReduceSum / ReduceMax(mask, every other axis) [> 0])."""
    node = g.node(nonzero.input[0])
    while node is not None and node.op_type == "Cast":
        node = g.node(node.input[0])
    if node is not None and node.op_type == "Greater" and g.int_value(node.input[1]) == 0:
        node = g.node(node.input[0])
    if node is None or node.op_type not in _HIT_REDUCTIONS or _attr(node, "keepdims", 1) != 0:
        return None
    mask, shape = _mask(g, node.input[0]), g.static(node.input[0])
    axes = g.value(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    axes = axes.reshape(-1).tolist() if axes is not None else _ints(node, "axes")
    if mask is None or not shape or axes is None:
        return None
    return mask if sorted(a % len(shape) for a in axes) == [i for i in range(len(shape)) if i != mask.axis] else None


def _root(mask: _Mask | None) -> str | None:
    return mask.root if mask is not None else None


def _hit_position(g: _Graph, name: str, mask: _Mask) -> tuple[str, int, int] | None:
    """(hit list NonZero output, position, hit list length) when the scalar ``name`` is one entry of ``mask``'s
    hit list, taken from the Split that unrolls it: Split(Transpose(NonZero(hits)), sizes, axis 0) -> a 1 x 1
    piece -> Squeeze / Reshape / Gather of its one element."""
    node = g.node(name)
    while node is not None and node.op_type in _SAME_ELEMENTS | {"Gather"}:
        if node.op_type == "Gather" and g.int_value(node.input[1]) not in (0, -1):
            return None
        name, node = node.input[0], g.node(node.input[0])
    if node is None or node.op_type != "Split" or _attr(node, "axis", 0) != 0 or len(node.input) < 2:
        return None
    sizes = g.value(node.input[1])
    table = g.node(node.input[0])
    if sizes is None or table is None or table.op_type != "Transpose" or _ints(table, "perm") not in (None, [1, 0]):
        return None
    hits = g.node(table.input[0])
    sizes = sizes.reshape(-1).tolist()
    j = list(node.output).index(name)
    if hits is None or hits.op_type != "NonZero" or j >= len(sizes) or sizes[j] != 1:
        return None
    if _root(_hit_list(g, hits)) != mask.root:  # the hit list of another mask
        return None
    return hits.output[0], sum(sizes[:j]), sum(sizes)


def _selection(g: _Graph, name: str) -> tuple[_Mask, tuple[Any, ...] | None] | None:
    """(mask, selector) when ``name`` is one expert's slice of a routing mask (selector ('expert', e) or
    ('hit', hit list, position, length)), or the whole mask (selector None)."""
    while True:
        mask = _mask(g, name)
        if mask is not None:
            return mask, None
        node = g.node(name)
        if node is None:
            return None
        if node.op_type == "Equal" and len(node.input) == 2:
            return _equal_expert(g, node)
        if node.op_type == "Gather":
            break
        if node.op_type not in _SAME_ELEMENTS:
            return None
        name = node.input[0]
    mask, shape, index = _mask(g, node.input[0]), g.static(node.input[0]), node.input[1]
    axis = _attr(node, "axis", 0)
    if mask is None or not shape or axis is None or axis % len(shape) != mask.axis:
        return None
    expert = g.int_value(index)
    if expert is not None:
        expert = expert + mask.depth if expert < 0 else expert
        return (mask, ("expert", expert)) if 0 <= expert < mask.depth else None
    hit = _hit_position(g, index, mask)
    return (mask, ("hit", *hit)) if hit is not None else None


def _equal_expert(g: _Graph, node: Any) -> tuple[_Mask, tuple[Any, ...]] | None:
    """Expert e's slice as ``top_k_indices == e`` (``torch.where(indices == e)``), in either order."""
    for ours, theirs in (node.input, reversed(node.input)):
        router, expert = _router(g, ours), g.int_value(theirs)
        if router is not None and expert is not None and expert >= 0:
            return _Mask(router, f"{router.name} == e", -1, router.experts), ("expert", expert)
    return None


def bind_routing(graph: Any, static: Callable[[str], tuple[int, ...] | None], values: dict[str, Any]) -> RoutingBinding:
    """The static shapes of the NonZero outputs of the routed experts in ``graph`` (see module doc)."""
    g = _Graph(graph, static, values)
    groups: dict[str, list[tuple[str, int, _Mask, tuple[Any, ...] | None]]] = defaultdict(list)
    for node in graph.node:
        if node.op_type != "NonZero" or node.domain not in ("", "ai.onnx") or not node.output or not node.output[0]:
            continue
        rank = len(static(node.input[0]) or ()) if node.input else 0
        try:
            found = _selection(g, node.input[0]) if rank else None
        except (IndexError, ValueError):  # a node short of its inputs, a malformed file: not recognised
            found = None
        if found is not None:
            groups[found[0].root].append((node.output[0], rank, *found))
    binding = RoutingBinding()
    for root, picks in groups.items():
        router = picks[0][2].router
        shapes = {out: (rank, router.rows) for out, rank, _, sel in picks if sel is None}
        sharing = _shares(router, [(out, rank, sel) for out, rank, _, sel in picks if sel is not None], shapes)
        binding.shapes.update(shapes)
        if sharing:
            binding.routers[root] = (router, sharing)
    return binding


def _shares(router: Router, picks: list[tuple[str, int, tuple[Any, ...]]], shapes: dict[str, Any]) -> int:
    """Bind each expert's NonZero to its uniform share when the picks cover every expert that can have rows; the
    number of experts sharing the rows, or 0 (nothing bound)."""
    kinds = {sel[0] for _, _, sel in picks}
    if kinds == {"expert"}:
        if not set(range(router.experts)) <= {sel[1] for _, _, sel in picks}:
            return 0
        for out, rank, (_, e) in picks:  # experts past the TopK's range are never picked: 0 rows
            shapes[out] = (rank, share(router.rows, router.experts, e) if e < router.experts else 0)
        return router.experts
    if kinds == {"hit"}:
        lists = {(sel[1], sel[3]) for _, _, sel in picks}
        (hits, length), *others = lists
        if others or length > router.experts or {sel[2] for _, _, sel in picks} != set(range(length)):
            return 0
        shapes[hits] = (1, length)
        for out, rank, (_, _, pos, _) in picks:
            shapes[out] = (rank, share(router.rows, length, pos))
        return length
    return 0
