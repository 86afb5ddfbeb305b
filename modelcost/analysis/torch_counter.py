"""Count a PyTorch model's parameters, MACs/FLOPs and activation memory on the meta device.

The model (built on ``meta`` by the loader, so no weight memory exists) runs once on meta inputs under two
modes: a TorchFunctionMode that counts attention, recurrent layers, RMS norm and einsum as one op each
(``torch_ops.composite_kind``; the aten ops they run inside are absorbed), and a TorchDispatchMode that puts
every other aten op in one of three states (``torch_ops.classify``): counted, zero cost, or uncounted (listed
with its count). Global module hooks attribute each op to the innermost module running: a leaf module is
one layer; an op a container runs itself (a residual add, attention) is a layer named ``module.op``.

Activation memory: every op output whose storage is new is an activation; views share their base. Peak live
bytes come from ``summary.peak_live_bytes`` over the execution order (a tensor lives until its last use).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from modelcost.analysis import torch_ops
from modelcost.analysis.data_oracle import DataOracle, UnansweredQuestion, aten_leaves, example_values
from modelcost.analysis.layer_repeat import LayerPlan
from modelcost.analysis.summary import ParamTensor, build_report, param_and_storage_stats, peak_live_bytes
from modelcost.core.eager_ops import call_class, launches_kernel
from modelcost.core.env import env_flag
from modelcost.core.types import CostReport, EagerOps, LayerCost, ModelInfo, TensorSpec
from modelcost.loaders.torch_loader import LoadedTorch, forward_names


@dataclass
class _Layer:
    name: str
    op: str
    params: int = 0
    weight_bytes: int = 0
    macs: int = 0
    flops: int = 0
    macs_dtype: str | None = None
    groups: int | None = None
    window: torch_ops.ConvWindow | None = None
    output_shapes: list[tuple[int, ...]] = field(default_factory=list)
    activation_bytes: int = 0
    counted: bool = False
    uncounted: bool = False
    eager_kernels: int = 0
    eager_elements: int = 0
    eager_strided_kernels: int = 0
    eager_strided_elements: int = 0
    eager_bytes: int = 0
    eager_unvectorized_kernels: int = 0
    eager_unvectorized_elements: int = 0
    calls: int = 0  # module calls (a leaf module) or aten calls (a layer of one aten op) in the forward
    call_macs: list[int] = field(default_factory=list)  # each call's MACs
    gemms: list[tuple[int, int, int] | None] = field(default_factory=list)  # a layer of one aten op: each call's

    def to_cost(self) -> LayerCost:
        status = "uncounted" if self.uncounted else "counted" if self.counted else "zero_cost"
        return LayerCost(self.name, self.op, self.macs, self.flops, self.params, self.output_shapes,
                         self.macs_dtype, self.weight_bytes, self.activation_bytes, status, self.groups,
                         self.eager_kernels, self.eager_elements, self.eager_strided_kernels,
                         self.eager_strided_elements, self.eager_bytes, max(self.calls, 1),
                         list(self.call_macs) if self.calls > 1 else [],
                         *(self.window or (None, None, None)),
                         gemm_shapes=list(self.gemms) if self.gemms and None not in self.gemms else [],
                         eager_unvectorized_kernels=self.eager_unvectorized_kernels,
                         eager_unvectorized_elements=self.eager_unvectorized_elements)


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def _op_tensors(value: Any) -> list[torch.Tensor]:
    """The tensors of an aten op's arguments or results (nested tuples, lists and dicts only: cheaper)."""
    return [t for t in aten_leaves(value) if isinstance(t, torch.Tensor)]


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage()._cdata
    except Exception:  # noqa: BLE001 - sparse / nested / subclass tensors have no plain storage
        return None


