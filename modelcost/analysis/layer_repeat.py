"""Decoder layers counted once per kind and repeated (``modelcost llm`` on deep models).

Counting a forward on meta costs about the same per decoder layer, and a decoder is a few kinds of layer
repeated: Mixtral-8x7B is 32 copies of one, DeepSeek-V3 is 3 dense layers and 58 MoE layers. Two layers cost
the same when they run the same computation, and ``plan`` proves that structurally: the layers are grouped by a
signature of everything a layer's forward can depend on besides its inputs -

* every submodule's class, parameter and buffer shapes, dtypes and ``requires_grad``;
* every plain attribute of every submodule (ints, floats, strings, dtypes, tuples and dicts of them, partials,
  small real tensors by value; any other object by identity, so a per-layer object makes its layer a kind of
  its own), except the layer's own index (``layer_idx``, which picks the layer's cache slot); no forward hooks;
* the kind of KV-cache layer the model's cache holds for it (a sliding window and its width) and its entry of
  the config's ``layer_types``.

The counter then runs the first m layers only (``prefix_only``): in the plan's first count, the shortest
prefix holding two layers of every kind that has two or more (one of a kind that has one), which must count
alike; in every later count, the shortest prefix holding one of each kind. A prefix, not a pick of layers,
because models look up ``config.layer_types[i]`` by the position i in the list. While they run, a ``Tally``
per layer notes what ran inside it (op counters, activation bytes); ``expand`` then adds to the recorder, for
every layer past the prefix, the entries and tallies of the last counted layer of its kind, renamed. Every
figure of the report is then the whole model's: MACs, FLOPs, per-layer entries, op counts, activation bytes,
modules called. The peak of live activations is the prefix's: identical layers run the same live set, and what
outlives a layer (masks, RoPE tables, the residual stream) lives through every layer in both runs.

Checked at run time, else ``LayersDiffer`` says why and the caller counts every layer (``analysis.llm``):
in the first count, the two counted layers of a kind ran the same ops with the same costs and outputs (a layer
that reads its index at run time would differ); in every count, no layer asked the data oracle a value (its
cost could rest on made-up values), every counted layer ran once, and the forward did not fail with the shorter
list. Layer 0 is always counted and a stand-in is always a later layer, so code that singles out the first
layer never spreads to the others.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from modelcost.core.llm import LayerKind, RepeatedLayers

INDEX_ATTRIBUTES = frozenset({"layer_idx", "layer_id", "layer_index"})  # a layer's own position, nothing else
# the recorder's op counters (a stand-in layer's are added again for each copy)
_COUNTERS = ("zero_cost", "uncounted", "absorbed", "decomposed", "composites", "launches", "half_priced")


class LayersDiffer(Exception):
    """Layers of one kind did not count alike (or could not be counted apart): count every layer."""


def _value(v: Any, owner: Any = None) -> Any:
    """A comparable stand-in for an attribute of ``owner``: plain values as they are, containers, partials and
    small real tensors by content, meta tensors by shape, a method of ``owner`` by its function, others by id."""
    import functools
    import types

    import torch

    if v is None or isinstance(v, (bool, int, float, str, torch.dtype, torch.device)):
        return v
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_value(x, owner) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((str(k), _value(x, owner)) for k, x in v.items())))
    if isinstance(v, functools.partial):
        return ("partial", id(v.func), _value(v.args, owner), _value(v.keywords, owner))
    if isinstance(v, types.MethodType) and v.__self__ is owner:
        return ("method", id(v.__func__))
    if isinstance(v, torch.Tensor):  # meta: no values to differ; a real one by its values while small
        if v.device.type == "meta":
            content: Any = None
        else:
            content = tuple(v.flatten().tolist()) if v.numel() <= 64 else id(v)
        return ("tensor", tuple(v.shape), v.dtype, v.device, content)
    return ("object", id(v))


def _attributes(obj: Any, skip: frozenset[str], index: int) -> tuple:
    return tuple(sorted((k, _value(v, obj)) for k, v in vars(obj).items()
                        if k not in skip and not (k in INDEX_ATTRIBUTES and v == index)))


def signature(layer: Any, index: int, cache_layer: Any = None, layer_type: Any = None) -> tuple | None:
    """What layer ``index``'s forward can depend on besides its inputs (see the module docstring); None when it
    has forward hooks (they may do anything)."""
    import torch

    internals = frozenset(vars(torch.nn.Module()))
    parts: list[Any] = [_value(layer_type), type(cache_layer).__qualname__,
                        _attributes(cache_layer, frozenset(), index) if cache_layer is not None else None]
    for name, m in layer.named_modules(remove_duplicate=False):
        if m._forward_hooks or m._forward_pre_hooks:
            return None
        params = tuple((n, tuple(p.shape), p.dtype, p.requires_grad) for n, p in m._parameters.items() if p is not None)
        buffers = tuple((n, tuple(b.shape), b.dtype) for n, b in m._buffers.items() if b is not None)
        parts.append((name, type(m).__module__, type(m).__qualname__, params, buffers,
                      _attributes(m, internals, index)))
    return tuple(parts)


@dataclass
class Tally:
    """What ran inside one decoder layer: the recorder's op counters and activation bytes (differences from its
    entry to its exit), the data-oracle questions it asked, and how often it ran."""

    oracle: Any  # the count's data oracle (``analysis.data_oracle``): its assumptions are the questions asked
    counters: dict[str, Counter[str]] = field(default_factory=lambda: {c: Counter() for c in _COUNTERS})
    activation_bytes: int = 0
    asked: int = 0
    runs: int = 0
    start: tuple[dict[str, Counter[str]], int, int] | None = None

    def _asked(self) -> int:
        return sum(a.calls for a in self.oracle.assumptions)

    def begin(self, rec: Any) -> None:
        self.start = ({c: Counter(getattr(rec, c)) for c in _COUNTERS}, rec.activation_bytes, self._asked())

    def end(self, rec: Any) -> None:
        if self.start is None:
            return
        counters, activation, asked = self.start
        for c in _COUNTERS:
            self.counters[c].update(getattr(rec, c) - counters[c])
        self.activation_bytes += rec.activation_bytes - activation
        self.asked += self._asked() - asked
        self.runs += 1
        self.start = None

    def same(self, other: Tally) -> bool:
        return (self.counters, self.activation_bytes) == (other.counters, other.activation_bytes)


@dataclass
class LayerPlan:
    """Which decoder layers a count runs and which counted layer stands in for each of the others."""

    holder: Any  # the module whose attribute ``attr`` is the decoder ModuleList
    attr: str
    scope: str  # the list's name in the counted module ("model.model.layers")
    layers: int  # n
    members: list[list[int]]  # the layers of each kind, in order
    kinds: list[LayerKind]
    compared: bool = False  # a count ran two layers of every kind with two or more, and they agreed
    refused: str | None = None  # why the layers were counted one by one after all
    tallies: dict[str, Tally] = field(default_factory=dict)  # of the count running now, by layer name

    def _prefix(self, per_kind: int) -> int:
        return 1 + max(m[min(per_kind, len(m)) - 1] for m in self.members)

    @property
    def counted(self) -> int:
        """m: the count now runs layers 0 .. m - 1 (two of each kind until they were compared, then one)."""
        return self._prefix(1 if self.compared else 2)

    def _stand_ins(self) -> tuple[dict[int, int], list[tuple[int, int]]]:
        """Layer j >= m -> the last counted layer of its kind; and the pairs of counted layers of one kind."""
        m, stand_in, pairs = self.counted, {}, []
        for members in self.members:
            inside = [i for i in members if i < m]
            stand_in.update({j: inside[-1] for j in members if j >= m})
            pairs += [(inside[0], inside[1])] if len(inside) > 1 and not self.compared else []
        return stand_in, pairs

    def summary(self) -> RepeatedLayers:
        return RepeatedLayers(self.layers, self._prefix(2), self._prefix(1), list(self.kinds))

    def note(self) -> str:
        kinds = "; ".join(f"{k.layers} x {k.module} (from layer {k.first})" for k in self.kinds)
        def span(m: int) -> str:
            return "layer 0" if m == 1 else f"layers 0-{m - 1}"

        return (f"decoder layers: {self.layers} of {len(self.kinds)} kind(s) ({kinds}); the first counted forward ran "
                f"{span(self._prefix(2))} (two of each kind: they counted alike), the others {span(self._prefix(1))}; "
                "each other layer is the last counted layer of its kind, repeated (the layers of a kind have the same "
                "modules, shapes, settings and cache layer)")

    def _name(self, i: int) -> str:
        return f"{self.scope}.{i}"

    @contextlib.contextmanager
    def prefix_only(self, rec: Any, oracle: Any) -> Iterator[None]:
        """Run with layers 0 .. m - 1 only, tallying each (the full list restored after)."""
        import torch

        full = getattr(self.holder, self.attr)
        self.tallies = {self._name(i): Tally(oracle) for i in range(self.counted)}
        rec.scopes = self.tallies
        setattr(self.holder, self.attr, torch.nn.ModuleList(list(full)[: self.counted]))
        try:
            yield
        finally:
            setattr(self.holder, self.attr, full)
            rec.scopes = {}

    def expand(self, rec: Any, failure: str | None) -> None:
        """Add the layers past the prefix to ``rec`` (see the module docstring); LayersDiffer when the count
        cannot stand for them."""
        if failure is not None:
            raise LayersDiffer(f"the forward with the first {self.counted} layers failed: {failure}")
        for i, tally in enumerate(self.tallies.values()):
            if tally.runs != 1 or tally.asked:
                why = f"ran {tally.runs} times" if tally.runs != 1 else "asked tensor values (data oracle)"
                raise LayersDiffer(f"decoder layer {i} {why}")
        stand_in, pairs = self._stand_ins()
        entries = {i: self._entries(rec, i) for i in range(self.counted)}
        for a, b in pairs:
            if entries[a] != entries[b] or not self.tallies[self._name(a)].same(self.tallies[self._name(b)]):
                raise LayersDiffer(f"decoder layers {a} and {b} are alike in structure but did not count alike")
        called = {i: [n[len(self._name(i)):] for n in rec.called if _under(n, self._name(i))]
                  for i in set(stand_in.values())}  # modules that ran in each stand-in, named relative to it
        copies = []
        for j in range(self.counted, self.layers):
            src = stand_in[j]
            tally = self.tallies[self._name(src)]
            copies += [dataclasses.replace(e, name=self._name(j) + e.name, output_shapes=list(e.output_shapes),
                                           call_macs=list(e.call_macs), gemms=list(e.gemms)) for e in entries[src]]
            for c in _COUNTERS:
                getattr(rec, c).update(tally.counters[c])
            rec.activation_bytes += tally.activation_bytes
            rec.called.update(self._name(j) + n for n in called[src])
        items = list(rec.layers.items())  # the copies go after the counted layers' entries, in execution order
        at = 1 + max((k for k, (name, _) in enumerate(items) if _under(name, self.scope)), default=len(items) - 1)
        rec.layers = dict(items[:at] + [(c.name, c) for c in copies] + items[at:])
        self.compared = True

    def _entries(self, rec: Any, i: int) -> list[Any]:
        """Layer i's recorder entries, named relative to the layer ('.mlp.experts')."""
        inside = self._name(i)
        return [dataclasses.replace(e, name=e.name[len(inside):]) for name, e in rec.layers.items()
                if _under(name, inside)]

    def pad_cache(self, cache: Any, counted: int) -> None:
        """Fill the cache slots of the layers past the ``counted`` that ran with their stand-in's (the same
        tensors)."""
        stand_in = {j: max(i for i in m if i < counted) for m in self.members for j in m if j >= counted}
        if isinstance(cache, list):
            cache += [cache[stand_in[j]] for j in range(len(cache), self.layers)]
            return
        layers = cache.layers
        for j in range(counted, self.layers):
            slot = copy.copy(layers[stand_in[j]])
            if j < len(layers):
                layers[j] = slot
            else:
                layers.append(slot)


