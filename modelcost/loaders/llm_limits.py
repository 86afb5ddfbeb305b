"""What ``modelcost llm`` accepts: the ceilings on a config's sizes and on the lengths asked for, the model's own
position limit, and which cost-shaping config keys ``transformers`` filled in with its defaults.

The ceilings sit far above any released model; they exist because a config is built module by module before
anything is counted (10^12 layers never finish building) and because a meta tensor past int64 elements ends
in an overflow rather than a figure. Each refusal names the key as the config spells it (GPT-2's ``n_layer``,
not ``num_hidden_layers``) or the option the user wrote.
"""

from __future__ import annotations

import math

from collections.abc import Sequence
from typing import Any

from modelcost.core.errors import ModelcostError

MAX_TOKENS = 2**24  # --prompt-len and --gen-len: 16,777,216 (the longest released contexts hold about 10 M)
MAX_BATCH = 2**20  # --batch-size: 1,048,576 sequences

_LAYERS = (1024, "the deepest released models have about 130 layers, and each one is built before counting")
_HEADS = (1024, "released models have a few hundred at most (Falcon-180B: 232)")
_WIDTH = (2**18, "the widest released models have a hidden size of about 20,000")
_MLP = (2**20, "the widest released MLPs have about 74,000 channels")
_EXPERTS = (2**17, "the most in a released model is Doge's 16,384 small experts per layer")

# config key (transformers' standard name or the family's own) -> (ceiling, why); all must be whole numbers >= 1
CEILINGS: dict[str, tuple[int, str]] = {
    "num_hidden_layers": _LAYERS,
    "num_attention_heads": _HEADS,
    "num_key_value_heads": _HEADS,
    "hidden_size": _WIDTH,
    "intermediate_size": _MLP,
    "n_inner": _MLP,  # GPT-2's MLP width
    "moe_intermediate_size": _MLP,
    "vocab_size": (2**23, "the largest released vocabularies have about 262,000 tokens"),
    "num_local_experts": _EXPERTS,
    "num_experts": _EXPERTS,
    "n_routed_experts": _EXPERTS,
    "num_experts_per_tok": _EXPERTS,
}
# keys that must be numbers when set (transformers' own defaults include sliding_window 0, head_dim 0 and
# max_position_embeddings -1 or 1200.0, so only the type is checked): a string there failed inside transformers
NUMBER_KEYS = ("sliding_window", "head_dim", "max_position_embeddings")

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


def _sizes(value: Any) -> list[Any]:
    """The values a size key holds: one, or one per layer / stage (a list, tuple or dict of them)."""
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, (list, tuple)) else [value]


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


def check_config(source: str, data: dict[str, Any], config: Any) -> None:
    """Refuse, before anything is built, a size that is not a whole number >= 1 or lies past its ceiling, and KV
    heads that do not divide the query heads."""
    written = _written(data, config)
    seen: set[str] = set()
    for key, (ceiling, why) in CEILINGS.items():
        name = _spelled(config, key)
        value = _get(config, name)
        if value is None or name in seen:
            continue
        seen.add(name)
        origin = "" if name in written else " (transformers' default)"
        for size in _sizes(value):
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise ModelcostError(f"{source}: {name} {value!r}{origin}: expected whole numbers >= 1")
            if size > ceiling:
                raise ModelcostError(f"{source}: {name} {size:,} is past modelcost's ceiling of {ceiling:,} ({why})")
    for key in NUMBER_KEYS:
        name = _spelled(config, key)
        value = _get(config, name)
        for size in _sizes(value) if value is not None else ():
            if isinstance(size, bool) or not isinstance(size, int | float) or not math.isfinite(size):
                raise ModelcostError(f"{source}: {name} {value!r}: expected a number")
    heads, kv = (_get(config, _spelled(config, k)) for k in ("num_attention_heads", "num_key_value_heads"))
    if isinstance(heads, int) and isinstance(kv, int) and heads % kv:
        raise ModelcostError(
            f"{source}: {_spelled(config, 'num_key_value_heads')} {kv} does not divide "
            f"{_spelled(config, 'num_attention_heads')} {heads}: grouped-query attention gives each KV head a "
            "whole group of query heads")


def position_limit(config: Any, defaults: dict[str, Any]) -> tuple[str, int, bool] | None:
    """The model's position limit: (key as spelled, value, whether it is transformers' default); None: none."""
    if config is None:
        return None
    name = _spelled(config, "max_position_embeddings")
    value = _get(config, name)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return name, value, name in defaults


def check_lengths(source: str, limit: tuple[str, int, bool] | None, prompt_lens: Sequence[int],
                  gen_lens: Sequence[int], batch_sizes: Sequence[int]) -> None:
    """Refuse lengths and batches past modelcost's ceilings, and a prompt plus generation past the model's
    positions: P + G - 1 positions are fed (the G-th new token is output, never fed back)."""
    context = "far above the longest context of any released model, about 10 M tokens"
    for field, values, ceiling, why in (("prompt_lens", prompt_lens, MAX_TOKENS, context),
                                        ("gen_lens", gen_lens, MAX_TOKENS, context),
                                        ("batch_sizes", batch_sizes, MAX_BATCH, "far above any serving batch")):
        option = "{" + field + "}"
        for value in values:
            if value < 1:
                raise ModelcostError(f"{option} {value}: expected a whole number >= 1", fields=field)
            if value > ceiling:
                raise ModelcostError(f"{option} {value:,} is past modelcost's ceiling of {ceiling:,} ({why})",
                                     fields=field)
    if limit is None or not prompt_lens or not gen_lens:
        return
    name, positions, default = limit
    prompt, gen = max(prompt_lens), max(gen_lens)
    if prompt + gen - 1 > positions:
        origin = " (transformers' default: the config does not set it)" if default else ""
        raise ModelcostError(
            f"{source}: a prompt of {prompt:,} tokens and {gen:,} generated need {prompt + gen - 1:,} positions "
            f"(P + G - 1; the last new token is not fed back), past the model's {name} of {positions:,}{origin}")
