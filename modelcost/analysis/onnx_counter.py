"""Static cost of an ONNX model: parameters, storage, MACs / FLOPs per node, activation memory.

``analyze_onnx(loaded)`` infers every tensor's shape at the bound inputs (``onnx_shapes``, no weight
bytes), then walks the nodes in file (topological) order. Each node gets one LayerCost whose status is
``counted`` (a formula from ``onnx_ops``), ``zero_cost`` or ``uncounted`` (no formula, an op in no schema, or a
shape inference could not make static; listed in ``compute.uncounted_ops`` with its count, never a silent zero).
Any uncounted node makes the result *partial*: ``compute.complete`` is False and ``compute.incomplete_reasons``
says which ops and why, one line per (op, reason); the totals are then lower bounds (the CLI exits 3).

Control flow: the nodes of an If branch, a Loop body and a Scan body are counted as layers of their own, named
``<node>/<branch>/<inner node>``. If: the branch whose condition folds to a constant, else the costlier one
(more MACs, then FLOPs), and the report says which. Loop: the trip count M when it folds to a constant, else 1;
Scan: the scan length. A body's counts (MACs, FLOPs, activation bytes) are multiplied by its trip count.

Memory: a layer's activation bytes are its outputs' bytes (Constant nodes excluded); the peak of live
activations is taken over the main graph's nodes (a control-flow node counts by its outputs).
Parameters: ``onnx_params`` (the rule is written there).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from modelcost.analysis.onnx_ops import ZERO, OpContext, ShapeMismatch, ShapeUnknown, in_schema, lookup
from modelcost.analysis.onnx_params import ParamSplit, classify
from modelcost.analysis.onnx_shape_rules import scan_trip_count
from modelcost.analysis.onnx_shapes import InferredOnnx, Scope, TensorInfo, infer, loop_trip_count
from modelcost.analysis.summary import DTYPE_BYTES, build_report, param_and_storage_stats, peak_live_bytes, tensor_bytes
from modelcost.core.types import CostReport, LayerCost, ModelInfo, TensorSpec
from modelcost.loaders.onnx_graph import implicit_inputs
from modelcost.loaders.onnx_loader import LoadedOnnx

LOOP_UNBOUNDED_M = 1 << 31  # a Loop "forever until cond" exported with M = INT64_MAX: taken as 1 iteration


@dataclass
class Tally:
    layers: list[LayerCost] = field(default_factory=list)
    uncounted: Counter[str] = field(default_factory=Counter)
    zero_cost: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)  # note lines ("Op: weight-only quantized") -> occurrences
    why_uncounted: Counter[tuple[str, str]] = field(default_factory=Counter)  # (op, why) -> occurrences

    def merge(self, other: Tally) -> None:
        self.layers += other.layers
        self.uncounted.update(other.uncounted)
        self.zero_cost.update(other.zero_cost)
        self.notes += other.notes
        self.problems += other.problems
        self.reasons.update(other.reasons)
        self.why_uncounted.update(other.why_uncounted)

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    @property
    def flops(self) -> int:
        return sum(layer.flops for layer in self.layers)


def op_label(node: Any) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}:{node.op_type}"


_CONVS = {"Conv": 1, "ConvTranspose": 1, "ConvInteger": 1, "QLinearConv": 3}  # op -> the weight's input index


def _conv_window(node: Any, inputs: list[TensorInfo | None]) -> tuple[tuple[int, ...] | None, ...]:
    """(kernel_shape, strides, dilations) of a conv node: its attributes, the kernel from the weight's shape
    where the node has none, strides and dilations 1 where absent; all None where the kernel is unknown."""
    attrs = {a.name: tuple(int(v) for v in a.ints) for a in node.attribute if a.name in
             ("kernel_shape", "strides", "dilations")}
    kernel = attrs.get("kernel_shape")
    at = _CONVS[node.op_type]
    weight = inputs[at] if len(inputs) > at else None
    if not kernel and weight is not None and weight.shape is not None and len(weight.shape) > 2:
        kernel = tuple(weight.shape[2:])
    if not kernel or not all(isinstance(k, int) for k in kernel):
        return None, None, None
    ones = (1,) * len(kernel)
    return kernel, attrs.get("strides") or ones, attrs.get("dilations") or ones


class _Walker:
    def __init__(self, inferred: InferredOnnx, split: ParamSplit, opset: int) -> None:
        self.inferred = inferred
        self.table = inferred.table
        self.split = split
        self.opset = opset
        self.params = {p.name: p for p in split.params}
        self.producers: dict[str, Any] = {}

    def walk(self, graph: Any, scope: Scope, mult: int, prefix: str) -> Tally:
        tally = Tally()
        for idx, node in enumerate(graph.node):
            for out in node.output:
                self.producers[out] = node
            name = prefix + (node.name or f"{node.op_type}_{idx}")
            state, formula = lookup(node.domain, node.op_type)
            if state == "control":
                self._control(node, idx, scope, mult, name, tally)
                continue
            tally.layers.append(self._layer(node, scope, mult, name, state, formula, tally))
        return tally

    def _infos(self, scope: Scope, names: Any) -> list[TensorInfo | None]:
        return [self.table.get(scope, n) if n else None for n in names]

    def _layer(
        self, node: Any, scope: Scope, mult: int, name: str, state: str, formula: Any, tally: Tally
    ) -> LayerCost:
        label = op_label(node)
        outs = self._infos(scope, node.output)
        layer = LayerCost(
            name=name, op=label, output_shapes=[o.shape for o in outs if o is not None and o.shape is not None]
        )
        if node.op_type in _CONVS:
            layer.groups = next((int(a.i) for a in node.attribute if a.name == "group"), 1)
            layer.kernel_shape, layer.strides, layer.dilations = _conv_window(node, self._infos(scope, node.input))
        weights = {n: self.params[n] for n in dict.fromkeys(node.input) if n in self.params}
        layer.params = sum(p.numel for p in weights.values())
        layer.weight_bytes = sum(p.size_bytes for p in weights.values())
        if node.op_type != "Constant":
            layer.activation_bytes = mult * self._bytes(outs, tally)
        cost, why = None, "no formula for this op"
        if state == "counted":
            ctx = OpContext(
                node,
                self._infos(scope, node.input),
                outs,
                self.opset,
                self.producers.get,
                lambda n: self.table.get(scope, n),
                lambda n: None if scope else self.inferred.values.get(n),
            )
            try:
                cost = formula(ctx)
                why = "attributes not covered by its formula"
            except ShapeUnknown:
                why = "a tensor shape could not be inferred"
            except ShapeMismatch as exc:
                tally.problems.append(f"node {name!r} ({label}): {exc}; check --input-shape / --batch-size")
                why = "its input shapes do not match"
            except Exception as exc:  # noqa: BLE001 - a malformed node is reported, not a crash
                why = f"formula failed ({exc.__class__.__name__}: {exc})"
        elif state == "none" and not in_schema(node.domain, node.op_type):
            why = f"op in no ONNX schema modelcost knows (domain {node.domain or 'ai.onnx'!r}), no formula"
        if state == "zero_cost" or cost is ZERO:
            layer.status = "zero_cost"
            tally.zero_cost[label] += 1
        elif cost is not None:
            layer.macs, layer.flops, layer.macs_dtype = cost.macs * mult, cost.flops * mult, cost.macs_dtype
            layer.gemm_shapes = [cost.gemm] if cost.gemm and mult == 1 else []  # a loop body's node: its MACs x mult
            if cost.note:
                tally.reasons[f"{label}: {cost.note}"] += 1
        else:
            layer.status = "uncounted"
            tally.uncounted[label] += 1
            tally.why_uncounted[(label, why)] += 1
        return layer

    def _bytes(self, infos: list[TensorInfo | None], tally: Tally) -> int:
        total = 0
        for info in infos:
            if info is None:
                continue
            if info.static_shape is None or info.dtype not in DTYPE_BYTES:
                tally.reasons["activation bytes: a tensor without a static shape or a known dtype is left out"] += 1
                continue
            total += tensor_bytes(info.static_shape, info.dtype)
        return total

    def _sub(self, node: Any, attr: str, idx: int, scope: Scope, mult: int, name: str) -> Tally:
        """The tally of one subgraph attribute; a missing one is a problem (the model is malformed)."""
        graph = next((a.g for a in node.attribute if a.name == attr and a.HasField("g")), None)
        if graph is None:
            return Tally(problems=[f"{node.op_type} {name!r} has no {attr} subgraph; the model is malformed"])
        return self.walk(graph, (*scope, idx, attr), mult, f"{name}/{attr}/")

    def _control(self, node: Any, idx: int, scope: Scope, mult: int, name: str, tally: Tally) -> None:
        if node.op_type == "If":
            then = self._sub(node, "then_branch", idx, scope, mult, name)
            other = self._sub(node, "else_branch", idx, scope, mult, name)
            cond = self.inferred.values.get(node.input[0]) if node.input and not scope else None
            if cond is not None and cond.size == 1:
                chosen, why = (then, "then_branch") if bool(cond.reshape(-1)[0]) else (other, "else_branch")
                tally.notes.append(f"If {name!r}: condition folds to a constant; counted {why}")
            else:
                pick_then = (then.macs, then.flops) >= (other.macs, other.flops)
                chosen, why = (then, "then_branch") if pick_then else (other, "else_branch")
                tally.notes.append(
                    f"If {name!r}: condition not known statically; counted the costlier branch, {why} "
                    f"(then: {then.macs} MACs / {then.flops} FLOPs, else: {other.macs} MACs / {other.flops} FLOPs)"
                )
            tally.merge(chosen)
            tally.problems += (other if chosen is then else then).problems
            return
        trips = self._trips(node, scope, name, tally)
        tally.merge(self._sub(node, "body", idx, scope, mult * trips, name))

    def _trips(self, node: Any, scope: Scope, name: str, tally: Tally) -> int:
        if node.op_type == "Scan":
            n = scan_trip_count(node, lambda t: self.table.get(scope, t))
            if n is None:
                tally.notes.append(f"Scan {name!r}: scan length unknown; counted 1 iteration")
                return 1
            tally.notes.append(f"Scan {name!r}: {n} iterations (the scan length)")
            return n
        m_name = node.input[0] if node.input else ""
        value = self.inferred.values.get(m_name) if m_name and not scope else None
        cond = len(node.input) > 1 and node.input[1] != ""
        m = loop_trip_count(value)  # None unless one non-negative integer (a fuzzed file may hold anything)
        if m is not None and m < LOOP_UNBOUNDED_M:
            extra = "; it may stop earlier on its condition" if cond else ""
            tally.notes.append(f"Loop {name!r}: trip count M = {m} (a constant){extra}")
            return m
        tally.notes.append(f"Loop {name!r}: trip count not known statically; counted 1 iteration")
        return 1


def _peak(graph: Any, table: Any) -> int:
    steps = []
    for node in graph.node:
        if node.op_type == "Constant":
            continue
        produced = []
        for out in node.output:
            info = table.get((), out) if out else None
            if info is not None and info.static_shape is not None and info.dtype in DTYPE_BYTES:
                produced.append((out, tensor_bytes(info.static_shape, info.dtype)))
        consumed = [n for n in node.input if n]
        for attr in node.attribute:
            if attr.HasField("g"):
                consumed += implicit_inputs(attr.g)
        steps.append((produced, consumed))
    return peak_live_bytes(steps, keep=[o.name for o in graph.output])


def _output_specs(graph: Any, table: Any) -> list[TensorSpec]:
    """Graph outputs at the inferred shapes; an output of unknown dtype keeps its dims as strings (not static)."""
    specs = []
    for vi in graph.output:
        info = table.get((), vi.name)
        known = info is not None and info.shape is not None
        shape = tuple(info.shape) if known else ("?",)  # unknown rank: not a scalar, and not static
        dtype = info.dtype if info is not None and info.dtype in DTYPE_BYTES else None
        specs.append(
            TensorSpec(vi.name, shape if dtype else (tuple(str(d) for d in shape) or ("?",)), dtype or "unknown")
        )
    return specs


def analyze_onnx(loaded: LoadedOnnx) -> CostReport:
    """The CostReport of ``loaded`` at its bound input shapes (see module doc)."""
    inferred = infer(loaded.model, loaded.inputs, loaded.opset)
    graph = inferred.model.graph
    split = classify(graph)
    tally = _Walker(inferred, split, loaded.opset or 1).walk(graph, (), 1, "")
    notes = [*loaded.notes, *inferred.notes, *split.notes, *tally.notes]
    notes += [f"{reason} ({count} node{'s' if count > 1 else ''})" for reason, count in sorted(tally.reasons.items())]
    incomplete = [f"{op} x{n}: {why}" for (op, why), n in sorted(tally.why_uncounted.items())]
    pstats, sstats = param_and_storage_stats(split.params, split.shared, split.buffers, split.constants)
    sstats.file_size_bytes = loaded.file_size_bytes
    sstats.external_data_bytes = loaded.external_data_bytes
    model = ModelInfo(
        name=loaded.path.stem,
        source=loaded.source or str(loaded.path),
        format="onnx",
        file_size_bytes=loaded.file_size_bytes,
        opset=loaded.opset,
    )
    return build_report(
        model=model,
        inputs=list(loaded.inputs),
        outputs=_output_specs(graph, inferred.table),
        layers=tally.layers,
        params=pstats,
        storage=sstats,
        uncounted_ops=dict(tally.uncounted),
        zero_cost_ops=dict(tally.zero_cost),
        activation_bytes=sum(layer.activation_bytes for layer in tally.layers),
        peak_activation_bytes=_peak(graph, inferred.table),
        notes=notes,
        problems=tally.problems,
        batch_size=loaded.options.batch_size,
        incomplete_reasons=incomplete,
    )
