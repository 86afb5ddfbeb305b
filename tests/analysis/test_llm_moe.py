"""Mixture-of-experts models counted right (issue 25 item 1): routed experts by grouped GEMMs, routing ops,
total and active parameters, expected expert reads per step, and the partial-result contract of ``llm``.

Notation: h hidden, f one expert's SwiGLU width, E routed experts per MoE layer, k experts per token, n layers,
V vocab, T tokens in a forward (B x P for a prefill, B for a decode step). One SwiGLU expert is 3 h f parameters
and 3 h f MACs per token it sees; every token visits exactly k experts, so a MoE layer's routed MACs are
T k 3 h f whatever the routing.
"""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from modelcost.analysis import llm_moe
from modelcost.analysis.llm import analyze_llm
from modelcost.analysis.torch_counter import analyze_module
from modelcost.cli.app import app
from modelcost.core.errors import ModelcostError
from modelcost.core.llm import MoeSpec, Routing
from modelcost.loaders.llm_loader import load_causal_lm


class _GroupedExperts(torch.nn.Module):
    """x (S, K) times E stacked (K, N) weights, the rows grouped by ``offs`` (what transformers' grouped_mm
    experts implementation runs)."""

    def __init__(self, experts: int, k_dim: int, n_dim: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.empty(experts, k_dim, n_dim, dtype=dtype))

    def forward(self, x: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.grouped_mm(x, self.w, offs=offs)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_grouped_mm_counted_on_meta_in_every_dtype(dtype) -> None:
    """The meta kernel of aten._grouped_mm takes bf16 only (the CPU and CUDA kernels take fp16 and fp32 too);
    the counter makes its output from the shape rule instead of failing."""
    with torch.device("meta"):
        module = _GroupedExperts(8, 64, 32, dtype)
    x = torch.empty(48, 64, dtype=dtype, device="meta")
    offs = torch.empty(8, dtype=torch.int32, device="meta")
    report = analyze_module(module, [x, offs])
    # whatever the group sizes (offsets), every one of the 48 rows meets one (64 x 32) weight: 48 * 64 * 32
    assert report.compute.macs == 98_304
    assert report.compute.flops == 2 * 98_304
    assert report.compute.uncounted_ops == {} and report.compute.complete
    assert report.outputs[0].shape == (48, 32) and report.outputs[0].dtype == str(dtype).removeprefix("torch.")


def test_grouped_mm_layouts() -> None:
    """2d x 2d (groups along K, out G x M x N), 3d x 2d (groups along N) and 3d x 3d (a batch)."""
    from modelcost.analysis.torch_ops import op_cost

    aten = torch.ops.aten
    bf = torch.bfloat16
    a2, b2 = torch.randn(16, 24, dtype=bf), torch.randn(24, 8, dtype=bf)
    offs = torch.tensor([8, 16, 24], dtype=torch.int32)
    out = aten._grouped_mm.default(a2, b2, offs)
    assert tuple(out.shape) == (3, 16, 8)
    # each group g multiplies (16, K_g) x (K_g, 8); sum over groups of 16 * K_g * 8 = 16 * 24 * 8
    assert op_cost(aten._grouped_mm.default, (a2, b2, offs), {}, out).macs == 3_072
    a3, b2n = torch.randn(3, 16, 24, dtype=bf), torch.randn(24, 24, dtype=bf)
    out = aten._grouped_mm.default(a3, b2n, offs)
    # group g: (16, 24) x (24, N_g); sum of N_g = 24: 16 * 24 * 24
    assert tuple(out.shape) == (16, 24)
    assert op_cost(aten._grouped_mm.default, (a3, b2n, offs), {}, out).macs == 9_216
    b3 = torch.randn(3, 24, 8, dtype=bf)
    out = aten._grouped_mm.default(a3, b3)
    # a plain batch: 3 * 16 * 24 * 8
    assert op_cost(aten._grouped_mm.default, (a3, b3), {}, out).macs == 9_216


def test_routing_ops_cost_flops_not_macs() -> None:
    """top-k, sort, histc and nonzero are known-zero-MAC ops with documented FLOPs (docs/COUNTING.md)."""
    from modelcost.analysis.torch_ops import classify, op_cost

    aten = torch.ops.aten
    x = torch.randn(10, 8)
    for op, args, kwargs, flops in (
        # top-2 of rows of 8: one compare per element against the heap top + ceil(log2 2) = 1 to insert: 80 * 2
        (aten.topk.default, (x, 2), {}, 160),
        # top-1 is argmax: one per element
        (aten.topk.default, (x, 1), {}, 80),
        # sort rows of 8: 8 * ceil(log2 8) = 24 compares per row, 10 rows; along dim 0 (10 long): 4 per element
        (aten.sort.default, (x,), {}, 240),
        (aten.sort.stable, (x,), {"stable": True, "dim": 0}, 320),
        # a histogram: one bin index per input element
        (aten.histc.default, (x.flatten(), 4), {}, 80),
        # nonzero (an eager per-expert loop finds its tokens with it): one test per input element
        (aten.nonzero.default, (x > 0,), {}, 80),
    ):
        assert classify(op) == "counted"
        cost = op_cost(op, args, kwargs, op(*args, **kwargs))
        assert (cost.macs, cost.flops) == (0, flops), op


def _toy_mixtral(implementation: str, device: str):
    """A 1-layer Mixtral (h 32, f 48, E 4, k 2, V 64), random weights, in fp32 with the given experts
    implementation ("eager": the per-expert loop over torch.where masks; "batched_mm"; "grouped_mm")."""
    from transformers import MixtralConfig, MixtralForCausalLM

    config = MixtralConfig(hidden_size=32, intermediate_size=48, num_hidden_layers=1, num_attention_heads=4,
                           num_key_value_heads=2, vocab_size=64, num_local_experts=4, num_experts_per_tok=2,
                           max_position_embeddings=64, tie_word_embeddings=False)
    config._experts_implementation = implementation
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(device):
        return MixtralForCausalLM(config).eval()


def _routed_macs(report) -> int:
    return sum(layer.macs for layer in report.layers if ".experts" in layer.name)


def test_toy_moe_real_run_matches_the_meta_count() -> None:
    """Run for real on the CPU, every experts implementation counts the routed experts alike, and the meta
    count (grouped_mm, no routing values) gives the same figure: T tokens x k x 3 h f, whatever the routing."""
    ids = torch.randint(0, 64, (2, 5))
    # T = 2 x 5 = 10 tokens, each visits k = 2 experts of 3 x 32 x 48 = 4,608 MACs: 10 * 2 * 4,608
    routed = 92_160
    totals = set()
    for implementation in ("eager", "batched_mm", "grouped_mm"):
        real = analyze_module(_toy_mixtral(implementation, "cpu"), {"input_ids": ids})
        assert _routed_macs(real) == routed, implementation
        assert real.compute.complete, (implementation, real.compute.uncounted_ops)  # eager: nonzero is counted
        totals.add(real.compute.macs)
    meta = analyze_module(_toy_mixtral("grouped_mm", "meta"), {"input_ids": ids.to("meta")})
    assert _routed_macs(meta) == routed
    assert meta.compute.complete and meta.compute.uncounted_ops == {}
    assert totals == {meta.compute.macs}  # attention, router and head too: one figure, real or meta


# ---------------------------------------------------------------------------------------------------
# scaled-down Mixtral, Qwen3-MoE and DeepSeek-V2 (their architectures, small sizes), bf16, P = 16, G = 2: one
# decode step, at L = 17 positions. Weights read by a forward: every byte but the input embedding, + B rows
# of it (64 x 2 bytes each), less the routed experts the step does not visit.


def _lm(tmp_path, config):
    path = tmp_path / f"{config.model_type}.json"
    path.write_text(config.to_json_string())
    return load_causal_lm(str(path), "bf16")


def _by_batch(report):
    return {p.batch_size: p for p in report.points}


def test_scaled_mixtral(tmp_path) -> None:
    from transformers import MixtralConfig

    # h 64, f 128, 4 heads of d 16, 2 KV heads, V 256, 2 layers, E 8, k 2
    lm = _lm(tmp_path, MixtralConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                     num_key_value_heads=2, vocab_size=256, num_local_experts=8, num_experts_per_tok=2,
                                     max_position_embeddings=512, tie_word_embeddings=False))
    report = analyze_llm(lm, [16], [2], [1, 4, 64])
    assert report.complete and report.uncounted == {}
    # per layer: q 64*64 + k, v 2 * 64*32 + o 64*64 = 12,288; router 8*64 = 512; experts 8 * 3*64*128 = 8 * 24,576;
    # two norms 128 -> 209,536; x 2 layers + embedding and head 2 * 256*64 + final norm 64 = 451,904
    assert report.params == 451_904
    # a token skips 6 of the 8 experts in each layer: 451,904 - 2 * 6 * 24,576
    assert report.params_active == 156_992
    moe = report.moe
    assert (moe.layers, moe.experts, moe.top_k, moe.expert_params, moe.expert_bytes) == (2, 8, 2, 24_576, 49_152)
    assert moe.experts_implementation == "grouped_mm"
    one, four, many = (_by_batch(report)[b] for b in (1, 4, 64))
    # per token per layer: 12,288 + 512 + k * 24,576 = 61,952; 2 layers: 123,904. Prefill of 16 tokens:
    # 16 * 123,904 + attention 2 layers * 4 heads * 16 * 16 * (16 + 16) + head 256*64 on the last position
    assert one.prefill.macs == 16 * 123_904 + 65_536 + 16_384 == 2_064_384
    # decode at L = 17: 123,904 + head 16,384 + attention 2 * 4 * 17 * 32
    assert one.decode.per_token[0].macs == 140_288 + 4_352 == 144_640
    # bytes at B = 1: weights (451,904 - 16,384) * 2 = 871,040, + one embedding row 128; the routed experts
    # (2 layers * 8 * 49,152 = 786,432) less the 2 per layer one token visits (2 * 2 * 49,152 = 196,608);
    # KV 2 layers * (K, V) * 32 * 2 bytes = 256 per position, 17 positions
    assert one.decode.experts_read.experts_per_layer == 2
    assert one.decode.per_token[0].bytes == 871_168 - 786_432 + 196_608 + 256 * 17 == 285_696
    # B = 4: 8 * (1 - (3/4)^4) = 8 * 175/256 = 5.46875 experts per layer: 2 * 5.46875 * 49,152 = 537,600 bytes
    assert four.decode.experts_read.experts_per_layer == 5.46875
    assert four.decode.experts_read.bytes == 537_600
    # B = 64: 8 * (1 - (3/4)^64), every expert to 1e-8: all 786,432 bytes; 871,040 + 64 * 128 + 64 * 256 * 17
    assert many.decode.experts_read.bytes == 786_432
    assert many.decode.per_token[0].bytes == 879_232 + 278_528 == 1_157_760
    # the prefill's 16 tokens: 8 * (1 - (3/4)^16) = 7.92 experts per layer
    assert one.prefill.experts_read.experts_per_layer == pytest.approx(8 * (1 - 0.75**16))


