"""Issue 25's bar "no MoE or windowed model exits 0 with a missing or wrong figure, at fp16, bf16 or fp32": tiny
configs of the six architecture classes it names (Mixtral, Qwen3-MoE, DeepSeek-V2 with MLA, Mistral, Gemma-2,
Phi-3; windows shorter than the prompt), each through the command at all three dtypes. The dtype changes bytes
only: MACs and FLOPs are the same, weights and KV bytes are 4 bytes an element in fp32 and 2 in fp16 and bf16,
so a decode step at B = 1 (k experts read per MoE layer: a whole number) reads exactly twice the fp16 bytes in
fp32; every count is complete, with no uncounted op and no problem."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from modelcost.cli import app

ELEMENT_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def _config(name: str):
    import transformers

    tiny = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3, "vocab_size": 64,
            "max_position_embeddings": 64, "tie_word_embeddings": False}
    return {
        "Mixtral": transformers.MixtralConfig(num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                              num_experts_per_tok=2, **tiny),
        "Qwen3-MoE": transformers.Qwen3MoeConfig(num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                                 moe_intermediate_size=16, num_experts=8, num_experts_per_tok=2,
                                                 **tiny),
        "DeepSeek-V2": transformers.DeepseekV2Config(
            num_attention_heads=2, num_key_value_heads=2, q_lora_rank=None, kv_lora_rank=8, qk_nope_head_dim=4,
            qk_rope_head_dim=2, v_head_dim=4, first_k_dense_replace=1, n_routed_experts=4, n_shared_experts=1,
            num_experts_per_tok=2, moe_intermediate_size=16, topk_method="greedy", n_group=1, topk_group=1, **tiny),
        "Mistral": transformers.MistralConfig(num_attention_heads=4, num_key_value_heads=2, sliding_window=8, **tiny),
        "Gemma-2": transformers.Gemma2Config(num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                             query_pre_attn_scalar=16, sliding_window=8,
                                             **dict(tiny, tie_word_embeddings=True)),
        "Phi-3": transformers.Phi3Config(num_attention_heads=4, num_key_value_heads=4, sliding_window=7,
                                         original_max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
                                         eos_token_id=2, **tiny),
    }[name]


@pytest.mark.parametrize("name", ["Mixtral", "Qwen3-MoE", "DeepSeek-V2", "Mistral", "Gemma-2", "Phi-3"])
def test_every_dtype_counts_the_same_work_in_its_own_bytes(tmp_path, name) -> None:
    model = tmp_path / "config.json"
    model.write_text(_config(name).to_json_string())
    docs = {}
    for dtype in ELEMENT_BYTES:
        out = tmp_path / f"{dtype}.json"
        # P = 12 is past every window (8, 7): the windowed cache and prefill fix are in play
        result = CliRunner().invoke(app, ["llm", str(model), "--static", "-p", "12", "-g", "3", "--dtype", dtype,
                                          "--json", str(out)], terminal_width=250)
        assert result.exit_code == 0, f"{dtype}: {result.output}"
        assert "≥" not in result.output, dtype
        docs[dtype] = doc = json.loads(out.read_text())["llm"]
        assert doc["complete"] and doc["uncounted"] == {} and doc["problems"] == [], dtype
        assert doc["weights_bytes"] == doc["params"] * ELEMENT_BYTES[dtype], dtype
    fp16, fp32 = docs["fp16"], docs["fp32"]
    work = {dtype: (d["prefill"]["macs"], d["prefill"]["flops"], d["decode"]["macs_total"], d["decode"]["flops_total"])
            for dtype, d in docs.items()}
    assert work["bf16"] == work["fp32"] == work["fp16"]  # the same work in every dtype
    assert fp16["prefill"]["macs"] > 0 and fp16["decode"]["macs_total"] > 0
    # bytes: fp16 and bf16 alike, fp32 twice them (weights, KV per token and per sequence, a decode step's reads)
    for dtype in ("bf16", "fp32"):
        factor = ELEMENT_BYTES[dtype] // 2
        doc = docs[dtype]
        assert doc["kv_cache"]["bytes_per_token"] == factor * fp16["kv_cache"]["bytes_per_token"] > 0, dtype
        assert doc["kv_cache"]["bytes_per_sequence"] == factor * fp16["kv_cache"]["bytes_per_sequence"], dtype
        assert [t["bytes"] for t in doc["decode"]["per_token"]] == \
            [factor * t["bytes"] for t in fp16["decode"]["per_token"]], dtype
    if name in ("Mixtral", "Qwen3-MoE", "DeepSeek-V2"):
        assert fp32["moe"]["expert_bytes"] == 2 * fp16["moe"]["expert_bytes"] > 0
    if name in ("Mistral", "Gemma-2", "Phi-3"):  # the window caps the cache in every dtype
        assert any(g["window"] for g in fp32["kv_cache"]["layer_groups"])
