"""``modelcost llm`` static part: prefill / decode counted on the meta device, KV cache, bounds on a GPU.

Every expectation is derived by hand next to its assertion. Notation: h hidden, H query heads, K KV heads,
d = h / H head dim, f SwiGLU width, V vocab, n layers, B batch, P prompt, L key positions attended by a decode
step (the new token included). Per token, a Llama layer's linears are q h*h + k, v 2*h*K*d + o h*h + MLP 3*h*f
MACs; attention of one query against L keys is H * L * (d + d) MACs (scores q.k and the weighted sum of v).
"""

from __future__ import annotations

import json

import pytest

from modelcost.analysis.llm import analyze_llm
from modelcost.analysis.llm_bounds import add_bounds, bounds
from modelcost.hardware.specs import spec_from_table
from modelcost.loaders.llm_loader import load_causal_lm


def llama_decode_macs(h: int, H: int, K: int, f: int, V: int, n: int, L: int, B: int = 1) -> int:
    """The closed form the counter is checked against (a decode step, one new token per sequence)."""
    d = h // H
    linears = n * (2 * h * h + 2 * h * K * d + 3 * h * f) + V * h
    return B * (linears + n * H * L * 2 * d)


def llama_prefill_macs(h: int, H: int, K: int, f: int, V: int, n: int, P: int, B: int = 1) -> int:
    """Prefill over P positions, the LM head on the last position only; causal attention counted over all P x P
    pairs (the counter's convention)."""
    d = h // H
    return B * (P * n * (2 * h * h + 2 * h * K * d + 3 * h * f) + V * h + n * H * P * P * 2 * d)


@pytest.fixture(scope="module")
def llama7b():
    return load_causal_lm("zoo:llama-7b", "fp16")


@pytest.fixture(scope="module")
def llama70b():
    return load_causal_lm("zoo:llama-70b", "fp16")


def test_llama7b_kv_bytes_and_decode_macs(llama7b) -> None:
    report = analyze_llm(llama7b, [128], [4], [1])
    point = report.points[0]
    # KV per token: K and V, 32 layers, 32 KV heads x 128 dims, 2 bytes (fp16) = 2 * 32 * 4096 * 2 = 524,288
    assert point.kv_cache.bytes_per_token == 524_288
    assert point.kv_cache.elements_per_token == 262_144
    # per sequence: a dynamic cache ends at P + G - 1 = 131 positions: 131 * 524,288 = 68,681,728
    assert point.kv_cache.bytes_per_sequence == 68_681_728
    # decode per token at L positions: linears 32 * (2*4096^2 + 2*4096*4096 + 3*4096*11008) = 32 * 202,375,168
    # = 6,476,005,376, + lm_head 4096 * 32000 = 131,072,000 -> 6,607,077,376; attention 32 layers * 32 heads *
    # L * 256 = 262,144 * L
    steps = point.decode.per_token
    assert [t.context_len for t in steps] == [129, 130, 131]  # steps 2..4 of G = 4 attend P + 1 .. P + 3
    for t in steps:
        assert t.macs == 6_607_077_376 + 262_144 * t.context_len
        assert t.macs == llama_decode_macs(4096, 32, 32, 11008, 32000, 32, t.context_len)
    # the total over the three steps: 3 * 6,607,077,376 + 262,144 * (129 + 130 + 131)
    assert point.decode.steps == 3
    assert point.decode.macs_total == 3 * 6_607_077_376 + 262_144 * 390
    assert point.decode.macs_per_context_position == 262_144
    # prefill at P = 128, the head on the last position only:
    # 128 * 6,476,005,376 + 131,072,000 + 32 * 32 * 128^2 * 256 = 828,928,688,128 + 131,072,000 + 4,294,967,296
    assert point.prefill.logits == "last"
    assert point.prefill.macs == 833_354_727_424 == llama_prefill_macs(4096, 32, 32, 11008, 32000, 32, 128)
    assert report.uncounted == {} and report.problems == []


def test_llama7b_weights_and_bytes(llama7b) -> None:
    report = analyze_llm(llama7b, [2048], [128], [1])
    # 6,738,415,616 params x 2 bytes
    assert report.weights_bytes == 13_476_831_232
    assert report.weights_bytes_by_dtype == {"float16": 13_476_831_232}
    # the input embedding (32000 x 4096 x 2 = 262,144,000 bytes) is gathered, not read whole
    assert report.weights_read_bytes == 13_476_831_232 - 262_144_000
    first = report.points[0].decode.per_token[0]
    # bytes of the first decode step: weights read + one embedding row (4096 x 2) + KV at 2049 positions
    assert first.context_len == 2049
    assert first.bytes == 13_214_687_232 + 8_192 + 524_288 * 2049
    assert first.flops >= 2 * first.macs


