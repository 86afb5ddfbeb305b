"""Which attention implementation a ``transformers`` model runs while modelcost counts it: the one owner of
that choice, for every loader (``torch_loader`` for analyze / train; ``llm_loader`` may call it too).

The counter runs the model on meta tensors, so only implementations that are plain torch code can run there:
``eager`` (matmuls and a softmax, counted op by op) and ``sdpa`` (``scaled_dot_product_attention``, counted
as one op). A model built with another one (``flash_attention_2``, ``flex_attention``, a hub kernel) is
switched for counting to ``sdpa`` when its class supports it, else to ``eager``; the MACs of attention are the
same in every implementation (``docs/COUNTING.md``). ``--attn-implementation NAME`` asks for one explicitly:
then the counted model and the benchmarked one both use it.
"""

from __future__ import annotations

from typing import Any

from modelcost.core.errors import ModelcostError

COUNTABLE = ("eager", "sdpa")  # implementations that run on meta tensors


def current_attention(module: Any) -> str | None:
    """The model's attention implementation (``config._attn_implementation``); None for a model that is not a
    ``transformers`` one (no ``set_attn_implementation``)."""
    if not callable(getattr(module, "set_attn_implementation", None)):
        return None
    return getattr(getattr(module, "config", None), "_attn_implementation", None)


def set_attention(module: Any, requested: str, source: str) -> None:
    """Switch a ``transformers`` model to the implementation ``requested`` (--attn-implementation); refused in
    one line for another kind of model, a name transformers does not know, or a class that cannot switch."""
    if not callable(getattr(module, "set_attn_implementation", None)):
        raise ModelcostError(f"{{attn_implementation}} {requested}: {source} is not a transformers model "
                             "(it has no set_attn_implementation)", fields="attn_implementation")
    try:
        module.set_attn_implementation(requested)
    except (ValueError, ImportError, KeyError) as exc:
        text = " ".join(str(exc).split())[:300]
        raise ModelcostError(f"{{attn_implementation}} {requested}: {source} refuses it: {text}",
                             fields="attn_implementation") from exc
    now = current_attention(module)
    if now != requested:
        raise ModelcostError(f"{{attn_implementation}} {requested}: {source} ({type(module).__name__}) cannot switch "
                             f"its attention implementation; it keeps {now!r}", fields="attn_implementation")


def attention_for_counting(module: Any, requested: str | None, source: str) -> str | None:
    """Set the implementation the count runs: ``requested`` when given (checked), and in place of one that cannot
    run on meta a countable one. Returns a note saying what was set, or None (nothing changed)."""
    if requested:
        set_attention(module, requested, source)
    now = current_attention(module)
    if now is None or now in COUNTABLE:
        return f"attention implementation {requested} (--attn-implementation)" if requested else None
    chosen = "sdpa" if getattr(module, "_supports_sdpa", False) else "eager"
    set_attention(module, chosen, source)
    measured = f"; the benchmarks run {now}" if requested else "; give --attn-implementation to choose"
    return f"attention implementation {now} cannot run on meta tensors: counted with {chosen} (the same MACs{measured})"
