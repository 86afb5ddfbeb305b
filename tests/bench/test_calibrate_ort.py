"""ONNX Runtime against torch per layer kind (bench/calibrate_ort.py): every step calibrate takes on the GPU
(export once per net, the ort-cuda backend's fp16 copy, an I/O-bound session, torch's timing), run here on the
CPU at small sizes. The factors it finds here are the CPU's and mean nothing; the test is that each kind gets
one, for both precisions, and that a failing net loses only its own kinds."""

from __future__ import annotations

import pytest
import torch

from modelcost.bench import calibrate_ort
from modelcost.bench.calibrate_ort import Device, learn_ort_factor
from modelcost.core.calibration import ORT_CONV_KINDS

CPU = Device("cpu", ("CPUExecutionProvider",))
SMALL = {"gemm": (1, 8, 1024), "conv": (1, 128, 8, 8), "conv-dilated": (1, 128, 8, 8), "residual-ln": (1, 8, 1024),
         "attention": (1, 8, 768)}


def test_every_kind_gets_a_factor_and_a_failing_net_loses_only_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    real = calibrate_ort._net

    def conv_fails(torch_, name, device, shapes):
        if name == "conv":
            raise RuntimeError("Invalid rank for input")
        return real(torch_, name, device, shapes)

    monkeypatch.setattr(calibrate_ort, "_net", conv_fails)
    factor, notes = learn_ort_factor(torch, lambda _what: None, CPU, SMALL)
    kinds = {k for net, ks in calibrate_ort.KIND_OF_NET.items() for k in ks if net != "conv"}
    assert set(ORT_CONV_KINDS) - {"conv"} <= kinds  # a net for every conv kind the predictor asks a factor of
    assert set(factor) == {"fp32", "fp16"} and all(set(f) == kinds and min(f.values()) > 0 for f in factor.values())
    assert len(notes) == 1 and notes[0].startswith("ort-cuda time factor of conv: not calibrated")


def test_use_tf32_off_for_fp32_alone():
    """fp32 means full fp32 (TF32 off); fp16 keeps ONNX Runtime's default (on): with it off, ORT's cuDNN convs left
    out tensor-core kernels in fp16 too (Darknet-53 b64 on an H100: 25.9 ms off, 10.4 on; BENCHMARKS.md)."""
    from modelcost.bench.backends.ort import use_tf32

    assert [use_tf32(p) for p in ("fp32", "tf32", "fp16")] == ["0", "1", "1"]


def test_the_ort_a_b_script_sums_onnx_runtime_s_node_events_by_op_type(tmp_path) -> None:
    """benchmarks/ort_provider_ab.py names the op type a slow ONNX Runtime forward spends its time in, from the
    profile's node events ("cat": "Node", names ending "_kernel_time", microseconds): here 2 ScatterND nodes of
    10,000 + 9,000 us = 19.0 ms, before 3 Conv nodes of 500 us = 1.5 ms; other events (a session's, a node's
    fence) count nothing."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("ort_provider_ab", root / "benchmarks" / "ort_provider_ab.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    events = [{"cat": "Node", "name": f"conv{i}_kernel_time", "dur": 500, "args": {"op_name": "Conv"}}
              for i in range(3)]
    events += [{"cat": "Node", "name": "s0_kernel_time", "dur": 10_000, "args": {"op_name": "ScatterND"}},
               {"cat": "Node", "name": "s1_kernel_time", "dur": 9_000, "args": {"op_name": "ScatterND"}},
               {"cat": "Node", "name": "s1_fence_before", "dur": 7_000, "args": {"op_name": "ScatterND"}},
               {"cat": "Session", "name": "model_run", "dur": 50_000}]
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(events))
    assert script.op_profile(str(profile)) == [("ScatterND", 2, 19.0), ("Conv", 3, 1.5)]
