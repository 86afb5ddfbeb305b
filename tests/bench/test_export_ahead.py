"""The ONNX export made in a background process while other configs are measured (bench.export_ahead)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from modelcost.bench import export as export_module
from modelcost.bench import export_ahead
from modelcost.bench.backends.ort import fp16_copy_path
from modelcost.bench.model import from_module
from modelcost.core.types import TensorSpec

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _model():  # noqa: ANN202
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).eval()
    return from_module(net, lambda b: [TensorSpec("x", (b, 6), "float32")], name="mlp")


def _refuse_in_this_process(monkeypatch) -> None:  # noqa: ANN001
    """From now on an export in this (the parent) process fails: the file must come from the child."""
    def refuse(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("exported in the parent process")

    monkeypatch.setattr(export_module, "export_to_onnx", refuse)


def test_the_background_export_is_the_file_the_sweep_uses(tmp_path: Path, monkeypatch) -> None:
    model = _model()
    model.export_ahead = export_ahead.ExportAhead(model, tmp_path, fp16=True)  # forked before the refusal
    _refuse_in_this_process(monkeypatch)
    path = model.onnx_file(tmp_path)
    assert path == export_module.export_path(model, tmp_path) and path.exists()
    assert model.export_note.endswith("(in a background process while other configs were measured)")
    assert fp16_copy_path(tmp_path, model.content_hash()[:16]).exists()  # the fp16 copy was made there too
    assert model.export_ahead is None
    # the child's file computes what the module computes (the same weights: the child is a fork)
    import onnxruntime as ort

    x = np.ones((2, 6), np.float32)
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    with torch.no_grad():
        want = model.cpu_module()(torch.from_numpy(x)).numpy()
    assert np.allclose(got, want, atol=1e-5)


def test_a_failed_background_export_is_made_in_place(tmp_path: Path, monkeypatch) -> None:
    parent = os.getpid()
    real = export_module.export_to_onnx

    def only_in_the_parent(model, cache_dir):  # noqa: ANN001, ANN202
        if os.getpid() != parent:
            raise RuntimeError("the child cannot export")
        return real(model, cache_dir)

    monkeypatch.setattr(export_module, "export_to_onnx", only_in_the_parent)
    model = _model()
    model.export_ahead = export_ahead.ExportAhead(model, tmp_path, fp16=False)
    path = model.onnx_file(tmp_path)
    assert path.exists() and model.export_note.startswith("exported to ONNX")
    assert "in a background process" not in model.export_note


def test_it_starts_only_where_a_compile_runs_before_an_onnx_config(tmp_path: Path) -> None:
    model = _model()
    compile_first = [("torch-compile-cudagraph", "fp16"), ("ort-cuda", "fp32")]
    assert export_ahead.start(model, compile_first, "cpu", tmp_path) is None  # CPU sweeps never compile
    assert export_ahead.start(model, compile_first[::-1], "cuda", tmp_path) is None  # ONNX first: nothing to hide
    assert export_ahead.start(model, [("torch-compile", "fp16")], "cuda", tmp_path) is None  # no ONNX config
    ahead = export_ahead.start(model, compile_first, "cuda", tmp_path)
    assert ahead is not None
    assert ahead.result() is not None
    # a warm cache: the export is there, so no process is started
    assert export_ahead.start(model, compile_first, "cuda", tmp_path) is None


def test_stopping_ends_a_child_still_at_work(tmp_path: Path, monkeypatch) -> None:
    import time

    parent = os.getpid()

    def slow(model, cache_dir):  # noqa: ANN001, ANN202
        if os.getpid() != parent:
            time.sleep(60)
        raise AssertionError("not reached")

    monkeypatch.setattr(export_module, "export_to_onnx", slow)
    model = _model()
    ahead = export_ahead.ExportAhead(model, tmp_path, fp16=False)
    assert ahead.running()
    t0 = time.perf_counter()
    ahead.stop()
    assert not ahead.running() and time.perf_counter() - t0 < 5
    assert ahead.result(wait_s=0.1) is None


def test_a_sweep_notes_the_timed_loops_the_background_export_ran_beside(tmp_path: Path, monkeypatch) -> None:
    """A CPU sweep with a stand-in for the background export: the configs timed while it 'runs' say so, the ONNX
    config that asks for the file gets none from it (result None) and exports in place, and the sweep stops it."""
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.runner import run_benchmarks

    class Running:
        stopped = False

        def running(self) -> bool:
            return not self.stopped

        def result(self, wait_s: float = 0.0) -> None:
            self.stopped = True

        def stop(self) -> None:
            self.stopped = True

    fake = Running()
    monkeypatch.setattr(export_ahead, "start", lambda *a: fake)
    config = BenchConfig(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.02, min_iters=5, max_time_s=0.3,
                         e2e_min_iters=2, e2e_min_time_s=0.0, cache_dir=tmp_path)
    model = _model()
    results, _ = run_benchmarks(model, backends=["torch-cpu", "ort-cpu"], batch_sizes=[1], config=config)
    notes = {r.backend: r.notes for r in results}
    assert export_ahead.NOTE in notes["torch-cpu"] and export_ahead.NOTE not in notes["ort-cpu"]
    assert [r.status for r in results] == ["ok", "ok"] and fake.stopped and model.export_ahead is None


def test_a_child_that_uses_no_cpu_is_given_up_on(tmp_path: Path, monkeypatch) -> None:
    """Stuck (here: asleep, as a child blocked on a lock some thread held at the fork would be): after STALL_S
    without CPU time the parent stops waiting and exports itself, long before WAIT_S."""
    import time

    parent = os.getpid()
    real = export_module.export_to_onnx
    gave_up: list[float] = []

    def stuck_in_the_child(model, cache_dir):  # noqa: ANN001, ANN202
        if os.getpid() != parent:
            time.sleep(60)
        gave_up.append(time.perf_counter())  # the parent exports itself
        return real(model, cache_dir)

    monkeypatch.setattr(export_module, "export_to_onnx", stuck_in_the_child)
    monkeypatch.setattr(export_ahead, "STALL_S", 1.5)
    model = _model()
    model.export_ahead = export_ahead.ExportAhead(model, tmp_path, fp16=False)
    t0 = time.perf_counter()
    path = model.onnx_file(tmp_path)
    # given up on after STALL_S (+ up to 1 s per poll), long before the child's 60 s sleep or WAIT_S; the time of
    # the export made in place (seconds on a loaded machine) is not part of it
    assert path.exists() and len(gave_up) == 1 and gave_up[0] - t0 < 10
    assert "in a background process" not in model.export_note
