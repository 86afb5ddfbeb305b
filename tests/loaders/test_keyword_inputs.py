"""example_inputs() returning a dict binds by keyword everywhere the model is called: the static counter on
meta, the PyTorch benchmarks (and so the accuracy reference), the ONNX export and the per-layer profile.
Each fixture leaves an optional forward argument out, so positional binding would mis-bind a later tensor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from modelcost import api
from modelcost.bench import registry
from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.errors import ModelcostError
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.torch_loader import load_torch

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
FIXTURES = Path(__file__).parents[1] / "fixtures"
MASKED = f"{FIXTURES}/keyword_masked.py:make"
BERT = f"{FIXTURES}/hf_bert_keyword.py:make"
WHISPER = f"{FIXTURES}/hf_whisper_keyword.py:make"
EXTRA = f"{FIXTURES}/keyword_extra.py:make"
QUICK = BenchConfig(warmup=1, warmup_max_s=0.1, min_time_s=0.02, min_iters=3, max_time_s=0.5, e2e_min_iters=1,
                    e2e_max_s=0.05)


def _torch_cpu_outputs(model: BenchModel, batch_size: int) -> tuple[list[np.ndarray], dict[str, torch.Tensor]]:
    """The torch-cpu backend's outputs, and the inputs it ran on as a {name: tensor} dict."""
    arrays, _ = model.host_inputs(batch_size)
    session = registry.get_backend("torch-cpu").prepare(model, "fp32", BenchConfig()).session(batch_size, arrays)
    try:
        session.run()
        outs = session.outputs()
    finally:
        session.close()
    names = [s.name for s in model.specs(batch_size)]
    return outs, {n: torch.from_numpy(a.copy()) for n, a in zip(names, arrays, strict=True)}


def test_static_count_binds_a_dict_by_keyword():
    loaded = load_torch(MASKED, LoadOptions())
    assert loaded.keyword_inputs
    r = api.analyze_static(MASKED)
    assert [s.name for s in r.inputs] == ["x", "bias"] and not r.problems
    # linear 4->3 on one row: 4*3 = 12 MACs (24 FLOPs); bias is added: 3 FLOPs. Positionally, bias would be
    # the mask and the second op a multiply ('mul') instead of the add.
    assert [(layer.name, layer.macs, layer.flops) for layer in r.layers] == [("linear", 12, 24), ("add", 0, 3)]


def test_static_count_of_a_whisper_model_without_attention_mask():
    # positionally, decoder_input_ids would fill attention_mask and the decoder would raise for want of ids
    r = api.analyze_static(WHISPER, batch_size=2)
    assert not r.problems, r.problems
    assert [(s.name, s.shape) for s in r.inputs] == [("input_features", (2, 8, 16)), ("decoder_input_ids", (2, 5)),
                                                     ("decoder_attention_mask", (2, 5))]
    assert r.compute.macs > 0 and r.outputs[0].shape == (2, 5, 16)  # decoder hidden states: batch x ids x d_model


def test_analyze_module_takes_a_mapping():
    from modelcost.analysis.torch_counter import analyze_module

    masked = load_torch(MASKED, LoadOptions()).module  # built on meta
    inputs = {"x": torch.empty(1, 4, device="meta"), "bias": torch.empty(1, 3, device="meta")}
    r = analyze_module(masked, inputs)
    assert [s.name for s in r.inputs] == ["x", "bias"]
    assert [layer.name for layer in r.layers] == ["linear", "add"]  # as above: add, not mul
    # a sequence still binds positionally: linear 4->3 on 2 rows = 2 x 12 MACs
    assert analyze_module(masked, [torch.empty(2, 4, device="meta")]).compute.macs == 2 * 12


