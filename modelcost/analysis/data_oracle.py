"""Answers for model code that asks a tensor's values on the meta device: the data oracle.

The counters run the model on meta tensors (shapes, no values). Code that asks a value - ``.item()``,
``bool(t)`` / ``if t.any():``, ``nonzero`` / ``torch.where(mask)``, a boolean-mask index, ``.tolist()`` /
``.cpu()``, ``unique``, ``bincount``, ``torch.equal`` - has no answer there, and such code is common: the mask
and cache code of ``transformers`` (``fast_all(padding_mask)`` decides whether SDPA may use ``is_causal``), MoE
routers (which experts got tokens), padding checks. ``DataOracle`` is a ``TorchDispatchMode``, entered below the
counting modes, that answers them:

* **shadows**: every small meta tensor (at most ``LIMIT_ELEMENTS`` elements) that comes from tensors with
  known values gets a real CPU twin, computed by running the same op on the twins (an in-place op updates the
  twin in place; a write the oracle cannot follow drops the twins of that storage). Values are known for the
  inputs (``seed``: the example inputs' values, or made-up ones) and for tensors made from constants
  (``arange``, ``ones``, and Python data: ``torch.tensor``, ``Tensor.new_tensor``, whose copy no dispatch mode
  sees, so a function mode gives them theirs: ``_ConstantTensors``); weights have none, so the big activations
  never get a twin and cost nothing here;
* **made-up values at the frontier**: an op that turns small tensors into integers or booleans (``topk``,
  ``argmax``, a comparison) whose inputs lack twins - a router's scores come from the weights - gets made-up
  inputs: standard normal floats, zero integers and booleans. So a router spreads tokens over experts as
  random scores would (about evenly), instead of failing;
* **lineage replay**: a small tensor without a twin that a pointwise op, a simple reduction (``sum``, ``mean``,
  ``amax``, ``amin``, ``max``, ``min``, ``cumsum``, ``prod``) or a view made from small tensors keeps how it was
  made (``_Recipe``, on a ``_Node`` that holds no meta tensor: a count's peak memory follows their lifetimes).
  When values are made up for it (at the frontier or for a question), they are made up where the weights'
  outputs are - the recipe's inputs that have no recipe of their own, the roots - and the model's own recipes run
  on them, at most ``REPLAY_DEPTH`` recipes deep (values are made up there). VITS and FastSpeech2-conformer count
  their output frames as ``clamp_min(sum(ceil(exp(log_duration) * mask)), 1).long()``: normal values made up for
  the ``clamp_min``'s output cast to 0 or a negative length and the forward failed ("Calculated padded input
  size per channel: (0)"); made up for the duration predictor's output, the model's own ``ceil(exp(.))`` makes
  every token last at least a frame, as on real data;
* **questions**: an op of ``QUESTIONS`` whose meta kernel raises is answered by running it on the twins (a
  question about a tensor without a twin is asked of made-up values: zeros, ``False``, normal floats). Its
  tensor results come back as meta tensors of the real shapes (a copy to a real device stays real), with
  twins, so later questions about them have answers too.

Every answer that depends on values is recorded once per (op, line of the model, basis) as a
``core.assumptions.DataAssumption``: the op, the model's line that asked, whether the values were the example
inputs' or made up (and which), the first answer and the number of calls. An answer computed from constants
alone (an ``arange``) is exact and not recorded.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import sysconfig
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map
from torch.utils.weak import WeakTensorKeyDictionary

from modelcost.core.assumptions import FROM_INPUTS, MADE_UP, DataAssumption, merge_assumptions
from modelcost.loaders.binding import args_kwargs, tensors_of
from modelcost.loaders.buffer_values import data_value

LIMIT_ELEMENTS = 1 << 22  # twins only for tensors this small: masks, positions, a router's one-hot choices
REPLAY_DEPTH = 64  # recipes replayed at most this deep below the tensor whose values are asked (lineage replay)
# the reductions whose recipes are kept (besides pointwise ops and views): a duration's sum, a mean, a cumulative
# sum, a longest length (max and min of values only: their indices are integers, made up at once at the frontier)
REPLAYED_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "cumsum", "prod"})
INPUT_BUDGET_ELEMENTS = 1 << 22  # the example inputs are built for real only up to this many elements in all
# a model's checks on its own values (torch._assert_async's and transformers' torch_compilable_check reduce to
# these): on made-up values a check may fail where real data passes it (VITS's spline flow: "Discriminant has
# negative values" on made-up scores), so there it is assumed to hold, and the assumption recorded
CHECKS = frozenset({"_is_all_true", "_is_any_true"})
# aten ops whose result depends on values (the meta kernel raises): the questions the oracle answers
QUESTIONS = frozenset({
    "_local_scalar_dense", "nonzero", "masked_select", "_unique", "_unique2", "unique_dim", "unique_consecutive",
    "bincount", "repeat_interleave", "equal", "index", "_to_copy", "copy_",
})
# fused kernels whose integer outputs are their random-number state (philox seed and offset), no data a model asks
# about; and they have no CPU kernel to shadow them with. Without this, those outputs made the kernel a frontier and its
# q, k, v got made-up CPU twins (test_llama_70b_stays_on_meta; what it cost: BENCHMARKS.md, 'Figures that used to live
# in docstrings').
NOT_QUESTIONS = frozenset({
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_flash_attention_forward", "_efficient_attention_forward",
})
_TORCH_AND_US = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
                 os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


class UnansweredQuestion(RuntimeError):
    """The model asked values the oracle cannot give: of a tensor with no twin, too large to make values up for,
    or an op that fails on the twins too. Raised from the meta kernel's own error."""


