"""Every GPU backend on small models (run on an H100/H200 by ``pytest -m gpu tests/bench/test_gpu_bench.py``; skipped
where CUDA is absent). Timings are kept short: these check that each backend measures what it says, not speed."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest
import torch
from conftest import requires_cuda

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import from_module
from modelcost.bench.runner import run_benchmarks
from modelcost.core.types import TensorSpec

pytestmark = [pytest.mark.gpu, requires_cuda, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


def cfg(tmp_path: Path, **kw) -> BenchConfig:  # noqa: ANN003
    base = dict(device="cuda", warmup=3, warmup_max_s=0.5, min_time_s=0.1, min_iters=10, max_time_s=1.0,
                e2e_min_iters=3, e2e_max_s=0.1, cache_dir=tmp_path / "cache")
    base.update(kw)
    return BenchConfig(**base)


class SmallConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.head = torch.nn.Linear(64, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(1000, 64)
        self.layer = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
        self.out = torch.nn.Linear(64, 10)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.layer(self.emb(input_ids)).mean(1))


def conv_model():  # noqa: ANN201
    torch.manual_seed(0)
    return from_module(SmallConvNet().eval(), lambda b: [TensorSpec("x", (b, 3, 32, 32), "float32")], name="smallconv")


def by_key(results):  # noqa: ANN001, ANN201
    return {(r.backend, r.precision, r.batch_size): r for r in results}


def test_every_eager_and_graph_backend_measures(tmp_path: Path) -> None:
    backends = ["torch-eager", "torch-autocast", "torch-half", "torch-cudagraph"]
    results, device = run_benchmarks(conv_model(), backends=backends, precisions=["fp32", "tf32", "fp16", "bf16"],
                                     batch_sizes=[1, 8], config=cfg(tmp_path))
    assert device.kind == "cuda" and len(results) == 2 * (2 + 2 + 2 + 3)
    got = by_key(results)
    for r in results:
        assert r.status == "ok", (r.backend, r.precision, r.batch_size, r.reason)
        assert "CUDA events" in r.timing and r.latency_ms.count >= 10 and r.latency_ms.p50 > 0
        assert r.e2e_latency_ms.p50 > 0 and r.gpu_memory_peak_bytes and r.gpu_memory_peak_bytes > 0
        assert r.accuracy is not None and r.accuracy.reference == "torch-eager fp32 (TF32 off)"
        assert r.accuracy.top1_agreement is not None  # [batch, 100] class scores
        assert r.extra.accuracy_compared_on == "gpu"  # the outputs where they are
        if r.power_w_mean is not None:  # NVML answered
            assert r.power_w_mean > 0 and r.energy_j_per_inference > 0 and r.sm_clock_mhz_mean > 0
    # the reference configuration itself, but its cuDNN algorithms chosen by heuristics (bench.runner.Reference) and
    # the config's by autotuning: fp32 either way, so they agree to rounding
    assert got[("torch-eager", "fp32", 8)].accuracy.max_abs_err < 1e-4
    assert got[("torch-eager", "fp32", 8)].accuracy.cosine > 0.999999
    assert got[("torch-cudagraph", "fp32", 8)].accuracy.max_abs_err < 1e-4
    assert "CUDA-graph replay" in got[("torch-cudagraph", "fp32", 8)].timing
    for precision in ("fp16", "bf16"):
        for backend in ("torch-autocast", "torch-half", "torch-cudagraph"):
            assert got[(backend, precision, 8)].accuracy.cosine > 0.99, (backend, precision)
    assert any("channels_last" in n for n in got[("torch-half", "fp16", 1)].notes)


def test_compiled_backends_measure(tmp_path: Path) -> None:
    results, _ = run_benchmarks(conv_model(), backends=["torch-compile", "torch-compile-cudagraph"],
                                precisions=["fp32", "fp16"], batch_sizes=[1, 8], config=cfg(tmp_path))
    got = by_key(results)
    assert len(results) == 8
    for r in results:
        assert r.status == "ok", (r.backend, r.precision, r.batch_size, r.reason)
        assert r.build_s > 0 and r.latency_ms.p50 > 0  # build_s includes the compile
    assert got[("torch-compile", "fp32", 8)].accuracy.cosine > 0.99999
    assert got[("torch-compile-cudagraph", "fp16", 8)].accuracy.cosine > 0.99
    assert any("torch.compile mode=default" in n for n in got[("torch-compile", "fp16", 1)].notes)


def test_ort_cuda_fp32_and_fp16_with_io_binding(tmp_path: Path) -> None:
    results, _ = run_benchmarks(conv_model(), backends=["ort-cuda"], batch_sizes=[1, 8], config=cfg(tmp_path))
    got = by_key(results)
    for r in results:
        assert r.status == "ok", (r.precision, r.batch_size, r.reason)
        assert "run_with_iobinding" in r.timing and r.latency_ms.p50 > 0
        assert r.accuracy.reference == "torch-eager fp32 (TF32 off)"
    assert got[("ort-cuda", "fp32", 8)].accuracy.max_abs_err < 1e-3  # the export, same weights, fp32
    assert got[("ort-cuda", "fp16", 8)].accuracy.cosine > 0.99
    # the bound outputs reach torch through DLPack (this build has it) and are compared on the GPU
    assert {r.extra.accuracy_compared_on for r in results} == {"gpu"}
    assert any("fp16 copy" in n for n in got[("ort-cuda", "fp16", 8)].notes)
    if got[("ort-cuda", "fp32", 8)].gpu_memory_peak_bytes is not None:
        assert "NVML" in got[("ort-cuda", "fp32", 8)].extra.gpu_memory_basis


def test_token_ids_on_gpu_backends(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = from_module(Encoder().eval(), lambda b: [TensorSpec("input_ids", (b, 32), "int64")], name="enc")
    results, _ = run_benchmarks(model, backends=["torch-eager", "torch-half", "ort-cuda"], precisions=["fp32", "fp16"],
                                batch_sizes=[4], config=cfg(tmp_path))
    assert {r.status for r in results} == {"ok"}, [(r.backend, r.reason) for r in results]
    assert model.host_inputs(4)[0][0].max() < 1000


@pytest.mark.skipif(importlib.util.find_spec("tensorrt") is not None, reason="TensorRT is installed here")
def test_tensorrt_is_reported_not_installed_never_measured(tmp_path: Path) -> None:
    results, _ = run_benchmarks(conv_model(), backends=["tensorrt", "ort-tensorrt"], config=cfg(tmp_path))
    assert {r.status for r in results} == {"unavailable"}
    assert all(r.latency_ms is None and r.throughput_ips is None for r in results)
    assert (by_key(results)[("tensorrt", "fp16", 0)].reason
            == "TensorRT not installed — pip install 'modelcost[tensorrt]'")


class Greedy(torch.nn.Module):
    """Asks for 1 TiB per sample from batch 4 on: a real CUDA out-of-memory."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] >= 4:
            return self.lin(x) + x.new_empty((x.shape[0], 1 << 38)).sum()
        return self.lin(x)


