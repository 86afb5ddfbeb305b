"""Bad ONNX input: each case raises ModelcostError with one clear line (the CLI turns it into exit code 1), or,
for an unknown op, returns the report with the problem listed (the CLI prints it, then exits 1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from modelcost import api
from modelcost.core.errors import ModelcostError, UnboundDimensionError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message and message
    return message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(str(tmp_path / "nope.onnx"))
    assert "no such file" in _one_line(err)


def test_truncated_file(tmp_path: Path) -> None:
    data = (SAMPLES / "resnet_tiny.onnx").read_bytes()
    for cut in (len(data) // 2, len(data) - 3, 10):
        (tmp_path / "cut.onnx").write_bytes(data[:cut])
        with pytest.raises(ModelcostError) as err:
            api.analyze_static(str(tmp_path / "cut.onnx"))
        assert "truncated" in _one_line(err)


def test_non_onnx_files(tmp_path: Path) -> None:
    cases = {
        "text.onnx": b"hello, this is not a model\n",
        "random.onnx": np.random.RandomState(0).bytes(4096),
        "empty.onnx": b"",
        "json.onnx": b'{"graph": []}',
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ModelcostError) as err:
            api.analyze_static(str(tmp_path / name))
        assert "ONNX" in _one_line(err), name


def test_directory_named_onnx(tmp_path: Path) -> None:
    (tmp_path / "dir.onnx").mkdir()
    with pytest.raises(ModelcostError, match="not a file"):
        api.analyze_static(str(tmp_path / "dir.onnx"))


def _copy_mlp(tmp_path: Path) -> tuple[Path, Path]:
    model, data = tmp_path / "mlp_external.onnx", tmp_path / "mlp_external.onnx.data"
    shutil.copy(SAMPLES / model.name, model)
    shutil.copy(SAMPLES / data.name, data)
    return model, data


def test_missing_external_data_file(tmp_path: Path) -> None:
    model, data = _copy_mlp(tmp_path)
    data.unlink()
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(str(model))
    assert "'mlp_external.onnx.data'" in _one_line(err) and "not found" in str(err.value)


def test_short_external_data_file(tmp_path: Path) -> None:
    model, data = _copy_mlp(tmp_path)
    with open(data, "r+b") as f:
        f.truncate(51_112 - 4)  # the last tensor (head.bias, 40 bytes at 51,072) now lacks 4 bytes
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(str(model))
    assert "too short" in _one_line(err) and "'head.bias'" in str(err.value) and "51112" in str(err.value)


def _with_location(tmp_path: Path, location: str) -> Path:
    model, _ = _copy_mlp(tmp_path)
    proto = onnx.load(str(model), load_external_data=False)
    for entry in proto.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    onnx.save(proto, str(model))
    return model


@pytest.mark.parametrize(
    "location", ["/etc/passwd", "../mlp_external.onnx.data", "sub/../../x.data", "C:\\weights.bin", "\\\\server\\w.bin"]
)
def test_escaping_external_location(tmp_path: Path, location: str) -> None:
    model = _with_location(tmp_path, location)
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(str(model))
    message = _one_line(err)
    assert "refusing" in message and repr(location) in message


def test_external_location_symlinked_out_of_the_folder(tmp_path: Path) -> None:
    """Security: a location that is a symlink (to a file, or through a linked folder) leaving the model's folder
    is refused like '..', although its text is a plain relative path."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.bin"
    secret.write_bytes(b"\0" * 100_000)  # long enough for every tensor: only the symlink check can refuse it
    inside = tmp_path / "model"
    inside.mkdir()
    (inside / "linked.data").symlink_to(secret)
    (inside / "linkdir").symlink_to(outside, target_is_directory=True)
    for location in ("linked.data", "linkdir/secret.bin"):
        model = _with_location(inside, location)
        with pytest.raises(ModelcostError) as err:
            api.analyze_static(str(model))
        message = _one_line(err)
        assert "refusing" in message and "symlink" in message and repr(location) in message


def test_external_location_symlink_inside_the_folder_is_fine(tmp_path: Path) -> None:
    model, data = _copy_mlp(tmp_path)
    (tmp_path / "weights").mkdir()
    data.rename(tmp_path / "weights" / data.name)
    data.symlink_to(Path("weights") / data.name)  # a relative link that stays inside the folder
    assert api.analyze_static(str(model)).params.total > 0


def test_external_location_with_nul_byte(tmp_path: Path) -> None:
    model = _with_location(tmp_path, "mlp_external.onnx.data\0/etc/passwd")
    with pytest.raises(ModelcostError) as err:
        api.analyze_static(str(model))
    assert "NUL byte" in _one_line(err)


def test_external_length_shorter_than_dims(tmp_path: Path) -> None:
    model, _ = _copy_mlp(tmp_path)
    proto = onnx.load(str(model), load_external_data=False)
    for entry in proto.graph.initializer[0].external_data:
        if entry.key == "length":
            entry.value = "100"
    onnx.save(proto, str(model))
    with pytest.raises(ModelcostError, match="declares 100 bytes"):
        api.analyze_static(str(model))


def test_unknown_op_makes_a_partial_result_and_the_rest_is_reported(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("FancyOp", ["a"], ["b"], name="fancy", domain="my.custom"),
        helper.make_node("MatMul", ["a", "w"], ["y"], name="mm"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, None),
        ],
        initializer=[numpy_helper.from_array(np.ones((4, 3), np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my.custom", 1)])
    onnx.save(model, str(tmp_path / "custom.onnx"))
    report = api.analyze_static(str(tmp_path / "custom.onnx"))
    assert report.compute.uncounted_ops == {"my.custom:FancyOp": 1} and report.problems == []
    assert not report.compute.complete
    (reason,) = report.compute.incomplete_reasons
    assert reason.startswith("my.custom:FancyOp x1: ") and "no ONNX schema" in reason and "my.custom" in reason
    assert report.compute.macs == 2 * 3 * 4  # the MatMul is still counted


def test_unbound_dimension(tmp_path: Path) -> None:
    with pytest.raises(UnboundDimensionError) as err:
        api.analyze_static(str(SAMPLES / "dynamic_batch.onnx"))
    message = _one_line(err)
    assert "'tokens'" in message and "'batch'" in message and "--batch-size" in message


def test_incompatible_input_shape_is_a_problem(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "k"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.ones((4, 3), np.float32), "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "m.onnx"))
    report = api.analyze_static(str(tmp_path / "m.onnx"), input_shapes=["x=2x5"])  # k = 5 does not match w's 4
    assert report.layers[0].status == "uncounted" and report.compute.uncounted_ops == {"MatMul": 1}
    assert report.problems == [
        "node 'MatMul_0' (MatMul): inner dims of [2, 5] and [4, 3] do not match (5 vs 4); "
        "check --input-shape / --batch-size"
    ]


def test_node_reading_undefined_tensor(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "m.onnx"))
    with pytest.raises(ModelcostError, match="'ghost'.*malformed"):
        api.analyze_static(str(tmp_path / "m.onnx"))
