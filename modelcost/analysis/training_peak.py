"""The peak memory of one training step, simulated: the real step run once on the model's own tensors (meta:
no memory) with ``training_liveness.LiveBytes`` following every storage from allocation to release.

The step is the measured one (``bench/training.py``) in steady state: the optimizer states already exist (a
first, untracked step on zero gradients creates them, as the benchmark's warm-up does), the gradients are
``None`` (``zero_grad(set_to_none=True)``); then the forward and the loss (the sum of the floating outputs) under
the precision's autocast, ``loss.backward()``, and the optimizer step, with the multi-tensor (``foreach``)
kernels that ``torch.optim`` picks by default on CUDA (AdamW's keeps one parameter-sized temporary, the square
root of its second moment). So backward frees each saved activation when its node has run, gradients appear as
they are made, and AMP's bf16 / fp16 weight copies live from their first use to the backward of their last
(autocast's cache is dropped when the forward leaves autocast). Attention and dropout run as the GPU's fused
kernels (``training_attention``, ``training_dropout``); AMP follows CUDA autocast's casting rules
(``training_autocast``). With ``checkpointing`` the blocks are wrapped in non-reentrant
``torch.utils.checkpoint`` for real, so recomputation happens in the simulated backward.

Pure bf16 / fp16 with fp32 master weights: after backward each gradient is copied to fp32 for its master, the
optimizer steps the masters, and the half weights are copied back (one common recipe; others keep the fp32
gradients for the whole step). AMP fp16's grad scaler is left out: it scales the loss (one scalar) and unscales
the gradients in place, so it adds no tensor of any size.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from modelcost.analysis.data_oracle import DataOracle
from modelcost.analysis.training_attention import FusedAttention
from modelcost.analysis.training_autocast import autocast_for
from modelcost.analysis.training_dropout import FusedDropout
from modelcost.analysis.training_liveness import LiveBytes
from modelcost.core.training import TrainConfig
from modelcost.loaders.binding import call_bound, tensors_of
from modelcost.loaders.torch_loader import forward_names

PHASES = ("forward", "backward", "optimizer")


@dataclass
class StepPeak:
    """What the simulated step gave: the peak, the peak of each phase, and the live bytes after every op."""

    peak_bytes: int = 0
    forward_peak_bytes: int = 0
    backward_peak_bytes: int = 0
    optimizer_peak_bytes: int = 0
    timeline: list[int] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)  # phase -> index of its first op
    problems: list[str] = field(default_factory=list)

    def phase(self, name: str) -> tuple[list[int], list[str]]:
        """(live bytes, ops) of one phase of ``PHASES``."""
        i = PHASES.index(name)
        start = self.marks.get(name, len(self.ops))
        end = self.marks.get(PHASES[i + 1], len(self.ops)) if i + 1 < len(PHASES) else len(self.ops)
        return self.timeline[start:end], self.ops[start:end]


def make_optimizer(name: str, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    """The optimizer the benchmark uses, with the foreach kernels ``torch.optim`` picks by default on CUDA, and
    a learning rate of 0: the step runs the same kernels on the same tensors but changes no weight (real tensors
    in the tests stay as they were). AdamW keeps its default weight decay (an in-place multiply)."""
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.0, foreach=True)
    if name == "momentum":
        return torch.optim.SGD(params, lr=0.0, momentum=0.9, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=0.0, foreach=True)
    return torch.optim.AdamW(params, lr=0.0, foreach=True)


def _trainable(module: torch.nn.Module) -> list[torch.nn.Parameter]:
    seen: dict[int, torch.nn.Parameter] = {}
    for p in module.parameters():
        if p.requires_grad:
            seen.setdefault(id(p), p)
    return list(seen.values())


def _loss(out: Any) -> torch.Tensor:
    floats = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
    return sum(t.float().sum() for t in floats if t.requires_grad)  # type: ignore[return-value]


class _Masters:
    """fp32 master copies of half-precision parameters, stepped by the optimizer in their place."""

    def __init__(self, params: list[torch.nn.Parameter]) -> None:
        self.params = params
        self.masters = [p.detach().float().requires_grad_(True) for p in params]

    def load_grads(self) -> None:
        for p, m in zip(self.params, self.masters, strict=True):
            m.grad = None if p.grad is None else p.grad.float()

    def write_back(self) -> None:
        with torch.no_grad():
            for p, m in zip(self.params, self.masters, strict=True):
                p.copy_(m)
                m.grad = None


def _warm_up(opt: torch.optim.Optimizer, stepped: list[torch.Tensor]) -> None:
    """One untracked step on zero gradients: creates the optimizer states, as the benchmark's warm-up step does."""
    for p in stepped:
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)


