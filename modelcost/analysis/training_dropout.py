"""Dropout in the training count and the peak simulation runs as CUDA runs it.

On CUDA, ``F.dropout(x, p, training=True)`` (not in place, 0 < p < 1) is one fused kernel,
``aten::native_dropout``, which keeps a 1-byte boolean mask for backward (``at::native::dropout`` calls it
when ``is_fused_kernel_acceptable``: CUDA, XPU, lazy tensors). On the CPU and on meta tensors the same call
takes the composite path: a noise tensor of the input's dtype (4 bytes an element in fp32) times the input,
and that noise is what autograd keeps. This mode routes the call to ``native_dropout`` on every device, so the
saved bytes and the peak are a GPU's. In-place dropout takes the composite path on CUDA too and is left alone.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as nnf

from modelcost.analysis.training_nested import NestedMode

_DROPOUT = {nnf.dropout, torch.dropout, torch._C._VariableFunctions.dropout}
_ARGS = ("input", "p", "training", "inplace")


class FusedDropout(NestedMode):
    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func not in _DROPOUT:
            return self.passthrough(func, args, kwargs)
        names = _ARGS if func is nnf.dropout else ("input", "p", "train")
        a = dict(zip(names, args, strict=False)) | kwargs
        x, p = a["input"], float(a.get("p", 0.5))
        training = a.get("training", a.get("train", True))
        if not training or a.get("inplace") or not 0.0 < p < 1.0 or x.numel() == 0:
            return func(*args, **kwargs)
        return torch.native_dropout(x, p, True)[0]
