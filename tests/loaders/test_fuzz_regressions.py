"""Crashes a fuzzing pass found (issue 15, item 8), each generated here as the malformed file that caused it: every one
must end in one clear ModelcostError line (the CLI's exit 1) or a sound analysis, never a traceback.

- model-local functions that call themselves, or two that share an id: onnx's inliner raised ValidationError;
- a Loop whose trip-count initializer is not one integer ([[3]], a string, a bool, a float): TypeError / ValueError;
- a node whose op type (or domain, or name) is not UTF-8: protobuf hands over bytes, and the schema lookup raised;
- a TorchScript archive whose member name is not valid UTF-8: zipfile raised UnicodeDecodeError.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from modelcost import api
from modelcost.core.errors import ModelcostError

OPSET = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]


def _vi(name: str, elem: int = TensorProto.FLOAT, shape: list | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, [2] if shape is None else shape)


def _save(model: onnx.ModelProto, path: Path) -> str:
    path.write_bytes(model.SerializeToString())  # not onnx.save: no checker, the file is malformed on purpose
    return str(path)


def _one_line_error(path: str, *needles: str) -> str:
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(path)
    text = str(err.value)
    assert "\n" not in text
    for needle in needles:
        assert needle in text, text
    return text


def test_recursive_local_function(tmp_path: Path) -> None:
    rec = helper.make_function("local", "rec", ["x"], ["y"], [helper.make_node("rec", ["x"], ["y"], domain="local")],
                               OPSET[:1])
    graph = helper.make_graph([helper.make_node("rec", ["x"], ["y"], domain="local")], "g", [_vi("x")], [_vi("y")])
    path = _save(helper.make_model(graph, opset_imports=OPSET, functions=[rec]), tmp_path / "rec.onnx")
    _one_line_error(path, "local functions cannot be inlined", "recursive")


def test_local_functions_sharing_an_id(tmp_path: Path) -> None:
    funcs = [helper.make_function("local", "dup", ["x"], ["y"], [helper.make_node(op, ["x"], ["y"])], OPSET[:1])
             for op in ("Relu", "Neg")]
    graph = helper.make_graph([helper.make_node("dup", ["x"], ["y"], domain="local")], "g", [_vi("x")], [_vi("y")])
    path = _save(helper.make_model(graph, opset_imports=OPSET, functions=funcs), tmp_path / "dup.onnx")
    _one_line_error(path, "local functions cannot be inlined", "same implementation id")


def _loop_model(trip: np.ndarray, path: Path) -> str:
    """Loop(M, cond, x): the body runs Relu and Neg (a scan output) on 2 elements, 2 FLOPs each per iteration."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Relu", ["v_in"], ["v_out"]),
         helper.make_node("Neg", ["v_in"], ["s_out"])], "body",
        [_vi("i", TensorProto.INT64, []), _vi("cond_in", TensorProto.BOOL, []), _vi("v_in")],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("v_out"), _vi("s_out")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "x"], ["y", "s"], body=body)], "g", [_vi("x")],
        [_vi("y"), helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(trip, "M"), numpy_helper.from_array(np.array(True), "cond")])
    return _save(helper.make_model(graph, opset_imports=OPSET[:1]), path)


@pytest.mark.parametrize(("trip", "iterations"), [
    (np.array([[3]], np.int64), 3),  # one integer in a [1,1] block: 3 iterations
    (np.array(["3"], dtype=object), 1),  # a string: not a trip count, 1 iteration assumed (and said)
    (np.array([True]), 1),  # a bool
    (np.array(3.5, np.float32), 1),  # a float (M is int64 by the spec)
    (np.array([3, 4], np.int64), 1),  # two values
])
def test_loop_trip_count_that_is_not_one_integer(tmp_path: Path, trip: np.ndarray, iterations: int) -> None:
    report = api.analyze_static(_loop_model(trip, tmp_path / "loop.onnx"))
    # Per iteration: Relu on 2 elements = 2 FLOPs, Neg on 2 elements = 2 FLOPs -> 4 FLOPs x iterations
    assert report.compute.flops == 4 * iterations
    said = "trip count M = 3" if iterations == 3 else "trip count not known statically"
    assert any(said in note for note in report.notes), report.notes


@pytest.mark.parametrize("field", [b"Relu", b"ai.onnx.ml", b"relu_node"])
def test_node_text_that_is_not_utf8(tmp_path: Path, field: bytes) -> None:
    domain = "ai.onnx.ml" if field == b"ai.onnx.ml" else ""
    node = helper.make_node("Relu", ["x"], ["y"], name="relu_node", domain=domain)
    graph = helper.make_graph([node], "g", [_vi("x")], [_vi("y")])
    model = helper.make_model(graph, opset_imports=[*OPSET[:1], helper.make_opsetid("ai.onnx.ml", 3)])
    data = model.SerializeToString()
    bad = field[:1] + b"\xff" + field[2:]  # same length: the protobuf stays well-formed, the text is not UTF-8
    assert data.count(field) >= 1
    (tmp_path / "bad.onnx").write_bytes(data.replace(field, bad, 1))
    # loaders/onnx_sanity.py (issue 12) says it first:
    # "the op type of node #0 is not valid UTF-8 text; the file is corrupt"
    _one_line_error(str(tmp_path / "bad.onnx"), "UTF-8 text", "node #0")


def test_torchscript_member_name_that_is_not_utf8(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    path = tmp_path / "m.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(4, 3)), str(path))
    data = bytearray(path.read_bytes())
    at = data.index(b"PK\x01\x02")  # the first central-directory entry
    flags, = struct.unpack_from("<H", data, at + 8)
    struct.pack_into("<H", data, at + 8, flags | 0x800)  # "names are UTF-8" ...
    data[at + 46] = 0xFF  # ... and the name's first byte is not
    path.write_bytes(bytes(data))
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(str(path), input_shapes=["input=1x4"])
    assert "\n" not in str(err.value) and "m.pt" in str(err.value)