def test_scaled_qwen3_moe(tmp_path) -> None:
    from transformers import Qwen3MoeConfig

    # h 64, 4 heads of d 16 (q/k RMS norms of 16), 2 KV heads, V 256, 2 layers, E 16, k 4, expert width f 32
    lm = _lm(tmp_path, Qwen3MoeConfig(hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                      vocab_size=256, num_experts=16, num_experts_per_tok=4, norm_topk_prob=True,
                                      decoder_sparse_step=1, mlp_only_layers=[], max_position_embeddings=512,
                                      tie_word_embeddings=False))
    report = analyze_llm(lm, [16], [2], [1, 64])
    assert report.complete and report.uncounted == {}
    # per layer: attention 12,288 + q/k norms 32 + router 16*64 = 1,024 + experts 16 * 3*64*32 = 16 * 6,144
    # + two norms 128 = 111,776; x 2 + 2 * 16,384 + 64 = 256,384
    assert report.params == 256_384
    # each layer skips 12 of 16 experts: 256,384 - 2 * 12 * 6,144
    assert report.params_active == 108_928
    one, many = (_by_batch(report)[b] for b in (1, 64))
    # per token per layer: 12,288 + 1,024 + 4 * 6,144 = 37,888; 2 layers 75,776; 16 tokens + attention
    # 2 * 4 * 16 * 16 * 32 + head 16,384
    assert one.prefill.macs == 16 * 75_776 + 65_536 + 16_384 == 1_294_336
    assert one.decode.per_token[0].macs == 75_776 + 16_384 + 2 * 4 * 17 * 32 == 96_512
    # bytes at B = 1: weights (256,384 - 16,384) * 2 = 480,000 + 128; routed 2 * 16 * 12,288 = 393,216, of which
    # 2 layers * 4 experts are read (98,304); KV 256 per position (2 layers * (K, V) * 2 heads * 16 * 2 bytes)
    assert one.decode.per_token[0].bytes == 480_128 - 393_216 + 98_304 + 256 * 17 == 189_568
    # B = 64: 16 * (1 - (3/4)^64) per layer, every expert: 480,000 + 64 * 128 + 64 * 256 * 17
    assert many.decode.per_token[0].bytes == 488_192 + 278_528 == 766_720


