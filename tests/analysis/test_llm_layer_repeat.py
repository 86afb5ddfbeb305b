"""Decoder layers counted once per kind and repeated (``analysis.layer_repeat``, issue 25's 10 s bar): the same
figures as counting every layer, on every architecture family the LLM tests cover; the published Mixtral-8x7B
and DeepSeek-V3 (benchmarks/configs) counted through a few layers, with hand-derived figures; and a model
whose alike-looking layers count differently is counted layer by layer."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest

from modelcost.analysis import layer_repeat
from modelcost.analysis.llm import analyze_llm
from modelcost.core.llm import LayerKind, RepeatedLayers
from modelcost.loaders.llm_loader import load_causal_lm

CONFIGS = Path(__file__).resolve().parents[2] / "benchmarks" / "configs"

# tiny configs of the architectures issue 25 names; (config, decoder layers counted in the first forward and in
# the later ones, kinds as (first, layers))
TINY = {
    # one kind: two layers counted and compared in the prefill, one in the decode steps; the others repeated
    "mixtral": ({"model_type": "mixtral", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 4,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 64, "num_local_experts": 4,
                 "num_experts_per_tok": 2, "max_position_embeddings": 64}, (2, 1), [(0, 4)]),
    # two dense layers, then MoE layers with MLA: layers 0-3 (two of each kind), then 0-2
    "deepseek_v3": ({"model_type": "deepseek_v3", "hidden_size": 32, "intermediate_size": 48,
                     "moe_intermediate_size": 16, "num_hidden_layers": 5, "first_k_dense_replace": 2,
                     "num_attention_heads": 2, "num_key_value_heads": 2, "n_routed_experts": 8,
                     "n_shared_experts": 1, "num_experts_per_tok": 2, "n_group": 2, "topk_group": 1,
                     "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2,
                     "v_head_dim": 4, "vocab_size": 64, "max_position_embeddings": 64}, (4, 3), [(0, 2), (2, 3)]),
    # local (window 8) and global layers alternate: kinds by cache layer and layer type; prompt past the window
    "gemma2": ({"model_type": "gemma2", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 6,
                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 64,
                "sliding_window": 8, "max_position_embeddings": 64}, (4, 2), [(0, 3), (1, 3)]),
    # layer 1 is a dense MLP among MoE layers (mlp_only_layers): a kind of its own, counted once
    "qwen3_moe": ({"model_type": "qwen3_moe", "hidden_size": 32, "intermediate_size": 48,
                   "moe_intermediate_size": 16, "num_hidden_layers": 5, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 8, "num_experts": 8, "num_experts_per_tok": 2,
                   "vocab_size": 64, "max_position_embeddings": 64, "mlp_only_layers": [1]}, (3, 2), [(0, 4), (1, 1)]),
    # a window on every layer (the prompt is past it) and a tied head
    "mistral": ({"model_type": "mistral", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 64, "sliding_window": 8,
                 "max_position_embeddings": 64, "tie_word_embeddings": True}, (2, 1), [(0, 3)]),
}


def _config(tmp_path: Path, name: str, data: dict) -> str:
    path = tmp_path / name / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return str(path)


def _figures(report) -> dict:
    """Everything the report says but how the layers were counted."""
    plain = dataclasses.asdict(report)
    plain.pop("repeated_layers")
    plain["notes"] = [n for n in plain["notes"] if not n.startswith("decoder layers:")]
    return plain


@pytest.mark.parametrize("name", list(TINY))
def test_repeated_layers_give_the_figures_of_every_layer(tmp_path, name) -> None:
    """Prefill (with the window's fix), three counted decode steps, KV cache, peak, notes, the eager calls: all
    equal to the count of every layer."""
    data, counted, kinds = TINY[name]
    lm = load_causal_lm(_config(tmp_path, name, data), "fp32")
    every_counts, repeated_counts = {}, {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        every = analyze_llm(lm, [12], [4], [2], repeat_layers=False, layer_counts=every_counts)
    # the cache goes in under the name the forward declares: no deprecation warning at every call
    assert not [w for w in caught if "past_key_values" in str(w.message)], [str(w.message) for w in caught]
    repeated = analyze_llm(lm, [12], [4], [2], layer_counts=repeated_counts)
    assert every.repeated_layers is None
    assert repeated.repeated_layers is not None
    shortcut = repeated.repeated_layers
    assert (shortcut.layers, shortcut.counted_first, shortcut.counted) == (data["num_hidden_layers"], *counted)
    assert [(k.first, k.layers) for k in shortcut.kinds] == kinds
    assert _figures(repeated) == _figures(every)
    # the host model's call counts (CostReport.eager_ops) of the prefill and a decode step: the recorder's
    # 'launches' tally is repeated with the layers
    for point, counts in every_counts.items():
        assert [c.eager_ops for c in counts] == [c.eager_ops for c in repeated_counts[point]]
        assert all(c.eager_ops.kernel_ops > data["num_hidden_layers"] * 10 for c in counts)


def test_a_decoder_of_different_layers_is_counted_whole(tmp_path) -> None:
    """Two layers of two kinds (a MoE layer, then a dense one): one of each kind is every layer, so there is no
    plan."""
    data = dict(TINY["qwen3_moe"][0], num_hidden_layers=2)
    lm = load_causal_lm(_config(tmp_path, "two", data), "fp32")
    assert layer_repeat.plan(lm.module, lm.new_cache(), lm.config, "model.") is None
    assert analyze_llm(lm, [4], [2], [1]).repeated_layers is None


def test_layers_alike_in_structure_that_count_differently_are_counted_one_by_one(tmp_path, monkeypatch) -> None:
    """A layer whose cost depends on something the signature cannot see (here: which instance it is) makes the
    two counted layers of its kind disagree: every layer is counted, with a note that says why."""
    from transformers.models.mixtral import modeling_mixtral

    lm = load_causal_lm(_config(tmp_path, "odd", TINY["mixtral"][0]), "fp32")
    plain = analyze_llm(lm, [4], [2], [1])
    odd = lm.module.model.layers[1].self_attn.o_proj
    forward = modeling_mixtral.MixtralAttention.forward

    def twice_in_layer_1(self, *args, **kwargs):
        out = forward(self, *args, **kwargs)
        if self.o_proj is odd:
            self.o_proj(out[0])  # one more 32 x 32 projection per token, in layer 1 only
        return out

    monkeypatch.setattr(modeling_mixtral.MixtralAttention, "forward", twice_in_layer_1)
    every = analyze_llm(lm, [4], [2], [1], repeat_layers=False)
    tried = analyze_llm(lm, [4], [2], [1])
    assert plain.repeated_layers is not None and tried.repeated_layers is None
    assert "every decoder layer counted: decoder layers 0 and 1 are alike in structure but did not count alike" \
        in tried.notes
    assert tried.points == every.points
    # layer 1's extra projection: 4 prompt tokens x 32 x 32 MACs more in the prefill
    assert tried.points[0].prefill.macs == plain.points[0].prefill.macs + 4 * 32 * 32


@pytest.mark.slow
@pytest.mark.parametrize("name, counted, kinds, figures", [
    # Mixtral-8x7B (tests/analysis/test_llm_moe.py derives each figure): 32 layers of one kind, two counted in the
    # prefill, one in the decode steps.
    # Parameters 46,702,792,704, active 12,879,925,248; KV 32 layers x (K, V) x 8 heads x 128 x 2 B = 131,072 B
    # per token; prefill 512 x 12,617,515,008 + head 131,072,000 + attention 68,719,476,736; decode at L = 513
    # 12,617,515,008 + 131,072,000 + 32 x 32 x 513 x 256
    ("mixtral-8x7b", (2, 1), [LayerKind("MixtralDecoderLayer", 0, 32)],
     (46_702_792_704, 12_879_925_248, 131_072, 6_529_018_232_832, 12_883_066_880)),
    # DeepSeek-V3 (h 7168, 128 heads, MLA q rank 1536, kv rank 512, nope 128, rope 64, v 128): 3 dense layers
    # and 58 MoE layers: layers 0-4 counted in the prefill (two of each kind: 0, 1 and 3, 4), 0-3 after.
    # Per layer: attention q_a 7168 x 1536 = 11,010,048, q_b 1536 x 128 x 192 = 37,748,736, kv_a 7168 x 576 =
    # 4,128,768, kv_b 512 x 128 x 256 = 16,777,216, o 16384 x 7168 = 117,440,512 (187,105,280 MACs per token;
    # + norms 1536 + 512 parameters); norms 2 x 7168. Dense MLP 3 x 7168 x 18432 = 396,361,728; MoE: router
    # 256 x 7168 = 1,835,008, expert 3 x 7168 x 2048 = 44,040,192, 256 routed + 1 shared. Parameters:
    # 3 x 583,483,392 + 58 x 11,507,286,016 + embedding and head 2 x 129280 x 7168 + norm 7168 =
    # 671,026,404,352; active: - 58 x 248 x 44,040,192. KV: the latent 61 x (512 + 64) x 2 B = 70,272 per token.
    # MACs per token: 61 x 187,105,280 + 3 x 396,361,728 + 58 x (1,835,008 + 9 x 44,040,192) = 35,697,917,952;
    # attention per query/key pair 61 x 128 x (192 + 128) = 2,498,560; head 129280 x 7168 = 926,679,040.
    # Prefill 512 x 35,697,917,952 + 2,498,560 x 512^2 + head; a decode step at L = 513 re-expands the 513
    # cached latents through kv_b: 35,697,917,952 + 61 x 512 x 16,777,216 + 2,498,560 x 513 + head
    ("deepseek-v3", (5, 4), [LayerKind("DeepseekV3DecoderLayer", 0, 3), LayerKind("DeepseekV3DecoderLayer", 3, 58)],
     (671_026_404_352, 671_026_404_352 - 58 * 248 * 44_040_192, 70_272,
      512 * 35_697_917_952 + 2_498_560 * 512**2 + 926_679_040,
      35_697_917_952 + 61 * 512 * 16_777_216 + 2_498_560 * 513 + 926_679_040)),
])
def test_published_models_count_a_few_layers(name, counted, kinds, figures) -> None:
    """The configs BENCHMARKS.md times (issue 25: under 10 s and 1 GB): counted through a few of their layers."""
    report = analyze_llm(load_causal_lm(str(CONFIGS / name / "config.json"), "bf16"), [512], [2], [1])
    point = report.points[0]
    assert report.repeated_layers == RepeatedLayers(sum(k.layers for k in kinds), *counted, kinds)
    assert report.complete and report.uncounted == {} and not report.problems
    assert (report.params, report.params_active, point.kv_cache.bytes_per_token, point.prefill.macs,
            point.decode.per_token[0].macs) == figures


def test_the_count_runs_with_the_long_lived_heap_frozen(monkeypatch) -> None:
    """While ``api.llm`` counts, torch, transformers and the model are out of the collector's sight (a full
    collection over them cost DeepSeek-V3's count 0.2 s each); they are back after."""
    import gc

    from modelcost import api
    from modelcost.analysis import llm

    seen = []
    count = llm.analyze_llm
    monkeypatch.setattr(llm, "analyze_llm", lambda *a, **k: (seen.append(gc.get_freeze_count()), count(*a, **k))[1])
    api.llm("zoo:llama-tiny", prompt_lens=[4], gen_lens=[2], dtype="fp32")
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == 0
