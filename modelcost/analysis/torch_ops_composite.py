"""Torch functions counted as one op at the function level (attention, recurrent layers and cells, RMS norm,
einsum of two or more operands): the counter's function-level mode asks ``composite_kind`` and
``composite_cost``; the aten ops they run inside are absorbed.
"""

from __future__ import annotations

from typing import Any

import torch

from modelcost.analysis import formulas as F
from modelcost.analysis.torch_ops import (
    OpCost,
    _dtype,
    aten,
)
from modelcost.analysis.torch_ops_flops import rms_norm_flops
from modelcost.analysis.torch_ops_mac import _attention

# ---------------------------------------------------------------------------------------------------
# composites: torch functions counted as one op at the function level (the aten ops they run inside are
# absorbed): attention, recurrent layers and cells, RMS norm, einsum of two or more operands.

_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
_RNN_KINDS = {"lstm": "lstm", "gru": "gru", "rnn_tanh": "rnn", "rnn_relu": "rnn"}


def composite_kind(func: Any, args: tuple = ()) -> str | None:
    """'scaled_dot_product_attention' | 'lstm' | 'gru' | 'rnn_tanh' | ... | 'rms_norm' | 'einsum' or None.

    einsum is a composite only with an equation string and two or more operands (docs/COUNTING.md: the
    product of every index size, pairwise left to right, as the ONNX counter does, so an outer or elementwise
    product counts as MACs too); a one-operand einsum (a sum or a transpose) is counted by what it runs."""
    kind = _COMPOSITE_FUNCS.get(func)
    if kind == "einsum" and len(_einsum_operands(args)) < 2:
        return None
    return kind


def _einsum_operands(args: tuple) -> list[torch.Tensor]:
    if not args or not isinstance(args[0], str):
        return []
    rest = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
    return [t for t in rest if isinstance(t, torch.Tensor)]


def _composite_funcs() -> dict[Any, str]:
    import torch.nn.functional as nnf

    table: dict[Any, str] = {nnf.scaled_dot_product_attention: "scaled_dot_product_attention",
                             nnf.rms_norm: "rms_norm", torch.rms_norm: "rms_norm"}
    for name, kind in (("scaled_dot_product_attention", "scaled_dot_product_attention"),
                       ("_scaled_dot_product_attention_math", "scaled_dot_product_attention"),
                       ("rms_norm", "rms_norm")):
        packet = getattr(aten, name)
        for overload in packet.overloads():
            table[getattr(packet, overload)] = kind
    table[torch.einsum] = "einsum"
    table[aten.einsum.default] = "einsum"
    for name in [*_RNN_KINDS, *(k + "_cell" for k in _RNN_KINDS)]:
        table[getattr(torch, name)] = name
        packet = getattr(aten, name)
        for overload in packet.overloads():
            table[getattr(packet, overload)] = name
    return table


def composite_cost(kind: str, args: tuple, kwargs: dict) -> OpCost:
    """Cost of one composite call, from its arguments (positional as in the torch function's signature)."""
    if kind == "scaled_dot_product_attention":
        a = dict(zip(_SDPA_ARGS, args, strict=False)) | kwargs
        return _attention(a["query"], a["key"], a["value"], a.get("attn_mask") is not None)
    if kind == "einsum":
        operands = _einsum_operands(args)
        shapes = [tuple(t.shape) for t in operands]
        macs = F.einsum_macs(args[0], shapes)
        return OpCost(macs, 2 * macs, _dtype(operands[0]), gemm=F.einsum_gemm(args[0], shapes))
    if kind == "rms_norm":
        x = args[0]
        weight = args[2] if len(args) > 2 else kwargs.get("weight")
        return OpCost(0, rms_norm_flops(x.numel(), weight is not None))
    if kind.endswith("_cell"):
        return _cell_cost(_RNN_KINDS[kind.removesuffix("_cell")], args, kwargs)
    return _rnn_layer_cost(_RNN_KINDS[kind], args)


def _cell_cost(kind: str, args: tuple, kwargs: dict) -> OpCost:
    """``torch.lstm_cell(input, hx, w_ih, w_hh, b_ih, b_hh)`` and the GRU / RNN cells: one step."""
    x, w_ih, w_hh = args[0], args[2], args[3]
    batch = x.shape[0] if x.dim() == 2 else 1
    hidden = w_hh.shape[1]
    macs = F.rnn_macs(kind, 1, batch, w_ih.shape[1], hidden)
    return OpCost(macs, 2 * macs + F.rnn_extra_flops(kind, 1, batch, hidden), _dtype(x))


def _rnn_layer_cost(kind: str, args: tuple) -> OpCost:
    """``torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)``,
    or the packed form ``(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidir)``;
    GRU / RNN take one hx tensor in place of LSTM's (h, c) list."""
    packed = isinstance(args[1], torch.Tensor) if kind == "lstm" else isinstance(args[2], torch.Tensor)
    x = args[0]
    rest = args[2:] if packed else args[1:]
    hx, params, has_biases, num_layers = rest[0], list(rest[1]), bool(rest[2]), int(rest[3])
    bidirectional = bool(rest[6])
    batch_first = False if packed else bool(rest[7])
    dirs = 2 if bidirectional else 1
    gates = F.RNN_GATES[kind]
    hidden = params[0].shape[0] // gates
    proj = hx[0].shape[-1] if kind == "lstm" and hx[0].shape[-1] != hx[1].shape[-1] else 0
    if packed:
        steps, batch = x.shape[0], 1
    else:
        steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    macs = F.rnn_macs(kind, steps, batch, params[0].shape[1], hidden, num_layers, dirs, proj)
    del has_biases  # the elementwise convention (formulas.RNN_ELEMENTWISE_FLOPS) includes the bias adds
    return OpCost(macs, 2 * macs + F.rnn_extra_flops(kind, steps, batch, hidden, num_layers, dirs), _dtype(x))


_COMPOSITE_FUNCS = _composite_funcs()