def test_scaled_deepseek_v2(tmp_path) -> None:
    """Multi-head latent attention (the cache holds the latent, decompressed every step), a dense first layer,
    2 shared experts beside 8 routed ones (k 2)."""
    from transformers import DeepseekV2Config

    lm = _lm(tmp_path, DeepseekV2Config(
        hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4, vocab_size=256, n_routed_experts=8, n_shared_experts=2, num_experts_per_tok=2,
        first_k_dense_replace=1, kv_lora_rank=32, q_lora_rank=None, qk_nope_head_dim=16, qk_rope_head_dim=8,
        v_head_dim=16, topk_method="greedy", n_group=1, topk_group=1, norm_topk_prob=False,
        max_position_embeddings=512, tie_word_embeddings=False))
    report = analyze_llm(lm, [16], [2], [1, 64])
    assert report.complete and report.uncounted == {}  # the rotary tables' aten.polar is counted
    # attention per layer: q 64 * 4*(16+8) = 6,144; kv_a 64 * (32 + 8) = 2,560 (+ its norm 32); kv_b
    # 32 * 4*(16+16) = 4,096; o 4*16 * 64 = 4,096 -> 16,928 params, 16,896 MACs per token.
    # layer 0: dense MLP 3*64*128 = 24,576 + norms 128 -> 41,632; layer 1: router 8*64 = 512, routed experts
    # 8 * 3*64*32 = 8 * 6,144, shared 3*64*64 = 12,288, norms 128 -> 79,008; + 2 * 16,384 + 64 = 153,472
    assert report.params == 153_472
    # the one MoE layer skips 6 of 8 experts: 153,472 - 6 * 6,144
    assert report.params_active == 116_608
    assert (report.moe.layers, report.moe.experts, report.moe.top_k) == (1, 8, 2)
    one, many = (_by_batch(report)[b] for b in (1, 64))
    # per token: layer 0 16,896 + 24,576; layer 1 16,896 + 512 + 2 * 6,144 + 12,288 -> 83,456. Attention:
    # per query and key 4 heads * (24 + 16) = 160; prefill 2 layers * 160 * 16 * 16; head 16,384
    assert one.prefill.macs == 16 * 83_456 + 81_920 + 16_384 == 1_433_600
    # decode at L = 17: the step also decompresses the 16 cached latents through kv_b (16 * 4,096 per layer)
    assert one.decode.per_token[0].macs == 83_456 + 16_384 + 2 * 160 * 17 + 2 * 16 * 4_096 == 236_352
    # KV per position: the latent 32 + the rotary key 8, 2 layers, 2 bytes = 160
    assert one.kv_cache.bytes_per_token == 160
    # bytes at B = 1: weights (153,472 - 16,384) * 2 = 274,176 + 128; routed 8 * 12,288 = 98,304, 2 read
    assert one.decode.per_token[0].bytes == 274_304 - 98_304 + 24_576 + 160 * 17 == 203_296
    # B = 64: every expert: 274,176 + 64 * 128 + 64 * 160 * 17
    assert many.decode.per_token[0].bytes == 282_368 + 174_080 == 456_448


