"""Lower bounds a GPU puts on generation, and measured runs placed against them (conventions in core.llm).

Each phase is bounded by max(FLOPs / peak FLOP/s, bytes / peak bandwidth) with the datasheet's dense peak of
the model's precision (``analysis.roofline.peak_key``) and the datasheet bandwidth (``hardware.specs``); no
overlap loss, launch overhead or attention-kernel inefficiency is assumed, so a measured time is >= its bound.
"""

from __future__ import annotations

import math

from modelcost.analysis import llm_moe
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
           precision: str, moe: MoeSpec | None = None) -> LlmBounds:
    key, tflops, gbps = _peaks(gpu, precision)
    pre_c, pre_m = _phase_ms(point.prefill.flops, point.prefill.bytes, tflops, gbps)
    dec = point.decode
    steps = [_phase_ms(t.flops, t.bytes, tflops, gbps) for t in dec.per_token]
    decode_sum_ms = _decode_sum_ms(point, tflops, gbps)
    first, last = (max(steps[0]), max(steps[-1])) if steps else (0.0, 0.0)
    ttft = max(pre_c, pre_m)
    b, total_len = point.batch_size, point.prompt_len + point.gen_len
    kv_token = point.kv_cache.bytes_per_token
    free = (gpu.memory_bytes - weights_bytes) if gpu.memory_bytes else None
    max_batch = max(free // (kv_token * total_len), 0) if free is not None and kv_token else None
    max_ctx = max(free // kv_token, 0) if free is not None and kv_token else None
    tpot = decode_sum_ms / dec.steps if dec.steps else 0.0
    return LlmBounds(
        gpu.name, key, tflops, gbps, gpu.memory_bytes, ttft, pre_c, pre_m, tpot, first, last,
        b * point.gen_len / ((ttft + decode_sum_ms) / 1e3) if ttft + decode_sum_ms else 0.0,
        b / (tpot / 1e3) if tpot else 0.0,
        _compute_bound_batch(point, weights_read_bytes, tflops, gbps, moe), max_batch, max_ctx,
        {"prefill": "compute" if pre_c >= pre_m else "memory",
         "decode": ("compute" if steps and steps[-1][0] >= steps[-1][1] else "memory") if dec.steps else "-"},
    )


def _decode_sum_ms(point: GenerationPoint, tflops: float, gbps: float) -> float:
    """Sum over every decode step of max(compute, memory): FLOPs and bytes are linear in the context length
    between the first and the last counted step, so each step's pair is exact; the max is taken per step."""
    dec = point.decode
    if not dec.steps:
        return 0.0
    a, z = dec.per_token[0], dec.per_token[-1]
    span = max(z.context_len - a.context_len, 1)
    total = 0.0
    for j in range(dec.steps):
        flops = a.flops + (z.flops - a.flops) * j / span
        nbytes = a.bytes + (z.bytes - a.bytes) * j / span
        total += max(_phase_ms(flops, nbytes, tflops, gbps))
    return total


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
    per_seq_kv = point.kv_cache.bytes_per_token * last.context_len
    margin = per_seq_flops / (tflops * 1e12) - per_seq_kv / (gbps * 1e9)
    if margin <= 0:
        return None
    dense = max(1, math.ceil(weights_read / (gbps * 1e9) / margin))
    return llm_moe.compute_bound_batch(moe, weights_read, margin * gbps * 1e9, dense) if moe else dense


def add_bounds(report: LlmReport, gpu: GpuSpec, precision: str | None = None) -> None:
    for point in report.points:
        point.bounds = bounds(point, report.weights_bytes, report.weights_read_bytes, gpu, precision or report.dtype,
                              report.moe)


def place_measured(result: GenerationResult, point: GenerationPoint, report: LlmReport, gpu: GpuSpec | None) -> None:
    """Fill a measured run's predicted peak memory and, against ``gpu`` (the GPU it ran on), its bound ratios,
    decode bandwidth utilisation (mean decode bytes per step / measured TPOT / peak bandwidth) and prefill MFU."""
    result.predicted_peak_memory_bytes = point.predicted_peak_memory_bytes
    if gpu is None or result.status != "ok" or not result.ttft_ms:
        return
    b = bounds(point, report.weights_bytes, report.weights_read_bytes, gpu, result.precision, report.moe)
    result.ttft_bound_ratio = result.ttft_ms / b.ttft_ms if b.ttft_ms else None
    result.mfu = point.prefill.flops / (result.ttft_ms / 1e3) / (b.peak_tflops * 1e12)
    if result.tpot_ms and point.decode.steps:
        result.tpot_bound_ratio = result.tpot_ms / b.tpot_ms if b.tpot_ms else None
        mean_bytes = point.decode.bytes_total / point.decode.steps
        result.bandwidth_utilization = mean_bytes / (result.tpot_ms / 1e3) / (b.bandwidth_gbps * 1e9)
