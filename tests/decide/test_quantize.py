"""quantize: a static Q/DQ INT8 model and an FP16 model from a small ONNX conv net, on the CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from modelcost.core.errors import ModelcostError
from modelcost.core.types import TensorSpec
from modelcost.decide.quantize import convert_fp16, load_npz, quantize_int8


def make_convnet(path: Path, channels: int = 16, size: int = 16, classes: int = 10, seed: int = 0) -> Path:
    """x[N,3,S,S] -> Conv 3x3 (C) -> Relu -> Conv 3x3 (C) -> Relu -> GlobalAveragePool -> Flatten -> Gemm."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def init(name, *shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", classes])],
        [init("w1", channels, 3, 3, 3), init("b1", channels), init("w2", channels, channels, 3, 3, scale=0.1),
         init("b2", channels), init("wf", classes, channels), init("bf", classes)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def specs_for(size: int = 16):
    return lambda b: [TensorSpec("x", (b, 3, size, size), "float32")]


@pytest.fixture(scope="module")
def convnet(tmp_path_factory):
    return make_convnet(tmp_path_factory.mktemp("m") / "convnet.onnx")


def _ops(path: Path) -> dict[str, int]:
    import onnx

    counts: dict[str, int] = {}
    for n in onnx.load(str(path)).graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return counts


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_int8_qdq_model_on_generated_data(convnet, tmp_path):
    q = quantize_int8(convnet, tmp_path / "q.onnx", specs_for=specs_for(), samples=16, chunk=8)
    assert q.path == tmp_path / "q.onnx" and q.precision == "int8"
    assert q.calibration.startswith("generated data (16 samples")  # says it was not real data
    ops = _ops(q.path)
    # QDQ: every Conv / Gemm input is dequantized; the float ops stay in the graph.
    assert ops["Conv"] == 2 and ops["Gemm"] == 1
    assert ops["QuantizeLinear"] >= 3 and ops["DequantizeLinear"] >= 6  # 3 activations + 3 weights at least
    x = np.random.default_rng(5).standard_normal((4, 3, 16, 16)).astype(np.float32)
    ref, got = _run(convnet, x), _run(q.path, x)
    cos = float((ref * got).sum() / np.linalg.norm(ref) / np.linalg.norm(got))
    assert cos > 0.98  # INT8 is an approximation, but a close one on the data it was calibrated for


def test_int8_with_calibration_file(convnet, tmp_path):
    data = tmp_path / "calib.npz"
    np.savez(data, images=np.random.default_rng(1).standard_normal((10, 3, 16, 16)).astype(np.float32))
    q = quantize_int8(convnet, specs_for=specs_for(), calib_data=data, chunk=4)
    assert q.path == convnet.with_name("convnet.int8.onnx")  # default: beside the model
    assert q.calibration == f"--calib-data {data} (10 samples)"


def test_fp16_keeps_float32_io(convnet, tmp_path):
    import onnx

    h = convert_fp16(convnet, tmp_path / "h.onnx")
    m = onnx.load(str(h.path))
    assert m.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert {t.data_type for t in m.graph.initializer} == {onnx.TensorProto.FLOAT16}
    x = np.random.default_rng(2).standard_normal((2, 3, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(_run(h.path, x), _run(convnet, x), rtol=0.02, atol=0.02)


def test_bad_calibration_files(convnet, tmp_path):
    with pytest.raises(ModelcostError, match="does not exist"):
        load_npz(tmp_path / "nope.npz", ["x"])
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    with pytest.raises(ModelcostError, match="not a readable .npz"):
        load_npz(bad, ["x"])
    two = tmp_path / "two.npz"
    np.savez(two, a=np.zeros((2, 3)), b=np.zeros((2, 3)))
    with pytest.raises(ModelcostError, match="missing \\['x'\\]"):
        load_npz(two, ["x"])


def test_cli_quantize_int8_and_fp16(tmp_path):
    from typer.testing import CliRunner

    from modelcost.cli.app import app

    model = make_convnet(tmp_path / "net.onnx", channels=8)
    r = CliRunner().invoke(app, ["quantize", str(model), "--int8", "--fp16", "--backends", "ort-cpu", "--device", "cpu",
                                 "--rounds", "2", "--runs-per-block", "3", "--warmup-max-s", "0.2",
                                 "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "net.int8.onnx").is_file() and (tmp_path / "net.fp16.onnx").is_file()
    assert "calibrated on generated data" in r.output
    # one report folder per candidate under --out
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == ["net.fp16", "net.int8"]
    md = (tmp_path / "rep" / "net.int8" / "report.md").read_text()
    assert "INT8 calibration: generated data" in md


def test_cli_quantize_needs_onnx_and_a_target(tmp_path):
    from typer.testing import CliRunner

    from modelcost.cli.app import app

    model = make_convnet(tmp_path / "net.onnx", channels=8)
    r = CliRunner().invoke(app, ["quantize", str(model)])
    assert r.exit_code == 1 and "pass --int8 and/or --fp16" in r.output
    r = CliRunner().invoke(app, ["quantize", "zoo:resnet18", "--int8"])
    assert r.exit_code == 1 and "quantize takes an ONNX file" in r.output


def test_a_failed_quantization_removes_only_its_own_temporary_file(convnet, tmp_path, monkeypatch):
    import onnxruntime.quantization as ortq

    def fail(*a, **k):
        raise RuntimeError("calibration failed")

    monkeypatch.setattr(ortq, "quantize_static", fail)
    mine = tmp_path / ".q.onnx.tmp"  # a file of the user's at the name the temporary file once had
    mine.write_text("keep")
    with pytest.raises(ModelcostError, match="INT8 quantization of .* failed: RuntimeError: calibration failed"):
        quantize_int8(convnet, tmp_path / "q.onnx", specs_for=specs_for(), samples=8, chunk=8)
    assert mine.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".q.onnx.tmp"]  # and no temporary file of its own left