def reads_across(ins: list[torch.Tensor], outs: list[torch.Tensor]) -> bool:
    """True when a call reads an input as large as its output across the output's fastest dimension (the
    output's stride-1 dimension has another stride, not 0, in that input): a transposed operand, which eager
    reads uncoalesced in TensorIterator's non-vectorized kernel, or copies to contiguous first (LayerNorm,
    a reshape before a matmul). Broadcast operands (stride 0) and the same layout (however permuted) are not."""
    if not outs or outs[0].numel() < 2:
        return False
    out = outs[0]
    fast = [d for d in range(out.dim()) if out.shape[d] > 1 and out.stride(d) == 1]
    if not fast:
        return False
    return any(t.shape == out.shape and t.stride(fast[0]) not in (0, 1) for t in ins)


# dtype casts TensorIterator runs by a vectorized kernel of their own (aten/src/ATen/native/cuda/Copy.cu): float32
# to half / bfloat16; every other cast runs its unrolled kernel with the cast in it
_VECTORIZED_CASTS = {(torch.float32, torch.float16), (torch.float32, torch.bfloat16)}
COPY_OPS = ("aten.copy_", "aten._to_copy")  # copies judged as pointwise calls (``unvectorized``)


def _strided(t: torch.Tensor) -> bool:
    return t.layout == torch.strided and not t.is_nested


def _dense(t: torch.Tensor) -> bool:
    """Whether ``t`` covers its memory without gaps in some order of its dimensions (contiguous, channels_last,
    any permutation): TensorIterator collapses such operands to one flat, vectorizable run."""
    span = 1
    for stride, size in sorted((t.stride(d), t.shape[d]) for d in range(t.dim()) if t.shape[d] > 1):
        if stride != span:
            return False
        span *= size
    return True


