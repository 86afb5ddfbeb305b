"""The one pipeline (``modelcost.runs.inference`` / ``api.run``): the model is loaded once and carried through every
stage; models given as objects (``nn.Module``, ``onnx.ModelProto``); every output asked for is written or a
line says why not."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
import torch
from onnx import TensorProto, helper
from typer.testing import CliRunner

from modelcost import api
from modelcost.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FAST = ("--min-time-s", "0.02", "--max-time-s", "0.2", "--min-iters", "3", "--warmup", "2")

FACTORY_WITHOUT_EXAMPLES = '''
import torch
from torch import nn


def make() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 16 * 16, 5))
'''


@pytest.fixture()
def factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "f.py"
    path.write_text(FACTORY_WITHOUT_EXAMPLES)
    return f"{path}:make"


@pytest.fixture()
def load_counter(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts calls of the two loaders (every way into a model goes through one of them)."""
    from modelcost.loaders import onnx_loader, torch_loader

    counts = {"torch": 0, "onnx": 0}
    real_torch, real_onnx = torch_loader.load_torch, onnx_loader.load_onnx

    def count_torch(*a, **k):  # type: ignore[no-untyped-def]
        counts["torch"] += 1
        return real_torch(*a, **k)

    def count_onnx(*a, **k):  # type: ignore[no-untyped-def]
        counts["onnx"] += 1
        return real_onnx(*a, **k)

    monkeypatch.setattr(torch_loader, "load_torch", count_torch)
    monkeypatch.setattr(onnx_loader, "load_onnx", count_onnx)
    return counts


def test_profile_layers_of_a_factory_without_example_inputs_writes_the_json(factory: str, tmp_path: Path) -> None:
    # Issue 14's bug: the profile reloaded the model without --input-shape, failed, and no out.json was written.
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["analyze", factory, "--input-shape", "input=1x3x16x16", "--backends",
                                      "torch-cpu", "--profile-layers", "--json", str(out), *FAST])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    (row,) = doc["benchmarks"]
    assert row["status"] == "ok" and row["layer_profile"] is not None
    assert {lt["name"] for lt in row["layer_profile"]["layers"]} >= {"0", "3"}  # the conv and the linear
    # The CPU profile reaches the console too (not only the JSON).
    assert "Where the time goes: torch-cpu fp32 batch 1" in result.stdout


def test_one_analyze_run_loads_the_model_once(factory: str, load_counter: dict[str, int]) -> None:
    options = api.RunOptions(input_shapes=("input=1x3x16x16",), backends=("torch-cpu", "ort-cpu"),
                             profile_layers=True, target_gpu="L4",
                             bench=api.BenchConfig(min_time_s=0.02, max_time_s=0.2, min_iters=3, warmup=2))
    stages: list[str] = []
    run = api.run(factory, options, on_stage=lambda stage, r: stages.append(stage))
    # static + benchmarks (two backends, one an ONNX export) + profiles + what-if: one load in all
    assert load_counter == {"torch": 1, "onnx": 0}
    assert stages == ["static", "benchmarks", "roofline", "layers", "what-if"]
    assert run.cost is not None and [r.status for r in run.benchmarks] == ["ok", "ok"]
    assert all(r.layer_profile is not None for r in run.benchmarks)
    assert {w.gpu for w in run.what_if} == {"L4"}


