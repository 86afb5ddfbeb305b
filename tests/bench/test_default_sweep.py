"""The default sweep (issue 9): one config per way of deploying unless more is asked for; what it leaves out is
named in the run notes, never silently missing. Tested on the plan (no GPU needed: asking for cuda on this
machine plans the CUDA rows and lists them as unavailable)."""

from __future__ import annotations

from pathlib import Path

import torch

from modelcost.bench import registry
from modelcost.bench.base import BenchConfig
from modelcost.bench.model import from_module
from modelcost.bench.plan import make_plan
from modelcost.core.types import TensorSpec


def _model():  # noqa: ANN202
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
    return from_module(net, [TensorSpec("x", (1, 3, 8, 8), "float32")], name="tiny")


def _pairs(plan) -> set[tuple[str, str]]:  # noqa: ANN001
    return set(plan.runnable) | {(r.backend, r.precision) for r in plan.skipped}


def test_default_gpu_sweep_is_one_config_per_route(tmp_path: Path) -> None:
    plan = make_plan(_model(), None, None, BenchConfig(device="cuda", cache_dir=tmp_path))
    # The registry's default= column for a PyTorch model on CUDA: eager fp32 (baseline and accuracy reference),
    # autocast fp16, CUDA graphs of the fp16 model, compile + CUDA graphs fp16, ORT CUDA fp32 + fp16, ORT's TensorRT
    # provider fp16, TensorRT fp16 -> 8 configs (here all unavailable: no CUDA, but planned and said so).
    assert _pairs(plan) == {("torch-eager", "fp32"), ("torch-autocast", "fp16"), ("torch-cudagraph", "fp16"),
                            ("torch-compile-cudagraph", "fp16"), ("ort-cuda", "fp32"), ("ort-cuda", "fp16"),
                            ("ort-tensorrt", "fp16"), ("tensorrt", "fp16")}
    # every CUDA (backend, precision) the registry has, minus those 8, is named in the note
    every = {(n, p) for n, e in registry.BACKENDS.items() if e.device == "cuda" for p in e.precisions}
    assert {tuple(x.split(" ")) for x in plan.left_out} == every - _pairs(plan)
    note = plan.left_out_note()
    assert note is not None and "torch-compile bf16" in note and "--exhaustive" in note


def test_exhaustive_or_named_precisions_plan_everything_asked(tmp_path: Path) -> None:
    config = BenchConfig(device="cuda", cache_dir=tmp_path)
    every = {(n, p) for n, e in registry.BACKENDS.items() if e.device == "cuda" for p in e.precisions}
    full = make_plan(_model(), None, None, config, exhaustive=True)
    assert _pairs(full) == every and full.left_out == [] and full.left_out_note() is None
    # naming precisions (or backends) is asking: no default filter
    bf16 = make_plan(_model(), None, ["bf16"], config)
    assert _pairs(bf16) == {(n, "bf16") for n, e in registry.BACKENDS.items() if e.device == "cuda"
                            and "bf16" in e.precisions}
    named = make_plan(_model(), ["torch-compile"], None, config)
    assert _pairs(named) == {("torch-compile", p) for p in ("fp32", "fp16", "bf16")}


def test_cpu_default_sweep_is_every_cpu_backend(tmp_path: Path) -> None:
    plan = make_plan(_model(), None, None, BenchConfig(device="cpu", cache_dir=tmp_path))
    assert set(plan.runnable) == {("torch-cpu", "fp32"), ("ort-cpu", "fp32")} and plan.left_out == []


def test_cli_exhaustive_reaches_the_run_options(monkeypatch) -> None:  # noqa: ANN001
    """--exhaustive on analyze, bench and recommend becomes RunOptions.exhaustive (the CLI decides nothing else)."""
    from typer.testing import CliRunner

    from modelcost import api
    from modelcost.cli.app import app

    seen = []

    def fake_run(model, options, progress=None, run=None):  # noqa: ANN001, ANN202
        seen.append(options.exhaustive)
        raise SystemExit(0)

    def fake_recommend(model, **kw):  # noqa: ANN001, ANN003, ANN202
        seen.append(kw["options"].exhaustive)
        raise SystemExit(0)

    monkeypatch.setattr(api, "run", fake_run)
    monkeypatch.setattr(api, "recommend", fake_recommend)
    for command in ("analyze", "bench", "recommend"):
        CliRunner().invoke(app, [command, "sample_models/resnet_tiny.onnx", "--exhaustive"])
        CliRunner().invoke(app, [command, "sample_models/resnet_tiny.onnx"])
    assert seen == [True, False] * 3, seen
