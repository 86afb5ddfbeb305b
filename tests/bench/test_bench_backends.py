"""Backend code paths that the GPU runs, exercised on the CPU where they can be: ONNX Runtime's I/O binding
(bound inputs by pointer, output buffers kept bound) and the torch session's host round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from modelcost.bench.backends.ort import OrtBackend, fp16_copy
from modelcost.bench.backends.torch_backends import TorchBackend
from modelcost.bench.base import BenchConfig
from modelcost.bench.model import from_module
from modelcost.bench.registry import BACKENDS
from modelcost.core.types import TensorSpec

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _model():  # noqa: ANN202
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).eval()
    return from_module(net, lambda b: [TensorSpec("x", (b, 6), "float32")], name="mlp")


def test_ort_io_binding_reuses_its_output_buffers(tmp_path: Path) -> None:
    model = _model()
    runner = OrtBackend(BACKENDS["ort-cpu"]).prepare(model, "fp32", BenchConfig(cache_dir=tmp_path))
    arrays, _ = model.host_inputs(5)
    session = runner.session(5, arrays)
    plain = session.outputs()[0]
    session.bind_io("cpu")  # the path ort-cuda takes, with CPU pointers
    session.run()
    bound = session.outputs()[0]
    assert bound.shape == (5, 3) and np.allclose(bound, plain, atol=1e-6)
    session._tensors[0].mul_(0.0).add_(1.0)  # new values in the bound input buffer ...
    session.run()
    expected = runner.ort_session.run(None, {"x": np.ones((5, 6), dtype=np.float32)})[0]
    assert np.allclose(session.outputs()[0], expected, atol=1e-6)  # ... are what the next run reads
    session.close()


def test_torch_cpu_session_round_trip(tmp_path: Path) -> None:
    model = _model()
    runner = TorchBackend(BACKENDS["torch-cpu"]).prepare(model, "fp32", BenchConfig(cache_dir=tmp_path))
    arrays, _ = model.host_inputs(4)
    session = runner.session(4, arrays)
    session.run()
    out = session.outputs()[0]
    with torch.no_grad():
        ref = model.cpu_module()(torch.from_numpy(arrays[0])).numpy()
    assert np.array_equal(out, ref)
    session.run_e2e(arrays)
    assert session.memory_peak_bytes() == (None, "")
    session.close()
    assert not torch.is_inference_mode_enabled()  # the session's context was left


def test_pytorch_backends_refuse_onnx_models(tmp_path: Path) -> None:
    from modelcost.bench.base import Unavailable
    from modelcost.bench.model import from_onnx_path

    model = from_onnx_path(tmp_path / "x.onnx", lambda b: [], name="x")
    with pytest.raises(Unavailable, match="PyTorch backends need a PyTorch model"):
        TorchBackend(BACKENDS["torch-eager"]).prepare(model, "fp32", BenchConfig())


def test_fp16_copy_is_cached(tmp_path: Path) -> None:
    model = _model()
    src = model.onnx_file(tmp_path)
    a = fp16_copy(src, tmp_path, "key")
    import onnx

    assert fp16_copy(src, tmp_path, "key") == a
    assert {i.data_type for i in onnx.load(str(a)).graph.initializer} == {onnx.TensorProto.FLOAT16}


def test_an_fp16_copy_over_protobufs_limit_keeps_its_weights_beside_it(tmp_path: Path, monkeypatch) -> None:
    # Past 2 GB protobuf cannot size a model: ByteSize raises EncodeError ("Failed to serialize proto"), and the
    # size check did so for OLMo 2 1B's 3 GB fp16 copy (H100, device_2026-12-08). Such a model needs external data,
    # as one over the limit does: here the limit is set to 0 bytes, so a 6 -> 1,024 -> 3 MLP's copy is written with
    # its weights in <copy>.data (onnx moves tensors of 1 KiB and more: the first layer's 6 x 1,024 fp16 weight is
    # 12 KiB), and reads back as fp16.
    import onnx
    from google.protobuf.message import EncodeError

    from modelcost.loaders import onnx_external

    class Unsizable:
        def ByteSize(self) -> int:  # noqa: N802 (protobuf's name)
            raise EncodeError("Failed to serialize proto")

    assert onnx_external.needs_external_data(Unsizable())
    assert not onnx_external.needs_external_data(onnx.ModelProto())
    monkeypatch.setattr(onnx_external, "PROTOBUF_LIMIT_BYTES", 0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 1024), torch.nn.Tanh(), torch.nn.Linear(1024, 3)).eval()
    model = from_module(net, lambda b: [TensorSpec("x", (b, 6), "float32")], name="wide")
    copy = fp16_copy(model.onnx_file(tmp_path), tmp_path, "big")
    assert copy.with_name(f"{copy.name}.data").stat().st_size > 0
    assert {i.data_type for i in onnx.load(str(copy)).graph.initializer} == {onnx.TensorProto.FLOAT16}


def test_sessions_taking_turns_each_run_under_their_own_settings(tmp_path: Path) -> None:
    """Two torch sessions alive at once (an ABBA comparison): the one that runs switches the global settings
    to its own, and closing them in any order leaves the process as it was."""
    from modelcost.bench.backends import torch_backends as tb

    calls: list[tuple[str, bool]] = []

    class Probe(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            calls.append((self.tag, torch.is_inference_mode_enabled()))
            return x * 2

    model = _model()
    cfg = BenchConfig(cache_dir=tmp_path)
    a = TorchBackend(BACKENDS["torch-cpu"]).prepare(model, "fp32", cfg).session(2, model.host_inputs(2)[0])
    b = TorchBackend(BACKENDS["torch-cpu"]).prepare(model, "fp32", cfg).session(2, model.host_inputs(2)[0])
    assert tb._ACTIVE[0] is b
    a._fn, b._fn = Probe(), Probe()
    a._fn.tag, b._fn.tag = "a", "b"
    a.run()
    assert tb._ACTIVE[0] is a and b._ctx is None  # b's settings were left before a's were entered
    b.run()
    a.run()
    assert calls == [("a", True), ("b", True), ("a", True)]
    b.close()
    a.close()
    assert tb._ACTIVE[0] is None and not torch.is_inference_mode_enabled()


def test_the_registry_describes_each_backend_by_data() -> None:
    # The torch runner reads these flags instead of testing the backend's name; they must say what the names did.
    from modelcost.bench.registry import BACKENDS, profiled

    torch_rows = {n: e for n, e in BACKENDS.items() if e.module.endswith("torch_backends")}
    assert {n for n, e in torch_rows.items() if e.cast} == {"torch-half", "torch-compile", "torch-cudagraph",
                                                            "torch-compile-cudagraph"}
    assert {n for n, e in torch_rows.items() if e.compile} == {"torch-compile", "torch-compile-cudagraph"}
    assert {n for n, e in torch_rows.items() if e.cudagraph} == {"torch-cudagraph", "torch-compile-cudagraph"}
    assert {n for n, e in torch_rows.items() if e.autocast} == {"torch-autocast"}
    # what can be profiled per layer: eager PyTorch and ONNX Runtime, never compiled / graph-replayed / TensorRT
    assert profiled() == {"torch-eager": ("torch", "cuda"), "torch-half": ("torch", "cuda"),
                          "torch-cpu": ("torch", "cpu"), "ort-cuda": ("onnx", "cuda"), "ort-cpu": ("onnx", "cpu")}


def test_one_compile_serves_every_batch_and_a_failed_shared_compile_falls_back(tmp_path: Path, monkeypatch) -> None:
    """The compile backends are CUDA-only, so a CPU twin of torch-compile with torch.compile replaced by a
    recorder: one dynamic=None compile for batches 1, 4 and 8 (torch's automatic dynamic shapes); a batch whose
    shared compile raises gets its own dynamic=False compile, and a note."""
    import dataclasses

    from modelcost.bench.backends import torch_backends

    compiles: list[object] = []
    fail_at = {8}

    def fake_compile(module, mode=None, dynamic=None):  # noqa: ANN001, ANN202
        compiles.append(dynamic)

        def forward(x):  # noqa: ANN001, ANN202
            if dynamic is None and x.shape[0] in fail_at:
                raise RuntimeError("dynamic shape guard failed\nmore detail")
            return module(x)
        return forward

    monkeypatch.setattr(torch, "compile", fake_compile)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    resets: list[int] = []
    monkeypatch.setattr(torch._dynamo, "reset", lambda: resets.append(len(compiles)))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    entry = dataclasses.replace(BACKENDS["torch-cpu"], name="cpu-compile", compile=True)
    model = _model()
    runner = torch_backends.TorchBackend(entry).prepare(model, "fp32", BenchConfig(cache_dir=tmp_path,
                                                                                   compile_graphs="shared"))
    for batch in (1, 4):
        session = runner.session(batch, model.host_inputs(batch)[0])
        session.run()
        assert session.outputs()[0].shape[0] == batch and not session.notes
        session.close()
    assert compiles == [None] and resets == []  # one compile, shared: no session threw its graphs away
    session = runner.session(8, model.host_inputs(8)[0])
    session.run()
    assert compiles == [None, False] and session.outputs()[0].shape[0] == 8
    assert session.notes == ["compiled for batch 8 alone with static shapes: the shared (dynamic batch) compile "
                             "failed (dynamic shape guard failed)"]
    session.close()
    runner.close()
    assert resets == [1, 2]  # before the static fallback compile, and when the runner closed


def _dynamo_twin(tmp_path: Path, monkeypatch, **config) -> tuple:  # noqa: ANN001
    """A CPU twin of torch-compile with torch's real dynamo (its eager backend: no C++ compiler needed), the
    ``dynamic`` argument of every torch.compile call recorded; returns (runner maker, run-and-check, dynamics)."""
    import dataclasses

    from modelcost.bench.backends import torch_backends

    real_compile = torch.compile
    dynamics: list[object] = []

    def recording_compile(module, mode=None, dynamic=None):  # noqa: ANN001, ANN202
        dynamics.append(dynamic)
        return real_compile(module, backend="eager", dynamic=dynamic)

    monkeypatch.setattr(torch, "compile", recording_compile)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    entry = dataclasses.replace(BACKENDS["torch-cpu"], name="cpu-compile", compile=True)
    model = _model()

    def make_runner():  # noqa: ANN202
        return torch_backends.TorchBackend(entry).prepare(model, "fp32", BenchConfig(cache_dir=tmp_path, **config))

    def run(runner, batch: int) -> None:  # noqa: ANN001
        arrays, _ = model.host_inputs(batch)
        session = runner.session(batch, arrays)
        session.run()
        with torch.no_grad():
            expected = model.cpu_module()(torch.from_numpy(arrays[0])).numpy()
        assert np.allclose(session.outputs()[0], expected, atol=1e-6) and not session.notes
        session.close()

    return make_runner, run, dynamics


def test_real_dynamo_compiles_two_graphs_for_four_batch_sizes(tmp_path: Path, monkeypatch) -> None:
    """--compile-graphs shared, the CPU twin with real dynamo: batch 1 gets its own graph, batches 4, 8 and 16 share
    one with a dynamic batch dimension - 2 graphs, not 4, and right outputs."""
    from torch._dynamo.utils import counters

    make_runner, run, _ = _dynamo_twin(tmp_path, monkeypatch, compile_graphs="shared")
    counters.clear()
    runner = make_runner()
    for batch in (1, 4, 8, 16):
        run(runner, batch)
    assert counters["stats"]["unique_graphs"] == 2
    runner.close()


def test_per_batch_graphs_are_static_and_stay_under_dynamo_s_recompile_limit(tmp_path: Path, monkeypatch) -> None:
    """--compile-graphs per-batch (the default): real dynamo (eager backend) compiles one static graph per batch
    size (4 graphs for batches 1, 4, 8, 16; shared gives 2, the test above). Past PER_BATCH_GRAPHS sizes (here 2)
    dynamo's caches start afresh instead of running the model eagerly at the recompile limit: the outputs stay right."""
    from torch._dynamo.utils import counters

    from modelcost.bench.backends import torch_backends

    make_runner, run, dynamics = _dynamo_twin(tmp_path, monkeypatch)
    counters.clear()
    runner = make_runner()
    assert any("a static graph per batch size" in n for n in runner.notes)
    for batch in (1, 4, 8, 16):
        run(runner, batch)
    assert counters["stats"]["unique_graphs"] == 4 and dynamics == [False]
    runner.close()
    monkeypatch.setattr(torch_backends, "PER_BATCH_GRAPHS", 2)
    runner = make_runner()
    dynamics.clear()
    for batch in (1, 4, 8, 4):  # the third size starts afresh (a second compile); 4 then joins 8 under it
        run(runner, batch)
    assert dynamics == [False, False]
    runner.close()
    from modelcost.core.errors import ModelcostError

    with pytest.raises(ModelcostError, match="--compile-graphs 'static'"):
        BenchConfig(compile_graphs="static")


def test_a_cast_conv_net_goes_channels_last_at_each_tensor_s_rank() -> None:
    """A net of 3-D convs (the twelfth held-out set's X3D) failed under torch-half and compile fp16: the model was
    given ``channels_last``, which takes only 4-D tensors. Each tensor now gets its rank's layout: Conv2d weights
    and 4-D inputs channels_last, Conv3d weights and 5-D inputs channels_last_3d, the rest as they are."""
    from types import SimpleNamespace

    from modelcost.bench.backends.torch_backends import TorchSession

    net = torch.nn.Sequential(torch.nn.Conv3d(3, 4, 3), torch.nn.Flatten(1, 2), torch.nn.Conv2d(12, 2, 3))
    model = from_module(net, lambda b: [TensorSpec("x", (b, 3, 5, 8, 8), "float32")], name="mixed")
    assert model.is_conv_net()
    mod = model.device_module("cpu", "float32", channels_last=True)
    assert mod[0].weight.is_contiguous(memory_format=torch.channels_last_3d)
    assert mod[2].weight.is_contiguous(memory_format=torch.channels_last)
    assert mod[0].bias.shape == (4,)
    session = SimpleNamespace(_torch=torch, device="cpu", runner=SimpleNamespace(dtype="float32", channels_last=True))
    x = TorchSession._to_device(session, np.zeros((1, 3, 5, 8, 8), np.float32))
    assert x.is_contiguous(memory_format=torch.channels_last_3d)
    # (1, 3, 5, 8, 8) -> Conv3d 3x3x3 -> (1, 4, 3, 6, 6) -> Flatten(1, 2) -> (1, 12, 6, 6) -> Conv2d 3x3 -> (1, 2, 4, 4)
    assert mod(x).shape == (1, 2, 4, 4)


def test_inputs_reach_the_model_at_its_dtype_whichever_side_casts() -> None:
    """TorchSession._to_device: the session's inputs are cast on the host (no transient float32 copy in the peak
    memory), the end-to-end loop's on the device; either way the model gets the same fp16, channels_last values,
    and on the CPU a tensor of its own (writing to it leaves the host array alone)."""
    from types import SimpleNamespace

    from modelcost.bench.backends.torch_backends import TorchSession

    array = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    session = SimpleNamespace(_torch=torch, device="cpu", runner=SimpleNamespace(dtype="float16", channels_last=True))
    for on_device in (False, True):
        t = TorchSession._to_device(session, array, cast_on_device=on_device)
        assert t.dtype == torch.float16 and t.is_contiguous(memory_format=torch.channels_last)
        assert np.array_equal(t.numpy(), array.astype(np.float16))
    session.runner.dtype = "float32"
    t = TorchSession._to_device(session, array)
    t.zero_()
    assert array.any()


def test_a_pinned_cuda_session_runs_onnx_runtime_at_one_intra_op_thread() -> None:
    """A CUDA session timed pinned to one CPU gets one intra-op thread (a pool of spinning workers would share the
    pinned CPU with the thread issuing the kernels: bench.timing.pinned_to_one_cpu says why); an unpinned or CPU
    session keeps ONNX Runtime's default (0: one thread per core)."""
    import onnxruntime as ort

    from modelcost.bench.backends.ort import session_options
    from modelcost.bench.base import BenchConfig

    assert session_options(ort, "cuda", BenchConfig()).intra_op_num_threads == 1
    assert session_options(ort, "cuda", BenchConfig(pin_cpu=False)).intra_op_num_threads == 0
    assert session_options(ort, "cpu", BenchConfig()).intra_op_num_threads == 0
    assert session_options(ort, "cuda", BenchConfig()).graph_optimization_level == \
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL


def test_the_content_hash_sees_a_flag_the_weights_do_not() -> None:
    """The export cache is keyed by BenchModel.content_hash. Weights and shapes alone gave one key to two models that
    differ by a flag: XLNet with ``use_mems_eval`` off reused the file exported with it on. A submodule's plain
    attributes and a transformers config's values (``to_json_string``) are in the key now."""
    from types import SimpleNamespace

    class Configured(torch.nn.Module):
        def __init__(self, flag: bool) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)
            self.config = SimpleNamespace(to_json_string=lambda: f'{{"use_mems_eval": {str(flag).lower()}}}')

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x)

    def key(module: torch.nn.Module) -> str:
        torch.manual_seed(0)
        module.linear.reset_parameters()
        return from_module(module, lambda b: [TensorSpec("x", (b, 4), "float32")]).content_hash()

    assert key(Configured(True)) == key(Configured(True))
    assert key(Configured(True)) != key(Configured(False))
    plain = Configured(True)
    before = key(plain)
    plain.linear.out_features_note = 3  # a plain attribute a forward could read
    assert key(plain) != before


