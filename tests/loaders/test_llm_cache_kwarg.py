"""The KV cache goes to a causal LM's forward under the name that forward takes: ``cache`` in the transformers
releases that renamed it (they warn at every call under the old name), ``past_key_values`` elsewhere. That a real
transformers model counts without the warning is checked where they are counted (tests/analysis/
test_llm_layer_repeat.py)."""

from __future__ import annotations

from modelcost.loaders.llm_loader import CausalLM, _cache_kwarg


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