# ---------------------------------------------------------------------------------------------------
# routing: expected expert reads, --routing, and the compute-bound batch


def _spec(experts: int, top_k: int, routing: Routing, layers: int = 1) -> MoeSpec:
    return MoeSpec(layers, experts, top_k, 10, 20, layers * experts * 10, layers * experts * 20, routing, None)


def test_expected_experts_under_each_routing(tmp_path) -> None:
    uniform = _spec(8, 2, llm_moe.parse_routing("uniform"))
    # one token reads exactly its k experts, whatever the routing
    assert llm_moe.expected_experts(uniform, 1) == [2.0]
    # E (1 - (1 - k/E)^T) at T = 2: 8 * (1 - 9/16) = 3.5
    assert llm_moe.expected_experts(uniform, 2) == [3.5]
    # zipf with exponent 0 is uniform
    assert llm_moe.expected_experts(_spec(8, 2, llm_moe.parse_routing("zipf:0")), 2) == pytest.approx([3.5])
    skewed = llm_moe.expected_experts(_spec(8, 2, llm_moe.parse_routing("zipf:1.2")), 2)
    assert skewed[0] < 3.5  # popular experts are shared: fewer distinct ones
    shares = tmp_path / "shares.json"
    shares.write_text(json.dumps([70, 10, 10, 10, 0, 0, 0, 0]))  # token counts: scaled to shares
    measured = _spec(8, 2, llm_moe.parse_routing(str(shares)))
    # chances k * share = 1.4, 0.2, 0.2, 0.2: the first is capped at 1 (a token visits an expert once) and the
    # other 1 of k spread in proportion, 1/3 each. T = 2: 1 + 3 * (1 - (2/3)^2) = 1 + 5/3
    assert llm_moe.expected_experts(measured, 2) == pytest.approx([8 / 3])
    # one list per layer (2 layers) is taken per layer
    shares.write_text(json.dumps([[1] * 8, [70, 10, 10, 10, 0, 0, 0, 0]]))
    per_layer = _spec(8, 2, llm_moe.parse_routing(str(shares)), layers=2)
    assert llm_moe.expected_experts(per_layer, 2) == pytest.approx([3.5, 8 / 3])


