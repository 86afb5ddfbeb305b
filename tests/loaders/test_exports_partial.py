"""The partial-result contract, invalid graphs, and the lean reader.

* A result with an uncounted op is partial: `≥` before the totals, one warning line naming the ops,
  ``compute.complete: false`` with the reasons in the JSON, exit code 3 unless ``--allow-partial``.
* A graph with a cycle, or a node reading a tensor nothing produces, is bad input: exit 1, one line naming it.
* The lean reader leaves big weights out of the parse but keeps their dims, and keeps small integer tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from typer.testing import CliRunner

from modelcost import api
from modelcost.cli import app
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.onnx_lean import STUB_BYTES, is_stub
from modelcost.loaders.onnx_loader import load_onnx


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _save(tmp_path: Path, nodes: list, inputs: list, outputs: list, inits: list | None = None, name: str = "m") -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits or [])
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _unshaped_matmul(tmp_path: Path) -> Path:
    """x [3, 4] -> NonZero (data-dependent length n) -> [2, n] -> Cast -> Transpose [n, 2] -> MatMul w [2, 5]:
    the model's only MatMul has an input whose shape no inference can know."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
        helper.make_node("Cast", ["nz"], ["f"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Transpose", ["f"], ["t"], name="transpose"),
        helper.make_node("MatMul", ["t", "w"], ["y"], name="mm"),
    ]
    w = numpy_helper.from_array(np.ones((2, 5), np.float32), "w")
    return _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])


def test_all_matmuls_uncounted_is_never_shown_as_zero_macs(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = invoke("analyze", str(_unshaped_matmul(tmp_path)), "--static", "--json", str(out))
    assert result.exit_code == 3, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.stdout.splitlines()
            if line.startswith("│") and line.count("│") >= 3}
    assert rows["MACs"] == "≥ 0" and rows["FLOPs"].startswith("≥ ")  # a lower bound, not a result of 0
    warning = [line for line in result.stdout.splitlines() if line.startswith("warning: partial result")]
    assert len(warning) == 1 and "MatMul x1" in warning[0]
    doc = json.loads(out.read_text())
    assert doc["compute"]["complete"] is False
    assert doc["compute"]["incomplete_reasons"] == ["MatMul x1: a tensor shape could not be inferred"]
    assert "exit code 3" in result.stderr and "--allow-partial" in result.stderr


def test_allow_partial_exits_0_and_still_marks_the_totals(tmp_path: Path) -> None:
    result = invoke("analyze", str(_unshaped_matmul(tmp_path)), "--static", "--allow-partial")
    assert result.exit_code == 0, result.output
    assert "≥ 0" in result.stdout and "warning: partial result" in result.stdout


def test_a_complete_result_has_no_marker(tmp_path: Path) -> None:
    # x [2, 4] x w [4, 3]: 2*3*4 = 24 MACs
    path = _save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                 [numpy_helper.from_array(np.ones((4, 3), np.float32), "w")])
    out = tmp_path / "r.json"
    result = invoke("analyze", str(path), "--static", "--json", str(out))
    assert result.exit_code == 0 and "≥" not in result.stdout and "partial" not in result.stdout
    doc = json.loads(out.read_text())
    assert doc["compute"]["macs"] == 24 and doc["compute"]["complete"] is True
    assert doc["compute"]["incomplete_reasons"] == []


def test_bench_and_analyze_take_allow_partial() -> None:
    for command in ("analyze", "bench"):
        result = invoke(command, "--help")
        assert result.exit_code == 0 and "--allow-partial" in result.stdout


def test_a_two_node_cycle_is_bad_input(tmp_path: Path) -> None:
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
             helper.make_node("Relu", ["a"], ["b"], name="second")]
    path = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                 [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    result = invoke("analyze", str(path), "--static")
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cycle" in lines[0] and ("'first'" in lines[0] or "'second'" in lines[0])
    assert "Traceback" not in result.output


def test_out_of_order_nodes_are_not_a_cycle(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["a"], ["y"], name="second"),
             helper.make_node("Relu", ["x"], ["a"], name="first")]
    path = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    assert invoke("analyze", str(path), "--static").exit_code == 0


def test_a_dangling_input_is_bad_input(tmp_path: Path) -> None:
    path = _save(tmp_path, [helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    result = invoke("analyze", str(path), "--static")
    assert result.exit_code == 1 and "'adder'" in result.stderr and "'ghost'" in result.stderr


def test_the_lean_reader_stubs_big_weights_and_keeps_small_int_tables(tmp_path: Path) -> None:
    """w [64, 64] float32 = 16 KB of data (> STUB_BYTES): a stub with its dims; positions [1, 512] int64 = 4 KB
    (an integer table, kept up to 64 KB): its values stay. x [1, 64] x w: 64*64 = 4,096 MACs."""
    positions = np.arange(512, dtype=np.int64).reshape(1, 512)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Identity", ["pos"], ["p"])]
    path = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                  helper.make_tensor_value_info("p", TensorProto.INT64, None)],
                 [numpy_helper.from_array(np.ones((64, 64), np.float32), "w"),
                  numpy_helper.from_array(positions, "pos")])
    loaded = load_onnx(str(path), LoadOptions())
    inits = {t.name: t for t in loaded.model.graph.initializer}
    assert 64 * 64 * 4 > STUB_BYTES and is_stub(inits["w"]) and list(inits["w"].dims) == [64, 64]
    assert not is_stub(inits["pos"]) and (numpy_helper.to_array(inits["pos"]) == positions).all()
    assert loaded.external.tensors == 0 and loaded.external_data_bytes == 0  # stubs are not external data
    report = api.analyze_static(str(path))
    # the int64 position table (512) is a constant, not a parameter (issue 15: non-weight initializers apart)
    assert report.compute.macs == 4_096 and report.params.total == 64 * 64 and report.params.constants == 512
    assert report.storage.bytes == 64 * 64 * 4  # weights only: the int64 table is a constant (issue 15)


def test_a_text_format_model_still_loads(tmp_path: Path) -> None:
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]), opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.textproto"
    onnx.save(model, str(path), format="textproto")
    assert load_onnx(str(path), LoadOptions()).model.graph.node[0].op_type == "Relu"
