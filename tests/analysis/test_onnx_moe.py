"""A sparse mixture of experts exported to ONNX is counted exactly (issue 25): the rows each expert gets come from
NonZero over the top-k routing mask, a data-dependent length shape inference cannot know, so the experts' MatMuls
were uncounted (4% of the MACs, exit 3). modelcost.analysis.onnx_moe binds them to the uniform share of the
T x k routed rows, whose total is exact whatever the routing.

Sizes (tests/exports_cases.MOE): hidden d 64, SwiGLU experts of width f 128, E 4 experts, top-k 2, T 8 tokens.
Hand derivation of the MACs:
    router      T x d x E          = 8 x 64 x 4          =   2,048
    experts     T x k x 3 x d x f  = 8 x 2 x 3 x 64 x 128 = 393,216   (w1 and w3 d->f, w2 f->d, per routed row)
    total                                                  395,264
The same figure comes from a real CPU run of the module (exports_cases.real_macs: torch's flop counter on the
matrix products at the sizes the routing gave)."""

from __future__ import annotations

import json
from pathlib import Path

import tests.exports_cases as ec
import pytest
from typer.testing import CliRunner

from modelcost import api
from modelcost.cli import app

pytest.importorskip("onnx")
pytest.importorskip("torch")

MOE_MACS = 8 * 64 * 4 + 8 * 2 * 3 * 64 * 128  # router 2,048 + experts 393,216 (module doc)


def _export(tmp_path: Path, built: tuple, exporter: str, name: str = "moe") -> Path:
    module, inputs, names = built
    return ec.export(module, inputs, names, tmp_path / f"{name}-{exporter}.onnx", exporter)


def _expert_rows(report) -> list[int]:
    """Rows of each expert's down projection (w2, f -> d: 128 x 64 weights), in graph order."""
    return [layer.output_shapes[0][0] for layer in report.layers if layer.macs and layer.params == 128 * 64
            and layer.output_shapes[0][-1] == 64]


@pytest.mark.parametrize("equal", [False, True], ids=["one-hot", "indices-equal-e"])
@pytest.mark.parametrize("exporter", ["torchscript", pytest.param("dynamo", marks=pytest.mark.slow)])
def test_sparse_moe_export_is_exact(tmp_path: Path, exporter: str, equal: bool) -> None:
    """Each expert's tokens found with torch.where(one_hot mask[e]) (Mixtral) or torch.where(indices == e)."""
    if exporter == "dynamo":
        pytest.importorskip("onnxscript")
    built = ec.sparse_moe(equal=equal)
    assert ec.real_macs(*built[:2]) == MOE_MACS  # the real run agrees with the hand derivation
    report = api.analyze_static(str(_export(tmp_path, built, exporter)))
    assert report.compute.complete, report.compute.incomplete_reasons
    assert report.compute.uncounted_ops == {}
    assert report.compute.macs == MOE_MACS
    # per expert: the uniform share of the T x k = 16 routed rows over 4 experts
    assert _expert_rows(report) == [4, 4, 4, 4]
    note = next(n for n in report.notes if n.startswith("mixture of experts"))
    assert "8 tokens x top-2 of 4 experts = 16 routed rows" in note and "uniform share (4 each" in note


def test_uneven_routing_keeps_the_total_exact(tmp_path: Path) -> None:
    # T = 5 tokens: 10 routed rows over 4 experts, shares 3, 3, 2, 2. MACs: router 5 x 64 x 4 = 1,280 + experts
    # 10 x 3 x 64 x 128 = 245,760 -> 247,040, whatever the routing (the real run routes differently)
    built = ec.sparse_moe(tokens=5)
    assert ec.real_macs(*built[:2]) == 1_280 + 245_760
    report = api.analyze_static(str(_export(tmp_path, built, "torchscript")))
    assert report.compute.complete and report.compute.macs == 1_280 + 245_760
    assert _expert_rows(report) == [3, 3, 2, 2]
    assert any("uniform share (3 or 2 over 4 experts)" in n for n in report.notes)