@pytest.mark.parametrize("text, match", [
    ("zipf:abc", "expected zipf:S with S a number >= 0"),
    ("zipf:-1", "expected zipf:S"),
    ("random", "choose uniform, zipf:S"),
    ("missing.json", "not a readable JSON file"),
])
def test_bad_routing_gets_one_line(text, match) -> None:
    with pytest.raises(ModelcostError, match=match):
        llm_moe.parse_routing(text)


@pytest.mark.parametrize("content, match", [
    ([1, -1, 1], "numbers >= 0"),
    ([0, 0], "every share is 0"),
    ({"a": 1}, "a list of token counts or shares"),
    ([[1, 1], "x"], "a list of token counts or shares"),
])
def test_bad_routing_file(tmp_path, content, match) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ModelcostError, match=f"--routing {path}.*{match}"):
        llm_moe.parse_routing(str(path))


def test_compute_bound_batch_is_the_first_batch_that_meets_it() -> None:
    """B x slack >= W(B): the bisection finds what a scan over every batch finds."""
    spec = _spec(64, 6, Routing("uniform"), layers=26)
    read = 10_000 + spec.routed_bytes
    for slack in (5.0, 20.0, 300.0, 5_000.0):
        dense = -(-read // slack)  # the batch that covers every expert
        scan = next(b for b in range(1, int(dense) + 1) if b * slack >= llm_moe.weights_read(spec, read, b)[0])
        assert llm_moe.compute_bound_batch(spec, read, slack, int(dense)) == scan


# ---------------------------------------------------------------------------------------------------
# the command: partial results, fp16, a forward that fails on meta, --routing that does not fit


def _tiny_mixtral_json(tmp_path) -> str:
    from transformers import MixtralConfig

    path = tmp_path / "mixtral.json"
    path.write_text(MixtralConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                  num_key_value_heads=2, vocab_size=256, num_local_experts=8, num_experts_per_tok=2,
                                  max_position_embeddings=512, tie_word_embeddings=False).to_json_string())
    return str(path)


