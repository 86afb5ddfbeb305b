"""Copies a matrix-product kernel makes of an operand that BLAS cannot read in place.

cuBLAS (and the CPU's BLAS) reads a matrix through one leading dimension: rows or columns must be unit-stride
and the other stride at least the row / column length. ``mm`` / ``addmm`` on CUDA (``prepare_matrix_for_cublas``
in ``aten/src/ATen/native/cuda/Blas.cpp``; ``addmm_impl_cpu_`` on the CPU has the same test) and ``bmm`` /
``baddbmm`` (``prepare_batch_matrix_for_cublas``: the batch stride is free, a zero matrix stride is not) clone
any other operand contiguous for the call and free the clone when it returns. The clone is taken inside the
kernel, so no dispatch mode sees it; it is live while the product runs, beside its operands and its output.

The common case in training is the loss's gradient: the backward of ``sum()`` is an ``expand`` of one scalar
(every stride 0), and when the last op of the forward is a product (a language model's head) each of the two
products of its backward (input and weight gradient) copies that (tokens x vocabulary) gradient whole.
"""

from __future__ import annotations

from typing import Any

import torch

_MATRIX_ARGS = {"mm": (0, 1), "addmm": (1, 2), "bmm": (0, 1), "baddbmm": (1, 2)}


def _dense(t: torch.Tensor) -> bool:
    """``is_non_overlapping_and_dense``: the elements fill their storage span once (size-1 dims aside)."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride(), strict=True) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _blas_readable(t: torch.Tensor) -> bool:
    """Whether BLAS reads the last two dims of ``t`` in place (``prepare_[batch_]matrix_for_cublas``)."""
    rows, cols = t.shape[-2:]
    s_row, s_col = t.stride()[-2:]
    if t.dim() == 2 and _dense(t):
        return True
    if (s_row == 1 and s_col >= max(1, rows)) or (s_col == 1 and s_row >= max(1, cols)):
        return True
    return t.dim() == 3 and t.is_contiguous() and s_row != 0 and s_col != 0


def operand_copies_bytes(op_name: str, args: tuple) -> list[int]:
    """Bytes of each operand copy that the product ``op_name`` (an aten overload packet's name) makes."""
    positions = _MATRIX_ARGS.get(op_name)
    if positions is None:
        return []
    out = []
    for i in positions:
        t: Any = args[i] if i < len(args) else None
        if (isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.is_nested and t.dim() in (2, 3)
                and t.numel() and not _blas_readable(t)):
            out.append(t.numel() * t.element_size())
    return out