def unvectorized(ins: list[torch.Tensor], outs: list[torch.Tensor]) -> bool:
    """True when a pointwise call or copy is run by TensorIterator's non-vectorized kernel: its output is not
    dense (a slice written in place), or an input is broadcast (another shape, or stride 0: RMSNorm's weight, a
    rotary embedding's cos over the heads), laid out otherwise than the output (a transposed-then-viewed operand
    beside a contiguous one) or of another dtype (bf16 x fp32, a widening cast; float32 to half is a vectorized
    cast of its own). Only a fully contiguous, same-dtype call is vectorized (``vectorized_elementwise_kernel``);
    0-d inputs count as the scalars they usually are. Transposed inputs (``reads_across``) are judged apart."""
    if not outs or not _strided(outs[0]) or outs[0].numel() < 2:
        return False  # a sparse or nested output has no strides to judge
    out = outs[0]
    if not _dense(out):
        return True
    for t in ins:
        if not _strided(t) or t.dim() == 0 or t is out:
            continue
        if t.shape != out.shape or t.stride() != out.stride():
            return True
        if t.dtype != out.dtype and (t.dtype, out.dtype) not in _VECTORIZED_CASTS:
            return True
    return False


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class _Recorder:
    """Everything one counting run collects."""

    def __init__(self, module_names: dict[int, str], leaves: set[int], op_labels: dict[str, str]) -> None:
        self.module_names = module_names
        self.leaves = leaves
        self.op_labels = op_labels  # module name -> class name to show (the original class for .pt2)
        self.layers: dict[str, _Layer] = {}
        self.stack: list[tuple[str, bool]] = []
        self.starts: list[int] = []  # per entry of ``stack``: a leaf layer's MACs when the call began
        self.called: set[str] = set()
        self.uncounted: Counter[str] = Counter()
        self.zero_cost: Counter[str] = Counter()
        self.absorbed: Counter[str] = Counter()
        self.decomposed: Counter[str] = Counter()
        self.composites: Counter[str] = Counter()
        self.launches: Counter[str] = Counter()  # "kernel" / "view": aten calls as eager issues them (core/eager_ops)
        self.half_priced: Counter[str] = Counter()  # class -> calls whose half-precision price differs (call_class)
        self.formula_errors: dict[str, str] = {}
        self.static_storages: set[int] = set()
        self.seen_storages: set[int] = set()
        self.keep_alive: list[torch.Tensor] = []  # storage ids stay unique while the run lasts
        self.steps: list[tuple[list[tuple[int, int]], list[int]]] = []
        self.activation_bytes = 0
        self.in_composite = 0
        self.scopes: dict[str, Any] = {}  # module name -> its tally (begin / end), ``layer_repeat.LayerPlan``

    # module scopes -----------------------------------------------------------------------------------
    def enter(self, module: torch.nn.Module) -> None:
        name = self.module_names.get(id(module), f"<{type(module).__name__}>")
        leaf = id(module) in self.leaves
        self.called.add(name)
        if name in self.scopes:
            self.scopes[name].begin(self)
        name = name or (type(module).__name__ if leaf else "")  # a root without children is one layer
        self.stack.append((name, leaf))
        if leaf and name not in self.layers:
            own = [p for p in module.parameters(recurse=False)]
            self.layers[name] = _Layer(name, self.op_labels.get(name, type(module).__name__),
                                       params=sum(p.numel() for p in own),
                                       weight_bytes=sum(_nbytes(p) for p in own))
        self.starts.append(self.layers[name].macs if leaf else 0)  # this call's MACs: the layer's growth till leave

    def leave(self, module: torch.nn.Module, output: Any) -> None:
        if not self.stack:
            return
        name, leaf = self.stack.pop()
        start = self.starts.pop()
        if name in self.scopes:
            self.scopes[name].end(self)
        if leaf:
            layer = self.layers[name]
            layer.calls += 1
            layer.call_macs.append(layer.macs - start)
            for t in _tensors(output):
                layer.output_shapes.append(tuple(t.shape))
                layer.activation_bytes += _nbytes(t)

    # ops ---------------------------------------------------------------------------------------------
    def record(self, op: str, status: str, cost: torch_ops.OpCost | None, inputs: Any, outputs: Any,
               mutable: bool | None = None, pointwise: bool = False) -> None:
        """One aten call (``mutable``: its schema writes an argument; ``pointwise``: TensorIterator runs it, a
        pointwise op or a copy) or, with ``mutable`` None, one composite."""
        outs = _op_tensors(outputs)
        ins = _op_tensors(inputs)
        in_keys = [k for k in map(_storage_key, ins) if k is not None]
        out_keys = [_storage_key(t) for t in outs]
        self._track_memory(in_keys, outs, out_keys)
        # as eager issues it (core/eager_ops.py); a composite is one fused kernel on the GPU (SDPA, cuDNN RNN...)
        kernel = mutable is None or launches_kernel(mutable, in_keys, (k for k in out_keys if k is not None))
        self.launches["kernel" if kernel else "view"] += 1
        half_class = call_class(op, inputs[0])  # inputs: (args, kwargs); a composite's kind is no aten op: None
        if half_class is not None:
            self.half_priced[half_class] += 1
        if status == "zero_cost":
            self.zero_cost[op] += 1
        elif status == "uncounted":
            self.uncounted[op] += 1
        name, leaf = self.stack[-1] if self.stack else ("", False)
        if leaf:
            layer = self.layers[name]
        elif status == "zero_cost" and not (kernel and ins):
            return  # a view, an alias or an allocation; a zero-FLOP copy (cat, clone, a dtype cast) is a layer
        else:
            label = op.removeprefix("aten.")
            key = f"{name}.{label}" if name else label
            layer = self.layers.setdefault(key, _Layer(key, label))
            layer.calls += 1
            for t in outs:
                layer.output_shapes.append(tuple(t.shape))
                layer.activation_bytes += _nbytes(t)
        if kernel:
            elements = sum(t.numel() for t in ins) + sum(t.numel() for t in outs)
            layer.eager_kernels += 1
            layer.eager_elements += elements
            layer.eager_bytes += sum(map(_nbytes, (*ins, *outs)))
            if mutable is not None and not (cost is not None and cost.macs) and reads_across(ins, outs):
                layer.eager_strided_kernels += 1
                layer.eager_strided_elements += elements
            elif pointwise and unvectorized(ins, outs):
                layer.eager_unvectorized_kernels += 1
                layer.eager_unvectorized_elements += elements
        if not leaf:  # a layer of one aten op: each call its own MACs (a leaf module's are summed at leave)
            layer.call_macs.append(cost.macs if status == "counted" and cost is not None else 0)
            layer.gemms.append(cost.gemm if status == "counted" and cost is not None else None)
        if status == "uncounted":
            layer.uncounted = True
        elif status == "counted" and cost is not None:
            layer.counted = True
            layer.macs += cost.macs
            layer.flops += cost.flops
            if cost.macs and layer.macs_dtype is None:
                layer.macs_dtype = cost.macs_dtype
            if cost.groups is not None:
                layer.groups = cost.groups
            if cost.window is not None:
                layer.window = cost.window

    def cost_of(self, op: str, formula: Any) -> tuple[torch_ops.OpCost | None, str]:
        """Run a formula; one that fails on an unexpected call leaves the op uncounted (and says why)."""
        try:
            return formula(), "counted"
        except Exception as exc:  # noqa: BLE001 - a formula bug must not lose the rest of the analysis
            self.formula_errors.setdefault(op, f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:200]}")
            return None, "uncounted"

    def _track_memory(self, in_keys: list[int], outputs: list[torch.Tensor], out_keys: list[int | None]) -> None:
        produced: dict[int, int] = {}
        for t, key in zip(outputs, out_keys, strict=True):
            if key is None or key in self.static_storages or key in self.seen_storages:
                continue
            self.seen_storages.add(key)
            self.keep_alive.append(t)
            produced[key] = t.untyped_storage().nbytes()
        consumed = [k for k in in_keys if k not in self.static_storages]
        self.steps.append((list(produced.items()), consumed))
        self.activation_bytes += sum(produced.values())


