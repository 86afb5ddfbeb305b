"""Attention in the training count runs as a fused kernel, as it does on a GPU.

On meta tensors ``F.scaled_dot_product_attention`` takes the math path, which saves the (L x S) attention
probabilities for backward; the fused kernels a GPU (flash / memory-efficient) or a CPU
(``_scaled_dot_product_flash_attention_for_cpu``) runs save only q, k, v, the output and the row
log-sum-exp. This mode routes the call to the fused kernel the step's device runs (``kernels``), whose meta
kernel and backward save what that kernel saves, so the activation bytes are the ones a real step keeps:

- ``"cpu"``: ``_scaled_dot_product_flash_attention_for_cpu``;
- ``"cuda"``: CUDA's flash kernel for fp16 / bf16 without a mask and a head size that is a multiple of 8 up to
  256, else the memory-efficient kernel (fp32, masks). That is the choice torch's dispatcher makes on an H100 /
  H200 (torch 2.11: the default equals ``sdpa_kernel(FLASH_ATTENTION)`` for bf16 and
  ``sdpa_kernel(EFFICIENT_ATTENTION)`` for fp32, benchmarks/train_peak_gpu_diag.py). The memory-efficient
  kernel's output is laid out (B, L, H, D), so the ``contiguous()`` that multi-head attention applies to it
  copies, and its log-sum-exp rows are padded to 32: on an encoder step that is one (B, L, E) tensor a layer
  more than the CPU's kernel keeps. cuDNN attention is not modelled (torch picks it only when asked).

``kernels`` applies to meta tensors; real tensors run the kernels of the device they are on. The
MACs are the same either way (two products forward, four backward: ``torch_ops_backward``). Grouped-query
attention (``enable_gqa``) repeats k and v to the query heads first (the fused GPU kernels read them in place:
those copies are the only bytes over).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as nnf

from modelcost.analysis.training_nested import NestedMode

_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
_SDPA = {nnf.scaled_dot_product_attention, torch._C._nn.scaled_dot_product_attention}


KERNELS = ("cuda", "cpu")


class FusedAttention(NestedMode):
    def __init__(self, kernels: str = "cuda") -> None:
        super().__init__()
        if kernels not in KERNELS:
            raise ValueError(f"kernels must be one of {KERNELS}, not {kernels!r}")
        self.kernels = kernels

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func not in _SDPA:
            return self.passthrough(func, args, kwargs)
        a = dict(zip(_ARGS, args, strict=False)) | kwargs
        q, k, v = a["query"], a["key"], a["value"]
        if a.get("enable_gqa") and k.shape[-3] != q.shape[-3]:
            groups = q.shape[-3] // k.shape[-3]
            k, v = k.repeat_interleave(groups, dim=-3), v.repeat_interleave(groups, dim=-3)
        mask = a.get("attn_mask")
        if mask is not None and mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float("-inf"))
        dropout_p, causal, scale = float(a.get("dropout_p") or 0.0), bool(a.get("is_causal")), a.get("scale")
        kernels = q.device.type if q.device.type in KERNELS else self.kernels  # real tensors run their own
        if kernels == "cpu":
            return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                q, k, v, dropout_p, causal, attn_mask=mask, scale=scale)[0]
        if _flash_fits(q, mask):
            return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, causal, scale=scale)[0]
        return torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, mask, True, dropout_p, causal, scale=scale)[0]


def _flash_fits(q: torch.Tensor, mask: torch.Tensor | None) -> bool:
    """CUDA's flash kernel takes half precision, no mask, a head size that is a multiple of 8 up to 256."""
    head = q.shape[-1]
    return q.dtype in (torch.float16, torch.bfloat16) and mask is None and head % 8 == 0 and head <= 256