class _ConstantTensors(TorchFunctionMode):
    """``torch.tensor``, ``torch.as_tensor`` and ``Tensor.new_tensor`` of Python data copy that data in C++, below
    any dispatch mode, so the oracle never saw them and a meta tensor so made had no twin. transformers 5.17's
    Funnel builds its relative positions from ``pos.new_tensor([1 - 2 ** block])`` and reads ``arange`` bounds from
    them: a made-up 0 for that value gave "upper bound and lower bound inconsistent with step sign", and the count
    failed (issue 28's seventh held-out set on the GPU machine). Entered with the oracle (``DataOracle.__enter__``);
    it gives such a tensor its data as twin."""

    def __init__(self, oracle: DataOracle) -> None:
        super().__init__()
        self.oracle = oracle

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func is torch.Tensor.__format__ and args and _is_meta(args[0]) and args[0].dim() == 0:
            # f"expert_{idx[0]}" formats a meta scalar as its repr where a real one formats its value
            # (SwitchTransformers names its experts so): the twin's value, a question like .item()
            twin = self.oracle.twins.get(args[0])
            if twin is not None:
                value = twin.value.item()
                self.oracle._record("Tensor.__format__", [args[0]], value)
                return value.__format__(args[1] if len(args) > 1 else "")
        out = func(*args, **kwargs)
        if func is torch.Tensor.new_tensor and len(args) > 1:
            self.oracle.constant(out, args[1])
        elif func in (torch.tensor, torch.as_tensor) and (args or "data" in kwargs):
            self.oracle.constant(out, args[0] if args else kwargs["data"])
        return out


@dataclass(frozen=True)
class _Twin:
    value: torch.Tensor  # real, on the CPU
    origins: frozenset[str]  # the seeded or made-up values it was computed from


@dataclass(frozen=True)
class _Recipe:
    """How a small meta tensor without a twin was made, to compute its values once its inputs have some: the op,
    its arguments with every meta tensor replaced by its ``_Node``."""

    func: Any
    args: tuple
    kwargs: dict
    index: int  # its place among the op's flattened results
    at: str  # the model's line that made it


class _Node:
    """A small meta tensor as the lineage replay knows it, without keeping it alive (the training-peak simulation
    frees a meta tensor's bytes when the model drops it): its shape and dtype, its recipe (None for a root) and
    its twin - the tensor's own while it lives, else the one it had when a recipe read it or the replay gave it."""

    __slots__ = ("dtype", "recipe", "ref", "shape", "twin")

    def __init__(self, t: torch.Tensor, twin: _Twin | None) -> None:
        self.ref: Any = weakref.ref(t)
        self.shape, self.dtype = t.shape, t.dtype
        self.recipe: _Recipe | None = None
        self.twin = twin


def _dead() -> None:
    return None