def decompose_uncounted(mode: TorchDispatchMode, func: Any, status: str, args: tuple, kwargs: dict) -> Any:
    """An op without a cost formula that has a CompositeImplicitAutograd kernel runs as its decomposition, under
    ``mode``, so that its parts are counted; NotImplemented when it is counted or has none (the caller runs it).
    Shared by the inference counter and the training counter (``analysis/training.py``)."""
    if status != "uncounted" or not torch._C._dispatch_has_kernel_for_dispatch_key(
        func.name(), "CompositeImplicitAutograd"
    ):
        return NotImplemented
    with mode:
        return func.decompose(*args, **kwargs)


class _CountingMode(TorchDispatchMode):
    def __init__(self, rec: _Recorder) -> None:
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = str(func._overloadpacket)
        if self.rec.in_composite:
            self.rec.absorbed[name] += 1
            return func(*args, **kwargs)
        status = torch_ops.classify(func)
        result = decompose_uncounted(self, func, status, args, kwargs)
        if result is not NotImplemented:
            self.rec.decomposed[name] += 1
            return result
        out = torch_ops.run_op(func, args, kwargs)
        cost = None
        if status == "counted":
            cost, status = self.rec.cost_of(name, lambda: torch_ops.op_cost(func, args, kwargs, out))
        self.rec.record(name, status, cost, (args, kwargs), out, func._schema.is_mutable,
                        torch.Tag.pointwise in func.tags or name in COPY_OPS)
        return out


class _CompositeMode(TorchFunctionMode):
    def __init__(self, rec: _Recorder) -> None:
        super().__init__()
        self.rec = rec

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        kind = torch_ops.composite_kind(func, args)
        if kind is None or self.rec.in_composite:
            return func(*args, **kwargs)
        self.rec.in_composite += 1
        try:
            out = func(*args, **kwargs)
        finally:
            self.rec.in_composite -= 1
        self.rec.composites[kind] += 1
        cost, status = self.rec.cost_of(kind, lambda: torch_ops.composite_cost(kind, args, kwargs))
        self.rec.record(kind, status, cost, (args, kwargs), out)
        return out


@contextlib.contextmanager
def _module_hooks(rec: _Recorder) -> Iterator[None]:
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    pre = register_module_forward_pre_hook(lambda m, a: rec.enter(m))
    post = register_module_forward_hook(lambda m, a, out: rec.leave(m, out), always_call=True)
    try:
        yield
    finally:
        pre.remove()
        post.remove()


