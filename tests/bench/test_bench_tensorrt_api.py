"""The TensorRT backend against a fake ``tensorrt`` module that records every call: what it asks of TensorRT 10
and of TensorRT 11, the optimization profile, the engine cache, and the run path (set_input_shape,
set_tensor_address for every I/O tensor, execute_async_v3 on the session's stream). TensorRT cannot be
installed here; the fake follows the names and signatures of TensorRT 10's Python bindings
(python/src/infer/pyCore.cpp in NVIDIA/TensorRT) and TensorRT 11's removals (the 10.x -> 11.x migration guide).
"""

from __future__ import annotations

import enum
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
import torch

from modelcost.bench.backends import tensorrt as trt_backend
from modelcost.bench.backends import trt_plan
from modelcost.bench.backends.ort import TRT_MISSING
from modelcost.bench.base import BenchConfig, Unavailable
from modelcost.bench.model import BenchModel, from_onnx_path
from modelcost.bench.registry import BACKENDS
from modelcost.core.errors import ModelcostError
from modelcost.core.types import TensorSpec

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ENGINE_BYTES = b"fake-serialized-engine"
STREAM_HANDLE = 0x5EED


class FakeTRT:
    """State shared by the fake objects: the call log and what the fake network / engine look like."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.calls: list[tuple[Any, ...]] = []
        self.network_inputs: list[tuple[str, tuple[int, ...]]] = [("x", (-1, 3, 8, 8))]
        self.parse_ok = True
        self.parser_errors = ["In node 3 (Conv): UNSUPPORTED_NODE", "In node 7 (Foo): INVALID_NODE"]
        self.engine_io = [("x", "INPUT", "FLOAT"), ("y", "OUTPUT", "FLOAT")]
        self.output_shape: tuple[int, ...] | None = None  # None: (batch, 5)
        self.accept_shapes = True

    def log(self, *call: Any) -> None:
        self.calls.append(call)

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]

    def module(self) -> types.ModuleType:
        major = int(self.version.split(".")[0])
        mod = types.ModuleType("tensorrt")
        mod.__version__ = self.version
        flags = ["DEBUG", "REFIT", "TF32", "SPARSE_WEIGHTS"]
        if major < 11:  # TensorRT 11 removed every precision flag (migration guide, "Removed Python APIs")
            flags += ["FP16", "BF16", "INT8", "FP8", "INT4", "FP4", "OBEY_PRECISION_CONSTRAINTS"]
        mod.BuilderFlag = enum.Enum("BuilderFlag", flags)
        net_flags = ["STRONGLY_TYPED"] if major >= 11 else ["EXPLICIT_BATCH", "STRONGLY_TYPED"]
        mod.NetworkDefinitionCreationFlag = enum.IntEnum("NetworkDefinitionCreationFlag", net_flags, start=0)
        mod.TensorIOMode = enum.Enum("TensorIOMode", ["NONE", "INPUT", "OUTPUT"])
        dtypes = ["FLOAT", "HALF", "BF16", "INT8", "INT32", "INT64", "BOOL", "UINT8", "FP8"]
        mod.DataType = enum.Enum("DataType", dtypes)
        state = self

        class Logger:
            WARNING, ERROR = "WARNING", "ERROR"

            def __init__(self, severity: str) -> None:
                state.log("Logger", severity)

        mod.Logger = Logger
        mod.Builder = lambda logger: FakeBuilder(state)
        mod.OnnxParser = lambda network, logger: FakeParser(state, network)
        mod.Runtime = lambda logger: FakeRuntime(state, mod)
        self.mod = mod
        return mod


class FakeTensor:
    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        self.name, self.shape = name, shape


class FakeNetwork:
    def __init__(self, state: FakeTRT) -> None:
        self.state = state
        self.num_inputs = len(state.network_inputs)

    def get_input(self, i: int) -> FakeTensor:
        return FakeTensor(*self.state.network_inputs[i])


class FakeParser:
    def __init__(self, state: FakeTRT, network: FakeNetwork) -> None:
        self.state = state
        self.num_errors = 0 if state.parse_ok else len(state.parser_errors)

    def parse_from_file(self, path: str) -> bool:
        assert isinstance(path, str)  # the binding takes a str path
        self.state.log("parse_from_file", path)
        return self.state.parse_ok

    def get_error(self, i: int) -> str:
        return self.state.parser_errors[i]


class FakeCache:
    def serialize(self) -> bytes:
        return b"timing-cache"


class FakeConfig:
    def __init__(self, state: FakeTRT) -> None:
        self.state = state

    def set_flag(self, flag: Any) -> None:
        self.state.log("set_flag", flag.name)

    def clear_flag(self, flag: Any) -> None:
        self.state.log("clear_flag", flag.name)

    def add_optimization_profile(self, profile: FakeProfile) -> int:
        self.state.log("add_optimization_profile", dict(profile.shapes))
        return 0

    def create_timing_cache(self, blob: bytes) -> FakeCache:
        self.state.log("create_timing_cache", bytes(blob))
        return FakeCache()

    def set_timing_cache(self, cache: FakeCache, ignore_mismatch: bool) -> bool:
        self.state.log("set_timing_cache", ignore_mismatch)
        return True


class FakeProfile:
    def __init__(self) -> None:
        self.shapes: dict[str, tuple[Any, Any, Any]] = {}

    def set_shape(self, name: str, min: Any, opt: Any, max: Any) -> None:
        self.shapes[name] = (tuple(min), tuple(opt), tuple(max))


class FakeBuilder:
    def __init__(self, state: FakeTRT) -> None:
        self.state = state
        state.log("Builder")

    def create_network(self, flags: int = 0) -> FakeNetwork:
        self.state.log("create_network", flags)
        return FakeNetwork(self.state)

    def create_builder_config(self) -> FakeConfig:
        return FakeConfig(self.state)

    def create_optimization_profile(self) -> FakeProfile:
        return FakeProfile()

    def build_serialized_network(self, network: FakeNetwork, config: FakeConfig) -> memoryview:
        self.state.log("build_serialized_network")
        return memoryview(ENGINE_BYTES)  # IHostMemory exposes the buffer protocol


class FakeRuntime:
    def __init__(self, state: FakeTRT, mod: types.ModuleType) -> None:
        self.state, self.mod = state, mod

    def deserialize_cuda_engine(self, data: bytes) -> FakeEngine | None:
        self.state.log("deserialize_cuda_engine", bytes(data))
        return FakeEngine(self.state, self.mod) if bytes(data) == ENGINE_BYTES else None


class FakeEngine:
    def __init__(self, state: FakeTRT, mod: types.ModuleType) -> None:
        self.state, self.mod = state, mod
        self.num_io_tensors = len(state.engine_io)
        self.io = {n: (getattr(mod.TensorIOMode, m), getattr(mod.DataType, d)) for n, m, d in state.engine_io}

    def get_tensor_name(self, i: int) -> str:
        return self.state.engine_io[i][0]

    def get_tensor_mode(self, name: str) -> Any:
        return self.io[name][0]

    def get_tensor_dtype(self, name: str) -> Any:
        return self.io[name][1]

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        return (-1, 3, 8, 8)

    def is_shape_inference_io(self, name: str) -> bool:
        return False

    def create_execution_context(self) -> FakeContext:
        return FakeContext(self.state)


class FakeContext:
    def __init__(self, state: FakeTRT) -> None:
        self.state = state
        self.shapes: dict[str, tuple[int, ...]] = {}

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> bool:
        self.state.log("set_input_shape", name, tuple(shape))
        self.shapes[name] = tuple(shape)
        return self.state.accept_shapes

    def infer_shapes(self) -> list[str]:
        self.state.log("infer_shapes")
        return []

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        self.state.log("get_tensor_shape", name)
        assert self.shapes, "an output shape was read before the input shapes were set"
        return self.state.output_shape or (self.shapes["x"][0], 5)

    def set_tensor_address(self, name: str, address: int) -> bool:
        self.state.log("set_tensor_address", name, address)
        return True

    def execute_async_v3(self, stream_handle: int) -> bool:
        self.state.log("execute_async_v3", stream_handle)
        return True


class FakeStream:
    cuda_stream = STREAM_HANDLE

    def synchronize(self) -> None:
        pass


def install(monkeypatch: pytest.MonkeyPatch, version: str) -> FakeTRT:
    """Put a fake ``tensorrt`` in sys.modules and make sessions bind CPU tensors on a fake stream."""
    fake = FakeTRT(version)
    monkeypatch.setitem(sys.modules, "tensorrt", fake.module())
    monkeypatch.setattr(trt_backend, "DEVICE", "cpu")
    monkeypatch.setattr(trt_backend, "_new_stream", FakeStream)
    monkeypatch.setattr(trt_backend, "_synchronize", lambda: None)
    monkeypatch.setattr(trt_backend, "_gpu_identity", lambda: ("NVIDIA H100 80GB HBM3", (9, 0)))
    return fake


@pytest.fixture
def trt10(monkeypatch: pytest.MonkeyPatch) -> FakeTRT:
    return install(monkeypatch, "10.13.0.35")


@pytest.fixture
def trt11(monkeypatch: pytest.MonkeyPatch) -> FakeTRT:
    return install(monkeypatch, "11.1.0.7")


def _onnx_model(tmp_path: Path) -> BenchModel:
    path = tmp_path / "m.onnx"
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(144, 5))
    torch.onnx.export(net.eval(), (torch.randn(2, 3, 8, 8),), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "b"}, "y": {0: "b"}}, opset_version=17, dynamo=False)
    return from_onnx_path(path, lambda b: [TensorSpec("x", (b, 3, 8, 8), "float32")], name="tiny")


def _prepare(tmp_path: Path, precision: str) -> trt_backend.TrtRunner:
    backend = trt_backend.make(BACKENDS["tensorrt"])
    return backend.prepare(_onnx_model(tmp_path), precision, BenchConfig(cache_dir=tmp_path / "cache"))


def _build_calls(fake: FakeTRT) -> list[tuple[Any, ...]]:
    keep = ("create_network", "parse_from_file", "set_flag", "clear_flag", "add_optimization_profile",
            "set_timing_cache", "build_serialized_network")
    return [c for c in fake.calls if c[0] in keep]


def test_missing_tensorrt_is_reported_with_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # makes `import tensorrt` raise ImportError
    with pytest.raises(Unavailable, match="^TensorRT not installed — pip install 'modelcost\\[tensorrt\\]'$"):
        trt_backend._trt()
    assert trt_backend.make(BACKENDS["tensorrt"]).unavailable_reason() == TRT_MISSING


def test_fp16_on_trt10_is_a_weakly_typed_build_with_the_fp16_flag(trt10: FakeTRT, tmp_path: Path) -> None:
    runner = _prepare(tmp_path, "fp16")
    assert runner.onnx_path == runner.model.onnx_path  # TensorRT 10 takes the fp32 model and the flag
    data, cached = runner.engine_bytes(8)
    assert (data, cached) == (ENGINE_BYTES, False)
    batch8 = ((8, 3, 8, 8),) * 3  # one engine per batch size: min = opt = max = the benchmarked shape
    assert _build_calls(trt10) == [
        ("create_network", 0),  # weakly typed; EXPLICIT_BATCH is ignored since 10.0 and not passed
        ("parse_from_file", str(runner.onnx_path)),
        ("set_flag", "FP16"),
        ("add_optimization_profile", {"x": batch8}),
        ("set_timing_cache", False),
        ("build_serialized_network",),
    ]
    assert trt10.calls[trt10.names().index("create_timing_cache")] == ("create_timing_cache", b"")  # no cache yet


def test_fp16_on_trt11_is_strongly_typed_with_the_precision_in_the_onnx_model(trt11: FakeTRT, tmp_path: Path) -> None:
    runner = _prepare(tmp_path, "fp16")
    assert runner.onnx_path != runner.model.onnx_path and runner.onnx_path.parent.name == "onnx-fp16"
    model = onnx.load(str(runner.onnx_path))
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in model.graph.initializer)  # the weights are fp16
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT  # I/O stays fp32
    runner.engine_bytes(2)
    calls = _build_calls(trt11)
    assert calls[:2] == [("create_network", 0), ("parse_from_file", str(runner.onnx_path))]  # always strongly typed
    assert not [c for c in calls if c[0] == "set_flag"]  # no precision flag exists to set on TensorRT 11


def test_fp32_clears_tf32_and_trt10_fp8_sets_the_strongly_typed_bit(trt10: FakeTRT, tmp_path: Path) -> None:
    shapes = trt_plan.static_profile([TensorSpec("x", (1, 3, 8, 8), "float32")])
    fp32 = trt_plan.plan_precision("fp32", "10.13", (9, 0))
    trt_backend.build_engine(trt10.mod, tmp_path / "m.onnx", fp32, shapes, tmp_path / "t.cache")
    assert ("clear_flag", "TF32") in trt10.calls and not [c for c in trt10.calls if c[0] == "set_flag"]
    trt10.calls.clear()
    fp8 = trt_plan.plan_precision("fp8", "10.13", (9, 0), model_has_qdq=True)
    trt_backend.build_engine(trt10.mod, tmp_path / "m.onnx", fp8, shapes, tmp_path / "t.cache")
    # STRONGLY_TYPED is member 1 of the fake enum (EXPLICIT_BATCH=0, STRONGLY_TYPED=1): flags = 1 << 1 = 2
    assert trt10.calls[trt10.names().index("create_network")] == ("create_network", 2)
    assert not [c for c in trt10.calls if c[0] == "set_flag"]  # a strongly typed network refuses precision flags
    assert trt10.calls[trt10.names().index("create_timing_cache")] == ("create_timing_cache", b"timing-cache")


def test_a_flag_missing_from_this_tensorrt_is_a_plain_reason(trt11: FakeTRT, tmp_path: Path) -> None:
    plan = trt_plan.plan_precision("fp16", "10.13", (9, 0))  # a TensorRT 10 plan against TensorRT 11
    with pytest.raises(Unavailable, match=r"has no BuilderFlag\.FP16"):
        trt_backend.build_engine(trt11.mod, tmp_path / "m.onnx", plan, {}, tmp_path / "t.cache")


def test_profile_covers_only_dynamic_inputs(trt10: FakeTRT, tmp_path: Path) -> None:
    trt10.network_inputs = [("ids", (-1, -1)), ("mask", (-1, 128)), ("pos", (1, 128))]
    specs = [TensorSpec("ids", (32, 128), "int64"), TensorSpec("mask", (32, 128), "int64"),
             TensorSpec("pos", (1, 128), "int64")]
    plan = trt_plan.plan_precision("fp32", "10.13", (9, 0))
    trt_backend.build_engine(trt10.mod, tmp_path / "m.onnx", plan, trt_plan.static_profile(specs), tmp_path / "t.cache")
    profile = trt10.calls[trt10.names().index("add_optimization_profile")][1]
    assert profile == {"ids": ((32, 128),) * 3, "mask": ((32, 128),) * 3}  # "pos" is static: not in the profile


def test_parser_errors_are_all_reported(trt10: FakeTRT, tmp_path: Path) -> None:
    trt10.parse_ok = False
    plan = trt_plan.plan_precision("fp32", "10.13", (9, 0))
    with pytest.raises(ModelcostError, match="UNSUPPORTED_NODE; In node 7 \\(Foo\\): INVALID_NODE"):
        trt_backend.build_engine(trt10.mod, tmp_path / "m.onnx", plan, {}, tmp_path / "t.cache")
    assert "build_serialized_network" not in trt10.names()


def test_engine_cache_key_covers_model_shapes_version_gpu_and_plan(trt10: FakeTRT, tmp_path: Path) -> None:
    runner = _prepare(tmp_path, "fp16")
    path, shapes = runner.engine_path(4)
    doc = trt_plan.engine_cache_doc(model_hash=runner.model.content_hash(), shapes=shapes, trt_version="10.13.0.35",
                                    gpu_name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), plan=runner.plan)
    assert doc == {"model": runner.model.content_hash(), "shapes": {"x": [[4, 3, 8, 8]] * 3},
                   "tensorrt": "10.13.0.35", "gpu": "NVIDIA H100 80GB HBM3", "cc": [9, 0],
                   "plan": ["fp16", False, "none", ["FP16"], []]}
    assert path.name == trt_plan.engine_cache_key(model_hash=runner.model.content_hash(), shapes=shapes,
                                                  trt_version="10.13.0.35", gpu_name="NVIDIA H100 80GB HBM3",
                                                  compute_capability=(9, 0), plan=runner.plan) + ".engine"
    assert runner.engine_path(8)[0] != path  # another batch size is another engine
    runner.engine_bytes(4)
    assert path.read_bytes() == ENGINE_BYTES
    assert (path.parent / "timing-10.13.0.35-NVIDIA_H100_80GB_HBM3.cache").exists()  # per TensorRT version and GPU
    trt10.calls.clear()
    assert runner.engine_bytes(4) == (ENGINE_BYTES, True) and "Builder" not in trt10.names()  # from the cache


def test_run_path_binds_every_io_tensor_and_enqueues_on_the_stream(trt10: FakeTRT, tmp_path: Path) -> None:
    runner = _prepare(tmp_path, "fp32")
    arrays = [np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)]
    session = runner.session(2, arrays)
    run_calls = trt10.calls[trt10.names().index("deserialize_cuda_engine"):]
    x, y = session.inputs["x"], session.outputs_["y"]
    assert [c for c in run_calls if c[0] != "deserialize_cuda_engine"] == [
        ("set_input_shape", "x", (2, 3, 8, 8)),  # input shapes first: output shapes depend on them
        ("infer_shapes",),
        ("get_tensor_shape", "y"),
        ("set_tensor_address", "x", x.data_ptr()),
        ("set_tensor_address", "y", y.data_ptr()),
    ]
    assert np.array_equal(x.numpy(), arrays[0]) and tuple(y.shape) == (2, 5) and y.dtype == torch.float32
    session.run()
    assert trt10.calls[-1] == ("execute_async_v3", STREAM_HANDLE)  # the stream the CUDA events are recorded on
    assert session.notes == ["engine built now and cached"] and len(session.outputs()) == 1
    session.close()
    assert session.context is None and session.engine is None and session.inputs == {}


def test_outputs_follow_the_onnx_graph_order(trt10: FakeTRT, tmp_path: Path) -> None:
    trt10.engine_io = [("x", "INPUT", "FLOAT"), ("z", "OUTPUT", "HALF"), ("y", "OUTPUT", "FLOAT")]
    runner = _prepare(tmp_path, "fp32")
    runner.output_names = ["y", "z"]
    session = runner.session(2, [np.zeros((2, 3, 8, 8), np.float32)])
    assert list(session.outputs_) == ["y", "z"] and session.outputs_["z"].dtype == torch.float16
    addresses = [c[1] for c in trt10.calls if c[0] == "set_tensor_address"]
    assert sorted(addresses) == ["x", "y", "z"]  # every I/O tensor has an address


def test_rejected_shapes_and_data_dependent_outputs_say_why(trt10: FakeTRT, tmp_path: Path) -> None:
    runner = _prepare(tmp_path, "fp32")
    trt10.accept_shapes = False
    with pytest.raises(ModelcostError, match=r"rejected shape \(2, 3, 8, 8\) for input 'x'"):
        runner.session(2, [np.zeros((2, 3, 8, 8), np.float32)])
    trt10.accept_shapes, trt10.output_shape = True, (-1, 5)
    with pytest.raises(Unavailable, match="data-dependent shape"):
        runner.session(2, [np.zeros((2, 3, 8, 8), np.float32)])
    assert "execute_async_v3" not in trt10.names()  # nothing was run, so nothing can be reported as measured


def test_a_damaged_cached_engine_is_rebuilt(trt10: FakeTRT, tmp_path: Path) -> None:
    runner = _prepare(tmp_path, "fp32")
    path, _ = runner.engine_path(2)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"from another TensorRT")
    session = runner.session(2, [np.zeros((2, 3, 8, 8), np.float32)])
    assert session.notes == ["engine built now and cached"] and path.read_bytes() == ENGINE_BYTES