def _states(opt: torch.optim.Optimizer) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(the optimizer's state tensors, its step counters): ``torch.optim`` keeps the counters on the CPU
    (without ``capturable`` / ``fused``), so on a GPU they take no device memory."""
    tensors = [(k, v) for state in opt.state.values() for k, v in state.items() if isinstance(v, torch.Tensor)]
    return [v for k, v in tensors if k != "step"], [v for k, v in tensors if k == "step"]


def simulate_step(module: torch.nn.Module, inputs: Sequence[torch.Tensor] | Mapping[str, torch.Tensor],
                  config: TrainConfig, optimizer: str, values: Any = None,
                  buffers: dict[str, torch.Tensor] | None = None) -> StepPeak:
    """Run one steady-state step of ``module`` on ``inputs`` (a sequence binds positionally, a mapping by
    keyword: ``loaders.binding``) under ``LiveBytes``; the module's gradients are ``None`` again afterwards.
    ``optimizer`` is a checked name (``training_memory.check_optimizer``). A value the model asks of a meta
    tensor is answered from ``values`` (real inputs bound alike; None: made up) and its small buffers' from
    ``buffers`` (``LoadedTorch.buffer_values``): ``data_oracle``."""
    params = _trainable(module)
    tensors = tensors_of(inputs)
    device = (params[0] if params else tensors[0]).device.type
    masters = _Masters(params) if config.master_weights and config.precision in ("bf16", "fp16") else None
    opt = make_optimizer(optimizer, masters.masters if masters else params) if params else None
    if opt is not None:
        _warm_up(opt, masters.masters if masters else params)
    for t in tensors:
        t.grad = None
    live = LiveBytes(device)
    states, counters = _states(opt) if opt is not None else ([], [])
    live.ignore(counters)
    live.track(list(module.parameters()), list(module.buffers()), tensors, states,
               masters.masters if masters else [])
    result = StepPeak()
    module.train()
    oracle = DataOracle().seed_buffers(module, buffers or {}).seed_bound(inputs, values, forward_names(module))
    with _checkpointed(module, config), oracle, live:
        try:
            live.mark("forward")
            with gpu_modes(config):
                loss = _loss(call_bound(module, inputs))
            live.mark("backward")
            loss.backward()
            live.mark("optimizer")
            if masters is not None:
                masters.load_grads()
            if opt is not None:
                opt.step()
            if masters is not None:
                masters.write_back()
            del loss
        except Exception as exc:  # noqa: BLE001 - the user's model failed: say so, keep what ran
            result.problems.append(f"the simulated training step failed: {exc.__class__.__name__}: "
                                   f"{' '.join(str(exc).split())[:300]}")
    module.zero_grad(set_to_none=True)
    result.peak_bytes = live.peak_bytes
    result.forward_peak_bytes = live.phase_peak("forward", "backward")
    result.backward_peak_bytes = live.phase_peak("backward", "optimizer")
    result.optimizer_peak_bytes = live.phase_peak("optimizer")
    result.timeline, result.ops, result.marks = live.timeline, live.ops, dict(live.marks)
    return result


@contextlib.contextmanager
def gpu_modes(config: TrainConfig) -> Iterator[None]:
    """The function modes that make the forward run as on a GPU: fused attention and dropout kernels, and AMP's
    casting rules for the AMP precisions. (Backward runs in autograd's engine, which these modes do not see.)"""
    with FusedAttention(config.kernels), FusedDropout(), autocast_for(config.precision):
        yield


@contextlib.contextmanager
def _checkpointed(module: torch.nn.Module, config: TrainConfig) -> Iterator[None]:
    """With ``config.checkpointing``: every block of ``training_checkpoint.checkpoint_blocks`` runs under
    non-reentrant ``torch.utils.checkpoint``; its recomputation (in backward) enters ``gpu_modes`` again."""
    if not config.checkpointing:
        yield
        return
    from modelcost.analysis.training_checkpoint import checkpoint_blocks, checkpointed_forward

    blocks = checkpoint_blocks(module)
    for block in blocks:
        block.forward = checkpointed_forward(block.forward, lambda: gpu_modes(config))
    try:
        yield
    finally:
        for block in blocks:
            del block.forward
