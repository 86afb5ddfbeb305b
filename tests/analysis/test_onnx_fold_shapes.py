"""Shapes from folded values where ONNX's own inference cannot read them (analysis/onnx_fold.py's shape rules and
the shape arithmetic it folds): each rule derived by hand, then a graph whose Pad, Reshape, Resize and
ConstantOfShape take computed shape inputs, as transformers' Swin, MobileViT and DINOv2 exports do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from modelcost import api
from modelcost.analysis.onnx_fold import _ops, padded_shape, reshaped_shape, resized_shape, tiled_shape


def test_the_shape_rules() -> None:
    # 1 x 15 x 15 x 16 tokens padded to windows of 4: pads (0, 0, 0, 0, 0, 1, 1, 0) -> 1 x 16 x 16 x 16
    assert padded_shape((1, 15, 15, 16), np.array([0, 0, 0, 0, 0, 1, 1, 0])) == (1, 16, 16, 16)
    assert padded_shape((1, 15), np.array([0, 0])) is None  # pads of another rank
    assert padded_shape((2, 3), np.array([0, -4, 0, 0])) is None  # a negative size
    # 1 x 16 x 16 x 16 into windows: (-1, 4, 4, 16) -> 16 x 4 x 4 x 16; a 0 keeps the input's dim
    assert reshaped_shape((1, 16, 16, 16), np.array([-1, 4, 4, 16])) == (16, 4, 4, 16)
    assert reshaped_shape((2, 6), np.array([0, -1, 3])) == (2, 2, 3)
    assert reshaped_shape((2, 6), np.array([0, 5]), allowzero=1) is None  # 0 x 5 holds no 12 elements
    assert reshaped_shape((2, 6), np.array([-1, -1])) is None
    # a 1 x 8 x 5 x 5 map resized to sizes (1, 8, 10, 10), or by scales (1, 1, 2, 1.5): floor(5 x 1.5) = 7
    assert resized_shape((1, 8, 5, 5), None, np.array([1, 8, 10, 10])) == (1, 8, 10, 10)
    assert resized_shape((1, 8, 5, 5), np.array([1, 1, 2, 1.5], np.float32), None) == (1, 8, 10, 7)
    # a 1 x 1 x 1 x 768 row tiled (1, 1, 4, 1) -> 1 x 1 x 4 x 768
    assert tiled_shape((1, 1, 1, 768), np.array([1, 1, 4, 1])) == (1, 1, 4, 768)
    assert tiled_shape((1, 768), np.array([2])) is None


def test_the_folded_ops_compute_as_onnx_defines_them() -> None:
    ops = _ops(17)
    assert ops["Mod"]({}, np.array([15, -7]), np.array(4)).tolist() == [3, 1]  # the sign of the divisor
    assert ops["Mod"]({"fmod": 1}, np.array([15.0, -7.0]), np.array(4.0)).tolist() == [3.0, -3.0]
    assert ops["Ceil"]({}, np.array([2.25])).tolist() == [3.0]
    assert ops["Pow"]({}, np.array([1369]), np.array(0.5)).tolist() == [37]  # DINOv2's sqrt(37 x 37), int kept
    assert ops["Transpose"]({"perm": [1, 0]}, np.array([[1, 2], [3, 4]])).tolist() == [[1, 3], [2, 4]]
    # OneHot of indices [1, -1] at depth 3, values (0, 9): -1 counts from the end
    assert ops["OneHot"]({}, np.array([1, -1]), np.array(3), np.array([0, 9])).tolist() == [[0, 9, 0], [0, 0, 9]]
    assert ops["OneHot"]({"axis": 0}, np.array([1, -1]), np.array(3), np.array([0, 9])).tolist() == \
        [[0, 0], [9, 0], [0, 9]]
    assert ops["Tile"]({}, np.array([[1, 2]]), np.array([2, 1])).tolist() == [[1, 2], [1, 2]]


def test_computed_pads_and_targets_give_the_shapes_their_convs_need(tmp_path: Path) -> None:
    # x 1 x 4 x H x 15 with H symbolic in the file but 15 wide: pad the width to a multiple of 4 by
    # Mod(4 - Mod(15, 4), 4) = 1 (Shape -> Gather -> Mod -> Sub -> Mod -> Concat -> Pad), then a 1 x 1 conv 4 -> 8
    # over 1 x 4 x 6 x 16: 6 x 16 x 8 x 4 = 3,072 MACs; reshape to (0, 8, -1) and a ConstantOfShape of the
    # computed (1, 8) shape added on
    i64 = TensorProto.INT64

    def c(name: str, v: list[int]) -> onnx.NodeProto:
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_t", i64, [len(v)], v))

    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        c("idx", [3]), helper.make_node("Gather", ["shape", "idx"], ["w"], axis=0),
        c("four", [4]), helper.make_node("Mod", ["w", "four"], ["r"]),
        helper.make_node("Sub", ["four", "r"], ["need"]), helper.make_node("Mod", ["need", "four"], ["pad_w"]),
        c("zeros7", [0, 0, 0, 0, 0, 0, 0]), helper.make_node("Concat", ["zeros7", "pad_w"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["padded"]),
        helper.make_node("Conv", ["padded", "w1"], ["y"]),
        c("target", [0, 8, -1]), helper.make_node("Reshape", ["y", "target"], ["flat"]),
        helper.make_node("Shape", ["flat"], ["fshape"]),
        c("s0", [0]), c("s2", [2]), helper.make_node("Slice", ["fshape", "s0", "s2"], ["head"]),
        helper.make_node("ConstantOfShape", ["head"], ["ones"],
                         value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])),
        helper.make_node("Unsqueeze", ["ones", "s2"], ["ones3"]),
        helper.make_node("Add", ["flat", "ones3"], ["out"]),
    ]
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [8, 4, 1, 1], np.ones(32, np.float32))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 15])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], [w1])
    path = tmp_path / "computed.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    report = api.analyze_static(str(path))
    assert report.compute.complete, report.compute.incomplete_reasons
    assert report.compute.macs == 3_072
    # the add: 1 x 8 x 96 outputs, 1 FLOP each, beside the conv's 2 x 3,072; the shape arithmetic (two Mods
    # and a Sub of one element) 3
    assert report.compute.flops == 2 * 3_072 + 8 * 96 + 3
