"""torch.compile's graphs compiled in a background process (bench.compile_ahead): the child process and its
protocol on the CPU (dynamo's eager backend: no C++ compiler needed), when it is started, and how a sweep orders
its configs and notes its timed loops around it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from modelcost.bench import compile_ahead
from modelcost.bench.plan import compile_ahead_order
from modelcost.loaders.base import LoadOptions

FIXTURES = Path(__file__).parents[1] / "fixtures"
SOURCE = f"{FIXTURES}/tiny_cnn.py:make_model"


def _payload(tmp_path: Path, batches: list[int]) -> dict:
    return {"source": SOURCE, "load_options": dataclasses.asdict(LoadOptions()), "seed": 0,
            "precisions": ["fp32"], "compile_mode": "default", "cache_dir": str(tmp_path),
            "batches": batches, "compile_graphs": "shared", "marker": str(tmp_path / "compile-ahead" / "m.done"),
            "device": "cpu", "dynamo_backend": "eager"}


def test_the_child_compiles_the_batches_it_is_given_and_leaves_a_marker(tmp_path: Path) -> None:
    ahead = compile_ahead.CompileAhead(_payload(tmp_path, [1]))
    assert ahead.wait_for("fp32", 1, wait_s=120)  # known at the start
    ahead.add_batches([8], last=True)  # the throughput batch, once the search has found it
    assert ahead.wait_for("fp32", 8, wait_s=120)
    assert not ahead.wait_for("fp16", 8, wait_s=120)  # never asked for: it says so once the child has ended
    ahead.stop(wait_s=30)
    assert not ahead.running() and (tmp_path / "compile-ahead" / "m.done").exists()


def test_no_marker_for_a_dynamic_graph_that_was_never_compiled(tmp_path: Path) -> None:
    """The parent stopped before the batch search gave the child its second batch: batch 1 is cached, the
    dynamic-batch graph the marker would name is not, so no marker (a later run starts a child again)."""
    ahead = compile_ahead.CompileAhead(dict(_payload(tmp_path, [1]), more_batches=True))
    assert ahead.wait_for("fp32", 1, wait_s=120)
    ahead.stop(wait_s=30)
    assert not ahead.running() and not (tmp_path / "compile-ahead" / "m.done").exists()


def test_per_batch_the_child_compiles_a_static_graph_per_batch_and_marks_them(tmp_path: Path) -> None:
    """--compile-graphs per-batch: the child compiles through the same runner with the same setting (so the cache
    keys are the parent's), and marks the set only once the promised batch has come."""
    payload = dict(_payload(tmp_path, [1]), compile_graphs="per-batch", more_batches=True)
    ahead = compile_ahead.CompileAhead(payload)
    assert ahead.wait_for("fp32", 1, wait_s=120)
    ahead.stop(wait_s=30)  # the throughput batch never came: no marker
    assert not (tmp_path / "compile-ahead" / "m.done").exists()
    ahead = compile_ahead.CompileAhead(payload)
    ahead.add_batches([8], last=True)
    assert ahead.wait_for("fp32", 8, wait_s=120)
    ahead.stop(wait_s=30)
    assert (tmp_path / "compile-ahead" / "m.done").exists()


def test_a_child_that_cannot_load_the_model_ends_and_the_parent_stops_waiting(tmp_path: Path) -> None:
    payload = dict(_payload(tmp_path, [1]), source=f"{FIXTURES}/bad_factories.py:raises")
    ahead = compile_ahead.CompileAhead(payload)
    assert not ahead.wait_for("fp32", 1, wait_s=120)
    ahead.stop(wait_s=5)
    assert not (tmp_path / "compile-ahead" / "m.done").exists()


def test_it_starts_only_for_a_reloadable_pytorch_model_whose_graphs_are_not_cached(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.model import from_loaded_torch
    from modelcost.loaders.torch_loader import load_torch

    model = from_loaded_torch(load_torch(SOURCE, LoadOptions()), name="tiny", source=SOURCE)
    config = BenchConfig(cache_dir=tmp_path, compile_graphs="shared")
    monkeypatch.setattr(compile_ahead, "_small_beside", lambda model: True)  # as on a GPU with room for it
    compiles = [("torch-compile-cudagraph", "fp16"), ("torch-eager", "fp32")]
    args = (LoadOptions(), compiles)
    assert compile_ahead.start(model, SOURCE, *args, "cpu", config, [1], True) is None  # CPU sweeps never compile
    assert compile_ahead.start(model, None, *args, "cuda", config, [1], True) is None  # an object: not reloadable
    assert compile_ahead.start(model, SOURCE, LoadOptions(), [("torch-eager", "fp32")], "cuda", config, [1],
                               True) is None  # nothing to compile
    marker = compile_ahead.marker_path(tmp_path, model.content_hash(), ["fp16"], "default", 1, True)
    marker.parent.mkdir(parents=True)
    marker.write_text("{}")
    assert compile_ahead.start(model, SOURCE, *args, "cuda", config, [1], True) is None  # warm: nothing to do
    # a different batch shape is another set of graphs (batch 64 first, static)
    assert marker != compile_ahead.marker_path(tmp_path, model.content_hash(), ["fp16"], "default", 64, False)
    # static graphs per batch are another set again, named by their batches (b1, then one found by the search)
    per_batch = compile_ahead.marker_path(tmp_path, model.content_hash(), ["fp16"], "default", 1, True, [1])
    assert per_batch.name.split("-default-")[1].startswith("static-b1+more-torch")
    assert BenchConfig().compile_graphs == "per-batch"  # the default
    child = compile_ahead.start(model, SOURCE, *args, "cuda", BenchConfig(cache_dir=tmp_path), [1], True)
    assert child is not None  # not cached: a child starts (and is ended at once: this machine has no GPU for it)
    child.stop()



def test_only_a_model_small_beside_the_gpu_memory_gets_a_child(monkeypatch) -> None:
    """tiny_cnn has 314 parameters: 628 bytes at 16 bits. Under 5% of a 1 MB GPU, not of a 10 KB one."""
    import torch

    from modelcost.bench.model import from_loaded_torch
    from modelcost.loaders.torch_loader import load_torch

    model = from_loaded_torch(load_torch(SOURCE, LoadOptions()), name="tiny", source=SOURCE)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (0, 1 << 20))
    assert compile_ahead._small_beside(model)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (0, 10_000))
    assert not compile_ahead._small_beside(model)


