"""ONNX Runtime's fused ops are counted with documented formulas (modelcost/analysis/onnx_ops_contrib.py and
onnx_ops_mac.py) and give the MACs of the graph they replace.

Two kinds of evidence: the transformer optimizer's and the 4-bit quantizer's output on real exports (the MACs
must equal the unfused export's), and small hand-built graphs for the fused attention / embedding ops the
optimizer does not produce from transformers 5 exports (its attention fusions match older graph patterns),
each derived by hand next to its assertion."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from modelcost import api
from modelcost.analysis import formulas as F

pytest.importorskip("transformers")

import tests.exports_cases as ec

# the exports are made once per process (tests/exports_cases.py): one test process makes them for both files
pytestmark = pytest.mark.xdist_group("exports")


def _fused_ops(path: Path) -> Counter[str]:
    return Counter(n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node if n.domain)


@pytest.mark.parametrize(
    ("family", "opt_level", "fused"),
    [
        ("bert", 1, {"SkipLayerNormalization", "Gelu"}),
        ("bert", 2, {"SkipLayerNormalization", "BiasGelu"}),
        ("distilbert", 1, {"SkipLayerNormalization", "Gelu"}),
        ("gpt2", 1, {"SkipLayerNormalization", "FastGelu"}),
        ("vit", 1, {"SkipLayerNormalization", "Gelu"}),
        ("clip-text", 1, {"SkipLayerNormalization", "QuickGelu"}),
        ("t5", 1, {"SkipSimplifiedLayerNormalization"}),
        ("llama", 1, {"SkipSimplifiedLayerNormalization"}),
    ],
)
def test_transformer_optimizer_output_keeps_the_macs(family: str, opt_level: int, fused: set[str]) -> None:
    pytest.importorskip("onnxruntime.transformers.optimizer")
    path = ec.optimized(family, opt_level)
    assert fused <= set(_fused_ops(path))  # the fused ops are really there
    report = api.analyze_static(str(path))
    assert report.compute.complete, report.compute.incomplete_reasons
    assert report.compute.macs == ec.built(family)[3]


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_matmul_nbits_keeps_the_macs_at_float_precision(family: str) -> None:
    """4-bit weights, float activations: the MACs of the float graph, in float32, and a note that says so.
    FLOPs add the weights' dequantization, 2 per weight element, as DequantizeLinear + MatMul would."""
    pytest.importorskip("onnxruntime.quantization.matmul_nbits_quantizer")
    path = ec.int4_weights(family)
    assert _fused_ops(path)["MatMulNBits"] > 0
    report, plain = api.analyze_static(str(path)), api.analyze_static(str(ec.exported(family, "torchscript")))
    assert report.compute.complete and report.compute.macs == plain.compute.macs == ec.built(family)[3]
    assert report.compute.macs_by_dtype == {"float32": report.compute.macs}
    assert any("weight-only quantized (int4 weights" in n for n in report.notes)


# --- hand-built fused graphs -------------------------------------------------------------------------------


def _analyze(tmp_path: Path, nodes: list, inputs: list, outputs: list, inits: list | None = None):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "fused.onnx"
    onnx.save(model, str(path))
    return api.analyze_static(str(path))


def _vi(name: str, shape: list | None, dtype: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _w(name: str, *shape: int, dtype=np.float32):
    return numpy_helper.from_array(np.ones(shape, dtype), name)


def test_attention(tmp_path: Path) -> None:
    """x [1, 16, 32] x W [32, 96] + bias, 2 heads of 16. Unfused: q, k, v linears 3 * 16*32*32 = 49,152 MACs and
    the attention 2 heads * 16*16*(16 + 16) = 16,384 -> 65,536. FLOPs: 2 * 65,536 + bias 16*96 + per score
    (2*16*16 = 512 scores) softmax 5 + scale 1 + mask 1."""
    node = helper.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain="com.microsoft", num_heads=2)
    report = _analyze(tmp_path, [node], [_vi("x", [1, 16, 32]), _vi("mask", [1, 16], TensorProto.INT32)],
                      [_vi("y", None)], [_w("w", 32, 96), _w("b", 96)])
    assert report.compute.complete and report.compute.macs == 65_536
    assert report.compute.flops == 2 * 65_536 + 16 * 96 + 512 * 7


def test_multi_head_attention(tmp_path: Path) -> None:
    """q, k, v [1, 16, 32], 2 heads of 16: 2 * 16*16*(16 + 16) = 16,384 MACs; FLOPs 2x + 512 scores * 6
    (softmax 5, scale 1; no mask)."""
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], domain="com.microsoft", num_heads=2)
    report = _analyze(tmp_path, [node], [_vi(n, [1, 16, 32]) for n in "qkv"], [_vi("y", None)])
    assert report.compute.complete and report.compute.macs == 16_384
    assert report.compute.flops == 2 * 16_384 + 512 * 6


