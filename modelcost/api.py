"""The library facade: what the CLI calls and what users import. Re-exports only: every function lives in the
room of its command (``modelcost.runs``), so a behaviour has one home and this file has no logic
(tests/runs/test_runs.py).

    >>> from modelcost import api
    >>> report = api.analyze_static("zoo:resnet50", batch_size=1)
    >>> report.compute.macs
    4089184256

A whole run (what ``modelcost analyze`` / ``bench`` do) is ``api.run(source, api.RunOptions(...), on_stage=...)``:
see ``modelcost.runs.inference``. Sources may be paths / names, an ``nn.Module`` or an ``onnx.ModelProto``.
"""

from __future__ import annotations

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.types import (
    BenchResult,
    CostReport,
    DeviceInfo,
    GpuSpec,
    LayerProfile,
    LayerRoofline,
    RooflinePoint,
    RunReport,
    WhatIf,
)
from modelcost.runs.calibrate import calibrate
from modelcost.runs.compare import compare, quantize, quantize_report_dirs
from modelcost.runs.gpu import (
    PROFILED,
    attach_layer_profiles,
    gpu_spec,
    layer_roofline,
    measure_ceilings,
    profile_layers,
    roofline,
    what_if,
)
from modelcost.runs.gpu import attach_gpu as attach_roofline
from modelcost.runs.inference import benchmark, run, run_benchmarks
from modelcost.runs.llm import llm
from modelcost.runs.model import LoadedModel, RunOptions, analyze_static, bench_model, load, load_options
from modelcost.runs.recommend import recommend
from modelcost.runs.report import write_report
from modelcost.runs.train import train, train_static

__all__ = [
    "PROFILED",
    "BenchConfig",
    "BenchModel",
    "BenchResult",
    "CostReport",
    "DeviceInfo",
    "GpuSpec",
    "LayerProfile",
    "LayerRoofline",
    "RooflinePoint",
    "RunReport",
    "WhatIf",
    "LoadedModel",
    "RunOptions",
    "analyze_static",
    "attach_layer_profiles",
    "attach_roofline",
    "calibrate",
    "bench_model",
    "benchmark",
    "compare",
    "gpu_spec",
    "layer_roofline",
    "llm",
    "load",
    "load_options",
    "measure_ceilings",
    "profile_layers",
    "quantize",
    "quantize_report_dirs",
    "recommend",
    "roofline",
    "run",
    "run_benchmarks",
    "train",
    "train_static",
    "what_if",
    "write_report",
]