@pytest.mark.slow  # transformers' import and the dynamo exporter: ~20 s on 2 cores
@pytest.mark.parametrize(
    ("case", "exporter"),
    [(case, exporter) for case, (_, ways) in ec.MOE_CASES.items() if case.startswith("mixtral") for exporter in ways],
)
def test_transformers_mixtral_block_export_is_exact(tmp_path: Path, case: str, exporter: str) -> None:
    """MixtralSparseMoeBlock: eager experts (TorchScript unrolls its loop over the hit experts) and batched_mm
    experts (a weight copy per routed row: static shapes). Same sizes, so the same hand figure: the router is a
    64 -> 4 Linear, the experts a fused gate_up 64 -> 256 and a down 128 -> 64, 3 x 64 x 128 MACs per row."""
    pytest.importorskip("transformers")
    if exporter == "dynamo":
        pytest.importorskip("onnxscript")
    built = ec.MOE_CASES[case][0]()
    assert ec.real_macs(*built[:2]) == MOE_MACS
    report = api.analyze_static(str(_export(tmp_path, built, exporter, "mixtral")))
    assert report.compute.complete, report.compute.incomplete_reasons
    assert report.compute.macs == MOE_MACS


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        # the loop leaves expert 3 out: the 3 experts' rows no longer add up to T x k
        ({"experts_run": 3}, "not every expert"),
        # threshold routing (probability > 0.3, no top-k): how many experts a token visits depends on the data
        ({"threshold": 0.3}, "no top-k"),
    ],
)
def test_routing_it_cannot_size_stays_partial(tmp_path: Path, kwargs: dict, why: str) -> None:
    report = api.analyze_static(str(_export(tmp_path, ec.sparse_moe(**kwargs), "torchscript")))
    assert not report.compute.complete, why
    assert "MatMul" in report.compute.uncounted_ops
    assert not any(n.startswith("mixture of experts") for n in report.notes)


def test_cli_exits_0_on_a_moe_export(tmp_path: Path) -> None:
    """The issue's symptom: `modelcost analyze moe.onnx` exited 3 with a partial count."""
    path = _export(tmp_path, ec.sparse_moe(), "torchscript")
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["analyze", str(path), "--static", "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["compute"]["complete"] is True and doc["compute"]["macs"] == MOE_MACS


def _hand_built(tmp_path: Path, depth: int) -> Path:
    """logits [8, 4] -> TopK k=2 -> OneHot(depth) -> Transpose [depth, 2, 8] -> per expert e < min(depth, 4):
    Gather e -> NonZero -> the token column -> Gather rows of h [8, 4] -> MatMul w [4, 3]."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, value: object, dtype: object = np.int64) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(value, dtype), name)

    nodes = [
        helper.make_node("TopK", ["logits", "k"], ["top_w", "top_i"], name="topk", axis=-1),
        helper.make_node("OneHot", ["top_i", "depth", "onoff"], ["hot"], axis=-1),
        helper.make_node("Transpose", ["hot"], ["mask"], perm=[2, 1, 0]),
    ]
    inits = [const("k", [2]), const("depth", depth), const("onoff", [0, 1]), const("one", 1),
             numpy_helper.from_array(np.ones((4, 3), np.float32), "w")]
    experts = min(depth, 4)
    for e in range(experts):
        inits.append(const(f"e{e}", e))
        nodes += [
            helper.make_node("Gather", ["mask", f"e{e}"], [f"sel{e}"], axis=0),
            helper.make_node("NonZero", [f"sel{e}"], [f"nz{e}"]),
            helper.make_node("Gather", [f"nz{e}", "one"], [f"tok{e}"], axis=0),
            helper.make_node("Gather", ["h", f"tok{e}"], [f"rows{e}"], axis=0),
            helper.make_node("MatMul", [f"rows{e}", "w"], [f"y{e}"], name=f"expert{e}"),
        ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [8, 4]) for n in ("logits", "h")]
    outputs = [helper.make_tensor_value_info(f"y{e}", TensorProto.FLOAT, None) for e in range(experts)]
    model = helper.make_model(helper.make_graph(nodes, "moe", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / f"hand-{depth}.onnx"
    onnx.save(model, str(path))
    return path


def test_hand_built_routing_graph(tmp_path: Path) -> None:
    report = api.analyze_static(str(_hand_built(tmp_path, depth=4)))
    # 8 tokens x top-2 = 16 rows, 4 per expert, x (4 x 3) MACs each = 192
    assert report.compute.complete and report.compute.macs == 16 * 12
    assert [layer.output_shapes for layer in report.layers if layer.name.startswith("expert")] == [[(4, 3)]] * 4
    # a one-hot of depth 3 drops the pairs routed to expert 3: the rows no longer add up to T x k, left partial
    report = api.analyze_static(str(_hand_built(tmp_path, depth=3)))
    assert not report.compute.complete and report.compute.uncounted_ops == {"MatMul": 3}
