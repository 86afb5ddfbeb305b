"""Per-layer profiling on the CPU: torch.profiler mapped to module names, ONNX Runtime's profile mapped to
(original) node names, and the parsers on synthetic traces."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from modelcost.bench.profile import (
    TOP_LEVEL,
    _exclusive,
    fused_coverage,
    parse_ort_profile,
    profile_onnx,
    profile_torch,
)

torch = pytest.importorskip("torch")


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x))) + x  # relu and add run in Block itself


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.block = Block()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.block(self.stem(x)).mean((2, 3)))  # mean runs in the top-level forward


def test_exclusive_times() -> None:
    # block = 10 us inclusive, of which block.conv 6 and block.bn 3 -> 1 exclusive; stem 4; total 20 ->
    # top-level = 20 - (10 + 4) = 6.
    ex = _exclusive({"stem": 4.0, "block": 10.0, "block.conv": 6.0, "block.bn": 3.0}, 20.0)
    assert ex == {"stem": 4.0, "block": 1.0, "block.conv": 6.0, "block.bn": 3.0, TOP_LEVEL: 6.0}


def test_profile_torch_cpu_maps_modules() -> None:
    torch.manual_seed(0)
    net = Net().eval()
    prof = profile_torch(net, (torch.randn(2, 3, 32, 32),), runs=3, warmup=1)
    names = {lt.name for lt in prof.layers}
    assert {"stem", "block.conv", "block.bn", "fc"} <= names
    assert prof.source == "torch.profiler" and prof.time_kind == "CPU time" and prof.runs == 3
    ops = {lt.name: lt.op for lt in prof.layers}
    assert ops["stem"] == "Conv2d" and ops["fc"] == "Linear"
    # exclusive times add up to the total (top-level forward takes the remainder)
    assert sum(lt.time_ms for lt in prof.layers) == pytest.approx(prof.total_ms, rel=1e-6)
    assert all(lt.time_ms >= 0 for lt in prof.layers)
    # hooks are gone afterwards
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in net.modules())


def test_profile_torch_kwargs_inputs() -> None:
    class Kw(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
            return self.lin(x) * scale

    prof = profile_torch(Kw().eval(), {"x": torch.randn(2, 4), "scale": 2.0}, runs=2, warmup=1)
    assert "lin" in {lt.name for lt in prof.layers}


def test_parse_ort_profile_windows_and_kernels() -> None:
    # Two runs; only the last (runs=1) counts. Host times: conv 30, relu 5. With "Kernel" events (ORT built
    # with CUDA profiling) the GPU times are used instead: conv 7 + 3 = 10, relu 2.
    def node(name: str, ts: int, dur: int, op: str) -> dict:
        return {"cat": "Node", "name": f"{name}_kernel_time", "ts": ts, "dur": dur, "args": {"op_name": op}}

    run1 = [node("conv", 10, 100, "Conv"), node("relu", 120, 50, "Relu"),
            {"cat": "Session", "name": "model_run", "ts": 5, "dur": 200}]
    run2 = [node("conv", 310, 30, "Conv"), node("relu", 345, 5, "Relu"),
            {"cat": "Session", "name": "model_run", "ts": 300, "dur": 60}]
    per_node, ops, gpu = parse_ort_profile(run1 + run2, runs=1)
    assert per_node == {"conv": 30, "relu": 5} and ops == {"conv": "Conv", "relu": "Relu"} and not gpu
    kernels = [run2[0], {"cat": "Kernel", "name": "sgemm", "ts": 311, "dur": 7},
               {"cat": "Kernel", "name": "bias", "ts": 318, "dur": 3}, run2[1],
               {"cat": "Kernel", "name": "relu", "ts": 346, "dur": 2}, run2[2]]
    per_node, _, gpu = parse_ort_profile(run1 + kernels, runs=1)
    assert gpu and per_node == {"conv": 10, "relu": 2}


def _graph(nodes: list[tuple[str, list[str], list[str]]]) -> SimpleNamespace:
    node = [SimpleNamespace(name=n, input=i, output=o) for n, i, o in nodes]
    return SimpleNamespace(graph=SimpleNamespace(node=node))


def test_fused_coverage() -> None:
    # Original: conv -> relu -> add(+x) -> gemm. ORT fuses conv+relu into "relu_out_nchwc" (named after the
    # relu's output), keeps "add", reorders back to the original tensor name, keeps "gemm".
    original = _graph([("conv", ["x"], ["conv_out"]), ("relu", ["conv_out"], ["relu_out"]),
                       ("add", ["relu_out", "x"], ["add_out"]), ("gemm", ["add_out"], ["y"])])
    optimized = _graph([("relu_out_nchwc", ["x"], ["t1"]), ("add", ["t1", "x"], ["t2"]),
                        ("ReorderOutput", ["t2"], ["add_out"]), ("gemm", ["add_out"], ["y"])])
    cover = fused_coverage(original, optimized)
    assert cover == {"relu_out_nchwc": ["conv", "relu"], "add": ["add"], "gemm": ["gemm"]}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_profile_onnx_cpu(tmp_path) -> None:
    pytest.importorskip("onnxruntime")
    torch.manual_seed(0)
    path = tmp_path / "net.onnx"
    torch.onnx.export(Net().eval(), (torch.randn(2, 3, 32, 32),), str(path), input_names=["x"], dynamo=False)
    prof = profile_onnx(path, {"x": np.random.default_rng(0).standard_normal((2, 3, 32, 32), dtype=np.float32)},
                        runs=3, warmup=1)
    assert prof.source == "onnxruntime" and prof.time_kind == "CPU time"
    covered = {name for lt in prof.layers for name in lt.covers}
    import onnx

    original = {n.name for n in onnx.load(str(path)).graph.node if n.op_type != "Constant"}
    assert original <= covered | {lt.name for lt in prof.layers}  # every counted node maps to a profiled one
    assert prof.total_ms == pytest.approx(sum(lt.time_ms for lt in prof.layers))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_attach_layer_profiles_on_cpu_backends() -> None:
    # The api glue: one profile per (backend, precision), at its largest measured batch, joined per layer.
    from modelcost import api
    from modelcost.core.types import RunReport
    from modelcost.hardware.specs import spec_from_table
    from tests.analysis.test_roofline import result

    run = RunReport(benchmarks=[result("fp32", 1, 5.0, backend="torch-cpu", device="cpu"),
                                result("fp32", 2, 9.0, backend="torch-cpu", device="cpu"),
                                result("fp32", 1, 4.0, backend="ort-cpu", device="cpu")])
    api.attach_layer_profiles("zoo:bert-tiny", run, backends=("torch-cpu", "ort-cpu"), runs=2)
    torch_b1, torch_b2, ort_b1 = run.benchmarks
    assert torch_b1.layer_profile is None and torch_b2.layer_profile is not None  # the larger batch only
    assert ort_b1.layer_profile is not None and ort_b1.layer_profile.source == "onnxruntime"
    cost = api.analyze_static("zoo:bert-tiny", batch_size=2)
    rows = api.layer_roofline(cost, spec_from_table("H100 SXM"), "fp32", 2, torch_b2.layer_profile)
    assert "encoder.0.attention.query" in {r.name for r in rows}
    assert sum(r.flops_share for r in rows) == pytest.approx(1.0)
