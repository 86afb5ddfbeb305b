"""Predicted TTFT and TPOT of text generation (``llm --predict``, issue 28) from the per-layer counts of one
prefill and one decode step (analysis/llm.py) and a GPU's calibration (analysis/predict.py models a forward).

Per backend (``LLM_BACKENDS``: how modelcost's own generation loop, bench/generation.py, runs it):

* TTFT = the prefill forward over (B, P) + the KV-cache writes of its P positions + the argmax over the logits,
  under the prefill's backend model (every hf backend runs the prefill eagerly, kernels issued by the host);
* TPOT = one decode step: its GEMMs (M = B rows: memory-bound on the weights at small batches, which the
  calibrated GEMM and memory figures both see), its attention taken as memory-bound on the KV cache it reads
  from DRAM (``predict.dram_us``: the calibration's curve of kernels whose data is not in the L2),
  the cache update and the argmax, under the decode's backend model (hf-static-compile: compiled and replayed
  as one CUDA graph). The context a step attends: a static cache (hf-static*) is preallocated to P + G
  positions and SDPA reads all of them under a mask, so every step reads P + G; a dynamic cache (hf-eager)
  holds P + t - 1 at step t, P + G / 2 on average over the G - 1 steps, and its update (torch.cat) copies the
  whole layer cache each step (read and written).

Grouped-query attention (fewer K/V heads than query heads): where SDPA gets a mask and transformers cannot
pack the query (a static cache's mask, in the eager prefill and the compiled decode step: ``repeat_kv`` in
transformers.integrations.sdpa_attention), K and V are expanded to the query heads before SDPA: per layer two
copies that read the cache and write n_rep times it, and SDPA then reads the n_rep-times-larger copies; and the
static prefill attends the whole P + G allocated positions under the mask, not P. A dynamic cache passes no mask
(``enable_gqa``) and the eager decode packs the query (``pack_gqa``), so neither expands (``EXPANDS_KV``).

Each phase's expected error is the validation row of ``<backend>/ttft`` or ``<backend>/tpot`` (written by
benchmarks/predict_validate_llm.py), or "error unknown" - never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

from modelcost.analysis.predict import (
    LayerEstimate,
    bound_of,
    dram_us,
    estimate_layers,
    forward_ms,
    layer_kind,
    memory_us,
    pooled_from,
    require_complete,
)
from modelcost.analysis.predict_table import ErrorEntry, expected_fields, validation_table
from modelcost.analysis.roofline import ELEMENT_BYTES, peak_key
from modelcost.core.calibration import Calibration
from modelcost.core.calibration import features as calibration_features
from modelcost.core.errors import ModelcostError
from modelcost.core.llm import GenerationPoint, GenerationResult, LlmPrediction
from modelcost.core.types import CostReport, EagerOps, LatencyPrediction

# backend -> (the forward model of its prefill, of its decode step (analysis/predict.BACKEND_FAMILIES), cache)
LLM_BACKENDS: dict[str, tuple[str, str, str]] = {
    "hf-eager": ("torch-eager", "torch-eager", "dynamic"),
    "hf-static": ("torch-eager", "torch-eager", "static"),
    "hf-static-compile": ("torch-eager", "hf-static-compile", "static"),
}
DEFAULT_BACKENDS = ("hf-eager", "hf-static-compile")
# backend -> (the prefill expands K / V to the query heads, the decode step does) (module doc)
EXPANDS_KV: dict[str, tuple[bool, bool]] = {"hf-eager": (False, False), "hf-static": (True, False),
                                            "hf-static-compile": (True, True)}


def _attention_layers(cost: CostReport) -> int:
    return sum(1 for layer in cost.layers if layer_kind(layer) == "attention")


def _logits_elements(cost: CostReport) -> float:
    """Elements of the logits the argmax reads: the output of the last matmul layer (the LM head)."""
    heads = [layer for layer in cost.layers if layer_kind(layer) == "gemm" and layer.output_shapes]
    if not heads:
        return 0.0
    total = 1.0
    for d in heads[-1].output_shapes[0]:
        total *= int(d)
    return total


def kv_repeats(cost: CostReport, point: GenerationPoint) -> float:
    """Query heads per K/V head (n_rep): the attention output's heads x head size per position over the K (or V)
    elements one position adds per attention layer; 1 without a cache or attention layer."""
    attn = [layer for layer in cost.layers if layer_kind(layer) == "attention" and layer.output_shapes]
    shape = attn[0].output_shapes[0] if attn else ()
    kv_per_layer = point.kv_cache.elements_per_token / max(2 * len(attn), 1)
    if len(shape) != 4 or kv_per_layer <= 0:
        return 1.0
    return max(shape[1] * shape[3] / kv_per_layer, 1.0)


def expansion_kernels(cal: Calibration, layers: int, cache_bytes: float, n_rep: float,
                      cold: bool = False) -> list[LayerEstimate]:
    """repeat_kv of K and V in each of ``layers``: each copy reads its half of the layer's ``cache_bytes`` (all
    sequences) and writes n_rep times it; ``cold``: the cache is read from DRAM (a decode step's: ``dram_us``).
    None when n_rep is 1 (no grouped-query attention)."""
    if n_rep <= 1 or layers <= 0:
        return []
    moved = (1 + n_rep) * cache_bytes / (2 * layers)
    each = (dram_us(cal, moved) if cold else memory_us(cal, moved)) / 1e3
    # a copy that feeds SDPA (an extern kernel) is materialized under every backend: one kernel, never fused
    return [LayerEstimate(f"repeat-kv.{i}", "elementwise", 0.0, each, kernels=1.0) for i in range(2 * layers)]


def _cache_kernels(cal: Calibration, layers: int, moved_bytes: float) -> list[LayerEstimate]:
    """The K and V update of every attention layer: two memory-bound kernels per layer sharing ``moved_bytes``."""
    each = memory_us(cal, moved_bytes / max(2 * layers, 1)) / 1e3
    return [LayerEstimate(f"kv-update.{i}", "elementwise", 0.0, each) for i in range(2 * layers)]


def _argmax(cal: Calibration, cost: CostReport, elem: float, scale: float) -> LayerEstimate:
    return LayerEstimate("argmax", "norm", 0.0, memory_us(cal, _logits_elements(cost) * scale * elem) / 1e3)


def prefill_layers(cost: CostReport, point: GenerationPoint, cal: Calibration, precision: str,
                   expands: bool = False) -> list[LayerEstimate]:
    """The prefill's kernels: its layers at the point's batch, the cache writes of P positions, the argmax; with
    ``expands`` (a static cache: module doc) attention over the P + G allocated keys and the K / V expansion."""
    elem = ELEMENT_BYTES.get(peak_key(precision), 2.0)
    scale = point.batch_size / (cost.batch_size or point.batch_size)
    written = point.batch_size * point.kv_cache.bytes_at(point.prompt_len)
    layers = estimate_layers(cost, cal, precision, point.batch_size)
    extra: list[LayerEstimate] = []
    if expands:
        keys = (point.prompt_len + point.gen_len) / max(point.prompt_len, 1)  # the mask hides, SDPA still computes
        layers = [LayerEstimate(e.name, e.kind, e.compute_ms * keys, e.memory_ms * keys) if e.kind == "attention"
                  else e for e in layers]
        allocated = point.batch_size * point.kv_cache.bytes_at(point.prompt_len + point.gen_len)
        extra = expansion_kernels(cal, _attention_layers(cost), allocated, kv_repeats(cost, point))
    return [*layers, *extra,
            *_cache_kernels(cal, _attention_layers(cost), 2.0 * written),  # each new K / V read and written once
            _argmax(cal, cost, elem, scale)]


def decode_context(point: GenerationPoint, cache: str) -> float:
    """Positions one decode step's attention reads, on average over the G - 1 steps (module doc)."""
    if cache == "static":
        return float(point.prompt_len + point.gen_len)
    return point.prompt_len + point.gen_len / 2


def decode_layers(cost: CostReport, point: GenerationPoint, cal: Calibration, precision: str,
                  cache: str, expands: bool = False) -> list[LayerEstimate]:
    """One decode step's kernels: the GEMMs and small layers as counted, attention as the KV-cache read of the
    context it attends, the cache update (dynamic: a copy of the whole cache; static: the new position), the
    argmax; with ``expands`` the K / V expansion, SDPA then reading n_rep times the cache (module doc)."""
    elem = ELEMENT_BYTES.get(peak_key(precision), 2.0)
    scale = point.batch_size / (cost.batch_size or point.batch_size)
    attn = _attention_layers(cost)
    ctx = decode_context(point, cache)
    kv_read = point.batch_size * point.kv_cache.bytes_at(round(ctx))
    n_rep = kv_repeats(cost, point) if expands else 1.0
    per_layer_read_us = dram_us(cal, n_rep * kv_read / max(attn, 1))  # the cache (or its copies) from DRAM
    out = []
    for est in estimate_layers(cost, cal, precision, point.batch_size):
        if est.kind == "attention":
            # SDPA reads the cache it attends in one kernel whatever the family's fusion of attention layers
            est = LayerEstimate(est.name, "attention", 0.0, per_layer_read_us / 1e3, kernels=1.0)
        out.append(est)
    new_token = point.batch_size * point.kv_cache.bytes_per_token
    moved = 2.0 * kv_read if cache == "dynamic" else 2.0 * new_token
    return [*out, *expansion_kernels(cal, attn, kv_read, n_rep, cold=True), *_cache_kernels(cal, attn, moved),
            _argmax(cal, cost, elem, scale)]


def step_ops(cost: CostReport, point: GenerationPoint, expands: bool) -> EagerOps | None:
    """The aten calls one generation step issues: the counted forward's (CostReport.eager_ops, counted with a
    dynamic cache), the loop's slice of the last position and its argmax, and with ``expands`` (a static cache's
    mask: module doc) each attention layer's two repeat_kv (an expand, a copy)."""
    if cost.eager_ops is None:
        return None
    repeats = 2 * _attention_layers(cost) if expands and kv_repeats(cost, point) > 1 else 0
    return EagerOps(cost.eager_ops.kernel_ops + 1 + repeats, cost.eager_ops.view_ops + 1 + repeats,
                    dict(cost.eager_ops.by_class))


def _prediction(cal: Calibration, backend: str, precision: str, batch: int, phase: str, timed: tuple[float, float, int],
                calibrated_on: str, table: Sequence[ErrorEntry], host_pooled_from: int = 0) -> LatencyPrediction:
    kernel_ms, overhead_ms, kernels = timed
    expected = expected_fields(table, cal.gpu.name, calibrated_on, f"{backend}/{phase}", precision,
                               calibration_features(cal))
    return LatencyPrediction(gpu=cal.gpu.name, backend=backend, precision=precision, batch_size=batch,
                             latency_ms=kernel_ms + overhead_ms, compute_ms=kernel_ms, overhead_ms=overhead_ms,
                             kernels=kernels, calibrated_on=calibrated_on, transferred=calibrated_on != cal.gpu.name,
                             host_pooled_from=host_pooled_from,
                             calibration_features=list(calibration_features(cal)), **expected)


def predict_point(prefill: CostReport, decode: CostReport | None, point: GenerationPoint, cal: Calibration,
                  backend: str, precision: str, *, calibrated_on: str | None = None,
                  table: Sequence[ErrorEntry] | None = None) -> LlmPrediction:
    """TTFT and TPOT of ``point`` under ``backend`` on ``cal``'s GPU (module doc)."""
    if backend not in LLM_BACKENDS:
        raise ModelcostError(f"backend {backend!r}: no generation prediction model (known: {', '.join(LLM_BACKENDS)})")
    if decode is None:
        raise ModelcostError(f"--gen-len {point.gen_len}: no decode step to predict a TPOT for")
    for cost in (prefill, decode):
        require_complete(cost)
    if point.kv_cache.bytes_per_token and not _attention_layers(decode):
        raise ModelcostError("the decode step has no attention layer the predictor knows (scaled_dot_product_"
                             "attention), so its KV-cache reads have no place: --attn-implementation sdpa, where "
                             "the model has it")
    pre_model, dec_model, cache = LLM_BACKENDS[backend]
    calibrated_on = calibrated_on or cal.gpu.name
    table = validation_table() if table is None else table
    pre_expands, dec_expands = EXPANDS_KV[backend]
    pre_ops, dec_ops = step_ops(prefill, point, pre_expands), step_ops(decode, point, dec_expands)
    ttft = forward_ms(prefill_layers(prefill, point, cal, precision, pre_expands), cal, pre_model, pre_ops, precision)
    tpot = forward_ms(decode_layers(decode, point, cal, precision, cache, dec_expands), cal, dec_model, dec_ops,
                      precision)
    return LlmPrediction(point.prompt_len, point.gen_len,
                         _prediction(cal, backend, precision, point.batch_size, "ttft", ttft, calibrated_on, table,
                                     pooled_from(cal, pre_model, pre_ops, bound_of(pre_model, ttft[1]))),
                         _prediction(cal, backend, precision, point.batch_size, "tpot", tpot, calibrated_on, table,
                                     pooled_from(cal, dec_model, dec_ops, bound_of(dec_model, tpot[1]))))


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def with_measurements(pred: LlmPrediction, results: Sequence[GenerationResult]) -> LlmPrediction:
    """``pred`` with the measured median TTFT and TPOT of the same backend, precision, batch and lengths (the
    median over repeats) and the signed error of each phase."""
    same = [r for r in results if r.status == "ok" and (r.backend, r.precision, r.batch_size, r.prompt_len, r.gen_len)
            == (pred.ttft.backend, pred.ttft.precision, pred.ttft.batch_size, pred.prompt_len, pred.gen_len)]
    for phase, values in ((pred.ttft, [r.ttft_ms for r in same]), (pred.tpot, [r.tpot_ms for r in same])):
        measured = _median([v for v in values if v is not None and v > 0])
        if measured is not None:
            phase.measured_ms = measured
            phase.error_pct = (phase.latency_ms - measured) / measured * 100
    return pred
