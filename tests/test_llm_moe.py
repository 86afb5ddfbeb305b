"""Mixture-of-experts models counted right (issue 25 item 1): routed experts by grouped GEMMs, routing ops,
total and active parameters, expected expert reads per step, and the partial-result contract of ``llm``.

Notation: h hidden, f one expert's SwiGLU width, E routed experts per MoE layer, k experts per token, n layers,
V vocab, T tokens in a forward (B x P for a prefill, B for a decode step). One SwiGLU expert is 3 h f parameters
and 3 h f MACs per token it sees; every token visits exactly k experts, so a MoE layer's routed MACs are
T k 3 h f whatever the routing.
"""

from __future__ import annotations

import pytest
import torch

from modelcost.analysis.torch_counter import analyze_module


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
