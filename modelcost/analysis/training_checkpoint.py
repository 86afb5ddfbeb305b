"""Activation checkpointing, modelled from the plain counted step.

The blocks checkpointed are the non-leaf children of the top-most ``nn.ModuleList`` / ``nn.Sequential``
containers with two or more children (a transformer's layers, a ResNet stage's bottlenecks), as one would wrap
them in ``torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)``. Non-reentrant checkpointing keeps a
block's inputs instead of what its ops save, and re-runs the block's forward when backward reaches it, one block
at a time. So, from the plain step (hooks around each block measure what it saves and its forward FLOPs):

    activations with checkpointing = saved outside the blocks + every block's inputs + the largest block's own
    saved bytes (alive while that block is recomputed and back-propagated)
    recompute FLOPs = the blocks' forward FLOPs (run twice; not model FLOPs, so not in the MFU)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch


def checkpoint_blocks(module: torch.nn.Module) -> list[torch.nn.Module]:
    blocks: list[torch.nn.Module] = []

    def visit(m: torch.nn.Module) -> None:
        children = list(m.children())
        if isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential)) and len(children) >= 2:
            blocks.extend(c for c in children if any(True for _ in c.children()))
            return
        for child in children:
            visit(child)

    visit(module)
    return blocks


@dataclass
class CheckpointFigures:
    blocks: int = 0
    inside_bytes: int = 0  # saved by ops inside the blocks, in the plain step
    largest_block_bytes: int = 0
    inputs_bytes: int = 0  # the blocks' inputs (kept by checkpointing)
    recompute_flops: int = 0

    def activations(self, plain_saved_bytes: int) -> int:
        return plain_saved_bytes - self.inside_bytes + self.inputs_bytes + self.largest_block_bytes


@contextlib.contextmanager
def track_blocks(module: torch.nn.Module, saved: Any, counts: Any, skip: set[int]) -> Iterator[CheckpointFigures]:
    """Hooks around every checkpointable block of ``module``; ``saved`` is the training counter's saved-bytes
    hook (``bytes``), ``counts`` its counts (``forward_flops``), ``skip`` the storages not to count as inputs."""
    from modelcost.analysis.training_liveness import storage_key as _storage_key
    from modelcost.analysis.training_liveness import tensors_in as _tensors

    figures = CheckpointFigures()
    starts: dict[int, tuple[int, int]] = {}
    seen_inputs: set[int] = set()

    def pre(block: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        starts[id(block)] = (saved.bytes, counts.forward_flops)
        for t in _tensors((args, kwargs)):
            key = _storage_key(t)
            if t.is_floating_point() and key is not None and key not in skip and key not in seen_inputs:
                seen_inputs.add(key)
                figures.inputs_bytes += t.untyped_storage().nbytes()

    def post(block: torch.nn.Module, args: tuple, kwargs: dict, out: Any) -> None:
        start_bytes, start_flops = starts.pop(id(block), (saved.bytes, counts.forward_flops))
        inside = saved.bytes - start_bytes
        figures.inside_bytes += inside
        figures.largest_block_bytes = max(figures.largest_block_bytes, inside)
        figures.recompute_flops += counts.forward_flops - start_flops

    blocks = checkpoint_blocks(module)
    figures.blocks = len(blocks)
    handles = [h for b in blocks for h in (b.register_forward_pre_hook(pre, with_kwargs=True),
                                           b.register_forward_hook(post, with_kwargs=True))]
    try:
        yield figures
    finally:
        for h in handles:
            h.remove()


def checkpointed_forward(forward: Any, modes: Any) -> Any:
    """``forward`` under non-reentrant ``torch.utils.checkpoint``: what its ops save is dropped after the
    forward and made again in backward. ``modes()`` enters the function modes the forward ran under (fused
    attention and dropout, AMP's ``MetaAutocast``): backward runs without them, so the recomputation enters them
    again, as ``torch.utils.checkpoint`` re-enters ``torch.autocast``. RNG state is not preserved (meta tensors
    have none; it changes no byte)."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils.checkpoint import checkpoint

    def run(*args: Any, **kwargs: Any) -> Any:
        if _get_current_function_mode_stack():  # the forward itself: the modes are on
            return forward(*args, **kwargs)
        with modes():
            return forward(*args, **kwargs)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return checkpoint(run, *args, use_reentrant=False, preserve_rng_state=False, **kwargs)

    return wrapped
