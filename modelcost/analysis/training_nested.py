"""Torch-function modes that also see the calls inside ``F.multi_head_attention_forward``.

A ``TorchFunctionMode`` is off the mode stack while its ``__torch_function__`` runs. When each mode passes a
Python-level torch function through (``func(*args)``), the next one down handles it the same way, and the body
of ``func`` runs with none of them on: the torch functions it calls are seen by no mode (pytorch/pytorch#131947,
open).
For ``nn.MultiheadAttention`` (and so ``nn.TransformerEncoderLayer`` / ``DecoderLayer``) that body is where the
attention happens: its ``scaled_dot_product_attention`` took the math path on meta tensors, which keeps the
(L x S) probabilities for backward, instead of the fused kernel a GPU runs; its dropout and its products ran
without the GPU's dropout kernel and AMP's casts.

``NestedMode.passthrough`` runs such a function's body with the mode pushed back: a copy of the function whose
``has_torch_function`` check (at its top, the one that led here) answers no, so the body is not dispatched to
the modes a second time, while each call inside it is. The copy shares the module's objects (a fresh dict of
its globals per call). Other functions pass through as before.
"""

from __future__ import annotations

import types
from typing import Any

import torch.nn.functional as nnf
from torch.overrides import TorchFunctionMode

COMPOSITE = {nnf.multi_head_attention_forward}


def _no_torch_function(*_args: Any) -> bool:
    return False


def _unchecked(func: types.FunctionType) -> types.FunctionType:
    """``func`` with its own ``has_torch_function`` check off (the functions it calls keep theirs)."""
    scope = dict(func.__globals__, has_torch_function=_no_torch_function)
    copy = types.FunctionType(func.__code__, scope, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    return copy


class NestedMode(TorchFunctionMode):
    def passthrough(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """Run ``func`` as it is, or, for a function of ``COMPOSITE``, its body with this mode seeing inside."""
        if func not in COMPOSITE:
            return func(*args, **kwargs)
        # pushed and popped as a bare mode: a subclass's own __exit__ (MetaAutocast drops its cast cache) is for
        # leaving the forward, not this call
        TorchFunctionMode.__enter__(self)
        try:
            return _unchecked(func)(*args, **kwargs)
        finally:
            TorchFunctionMode.__exit__(self, None, None, None)