def test_llama70b_gqa_figures(llama70b) -> None:
    report = analyze_llm(llama70b, [4096], [512], [32])
    point = report.points[0]
    # GQA: 8 KV heads x 128 dims, 80 layers, K and V, 2 bytes = 2 * 80 * 1024 * 2 = 327,680 bytes per token
    assert point.kv_cache.bytes_per_token == 327_680
    # 32 sequences of 4096 + 511 positions: 32 * 4607 * 327,680 = 48,307,896,320
    assert point.kv_cache.bytes_total == 48_307_896_320
    # per token, batch 1: layer q 8192^2 + k, v 2 * 8192 * 1024 + o 8192^2 + MLP 3 * 8192 * 28672
    # = 855,638,016; x 80 = 68,451,041,280; + head 8192 * 32000 = 262,144,000 -> 68,713,185,280;
    # attention 80 layers * 64 query heads * L * 256 = 1,310,720 * L (GQA shares K/V, not the MACs)
    for t in point.decode.per_token:
        assert t.macs == 32 * (68_713_185_280 + 1_310_720 * t.context_len)
    assert point.decode.per_token[0].macs == 2_370_662_563_840  # L = 4097
    # 511 steps at L = 4097 .. 4607: 32 * (511 * 68,713,185,280 + 1,310,720 * (4097 + 4607) * 511 / 2)
    assert point.decode.macs_total == 32 * (511 * 68_713_185_280 + 1_310_720 * (4097 + 4607) * 511 // 2)
    # prefill: 32 * (4096 * 68,451,041,280 + 262,144,000 + 80 * 64 * 4096^2 * 256)
    assert point.prefill.macs == 32 * (4096 * 68_451_041_280 + 262_144_000 + 80 * 64 * 4096**2 * 256)
    assert point.prefill.macs == llama_prefill_macs(8192, 64, 8, 28672, 32000, 80, 4096, B=32)
    # weights: 68,976,648,192 params x 2 bytes
    assert report.weights_bytes == 137_953_296_384
    assert report.problems == []


def test_kv_dtype_and_sweep(llama7b) -> None:
    report = analyze_llm(llama7b, [64, 128], [3], [1, 2], kv_dtype="fp8")
    assert [(p.batch_size, p.prompt_len) for p in report.points] == [(1, 64), (1, 128), (2, 64), (2, 128)]
    # fp8: one byte per element, 262,144 elements per token
    assert {p.kv_cache.bytes_per_token for p in report.points} == {262_144}
    # batch 2 doubles every MAC of batch 1 (same P)
    assert report.points[2].decode.macs_total == 2 * report.points[0].decode.macs_total
    assert any("quantisation scales" in n for n in report.notes)


def test_bounds_on_h100(llama7b) -> None:
    report = analyze_llm(llama7b, [2048], [128], [1])
    gpu = spec_from_table("H100 SXM")
    add_bounds(report, gpu)
    point = report.points[0]
    b = point.bounds
    assert b.precision == "fp16" and b.peak_tflops == gpu.peak_tflops["fp16"] and b.bandwidth_gbps == 3350
    first = point.decode.per_token[0]
    # the first decode step is memory-bound: bytes / 3350 GB/s (its FLOPs take far less at 989 TFLOP/s)
    assert b.tpot_first_ms == pytest.approx(first.bytes / 3350e9 * 1e3)
    assert b.bound_by == {"prefill": "compute", "decode": "memory"}
    # TTFT: prefill FLOPs / peak
    assert b.ttft_ms == pytest.approx(point.prefill.flops / (gpu.peak_tflops["fp16"] * 1e12) * 1e3)
    # every step memory-bound and bytes linear in L: the mean step is the middle one's time
    last = point.decode.per_token[-1]
    assert b.tpot_ms == pytest.approx((first.bytes + last.bytes) / 2 / 3350e9 * 1e3)
    # max batch: (80e9 - 13,476,831,232) // (524,288 * (2048 + 128)) = 66,523,168,768 // 1,140,850,688 = 58
    assert b.max_batch == 58
    # MHA at 2048 positions never turns compute-bound: a sequence's KV (1.07 GB) outweighs its 14 GFLOPs
    assert b.compute_bound_batch is None
    assert b.tokens_per_second == pytest.approx(128 / ((b.ttft_ms + b.tpot_ms * 127) / 1e3))


def test_compute_bound_batch_gqa(llama70b) -> None:
    report = analyze_llm(llama70b, [16], [2], [1])
    gpu = spec_from_table("H100 SXM")
    point = report.points[0]
    b = bounds(point, report.weights_bytes, report.weights_read_bytes, gpu, "fp16")
    # B* = ceil((W / bw) / (f / peak - k / bw)) with f the FLOPs and k the KV bytes of one sequence at L = 17
    t = point.decode.per_token[-1]
    peak, bw = gpu.peak_tflops["fp16"] * 1e12, 3350e9
    margin = t.flops / peak - 327_680 * 17 / bw
    expected = -(-report.weights_read_bytes / bw // margin)
    assert b.compute_bound_batch == int(expected)
    # the weights alone (138 GB) do not fit in 80 GB: no batch fits
    assert b.max_batch == 0


def test_hf_config_file_and_folder(tmp_path) -> None:
    from transformers import LlamaConfig

    LlamaConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=128).save_pretrained(tmp_path)
    for source in (str(tmp_path), str(tmp_path / "config.json")):
        lm = load_causal_lm(source, "fp16")
        report = analyze_llm(lm, [16], [5], [2])
        point = report.points[0]
        # KV: K and V x 2 layers x 2 KV heads x 16 dims = 128 elements, 256 bytes in fp16
        assert point.kv_cache.bytes_per_token == 256
        # per token linears 2 * (2*64^2 + 2*64*32 + 3*64*128) = 73,728, head 64,000; attention 2 layers x
        # 4 heads x 32 (q.k + v) = 256 per position; batch 2
        for t in point.decode.per_token:
            assert t.macs == 2 * (73_728 + 64_000 + 256 * t.context_len) == llama_decode_macs(
                64, 4, 2, 128, 1000, 2, t.context_len, B=2)
        # prefill 2 * (16 * 73,728 + 64,000 + 2 * 4 * 16^2 * 32) = 2,618,368 (the head on the last position)
        assert point.prefill.macs == 2_618_368 and point.prefill.logits == "last"
        # params 2 * 36,992 + 2 norms... = 202,048 (embed 64,000 + head 64,000 + 2 * 36,992 + final norm 64)
        assert report.params == 202_048 and report.weights_read_bytes == (202_048 - 64_000) * 2


def test_json_keys(llama7b) -> None:
    from modelcost.report.llm import llm_to_dict

    report = analyze_llm(llama7b, [32], [3], [1])
    add_bounds(report, spec_from_table("H100 SXM"))
    doc = json.loads(json.dumps(llm_to_dict(report)))
    assert doc["weights_bytes"] == 13_476_831_232
    assert doc["kv_cache"]["bytes_per_token"] == 524_288 and doc["kv_cache"]["bytes_per_sequence"] == 524_288 * 34
    assert set(doc["prefill"]) >= {"macs", "flops"}
    assert [t["context_len"] for t in doc["decode"]["per_token"]] == [33, 34]
    assert set(doc["decode"]["per_token"][0]) >= {"context_len", "macs", "flops", "bytes"}
    assert doc["decode"]["macs_total"] == 2 * 6_607_077_376 + 262_144 * (33 + 34)
    assert set(doc["bounds"]) >= {"ttft_ms", "tpot_ms", "max_batch", "tokens_per_second"}
    assert doc["benchmarks"] == [] and len(doc["points"]) == 1


def test_not_a_decoder() -> None:
    from modelcost.core.errors import ModelcostError

    with pytest.raises(ModelcostError, match="takes no KV cache"):
        load_causal_lm("zoo:resnet18", "fp16")
    with pytest.raises(ModelcostError, match="not a causal LM source"):
        load_causal_lm("nothing_here.bin", "fp16")
    with pytest.raises(ModelcostError, match="--dtype"):
        load_causal_lm("zoo:llama-tiny", "int3")


def test_factory_returning_a_transformers_model(tmp_path) -> None:
    factory = tmp_path / "tiny_lm.py"
    factory.write_text(
        "from transformers import LlamaConfig, LlamaForCausalLM\n\n"
        "def build():\n"
        "    return LlamaForCausalLM(LlamaConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2,\n"
        "        num_attention_heads=4, num_key_value_heads=2, intermediate_size=128))\n")
    lm = load_causal_lm(f"{factory}:build", "fp16")
    assert lm.family == "transformers" and lm.config is not None
    point = analyze_llm(lm, [16], [3], [1]).points[0]
    # the same model as test_hf_config_file_and_folder, batch 1: 73,728 + 64,000 + 256 per position
    assert [t.macs for t in point.decode.per_token] == [137_728 + 256 * 17, 137_728 + 256 * 18]
    assert point.kv_cache.bytes_per_token == 256