class _StdConv(torch.nn.Conv2d):
    """timm's StdConv2d (BiT; NFNet's ScaledStdConv2d adds a gain): each forward standardizes the weight per output
    channel with a training-mode batch_norm, which exports as BatchNormalization(training_mode=1) on weights."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = torch.nn.functional.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None, training=True,
                                           momentum=0.0, eps=1e-5).reshape_as(self.weight)
        return torch.nn.functional.conv2d(x, w, self.bias, padding=1)


def test_a_weight_standardizing_batch_norm_stays_fp32_in_the_fp16_copy(tmp_path: Path) -> None:
    import onnx
    import onnxruntime as ort

    torch.manual_seed(0)
    net = torch.nn.Sequential(_StdConv(3, 8, 3), torch.nn.ReLU()).eval()
    model = from_module(net, lambda b: [TensorSpec("x", (b, 3, 16, 16), "float32")], name="stdconv")
    src = model.onnx_file(tmp_path)
    copy = onnx.load(str(fp16_copy(src, tmp_path, "key")))
    [norm] = [n for n in copy.graph.node if n.op_type == "BatchNormalization"]
    # kept fp32 with the weight-only nodes before it (ReduceMean, Sub, Mul...): its input is the fp32 weight
    fp32 = {i.name for i in copy.graph.initializer if i.data_type == onnx.TensorProto.FLOAT}
    assert norm.input[0] in fp32 or any(n.output[0] == norm.input[0] and n.op_type != "Cast"
                                        for n in copy.graph.node)
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in copy.graph.initializer)  # the conv's bias
    # ONNX Runtime folds it into the conv's weight when the session starts, as it does the fp32 model's, so the
    # CUDA provider never sees a training-mode BatchNormalization
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    path = fp16_copy(src, tmp_path, "key")
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    [y16] = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert "BatchNormalization" not in {n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node}
    [y32] = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert np.abs(y16 - y32).max() < 1e-2 * np.abs(y32).max()  # fp16's rounding, not another function


def test_a_failed_cuda_graph_capture_names_the_host_tensor_the_forward_copies() -> None:
    # transformers' VideoMAE keeps its sinusoidal position table as a plain attribute (not a buffer): moving the
    # model to the GPU leaves it on the CPU, the forward copies it over on each call, and CUDA-graph capture
    # fails with torch's advice to pin the tensor (the sixteenth held-out set, BENCHMARKS.md)
    from modelcost.bench import lifecycle
    from modelcost.bench.backends.torch_backends import capture_failure, host_tensor_attributes

    class Embeddings(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(4, 4)
            self.register_buffer("moved", torch.zeros(4))
            self.table = torch.zeros(4)  # plain attribute: .to(device) leaves it where it is

    model = torch.nn.Sequential(Embeddings(), torch.nn.ReLU())
    assert host_tensor_attributes(model) == ["0.table"]
    torch_says = RuntimeError("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU "
                              "tensor is pinned. Please use tensor.pin_memory() or allocate the tensor with "
                              "pin_memory=True.")
    status, reason = lifecycle.failure(capture_failure(torch_says, model))
    assert status == "failed"
    assert reason.startswith("CUDA graphs cannot capture this forward: it copies a host tensor to the GPU")
    assert "0.table: a tensor kept as a plain attribute, not a registered buffer" in reason
    assert "a tensor made on the CPU inside the forward" in str(capture_failure(torch_says, torch.nn.ReLU()))
    assert capture_failure(RuntimeError("CUDA error: an illegal memory access"), model) is None
