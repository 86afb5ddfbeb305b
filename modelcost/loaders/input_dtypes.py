"""The dtype of a PyTorch model's input: given with ``--input-shape NAME=DIMS:DTYPE``, else guessed from what the
model tells (token ids are int64), else float32."""

from __future__ import annotations

from typing import Any

from modelcost.core.lazy import require
from modelcost.core.types import TensorSpec
from modelcost.loaders.base import LoadOptions


def with_dtypes(specs: list[TensorSpec], options: LoadOptions) -> list[TensorSpec]:
    """Apply the dtypes given with --input-shape NAME=DIMS:DTYPE."""
    return [TensorSpec(s.name, s.shape, options.input_dtypes.get(s.name, s.dtype)) for s in specs]


# Inputs that carry integer token ids (or masks / positions over them) in transformers and most text models.
TOKEN_INPUTS = {"input_ids", "token_type_ids", "position_ids", "attention_mask", "decoder_input_ids",
                "decoder_attention_mask", "decoder_position_ids", "token_ids", "tokens", "ids", "labels"}


def guess_dtype(module: Any, name: str) -> tuple[str, str | None]:
    """The dtype of an input the user gave only a shape for, and why when it is not float32: int64 for token ids,
    told by its name (``TOKEN_INPUTS``) or by the model (a transformers model whose ``main_input_name`` is this
    input and whose input embeddings are an ``nn.Embedding``); float32 otherwise."""
    if name in TOKEN_INPUTS:
        return "int64", f"its name {name!r} says token ids"
    if getattr(module, "main_input_name", None) == name:
        torch = require("torch")
        try:
            embeddings = module.get_input_embeddings()
        except Exception:  # noqa: BLE001 - a model without input embeddings takes features, not ids
            embeddings = None
        if isinstance(embeddings, torch.nn.Embedding):
            return "int64", "the model feeds it to its input embeddings"
    return "float32", None


def token_high(module: Any, name: str) -> int | None:
    """Token ids are drawn below the vocabulary size of the model's input embeddings, when it has them."""
    if name not in ("input_ids", "decoder_input_ids", getattr(module, "main_input_name", None)):
        return None
    try:
        embeddings = module.get_input_embeddings()
        return int(embeddings.num_embeddings)
    except Exception:  # noqa: BLE001 - no embeddings to read a vocabulary size from
        return None