def test_an_onnx_run_loads_the_file_once(load_counter: dict[str, int], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    sample = Path(__file__).resolve().parents[2] / "sample_models" / "resnet_tiny.onnx"
    options = api.RunOptions(backends=("ort-cpu",), profile_layers=True,
                             bench=api.BenchConfig(min_time_s=0.02, max_time_s=0.2, min_iters=3, warmup=2))
    run = api.run(str(sample), options)
    assert load_counter == {"torch": 0, "onnx": 1}
    assert run.benchmarks[0].layer_profile is not None


def test_analyze_static_takes_an_nn_module() -> None:
    # Issue 16 item 2: api.analyze_static(nn.Linear(10, 10)) raised AttributeError ('startswith').
    # Linear 10->10 on a 4x10 input: MACs = 4 * 10 * 10 = 400; FLOPs = 2 * 400 + 4 * 10 (bias adds) = 840;
    # params = 10 * 10 + 10 = 110.
    module = torch.nn.Linear(10, 10)
    before = module.weight.detach().clone()
    cost = api.analyze_static(module, example_inputs=torch.randn(4, 10))
    assert cost.params.total == 110 and cost.compute.macs == 400 and cost.compute.flops == 840
    assert module.weight.device.type == "cpu" and torch.equal(module.weight, before)  # the user's module untouched
    # Input shapes instead of examples, and the batch bound: 2 * 10 * 10 = 200 MACs.
    cost = api.analyze_static(torch.nn.Linear(10, 10), input_shapes=["input=2x10"])
    assert cost.compute.macs == 200


def test_run_benchmarks_an_nn_module_on_the_cpu() -> None:
    options = api.RunOptions(example_inputs=(torch.randn(1, 10),), backends=("torch-cpu",),
                             bench=api.BenchConfig(min_time_s=0.02, max_time_s=0.2, min_iters=3, warmup=2))
    run = api.run(torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.ReLU()), options)
    # 1 x 10 -> 20: MACs = 10 * 20 = 200
    assert run.cost is not None and run.cost.compute.macs == 200
    assert [r.status for r in run.benchmarks] == ["ok"]


def _add_proto() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 8], [0.0] * 64)
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "tiny_matmul", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_analyze_static_takes_an_onnx_model_proto() -> None:
    # MatMul (3 x 8) x (8 x 8): MACs = 3 * 8 * 8 = 192, FLOPs = 2 * 192 = 384; params = 64.
    cost = api.analyze_static(_add_proto(), batch_size=3)
    assert cost.compute.macs == 192 and cost.compute.flops == 384 and cost.params.total == 64
    assert cost.model.name == "tiny_matmul"


def test_something_else_is_one_clear_error() -> None:
    from modelcost.core.errors import ModelcostError

    with pytest.raises(ModelcostError, match="cannot analyze a int"):
        api.analyze_static(42)


def test_outputs_that_cannot_be_written_say_why(factory: str, tmp_path: Path) -> None:
    # Issue 16 item 3: --roofline-plot and --samples-csv on a machine without a GPU wrote nothing and said nothing.
    plot, samples = tmp_path / "r.png", tmp_path / "s.csv"
    result = CliRunner().invoke(app, ["bench", factory, "--input-shape", "input=1x3x16x16", "--backends",
                                      "torch-cpu", "--roofline-plot", str(plot), "--samples-csv", str(samples),
                                      *FAST])
    assert result.exit_code == 0, result.output
    # the plot is not drawn; the samples file holds its header only (a re-run replaces it, issue 12), and both
    # lines say why
    assert not plot.exists() and samples.read_text().count("\n") == 1
    assert "roofline plot not written: " in result.stdout
    assert "(header only: no GPU was sampled); no GPU config was measured" in result.stdout


def test_what_if_and_cpu_profiles_reach_every_report_file(factory: str, tmp_path: Path) -> None:
    # Issue 16 item 3: the --target-gpu table reached only the terminal, CPU profiles only the JSON.
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["analyze", factory, "--input-shape", "input=1x3x16x16", "--backends",
                                      "torch-cpu", "--profile-layers", "--target-gpu", "H100 SXM", "--out",
                                      str(out), *FAST])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "report.json").read_text())
    # no GPU result to take precisions from: the fp32 and fp16 rows, at the measured batch 1
    assert [(w["gpu"], w["precision"], w["batch_size"]) for w in doc["what_if"]] == [
        ("H100 SXM", "fp32", 1), ("H100 SXM", "fp16", 1)]
    assert not any("--target-gpu" in n for n in doc["run_notes"])
    for name in ("report.md", "report.html"):
        text = (out / name).read_text()
        assert "What-if" in text and "H100 SXM" in text, name
        assert "Per-layer time: torch-cpu fp32 b1" in text, name
