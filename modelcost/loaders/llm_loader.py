"""Causal LMs for ``modelcost llm``: one adapter over the sources it takes, so that the static count (on the
meta device) and the measured loop (on a GPU) drive prefill and decode the same way.

Sources:

* ``zoo:NAME`` - a zoo decoder whose forward takes a KV cache (the Llama family: ``past_key_values`` is a
  list of per-layer (k, v) the model extends);
* ``path/config.json`` or a folder holding one - a ``transformers`` config: the model is built from it with
  ``AutoModelForCausalLM.from_config`` (no weights are read or needed);
* ``file.py:factory`` - returns a ``transformers`` causal LM or any module with the same forward
  (``input_ids``, ``past_key_values`` a transformers ``Cache``, ``use_cache``, optionally ``logits_to_keep``);
* ``org/name`` - a hub model id: only its config.json is fetched (needs the hub; tests use local files).

The KV cache's size per token is not derived from config fields: the adapter runs a one-token prefill on the
meta device and sums the cache tensors it made, so whatever the model stores (GQA, MQA, MLA-like layouts) is
what is counted.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.lazy import require

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
ATTN_IMPLEMENTATIONS = ("sdpa", "eager")  # transformers' names of the kernels a meta count can run


@dataclass
class CausalLM:
    name: str
    source: str
    family: str  # "transformers" | "zoo"
    module: Any  # on the meta device, eval mode, in the analysis dtype
    vocab_size: int | None
    logits_to_keep: bool  # forward accepts logits_to_keep (the head then runs on the last position only)
    build: Callable[[str, Any], Any] = field(repr=False)  # (device, torch dtype) -> real module, random init
    config: Any = field(default=None, repr=False)  # the transformers config, when there is one
    notes: list[str] = field(default_factory=list)
    config_defaults: dict[str, Any] = field(default_factory=dict)  # cost-shaping keys transformers filled in
    attn_implementation: str | None = None  # the attention the model runs ("sdpa" | "eager"); None: unknown
    cache_kwarg: str = "past_key_values"  # the forward's name for the KV cache ("cache" in newer transformers)

    def check_lengths(self, prompt_lens: Sequence[int], gen_lens: Sequence[int], batch_sizes: Sequence[int]) -> None:
        """Refuse lengths / batches past modelcost's ceilings or past the model's positions (``llm_limits``)."""
        from modelcost.loaders.llm_limits import check_lengths, position_limit

        limit = position_limit(self.config, self.config_defaults)
        check_lengths(self.source, limit, prompt_lens, gen_lens, batch_sizes)

    def new_cache(self) -> Any:
        """An empty dynamic KV cache of the kind the model's forward takes."""
        if self.family == "zoo":
            return []
        from transformers import DynamicCache

        return DynamicCache(config=self.config) if self.config is not None else DynamicCache()

    def forward(self, module: Any, input_ids: Any, cache: Any, last_logits_only: bool, **extra: Any) -> Any:
        """Logits of one forward (prefill or decode step) that reads and extends ``cache``."""
        kwargs: dict[str, Any] = {self.cache_kwarg: cache}
        if last_logits_only and self.logits_to_keep:
            kwargs["logits_to_keep"] = 1
        if self.family == "zoo":
            return module(input_ids, **kwargs)
        out = module(input_ids=input_ids, use_cache=True, **kwargs, **extra)
        return out.logits if hasattr(out, "logits") else out[0]


def cache_tensors(cache: Any) -> list[Any]:
    """The K and V tensors a cache holds (a zoo list of (k, v), or a transformers Cache)."""
    if isinstance(cache, list):
        return [t for kv in cache for t in kv]
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [t for layer in layers for t in (getattr(layer, "keys", None), getattr(layer, "values", None))
                if t is not None and hasattr(t, "shape") and t.numel()]
    return [*getattr(cache, "key_cache", []), *getattr(cache, "value_cache", [])]  # older transformers