def _param_tensors(module: torch.nn.Module) -> tuple[list[ParamTensor], list[ParamTensor], int]:
    """Distinct parameters (tied ones once), buffers, and how many parameter elements have several names."""
    names: dict[int, list[str]] = {}
    tensors: dict[int, torch.nn.Parameter] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), []).append(name)
        tensors[id(p)] = p
    params = [ParamTensor(names[i][0], tuple(p.shape), _dtype_name(p), p.requires_grad) for i, p in tensors.items()]
    shared = sum(p.numel() for i, p in tensors.items() if len(names[i]) > 1)
    buffers = [ParamTensor(n, tuple(b.shape), _dtype_name(b)) for n, b in module.named_buffers()]
    return params, buffers, shared


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _output_specs(out: Any) -> list[TensorSpec]:
    if isinstance(out, dict):
        items = [(str(k), v) for k, v in out.items() if isinstance(v, torch.Tensor)]
    else:
        tensors = _tensors(out)
        items = [("output" if len(tensors) == 1 else f"output_{i}", t) for i, t in enumerate(tensors)]
    return [TensorSpec(n, tuple(t.shape), _dtype_name(t)) for n, t in items]


def _never_called(module: torch.nn.Module, called: set[str]) -> list[str]:
    """Top-most modules that never ran (their children are implied)."""
    ran = set(called)
    for name in called:  # a container that is iterated, not called (ModuleList), ran through its children
        parts = name.split(".")
        ran.update(".".join(parts[:i]) for i in range(1, len(parts)))
    missing: list[str] = []
    for name, _ in module.named_modules():
        if name and name not in ran and not any(name.startswith(m + ".") for m in missing):
            missing.append(name)
    return missing


def _notes(loaded: LoadedTorch, rec: _Recorder, module: torch.nn.Module, shared: int) -> list[str]:
    notes = list(loaded.notes)
    for kind, n in sorted(rec.composites.items()):
        notes.append(f"{kind}: {n} call(s) counted as one op each by its formula")
    if rec.absorbed:
        notes.append(f"{sum(rec.absorbed.values())} aten op call(s) ran inside those calls and are not counted again")
    for name, why in sorted(rec.formula_errors.items()):
        notes.append(f"{name}: its formula failed on this call ({why}); listed as uncounted")
    for name, n in sorted(rec.decomposed.items()):
        notes.append(f"{name}: {n} call(s) counted through its decomposition")
    missing = _never_called(module, rec.called) if loaded.format != "torchscript" else []
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        notes.append(f"modules never called: {shown}")
    if shared:
        notes.append(f"{shared} parameter elements are shared (tied) between modules and counted once in the total")
    return notes


def analyze_torch(loaded: LoadedTorch) -> CostReport:
    """Static cost of a loaded PyTorch model (built on meta): run once on meta inputs and count; a value the
    model asks is answered from the example inputs' values (``data_oracle``)."""
    return _analyze(loaded, loaded.meta_inputs(), device="meta", values=example_values(loaded, loaded.batch_size))


def analyze_module(module: torch.nn.Module, inputs: Sequence[torch.Tensor] | Mapping[str, torch.Tensor],
                   name: str = "module", repeat: LayerPlan | None = None) -> CostReport:
    """Count an ``nn.Module`` you already have, on the inputs you give (meta tensors cost no memory; real
    ones run for real; a value the model asks of a meta tensor is answered from made-up input values:
    ``data_oracle``). A sequence binds positionally and its inputs are named after ``forward``'s arguments;
    a mapping {argument name: tensor} binds by keyword. ``repeat``: run only the first decoder layers and
    repeat them for the others (``layer_repeat``; raises ``LayersDiffer`` when they cannot stand for them)."""
    if isinstance(inputs, Mapping):
        named = list(inputs.items())
    else:
        names = forward_names(module)
        named = [(names[i] if i < len(names) else f"input_{i}", t) for i, t in enumerate(inputs)]
    specs = [TensorSpec(n, tuple(t.shape), _dtype_name(t)) for n, t in named]
    loaded = LoadedTorch(name, name, "pytorch", module, specs, specs[0].shape[0] if specs and specs[0].shape else None,
                         keyword_inputs=isinstance(inputs, Mapping))
    tensors = tuple(t for _, t in named)
    device = tensors[0].device.type if tensors else "cpu"
    return _analyze(loaded, tensors, device=device, repeat=repeat)


