"""``modelcost analyze`` end to end through typer's CliRunner: exit codes, stdout / stderr and the JSON report.

click >= 8.2 keeps stdout and stderr apart in ``Result`` (no ``mix_stderr``): ``result.stdout``, ``result.stderr``
and ``result.output`` (both, interleaved) are all available. Figures are hand-derived in sample_models/EXPECTED.md.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, external_data_helper, helper, numpy_helper
from typer.testing import CliRunner

from modelcost.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
RESNET_TINY = str(SAMPLES / "resnet_tiny.onnx")
COMMANDS = ("analyze", "bench", "backends", "gpu", "zoo", "recommend", "compare", "quantize")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def assert_one_error_line(result, *needles: str) -> str:
    """Exit code 1, exactly one non-empty line on stderr containing every needle, and no traceback anywhere."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    # A typer.Exit(1) is a SystemExit: any other exception type here means an uncaught error.
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in result.output
    return lines[0]


# --- static analysis -------------------------------------------------------------------------------------------


def test_static_resnet_tiny_shows_the_hand_derived_totals() -> None:
    result = invoke("analyze", RESNET_TINY, "--static")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    # Params (EXPECTED.md): conv1 432+16, bn1 32, dw 144+16, bn2 32, pw 512, bn3 64, conv_a 9,216,
    # conv_b 9,216+32, fc 320+10 = 20,042 (BN running mean/var are buffers, not params).
    assert "20,042" in result.stdout
    # MACs = N*Cout*Hout*Wout*(Cin/group)*kh*kw per conv + fc: conv1 16*1024*3*9 = 442,368; dw 16*256*1*9 = 36,864;
    # pw 32*256*16 = 131,072; conv_a = conv_b = 32*256*32*9 = 2,359,296; fc 32*10 = 320 -> 5,329,216.
    assert "5,329,216" in result.stdout
    # FLOPs = 2 x MACs + bias/BN/ReLU/add/pool element costs = 10,807,946 (EXPECTED.md, per-layer table).
    assert "10,807,946" in result.stdout
    assert "every op counted" in result.stdout