def test_torch_benchmark_of_bert_binds_token_type_ids_by_keyword():
    model = api.bench_model(BERT, batch_size=2)
    assert model.keyword_inputs
    outs, inputs = _torch_cpu_outputs(model, 2)
    with torch.no_grad():
        expected = model.cpu_module()(**inputs).last_hidden_state.numpy()
        wrong = model.cpu_module()(*inputs.values()).last_hidden_state.numpy()  # token types as the mask
    np.testing.assert_allclose(outs[0], expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(wrong, expected, atol=1e-3)  # the fixture really does tell the two bindings apart


def test_onnx_export_of_bert_binds_by_keyword(tmp_path: Path):
    ort = pytest.importorskip("onnxruntime")
    model = api.bench_model(BERT, batch_size=3)
    path = model.onnx_file(tmp_path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_ids", "token_type_ids"]
    arrays, _ = model.host_inputs(3)  # batch 3: the export was traced at batch 2 with a dynamic batch dim
    got = session.run(None, dict(zip(["input_ids", "token_type_ids"], arrays, strict=True)))
    with torch.no_grad():
        ids, types = (torch.from_numpy(a.copy()) for a in arrays)
        expected = model.cpu_module()(input_ids=ids, token_type_ids=types).last_hidden_state.numpy()
    np.testing.assert_allclose(got[0], expected, rtol=1e-4, atol=1e-5)


def test_whisper_benchmark_export_and_profile_run(tmp_path: Path):
    model = api.bench_model(WHISPER, batch_size=1)
    outs, inputs = _torch_cpu_outputs(model, 1)
    with torch.no_grad():
        expected = model.cpu_module()(**inputs).last_hidden_state.numpy()
    np.testing.assert_allclose(outs[0], expected, rtol=1e-5, atol=1e-6)
    assert model.onnx_file(tmp_path).is_file()
    profile = api.profile_layers(model, device="cpu", runs=1, warmup=0)
    assert profile.layers


def test_a_dict_key_that_forward_does_not_take_is_one_line(tmp_path: Path):
    path = tmp_path / "typo.py"
    path.write_text(
        "import torch\n"
        "from torch import nn\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.l = nn.Linear(4, 4)\n\n"
        "    def forward(self, x, mask=None):\n"
        "        return self.l(x)\n\n"
        "def make():\n"
        "    return M()\n\n"
        "def example_inputs():\n"
        "    return {'x': torch.randn(1, 4), 'msk': torch.ones(1, 4)}\n"
    )
    with pytest.raises(ModelcostError, match=r"forward\(\) has no argument 'msk'; it takes x, mask"):
        api.analyze_static(f"{path}:make")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none here)")
def test_every_cuda_backend_binds_bert_by_keyword(tmp_path: Path):
    # torch.compile and CUDA-graph capture call the module through the same keyword binding; ort-cuda runs the
    # export. Accuracy against the fp32 reference (torch-eager, keyword-bound) shows they agree.
    from modelcost.bench.runner import run_benchmarks

    config = BenchConfig(device="cuda", warmup=3, warmup_max_s=0.5, min_time_s=0.05, min_iters=10, max_time_s=0.5,
                         e2e_min_iters=3, e2e_max_s=0.1, cache_dir=tmp_path / "cache")
    model = api.bench_model(BERT, batch_size=2)
    backends = ["torch-eager", "torch-compile", "torch-cudagraph", "ort-cuda"]
    results, _ = run_benchmarks(model, backends=backends, precisions=["fp32"], batch_sizes=[2], config=config)
    by_backend = {r.backend: r for r in results}
    for name in backends:
        r = by_backend[name]
        if r.status == "unavailable":
            continue
        assert r.status == "ok", (name, r.reason)
        assert r.accuracy is not None and r.accuracy.cosine > 0.9999, (name, r.accuracy)


# --- training: the static count, the simulated step and the measured step bind the same way (issue 24) ---------


def test_train_static_binds_a_dict_by_keyword():
    r = api.train_static(EXTRA, batch_size=2)
    assert not r.problems, r.problems
    # batch 2: a 4->3 and b 8->3, 2 x (12 + 24) = 72 MACs forward; each weight gradient is the same product (72);
    # x and extra need no gradient, so no input-gradient product. Positionally extra would be the mask and fail.
    assert (r.forward_macs, r.backward_weight_grad_macs, r.backward_input_grad_macs) == (72, 72, 0)
    assert r.memory.peak_basis.startswith("simulated")  # the simulated step ran too (keyword-bound)


def test_train_module_takes_a_mapping():
    from modelcost.analysis.training import train_module
    from modelcost.core.training import TrainConfig

    module = load_torch(EXTRA, LoadOptions()).module

    def make(batch: int) -> dict:
        return {"x": torch.empty(batch, 4, device="meta"), "extra": torch.empty(batch, 8, device="meta")}

    r = train_module(module, make, 2, TrainConfig(optimizer="sgd"))
    assert not r.problems and r.forward_macs == 72  # as above


def test_readme_bert_example_trains_statically():
    # the README's bert_tiny.py (token_type_ids given, no attention_mask): positionally the token types became
    # the attention mask and the step failed ("Tensor.item() cannot be called on meta tensors")
    r = api.train_static(BERT, batch_size=2)
    assert not r.problems, r.problems
    assert r.forward_macs > 0 and r.memory.peak_basis.startswith("simulated")


def test_measured_training_step_binds_a_dict_by_keyword():
    report = api.train(EXTRA, batch_sizes=[2], device="cpu", bench_config=QUICK)
    (r,) = report.benchmarks
    assert r.status == "ok", r.reason


def test_measured_step_takes_mapping_inputs():
    from modelcost.bench.training import StepSetup, measure_step

    module = load_torch(EXTRA, LoadOptions())

    def inputs(batch: int, device: str) -> dict:
        return {"x": torch.randn(batch, 4, device=device), "extra": torch.randn(batch, 8, device=device)}

    r = measure_step(StepSetup(module.instantiate, inputs, optimizer="sgd"), "bf16", 2, device="cpu", config=QUICK)
    assert r.status == "ok", r.reason  # pure bf16 casts the mapping's float inputs too


@pytest.mark.parametrize("command", [
    ["analyze", "--static"],
    ["analyze", "--backends", "torch-cpu", "--precisions", "fp32"],
    ["bench", "--backends", "torch-cpu", "--precisions", "fp32"],
    ["train", "--static"],
    ["train", "--device", "cpu"],
])
def test_every_command_binds_a_dict_by_keyword(command: list[str], tmp_path: Path):
    from typer.testing import CliRunner

    from modelcost.cli import app

    quick = ["--min-time-s", "0.02", "--max-time-s", "0.5", "--min-iters", "3", "--warmup", "1"]
    timing = quick if len(command) > 2 or command == ["train", "--device", "cpu"] else []
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, [*command, EXTRA, "-b", "2", "--json", str(out), *timing])
    assert result.exit_code == 0, result.output
    import json

    report = json.loads(out.read_text())
    if command[0] == "train":
        assert report["training"]["forward_macs"] == 72 and not report["training"]["problems"]  # as above
        assert all(b["status"] == "ok" for b in report["training"]["benchmarks"])
    else:
        assert report.get("cost") is None or report["cost"]["compute"]["macs"] == 72
        assert all(b["status"] == "ok" for b in report.get("benchmarks", []))
