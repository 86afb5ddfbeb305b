"""``modelcost bench`` and ``modelcost backends`` through typer's CliRunner, on the CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from modelcost.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FAST = ["--min-time-s", "0.02", "--min-iters", "5", "--max-time-s", "0.3", "--warmup", "2", "--device", "cpu"]
REQUIRED = {"backend", "precision", "batch_size", "status", "reason", "latency_ms", "throughput_ips", "e2e_latency_ms",
            "build_s", "gpu_memory_peak_bytes", "power_w_mean", "energy_j_per_inference", "accuracy", "device"}


@pytest.fixture
def onnx_model(tmp_path: Path) -> Path:
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 6 * 6, 5))
    path = tmp_path / "net.onnx"
    torch.onnx.export(net.eval(), (torch.randn(2, 3, 8, 8),), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17, dynamo=False)
    return path


@pytest.fixture
def factory_file(tmp_path: Path) -> Path:
    path = tmp_path / "mynet.py"
    path.write_text(
        "import torch\n\n"
        "def make():\n"
        "    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))\n\n"
        "def example_inputs(batch_size=1):\n"
        "    return [torch.randn(batch_size, 16)]\n"
    )
    return path


def test_bench_an_onnx_file_writes_the_json_keys(onnx_model: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["bench", str(onnx_model), "--batch-sizes", "1,2", "--json", str(out), *FAST])
    assert res.exit_code == 0, res.output
    assert "ort-cpu" in res.output and "what the timings include" in res.output
    assert "PyTorch backends need a PyTorch model" in res.output
    doc = json.loads(out.read_text())
    ok = [b for b in doc["benchmarks"] if b["status"] == "ok"]
    assert [(b["backend"], b["batch_size"]) for b in ok] == [("ort-cpu", 1), ("ort-cpu", 2)]
    for b in doc["benchmarks"]:
        assert REQUIRED <= set(b), REQUIRED - set(b)
    assert set(ok[0]["latency_ms"]) >= {"p50", "p90", "p95", "p99", "mean", "std", "min", "max"}
    assert set(ok[0]["accuracy"]) >= {"max_abs_err", "max_rel_err", "cosine", "top1_agreement"}
    assert doc["device"]["kind"] == "cpu" and doc["complete"] is True


def test_bench_a_factory_on_torch_cpu(factory_file: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    res = CliRunner().invoke(app, ["bench", f"{factory_file}:make", "--backends", "torch-cpu,ort-cpu",
                                   "--batch-size", "3", "--no-screen", *FAST])
    assert res.exit_code == 0, res.output
    # both measured in full (--no-screen: which one a screening would drop depends on this machine's load), and
    # "unstable" and "budget hit" are measured rows too (how busy this machine is decides which word it gets: a
    # loaded 2-core machine once took 24 ms a call of this MLP in torch, past the 0.3 s budget)
    measured = sum(res.output.count(f" {word}") for word in ("ok", "unstable", "budget hit"))
    assert measured >= 2 and "torch-cpu" in res.output


def test_backends_lists_every_backend_with_a_reason() -> None:
    from modelcost.bench.registry import BACKENDS

    res = CliRunner().invoke(app, ["backends"])
    assert res.exit_code == 0
    for name in BACKENDS:
        assert name in res.output
    if not torch.cuda.is_available():
        assert "no CUDA device" in res.output
    assert "modelcost[tensorrt]" in res.output or "available" in res.output


@pytest.mark.parametrize(("args", "message"), [
    (["--batch-sizes", "1,x"], "--batch-sizes '1,x'"),
    (["--batch-sizes", "0"], "must be positive"),
    (["--batch-sizes", ","], "--batch-sizes ',': no value given"),
    (["--precisions", ","], "--precisions ',': no value given"),  # was the default sweep, silently
    (["--backends", "torch-warp"], "unknown backend 'torch-warp'"),
    (["--precisions", "fp4"], "--precisions: unknown fp4"),
    (["--backends", "torch-cpu", "--precisions", "int8"], "no chosen backend has precision int8"),
    (["--compile-mode", "fastest"], "--compile-mode 'fastest'"),
])
def test_bad_options_give_one_line_and_exit_1(onnx_model: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(app, ["bench", str(onnx_model), *args, *FAST])
    assert res.exit_code == 1, res.output
    assert message in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("command", ["compare", "quantize"])
def test_batch_sizes_auto_is_refused_where_no_search_runs(onnx_model: Path, command: str) -> None:
    # compare took 'auto' (its help offered it) and measured batch 1 alone; quantize refused it as "not an integer"
    extra = [str(onnx_model)] if command == "compare" else ["--fp16"]
    res = CliRunner().invoke(app, [command, str(onnx_model), *extra, "--batch-sizes", "auto"])
    assert res.exit_code == 1, res.output
    assert "--batch-sizes auto: this command has no throughput-batch search" in res.output
    assert not list(onnx_model.parent.glob("*.fp16.onnx"))  # refused before any model was made
    help_text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
    assert "'auto' batch search" in help_text


def test_nothing_measurable_exits_1(onnx_model: Path) -> None:
    res = CliRunner().invoke(app, ["bench", str(onnx_model), "--backends", "torch-cpu", *FAST])
    assert res.exit_code == 1
    assert "PyTorch backends need a PyTorch model" in res.output and "no configuration could be measured" in res.output
