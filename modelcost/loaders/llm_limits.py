"""What ``modelcost llm`` accepts from a ``transformers`` config: which cost-shaping keys ``transformers``
filled in with its defaults (a config of ``{"model_type": "llama"}`` alone is the whole Llama-7B shape).
Keys are named as the config spells them (GPT-2's ``n_layer``, not ``num_hidden_layers``).
"""

from __future__ import annotations

from typing import Any

# the keys whose defaults change what a model costs (listed when the config left them to transformers)
COST_KEYS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
             "num_key_value_heads", "max_position_embeddings", "tie_word_embeddings", "num_local_experts",
             "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")


def _spelled(config: Any, key: str) -> str:
    """The attribute ``config`` stores ``key`` under (``hidden_size`` is GPT-2's ``n_embd``)."""
    return getattr(config, "attribute_map", {}).get(key, key)


def _get(config: Any, name: str) -> Any:
    """``config.name``, or None where it has none or will not give one global value (per-layer configs raise)."""
    try:
        return getattr(config, name, None)
    except Exception:  # noqa: BLE001 - e.g. transformers' AmbiguousGlobalPerLayerAttributeError
        return None


def _written(data: dict[str, Any], config: Any) -> set[str]:
    """The keys the config file set, in both spellings."""
    return set(data) | {_spelled(config, k) for k in data}


def config_defaults(data: dict[str, Any], config: Any) -> dict[str, Any]:
    """The cost-shaping keys ``data`` did not set, with the value transformers filled in (by the config's spelling)."""
    written = _written(data, config)
    filled: dict[str, Any] = {}
    for key in COST_KEYS:
        name = _spelled(config, key)
        value = _get(config, name)
        if key not in written and name not in written and value is not None and name not in filled:
            filled[name] = value
    return filled
