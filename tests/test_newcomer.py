"""The small things a newcomer trips on (issue 15, item 7), each said in one clear line or fixed outright."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from typer.testing import CliRunner

from modelcost import api
from modelcost.cli import app
from modelcost.core.errors import ModelcostError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_models"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_non_weight_initializers_are_not_parameters(tmp_path: Path) -> None:
    """x [1,4] -> MatMul w [4,4] -> Where(mask, ., 0) -> Add(Gather(pos_table, idx)); the bool mask [1,4] and the
    int64 table [8,4] are not weights: params = 16 (w only); constants = mask 4 + table 32 + idx 1 + zero 1 = 38."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
        helper.make_node("Where", ["mask", "a", "zero"], ["b"], name="where"),
        helper.make_node("Gather", ["pos_table", "idx"], ["p"], name="gather"),
        helper.make_node("Cast", ["p"], ["pf"], to=TensorProto.FLOAT, name="cast"),
        helper.make_node("Add", ["b", "pf"], ["y"], name="add"),
    ]
    inits = [
        numpy_helper.from_array(np.ones((4, 4), np.float32), "w"),
        numpy_helper.from_array(np.ones((1, 4), bool), "mask"),
        numpy_helper.from_array(np.zeros((), np.float32), "zero"),
        numpy_helper.from_array(np.arange(32, dtype=np.int64).reshape(8, 4), "pos_table"),
        numpy_helper.from_array(np.array(0, np.int64), "idx"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "m.onnx"))
    cost = api.analyze_static(str(tmp_path / "m.onnx"))
    assert cost.params.total == 16 and cost.params.by_dtype == {"float32": 16}
    assert cost.params.constants == 38
    assert any("bool x1 (4 elements), int64 x1 (32 elements)" in n for n in cost.notes), cost.notes


def test_a_directory_is_said_to_be_one() -> None:
    with pytest.raises(ModelcostError, match="is a directory, not a model file") as err:
        api.analyze_static(str(SAMPLES))
    assert "resnet_tiny.onnx" not in str(err.value) or "give one of them" in str(err.value)


def test_a_batch_whose_inputs_cannot_fit_is_refused_with_its_size() -> None:
    model = api.bench_model(str(SAMPLES / "dynamic_batch.onnx"), input_shapes=["tokens=1x8x16"])
    try:
        with pytest.raises(ModelcostError) as err:
            api.run_benchmarks(model, backends=["ort-cpu"], batch_sizes=[1, 10**12])
    finally:
        model.close()
    # tokens [1e12, 8, 16] float32 = 1e12 x 128 x 4 B = 5.12e14 B; mask [1e12, seq = 8] float32 = 1e12 x 8 x 4 B =
    # 3.2e13 B; together 5.44e14 B / 2^40 = 494.77 TiB
    assert "batch size 1000000000000" in str(err.value) and "494.77 TiB" in str(err.value)


def _python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return result.stdout + result.stderr


def test_a_zoo_typo_is_said_before_torch_is_imported() -> None:
    out = _python("import sys\nfrom modelcost import api\ntry:\n    api.analyze_static('zoo:nope')\n"
                  "except Exception as e:\n    print(e)\nprint('torch imported:', 'torch' in sys.modules)")
    assert "zoo:nope: no such zoo model" in out and "torch imported: False" in out


@pytest.mark.parametrize("args", [["--help"], ["zoo"], ["backends"],
                                  ["analyze", "sample_models/resnet_tiny.onnx", "--static", "--top", "0"]])
def test_commands_that_need_no_torch_do_not_import_it(args: list[str]) -> None:
    """torch (and its dynamo) is 2-3 s of a command's start: only PyTorch models and GPUs need it (here: no GPU)."""
    from modelcost.bench.memory import no_nvidia_device

    if not no_nvidia_device():
        pytest.skip("an NVIDIA GPU here: CUDA availability is asked of torch")
    code = (f"import sys\nsys.argv = ['modelcost', *{args!r}]\nfrom modelcost.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('torch imported:', 'torch' in sys.modules)")
    assert "torch imported: False" in _python(code)


def test_a_factory_calling_sys_exit_is_an_error_not_an_exit_code(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("import sys\n\n\ndef make():\n    sys.exit(3)\n")
    result = invoke("analyze", f"{tmp_path / 'f.py'}:make", "--static")
    assert result.exit_code == 1 and "the factory raised sys.exit(3)" in result.stderr


def test_roofline_plot_must_be_png_or_svg(tmp_path: Path) -> None:
    result = invoke("analyze", str(SAMPLES / "resnet_tiny.onnx"), "--static",
                    "--roofline-plot", str(tmp_path / "r.bmp"))
    assert result.exit_code == 2 and ".png or .svg" in result.output


def test_the_test_extra_has_what_the_tests_import() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert any(dep.startswith("scipy") for dep in extras)
