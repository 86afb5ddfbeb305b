"""Loading PyTorch models: factories (file and package), zoo, torchvision, TorchScript, .pt2, pickles, and
the one-line errors for everything that can go wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from modelcost import api
from modelcost.core.errors import MissingDependencyError, ModelcostError, UnboundDimensionError
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.torch_loader import load_torch

FIXTURES = Path(__file__).parents[1] / "fixtures"
TINY = f"{FIXTURES}/tiny_cnn.py"
# TinyCNN (tests/fixtures/tiny_cnn.py): conv 3->8 3x3 pad 1 + bias, ReLU, global pool, linear 8->10.
# params 8*27 + 8 + 8*10 + 10 = 314; MACs at 16x16: conv 8*256*27 = 55,296 + linear 80 = 55,376 per image


def load(source: str, **options) -> object:
    return load_torch(source, LoadOptions(**options))


def one_line_error(source: str, match: str, **options) -> str:
    with pytest.raises(ModelcostError, match=match) as info:
        api.analyze_static(source, **options)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_file_factory_with_example_inputs_builds_on_meta():
    loaded = load(f"{TINY}:make_model")
    assert loaded.format == "pytorch" and loaded.name == "make_model"
    assert all(p.device.type == "meta" for p in loaded.module.parameters())
    assert [(s.name, s.shape, s.dtype) for s in loaded.inputs] == [("x", (1, 3, 16, 16), "float32")]
    r = api.analyze_static(f"{TINY}:make_model")
    assert (r.params.total, r.compute.macs) == (314, 55_376)
    assert api.analyze_static(f"{TINY}:make_model", batch_size=4).compute.macs == 4 * 55_376
    # --input-shape replaces the example: 32x32 has 4x the conv outputs: 4 * 55,296 + 80, batch 2
    assert api.analyze_static(f"{TINY}:make_model", input_shapes=["x=2x3x32x32"]).compute.macs == 2 * (4 * 55_296 + 80)


def test_factory_that_allocates_on_cpu_is_moved_to_meta():
    loaded = load(f"{TINY}:make_model_on_cpu")
    assert all(p.device.type == "meta" for p in loaded.module.parameters())
    assert any("moved to meta" in note for note in loaded.notes)


def test_package_module_factory(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    r = api.analyze_static("tiny_cnn:make_model")
    assert r.compute.macs == 55_376


def test_example_inputs_as_dict_of_specs_with_integer_range():
    loaded = load(f"{FIXTURES}/token_model.py:build", batch_size=3)
    # dict keys are put in forward's order; no batch_size parameter: dim 0 becomes the batch
    assert [(s.name, s.shape, s.dtype) for s in loaded.inputs] == [("ids", (3, 7), "int64"),
                                                                    ("scale", (3, 1, 1), "float32")]
    ids, scale = loaded.make_inputs(5)
    assert ids.shape == (5, 7) and 0 < int(ids.min()) and int(ids.max()) < 100  # the (shape, dtype, high) spec
    assert scale.shape == (5, 1, 1) and scale.dtype == torch.float32
    # params: embedding 100*16 + linear 16*4 + 4 = 1,668; MACs: 3*7 tokens x 16*4 = 1,344
    r = api.analyze_static(f"{FIXTURES}/token_model.py:build", batch_size=3)
    assert (r.params.total, r.compute.macs) == (1_668, 1_344)


def test_instantiate_and_input_specs_at_other_batch_sizes():
    loaded = load(f"{TINY}:make_model")
    model = loaded.instantiate("cpu", dtype=torch.float64)
    assert all(p.device.type == "cpu" and p.dtype == torch.float64 for p in model.parameters())
    assert [s.shape for s in loaded.input_specs(8)] == [(8, 3, 16, 16)]
    (x,) = loaded.make_inputs(8, dtype=torch.float64)
    assert model(x).shape == (8, 10)
    assert loaded.make_inputs(2)[0].abs().sum() > 0  # random, never zeros
    assert torch.equal(loaded.make_inputs(2)[0], loaded.make_inputs(2)[0])  # seeded: the same for every backend


def test_factory_errors_are_one_line():
    assert "the factory raised RuntimeError: weights file missing: /data/model.bin" in one_line_error(
        f"{FIXTURES}/bad_factories.py:raises", "factory raised")
    one_line_error(f"{FIXTURES}/bad_factories.py:not_a_module", "returned dict, not a torch.nn.Module")
    one_line_error(f"{FIXTURES}/bad_factories.py:nope", "has no callable 'nope'; it has no_examples, not_a_module")
    one_line_error(f"{FIXTURES}/broken_import.py:anything", "importing .* raised ImportError")
    one_line_error(f"{FIXTURES}/missing.py:make", "no such file")
    one_line_error("no_such_package_xyz.models:make", "cannot import module 'no_such_package_xyz.models'")


def test_factory_without_example_inputs_needs_input_shapes():
    source = f"{FIXTURES}/bad_factories.py:no_examples"
    one_line_error(source, r"no example_inputs\(\); give the input shapes, e.g. --input-shape input=")
    r = api.analyze_static(source, input_shapes=["input=5x4"])
    assert r.compute.macs == 5 * 4 * 3  # Linear(4, 3) on 5 rows
    one_line_error(source, "no input named x; its inputs are input", input_shapes=["input=5x4", "x=1"])


def test_zoo_names_and_shapes():
    one_line_error("zoo:resnet51", "no such zoo model; choose one of resnet18, resnet50")
    loaded = load("zoo:bert-tiny", input_shapes={"input_ids": (2, 16)})
    assert loaded.inputs[0].shape == (2, 16) and loaded.input_high == {"input_ids": 30522}
    assert load("zoo:resnet18", batch_size=4).inputs[0].shape == (4, 3, 224, 224)
    one_line_error("zoo:bert-tiny", "no input named ids", input_shapes=["ids=1x8"])


def test_torchvision_missing_is_a_clear_error():
    try:
        import torchvision  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match="pip install torchvision"):
            load("torchvision:resnet18")
    else:
        assert load("torchvision:resnet18").inputs[0].shape == (1, 3, 224, 224)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    import sys

    sys.path.insert(0, str(FIXTURES))
    try:
        from tiny_cnn import TinyCNN
    finally:
        sys.path.remove(str(FIXTURES))
    root = tmp_path_factory.mktemp("saved")
    torch.manual_seed(0)
    model = TinyCNN().eval()
    x = torch.randn(2, 3, 16, 16)
    paths = {k: root / v for k, v in {"script": "s.pt", "trace": "t.pth", "pickle": "p.pt", "state": "sd.pt",
                                       "static": "static.pt2", "dynamic": "dynamic.pt2", "garbage": "g.pt"}.items()}
    torch.jit.script(model).save(str(paths["script"]))
    torch.jit.trace(model, x).save(str(paths["trace"]))
    torch.save(model, paths["pickle"])
    torch.save(model.state_dict(), paths["state"])
    torch.export.save(torch.export.export(model, (x,)), paths["static"])
    batch = torch.export.Dim("batch", min=1, max=64)
    torch.export.save(torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}}), paths["dynamic"])
    paths["garbage"].write_bytes(b"not a model")
    return paths


def test_torchscript_scripted_and_traced(saved):
    for key in ("script", "trace"):
        source = str(saved[key])
        one_line_error(source, "does not record its input shapes; give the input shapes, e.g. --input-shape x=")
        r = api.analyze_static(source, input_shapes=["x=1x3x16x16"])
        assert (r.model.format, r.params.total, r.compute.macs) == ("torchscript", 314, 55_376)
        assert r.storage.file_size_bytes == saved[key].stat().st_size
    loaded = load(str(saved["script"]), input_shapes={"x": (1, 3, 16, 16)})
    assert all(p.device.type == "meta" for p in loaded.module.parameters())
    assert loaded.instantiate("cpu")(*loaded.make_inputs(3)).shape == (3, 10)


def test_pickled_module_needs_trust(saved):
    message = one_line_error(str(saved["pickle"]), "unpickling executes code", input_shapes=["x=1x3x16x16"])
    assert "--trust-pickle" in message
    r = api.analyze_static(str(saved["pickle"]), input_shapes=["x=1x3x16x16"], trust_pickle=True)
    assert (r.params.total, r.compute.macs) == (314, 55_376)
    one_line_error(str(saved["state"]), r"holds only weights \(OrderedDict\), no architecture",
                   input_shapes=["x=1x3x16x16"])
    one_line_error(str(saved["garbage"]), "not a PyTorch file", input_shapes=["x=1x3x16x16"])
    one_line_error(str(saved["garbage"]), "cannot unpickle", input_shapes=["x=1x3x16x16"], trust_pickle=True)


def test_torch_export_programs(saved):
    r = api.analyze_static(str(saved["static"]))
    assert (r.model.format, r.params.total, r.compute.macs) == ("torch.export", 314, 2 * 55_376)
    assert [(layer.name, layer.op) for layer in r.layers if layer.macs] == [("conv", "Conv2d"), ("fc", "Linear")]
    one_line_error(str(saved["static"]), "exported with the static shape", batch_size=4)
    assert api.analyze_static(str(saved["dynamic"]), batch_size=4).compute.macs == 4 * 55_376
    with pytest.raises(UnboundDimensionError, match="--batch-size"):
        load(str(saved["dynamic"]))
    loaded = load(str(saved["dynamic"]), batch_size=3)
    assert loaded.instantiate("cpu")(*loaded.make_inputs()).shape == (3, 10)


def test_missing_files():
    one_line_error("/nonexistent/model.pt", "no such file")
    one_line_error("/nonexistent/model.pt2", "no such file")