def test_llm_honours_the_partial_result_contract(tmp_path, monkeypatch) -> None:
    """An uncounted op (top-k made formula-less here) prints ≥, writes complete: false and exits 3, as analyze
    does; --allow-partial exits 0."""
    from modelcost.analysis import torch_ops

    model = _tiny_mixtral_json(tmp_path)
    monkeypatch.delitem(torch_ops.FORMULAS, torch.ops.aten.topk)
    out = tmp_path / "llm.json"
    result = CliRunner().invoke(app, ["llm", model, "--static", "-p", "16", "-g", "2", "--json", str(out)])
    assert result.exit_code == 3, result.output
    assert "≥ 2.06 M" in result.output and "partial result" in result.output and "aten.topk x2" in result.output
    doc = json.loads(out.read_text())["llm"]
    assert doc["complete"] is False and doc["uncounted"] == {"aten.topk": 2}
    assert doc["incomplete_reasons"][0].startswith("prefill: aten.topk x2")
    result = CliRunner().invoke(app, ["llm", model, "--static", "-p", "16", "-g", "2", "--allow-partial"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_moe_counts_in_fp16_and_fp32(tmp_path, dtype) -> None:
    """These used to end in a traceback ('NoneType' object has no attribute 'shape'): aten._grouped_mm's meta
    kernel refused them and the decode steps then read an empty cache."""
    out = tmp_path / "llm.json"
    result = CliRunner().invoke(app, ["llm", _tiny_mixtral_json(tmp_path), "--static", "-p", "16", "-g", "2",
                                      "--dtype", dtype, "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())["llm"]
    assert doc["prefill"]["macs"] == 2_064_384 and doc["complete"]  # as in bf16 (test_scaled_mixtral)


def test_a_forward_that_fails_on_meta_is_one_line(tmp_path) -> None:
    factory = tmp_path / "reads_values.py"
    factory.write_text(
        "import torch\nfrom transformers import LlamaConfig, LlamaForCausalLM\n\n"
        "class ReadsValues(LlamaForCausalLM):\n"
        "    def forward(self, input_ids=None, **kwargs):\n"
        "        torch.ones(4097, 1024, device=input_ids.device).nonzero()  # past the data oracle's 2^22\n"
        "        return super().forward(input_ids=input_ids, **kwargs)\n\n"
        "def build():\n"
        "    return ReadsValues(LlamaConfig(vocab_size=256, hidden_size=64, num_hidden_layers=1,\n"
        "        num_attention_heads=4, num_key_value_heads=2, intermediate_size=128))\n")
    result = CliRunner().invoke(app, ["llm", f"{factory}:build", "--static", "-p", "8", "-g", "2"])
    assert result.exit_code == 1
    assert "prefill:" in result.output and "the forward pass failed on meta inputs" in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


def test_routing_that_does_not_fit_the_model(tmp_path) -> None:
    shares = tmp_path / "shares.json"
    shares.write_text(json.dumps([1, 2, 3]))
    result = CliRunner().invoke(app, ["llm", _tiny_mixtral_json(tmp_path), "--static", "-p", "16", "-g", "2",
                                      "--routing", str(shares)])
    assert result.exit_code == 1
    assert "list 0 has 3 shares; the model has 8 routed experts per layer" in result.output
    shares.write_text(json.dumps([[1] * 8] * 3))
    result = CliRunner().invoke(app, ["llm", _tiny_mixtral_json(tmp_path), "--static", "-p", "16", "-g", "2",
                                      "--routing", str(shares)])
    assert "3 lists of shares; give one (for every layer) or one per MoE layer (2)" in result.output
    shares.write_text(json.dumps([1, 0, 0, 0, 0, 0, 0, 0]))
    result = CliRunner().invoke(app, ["llm", _tiny_mixtral_json(tmp_path), "--static", "-p", "16", "-g", "2",
                                      "--routing", str(shares)])
    assert "list 0 gives a share to fewer experts than the 2 each token visits" in result.output


def test_routing_changes_the_bytes_not_the_macs(tmp_path) -> None:
    model = _tiny_mixtral_json(tmp_path)
    lm = load_causal_lm(model, "bf16")
    uniform = analyze_llm(lm, [16], [2], [4])
    skewed = analyze_llm(lm, [16], [2], [4], routing="zipf:1.5")
    assert skewed.points[0].decode.per_token[0].macs == uniform.points[0].decode.per_token[0].macs
    # 4 tokens on a skewed distribution hit fewer distinct experts than the uniform 5.46875 per layer
    assert skewed.points[0].decode.experts_read.experts_per_layer < 5.46875
    assert skewed.points[0].decode.per_token[0].bytes < uniform.points[0].decode.per_token[0].bytes
    assert skewed.moe.routing == Routing("zipf", zipf_exponent=1.5)
    assert any("routing assumed: zipf:1.5" in n for n in skewed.notes)


# ---------------------------------------------------------------------------------------------------
# the published models: their real hyper-parameters (transformers' config classes, no download)


def _published(name: str):
    from transformers import DeepseekV2Config, MixtralConfig, Qwen3MoeConfig

    common = {"tie_word_embeddings": False, "max_position_embeddings": 4096}
    return {
        "Mixtral-8x7B": MixtralConfig(
            hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
            num_key_value_heads=8, vocab_size=32000, num_local_experts=8, num_experts_per_tok=2,
            rope_theta=1e6, rms_norm_eps=1e-5, **common),
        "Qwen3-30B-A3B": Qwen3MoeConfig(
            hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_hidden_layers=48,
            num_attention_heads=32, num_key_value_heads=4, head_dim=128, vocab_size=151936, num_experts=128,
            num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[], **common),
        "DeepSeek-V2-Lite": DeepseekV2Config(
            hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408, num_hidden_layers=27,
            num_attention_heads=16, num_key_value_heads=16, vocab_size=102400, n_routed_experts=64,
            n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1, kv_lora_rank=512, q_lora_rank=None,
            qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, topk_method="greedy", n_group=1,
            topk_group=1, norm_topk_prob=False, **common),
    }[name]


def _published_json(tmp_path, name: str) -> str:
    path = tmp_path / name / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(_published(name).to_json_string())
    return str(path)


@pytest.mark.slow
def test_published_moe_models(tmp_path) -> None:
    """The big ones, once: parameters and expert reads of all three from their specs; Mixtral counted end to end
    through the command (prefill at P = 512 and one decode step, B = 1)."""
    from modelcost.analysis.llm import weights_read_bytes

    # (params, active, E, k, expert params) derived below
    expected = {
        # Mixtral: expert 3 * 4096 * 14336 = 176,160,768; a layer: attention 2 * 4096^2 + 2 * 4096*1024
        # = 41,943,040, router 8*4096 = 32,768, experts 8 * 176,160,768, norms 8,192 -> 1,451,270,144; x 32,
        # + embedding and head 2 * 32000*4096 + norm 4096 = 46,702,792,704. Active: - 32 * 6 * 176,160,768
        "Mixtral-8x7B": (46_702_792_704, 12_879_925_248, 8, 2, 176_160_768),
        # Qwen3: expert 3 * 2048 * 768 = 4,718,592; a layer: attention 2 * 2048*4096 + 2 * 2048*512 = 18,874,368,
        # q/k norms 256, router 128*2048 = 262,144, experts 128 * 4,718,592, norms 4,096 -> 623,120,640; x 48
        # + 2 * 151936*2048 + 2048 = 30,532,122,624. Active: - 48 * 120 * 4,718,592 (the published 3.3 B)
        "Qwen3-30B-A3B": (30_532_122_624, 3_353_032_704, 128, 8, 4_718_592),
        # DeepSeek-V2-Lite: expert 3 * 2048 * 1408 = 8,650,752; attention: q 2048 * 16*192 = 6,291,456, kv_a
        # 2048 * 576 = 1,179,648 (+ norm 512), kv_b 512 * 16*256 = 2,097,152, o 2048*2048 = 4,194,304 ->
        # 13,763,072. Layer 0: + dense MLP 3 * 2048 * 10944 + norms 4,096 = 81,007,104. MoE layers: + router
        # 64*2048, experts 64 * 8,650,752, shared 3 * 2048 * 2816 = 17,301,504, norms 4,096 -> 584,847,872; x 26
        # + 2 * 102400*2048 + 2048 = 15,706,484,224. Active: - 26 * 58 * 8,650,752 = 2,661,150,208 (DeepSeek's
        # 2.4 B leaves the input embedding, 209,715,200, out)
        "DeepSeek-V2-Lite": (15_706_484_224, 2_661_150_208, 64, 6, 8_650_752),
    }
    layers = {"Mixtral-8x7B": 32, "Qwen3-30B-A3B": 48, "DeepSeek-V2-Lite": 26}
    row = {"Mixtral-8x7B": 4096 * 2, "Qwen3-30B-A3B": 2048 * 2, "DeepSeek-V2-Lite": 2048 * 2}
    for name, (params, active, e, k, expert) in expected.items():
        lm = load_causal_lm(_published_json(tmp_path, name), "bf16")
        spec = llm_moe.moe_spec(lm.module, lm.config, Routing("uniform"), [])
        total = sum(p.numel() for p in lm.module.parameters())
        assert (total, llm_moe.active_params(spec, total)) == (params, active), name
        assert (spec.layers, spec.experts, spec.top_k, spec.expert_params) == (layers[name], e, k, expert), name
        # weights a decode step reads: all but the input embedding, + B rows, less the experts not visited:
        # B = 1 reads k per layer; B = 64 reads E (1 - (1 - k/E)^64) per layer
        read = weights_read_bytes(lm.module)
        for b, per_layer in ((1, k), (64, e * (1 - (1 - k / e) ** 64))):
            got = llm_moe.weights_read(spec, read + b * row[name], b)[0]
            assert got == read + b * row[name] - spec.routed_bytes + round(layers[name] * per_layer * 2 * expert)
    # Mixtral B = 1: 93,143,441,408 bytes of weights read but the embedding, + one row 8,192, - the routed
    # 32 * 8 * 352,321,536 + 32 * 2 * 352,321,536 read = 25,497,714,688 (the issue's ~25.6 GB with the KV);
    # at B = 64 every expert bar 8 (3/4)^64 per layer: 93.1 GB
    out = tmp_path / "mixtral.json"
    result = CliRunner().invoke(app, ["llm", _published_json(tmp_path, "Mixtral-8x7B"), "--static", "-p", "512",
                                      "-g", "2", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "46,702,792,704" in result.output and "12,879,925,248" in result.output and "≥" not in result.output
    doc = json.loads(out.read_text())["llm"]
    assert (doc["params"], doc["params_active"], doc["complete"], doc["uncounted"]) == (
        46_702_792_704, 12_879_925_248, True, {})
    # per token: 32 layers * (41,943,040 + 32,768 + 2 * 176,160,768) = 12,617,515,008. Prefill of 512 tokens:
    # 512 * that + head 131,072,000 + attention 32 layers * 32 heads * 512^2 * 256 = 68,719,476,736 (~6.5 T)
    assert doc["prefill"]["macs"] == 512 * 12_617_515_008 + 131_072_000 + 68_719_476_736 == 6_529_018_232_832
    # decode at L = 513: 12,617,515,008 + 131,072,000 + 32 * 32 * 513 * 256 (~12.9 G)
    step = doc["decode"]["per_token"][0]
    assert step["macs"] == 12_748_587_008 + 134_479_872 == 12_883_066_880
    # bytes: 25,497,714,688 of weights + KV 32 layers * (K, V) * 1024 * 2 bytes = 131,072 per position x 513
    assert step["bytes"] == 25_497_714_688 + 131_072 * 513 == 25_564_954_624
    assert doc["decode"]["experts_read"] == {"tokens": 1, "experts_per_layer": 2.0, "bytes": 22_548_578_304}


@pytest.mark.slow
@pytest.mark.parametrize("name, prefill, decode, nbytes", [
    # Qwen3-30B-A3B per token: 48 layers * (attention 18,874,368 + router 262,144 + 8 * 4,718,592) =
    # 2,730,491,904; head 151936 * 2048 = 311,164,928; attention per query and key 48 layers * 32 heads * 256
    # = 393,216. Prefill: 512 tokens + 393,216 * 512^2; decode at L = 513: + 393,216 * 513. Bytes at B = 1:
    # 6,083,739,648 of weights (test_published_moe_models) + KV 48 * (K, V) * 4 * 128 * 2 = 98,304 x 513
    ("Qwen3-30B-A3B", 512 * 2_730_491_904 + 311_164_928 + 393_216 * 512**2,
     2_730_491_904 + 311_164_928 + 393_216 * 513, 6_083_739_648 + 98_304 * 513),
    # DeepSeek-V2-Lite per token: attention linears 13,762,560 a layer; layer 0 + dense MLP 67,239,936; 26 MoE
    # layers + router 131,072 + 6 * 8,650,752 + shared 17,301,504 -> 81,002,496 + 26 * 83,099,648 =
    # 2,241,593,344; head 102400 * 2048 = 209,715,200; attention per query and key 27 * 16 * (192 + 128) =
    # 138,240. A decode step also decompresses the 512 cached latents through kv_b: 27 * 512 * 2,097,152.
    # Bytes: 4,902,874,112 of weights + KV 27 * (512 + 64) * 2 = 31,104 x 513
    ("DeepSeek-V2-Lite", 512 * 2_241_593_344 + 209_715_200 + 138_240 * 512**2,
     2_241_593_344 + 209_715_200 + 138_240 * 513 + 27 * 512 * 2_097_152, 4_902_874_112 + 31_104 * 513),
])
def test_published_moe_counts(tmp_path, name, prefill, decode, nbytes) -> None:
    report = analyze_llm(load_causal_lm(_published_json(tmp_path, name), "bf16"), [512], [2], [1])
    point = report.points[0]
    assert report.complete and report.uncounted == {}
    assert point.prefill.macs == prefill
    assert (point.decode.per_token[0].macs, point.decode.per_token[0].bytes) == (decode, nbytes)


def test_experts_held_as_a_module_list() -> None:
    """Older and hand-written MoEs keep one module per expert in a ModuleList named experts; the router is a
    Linear beside them and the block says top_k."""

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.top_k = 2
            self.gate = torch.nn.Linear(16, 4, bias=False)
            self.experts = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Linear(32, 16))
                                               for _ in range(4))

    model = torch.nn.Sequential(Block(), Block())
    spec = llm_moe.moe_spec(model, None, Routing("uniform"), [])
    # one expert: 16*32 + 32 + 32*16 + 16 = 1,072 parameters (fp32: 4,288 bytes); 2 layers of 4
    assert (spec.layers, spec.experts, spec.top_k, spec.expert_params, spec.expert_bytes) == (2, 4, 2, 1_072, 4_288)
    assert spec.experts_implementation is None  # the model's own code runs its experts
    total = sum(p.numel() for p in model.parameters())
    assert llm_moe.active_params(spec, total) == total - 2 * 2 * 1_072
    assert llm_moe.moe_spec(torch.nn.Linear(4, 4), None, Routing("uniform"), []) is None


def test_up_and_down_projections_in_sibling_holders_are_one_layer() -> None:
    """JetMoE-style: the experts' up and down projections in two stacked holders under one block."""

    class Stacked(torch.nn.Module):
        def __init__(self, experts: int, n_in: int, n_out: int) -> None:
            super().__init__()
            self.num_experts = experts
            self.weight = torch.nn.Parameter(torch.empty(experts, n_out, n_in))

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.top_k = 2
            self.up = Stacked(4, 16, 64)
            self.down = Stacked(4, 32, 16)

    spec = llm_moe.moe_spec(torch.nn.Sequential(Block(), Block(), Block()), None, Routing("uniform"), [])
    # one expert: up 16*64 + down 32*16 = 1,536 parameters; 3 layers of 4 experts, 2 per token
    assert (spec.layers, spec.experts, spec.top_k, spec.expert_params) == (3, 4, 2, 1_536)
