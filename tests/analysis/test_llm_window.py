"""``modelcost llm`` on sliding-window and local/global attention (Mistral-7B, Gemma-2-9B, Phi-3-mini), the
attention implementation it picks, models bigger than the card, and ``--tp`` bounds (issue 25).

The models are their published configs (transformers config classes, no download) with 2 decoder layers
instead of 32 / 42 / 32, so that counting on meta stays fast; every width, head count and window is the real
one, and a figure per layer scales to the full model by its layer count. Notation: h hidden, H query heads,
K KV heads, d head dim, f MLP width, V vocab, W window, B batch, P prompt, G generated tokens, L key positions
a decode step attends (the new token included); a decode step of a windowed layer reads min(L, W) of them.
Every number below is derived by hand next to its assertion.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from modelcost.analysis import llm_window as win
from modelcost.analysis.llm import analyze_llm
from modelcost.analysis.llm_bounds import add_bounds
from modelcost.cli import app
from modelcost.core.errors import ModelcostError
from modelcost.hardware.specs import spec_from_table
from modelcost.loaders.llm_loader import load_causal_lm


def _load(tmp_path_factory, name: str, config) -> object:
    folder = tmp_path_factory.mktemp(name)
    config.save_pretrained(folder)
    return load_causal_lm(str(folder), "fp16")


@pytest.fixture(scope="module")
def mistral(tmp_path_factory):
    from transformers import MistralConfig

    # Mistral-7B: h 4096, H 32, K 8, d 128, f 14336, V 32000, W 4096 (MistralConfig's defaults are Mistral-7B's)
    return _load(tmp_path_factory, "mistral", MistralConfig(num_hidden_layers=2))


@pytest.fixture(scope="module")
def gemma2(tmp_path_factory):
    from transformers import Gemma2Config

    # Gemma-2-9B's config.json: h 3584, H 16, K 8, d 256, f 14336, V 256000, W 4096, layers alternating
    # local (sliding) / global starting with a local one; the head is tied to the embedding
    return _load(tmp_path_factory, "gemma2", Gemma2Config(
        hidden_size=3584, intermediate_size=14336, num_attention_heads=16, num_key_value_heads=8, head_dim=256,
        query_pre_attn_scalar=256, sliding_window=4096, num_hidden_layers=2))


@pytest.fixture(scope="module")
def phi3(tmp_path_factory):
    from transformers import Phi3Config

    # Phi-3-mini-4k: h 3072, H = K = 32, d 96, f 8192, V 32064 (Phi3Config's defaults), W 2047 (its config.json)
    return _load(tmp_path_factory, "phi3", Phi3Config(num_hidden_layers=2, sliding_window=2047))


# --- pure arithmetic ---------------------------------------------------------------------------------------

def test_prefill_pairs_by_hand() -> None:
    # full attention over P = 5: 25 pairs; causal: 1 + 2 + 3 + 4 + 5 = 15 = 5 * 6 / 2
    assert win.prefill_pairs(5, None, "full") == 25 and win.prefill_pairs(5, None, "causal") == 15
    # window 3 over P = 5, causal: queries see 1, 2, 3, 3, 3 keys = 12 = 3 * 4 / 2 + (5 - 3) * 3
    assert win.prefill_pairs(5, 3, "causal") == 12
    # window 3 over P = 5, full: every query against the 3 keys of its window: 15
    assert win.prefill_pairs(5, 3, "full") == 15
    # a window no shorter than P changes nothing
    assert win.prefill_pairs(5, 8, "causal") == 15 and win.prefill_pairs(5, 8, "full") == 25
    for prompt in range(1, 12):
        for window in (None, 1, 2, 4, 7):
            assert win.prefill_pairs(prompt, window, "causal") == sum(
                min(i, window or i) for i in range(1, prompt + 1))


def test_series_total_is_the_sum_of_every_step() -> None:
    # c(L) = 100 + 3 L + 5 min(L, 10) over L = 4 .. 17: exact through the nodes 4, 10 (the window), 17
    def cost(ctx: int) -> int:
        return 100 + 3 * ctx + 5 * min(ctx, 10)

    nodes, checks = win.decode_contexts(4, 17, [10, None])
    assert nodes == [4, 10, 17] and checks == []  # the middle, 10, is a node
    assert win.series_total({c: cost(c) for c in nodes}) == sum(cost(c) for c in range(4, 18))
    assert win.last_slope({c: cost(c) for c in nodes}) == 3  # past the window only the full part grows
    nodes, checks = win.decode_contexts(4, 17, [None])
    assert nodes == [4, 17] and checks == [10]
    assert win.interpolate({4: 10, 17: 36}, 10) == 22  # 10 + (36 - 10) * 6 / 13


def test_twin_prompts_stay_on_the_side_of_each_window() -> None:
    # transformers skips a layer's sliding mask while P < W: P = 6 with W = 8 pairs with 7 and 5, not 8
    assert win.twin_prompts(6, [8]) == (7, 5)
    assert win.twin_prompts(7, [8]) == (6, 5)
    assert win.twin_prompts(8, [8]) == (9, 10)  # from P = W on the mask is always there
    assert win.twin_prompts(2, [None]) == (3, 4)  # P = 1 is its own case (a single query)


# --- Mistral-7B: every layer has a window of 4096 -----------------------------------------------------------

MISTRAL_LINEARS = 2 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)  # 2 layers: 436,207,616 per token
MISTRAL_HEAD = 4096 * 32000  # 131,072,000
MISTRAL_PAIR = 2 * 32 * 256  # attention MACs per query/key pair: 2 layers x H 32 x (d + d) = 16,384


def test_mistral_kv_decode_and_bytes(mistral) -> None:
    report = analyze_llm(mistral, [2048], [4096], [1, 64])
    assert report.problems == [] and report.attn_implementation == "sdpa"
    one, many = report.points
    kv = one.kv_cache
    # K and V x K 8 x d 128 x 2 bytes = 4,096 B per layer per token; 2 layers 8,192 (x 16 for the real 32
    # layers: 131,072 B/token)
    assert kv.bytes_per_token == 8_192
    assert [(g.attention, g.window, g.layers, g.kv_heads, g.bytes_per_token) for g in kv.layer_groups] == [
        ("sliding", 4096, 2, 8, 8_192)]
    # per sequence at P = 2048: 2048 x 8,192; at P + G - 1 = 6143, past the window, capped at 4096 positions:
    # 4096 x 8,192 = 33,554,432 (the real model: 536,870,912 B, not 805 MB)
    assert kv.bytes_at_prompt == 16_777_216 and kv.bytes_per_sequence == 33_554_432
    assert many.kv_cache.bytes_total == 64 * 33_554_432
    # decode MACs at L: linears 436,207,616 + head 131,072,000 + 16,384 x min(L, 4096)
    dec = one.decode
    assert [t.context_len for t in dec.per_token] == [2049, 4096, 6143]  # ends + the window edge
    assert [t.macs for t in dec.per_token] == [600_850_432, 634_388_480, 634_388_480]
    # 4095 steps at L = 2049 .. 6143: sum of min(L, 4096) = (2049 + 4096) x 2048 / 2 + 2047 x 4096 = 14,676,992
    assert dec.macs_total == 4095 * (MISTRAL_LINEARS + MISTRAL_HEAD) + MISTRAL_PAIR * 14_676_992
    assert dec.macs_per_context_position == 0  # past the window no layer grows
    assert many.decode.macs_total == 64 * dec.macs_total
    # bytes of a step: weights read (1,396,744,192 - the gathered embedding 262,144,000 = 1,134,600,192)
    # + B embedding rows (8,192 B each) + B x 8,192 x min(L, 4096)
    read = 1_134_600_192
    assert report.weights_read_bytes == read
    assert dec.per_token[0].bytes == read + 8_192 + 8_192 * 2049  # B = 1, L = 2049
    assert dec.per_token[-1].bytes == read + 8_192 + 8_192 * 4096  # L = 6143 reads the 4096 of the window
    assert many.decode.per_token[-1].bytes == read + 64 * 8_192 + 64 * 8_192 * 4096 == 3_282_608_128
    assert dec.bytes_total == 4095 * (read + 8_192) + 8_192 * 14_676_992
    assert many.decode.bytes_total == 4095 * (read + 64 * 8_192) + 64 * 8_192 * 14_676_992
    # prefill at P = 2048 < W: every layer full, P x P pairs: 2048 x 436,207,616 + 131,072,000 + 16,384 x 2048^2
    assert one.prefill.macs == 2048 * MISTRAL_LINEARS + MISTRAL_HEAD + MISTRAL_PAIR * 2048**2 == 962_203_746_304
    assert one.prefill.bytes == read + 8_192 + 16_777_216  # weights, one embedding row, the KV written


def test_mistral_prefill_past_the_window(mistral) -> None:
    full = analyze_llm(mistral, [6144], [2], [1]).points[0]
    # P = 6144 > W: each query attends the 4096 keys of its window: 6144 x 4096 pairs per layer and head
    assert full.prefill.macs == 6144 * MISTRAL_LINEARS + MISTRAL_HEAD + MISTRAL_PAIR * 6144 * 4096
    assert full.prefill.macs == 3_092_507_525_120
    # the cache holds 4096 positions (8,192 B each), not P: the per-token figure is the growth, 8,192
    assert full.kv_cache.bytes_per_token == 8_192 and full.kv_cache.bytes_at_prompt == 4096 * 8_192
    causal = analyze_llm(mistral, [6144], [2], [1], attention="causal").points[0]
    # causal pairs: sum_{i=1..6144} min(i, 4096) = 4096 x 4097 / 2 + 2048 x 4096 = 16,779,264
    assert causal.prefill.macs == 6144 * MISTRAL_LINEARS + MISTRAL_HEAD + MISTRAL_PAIR * 16_779_264
    assert causal.prefill.macs == 2_955_102_126_080
    # FLOPs: each pair also costs 2 FLOPs per MAC + softmax 5 + scale 1 + the sliding mask 1 per head
    per_pair_flops = 2 * MISTRAL_PAIR + 2 * 32 * 7
    assert full.prefill.flops - causal.prefill.flops == per_pair_flops * (6144 * 4096 - 16_779_264)


# --- Gemma-2-9B: a local layer (window 4096) and a global one -----------------------------------------------

GEMMA_LINEARS = 2 * (3584 * 4096 + 2 * 3584 * 2048 + 4096 * 3584 + 3 * 3584 * 14336)  # 396,361,728 per token
GEMMA_HEAD = 3584 * 256000  # 917,504,000 (tied to the embedding)
GEMMA_PAIR = 16 * 512  # one layer: H 16 x (d + d) = 8,192 MACs per pair


def test_gemma2_from_config_json_runs_eager(gemma2) -> None:
    # transformers has no SDPA for Gemma-2 (logit soft-capping): the loader picks eager and says so
    assert gemma2.attn_implementation == "eager"
    report = analyze_llm(gemma2, [2048], [4096], [1, 64])
    assert report.problems == [] and report.attn_implementation == "eager"
    one, many = report.points
    kv = one.kv_cache
    # per layer K and V x K 8 x d 256 x 2 bytes = 8,192 B/token; the local and the global layer: 16,384
    # below the window (the real 42 layers: 21 x 2 x 8,192 = 344,064 B/token)
    assert kv.bytes_per_token == 16_384
    assert [(g.window, g.layers, g.bytes_per_token) for g in kv.layer_groups] == [(None, 1, 8_192),
                                                                                    (4096, 1, 8_192)]
    # at P = 2048: 2 x 8,192 x 2048; at 6143: global 8,192 x 6143 + local 8,192 x 4096 = 8,192 x 10,239
    assert kv.bytes_at_prompt == 33_554_432 and kv.bytes_per_sequence == 83_877_888
    # decode at L: 396,361,728 + 917,504,000 + 8,192 x (L + min(L, 4096))
    dec = one.decode
    assert [(t.context_len, t.macs) for t in dec.per_token] == [
        (2049, 1_347_436_544), (4096, 1_380_974_592), (6143, 1_397_743_616)]
    # sum over L = 2049 .. 6143 of L + min(L, 4096) = 8192 x 4095 / 2 + 14,676,992 = 31,450,112
    assert dec.macs_total == 4095 * (GEMMA_LINEARS + GEMMA_HEAD) + GEMMA_PAIR * 31_450_112
    assert dec.macs_per_context_position == GEMMA_PAIR  # past the window only the global layer grows
    assert many.decode.macs_total == 64 * dec.macs_total
    # bytes: the tied table is read whole by the head (2,627,795,968 B of weights, all read) + B rows of
    # 7,168 B + B x KV at L
    read = 2_627_795_968
    assert dec.per_token[0].bytes == read + 7_168 + 16_384 * 2049
    assert many.decode.per_token[-1].bytes == read + 64 * 7_168 + 64 * 83_877_888
    assert dec.bytes_total == 4095 * (read + 7_168) + 8_192 * 31_450_112
    assert many.decode.bytes_total == 4095 * (read + 64 * 7_168) + 64 * 8_192 * 31_450_112
    # prefill at P = 2048 (< W): both layers P x P
    assert one.prefill.macs == 2048 * GEMMA_LINEARS + GEMMA_HEAD + 2 * GEMMA_PAIR * 2048**2 == 881_385_799_680


def test_gemma2_prefill_local_and_global(gemma2) -> None:
    full = analyze_llm(gemma2, [6144], [2], [1]).points[0]
    # global layer 6144^2 pairs, local layer 6144 x 4096
    assert full.prefill.macs == 6144 * GEMMA_LINEARS + GEMMA_HEAD + GEMMA_PAIR * (6144**2 + 6144 * 4096)
    causal = analyze_llm(gemma2, [6144], [2], [1], attention="causal").points[0]
    # global 6144 x 6145 / 2 = 18,877,440; local 16,779,264 (as Mistral's)
    assert causal.prefill.macs == 6144 * GEMMA_LINEARS + GEMMA_HEAD + GEMMA_PAIR * (18_877_440 + 16_779_264)
    assert causal.prefill.macs == 2_728_263_680_000


def test_attention_implementation_choice(tmp_path) -> None:
    from transformers import Gemma2Config

    Gemma2Config(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 head_dim=8, intermediate_size=64, sliding_window=8).save_pretrained(tmp_path)
    assert load_causal_lm(str(tmp_path), "fp16", "eager").attn_implementation == "eager"
    with pytest.raises(ModelcostError, match="transformers builds no causal LM"):
        load_causal_lm(str(tmp_path), "fp16", "sdpa")  # Gemma-2 has none: transformers' own reason follows
    with pytest.raises(ModelcostError, match="--attn-implementation flash: choose one of sdpa, eager"):
        load_causal_lm(str(tmp_path), "fp16", "flash")
    with pytest.raises(ModelcostError, match="has one attention"):
        load_causal_lm("zoo:llama-tiny", "fp16", "eager")


# --- Phi-3-mini: every layer has a window of 2047 ----------------------------------------------------------

PHI_LINEARS = 2 * (3072 * 9216 + 3072 * 3072 + 3072 * 16384 + 8192 * 3072)  # fused qkv, o, gate_up, down
PHI_HEAD = 3072 * 32064  # 98,500,608
PHI_PAIR = 2 * 32 * 192  # 2 layers x H 32 x (d + d) = 12,288


def test_phi3_window_2047(phi3) -> None:
    report = analyze_llm(phi3, [1024], [2048], [1, 64])
    assert report.problems == []
    one, many = report.points
    # K and V x 32 heads x 96 x 2 bytes = 12,288 B per layer; 2 layers 24,576 (the real 32: 393,216)
    assert one.kv_cache.bytes_per_token == 24_576
    # at P = 1024: 1024 x 24,576; at 3071 past the window: 2047 x 24,576
    assert one.kv_cache.bytes_at_prompt == 25_165_824 and one.kv_cache.bytes_per_sequence == 50_307_072
    dec = one.decode
    # nodes 1025, 2047 (the window), 3071; the middle step 2048 checks the piecewise line
    assert [t.context_len for t in dec.per_token] == [1025, 2047, 2048, 3071]
    # decode at L: 226,492,416 + 98,500,608 + 12,288 x min(L, 2047)
    assert [t.macs for t in dec.per_token] == [337_588_224, 350_146_560, 350_146_560, 350_146_560]
    # 2047 steps: sum of min(L, 2047) for L = 1025 .. 3071 = (1025 + 2047) x 1023 / 2 + 1024 x 2047 = 3,667,456
    assert dec.macs_total == 2047 * (PHI_LINEARS + PHI_HEAD) + PHI_PAIR * 3_667_456
    assert many.decode.macs_total == 64 * dec.macs_total
    # weights 847,017,984 B, the embedding (32064 x 3072 x 2 = 197,001,216) gathered: 650,016,768 read
    read = 650_016_768
    assert dec.per_token[0].bytes == read + 6_144 + 24_576 * 1025
    assert many.decode.per_token[-1].bytes == read + 64 * 6_144 + 64 * 24_576 * 2047
    assert many.decode.bytes_total == 2047 * (read + 64 * 6_144) + 64 * 24_576 * 3_667_456
    assert one.prefill.macs == 1024 * PHI_LINEARS + PHI_HEAD + PHI_PAIR * 1024**2
    full = analyze_llm(phi3, [3072], [2], [1]).points[0]
    causal = analyze_llm(phi3, [3072], [2], [1], attention="causal").points[0]
    assert full.prefill.macs == 3072 * PHI_LINEARS + PHI_HEAD + PHI_PAIR * 3072 * 2047 == 773_154_865_152
    # causal: 2047 x 2048 / 2 + (3072 - 2047) x 2047 pairs
    assert causal.prefill.macs == 3072 * PHI_LINEARS + PHI_HEAD + PHI_PAIR * (2047 * 2048 // 2 + 1025 * 2047)


# --- bigger than the card; --tp -----------------------------------------------------------------------------

def test_does_not_fit_and_tp(mistral) -> None:
    from modelcost.report.llm import fit_lines

    report = analyze_llm(mistral, [2048], [4096], [1, 64])
    small = dataclasses.replace(spec_from_table("H100 SXM"), memory_bytes=1_000_000_000)
    add_bounds(report, small)
    b = report.points[0].bounds
    # weights 1,396,744,192 + one sequence's cache at P + G = 6144 positions (4096 x 8,192 = 33,554,432) > 1 GB
    assert not b.fits and b.memory_needed_bytes == 1_430_298_624 and b.max_batch == 0
    # two GPUs: 698,372,096 + 4 of the 8 KV heads (16,777,216) = 715,149,312 <= 1 GB
    assert b.gpus_needed == 2
    add_bounds(report, small, tp=2)
    b = report.points[0].bounds
    assert b.fits and b.tp == 2 and b.memory_needed_bytes == 715_149_312
    # (1e9 - 698,372,096) // 16,777,216 = 17 sequences per GPU pair
    assert b.max_batch == 17
    assert b.link == "NVLink 4 (NVSwitch)" and b.link_gbps == 900
    # all-reduces: 2 per layer x 2 layers x one hidden state (4096 x 2 B) = 32,768 B per token; a ring over 2
    # GPUs sends 2 x (2 - 1) / 2 = 1 x that at 450 GB/s one way
    assert b.allreduce_prefill_ms == pytest.approx(2048 * 32_768 / 450e9 * 1e3)
    assert b.allreduce_step_ms == pytest.approx(32_768 / 450e9 * 1e3)
    point = report.points[0]
    peak = small.peak_tflops["fp16"] * 1e12
    assert b.ttft_ms == pytest.approx(max(point.prefill.flops / (2 * peak), point.prefill.bytes / (2 * 3350e9)) * 1e3
                                      + b.allreduce_prefill_ms)
    assert b.tpot_first_ms == pytest.approx(point.decode.per_token[0].bytes / (2 * 3350e9) * 1e3
                                            + b.allreduce_step_ms)
    # batch 64 on the pair: the weights fit, the caches of only 17 sequences do
    assert report.points[1].bounds.fits and report.points[1].bounds.max_batch == 17
    assert fit_lines(report) == ["B=64 P=2048 G=4096 on 2 x H100 SXM: the caches of only 17 sequences fit beside "
                                 "the weights; the bounds of this row assume all 64 do"]


def test_cli_says_it_does_not_fit(tmp_path) -> None:
    from transformers import LlamaConfig

    # 1,000,000 x 4096 embedding + untied head = 8,192,000,000 params, 16.4 GB in fp16: over a T4's 16 GB
    LlamaConfig(vocab_size=1_000_000, hidden_size=4096, num_hidden_layers=1, num_attention_heads=32,
                num_key_value_heads=8, intermediate_size=11008).save_pretrained(tmp_path)
    out = tmp_path / "llm.json"
    result = CliRunner().invoke(app, ["llm", str(tmp_path), "--static", "-p", "16", "-g", "2", "--dtype", "fp16",
                                      "--target-gpu", "T4", "--json", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "does not fit" in result.output and "try --tp 2" in " ".join(result.output.split())
    bounds = json.loads(out.read_text())["llm"]["bounds"]
    assert bounds["fits"] is False and bounds["gpus_needed"] == 2 and bounds["max_batch"] == 0
    result = CliRunner().invoke(app, ["llm", str(tmp_path), "--static", "-p", "16", "-g", "2", "--dtype", "fp16",
                                      "--target-gpu", "T4", "--tp", "2"], terminal_width=200)
    assert result.exit_code == 0 and "does not fit" not in result.output
    assert "2 x T4" in result.output and "PCIe Gen3 x16" in result.output


def test_cli_attention_option_and_errors(tmp_path) -> None:
    out = tmp_path / "llm.json"
    args = ["llm", "zoo:llama-tiny", "--static", "-p", "16", "-g", "2", "--dtype", "fp16"]
    full = CliRunner().invoke(app, [*args, "--json", str(out)])
    assert full.exit_code == 0, full.output
    full_macs = json.loads(out.read_text())["llm"]["prefill"]["macs"]
    result = CliRunner().invoke(app, [*args, "--attention", "causal", "--json", str(out)])
    assert result.exit_code == 0, result.output
    llm = json.loads(out.read_text())["llm"]
    assert llm["attention"] == "causal" and llm["attn_implementation"] == "sdpa"
    # llama-tiny: 2 layers x 4 heads x (32 + 32) = 512 MACs per pair; causal drops 16^2 - 16 x 17 / 2 = 120 pairs
    assert full_macs - llm["prefill"]["macs"] == 512 * 120
    bad = CliRunner().invoke(app, [*args, "--attention", "half"])
    assert bad.exit_code == 1 and "--attention half: choose one of full, causal" in bad.output
    import torch

    if not torch.cuda.is_available():  # no --target-gpu and no GPU here: nothing to split over
        no_gpu = CliRunner().invoke(app, [*args, "--tp", "2"])
        assert no_gpu.exit_code == 1 and "--tp 2: bounds need a GPU" in no_gpu.output
