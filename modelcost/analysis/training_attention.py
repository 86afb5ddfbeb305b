"""Attention in the training count runs as a fused kernel, as it does on a GPU.

On meta tensors ``F.scaled_dot_product_attention`` takes the math path, which saves the (L x S) attention
probabilities for backward; the fused kernels a GPU (flash / memory-efficient) or a CPU
(``_scaled_dot_product_flash_attention_for_cpu``) runs save only q, k, v, the output and the row
log-sum-exp. This mode routes the call to ``_scaled_dot_product_flash_attention_for_cpu``, whose meta kernel
and backward save what the fused kernels save, so the activation bytes are the ones a real step keeps. The
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


class FusedAttention(NestedMode):
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
        out, _ = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, float(a.get("dropout_p") or 0.0), bool(a.get("is_causal")), attn_mask=mask, scale=a.get("scale"))
        return out