def test_oom_ends_the_sweep_frees_memory_and_others_carry_on(tmp_path: Path) -> None:
    model = from_module(Greedy().eval(), lambda b: [TensorSpec("x", (b, 8), "float32")], name="greedy")
    results, _ = run_benchmarks(model, backends=["torch-eager", "torch-autocast"], precisions=["fp32", "fp16"],
                                batch_sizes=[1, 4, 16], config=cfg(tmp_path))
    got = by_key(results)
    # the reference itself cannot run at batch 4+: accuracy is left out there, with a note
    assert got[("torch-eager", "fp32", 1)].status == "ok"
    assert got[("torch-eager", "fp32", 4)].status == "oom" and ("torch-eager", "fp32", 16) not in got
    assert got[("torch-autocast", "fp16", 1)].status == "ok"  # the next backend carried on
    assert got[("torch-autocast", "fp16", 4)].status == "oom"
    assert torch.cuda.memory_allocated() < (1 << 30)


def test_cli_bench_on_gpu_writes_samples_csv(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from modelcost.cli import app

    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path / "cache"))
    samples = tmp_path / "samples.csv"
    res = CliRunner().invoke(app, ["bench", "zoo:resnet18", "--backends", "torch-eager,ort-cuda",
                                   "--precisions", "fp32", "--batch-sizes", "1,4", "--device", "cuda",
                                   "--min-time-s", "0.2", "--max-time-s", "2",
                                   "--samples-csv", str(samples), "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(samples.open()))
    fields = {"timestamp", "utilization.gpu", "clocks.sm", "power.draw", "clocks_throttle_reasons.active"}
    assert rows and fields <= set(rows[0])
    assert {(r["backend"], r["batch_size"]) for r in rows} == {("torch-eager", "1"), ("torch-eager", "4"),
                                                                ("ort-cuda", "1"), ("ort-cuda", "4")}


def test_accuracy_on_the_gpu_matches_the_host_sums() -> None:
    # bench.accuracy compares a CUDA session's outputs on the GPU: the same figures as the numpy path on the host,
    # for an fp16 output of BERT-base's size at batch 64 (64 x 128 x 768 = 6.3 M elements, several device chunks).
    import math

    import modelcost.bench.accuracy as accuracy

    torch.manual_seed(0)
    ref = torch.randn(64, 128, 768)
    out = (ref + 1e-3 * torch.randn_like(ref)).half()
    on_gpu = accuracy.compare([out.cuda()], [ref.numpy()], batch_size=64, reference_name="r")
    on_host = accuracy.compare([out.float().numpy()], [ref.numpy()], batch_size=64, reference_name="r")
    assert on_gpu.max_abs_err == on_host.max_abs_err and on_gpu.max_rel_err == on_host.max_rel_err
    assert math.isclose(on_gpu.cosine, on_host.cosine, rel_tol=1e-12)