def cache_like(lm: CausalLM, template: Any, positions: int) -> Any:
    """A cache shaped like ``template`` (made by a prefill) but holding ``positions`` positions (meta tensors)."""
    torch = require("torch")
    if lm.family == "zoo":
        return [tuple(torch.empty(*t.shape[:2], positions, *t.shape[3:], dtype=t.dtype, device=t.device)
                      for t in kv) for kv in template]
    cache = lm.new_cache()
    for i, layer in enumerate(template.layers):
        k, v = (torch.empty(*t.shape[:2], positions, *t.shape[3:], dtype=t.dtype, device=t.device)
                for t in (layer.keys, layer.values))
        cache.update(k, v, i)
    return cache


def _cache_kwarg(module: Any) -> str:
    """The name the forward takes its KV cache by: ``cache`` where it names that and not ``past_key_values``
    (transformers 5.2x renamed it, and warns at every call under the old name), else ``past_key_values``. Read
    once at load: the decode loop's host time must not pay for a signature lookup per step."""
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params and "past_key_values" not in params else "past_key_values"


def _accepts(module: Any, name: str) -> bool:
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def load_causal_lm(source: str, dtype: str = "fp16", attn_implementation: str | None = None) -> CausalLM:
    """The model of ``source`` on the meta device in ``dtype`` (fp32 / fp16 / bf16). ``attn_implementation``:
    the attention a transformers model runs ("sdpa" or "eager"); None: SDPA where the model supports it, else
    eager (Gemma-2: its logit soft-capping has no SDPA). The count does not depend on it."""
    torch = require("torch")
    if dtype not in DTYPES:
        raise ModelcostError(f"{{dtype}} {dtype}: choose one of {', '.join(DTYPES)}", fields="dtype")
    if attn_implementation is not None and attn_implementation not in ATTN_IMPLEMENTATIONS:
        raise ModelcostError(f"{{attn_implementation}} {attn_implementation}: choose one of "
                             f"{', '.join(ATTN_IMPLEMENTATIONS)} (what a count on the meta device can run)",
                             fields="attn_implementation")
    tdtype = getattr(torch, DTYPES[dtype])
    if source.startswith("zoo:"):
        lm = _from_zoo(source, attn_implementation)
    elif source.endswith(".json") or Path(source).is_dir():
        lm = _from_config(source, _read_config(source), attn_implementation)
    elif ":" in source:
        lm = _from_factory(source, attn_implementation)
    elif source.count("/") == 1 and not Path(source).exists():
        lm = _from_config(source, _hub_config(source), attn_implementation)
    else:
        raise ModelcostError(f"{source}: not a causal LM source (expected zoo:NAME, config.json or a folder "
                             "holding one, file.py:factory, or a hub model id)")
    lm.module = lm.module.to(tdtype).eval()
    return lm


def _from_zoo(source: str, attn_implementation: str | None) -> CausalLM:
    from modelcost.loaders.torch_loader import build_on, on_meta
    from modelcost.loaders.zoo import ZOO

    entry = ZOO.get(source.removeprefix("zoo:"))
    if entry is None:
        raise ModelcostError(f"{source}: no such zoo model; choose one of {', '.join(ZOO)}")
    if attn_implementation not in (None, "sdpa"):
        raise ModelcostError(f"{{attn_implementation}} {attn_implementation}: {source} has one attention (sdpa); "
                             "the option chooses among a transformers model's", fields="attn_implementation")
    module = on_meta(build_on(entry.factory, "meta", source), notes := [])
    if not _accepts(module, "past_key_values"):
        llamas = ", ".join(f"zoo:{n}" for n in ZOO if n.startswith("llama"))
        raise ModelcostError(f"{source}: its forward takes no KV cache, so it cannot generate; try {llamas}")

    def build(device: str, dtype: Any) -> Any:
        return build_on(entry.factory, device, source).to(dtype).eval()

    return CausalLM(entry.name, source, "zoo", module, entry.input_high.get("input_ids"),
                    _accepts(module, "logits_to_keep"), build, notes=notes, attn_implementation="sdpa")