def test_the_sweep_runs_plain_torch_first_then_compile_then_onnx() -> None:
    order = [("torch-compile-cudagraph", "fp16"), ("torch-cudagraph", "fp16"), ("ort-cuda", "fp16"),
             ("torch-compile", "bf16"), ("ort-cuda", "fp32"), ("torch-autocast", "fp16"), ("torch-eager", "fp32")]
    assert compile_ahead_order(order) == [
        ("torch-cudagraph", "fp16"), ("torch-autocast", "fp16"), ("torch-eager", "fp32"),
        ("torch-compile-cudagraph", "fp16"), ("torch-compile", "bf16"), ("ort-cuda", "fp16"), ("ort-cuda", "fp32")]


def test_a_sweep_notes_timed_loops_beside_the_child_and_ends_it_before_an_onnx_config(tmp_path: Path) -> None:
    """A CPU sweep with a stand-in child: torch-cpu's timed loop says the child was running; the child is ended
    (waited for, bounded) before ort-cpu, whose memory figure would be device-wide on a GPU."""
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.model import from_loaded_torch
    from modelcost.bench.runner import run_benchmarks
    from modelcost.loaders.torch_loader import load_torch

    class Child:
        def __init__(self) -> None:
            self.stops: list[float] = []

        def running(self) -> bool:
            return not self.stops

        def wait_for(self, precision: str, batch: int, wait_s: float = 0.0) -> bool:
            return True

        def stop(self, wait_s: float = 0.0) -> None:
            self.stops.append(wait_s)

    child = Child()
    model = from_loaded_torch(load_torch(SOURCE, LoadOptions()), name="tiny", source=SOURCE)
    model.compile_ahead = child
    config = BenchConfig(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.02, min_iters=5, max_time_s=0.3,
                         e2e_min_iters=2, e2e_min_time_s=0.0, cache_dir=tmp_path)
    results, _ = run_benchmarks(model, backends=["ort-cpu", "torch-cpu"], batch_sizes=[1], config=config)
    notes = {r.backend: r.notes for r in results}
    assert [r.backend for r in results] == ["ort-cpu", "torch-cpu"]  # reported in plan order
    assert compile_ahead.NOTE in notes["torch-cpu"] and compile_ahead.NOTE not in notes["ort-cpu"]
    assert child.stops == [30.0] and model.compile_ahead is None