def test_group_query_attention_matches_the_llama_attention(tmp_path: Path) -> None:
    """4 query heads of 8 share 2 KV heads (the tiny Llama's layout), seq 16, no past: each query head attends
    over 16 keys: 4 * 16*16*(8 + 8) = 16,384 MACs, the attention MACs of one unfused Llama layer (see
    test_exports_matrix). Causal mask always: per score (4*16*16 = 1,024) softmax 5 + scale 1 + mask 1; rotary
    on q and k: 3 * 16 * (4 + 2) * 8."""
    def gqa(rotary: int) -> object:
        cache = ["cos", "sin"] if rotary else []
        return helper.make_node("GroupQueryAttention", ["q", "k", "v", "", "", "seqlens_k", "total_len", *cache],
                                ["y", "present_key", "present_value"], domain="com.microsoft", num_heads=4,
                                kv_num_heads=2, do_rotary=rotary)

    inputs = [_vi("q", [1, 16, 32]), _vi("k", [1, 16, 16]), _vi("v", [1, 16, 16]),
              _vi("seqlens_k", [1], TensorProto.INT32), _vi("total_len", [], TensorProto.INT32)]
    report = _analyze(tmp_path, [gqa(0)], inputs, [_vi("y", None)])
    assert report.compute.complete, report.compute.incomplete_reasons
    # onnx has no schema for it: its output shape comes from ONNX Runtime's symbolic inference (no hand rule)
    assert any("symbolic shape inference gave" in n for n in report.notes)
    assert report.compute.macs == 16_384
    assert report.compute.flops == 2 * 16_384 + 1_024 * 7
    rotary = _analyze(tmp_path, [gqa(1)], [*inputs, _vi("cos", [64, 4]), _vi("sin", [64, 4])], [_vi("y", None)])
    assert rotary.compute.macs == 16_384 and rotary.compute.flops - report.compute.flops == 3 * 16 * 6 * 8


def test_embed_layer_normalization(tmp_path: Path) -> None:
    """word + position + segment embeddings of 16 tokens x 32, then a layer norm with gamma and beta: no MAC;
    2 adds per element (2 * 512) + norm 7 per element (5 + scale + shift) = 4,608 FLOPs."""
    node = helper.make_node("EmbedLayerNormalization", ["ids", "seg", "word", "pos", "segw", "gamma", "beta"],
                            ["y", "mask_index"], domain="com.microsoft", epsilon=1e-12)
    inits = [_w("word", 100, 32), _w("pos", 64, 32), _w("segw", 2, 32), _w("gamma", 32), _w("beta", 32)]
    inputs = [_vi("ids", [1, 16], TensorProto.INT32), _vi("seg", [1, 16], TensorProto.INT32)]
    report = _analyze(tmp_path, [node], inputs, [_vi("y", None)], inits)
    assert report.compute.complete, report.compute.incomplete_reasons
    assert (report.compute.macs, report.compute.flops) == (0, 2 * 512 + F.norm_flops(512, True, True))
    assert F.norm_flops(512, True, True) == 512 * 7


def test_qordered_matmul_counts_int8_macs(tmp_path: Path) -> None:
    """A [16, 32] int8 x B [32, 64] int8 -> Y [16, 64]: 16*64*32 = 32,768 MACs in int8; FLOPs 2x + 4 per output
    element for the requantization (1,024 * 4)."""
    node = helper.make_node("QOrderedMatMul", ["a", "sa", "b", "sb", "sy"], ["y"], domain="com.microsoft",
                            order_A=1, order_B=0, order_Y=1)
    inits = [_w("b", 32, 64, dtype=np.int8)] + [numpy_helper.from_array(np.array(0.1, np.float32), n)
                                                 for n in ("sa", "sb", "sy")]
    report = _analyze(tmp_path, [node], [_vi("a", [16, 32], TensorProto.INT8)], [_vi("y", None, TensorProto.INT8)],
                      inits)
    assert report.compute.complete, report.compute.incomplete_reasons
    assert report.compute.macs == 32_768 and report.compute.flops == 2 * 32_768 + 4 * 1_024
    assert report.compute.macs_by_dtype == {"int8": 32_768}


def test_rotary_embedding(tmp_path: Path) -> None:
    """x [1, 16, 32] as 2 heads of 16, every element rotated: 3 FLOPs each (x cos + rotate(x) sin) = 1,536."""
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft", num_heads=2)
    inputs = [_vi("x", [1, 16, 32]), _vi("pos", [1, 16], TensorProto.INT64), _vi("cos", [64, 8]), _vi("sin", [64, 8])]
    report = _analyze(tmp_path, [node], inputs, [_vi("y", None)])
    assert report.compute.complete and (report.compute.macs, report.compute.flops) == (0, 3 * 512)
