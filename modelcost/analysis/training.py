"""What one training step costs, counted on the meta device: forward, backward (input- and weight-gradient
MACs apart), optimizer step, and the memory by part.

The model (on ``meta``: no weight memory) runs forward in train mode and then ``loss.backward()`` under one
TorchDispatchMode that puts every aten op, forward and backward, in one of the registry's three states
(``torch_ops.classify``; the backward formulas live in ``torch_ops_backward``). Nothing is multiplied by 3:
the backward is what autograd really runs, so an input that needs no gradient gives the first layer no
input-gradient product, and a frozen parameter (``requires_grad=False``) no weight-gradient product.

Which backward product is a weight gradient: ``convolution_backward`` says so itself (``output_mask``); a
matrix product (mm, bmm, addmm, ...) is a weight gradient when the autograd node running it
(``torch._C._current_autograd_node``) hands a gradient to a parameter through views and casts only, and none
of its operands is a parameter (or a view / cast of one); every other product (attention's, an input
gradient) is an input gradient.

The loss is the sum of the model's floating outputs, a stand-in for the task loss; its few FLOPs are in the
forward count. Activation bytes: every tensor autograd saves for backward (``saved_tensors_hooks``), each
storage counted once, parameters and inputs left out (they are counted as weights and inputs); attention and
dropout run as a GPU's fused kernels (``training_attention``, ``training_dropout``). The predicted peak comes
from the step simulated once more with every storage's lifetime followed (``training_peak``), at the batch and at
twice it (``training_memory.envelope``: the peak at other batches).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from modelcost.analysis import torch_ops, torch_ops_backward
from modelcost.analysis.data_oracle import DataOracle, example_values
from modelcost.analysis.torch_counter import decompose_uncounted
from modelcost.analysis import training_memory as tm
from modelcost.analysis.training_attention import FusedAttention
from modelcost.analysis.training_autocast import autocast_for
from modelcost.analysis.training_checkpoint import CheckpointFigures, track_blocks
from modelcost.analysis.training_liveness import storage_key as _storage_key
from modelcost.analysis.training_liveness import tensors_in as _tensors
from modelcost.analysis.training_dropout import FusedDropout
from modelcost.analysis.training_peak import PHASES, StepPeak, simulate_step
from modelcost.core.assumptions import DataAssumption
from modelcost.core.errors import ModelcostError
from modelcost.core.training import TrainConfig, TrainingMemory, TrainingReport
from modelcost.loaders.binding import Bound, call_bound, map_bound, tensors_of
from modelcost.loaders.torch_loader import forward_names

Inputs = Sequence[torch.Tensor] | Mapping[str, torch.Tensor]  # positional, or by keyword (loaders.binding)

# autograd nodes that pass a gradient on unchanged in value (views, casts, copies)
_PASS_THROUGH = {
    "TBackward0", "ViewBackward0", "UnsafeViewBackward0", "ToCopyBackward0", "PermuteBackward0",
    "TransposeBackward0", "TransposeBackward1", "ExpandBackward0", "ReshapeAliasBackward0", "AsStridedBackward0",
    "CloneBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0",
    "AliasBackward0", "SliceBackward0", "SelectBackward0", "SplitBackward0", "UnbindBackward0",
}
_PRODUCTS = {"mm", "bmm", "addmm", "baddbmm", "matmul", "linear", "addbmm", "addmv", "mv", "dot", "_addmm_activation"}


@dataclass
class _Counts:
    forward_macs: int = 0
    forward_flops: int = 0
    backward_flops: int = 0
    input_grad_macs: int = 0
    weight_grad_macs: int = 0
    uncounted: Counter = field(default_factory=Counter)
    formula_errors: dict[str, str] = field(default_factory=dict)
    decomposed: Counter = field(default_factory=Counter)


class _StepCounter(TorchDispatchMode):
    """Counts every aten op of a forward + backward; knows which storages hold (views / casts of) parameters."""

    def __init__(self, param_storages: set[int]) -> None:
        super().__init__()
        self.counts = _Counts()
        self.param_derived = set(param_storages)
        self.keep_alive: list[torch.Tensor] = []
        self._reaches: dict[int, bool] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = str(func._overloadpacket)
        status = torch_ops.classify(func)
        result = decompose_uncounted(self, func, status, args, kwargs)
        if result is not NotImplemented:
            self.counts.decomposed[name] += 1
            return result
        out = torch_ops.run_op(func, args, kwargs)
        node = torch._C._current_autograd_node()
        if status == "zero_cost":
            self._propagate_param(args, kwargs, out)
        elif status == "uncounted":
            self.counts.uncounted[name] += 1
        else:
            self._count(func, name, args, kwargs, out, node)
        return out

    def _propagate_param(self, args: tuple, kwargs: dict, out: Any) -> None:
        if any(_storage_key(t) in self.param_derived for t in _tensors((args, kwargs))):
            for t in _tensors(out):
                key = _storage_key(t)
                if key is not None:
                    self.param_derived.add(key)
                    self.keep_alive.append(t)

    def _count(self, func: Any, name: str, args: tuple, kwargs: dict, out: Any, node: Any) -> None:
        c = self.counts
        try:
            cost = torch_ops.op_cost(func, args, kwargs, out)
            split = None
            if node is not None and func._overloadpacket.__name__ == "convolution_backward":
                split = torch_ops_backward.conv_backward_split(torch_ops.bind(func, args, kwargs))
        except Exception as exc:  # noqa: BLE001 - a formula bug must not lose the rest of the analysis
            c.uncounted[name] += 1
            c.formula_errors.setdefault(name, f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:200]}")
            return
        if node is None:
            c.forward_macs += cost.macs
            c.forward_flops += cost.flops
            return
        c.backward_flops += cost.flops
        if split is not None:
            c.input_grad_macs += split[0]
            c.weight_grad_macs += split[1]
        elif cost.macs and self._is_weight_grad(func, args, kwargs, node):
            c.weight_grad_macs += cost.macs
        else:
            c.input_grad_macs += cost.macs

    def _is_weight_grad(self, func: Any, args: tuple, kwargs: dict, node: Any) -> bool:
        if func._overloadpacket.__name__ not in _PRODUCTS:
            return False
        if any(_storage_key(t) in self.param_derived for t in _tensors((args, kwargs))):
            return False
        return any(self._reaches_param(f) for f, _ in node.next_functions if f is not None)

    def _reaches_param(self, fn: Any, depth: int = 0) -> bool:
        key = id(fn)
        if key not in self._reaches:
            kind = type(fn).__name__
            if kind == "AccumulateGrad":
                result = True
            elif kind in _PASS_THROUGH and depth < 8:
                result = any(self._reaches_param(f, depth + 1) for f, _ in fn.next_functions if f is not None)
            else:
                result = False
            self._reaches[key] = result
        return self._reaches[key]


class _SavedBytes:
    """Pack hook of ``saved_tensors_hooks``: the bytes of every storage autograd saves, each once."""

    def __init__(self, skip: set[int]) -> None:
        self.skip = skip
        self.seen: set[int] = set()
        self.bytes = 0
        self.keep_alive: list[torch.Tensor] = []

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        key = _storage_key(t)
        if key is not None and key not in self.skip and key not in self.seen:
            self.seen.add(key)
            self.bytes += t.untyped_storage().nbytes()
            self.keep_alive.append(t)
        return t


@dataclass
class StepRun:
    """What one counted step at one batch size gave."""

    counts: _Counts
    activations_bytes: int
    inputs_bytes: int
    outputs_bytes: int
    problems: list[str]
    checkpoint: CheckpointFigures | None = None
    assumptions: list[DataAssumption] = field(default_factory=list)  # values the model asked (data_oracle)

    @property
    def kept_bytes(self) -> int:
        """Activations kept for backward: what autograd saves, or with checkpointing the model of it."""
        return self.checkpoint.activations(self.activations_bytes) if self.checkpoint else self.activations_bytes


def count_step(module: torch.nn.Module, inputs: Inputs, config: TrainConfig, values: Inputs | None = None,
               buffers: dict[str, torch.Tensor] | None = None) -> StepRun:
    """Run forward + backward once on ``inputs`` (meta or real; a sequence binds positionally, a mapping
    {argument name: tensor} by keyword: ``loaders.binding``) and count ops and saved bytes. A value the model
    asks of a meta tensor is answered from ``values`` (real inputs bound alike; None: made up): ``data_oracle``."""
    params = [p for p in module.parameters()]
    tensors = tensors_of(inputs)
    fixed = {k for k in map(_storage_key, [*params, *module.buffers(), *tensors]) if k is not None}
    counter = _StepCounter({k for k in map(_storage_key, params) if k is not None})
    saved = _SavedBytes(fixed)
    problems: list[str] = []
    outputs_bytes = 0
    module.train()
    track = track_blocks(module, saved, counter.counts, fixed) if config.checkpointing else contextlib.nullcontext()
    oracle = DataOracle().seed_buffers(module, buffers or {}).seed_bound(inputs, values, forward_names(module))
    modes = (FusedAttention(config.kernels), FusedDropout(), autocast_for(config.precision))
    with modes[0], modes[1], modes[2], oracle, counter, track as checkpoint:
        try:
            with torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda t: t):
                out = call_bound(module, inputs)
                floats = [t for t in _tensors(out) if t.is_floating_point()]
                outputs_bytes = sum(t.untyped_storage().nbytes() for t in floats)
                if not any(t.requires_grad for t in floats):
                    raise ModelcostError("no floating output needs a gradient: nothing to train "
                                         "(every parameter frozen, or the output is detached)")
                loss = sum(t.float().sum() for t in floats if t.requires_grad)
            loss.backward()
        except ModelcostError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's model failed: say where, keep what ran
            problems.append(f"the training step failed on meta inputs: {exc.__class__.__name__}: "
                            f"{' '.join(str(exc).split())[:300]}")
    inputs_bytes = sum(t.untyped_storage().nbytes() for t in tensors)
    return StepRun(counter.counts, saved.bytes, inputs_bytes, outputs_bytes, problems, checkpoint, oracle.assumptions)


def _prepare(module: torch.nn.Module, inputs: Inputs, config: TrainConfig) -> tuple[torch.nn.Module, Bound]:
    if tm.is_pure_half(config.precision):
        import copy

        dtype = torch.bfloat16 if config.precision == "bf16" else torch.float16
        module = copy.deepcopy(module).to(dtype)  # the caller's module keeps its dtype (a copy on meta is free)
        inputs = map_bound(lambda t: t.to(dtype) if t.is_floating_point() else t, inputs)
    grad = config.input_requires_grad
    return module, map_bound(lambda t: t.detach().requires_grad_(grad and t.is_floating_point()), inputs)


def _param_parts(module: torch.nn.Module) -> tuple[int, int, int, int, int]:
    """(weight bytes, trainable elements, trainable bytes, frozen elements, all elements); tied counted once."""
    seen: dict[int, torch.nn.Parameter] = {id(p): p for p in module.parameters()}
    weight_bytes = sum(p.numel() * p.element_size() for p in seen.values())
    trainable = [p for p in seen.values() if p.requires_grad]
    t_elems = sum(p.numel() for p in trainable)
    t_bytes = sum(p.numel() * p.element_size() for p in trainable)
    total = sum(p.numel() for p in seen.values())
    return weight_bytes, t_elems, t_bytes, total - t_elems, total


def train_module(module: torch.nn.Module, make_inputs: Any, batch_size: int, config: TrainConfig,
                 name: str = "module", tokens_per_sample: int | None = None, make_values: Any = None,
                 buffers: dict[str, torch.Tensor] | None = None) -> TrainingReport:
    """Count one step at ``batch_size`` and at twice it (for the per-sample memory slope), and simulate the
    step's memory at both (``training_peak``: the predicted peak).

    ``make_inputs(batch)`` returns the inputs at that batch (meta tensors cost no memory): a sequence binds
    positionally, a mapping {argument name: tensor} by keyword (as ``torch_counter.analyze_module``).
    ``make_values(batch)``, when given, returns real inputs bound alike: the values ``data_oracle`` answers the
    model's questions from (without it they are made up); ``buffers``, the values of its small buffers by name
    (``LoadedTorch.buffer_values``: exact)."""
    optimizer = tm.check_optimizer(config.optimizer)
    values = make_values or (lambda batch: None)
    module, first = _prepare(module, make_inputs(batch_size), config)
    values1 = values(batch_size)
    run = count_step(module, first, config, values1, buffers)
    _, second = _prepare(module, make_inputs(2 * batch_size), config)
    values2 = values(2 * batch_size)
    module.zero_grad(set_to_none=True)
    run2 = count_step(module, second, config, values2, buffers) if not run.problems else run
    module.zero_grad(set_to_none=True)
    sims = None
    if not run.problems:
        sim = simulate_step(module, first, config, optimizer, values1, buffers)
        sims = (sim, simulate_step(module, second, config, optimizer, values2, buffers) if not sim.problems else sim)
    module.eval()
    return _report(module, run, run2, sims, batch_size, config, name, tokens_per_sample)


def _report(module: torch.nn.Module, run: StepRun, run2: StepRun, sims: tuple[StepPeak, StepPeak] | None, batch: int,
            config: TrainConfig, name: str, tokens_per_sample: int | None) -> TrainingReport:
    c = run.counts
    weight_bytes, t_elems, t_bytes, frozen, _ = _param_parts(module)
    weights, grads, states, master = tm.persistent_bytes(weight_bytes, t_elems, t_bytes, config)
    mem = TrainingMemory(weights, grads, states, master, run.kept_bytes, run.inputs_bytes, run.outputs_bytes,
                         peak_basis=tm.PEAK_BASIS)
    mem.peak_upper_bound_bytes = tm.upper_bound(mem)
    problems = list(run.problems)
    notes = _notes(run, config)
    failed = [p for sim in sims or () for p in sim.problems][:1]
    if sims is not None and not failed:
        notes += _simulated_peak(mem, sims, batch)
    else:
        problems += failed
        _upper_bound_peak(mem, run2, batch)
    opt = tm.optimizer_flops(t_elems, config)
    backward_macs = c.input_grad_macs + c.weight_grad_macs
    macs = c.forward_macs + backward_macs
    flops = c.forward_flops + c.backward_flops + opt
    report = TrainingReport(
        name, batch, tm.check_optimizer(config.optimizer), config.precision, forward_macs=c.forward_macs,
        forward_flops=c.forward_flops, backward_macs=backward_macs, backward_flops=c.backward_flops,
        backward_input_grad_macs=c.input_grad_macs, backward_weight_grad_macs=c.weight_grad_macs,
        optimizer_flops=opt, flops_per_step=flops, macs_per_step=macs, macs_per_sample=macs // batch,
        flops_per_sample=flops // batch, tokens_per_sample=tokens_per_sample, trainable_params=t_elems,
        frozen_params=frozen, memory=mem, checkpointing=config.checkpointing, uncounted_ops=dict(c.uncounted),
        recompute_flops=run.checkpoint.recompute_flops if run.checkpoint else 0,
    )
    report.notes += notes
    report.problems = problems
    report.assumptions = list(run.assumptions)  # the counted step's; the other batch and the simulation ask alike
    return report


def _simulated_peak(mem: TrainingMemory, sims: tuple[StepPeak, StepPeak], batch: int) -> list[str]:
    """Fill the peak from the simulated steps at ``batch`` and ``2 * batch``; notes on how."""
    one, two = sims
    mem.peak_bytes = one.peak_bytes
    mem.forward_peak_bytes, mem.backward_peak_bytes = one.forward_peak_bytes, one.backward_peak_bytes
    mem.optimizer_peak_bytes = one.optimizer_peak_bytes
    phases = {"forward": one.forward_peak_bytes, "backward": one.backward_peak_bytes,
              "optimizer": one.optimizer_peak_bytes}
    mem.peak_phase = max(phases, key=lambda k: phases[k])
    lines: list[tm.Line] = []
    exact = []
    for phase in PHASES:
        (live1, ops1), (live2, ops2) = one.phase(phase), two.phase(phase)
        pairs = tm.pair_ops(ops1, ops2)
        if pairs is not None:
            lines += tm.lines_from_timelines([live1[i] for i, _ in pairs], [live2[j] for _, j in pairs], batch)
            exact.append(phase)
        elif live1 and live2:
            lines += tm.lines_from_timelines([max(live1)], [max(live2)], batch)
    mem.peak_lines = tm.envelope(lines)
    how = (f"other batch sizes: the simulated step at batch {batch} and {2 * batch} gives each moment's live bytes "
           f"as a line in the batch ({', '.join(exact) or 'no phase'}: the same ops at both batches, up to a few); "
           f"the peak at batch B is the largest of them ({len(mem.peak_lines)} on the upper envelope)")
    if len(exact) < len(PHASES):
        how += (f"; {', '.join(p for p in PHASES if p not in exact)}: other ops at the two batches, so the line "
                "through that phase's two peaks")
    mem.fixed_bytes, mem.activations_per_sample_bytes = tm.peak_line_at(mem.peak_lines, batch)
    where = (f"predicted peak {mem.peak_bytes:,} bytes, in the {mem.peak_phase} phase of the simulated step "
             f"(upper bound: every saved activation and gradient at once, {mem.peak_upper_bound_bytes:,})")
    return [where, how]


def _upper_bound_peak(mem: TrainingMemory, run2: StepRun, batch: int) -> None:
    """When the simulation failed: the upper bound, and its slope from the count at twice the batch."""
    mem.peak_bytes = mem.peak_upper_bound_bytes
    mem.peak_basis = "upper bound (the simulated step failed): " + tm.UPPER_BOUND_BASIS
    mem2 = TrainingMemory(mem.weights_bytes, mem.gradients_bytes, mem.optimizer_state_bytes,
                          mem.master_weights_bytes, run2.kept_bytes, run2.inputs_bytes, run2.outputs_bytes)
    step1, step2 = tm.step_bytes(mem), tm.step_bytes(mem2)
    mem.peak_lines = [(2 * step1 - step2, (step2 - step1) / batch), (tm.optimizer_step_bytes(mem), 0.0)]
    mem.fixed_bytes, mem.activations_per_sample_bytes = tm.peak_line_at(mem.peak_lines, batch)


def _notes(run: StepRun, config: TrainConfig) -> list[str]:
    notes = []
    notes.append("loss = sum of the model's floating outputs (a stand-in for the task loss)")
    if config.precision in ("amp_fp16", "amp_bf16"):
        notes.append("AMP counted on meta tensors with CUDA autocast's casting rules applied at the function level "
                     "(analysis/training_autocast.py)")
    if run.checkpoint is not None:
        ck = run.checkpoint
        notes.append(f"activation checkpointing of {ck.blocks} block(s) (analysis/training_checkpoint.py): "
                     f"activations {run.activations_bytes:,} -> {ck.activations(run.activations_bytes):,} bytes; "
                     f"the recomputation adds {ck.recompute_flops:,} FLOPs per step (not in flops_per_step)")
        if not ck.blocks:
            notes.append("no ModuleList / Sequential of blocks found: nothing to checkpoint")
    if config.precision == "tf32":
        notes.append("tf32: fp32 storage, so the same bytes as fp32; the MFU uses the TF32 tensor peak")
    for op, why in sorted(run.counts.formula_errors.items()):
        notes.append(f"{op}: its formula failed on this call ({why}); listed as uncounted")
    for op, n in sorted(run.counts.decomposed.items()):
        notes.append(f"{op}: {n} call(s) counted through its decomposition")
    return notes


def fit_max_batch(report: TrainingReport, memory_bytes: int, target: str, margin: float) -> None:
    """Fill ``max_batch_size`` for ``memory_bytes`` (the card's memory) keeping ``margin`` of it free."""
    report.max_batch_size = tm.max_batch(report.memory, memory_bytes, margin)
    report.max_batch_memory_bytes = memory_bytes
    report.max_batch_target = target
    report.notes.append(f"largest batch: predicted peak within {100 * (1 - margin):.0f}% of "
                        f"{memory_bytes / 2**30:.1f} GiB ({target}); {100 * margin:.0f}% kept free for the CUDA "
                        "context, library workspaces and allocator fragmentation")


def tokens_per_sample(specs: Sequence[Any]) -> int | None:
    """The sequence length when the first input is a (batch, seq) integer tensor (token ids), else None."""
    if specs and len(specs[0].shape) == 2 and "int" in specs[0].dtype and isinstance(specs[0].shape[1], int):
        return int(specs[0].shape[1])
    return None


def analyze_training(loaded: Any, batch_size: int, config: TrainConfig) -> TrainingReport:
    """The static training analysis of a loaded PyTorch model (``loaders.torch_loader.LoadedTorch``, on meta)."""

    def meta_inputs(batch: int) -> Bound:
        return loaded.bind([torch.empty(s.shape, dtype=getattr(torch, s.dtype), device="meta")
                            for s in loaded.input_specs(batch)])

    def values(batch: int) -> Bound | None:
        real = example_values(loaded, batch)
        return loaded.bind(list(real)) if real is not None else None

    tm.check_optimizer(config.optimizer)
    report = train_module(loaded.module, meta_inputs, batch_size, config, name=loaded.name,
                          tokens_per_sample=tokens_per_sample(loaded.input_specs(batch_size)), make_values=values,
                          buffers=loaded.buffer_values)
    report.notes = list(loaded.notes) + report.notes
    return report
