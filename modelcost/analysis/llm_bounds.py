"""Lower bounds a GPU puts on generation, and measured runs placed against them (conventions in core.llm).

Each phase is bounded by max(FLOPs / peak FLOP/s, bytes / peak bandwidth) with the datasheet's dense peak of
the model's precision (``analysis.roofline.peak_key``) and the datasheet bandwidth (``hardware.specs``); no
overlap loss, launch overhead or attention-kernel inefficiency is assumed, so a measured time is >= its bound.
Split over ``tp`` GPUs (``analysis.llm_fit``), FLOPs and bytes divide by tp and each phase adds its all-reduces.
"""

from __future__ import annotations

import math

from modelcost.analysis import llm_moe
from modelcost.analysis.llm_fit import TpSplit, capacity, gpus_needed, memory_per_gpu, tp_notes, tp_split
from modelcost.analysis.roofline import peak_key
from modelcost.core.errors import ModelcostError
from modelcost.core.llm import GenerationPoint, GenerationResult, LlmBounds, LlmReport, MoeSpec
from modelcost.core.types import GpuSpec


def _peaks(gpu: GpuSpec, precision: str) -> tuple[str, float, float]:
    key = peak_key(precision)
    tflops = gpu.peak_tflops.get(key)
    if not tflops or not gpu.bandwidth_gbps:
        raise ModelcostError(f"{gpu.name}: no {key} peak or memory bandwidth in its spec; cannot bound generation")
    return key, tflops, gpu.bandwidth_gbps


def _phase_ms(flops: float, nbytes: float, tflops: float, gbps: float) -> tuple[float, float]:
    return flops / (tflops * 1e12) * 1e3, nbytes / (gbps * 1e9) * 1e3


def bounds(point: GenerationPoint, weights_bytes: int, weights_read_bytes: int, gpu: GpuSpec,
           precision: str, split: TpSplit | None = None, moe: MoeSpec | None = None) -> LlmBounds:
    split = split or TpSplit()
    key, tflops, gbps = _peaks(gpu, precision)
    all_tflops, all_gbps = tflops * split.tp, gbps * split.tp  # FLOPs and bytes split evenly over the GPUs
    pre_ar, step_ar = split.allreduce_ms(point.batch_size * point.prompt_len), split.allreduce_ms(point.batch_size)
    pre_c, pre_m = _phase_ms(point.prefill.flops, point.prefill.bytes, all_tflops, all_gbps)
    dec = point.decode
    steps = [_phase_ms(t.flops, t.bytes, all_tflops, all_gbps) for t in dec.per_token]
    decode_sum_ms = _decode_sum_ms(point, all_tflops, all_gbps) + dec.steps * step_ar
    first, last = (max(steps[0]) + step_ar, max(steps[-1]) + step_ar) if steps else (0.0, 0.0)
    ttft = max(pre_c, pre_m) + pre_ar
    b, total_len = point.batch_size, point.prompt_len + point.gen_len
    kv = point.kv_cache
    max_batch = max_ctx = need = gpus = None
    fits = True
    if gpu.memory_bytes:
        max_batch, max_ctx = capacity(weights_bytes, kv, total_len, gpu.memory_bytes, split.tp)
        need = memory_per_gpu(weights_bytes, kv, total_len, split.tp)
        fits, gpus = need <= gpu.memory_bytes, gpus_needed(weights_bytes, kv, total_len, gpu.memory_bytes)
    tpot = decode_sum_ms / dec.steps if dec.steps else 0.0
    return LlmBounds(
        gpu.name, key, tflops, gbps, gpu.memory_bytes, ttft, pre_c, pre_m, tpot, first, last,
        b * point.gen_len / ((ttft + decode_sum_ms) / 1e3) if ttft + decode_sum_ms else 0.0,
        b / (tpot / 1e3) if tpot else 0.0,
        _compute_bound_batch(point, weights_read_bytes, all_tflops, all_gbps, moe), max_batch, max_ctx,
        {"prefill": "compute" if pre_c >= pre_m else "memory",
         "decode": ("compute" if steps and steps[-1][0] >= steps[-1][1] else "memory") if dec.steps else "-"},
        split.tp, fits, need, gpus, split.link, split.link_gbps, pre_ar, step_ar,
    )


def _decode_sum_ms(point: GenerationPoint, tflops: float, gbps: float) -> float:
    """Sum over every decode step of max(compute, memory), in closed form (G may be millions of steps).

    FLOPs and bytes are linear in the context length between consecutive counted steps (window edges are among
    them), so within one such segment step j takes c0 + c1 j ms of compute and m0 + m1 j ms of memory time, and
    the segment's sum of the larger is ``_max_sum``."""
    nodes = point.decode.per_token
    if not point.decode.steps:
        return 0.0
    total = max(_phase_ms(nodes[0].flops, nodes[0].bytes, tflops, gbps))
    for a, z in zip(nodes, nodes[1:], strict=False):
        span = z.context_len - a.context_len
        if span <= 0:
            continue
        c0, m0 = _phase_ms(a.flops, a.bytes, tflops, gbps)
        c1, m1 = _phase_ms((z.flops - a.flops) / span, (z.bytes - a.bytes) / span, tflops, gbps)
        total += _max_sum(c0, c1, m0, m1, 1, span + 1)
    return total


