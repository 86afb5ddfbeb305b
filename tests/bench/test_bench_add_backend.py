"""Adding a backend is one registry row and one module (docs/ARCHITECTURE.md): a dummy CPU backend
(tests/fixtures/dummy_backend.py) is measured by the runner, screened, probed, ranked and compared with no other
edit, every per-backend fact read from its row."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from modelcost.bench import registry  # noqa: E402
from modelcost.bench.base import BackendInfo, BenchConfig  # noqa: E402
from modelcost.bench.model import from_module  # noqa: E402
from modelcost.core.types import TensorSpec  # noqa: E402

ROW = BackendInfo("dummy-cpu", "cpu", ("fp32",), ("pytorch",), "the PyTorch model called by hand on the CPU",
                  "dummy_backend", default=("fp32",), simplicity=0, screen_rank=-1, probes=(("fp32", -1),))


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "fixtures"))
    monkeypatch.setitem(registry.BACKENDS, ROW.name, ROW)  # the one row
    return ROW.name


def tiny_model():  # noqa: ANN201
    torch.manual_seed(0)
    return from_module(torch.nn.Linear(4, 10).eval(), lambda b: [TensorSpec("x", (b, 4), "float32")], name="lin")


def config(tmp_path: Path) -> BenchConfig:
    return BenchConfig(device="cpu", warmup=2, warmup_max_s=0.05, min_time_s=0.02, min_iters=20, max_time_s=0.3,
                       e2e_min_iters=2, e2e_max_s=0.02, cache_dir=tmp_path / "cache")


def test_the_runner_measures_and_screens_it(tmp_path: Path, dummy: str) -> None:
    from modelcost.bench.runner import run_benchmarks
    from modelcost.bench.screening import speed_rank

    assert registry.in_default_sweep(dummy, "fp32") and dummy in registry.default_backends("cpu")
    assert speed_rank((dummy, "fp32")) < speed_rank(("torch-cpu", "fp32"))  # its row's screen_rank: first
    results, _ = run_benchmarks(tiny_model(), backends=[dummy, "torch-cpu"], batch_sizes=[1, 2],
                                config=config(tmp_path), screen=True)
    mine = [r for r in results if r.backend == dummy]
    assert [r.batch_size for r in mine] == [1, 2]
    assert all(r.status in ("ok", "screened") and r.latency_ms is not None for r in mine), mine
    # the accuracy against the FP32 reference (torch-cpu's outputs): the same model, the same inputs
    assert all(r.accuracy is not None and r.accuracy.max_abs_err == 0.0 for r in mine if r.status == "ok")


def test_the_batch_search_probes_with_it(tmp_path: Path, dummy: str) -> None:
    from modelcost.bench.batch_search import find_throughput_batch

    search = find_throughput_batch(tiny_model(), [("torch-cpu", "fp32")], config(tmp_path), max_batch=4,
                                   device="cpu")
    assert search is not None and search.probe == f"{dummy} fp32"  # its row's probes rank it first


def test_a_recommendation_ranks_it_by_its_rows_simplicity(tmp_path: Path, dummy: str) -> None:
    from modelcost.bench.runner import run_benchmarks
    from modelcost.decide.constraints import Constraints
    from modelcost.decide.recommend import recommend

    results, _ = run_benchmarks(tiny_model(), backends=[dummy], config=config(tmp_path))
    mine = results[0]
    # the same figures from CUDA-graph replay (simplicity 1): a tie within the noise, decided by simplicity, where
    # the row's 0 wins (a name the registry did not know counted as 2 and lost)
    twin = dataclasses.replace(mine, backend="torch-cudagraph", notes=[], extra=dataclasses.replace(mine.extra))
    rec = recommend([twin, mine], Constraints(latency_stat="p50"))
    assert rec.best is mine and rec.tie_rule.startswith("simplicity"), (rec.tie_rule, rec.reasons)


def test_compare_runs_both_models_on_it(dummy: str) -> None:
    from modelcost.decide.compare import CompareOptions
    from modelcost.runs.compare import run_comparison

    opts = CompareOptions(backends=[dummy], batch_sizes=[1, 2], rounds=2, runs_per_block=3,
                          config=BenchConfig(device="cpu", warmup=2, warmup_max_s=0.05))
    run, cmp, _ = run_comparison(tiny_model(), tiny_model(), sources=("a", "b"), precisions=("fp32", "fp32"),
                                 costs=(None, None), opts=opts, write=False)
    assert not cmp.skipped, cmp.skipped
    assert [(s.backend, s.batch_size) for s in cmp.speed] == [(dummy, 1), (dummy, 2)]
    assert {(r.backend, r.role) for r in run.benchmarks} == {(dummy, "base"), (dummy, "candidate")}
    assert cmp.accuracy and cmp.accuracy[0][0] == dummy  # outputs compared at the largest batch
