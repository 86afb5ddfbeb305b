"""``modelcost llm`` on multi-head latent attention (DeepSeek-V2/V3): the KV latent, the decode MACs as
transformers runs them (the latents re-expanded through kv_b_proj at every step) and as serving engines run them
(W_UK, W_UV absorbed, attention against the latent cache). Formulas: docs/COUNTING.md, "Multi-head latent
attention", and ``modelcost.analysis.llm_mla``.

Notation: d hidden, H heads, r kv_lora_rank, rq q_lora_rank, dn qk_nope_head_dim, dr qk_rope_head_dim, dv
v_head_dim, n layers, S key positions a decode step attends (the new one included), B batch. Per MLA layer and
sequence a decode step costs
    q  d H (dn + dr)  (or d rq + rq H (dn + dr)),  kv_a  d (r + dr),  o  H dv d      in both forms;
    as run:    S r H (dn + dv)  (kv_b_proj over the cache)  + H S (dn + dr) + H S dv  (attention);
    absorbed:  H dn r  (q_nope x W_UK) + H S (r + dr) + H S r  (attention on the latent) + H r dv  (x W_UV).

The MLP is kept dense in every config here (DeepSeek-V2-Lite with first_k_dense_replace = num_hidden_layers,
one SwiGLU of intermediate_size per layer: 3 d f MACs per token): the routed-expert (MoE) count is being made
exact separately, and these figures must not depend on it.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from modelcost.analysis.llm import analyze_llm
from modelcost.analysis.llm_mla import add_absorbed, layer_decode_macs, mla_shape
from modelcost.cli import app
from modelcost.core.llm import DecodeCost, DecodeTokenCost, GenerationPoint, KvCache, LlmReport, PrefillCost
from modelcost.loaders.llm_loader import load_causal_lm

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

# deepseek-ai/DeepSeek-V2-Lite's published config.json (cost-shaping keys), with the MLP made dense in all 27
# layers (it is "first_k_dense_replace": 1, then 64 routed + 2 shared experts of 1408)
V2_LITE_DENSE = {
    "model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944, "num_hidden_layers": 27,
    "num_attention_heads": 16, "num_key_value_heads": 16, "q_lora_rank": None, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
    "max_position_embeddings": 163840, "tie_word_embeddings": False, "attention_bias": False,
    "first_k_dense_replace": 27, "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2,
    "num_experts_per_tok": 6, "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 10000,
    "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1, "mscale": 0.707,
                     "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096},
}
# a scaled-down V2/V3 shape with a q_lora_rank (q = q_b_proj(norm(q_a_proj(h)))), dense MLP: counts in seconds
SMALL = {"model_type": "deepseek_v2", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 4, "q_lora_rank": 32, "kv_lora_rank": 16,
         "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8, "vocab_size": 128,
         "max_position_embeddings": 4096, "tie_word_embeddings": False, "first_k_dense_replace": 2,
         "n_routed_experts": 4, "moe_intermediate_size": 48}  # experts declared, never built (all layers dense)


def _config(tmp_path, data: dict, name: str = "config.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


@pytest.fixture(scope="module")
def v2_lite(tmp_path_factory):
    lm = load_causal_lm(_config(tmp_path_factory.mktemp("v2lite"), V2_LITE_DENSE), "bf16")
    return analyze_llm(lm, [512, 4096], [3], [1])


def test_v2_lite_shape_and_kv_latent(v2_lite) -> None:
    s = v2_lite.mla
    assert (s.layers, s.num_heads, s.hidden_size, s.q_lora_rank, s.kv_lora_rank) == (27, 16, 2048, None, 512)
    assert (s.qk_nope_head_dim, s.qk_rope_head_dim, s.v_head_dim) == (128, 64, 128)
    # the cache holds, per layer, the latent (512) and the shared RoPE key (64): 27 x 576 = 15,552 elements,
    # x 2 bytes (bf16) = 31,104 B per token (full multi-head K and V would be 27 x 16 x (192 + 128) x 2 = 276,480)
    assert s.latent_elements_per_token == 15_552
    for p in v2_lite.points:
        assert (p.kv_cache.elements_per_token, p.kv_cache.bytes_per_token) == (15_552, 31_104)
    # what transformers re-expands per cached position every step: 27 x 16 x (128 + 64 + 128) = 138,240 elements
    assert s.expanded_kv_elements_per_position == 138_240


def test_v2_lite_decode_as_run_and_absorbed(v2_lite) -> None:
    # per layer, d 2048, H 16, r 512, dn 128, dr 64, dv 128, no q_lora_rank:
    #   q 2048 x 16 x 192 = 6,291,456; kv_a 2048 x 576 = 1,179,648; o 16 x 128 x 2048 = 4,194,304 -> 11,665,408
    #   MLP (dense) 3 x 2048 x 10944 = 67,239,936                              -> 78,905,344 per layer
    #   as run:   S x (512 x 16 x 256 + 16 x 192 + 16 x 128) = 2,102,272 S
    #   absorbed: 16 x 128 x 512 + 16 x 512 x 128 = 2,097,152;  S x 16 x (576 + 512) = 17,408 S
    # 27 layers + head 2048 x 102400 = 209,715,200:
    #   as run   = 27 x 78,905,344 + 209,715,200 + 27 x 2,102,272 S = 2,340,159,488 + 56,761,344 S
    #   absorbed = 2,340,159,488 + 27 x 2,097,152 + 27 x 17,408 S    = 2,396,782,592 + 470,016 S
    # S = 513: as run 31,458,728,960 (about 31.5 G), absorbed 2,637,900,800 (about 2.6 G: 12x less);
    # S = 4097: as run 234,891,385,856, absorbed 4,322,438,144 (54x less)
    expected = {513: (31_458_728_960, 2_637_900_800), 4097: (234_891_385_856, 4_322_438_144)}
    for p in v2_lite.points:
        ran, absorbed = p.decode.per_token[0], p.decode_absorbed.per_token[0]
        assert (p.decode.form, p.decode_absorbed.form) == ("as-run", "absorbed-mla")
        assert (ran.macs, absorbed.macs) == expected[ran.context_len]
        assert absorbed.context_len == ran.context_len
        # FLOPs move by twice the MACs (softmax and scale are per score: the same H S scores in both forms)
        assert ran.flops - absorbed.flops == 2 * (ran.macs - absorbed.macs)
        assert p.decode.macs_per_context_position == 56_761_344
        assert p.decode_absorbed.macs_per_context_position == 470_016


def test_v2_lite_decode_bytes(v2_lite) -> None:
    # params: per layer q 6,291,456 + kv_a 1,179,648 + kv_a_layernorm 512 + kv_b 512 x 4096 = 2,097,152
    # + o 4,194,304 + MLP 67,239,936 + 2 norms 4,096 = 81,007,104; x 27 = 2,187,191,808; + embedding and head
    # 2 x 209,715,200 + final norm 2,048 = 2,606,624,256. A step reads all but the embedding table, x 2 B:
    # 2,396,909,056 x 2 = 4,793,818,112, + one embedding row 2048 x 2 = 4,096 -> 4,793,822,208
    assert v2_lite.params == 2_606_624_256
    assert v2_lite.weights_read_bytes == 4_793_818_112
    # both forms read the same weights (W_UK, W_UV are kv_b_proj's halves) and the latent cache, 31,104 B x S:
    # S = 513: 4,793,822,208 + 15,956,352 = 4,809,778,560;  S = 4097: + 127,433,088 = 4,921,255,296
    expected = {513: 4_809_778_560, 4097: 4_921_255_296}
    for p in v2_lite.points:
        for ran, absorbed in zip(p.decode.per_token, p.decode_absorbed.per_token, strict=True):
            assert ran.bytes == absorbed.bytes == 4_793_822_208 + 31_104 * ran.context_len
        assert p.decode_absorbed.per_token[0].bytes == expected[p.decode.per_token[0].context_len]


def test_layer_formula_with_q_lora_rank(tmp_path) -> None:
    lm = load_causal_lm(_config(tmp_path, SMALL), "fp32")
    s = mla_shape(lm.module)
    assert (s.layers, s.q_lora_rank, s.kv_lora_rank) == (2, 32, 16)
    # d 64, H 4, rq 32, r 16, dn 8, dr 4, dv 8: q 64 x 32 + 32 x 4 x 12 = 3,584; kv_a 64 x 20 = 1,280;
    # o 4 x 8 x 64 = 2,048 -> 6,912 in both forms
    # as run:   S x (16 x 4 x 16 + 4 x 12 + 4 x 8) = 1,104 S;  absorbed: 4 x 8 x 16 + 4 x 16 x 8 = 1,024 + 4 x 36 S
    assert layer_decode_macs(s, 10, absorbed=False) == 6_912 + 1_104 * 10
    assert layer_decode_macs(s, 10, absorbed=True) == 6_912 + 1_024 + 144 * 10


def test_small_batch_totals_over_the_steps(tmp_path) -> None:
    lm = load_causal_lm(_config(tmp_path, SMALL), "fp32")
    report = analyze_llm(lm, [6], [5], [2])
    p = report.points[0]
    # per token, 2 layers, MLP 3 x 64 x 96 = 18,432 per layer, head 64 x 128 = 8,192:
    #   as run   2 x (6,912 + 18,432) + 8,192 + 2 x 1,104 S = 58,880 + 2,208 S
    #   absorbed 2 x (6,912 + 1,024 + 18,432) + 8,192 + 2 x 144 S = 60,928 + 288 S;  x B = 2
    assert [t.context_len for t in p.decode.per_token] == [7, 8, 10]  # G = 5: steps at S = 7..10, 3 counted
    for ran, absorbed in zip(p.decode.per_token, p.decode_absorbed.per_token, strict=True):
        assert ran.macs == 2 * (58_880 + 2_208 * ran.context_len)
        assert absorbed.macs == 2 * (60_928 + 288 * ran.context_len)
    # totals over S = 7..10 (sum of S = 34): 2 x (4 x 60,928 + 288 x 34) = 507,008
    assert p.decode_absorbed.macs_total == 507_008
    assert p.decode.macs_total == 2 * (4 * 58_880 + 2_208 * 34)
    assert p.decode.flops_total - p.decode_absorbed.flops_total == 2 * (p.decode.macs_total - 507_008)
    # KV 2 x (16 + 4) = 40 elements x 4 B = 160 B per token. Weights read: params per layer q_a 2,048 + norm 32
    # + q_b 1,536 + kv_a 1,280 + norm 16 + kv_b 16 x 64 = 1,024 + o 2,048 + MLP 18,432 + 2 norms 128 = 26,544;
    # x 2 + head 8,192 + final norm 64 = 61,344 (the embedding is gathered) x 4 B = 245,376, + B rows 2 x 256:
    # 245,888 per step; total 4 x 245,888 + B x 160 x 34 = 994,432
    assert p.kv_cache.bytes_per_token == 160
    assert p.decode_absorbed.bytes_total == 994_432 == p.decode.bytes_total


def test_other_attention_has_no_mla(tmp_path) -> None:
    tiny = {"model_type": "llama", "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 1,
            "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64}
    report = analyze_llm(load_causal_lm(_config(tmp_path, tiny), "fp32"), [4], [3], [1])
    assert report.mla is None and report.points[0].decode_absorbed is None
    assert report.points[0].decode.form == "as-run"


def _point(kv_elements: int, slope: int) -> GenerationPoint:
    steps = [DecodeTokenCost(2, 5, 100, 200, 10, 20.0), DecodeTokenCost(3, 6, 100 + slope, 200, 10, 20.0)]
    return GenerationPoint(1, 4, 3, KvCache("fp32", kv_elements, 4 * kv_elements, 0, 0),
                           PrefillCost(4, 0, 0, 1, 0.0, "last", 0), DecodeCost(2, steps, 0, 0, 0, slope), 0)


def test_a_decode_that_is_not_re_expanding_gets_no_absorbed_figure(tmp_path) -> None:
    lm = load_causal_lm(_config(tmp_path, SMALL), "fp32")
    s = mla_shape(lm.module)
    report = LlmReport("m", "m", "fp32", 0, 0, {}, 0, [], mla=s)
    # a cache of full K and V (older transformers): 2 x 4 x (12 + 8) = 160 elements per token, not the 40 latent
    expanded = _point(160, 2 * 1_104)
    add_absorbed(report, expanded, 0)
    assert expanded.decode_absorbed is None
    assert "cache holds 160 elements per token, not the latent's 40" in report.notes[-1]
    # the latent cache but a step that does not grow by 2 layers x 1,104 MACs per position
    odd = _point(40, 7)
    add_absorbed(report, odd, 0)
    assert odd.decode_absorbed is None
    assert "grows by 7 MACs per cached position, not the 2,208 of re-expanding" in report.notes[-1]


def test_cli_labels_both_forms(tmp_path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["llm", _config(tmp_path, SMALL), "--static", "-p", "6", "-g", "5", "-b", "2",
                                      "--dtype", "fp32", "--json", str(out)], terminal_width=250)
    assert result.exit_code == 0, result.output
    assert "as transformers runs it" in result.output
    assert "absorbed" in result.output and "FlashMLA" in result.output
    llm = json.loads(out.read_text())["llm"]
    assert llm["mla"]["kv_lora_rank"] == 16 and llm["mla"]["q_lora_rank"] == 32
    assert llm["decode"]["form"] == "as-run"
    assert llm["decode_absorbed"]["form"] == "absorbed-mla"
    assert llm["decode_absorbed"]["macs_total"] == 507_008
