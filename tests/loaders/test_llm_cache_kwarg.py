"""The KV cache goes to a causal LM's forward under the name that forward takes: ``cache`` in the transformers
releases that renamed it (they warn at every call under the old name), ``past_key_values`` elsewhere."""

from __future__ import annotations

import json
import warnings

from modelcost.analysis.llm import analyze_llm
from modelcost.loaders.llm_loader import CausalLM, _cache_kwarg, load_causal_lm


class _NewName:
    def forward(self, input_ids, cache=None, use_cache=False, **kwargs): ...


class _OldName:
    def forward(self, input_ids, past_key_values=None, use_cache=False): ...


class _OnlyKwargs:
    def forward(self, input_ids, **kwargs): ...


def test_the_name_the_forward_declares() -> None:
    assert _cache_kwarg(_NewName()) == "cache"
    assert _cache_kwarg(_OldName()) == "past_key_values"
    assert _cache_kwarg(_OnlyKwargs()) == "past_key_values"  # nothing declared: the long-standing name


def test_forward_passes_the_cache_by_that_name() -> None:
    seen = {}

    class Module:
        def __call__(self, **kwargs):
            seen.update(kwargs)
            return [None]

    lm = CausalLM("m", "m", "transformers", None, 10, False, lambda d, t: None, cache_kwarg="cache")
    lm.forward(Module(), "ids", "the-cache", False)
    assert seen["cache"] == "the-cache" and "past_key_values" not in seen


def test_a_transformers_config_counts_without_a_deprecation_warning(tmp_path) -> None:
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "vocab_size": 256, "max_position_embeddings": 512}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    lm = load_causal_lm(str(path), "bf16")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        analyze_llm(lm, [16], [4], [1])
    assert not [w for w in caught if "past_key_values" in str(w.message)], [str(w.message) for w in caught]