def _analyze(loaded: LoadedTorch, inputs: tuple[torch.Tensor, ...], device: str,
             values: Sequence[torch.Tensor] | None = None, repeat: LayerPlan | None = None) -> CostReport:
    module = loaded.module
    names: dict[int, str] = {}
    for name, m in module.named_modules(remove_duplicate=False):
        names.setdefault(id(m), name)
    leaves = {id(m) for _, m in module.named_modules() if not any(True for _ in m.children())}
    rec = _Recorder(names, leaves, dict(loaded.module_types))
    params, buffers, shared = _param_tensors(module)
    for t in [*module.parameters(), *module.buffers(), *inputs]:
        key = _storage_key(t)
        if key is not None:
            rec.static_storages.add(key)
    problems: list[str] = []
    failure = None
    out = None
    oracle = DataOracle().seed_buffers(module, loaded.buffer_values)
    for i, (spec, t) in enumerate(zip(loaded.inputs, inputs, strict=False)):
        oracle.seed(spec.name, t, values[i] if values is not None else None)
    layers = repeat.prefix_only(rec, oracle) if repeat is not None else contextlib.nullcontext()
    with torch.no_grad(), torch.device(device), _module_hooks(rec), _CompositeMode(rec), oracle, _CountingMode(rec):
        try:
            with layers:
                out = loaded.call(module, inputs)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's model failed: report what ran, say why
            failure = _forward_failure(loaded, exc)
            problems.append(f"{loaded.source}: {failure}")
    if repeat is not None:
        repeat.expand(rec, failure)
    keep = [k for k in map(_storage_key, _tensors(out)) if k is not None]
    layers = [layer.to_cost() for layer in rec.layers.values()]
    pstats, sstats = param_and_storage_stats(params, shared, buffers)
    info = ModelInfo(loaded.name, loaded.source, loaded.format, loaded.file_size_bytes)
    report = build_report(
        info, list(loaded.inputs), _output_specs(out), layers, pstats, sstats, dict(rec.uncounted),
        dict(rec.zero_cost), rec.activation_bytes, peak_live_bytes(rec.steps, keep),
        notes=_notes(loaded, rec, module, shared), problems=problems, batch_size=loaded.batch_size,
    )
    report.assumptions = oracle.assumptions
    report.eager_ops = EagerOps(rec.launches["kernel"], rec.launches["view"], dict(sorted(rec.half_priced.items())))
    if failure is not None:  # the model could not be traced: what ran before the failure is not its cost
        report.compute.complete = False
        report.compute.incomplete_reasons.append(failure)
    return report


def _forward_failure(loaded: LoadedTorch, exc: BaseException) -> str:
    """'the forward pass failed on meta inputs (x=1x3:float32): Error: message' (the source is not named)."""
    message = " ".join(str(exc).split()) or exc.__class__.__name__
    shapes = ", ".join(f"{s.name}={'x'.join(map(str, s.shape))}:{s.dtype}" for s in loaded.inputs)
    hint = ""
    if isinstance(exc, UnansweredQuestion) or "meta" in message.lower() and "item" in message.lower():
        hint = " (the model reads tensor values, which meta tensors do not have)"
    elif "indices" in message and ("Long" in message or "Int" in message):
        hint = " (an input holds token ids? give its dtype: --input-shape NAME=DIMS:int64)"
    if env_flag("MODELCOST_DEBUG"):
        raise exc
    return f"the forward pass failed on meta inputs ({shapes}){hint}: {exc.__class__.__name__}: {message[:300]}"