def _under(name: str, scope: str) -> bool:
    return name == scope or name.startswith(scope + ".")


def plan(module: Any, cache: Any, config: Any, step_scope: str) -> LayerPlan | None:
    """The plan for ``module`` (the causal LM; ``step_scope``: its name in the counted module, with the dot), or
    None when counting a prefix would not save anything or the decoder list is not found."""
    import torch

    if not isinstance(cache, list) and not isinstance(getattr(cache, "layers", None), list):
        return None
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    n = getattr(text, "num_hidden_layers", None)
    lists = [(name, m) for name, m in module.named_modules()
             if isinstance(m, torch.nn.ModuleList) and len(m) >= 2 and (n is None or len(m) == n)]
    if not lists:
        return None
    path, decoder = min(lists, key=lambda item: item[0].count("."))
    holder = module.get_submodule(path.rpartition(".")[0]) if "." in path else module
    slots = cache if isinstance(cache, list) else cache.layers
    types = getattr(text, "layer_types", None) or []
    kinds: dict[Any, list[int]] = {}
    for i, layer in enumerate(decoder):
        sig = signature(layer, i, slots[i] if i < len(slots) else None, types[i] if i < len(types) else None)
        kinds.setdefault(("unique", i) if sig is None else sig, []).append(i)
    members = list(kinds.values())
    if 1 + max(m[0] for m in members) >= len(decoder):  # one of each kind is every layer: nothing to repeat
        return None
    summary = [LayerKind(type(decoder[m[0]]).__name__, m[0], len(m)) for m in members]
    return LayerPlan(holder, path.rpartition(".")[2], f"{step_scope}{path}", len(decoder), members, summary)