def _max_sum(c0: float, c1: float, m0: float, m1: float, lo: int, hi: int) -> float:
    """Sum over j = lo..hi-1 of max(c0 + c1 j, m0 + m1 j). Two lines cross at most once: compute is the larger
    where (c0 - m0) + (c1 - m1) j >= 0, so the steps split at one index k into a run on one line and a run on the
    other, and each run is an arithmetic series (``_line_sum``)."""
    d0, d1 = c0 - m0, c1 - m1
    if d1 == 0:  # parallel lines: one of them is the larger at every step
        return _line_sum(c0, c1, lo, hi) if d0 >= 0 else _line_sum(m0, m1, lo, hi)
    cross = min(max(-d0 / d1, lo - 1.0), hi + 1.0)  # where the lines meet, held near the steps (never inf)
    if d1 > 0:  # memory first, compute from the first j >= cross on
        k = min(max(math.ceil(cross), lo), hi)
        return _line_sum(m0, m1, lo, k) + _line_sum(c0, c1, k, hi)
    k = min(max(math.floor(cross) + 1, lo), hi)  # compute up to the last j <= cross, memory after
    return _line_sum(c0, c1, lo, k) + _line_sum(m0, m1, k, hi)


def _line_sum(x0: float, x1: float, lo: int, hi: int) -> float:
    """Sum of x0 + x1 j over j = lo..hi-1: (hi - lo) terms whose mean is the value at (lo + hi - 1) / 2."""
    count = hi - lo
    return count * (x0 + x1 * (lo + hi - 1) / 2) if count > 0 else 0.0


def _compute_bound_batch(point: GenerationPoint, weights_read: int, tflops: float, gbps: float,
                         moe: MoeSpec | None = None) -> int | None:
    """Smallest batch whose last decode step has compute time >= memory time: with f FLOPs and k KV bytes
    per sequence, B f / peak >= (W + B k) / bw  <=>  B >= (W / bw) / (f / peak - k / bw). None: never (the
    KV cache alone outpaces compute at this context length). A mixture of experts reads W(B) <= W, the experts
    B tokens visit (``llm_moe.compute_bound_batch``)."""
    if not point.decode.per_token:
        return None
    last = point.decode.per_token[-1]
    per_seq_flops = last.flops / point.batch_size
    per_seq_kv = point.kv_cache.bytes_at(last.context_len)
    margin = per_seq_flops / (tflops * 1e12) - per_seq_kv / (gbps * 1e9)
    if margin <= 0:
        return None
    dense = max(1, math.ceil(weights_read / (gbps * 1e9) / margin))
    return llm_moe.compute_bound_batch(moe, weights_read, margin * gbps * 1e9, dense) if moe else dense


def add_bounds(report: LlmReport, gpu: GpuSpec, precision: str | None = None, tp: int = 1) -> None:
    """Bounds of every point on ``gpu``, or on ``tp`` of them joined by the GPU table's link."""
    for point in report.points:
        layers = sum(g.layers for g in point.kv_cache.layer_groups)
        split = tp_split(gpu, tp, layers, report.hidden_state_bytes)
        point.bounds = bounds(point, report.weights_bytes, report.weights_read_bytes, gpu, precision or report.dtype,
                              split, report.moe)
        report.notes += [n for n in tp_notes(point.kv_cache, tp) if n not in report.notes]


def place_measured(result: GenerationResult, point: GenerationPoint, report: LlmReport, gpu: GpuSpec | None) -> None:
    """Fill a measured run's predicted peak memory and, against ``gpu`` (the GPU it ran on), its bound ratios,
    decode bandwidth utilisation (mean decode bytes per step / measured TPOT / peak bandwidth) and prefill MFU."""
    result.predicted_peak_memory_bytes = point.predicted_peak_memory_bytes
    if gpu is None or result.status != "ok" or not result.ttft_ms:
        return
    b = bounds(point, report.weights_bytes, report.weights_read_bytes, gpu, result.precision, moe=report.moe)
    result.ttft_bound_ratio = result.ttft_ms / b.ttft_ms if b.ttft_ms else None
    result.mfu = point.prefill.flops / (result.ttft_ms / 1e3) / (b.peak_tflops * 1e12)
    if result.tpot_ms and point.decode.steps:
        result.tpot_bound_ratio = result.tpot_ms / b.tpot_ms if b.tpot_ms else None
        mean_bytes = point.decode.bytes_total / point.decode.steps
        result.bandwidth_utilization = mean_bytes / (result.tpot_ms / 1e3) / (b.bandwidth_gbps * 1e9)