def _read_config(source: str) -> dict[str, Any]:
    path = Path(source)
    path = path / "config.json" if path.is_dir() else path
    if not path.is_file():
        raise ModelcostError(f"{source}: no config.json there")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelcostError(f"{path}: not a readable JSON config ({exc})") from exc
    if not isinstance(data, dict) or "model_type" not in data:
        raise ModelcostError(f"{path}: not a transformers config (no 'model_type' key)")
    return data


def _hub_config(model_id: str) -> dict[str, Any]:
    transformers = require("transformers")
    try:
        return transformers.AutoConfig.from_pretrained(model_id).to_dict()
    except Exception as exc:
        raise ModelcostError(f"{model_id}: could not fetch its config from the hub ({exc.__class__.__name__}); "
                             "pass a local config.json instead") from exc


def _pick_attention(transformers: Any, config: Any, wanted: str | None) -> str:
    """``wanted``, else SDPA where the causal-LM class of ``config`` supports it, else eager."""
    if wanted is not None:
        return wanted
    model_class = transformers.AutoModelForCausalLM._model_mapping.get(type(config), None)
    return "eager" if model_class is not None and not getattr(model_class, "_supports_sdpa", True) else "sdpa"


def _from_config(source: str, data: dict[str, Any], attn_implementation: str | None = None) -> CausalLM:
    from modelcost.loaders.llm_limits import check_config, config_defaults

    transformers = require("transformers")
    torch = require("torch")
    try:
        config = transformers.AutoConfig.for_model(**data)
    except Exception as exc:  # its validation errors span lines: keep the reason on the one line shown
        raise ModelcostError(f"{source}: transformers cannot read this config ({' '.join(str(exc).split())})") from exc
    check_config(source, data, config)  # before building: 10^12 layers would never finish
    config._attn_implementation = _pick_attention(transformers, config, attn_implementation)

    def build(device: str, dtype: Any) -> Any:
        with torch.device(device):
            try:
                model = transformers.AutoModelForCausalLM.from_config(config)
            except Exception as exc:
                raise ModelcostError(f"{source}: transformers builds no causal LM from it ({exc})") from exc
        return model.to(dtype).eval()

    module = build("meta", torch.float32)
    name = Path(source).parent.name if source.endswith(".json") else Path(source).name
    return CausalLM(name or source, source, "transformers", module, getattr(config, "vocab_size", None),
                    _accepts(module, "logits_to_keep"), build, config=config,
                    config_defaults=config_defaults(data, config), attn_implementation=config._attn_implementation,
                    cache_kwarg=_cache_kwarg(module))


def _from_factory(source: str, attn_implementation: str | None = None) -> CausalLM:
    from modelcost.loaders.base import LoadOptions
    from modelcost.loaders.torch_loader import load_torch

    loaded = load_torch(source, LoadOptions())
    module = loaded.module
    if not (_accepts(module, "past_key_values") or _accepts(module, "cache")):
        raise ModelcostError(f"{source}: its forward takes no past_key_values (a KV cache); modelcost llm needs a "
                             "transformers causal LM or a module with the same forward")
    config = getattr(module, "config", None)
    config = config if hasattr(config, "to_dict") else None
    if attn_implementation is not None:
        _set_attention(source, module, attn_implementation)

    def build(device: str, dtype: Any) -> Any:
        model = loaded.instantiate(device)
        if attn_implementation is not None:
            _set_attention(source, model, attn_implementation)
        return model.to(dtype).eval()

    return CausalLM(loaded.name, source, "transformers", module, getattr(config, "vocab_size", None),
                    _accepts(module, "logits_to_keep"), build, config=config, notes=list(loaded.notes),
                    attn_implementation=getattr(config, "_attn_implementation", None), cache_kwarg=_cache_kwarg(module))


def _set_attention(source: str, module: Any, attn_implementation: str) -> None:
    setter = getattr(module, "set_attn_implementation", None)
    if not callable(setter):
        raise ModelcostError(f"{{attn_implementation}} {attn_implementation}: {source} is not a transformers model "
                             "whose attention can be chosen", fields="attn_implementation")
    try:
        setter(attn_implementation)
    except Exception as exc:
        raise ModelcostError(f"{{attn_implementation}} {attn_implementation}: {source} refuses it ({exc})",
                             fields="attn_implementation") from exc
