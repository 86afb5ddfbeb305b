"""``modelcost llm`` on sliding-window and local/global attention (Mistral-7B, Gemma-2-9B, Phi-3-mini), the
attention implementation it picks, models bigger than the card, and ``--tp`` bounds (issue 25)."""

from __future__ import annotations

import pytest

from modelcost.core.errors import ModelcostError
from modelcost.loaders.llm_loader import load_causal_lm


def test_attention_implementation_choice(tmp_path) -> None:
    from transformers import Gemma2Config

    Gemma2Config(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 head_dim=8, intermediate_size=64, sliding_window=8).save_pretrained(tmp_path)
    assert load_causal_lm(str(tmp_path), "fp16", "eager").attn_implementation == "eager"
    with pytest.raises(ModelcostError, match="transformers builds no causal LM"):
        load_causal_lm(str(tmp_path), "fp16", "sdpa")  # Gemma-2 has none: transformers' own reason follows
    with pytest.raises(ModelcostError, match="--attn-implementation flash: choose one of sdpa, eager"):
        load_causal_lm(str(tmp_path), "fp16", "flash")
    with pytest.raises(ModelcostError, match="has one attention"):
        load_causal_lm("zoo:llama-tiny", "fp16", "eager")