def test_static_resnet50_json_has_the_documented_keys(tmp_path: Path) -> None:
    out = tmp_path / "r50.json"
    result = invoke("analyze", "zoo:resnet50", "--static", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert f"JSON report: {out}" in result.stdout
    doc = json.loads(out.read_text())
    assert doc["schema"] == "modelcost.report/1"
    assert doc["model"]["name"] and doc["inputs"][0]["shape"] == [1, 3, 224, 224]
    # ResNet-50 at 224 (torchvision's published figure): 25,557,032 parameters, all float32.
    assert doc["params"]["total"] == 25_557_032
    assert doc["params"]["by_dtype"] == {"float32": 25_557_032}
    # Weight storage: 25,557,032 float32 x 4 bytes = 102,228,128 bytes.
    assert doc["storage"]["bytes"] == 102_228_128
    assert doc["storage"]["by_dtype"] == {"float32": 102_228_128}
    # 4,089,184,256 MACs at batch 1 (the widely quoted "4.09 GMACs": convs + the 2048x1000 fc = 2,048,000).
    assert doc["compute"]["macs"] == 4_089_184_256
    assert doc["compute"]["macs_by_dtype"] == {"float32": 4_089_184_256}
    # FLOPs = 2 x MACs + the per-element costs of bias, BN, ReLU, adds and pooling: strictly more than 2 x MACs.
    assert doc["compute"]["flops"] > 2 * 4_089_184_256
    assert doc["compute"]["uncounted_ops"] == {}
    assert isinstance(doc["memory"], dict) and doc["memory"]
    layers = doc["layers"]
    assert layers
    for layer in layers:
        assert {"name", "op", "macs", "flops", "params", "output_shapes"} <= set(layer), layer
    assert sum(layer["macs"] for layer in layers) == 4_089_184_256
    fc = [layer for layer in layers if layer["name"] == "fc"]
    assert fc and fc[0]["macs"] == 2048 * 1000 and fc[0]["params"] == 2048 * 1000 + 1000
    assert fc[0]["output_shapes"] == [[1, 1000]]


def test_unbound_dimension_names_the_input_the_dimension_and_the_option() -> None:
    result = invoke("analyze", str(SAMPLES / "dynamic_batch.onnx"), "--static")
    assert_one_error_line(result, "'tokens'", "batch", "--batch-size")
    assert result.stdout == ""


# --- bad input: exit 1, one clear line on stderr, no traceback ----------------------------------------------------


def test_truncated_onnx(tmp_path: Path) -> None:
    data = Path(RESNET_TINY).read_bytes()
    (tmp_path / "cut.onnx").write_bytes(data[: len(data) // 2])
    assert_one_error_line(invoke("analyze", str(tmp_path / "cut.onnx"), "--static"), "cut.onnx", "truncated")


def test_non_onnx_file(tmp_path: Path) -> None:
    (tmp_path / "x.onnx").write_bytes(b"hello, this is not a model\n")
    assert_one_error_line(invoke("analyze", str(tmp_path / "x.onnx"), "--static"), "x.onnx", "ONNX")


def test_missing_file(tmp_path: Path) -> None:
    assert_one_error_line(invoke("analyze", str(tmp_path / "nope.onnx"), "--static"), "nope.onnx", "no such file")


def test_missing_external_data_file(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "mlp_external.onnx", tmp_path / "mlp_external.onnx")  # the .data file left behind
    result = invoke("analyze", str(tmp_path / "mlp_external.onnx"), "--static")
    assert_one_error_line(result, "'mlp_external.onnx.data'", "not found")


def _external_model(folder: Path, location: str) -> Path:
    """A one-Gemm model whose weight w (4x3 float32 = 48 bytes) is stored externally at ``location``."""
    weight = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    external_data_helper.set_external_data(weight, location=location, offset=0, length=48)
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[weight],
    )
    path = folder / "inner" / "escape.onnx"
    path.parent.mkdir()
    (folder / "w.bin").write_bytes(bytes(48))  # exists, but outside the model's folder
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize("location", ["../w.bin", "/etc/passwd"])
def test_escaping_external_data_location(tmp_path: Path, location: str) -> None:
    model = _external_model(tmp_path, location)
    assert_one_error_line(invoke("analyze", str(model), "--static"), repr(location), "refusing")


def test_factory_that_raises(tmp_path: Path) -> None:
    (tmp_path / "file.py").write_text('def make():\n    raise RuntimeError("boom")\n')
    result = invoke("analyze", f"{tmp_path / 'file.py'}:make", "--static")
    assert_one_error_line(result, "make", "boom")


def _unknown_op_model(folder: Path) -> Path:
    """x [2,4] -> MatMul with w [4,3] -> a [2,3] -> com.example:NoSuchOp -> y (declared without a shape)."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
        helper.make_node("NoSuchOp", ["a"], ["y"], name="mystery", domain="com.example"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.ones((4, 3), np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    onnx.save(model, str(folder / "custom.onnx"))
    return folder / "custom.onnx"


def test_unknown_op_is_a_partial_result_exit_3(tmp_path: Path) -> None:
    out = tmp_path / "custom.json"
    result = invoke("analyze", str(_unknown_op_model(tmp_path)), "--static", "--json", str(out))
    assert result.exit_code == 3, result.output  # partial: not bad input (1), not usage (2)
    # The analysable part is still reported: params 4*3 = 12; MatMul (2x4)x(4x3) = 2*3*4 = 24 MACs, 2*24 = 48 FLOPs,
    # marked as lower bounds (≥) since the custom op's cost is unknown.
    assert "partial result" in result.stdout and "com.example:NoSuchOp x1" in result.stdout
    lines = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.stdout.splitlines()
             if line.startswith("│") and line.count("│") >= 3}
    assert lines["parameters"] == "12" and lines["MACs"] == "≥ 24" and lines["FLOPs"] == "≥ 48"
    doc = json.loads(out.read_text())  # the JSON report is written before the exit
    assert doc["params"]["total"] == 12 and doc["compute"]["macs"] == 24 and doc["compute"]["flops"] == 48
    assert doc["compute"]["uncounted_ops"] == {"com.example:NoSuchOp": 1}
    assert doc["compute"]["complete"] is False and doc["problems"] == []
    reasons = doc["compute"]["incomplete_reasons"]
    assert len(reasons) == 1 and "no ONNX schema" in reasons[0]


def test_allow_partial_accepts_a_partial_result(tmp_path: Path) -> None:
    result = invoke("analyze", str(_unknown_op_model(tmp_path)), "--static", "--allow-partial")
    assert result.exit_code == 0, result.output
    assert "≥ 24" in result.stdout and "partial result" in result.stdout  # still impossible to miss


def test_an_output_of_unknown_shape_is_not_taken_for_a_scalar(tmp_path: Path) -> None:
    out = tmp_path / "custom.json"
    invoke("analyze", str(_unknown_op_model(tmp_path)), "--static", "--json", str(out))
    doc = json.loads(out.read_text())
    # y is the output of an op nobody can infer: its shape is unknown, not [] (a float32 scalar of 4 bytes).
    assert doc["outputs"][0]["name"] == "y" and doc["outputs"][0]["shape"] != []
    assert doc["memory"]["output_bytes"] == 0  # unknown-shape tensors are left out, as for activation_bytes


def test_pickled_module_needs_trust_pickle(tmp_path: Path) -> None:
    path = tmp_path / "whole.pt"
    torch.save(torch.nn.Sequential(torch.nn.Linear(4, 3)), path)
    result = invoke("analyze", str(path), "--static", "--input-shape", "x=1x4")
    assert_one_error_line(result, "whole.pt", "--trust-pickle")


# --- benchmarks on this CPU machine, and the report folder ---------------------------------------------------


def test_analyze_benchmarks_ort_cpu_and_writes_the_report_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    folder, out = tmp_path / "report", tmp_path / "run.json"
    result = invoke("analyze", RESNET_TINY, "--backends", "ort-cpu", "--batch-sizes", "1,2", "--min-time-s", "0.05",
                    "--min-iters", "5", "--max-time-s", "1", "--out", str(folder), "--json", str(out))
    assert result.exit_code == 0, result.output
    assert "5,329,216" in result.stdout and "ort-cpu" in result.stdout
    doc = json.loads(out.read_text())
    rows = {b["batch_size"]: b for b in doc["benchmarks"]}
    assert set(rows) == {1, 2} and all(b["backend"] == "ort-cpu" for b in rows.values())
    ok = rows[1]
    assert ok["status"] == "ok" and ok["latency_ms"]["p50"] > 0 and ok["throughput_ips"] > 0
    # IPS = batch / median latency: 1 / (p50 ms / 1000).
    assert ok["throughput_ips"] == pytest.approx(1000.0 / ok["latency_ms"]["p50"], rel=1e-6)
    # resnet_tiny.onnx fixes its input at 1x3x32x32, so batch 2 cannot run: it fails with a reason, and
    # nothing that was not measured is reported as a number.
    failed = rows[2]
    assert failed["status"] == "failed" and "batch" in failed["reason"]
    assert failed["latency_ms"] is None and failed["throughput_ips"] is None
    assert doc["complete"] is True and doc["compute"]["macs"] == 5_329_216
    for name in ("report.json", "report.md", "report.html", "benchmarks.csv"):
        assert (folder / name).is_file() and (folder / name).stat().st_size > 0, name
    assert json.loads((folder / "report.json").read_text())["schema"] == "modelcost.report/1"


# --- version and help ----------------------------------------------------------------------------------------


def test_version() -> None:
    from modelcost import __version__

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"modelcost {__version__}"


def test_top_level_help_lists_every_command() -> None:
    result = invoke("--help")
    assert result.exit_code == 0, result.output
    for command in COMMANDS:
        assert command in result.stdout, command


# Ids "cmd-NAME": a bare "gpu" id would become a keyword that conftest takes for the gpu marker, and skip.
@pytest.mark.parametrize("command", COMMANDS, ids=[f"cmd-{c}" for c in COMMANDS])
def test_help_of_every_command(command: str) -> None:
    result = invoke(command, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage" in result.stdout and command in result.stdout


def test_an_unwritable_output_path_is_refused_before_anything_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = invoke("analyze", "sample_models/resnet_tiny.onnx", "--backends", "ort-cpu",
                    "--json", str(blocker / "sub" / "r.json"))
    assert result.exit_code == 1
    assert "cannot write" in result.stderr and "Traceback" not in result.stderr
    assert "resnet_tiny" not in result.stdout  # refused before the analysis and the benchmarks ran