def _is_meta(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.is_meta


def aten_leaves(value: Any) -> list[Any]:
    """The leaves of an aten op's arguments or results (tensors, numbers, ...: nested tuples, lists and dicts
    flattened), as ``tree_flatten`` gives them, without its per-node bookkeeping: the oracle looks at every op."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in aten_leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in aten_leaves(v)]
    return [value]


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage()._cdata
    except Exception:  # noqa: BLE001 - tensors without a plain storage
        return None


@functools.cache
def _replayable(func: Any) -> bool:
    """Ops whose values the lineage replay recomputes: pointwise ones, simple reductions, views and copies - never
    one that writes into its arguments (the values it read are gone)."""
    if _written_args(func):
        return False
    name = func._overloadpacket.__name__
    return (torch.Tag.pointwise in func.tags or name in REPLAYED_REDUCTIONS or getattr(func, "is_view", False)
            or name in ("_unsafe_view", "_to_copy"))


@functools.cache
def _written_args(func: Any) -> tuple[tuple[int, Any], ...]:
    """(position, schema argument) of every argument ``func`` writes into (in-place and out= ops)."""
    schema = func._schema.arguments
    return tuple((i, a) for i, a in enumerate(schema) if a.alias_info is not None and a.alias_info.is_write)


def _not_the_models(path: str) -> bool:
    """torch, modelcost and the standard library (site-packages, inside it, holds the model's libraries)."""
    if path.startswith(_TORCH_AND_US):
        return True
    return path.startswith(_STDLIB) and "-packages" + os.sep not in path.removeprefix(_STDLIB)


def asked_at() -> str:
    """The innermost line of the model's code (outside torch, modelcost and the standard library) now running:
    'transformers/masking_utils.py:292 (_ignore_causal_mask_sdpa)'."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not _not_the_models(path) and not frame.f_code.co_filename.startswith("<"):
            short = os.sep.join(path.split(os.sep)[-2:])
            return f"{short}:{frame.f_lineno} ({frame.f_code.co_name})"
        frame = frame.f_back
    return "?"


def _answer_text(value: Any) -> str:
    leaves = [v for v in tree_flatten(value)[0]]
    if len(leaves) == 1 and not isinstance(leaves[0], torch.Tensor):
        return repr(leaves[0])
    shapes = [tuple(v.shape) for v in leaves if isinstance(v, torch.Tensor)]
    return "shape " + ", ".join(str(s) for s in shapes)


class DataOracle(TorchDispatchMode):
    """Enter it below the counting modes (first), ``seed`` the inputs, read ``assumptions`` afterwards."""

    def __init__(self, limit_elements: int = LIMIT_ELEMENTS, replay_depth: int = REPLAY_DEPTH) -> None:
        super().__init__()
        self.limit = limit_elements
        self.replay_depth = replay_depth
        self.twins = WeakTensorKeyDictionary()
        self.nodes = WeakTensorKeyDictionary()  # small tensors a recipe made or read -> _Node (lineage replay)
        self.assumptions: list[DataAssumption] = []
        self._example_origins: set[str] = set()  # origins that are the example inputs' real values
        self._gen = torch.Generator().manual_seed(0)

    # values in --------------------------------------------------------------------------------------
    def seed(self, name: str, meta: Any, value: torch.Tensor | None = None) -> None:
        """Give the input ``name`` (a meta tensor) its values: ``value`` (the example input's, on any device) or,
        without one, made-up ones (integers and booleans 1: a valid token id, nothing masked; floats normal)."""
        if not _is_meta(meta) or meta.numel() > self.limit:
            return
        if value is not None and tuple(value.shape) == tuple(meta.shape):
            origin = f"input {name}"
            self._example_origins.add(origin)
            self.twins[meta] = _Twin(value.detach().to("cpu", meta.dtype), frozenset({origin}))
            return
        if meta.dtype.is_floating_point or meta.dtype.is_complex:
            made, how = torch.randn(meta.shape, generator=self._gen).to(meta.dtype), "standard normal"
        else:
            made, how = torch.ones(meta.shape, dtype=meta.dtype), "ones"
        self.twins[meta] = _Twin(made, frozenset({f"input {name} (made up: {how})"}))

    def seed_bound(self, inputs: Any, values: Any = None, names: Sequence[str] = ()) -> DataOracle:
        """``seed`` every tensor of bound ``inputs`` (``loaders.binding``: by keyword, or positional named after
        ``names``) from ``values`` bound alike (None: made up); returns the oracle."""
        args, kwargs = args_kwargs(inputs)
        given = tensors_of(values) if values is not None else [None] * (len(args) + len(kwargs))
        labels = [names[i] if i < len(names) else f"#{i}" for i in range(len(args))] + list(kwargs)
        for label, t, v in zip(labels, [*args, *kwargs.values()], given, strict=True):
            self.seed(label, t, v)
        return self

    def _made_up(self, t: torch.Tensor | _Node, op: str, at: str | None = None) -> _Twin:
        """Values for a tensor (or a replay's node) the model derived from its weights: standard normal floats, zero
        ints / bools; ``op`` (at the model's line ``at``, default: the line now running) is the op that reads them."""
        if t.dtype.is_floating_point or t.dtype.is_complex:
            value, how = torch.randn(t.shape, generator=self._gen).to(t.dtype), "standard normal"
        else:
            value, how = torch.zeros(t.shape, dtype=t.dtype), "zeros"
        dims = "x".join(map(str, t.shape)) or "scalar"
        return _Twin(value, frozenset({f"made up ({how}): the {dims} {str(t.dtype).removeprefix('torch.')} "
                                       f"input of {op} at {at or asked_at()}"}))

    def _values_for(self, t: torch.Tensor, op: str) -> _Twin:
        """A twin for ``t``, which has none, read by ``op``: its recipe replayed (lineage replay), else made up."""
        node = self.nodes.get(t)
        return self._node_values(node, op, None, 0) if node is not None else self._made_up(t, op)

    def _node_values(self, node: _Node, op: str, at: str | None, depth: int) -> _Twin:
        """``node``'s twin: the one it has, else its recipe replayed on its inputs' (those without one get theirs so
        first, ``replay_depth`` recipes deep at most), else values made up for ``op`` at ``at``. Each twin so computed
        is kept (on the node and its tensor, if alive), so later ops and questions see the same values."""
        t = node.ref()
        if t is not None and t in self.twins:
            return self.twins[t]
        twin = node.twin
        recipe = node.recipe
        if twin is None and recipe is not None and depth < self.replay_depth:
            name = str(recipe.func._overloadpacket)
            inputs = [a for a in aten_leaves((recipe.args, recipe.kwargs)) if isinstance(a, _Node)]
            values = {id(a): self._node_values(a, name, recipe.at, depth + 1) for a in inputs}
            real = self._on_twins(recipe.func, recipe.args, recipe.kwargs, lambda a: values[id(a)].value, _Node)
            leaves = tree_flatten(real)[0] if real is not None else []
            r = leaves[recipe.index] if recipe.index < len(leaves) else None
            if isinstance(r, torch.Tensor) and tuple(r.shape) == tuple(node.shape) and r.dtype == node.dtype:
                twin = _Twin(r, frozenset().union(*(v.origins for v in values.values())))
        if twin is None:
            twin = self._made_up(node, op, at)
        node.twin, node.recipe = twin, None
        if t is not None:
            self.twins[t] = twin
        return twin

    def _node(self, t: torch.Tensor) -> _Node:
        node = self.nodes.get(t)
        if node is None:
            node = self.nodes[t] = _Node(t, self.twins.get(t))
        return node

    def _remember(self, func: Any, args: tuple, kwargs: dict, out: Any, inputs: list[torch.Tensor]) -> None:
        """Keep the recipe of ``out``'s small meta tensors, made by a replayable op from small inputs (some without
        twins), for the lineage replay."""
        if not _replayable(func) or any(t.numel() > self.limit for t in inputs):
            return
        nodes = {id(t): self._node(t) for t in inputs}
        args, kwargs = tree_map(lambda v: nodes[id(v)] if _is_meta(v) else v, (args, kwargs))
        at = asked_at()
        for i, m in enumerate(tree_flatten(out)[0]):
            if _is_meta(m):
                self.nodes[m] = node = _Node(m, None)
                node.recipe = _Recipe(func, args, kwargs, i, at)

    # tensors made from Python data ----------------------------------------------------------------
    def __enter__(self) -> DataOracle:
        self._constants = _ConstantTensors(self)
        self._constants.__enter__()
        try:
            return super().__enter__()
        except BaseException:
            self._constants.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: Any) -> Any:
        try:
            return super().__exit__(*exc)
        finally:
            self._constants.__exit__(*exc)

    def seed_buffers(self, module: Any, values: dict[str, torch.Tensor]) -> DataOracle:
        """Each buffer of ``module`` named in ``values`` (``LoadedTorch.buffer_values``: small buffers whose values
        the build kept) gets its value as twin: exact, as a constant's, so no assumption is recorded."""
        for name, value in values.items():
            try:
                buf = module.get_buffer(name)
            except AttributeError:
                continue
            if _is_meta(buf) and buf.numel() <= self.limit and tuple(buf.shape) == tuple(value.shape):
                self.twins[buf] = _Twin(value.to(buf.dtype), frozenset())
        return self

    def constant(self, out: Any, data: Any) -> None:
        """``out``, a tensor made from the Python data ``data`` (``_ConstantTensors``), gets that data as its twin:
        exact, so no assumption is recorded."""
        if not _is_meta(out) or out.numel() > self.limit:
            return
        value = data_value(out, data)  # None with a tensor inside: its copy reaches __torch_dispatch__, followed there
        if value is not None:
            self.twins[out] = _Twin(value, frozenset())

    # dispatch ---------------------------------------------------------------------------------------
    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        try:
            out = func(*args, **kwargs)
        except (RuntimeError, NotImplementedError) as exc:
            asked = func._overloadpacket.__name__ in QUESTIONS
            if not asked or not any(map(_is_meta, aten_leaves((args, kwargs)))):
                raise
            return self._answer(func, args, kwargs, exc)
        outs = [out] if isinstance(out, torch.Tensor) else [t for t in aten_leaves(out) if isinstance(t, torch.Tensor)]
        if any(t.is_meta for t in outs):
            self._shadow(func, args, kwargs, out, outs)
        return out

    def _shadow(self, func: Any, args: tuple, kwargs: dict, out: Any, outs: list[torch.Tensor]) -> None:
        """Twins for the meta outputs ``outs`` of an op whose inputs have them (or may be made up at the frontier)."""
        if func._overloadpacket.__name__ in NOT_QUESTIONS or not all(t.is_meta and t.numel() <= self.limit
                                                                     for t in outs):
            self._forget_writes(func, args, kwargs)
            return
        inputs = [t for t in aten_leaves((args, kwargs)) if _is_meta(t)]
        missing = [t for t in inputs if t not in self.twins]
        if missing and self._frontier(inputs, outs):
            name = str(func._overloadpacket)
            for t in missing:
                if t not in self.twins:  # (a replay for an earlier one may have given it one)
                    self.twins[t] = self._values_for(t, name)
            missing = []
        real = self._on_twins(func, args, kwargs) if not missing else None
        if real is None:
            self._forget_writes(func, args, kwargs)
            if missing:
                self._remember(func, args, kwargs, out, inputs)
            return
        origins = frozenset().union(*(self.twins[t].origins for t in inputs))
        if func._overloadpacket.__name__ in CHECKS and self._rests_on_made_up(origins):
            real, origins = torch.ones_like(real), origins | {f"assumed to hold: the check at {asked_at()}"}
        for m, r in zip(tree_flatten(out)[0], tree_flatten(real)[0], strict=False):
            if _is_meta(m) and isinstance(r, torch.Tensor) and tuple(r.shape) == tuple(m.shape):
                self.twins[m] = _Twin(r, origins)

    def _frontier(self, inputs: list[torch.Tensor], outs: list[torch.Tensor]) -> bool:
        """Small inputs turned into integers or booleans (a router's top-k, a comparison): values may be made up."""
        return (all(t.numel() <= self.limit for t in inputs)
                and any(not (t.dtype.is_floating_point or t.dtype.is_complex) for t in outs))

    def _on_twins(self, func: Any, args: tuple, kwargs: dict, value_of: Any = None, kind: Any = None) -> Any:
        """``func`` on the twins (meta -> CPU, ``device=meta`` -> cpu); None when it cannot run there. With
        ``value_of``, the arguments of type ``kind`` (a recipe's ``_Node``) are replaced by ``value_of`` of them."""
        def real(v: Any) -> Any:
            if value_of is not None and isinstance(v, kind):
                return value_of(v)
            if _is_meta(v):
                return self.twins[v].value
            if isinstance(v, torch.device) and v.type == "meta":
                return torch.device("cpu")
            return v

        try:
            return func(*tree_map(real, args), **tree_map(real, kwargs))
        except Exception:  # noqa: BLE001 - an op the CPU cannot run for this dtype: no twin, nothing else lost
            return None

    def _forget_writes(self, func: Any, args: tuple, kwargs: dict) -> None:
        """An op wrote into tensors whose twins it could not update: their twins (and their views') are stale."""
        written = _written_args(func)
        if not written or not (len(self.twins) or len(self.nodes)):
            return
        keys = set()
        for i, arg in written:
            value = args[i] if i < len(args) and not arg.kwarg_only else kwargs.get(arg.name)
            keys |= {_storage_key(t) for t in tree_flatten(value)[0] if _is_meta(t)}
        for t in [t for t in self.twins.keys() if _storage_key(t) in keys]:
            del self.twins[t]
        for t in [t for t in self.nodes.keys() if _storage_key(t) in keys]:
            # the recipes that read it read the values before the write: its node keeps them, apart from the tensor
            self.nodes[t].ref = _dead
            del self.nodes[t]

    # questions --------------------------------------------------------------------------------------
    def _answer(self, func: Any, args: tuple, kwargs: dict, exc: BaseException) -> Any:
        """The value a question asks, from the twins (made up where there are none); tensor results as meta."""
        name = str(func._overloadpacket)
        if name == "aten.index":
            return self._index_by_positions(func, args, kwargs, exc)
        inputs = [t for t in tree_flatten((args, kwargs))[0] if _is_meta(t)]
        self._make_up_missing(inputs, name, exc)
        real = self._on_twins(func, args, kwargs)
        if real is None:
            raise UnansweredQuestion(f"{name} at {asked_at()} fails on the values too: {exc}") from exc
        origins = self._record(name, inputs, real)
        stays_real = {id(t) for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor) and not _is_meta(t)}
        target = kwargs.get("device")
        to_real = name == "aten._to_copy" and target is not None and torch.device(target).type != "meta"
        return tree_map(lambda r: r if to_real or id(r) in stays_real else self._as_meta(r, origins), real)

    def _index_by_positions(self, func: Any, args: tuple, kwargs: dict, exc: BaseException) -> Any:
        """``x[mask]`` needs the mask's values only: its True positions (from its twin) index ``x`` on meta, as torch
        itself turns a boolean index into ``nonzero``'s; ``x`` may be as large as it likes."""
        x, indices = args[0], list(args[1])
        masks = {id(ix): ix for ix in indices if _is_meta(ix) and ix.dtype in (torch.bool, torch.uint8)}
        self._make_up_missing(list(masks.values()), "aten.index", exc)
        origins = frozenset().union(*(self.twins[m].origins for m in masks.values()))
        positions: list[Any] = []
        for ix in indices:
            if id(ix) in masks:
                found = self.twins[ix].value.ne(0).nonzero().unbind(1)  # one long index per mask dimension
                positions += [self._as_meta(p, origins) for p in found]
            else:
                positions.append(ix)
        out = func(x, positions, *args[2:], **kwargs)
        self._record("aten.index", list(masks.values()), out)
        self._shadow(func, (x, positions), kwargs, out, [out])
        return out

    def _make_up_missing(self, inputs: list[torch.Tensor], op: str, exc: BaseException) -> None:
        """Made-up twins for the inputs of a question that have none; a tensor too large for one is refused."""
        large = [t for t in inputs if t not in self.twins and t.numel() > self.limit]
        if large:
            dims = "x".join(map(str, large[0].shape))
            raise UnansweredQuestion(f"{op} at {asked_at()} needs the values of a {dims} tensor that has none on "
                                     f"meta, more than the data oracle makes up ({self.limit:,} elements)") from exc
        for t in inputs:
            if t not in self.twins:
                self.twins[t] = self._values_for(t, op)

    def _rests_on_made_up(self, origins: frozenset[str]) -> bool:
        """Whether values with these origins rest on made-up ones: not constants alone (no origin) and not the
        example inputs alone."""
        return bool(origins) and not origins <= self._example_origins

    def _record(self, op: str, inputs: list[torch.Tensor], answer: Any) -> frozenset[str]:
        """Write down an answer that rests on values (not one computed from constants); its origins."""
        origins = frozenset().union(*(self.twins[t].origins for t in inputs))
        if origins:
            basis = MADE_UP if self._rests_on_made_up(origins) else FROM_INPUTS
            merge_assumptions(self.assumptions, [DataAssumption(op, asked_at(), basis, sorted(origins),
                                                                _answer_text(answer))])
        return origins

    def _as_meta(self, value: Any, origins: frozenset[str]) -> Any:
        """A real result as the meta tensor the model expects (same shape and strides), with ``value`` its twin."""
        if not isinstance(value, torch.Tensor):
            return value
        m = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
        self.twins[m] = _Twin(value, origins)
        return m


def example_values(loaded: Any, batch_size: int | None) -> tuple[torch.Tensor, ...] | None:
    """The values of a loaded model's inputs at ``batch_size``, as the benchmark feeds them
    (``LoadedTorch.make_inputs``: tensors given by ``example_inputs()``, else seeded ids, masks and normals), when
    they hold at most ``INPUT_BUDGET_ELEMENTS`` elements together; None otherwise (the oracle makes them up)."""
    elements = sum(math.prod(s.shape) for s in loaded.input_specs(batch_size))
    return loaded.make_inputs(batch_size) if elements <= INPUT_BUDGET_ELEMENTS else None
