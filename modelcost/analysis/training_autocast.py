"""CUDA autocast's casting rules, applied to meta tensors at the torch-function level (autocast itself does
nothing to meta tensors), so that the training counter sees the bytes AMP saves for backward.

Following ``aten/src/ATen/autocast_mode.cpp`` (CUDA): products (conv, linear, matmul, mm, bmm, addmm, baddbmm,
einsum, attention, RNN cells) run in the low dtype, their floating arguments cast to it (a parameter's cast
is cached for the forward, as autocast caches casts of leaf tensors that need a gradient until it is left); the listed
fp32 ops (softmax, log-softmax, layer / group norm, exp, log, pow, rsqrt, softplus, the losses, sum, cumsum)
run in fp32; everything else runs in the dtype it is given. The casts are real autograd ops, so the casted
copies that a product saves for backward are what autograd saves on a GPU. The calls inside
``F.multi_head_attention_forward`` are seen too (``training_nested``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as nnf
from torch.utils._pytree import tree_map

from modelcost.analysis.training_nested import NestedMode


def _funcs(*names: str, modules: tuple = (torch, nnf, torch.Tensor)) -> set[Any]:
    out = set()
    for name in names:
        for mod in modules:
            fn = getattr(mod, name, None)
            if fn is not None:
                out.add(fn)
    return out


LOW = _funcs("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
             "linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "einsum", "prelu",
             "scaled_dot_product_attention", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
             "__matmul__", "__rmatmul__", "chain_matmul")
FP32 = _funcs("softmax", "log_softmax", "layer_norm", "group_norm", "exp", "expm1", "log", "log1p", "log2", "log10",
              "pow", "rsqrt", "reciprocal", "softplus", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
              "smooth_l1_loss", "binary_cross_entropy_with_logits", "kl_div", "logsumexp", "cumsum", "cumprod",
              "sum", "prod", "cosine_similarity", "erfinv", "acos", "asin", "cosh", "sinh", "tan")


class MetaAutocast(NestedMode):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.dtype = dtype
        self.cache: dict[int, torch.Tensor] = {}

    def _cast(self, value: Any, dtype: torch.dtype) -> Any:
        if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.dtype == dtype:
            return value
        if value.dtype == torch.float64:
            return value
        leaf = value.is_leaf and value.requires_grad
        if leaf and id(value) in self.cache:
            return self.cache[id(value)]
        cast = value.to(dtype)
        if leaf:
            self.cache[id(value)] = cast
        return cast

    def __exit__(self, *exc: object) -> None:
        self.cache.clear()  # autocast drops its cast cache when the forward leaves it
        super().__exit__(*exc)

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in LOW:
            args, kwargs = tree_map(lambda v: self._cast(v, self.dtype), (args, kwargs))
        elif func in FP32 and kwargs.get("dtype") is None:  # F.softmax hands its dtype=None on: no dtype asked
            args, kwargs = tree_map(lambda v: self._cast(v, torch.float32), (args, kwargs))
        return self.passthrough(func, args, kwargs)


@contextlib.contextmanager
def autocast_for(precision: str) -> Iterator[None]:
    """``MetaAutocast`` for the AMP precisions (amp_bf16, amp_fp16); nothing for the others."""
    if precision not in ("amp_fp16", "amp_bf16"):
        yield
        return
    with MetaAutocast(torch.bfloat16 if precision == "amp_bf16" else torch.float16):
        yield
