"""How a PyTorch model is called on its inputs: the one owner of positional versus keyword binding.

Inputs travel in one of two forms: a sequence of tensors (bound positionally, in ``forward``'s order) or a
mapping {forward argument name: tensor} (bound by keyword, so that an optional argument left out, such as
``attention_mask``, does not shift later tensors into it). The loader decides which (an ``example_inputs()``
dict, ``torch_loader.needs_keywords``) and ``bind`` gives that form; every caller - the static count, the
training count and its simulated step, each PyTorch backend, the ONNX export, the per-layer profile, the
measured training step, the id-range probe - calls the model through ``call_bound``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Bound = tuple[Any, ...] | dict[str, Any]  # positional tensors, or {argument name: tensor}


def bind(tensors: Sequence[Any], keywords: Sequence[str] | None) -> Bound:
    """``tensors`` in the form the model takes them: by keyword {name: tensor} when ``keywords`` (the input
    names, in the order of ``tensors``) is given, else the tuple itself (positional)."""
    if keywords is None:
        return tuple(tensors)
    return dict(zip(keywords, tensors, strict=True))


def args_kwargs(inputs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(positional args, keyword args) of bound ``inputs``: a mapping binds by keyword, a sequence positionally,
    anything else (one tensor) is the one positional argument."""
    if isinstance(inputs, Mapping):
        return (), dict(inputs)
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs), {}
    return (inputs,), {}


def call_bound(fn: Callable[..., Any], inputs: Any) -> Any:
    """``fn`` (a module, or its compiled form) applied to bound ``inputs`` (``args_kwargs``)."""
    args, kwargs = args_kwargs(inputs)
    return fn(*args, **kwargs)


def tensors_of(inputs: Any) -> list[Any]:
    """The tensors of bound ``inputs``, in order."""
    args, kwargs = args_kwargs(inputs)
    return [*args, *kwargs.values()]


def map_bound(fn: Callable[[Any], Any], inputs: Any) -> Bound:
    """``fn`` applied to every tensor of ``inputs``, keeping its form (a cast, a move, ``requires_grad_``)."""
    args, kwargs = args_kwargs(inputs)
    return {k: fn(t) for k, t in kwargs.items()} if kwargs else tuple(fn(t) for t in args)
