"""The ONNX loader: declared vs bound inputs, symbolic dims, external data sizes, and proof that weight bytes are
never read (a sparse multi-GB data file, and a patched ``open`` that refuses the data file)."""

from __future__ import annotations

import builtins
import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from modelcost import api
from modelcost.core.errors import ModelcostError, UnboundDimensionError
from modelcost.core.types import TensorSpec
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.onnx_loader import bind_inputs, load_onnx

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_llama7b_onnx.py"


def _bench_module():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("bench_llama7b_onnx", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_static_sample_inputs_and_sizes() -> None:
    loaded = load_onnx(str(SAMPLES / "resnet_tiny.onnx"), LoadOptions())
    assert loaded.inputs == [TensorSpec("input", (1, 3, 32, 32), "float32")]
    assert loaded.declared_inputs == loaded.inputs
    assert loaded.outputs == [TensorSpec("logits", (1, 10), "float32")]
    assert loaded.opset == 17 and loaded.external_data_bytes == 0
    assert loaded.file_size_bytes == (SAMPLES / "resnet_tiny.onnx").stat().st_size


def test_external_data_sizes_without_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        assert not str(file).endswith(".data"), f"external data was opened: {file}"
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    report = api.analyze_static(str(SAMPLES / "mlp_external.onnx"))
    data = (SAMPLES / "mlp_external.onnx.data").stat().st_size
    model = (SAMPLES / "mlp_external.onnx").stat().st_size
    assert data == 12_778 * 4  # every parameter, fp32, back to back
    assert report.storage.external_data_bytes == data and report.storage.file_size_bytes == model + data
    assert report.params.total == 12_778


def test_model_proto_keeps_no_weight_bytes() -> None:
    loaded = load_onnx(str(SAMPLES / "mlp_external.onnx"), LoadOptions())
    assert all(t.data_location == TensorProto.EXTERNAL and not t.raw_data for t in loaded.model.graph.initializer)
    assert loaded.external.tensors == 6 and loaded.external.files == {"mlp_external.onnx.data": 51_112}


def test_symbolic_dims_bound_by_batch_and_shared_symbols() -> None:
    path = str(SAMPLES / "dynamic_batch.onnx")
    loaded = load_onnx(path, LoadOptions(input_shapes={"tokens": (2, 8, 16)}))
    assert loaded.declared_inputs == [
        TensorSpec("tokens", ("batch", "seq", 16), "float32"),
        TensorSpec("mask", ("batch", "seq"), "float32"),
    ]
    # mask shares batch and seq with tokens: bound to 2x8 without its own --input-shape
    assert loaded.inputs == [TensorSpec("tokens", (2, 8, 16), "float32"), TensorSpec("mask", (2, 8), "float32")]
    # the benchmark side re-binds at another batch size; seq stays as given
    assert [s.shape for s in bind_inputs(loaded, 8)] == [(8, 8, 16), (8, 8)]


def test_batch_size_alone_leaves_seq_unbound() -> None:
    with pytest.raises(UnboundDimensionError) as err:
        load_onnx(str(SAMPLES / "dynamic_batch.onnx"), LoadOptions(batch_size=2))
    message = str(err.value)
    assert "'tokens'" in message and "'seq'" in message and "--input-shape tokens=" in message


def test_input_shape_errors() -> None:
    path = str(SAMPLES / "dynamic_batch.onnx")
    with pytest.raises(ModelcostError, match="no input 'nope'"):
        load_onnx(path, LoadOptions(input_shapes={"nope": (1,)}))
    with pytest.raises(ModelcostError, match="'seq' is 8 in one input and 9"):
        load_onnx(path, LoadOptions(input_shapes={"tokens": (2, 8, 16), "mask": (2, 9)}))
    with pytest.raises(ModelcostError, match="has 3 dims"):
        load_onnx(path, LoadOptions(input_shapes={"tokens": (2, 8)}))
    with pytest.raises(ModelcostError, match="fixes"):
        load_onnx(path, LoadOptions(input_shapes={"tokens": (2, 8, 15)}))


def test_initializers_listed_as_inputs_are_not_inputs(tmp_path: Path) -> None:
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 3  # old exporters list weights as graph inputs
    onnx.save(model, str(tmp_path / "old.onnx"))
    report = api.analyze_static(str(tmp_path / "old.onnx"), batch_size=5)
    assert [s.name for s in report.inputs] == ["x"] and report.inputs[0].shape == (5, 4)
    assert report.compute.macs == 5 * 3 * 4 and report.params.total == 12


def test_unranked_input_needs_input_shape(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "u.onnx"))
    with pytest.raises(UnboundDimensionError, match="rank unknown"):
        api.analyze_static(str(tmp_path / "u.onnx"))
    report = api.analyze_static(str(tmp_path / "u.onnx"), input_shapes=["x=3x5"])
    assert report.compute.flops == 15  # Relu, one per element


def test_sparse_llama_external_data_not_read(tmp_path: Path) -> None:
    """A 2-layer Llama-shaped graph whose external data file is sparse and large: analysis is exact and fast,
    which it could not be if it read the file."""
    bench = _bench_module()
    cfg = bench.LlamaConfig(layers=2, hidden=256, heads=4, intermediate=688, vocab=50_000)
    path = bench.build_llama_onnx(tmp_path, cfg)
    data = tmp_path / "llama.onnx.data"
    with open(data, "r+b") as f:  # pad the file to 4 GiB, still sparse: reading it would take seconds and memory
        f.truncate(4 << 30)
    report = api.analyze_static(str(path), input_shapes={"input_ids": (1, 16)})
    assert report.params.total == bench.expected_params(cfg)
    assert report.compute.macs == bench.expected_macs(cfg, 1, 16)
    assert report.storage.external_data_bytes == 4 << 30
    assert report.compute.uncounted_ops == {} and report.problems == []


def test_copy_of_sample_with_external_data_in_other_folder(tmp_path: Path) -> None:
    for name in ("mlp_external.onnx", "mlp_external.onnx.data"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    assert api.analyze_static(str(tmp_path / "mlp_external.onnx")).params.total == 12_778
