"""The ONNX files people have are counted exactly: every transformers family of tests/exports_cases.py,
exported with the TorchScript exporter (opset 17) and the dynamo exporter (opset 18), gives the same MACs as the
PyTorch counter on the same module at the same input shapes, and a complete result.

The reference is the PyTorch counter, itself checked against hand derivations in test_torch_counter.py and
test_torch_onnx_agree.py; the figures below are derived by hand once more for two families so that both sides
cannot drift together. Exports are made once per test session (tests/exports_cases.py caches them)."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import tests.exports_cases as ec

from modelcost import api

# the exports are made once per process (tests/exports_cases.py): one test process makes them for both files
pytestmark = pytest.mark.xdist_group("exports")

FAMILIES = list(ec.CASES)


def _check(family: str, exporter: str) -> None:
    *_, torch_macs = ec.built(family)
    report = api.analyze_static(str(ec.exported(family, exporter)))
    assert report.compute.complete, report.compute.incomplete_reasons
    assert report.compute.uncounted_ops == {}
    assert report.compute.macs == torch_macs


@pytest.mark.parametrize("family", FAMILIES)
def test_torchscript_export_is_exact(family: str) -> None:
    _check(family, "torchscript")


@pytest.mark.slow  # the dynamo exporter takes 2-6 s per model on 2 cores
@pytest.mark.parametrize("family", FAMILIES)
def test_dynamo_export_is_exact(family: str) -> None:
    pytest.importorskip("onnxscript")
    _check(family, "dynamo")


def test_the_reference_is_right_for_bert_and_llama() -> None:
    # BERT (hidden 32, 2 heads, FFN 64, seq 16, 2 layers): per layer q, k, v, out 4 * 16*32*32 = 65,536,
    # attention 2 heads * 16*16*(16 + 16) = 16,384, FFN 2 * 16*32*64 = 65,536 -> 147,456; x 2 + pooler 32*32
    assert ec.built("bert")[3] == 2 * 147_456 + 32 * 32
    # Llama (hidden 32, 4 query heads / 2 KV heads of 8, MLP 64, seq 16): q, o 2 * 16*32*32 = 32,768; k, v
    # 2 * 16*32*16 = 16,384; attention 4 heads * 16*16*(8 + 8) = 16,384; gate, up, down 3 * 16*32*64 = 98,304
    # -> 163,840 per layer, x 2
    assert ec.built("llama")[3] == 2 * 163_840


def test_the_issue_case_is_exact() -> None:
    """BERT with eager attention from the TorchScript exporter: onnx's inference stops at the embeddings'
    Expand (its shape comes from ConstantOfShape -> Mul -> Equal -> Where, which onnx does not propagate); the
    folded shape value gives it, and every MatMul after it is counted."""
    report = api.analyze_static(str(ec.exported("bert-eager", "torchscript")))
    assert report.compute.complete and report.compute.macs == ec.built("bert-eager")[3]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_shape_the_maintained_inferencers_find_on_the_full_model_is_found_without_weights(family: str) -> None:
    """Item 1 of issue 8: onnx's inference (data propagation on) and ONNX Runtime's symbolic inference run on the
    full TorchScript export, weights loaded; every static shape either finds is also what modelcost infers on
    its weight-free skeleton."""
    import onnx
    from onnx import shape_inference

    from modelcost.analysis.onnx_shapes import infer
    from modelcost.analysis.onnx_symbolic import symbolic_shapes
    from modelcost.loaders.base import LoadOptions
    from modelcost.loaders.onnx_loader import load_onnx
    from modelcost.loaders.onnx_types import is_static, value_info_shape

    path = ec.exported(family, "torchscript")
    full = onnx.load(str(path))
    by_onnx = shape_inference.infer_shapes(full, data_prop=True).graph
    found = {vi.name: value_info_shape(vi.type) for vi in (*by_onnx.value_info, *by_onnx.output)}
    found.update({name: value_info_shape(vi.type) for name, vi in symbolic_shapes(full).items()})
    found = {name: shape for name, shape in found.items() if is_static(shape)}
    loaded = load_onnx(str(path), LoadOptions())
    table = infer(loaded.model, loaded.inputs, loaded.opset).table
    ours = {name: (table.get((), name).static_shape if table.get((), name) else None) for name in found}
    assert ours == found
