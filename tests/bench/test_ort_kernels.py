"""ONNX Runtime's CUDA execution provider runs a node it has no kernel for on the CPU, and says so only in a
verbose log line; ``ort_kernels`` reads the installed ONNX Runtime's kernel registry and names those nodes before a
session runs. A first run longer than the config's time budget is stopped (``ort.guarded_run``). FNet's 24 DFT
nodes (no CUDA kernel: microsoft/onnxruntime#21164) ran one batch-64 forward for minutes on one CPU thread, and
took a whole 585 s device call with them (H100, device_2026-12-02)."""

from __future__ import annotations

import time
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from modelcost.bench.backends import ort as ort_backend  # noqa: E402
from modelcost.bench.backends.ort import guarded_run  # noqa: E402
from modelcost.bench.backends.ort_kernels import (  # noqa: E402
    cpu_fallback,
    cpu_fallback_note,
    kernel_ranges,
    missing_kernels,
    placed_off,
    placed_off_note,
)
from modelcost.bench.base import BenchConfig  # noqa: E402
from modelcost.core.errors import ModelcostError  # noqa: E402

ANY = 2**31 - 1
ORT_CUDA = SimpleNamespace(name="ort-cuda")


def _fnet_like() -> onnx.ModelProto:
    """x -> Exp -> DFT (opset 20: the axis is an input) -> HardSwish, beside a Constant and a Loop whose body holds
    one more DFT."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 2])
    body = helper.make_graph(
        [helper.make_node("DFT", ["v_in", "", "axis"], ["v_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Constant", [], ["axis"], value=helper.make_tensor("a", TensorProto.INT64, [], [1])),
        helper.make_node("Exp", ["x"], ["r"]),
        helper.make_node("DFT", ["r", "", "axis"], ["d"]),
        helper.make_node("HardSwish", ["d"], ["y"]),
        helper.make_node("Loop", ["", "", "d"], ["loop_out"], body=body),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def test_the_nodes_without_a_kernel_are_named_by_op() -> None:
    model = _fnet_like()
    # a provider with Exp (since 13), Identity and Loop kernels only: both DFTs (the graph's and the Loop
    # body's) have none; HardSwish has none either but is a function of other ops, which ONNX Runtime inlines;
    # the Constant becomes an initializer
    ranges = {("", "Exp"): ((13, ANY),), ("", "Identity"): ((1, ANY),), ("", "Loop"): ((1, ANY),)}
    assert missing_kernels(model, ranges) == {"DFT": 2}
    # a kernel registered only for an older schema of the op does not cover it: DFT's schema at opset 20 is 20's
    ranges[("", "DFT")] = ((17, 19),)
    assert missing_kernels(model, ranges) == {"DFT": 2}
    ranges[("", "DFT")] = ((17, 19), (20, ANY))
    assert missing_kernels(model, ranges) == {}
    ranges[("", "Exp")] = ((6, 12),)
    assert missing_kernels(model, ranges) == {"Exp": 1}
    # a contrib op counts when its domain has no kernel for it
    model.graph.node.append(helper.make_node("FastGelu", ["r"], ["g"], domain="com.microsoft"))
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    ranges[("", "Exp")] = ((13, ANY),)
    assert missing_kernels(model, ranges) == {"FastGelu": 1}
    ranges[("com.microsoft", "FastGelu")] = ((1, 1),)
    assert missing_kernels(model, ranges) == {}


def test_a_listing_that_crashes_costs_the_check_not_the_run(monkeypatch) -> None:
    # onnxruntime-gpu 1.31.1's get_all_opkernel_def died of a segmentation fault on the H100 (device_2026-12-03),
    # taking predict_validate with it; the listing runs in a child process, and a crash there reads as "not listed"
    from modelcost.bench.backends import ort_kernels

    monkeypatch.setattr(ort_kernels, "_LIST_KERNELS", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    kernel_ranges.cache_clear()
    try:
        assert kernel_ranges("CUDAExecutionProvider") is None
    finally:
        kernel_ranges.cache_clear()


def test_the_installed_cpu_provider_has_a_kernel_for_every_node(tmp_path) -> None:
    ranges = kernel_ranges("CPUExecutionProvider")
    if ranges is None:
        pytest.skip("this onnxruntime does not list its kernels")
    path = tmp_path / "m.onnx"
    onnx.save(_fnet_like(), str(path))
    assert cpu_fallback(path, "CPUExecutionProvider") == {}
    assert cpu_fallback_note(Counter(), "CPUExecutionProvider", ort.__version__) is None
    if kernel_ranges("CUDAExecutionProvider"):
        pytest.skip("this onnxruntime has CUDA kernels")
    # no CUDA provider in a CPU build: every node with a kernel of its own is named, the largest count first
    missing = cpu_fallback(path, "CUDAExecutionProvider")
    assert missing == {"DFT": 2, "Exp": 1, "Loop": 1, "Identity": 1}
    assert cpu_fallback_note(missing, "CUDAExecutionProvider", "1.0") == (
        "5 nodes have no CUDAExecutionProvider kernel in onnxruntime 1.0 (DFT x2, Exp x1, Loop x1, Identity x1): ONNX "
        "Runtime runs them on the CPU and copies their tensors across, inside the timed figure")


def _matmul_chain(links: int, size: int) -> onnx.ModelProto:
    w = helper.make_tensor("w", TensorProto.FLOAT, [size, size], np.full(size * size, 1e-3, np.float32))
    names = ["x"] + [f"h{i}" for i in range(links - 1)] + ["y"]
    nodes = [helper.make_node("MatMul", [a, "w"], [b]) for a, b in zip(names, names[1:])]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_first_run_past_the_time_budget_is_stopped_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(_matmul_chain(300, 384).SerializeToString(), options,
                                providers=["CPUExecutionProvider"])
    feed = {"x": np.ones((384, 384), np.float32)}
    t0 = time.perf_counter()
    sess.run(None, feed)
    full_s = time.perf_counter() - t0  # 300 matmuls of 384^3 MACs each: 17 GMACs, a second or so on one thread
    # the limit is the config's budget, and at least a floor (a first run holds cuDNN's algorithm search)
    monkeypatch.setattr(ort_backend, "FIRST_RUN_FLOOR_S", full_s / 20)
    budget = BenchConfig(min_time_s=0, max_time_s=full_s / 10)
    runner = SimpleNamespace(config=budget, cpu_fallback="24 nodes have no kernel", backend=ORT_CUDA,
                             read_placement=lambda: None)
    t0 = time.perf_counter()
    with pytest.raises(ModelcostError, match=r"took over .* s \(the config's time budget, --max-time-s, and at "
                                             r"least .* s\) and was stopped: not timed; 24 nodes have no kernel"):
        guarded_run(runner, lambda run_options: sess.run(None, feed, run_options))
    assert time.perf_counter() - t0 < full_s / 2  # stopped between nodes, long before the end
    # where the kernel registry said nothing (onnxruntime-gpu's listing crashes), the stopped run's own profile
    # names the nodes (OrtRunner.read_placement), before the message is made
    runner = SimpleNamespace(config=budget, cpu_fallback=None, backend=ORT_CUDA)
    runner.read_placement = lambda: setattr(runner, "cpu_fallback", "24 nodes ran off CUDAExecutionProvider")
    with pytest.raises(ModelcostError, match=r"stopped: not timed; 24 nodes ran off CUDAExecutionProvider"):
        guarded_run(runner, lambda run_options: sess.run(None, feed, run_options))
    runner = SimpleNamespace(config=BenchConfig(max_time_s=60.0), cpu_fallback=None, backend=ORT_CUDA,
                             read_placement=lambda: None)
    [y] = guarded_run(runner, lambda run_options: sess.run(None, feed, run_options))
    assert y.shape == (384, 384)
    # ort-tensorrt's first run builds its engine: never stopped (no run options at all)
    runner = SimpleNamespace(config=budget, cpu_fallback=None, backend=SimpleNamespace(name="ort-tensorrt"))
    assert guarded_run(runner, lambda run_options: run_options) is None


def _node(name: str, op: str, provider: str, dur_us: float) -> dict:
    return {"cat": "Node", "name": f"{name}_kernel_time", "dur": dur_us, "args": {"op_name": op, "provider": provider}}


def test_the_first_run_s_profile_names_the_nodes_that_took_time_off_the_gpu() -> None:
    # FNet's way, in one profiled run: two DFT nodes on the CPU, 900 and 1,100 ms; ONNX Runtime's own shape
    # arithmetic on the CPU (Shape, Gather: 5 us each, 0.01 ms in all, under the 1 ms a type needs); a MatMul on
    # the CUDA provider; a fence event and a session event, not nodes
    events = [_node("dft1", "DFT", "CPUExecutionProvider", 900_000), _node("dft2", "DFT", "CPUExecutionProvider",
                                                                           1_100_000),
              _node("shape", "Shape", "CPUExecutionProvider", 5), _node("gather", "Gather", "CPUExecutionProvider", 5),
              _node("mm", "MatMul", "CUDAExecutionProvider", 40),
              {"cat": "Node", "name": "dft1_fence_before", "dur": 1, "args": {"op_name": "DFT"}},
              {"cat": "Session", "name": "model_run", "dur": 2_000_100}]
    nodes, ms = placed_off(events, "CUDAExecutionProvider")
    assert (nodes, ms) == ({"DFT": 2}, 2000.0)
    assert placed_off_note(nodes, ms, "CUDAExecutionProvider") == (
        "2 nodes ran off CUDAExecutionProvider in the first run (DFT x2: 2,000.0 ms there, ONNX Runtime's profile): "
        "on the CPU, their tensors copied across, inside the timed figure")
    assert placed_off(events, "CUDAExecutionProvider", min_ms=0.0)[0] == {"DFT": 2, "Shape": 1, "Gather": 1}


def test_a_real_profile_reads_and_ends_after_the_first_run(tmp_path) -> None:
    # ONNX Runtime's own profile of one run, on this (CPU) build: every node ran on the CPU provider, so asked for
    # the CUDA provider each is "off" it (no time floor), and for the CPU provider none is. OrtRunner.read_placement
    # ends the profile (a second end_profiling has nothing left), deletes its folder, and sets the runner's nodes
    # and note once.
    from modelcost.bench.backends.ort import OrtRunner, session_options

    path = tmp_path / "m.onnx"
    onnx.save(_matmul_chain(3, 16), str(path))
    folder = tmp_path / "profile"
    folder.mkdir()
    options = session_options(ort, "cpu", BenchConfig(), folder)
    sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    sess.run(None, {"x": np.ones((16, 16), np.float32)})
    runner = SimpleNamespace(_profile_dir=folder, ort_session=sess, cpu_nodes=None, cpu_fallback=None, notes=[],
                             backend=SimpleNamespace(provider="CUDAExecutionProvider"))
    runner._drop_profile = lambda: OrtRunner._drop_profile(runner)
    monkey = pytest.MonkeyPatch()
    monkey.setattr("modelcost.bench.backends.ort.placed_off",
                   lambda events, provider: placed_off(events, provider, min_ms=0.0))
    try:
        note = OrtRunner.read_placement(runner)
    finally:
        monkey.undo()
    assert runner.cpu_nodes == {"MatMul": 3} and note == runner.cpu_fallback == runner.notes[0]
    assert not folder.exists() and runner._profile_dir is None and sess.end_profiling() == ""
    assert OrtRunner.read_placement(runner) is None  # once