def test_the_pipeline_gives_the_child_batch_1_first_and_the_searched_batch_after(tmp_path: Path, monkeypatch) -> None:
    """sweep_plan with a batch search: the child is started with [1] and told more will come, then given the
    batch the search chose (and 'end'); the bench model carries the handle to the sweep. A stand-in child, and a
    stand-in search (batch 8), on the CPU."""
    from modelcost.runs import inference as pipeline
    from modelcost.bench import batch_search
    from modelcost.bench.base import BenchConfig
    from modelcost.core.types import RunReport

    calls: list[tuple] = []

    class Child:
        def add_batches(self, batches, last=True):  # noqa: ANN001, ANN201
            calls.append(("add", list(batches), last))

    def fake_start(model, source, load_options, order, device, config, batches, more_batches):  # noqa: ANN001, ANN202
        calls.append(("start", source, list(batches), more_batches))
        return Child()

    monkeypatch.setattr(compile_ahead, "start", fake_start)
    monkeypatch.setattr(batch_search, "find_throughput_batch",
                        lambda *a, **k: batch_search.BatchSearch(batch=8, reason="stand-in", probe="x"))
    options = pipeline.RunOptions(backends=("torch-cpu",), batch_search="on",
                                  bench=BenchConfig(device="cpu", cache_dir=tmp_path))
    model = pipeline.load(SOURCE, options)
    try:
        batches, _, plan = pipeline.sweep_plan(model, options, RunReport())
        assert batches == [1, 8]
        assert calls == [("start", SOURCE, [1], True), ("add", [8], True)]
        assert isinstance(model.bench_model().compile_ahead, Child)
    finally:
        model.bench_model().compile_ahead = None
        model.close()


def test_no_background_starts_no_helper(tmp_path: Path, monkeypatch) -> None:
    """--no-background (BenchConfig.background False): neither helper is started, whatever the plan."""
    from modelcost.runs import inference as pipeline
    from modelcost.bench import export_ahead
    from modelcost.bench.base import BenchConfig

    started: list[object] = []
    monkeypatch.setattr(compile_ahead, "start", lambda model, source, *a, **k: started.append(source))
    monkeypatch.setattr(export_ahead, "start", lambda *a, **k: started.append("export"))
    options = pipeline.RunOptions(backends=("torch-cpu",), batch_sizes=(1,),
                                  bench=BenchConfig(device="cpu", cache_dir=tmp_path, background=False,
                                                    min_time_s=0.01, min_iters=3, max_time_s=0.2, warmup=2,
                                                    warmup_max_s=0.05, e2e_min_iters=2, e2e_min_time_s=0.0))
    run = pipeline.run(SOURCE, options)
    assert started == [None]  # the compile helper was asked with no source to reload: it starts nothing
    assert [r.status for r in run.benchmarks] == ["ok"]


def test_the_child_ends_with_the_run_that_started_it(tmp_path: Path) -> None:
    """A run killed (SIGKILL: no clean-up of its own) while its child is busy loading a slow model: the child goes
    too (Linux's parent-death signal), instead of working on for nobody."""
    import json
    import os
    import subprocess
    import sys
    import time

    if not sys.platform.startswith("linux"):
        import pytest

        pytest.skip("parent-death signal: Linux only")
    payload = dict(_payload(tmp_path, [1]), source=f"{FIXTURES}/slow_factory.py:make_model")
    script = ("import json, sys, time\n"
              "from modelcost.bench import compile_ahead\n"
              "payload = json.loads(sys.argv[1])\n"
              "import os; payload['parent_pid'] = os.getpid()\n"
              "ahead = compile_ahead.CompileAhead(payload)\n"
              "print(ahead._process.pid, flush=True)\n"
              "time.sleep(60)\n")
    entered = tmp_path / "entered"
    run = subprocess.Popen([sys.executable, "-c", script, json.dumps(payload)], stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, SLOW_FACTORY_ENTERED=str(entered)))
    child = int(run.stdout.readline())
    deadline = time.monotonic() + 120  # until the child is inside the 30 s factory, however loaded the machine
    while not entered.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entered.exists(), "the child never reached the factory"
    run.kill()
    run.wait()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(f"/proc/{child}") or "Z" in open(f"/proc/{child}/stat").read().split(")")[1][:3]
