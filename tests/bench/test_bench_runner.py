"""The whole benchmark path on the CPU: tiny models through torch-cpu and ort-cpu, unavailable backends with
their reasons, out-of-memory and failures that end one sweep while the others carry on, partial results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from modelcost.bench import registry
from modelcost.bench.base import BackendInfo, BenchConfig, OutOfMemory
from modelcost.bench.model import from_module, from_onnx_path
from modelcost.bench.runner import run_benchmarks
from modelcost.core.types import TensorSpec

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def fast_config(tmp_path: Path, **kw) -> BenchConfig:  # noqa: ANN003
    base = dict(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.02, min_iters=5, max_time_s=0.3,
                e2e_min_iters=2, e2e_max_s=0.02, cache_dir=tmp_path / "cache")
    base.update(kw)
    return BenchConfig(**base)


class TinyNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.conv(x).mean((2, 3)))


def tiny_model():  # noqa: ANN201
    torch.manual_seed(0)
    return from_module(TinyNet().eval(), lambda b: [TensorSpec("x", (b, 3, 16, 16), "float32")], name="tiny")


def by_key(results):  # noqa: ANN001, ANN201
    return {(r.backend, r.precision, r.batch_size): r for r in results}


def test_cpu_sweep_measures_every_config(tmp_path: Path) -> None:
    results, device = run_benchmarks(tiny_model(), backends=["torch-cpu", "ort-cpu"], batch_sizes=[1, 3],
                                     config=fast_config(tmp_path))
    got = by_key(results)
    assert set(got) == {("torch-cpu", "fp32", 1), ("torch-cpu", "fp32", 3),
                        ("ort-cpu", "fp32", 1), ("ort-cpu", "fp32", 3)}
    for r in results:
        assert r.status == "ok", r.reason
        lat = r.latency_ms
        assert lat.count >= 5 and 0 < lat.min <= lat.p50 <= lat.p90 <= lat.p95 <= lat.p99 <= lat.max
        assert r.throughput_ips == pytest.approx(r.batch_size / lat.p50 * 1e3)  # IPS = batch / median
        assert r.e2e_latency_ms is not None and r.e2e_latency_ms.count >= 2
        assert r.first_inference_ms > 0 and r.build_s >= 0 and "perf_counter" in r.timing
        assert r.device == device.name and device.kind == "cpu"
        assert r.accuracy is not None and r.accuracy.top1_agreement == 1.0  # [batch, 10] class scores
    assert got[("torch-cpu", "fp32", 3)].accuracy.max_abs_err == 0.0  # the reference itself
    assert got[("ort-cpu", "fp32", 3)].accuracy.max_abs_err < 1e-4  # the ONNX export, same weights
    assert got[("ort-cpu", "fp32", 3)].accuracy.reference == "torch-cpu fp32"
    assert any("exported to ONNX" in n for n in got[("ort-cpu", "fp32", 1)].notes)


def test_export_is_cached_between_runs(tmp_path: Path) -> None:
    cfg = fast_config(tmp_path)
    run_benchmarks(tiny_model(), backends=["ort-cpu"], config=cfg)
    again, _ = run_benchmarks(tiny_model(), backends=["ort-cpu"], config=cfg)
    assert any("reused from the cache" in n for n in again[0].notes)
    assert len(list((tmp_path / "cache" / "onnx").iterdir())) == 1


def _onnx_file(tmp_path: Path, batch: int | str = "batch") -> Path:
    path = tmp_path / "m.onnx"
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if isinstance(batch, str) else None
    torch.onnx.export(TinyNet().eval(), (torch.randn(1 if axes is None else 2, 3, 16, 16),), str(path),
                      input_names=["x"], output_names=["y"], dynamic_axes=axes, opset_version=17, dynamo=False)
    return path


def test_onnx_model_runs_on_ort_and_says_why_not_on_torch(tmp_path: Path) -> None:
    model = from_onnx_path(_onnx_file(tmp_path), lambda b: [TensorSpec("x", (b, 3, 16, 16), "float32")], name="m")
    results, _ = run_benchmarks(model, backends=["torch-cpu", "ort-cpu"], batch_sizes=[2], config=fast_config(tmp_path))
    got = by_key(results)
    assert got[("torch-cpu", "fp32", 0)].status == "unavailable"
    assert got[("torch-cpu", "fp32", 0)].reason == "PyTorch backends need a PyTorch model"
    assert got[("ort-cpu", "fp32", 2)].status == "ok"
    assert got[("ort-cpu", "fp32", 2)].accuracy.reference == "ort-cpu fp32"


def test_a_fixed_batch_is_not_passed_off_as_another(tmp_path: Path) -> None:
    model = from_onnx_path(_onnx_file(tmp_path, batch=1), lambda b: [TensorSpec("x", (1, 3, 16, 16), "float32")],
                           name="m")
    got = by_key(run_benchmarks(model, backends=["ort-cpu"], batch_sizes=[1, 4], config=fast_config(tmp_path))[0])
    assert got[("ort-cpu", "fp32", 1)].status == "ok"
    batch4 = got[("ort-cpu", "fp32", 4)]
    assert batch4.status == "failed" and "fix the batch dimension at 1" in batch4.reason


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU answers")
def test_gpu_backends_are_unavailable_without_cuda(tmp_path: Path) -> None:
    results, _ = run_benchmarks(tiny_model(), batch_sizes=[1], config=fast_config(tmp_path, device="auto"))
    got = by_key(results)
    assert got[("torch-eager", "fp32", 0)].reason == "no CUDA device"
    assert got[("torch-compile-cudagraph", "bf16", 0)].status == "unavailable"
    assert got[("tensorrt", "fp8", 0)].reason == "TensorRT not installed — pip install 'modelcost[tensorrt]'"
    assert got[("torch-cpu", "fp32", 1)].status == "ok" and got[("ort-cpu", "fp32", 1)].status == "ok"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU answers")
def test_asking_for_cuda_without_one_lists_reasons_and_runs_nothing(tmp_path: Path) -> None:
    results, device = run_benchmarks(tiny_model(), batch_sizes=[1], config=fast_config(tmp_path, device="cuda"))
    assert device.name == "no CUDA device" and results and {r.status for r in results} == {"unavailable"}
    assert not any(r.backend.endswith("cpu") for r in results)  # --device cuda: the CPU backends are not chosen


def test_token_ids_reach_the_embedding_within_its_table(tmp_path: Path) -> None:
    class Enc(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(50, 16)
            self.out = torch.nn.Linear(16, 4)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.out(self.emb(ids).mean(1))

    model = from_module(Enc().eval(), lambda b: [TensorSpec("input_ids", (b, 12), "int64")], name="enc")
    results, _ = run_benchmarks(model, backends=["torch-cpu", "ort-cpu"], batch_sizes=[2], config=fast_config(tmp_path))
    assert [r.status for r in results] == ["ok", "ok"]
    ids = model.host_inputs(2)[0][0]
    assert ids.max() < 50 and len(np.unique(ids)) > 5  # not zeros: spread over the 50-row table


# -- fake backends: out-of-memory, failures, interrupts -------------------------------------------------------


class FakeSession:
    device, stream = "cpu", None
    timing = "fake"

    def __init__(self, batch: int, oom_at: int | None, interrupt_at: int | None) -> None:
        if oom_at is not None and batch >= oom_at:
            raise OutOfMemory("CUDA out of memory (fake)")
        if interrupt_at is not None and batch >= interrupt_at:
            raise KeyboardInterrupt
        self.batch = batch

    def run(self) -> None:
        pass

    def outputs(self):  # noqa: ANN201
        return [np.zeros((self.batch, 10), dtype=np.float32)]

    def run_e2e(self, host_inputs) -> None:  # noqa: ANN001
        pass

    def memory_peak_bytes(self):  # noqa: ANN201
        return None, ""

    def close(self) -> None:
        pass


class FakeRunner:
    build_s, notes = 0.0, []

    def __init__(self, oom_at: int | None, interrupt_at: int | None) -> None:
        self.oom_at, self.interrupt_at, self.closed = oom_at, interrupt_at, False

    def session(self, batch, host_inputs):  # noqa: ANN001, ANN201
        return FakeSession(batch, self.oom_at, self.interrupt_at)

    def close(self) -> None:
        self.closed = True


class FakeBackend:
    def __init__(self, name: str, oom_at: int | None = None, build_error: str | None = None,
                 interrupt_at: int | None = None) -> None:
        self.name, self.oom_at, self.build_error, self.interrupt_at = name, oom_at, build_error, interrupt_at

    def unavailable_reason(self):  # noqa: ANN201
        return None

    def precision_reason(self, precision):  # noqa: ANN001, ANN201
        return None

    def prepare(self, model, precision, config):  # noqa: ANN001, ANN201
        if self.build_error:
            raise RuntimeError(self.build_error)
        return FakeRunner(self.oom_at, self.interrupt_at)


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    made = {"fake-oom": FakeBackend("fake-oom", oom_at=4),
            "fake-broken": FakeBackend("fake-broken", build_error="no kernel for op X"),
            "fake-ok": FakeBackend("fake-ok"), "fake-int": FakeBackend("fake-int", interrupt_at=4)}
    for name in made:
        monkeypatch.setitem(registry.BACKENDS, name, BackendInfo(name, "cpu", ("fp32",), ("pytorch",), "fake", "x"))
    real = registry.get_backend
    monkeypatch.setattr(registry, "get_backend", lambda n: made[n] if n in made else real(n))
    return made


def test_oom_ends_that_sweep_and_the_others_carry_on(tmp_path: Path, fakes) -> None:  # noqa: ANN001
    results, _ = run_benchmarks(tiny_model(), backends=["fake-oom", "fake-broken", "fake-ok"], batch_sizes=[1, 4, 8],
                                config=fast_config(tmp_path))
    got = by_key(results)
    assert got[("fake-oom", "fp32", 1)].status == "ok"
    oom = got[("fake-oom", "fp32", 4)]
    assert oom.status == "oom" and "out of memory at batch 4" in oom.reason and oom.latency_ms is None
    assert ("fake-oom", "fp32", 8) not in got  # the sweep of that backend ended at the OOM
    broken = got[("fake-broken", "fp32", 0)]
    assert broken.status == "failed" and broken.reason == "RuntimeError: no kernel for op X"
    assert [got[("fake-ok", "fp32", b)].status for b in (1, 4, 8)] == ["ok", "ok", "ok"]


def test_an_interrupt_keeps_what_finished(tmp_path: Path, fakes) -> None:  # noqa: ANN001
    kept: list = []
    with pytest.raises(KeyboardInterrupt):
        run_benchmarks(tiny_model(), backends=["fake-int"], batch_sizes=[1, 4], config=fast_config(tmp_path),
                       results=kept)
    assert [(r.backend, r.batch_size, r.status) for r in kept] == [("fake-int", 1, "ok")]


def test_long_lived_objects_are_frozen_for_the_sweep_and_thawed_after() -> None:
    import gc

    from modelcost.bench.memory import long_lived_frozen

    assert gc.get_freeze_count() == 0
    with long_lived_frozen():
        frozen = gc.get_freeze_count()
        assert frozen > 0  # what existed before the sweep
        made_since = [[] for _ in range(100)]  # 100 tracked objects a second freeze would add to the count
        with long_lived_frozen():  # nested (the batch search inside a run): one freeze, kept until the outer ends
            # at most what was frozen: a frozen object can still be freed (by a thread of the test runner, say)
            assert gc.get_freeze_count() <= frozen
        assert gc.get_freeze_count() <= frozen and made_since
        made_here = [[]]
        made_here[0].append(made_here)  # a cycle the sweep makes is still collected
        del made_here
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0


def test_reference_outputs_do_not_autotune_cudnn() -> None:
    # The reference is computed once and untimed: cuDNN picks by heuristics there, and the setting comes back.
    import torch

    from modelcost.hardware.tf32 import no_cudnn_autotune

    torch.backends.cudnn.benchmark = True
    with no_cudnn_autotune():
        # deterministic on: torch keys its one cached plan per conv shape by it, not by the benchmark flag, so
        # the heuristic plan found here is not the one the eager fp32 config reuses instead of autotuning
        assert torch.backends.cudnn.benchmark is False and torch.backends.cudnn.deterministic is True
    assert torch.backends.cudnn.benchmark is True and torch.backends.cudnn.deterministic is False
    torch.backends.cudnn.benchmark = False


def test_device_copy_is_deepcopy_then_to_without_the_cpu_copy() -> None:
    # The same tensors as copy.deepcopy(m).to(dtype): floating-point ones cast, integer buffers kept, tied weights
    # still one tensor, and nothing shared with the CPU module.
    import copy

    import torch

    from modelcost.bench.model import device_copy

    torch.manual_seed(0)
    lin, emb = torch.nn.Linear(4, 4), torch.nn.Embedding(4, 4)
    emb.weight = lin.weight  # tied, as a language model's head and embedding
    mod = torch.nn.ModuleDict({"lin": lin, "emb": emb, "bn": torch.nn.BatchNorm1d(4)}).eval()
    got = device_copy(mod, "cpu", torch.float16)
    want = copy.deepcopy(mod).to(dtype=torch.float16)
    for (name, a), (_, b) in zip(got.state_dict().items(), want.state_dict().items(), strict=True):
        assert a.dtype == b.dtype and torch.equal(a, b), name
    assert got["bn"].num_batches_tracked.dtype == torch.int64
    assert got["lin"].weight is got["emb"].weight and isinstance(got["lin"].weight, torch.nn.Parameter)
    assert all(p.data_ptr() != q.data_ptr() for p, q in zip(got.parameters(), mod.parameters(), strict=True))
    assert mod["lin"].weight.dtype == torch.float32  # the CPU module is untouched


def test_the_cuda_context_is_made_in_a_helper_thread(monkeypatch) -> None:
    """create_cuda_context_in_background: one allocation on the GPU, from a helper thread (the caller goes on), and a
    failure there (no GPU: this machine) is swallowed - the sweep's own first CUDA call says what is wrong."""
    import threading

    from modelcost.bench.memory import create_cuda_context_in_background

    made: list[tuple[str, object]] = []
    done = threading.Event()

    def fake_empty(*shape, device=None, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        made.append((threading.current_thread().name, device))
        done.set()
        raise RuntimeError("Found no NVIDIA driver on your system")

    monkeypatch.setattr(torch, "empty", fake_empty)
    create_cuda_context_in_background()
    assert done.wait(10)
    assert made == [("modelcost-cuda-context", "cuda")]


def test_recommend_makes_its_plan_once_with_the_backends_it_was_given(tmp_path: Path, monkeypatch) -> None:
    """api.recommend(backends=...) without RunOptions: sweep_plan (the compile child, the batch search) and the sweep
    share one plan, made with those backends. The two used to be made apart, and sweep_plan's ignored the argument:
    on a GPU it would have compiled torch.compile graphs in the background for a sweep that runs ONNX Runtime only."""
    from modelcost import api
    from modelcost.bench import plan

    made: list[tuple] = []
    real = plan.make_plan

    def counting(model, backends, precisions, config, exhaustive=False):  # noqa: ANN001, ANN202
        made.append((tuple(backends or ()), exhaustive))
        return real(model, backends, precisions, config, exhaustive)

    monkeypatch.setattr(plan, "make_plan", counting)
    net = tmp_path / "tiny.py"
    net.write_text("import torch\n\ndef make():\n    return torch.nn.Sequential(torch.nn.Linear(4, 2))\n")
    report, rec, _ = api.recommend(f"{net}:make", backends=["ort-cpu"], batch_sizes=[1],
                                   input_shapes={"input": (1, 4)}, config=fast_config(tmp_path))
    assert made == [(("ort-cpu",), False)]
    assert {r.backend for r in report.benchmarks} == {"ort-cpu"} and rec.best is not None


def test_a_session_s_failure_reads_as_lifecycle_words_it(tmp_path: Path, fakes, monkeypatch) -> None:  # noqa: ANN001
    # one owner of a failed config's reason (bench.lifecycle.failure): a session that raises one of our own errors
    # (a CUDA graph that cannot capture a host copy) reads as its message, written for the user; another error keeps
    # its type
    from modelcost.core.errors import ModelcostError

    def failing(batch, host_inputs):  # noqa: ANN001, ANN202
        if batch == 1:
            raise ModelcostError("CUDA graphs cannot capture this forward")
        raise RuntimeError("no kernel for op Y")

    monkeypatch.setattr(FakeRunner, "session", lambda self, batch, host_inputs: failing(batch, host_inputs))
    results, _ = run_benchmarks(tiny_model(), backends=["fake-ok"], batch_sizes=[1, 4], config=fast_config(tmp_path))
    got = by_key(results)
    assert (got[("fake-ok", "fp32", 1)].status, got[("fake-ok", "fp32", 1)].reason) == \
        ("failed", "CUDA graphs cannot capture this forward")
    assert got[("fake-ok", "fp32", 4)].reason == "RuntimeError: no kernel for op Y"
