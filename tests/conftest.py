"""Shared test set-up. GPU tests: mark them ``@pytest.mark.gpu``; they are skipped where CUDA is absent.

Benchmarks run by the tests share the machine with the other tests (and other jobs of a CI runner), so their
timings are often flagged unstable (bench/stability.py), and ``recommend`` then rightly decides nothing. Tests
about what modelcost does with a measurement therefore see every measurement as stable; tests of the stability
checks themselves are marked ``@pytest.mark.stability`` and see the real checks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Bytecode: where the environment sets PYTHONDONTWRITEBYTECODE (this project's machines do), every test process
# and every `python -m modelcost` child the tests start would compile modelcost from source again (~0.5 s of CPU
# each on a fresh checkout), and pytest would rewrite every test file's assertions again in each xdist worker
# (~13 s of CPU a worker). The test run writes bytecode as Python does by default: into __pycache__ folders, which
# .gitignore leaves out of the tree.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Threads: the suite runs in two xdist workers on two cores, each starting child processes. torch's intra-op pool
# (OpenMP, one thread a core) in every one of them would put 4+ busy threads on 2 cores, and OpenMP threads spin at
# their barriers waiting for a thread the kernel has set aside: the more so when another job shares the machine.
# One intra-op thread per process (children inherit the variable); a test that needs threads sets them itself.
os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import harness  # noqa: E402 - tests/fuzz/harness.py, shared with the fuzzers' worker processes

# CliRunner().invoke(app, ...) would rebuild the click command of the app each time (~80 ms of CPU each)
harness.build_each_cli_once()


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no torch, or a broken one, means no CUDA
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none here)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


requires_cuda = pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA GPU (none here)")


_REAL_INSTABILITY: list = []


@pytest.fixture(autouse=True, scope="session")
def _timings_count_as_stable() -> object:
    from modelcost.bench import stability  # standard library only

    _REAL_INSTABILITY.append(stability.instability)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stability, "instability", lambda *args, **kwargs: [])
        yield


@pytest.fixture(autouse=True)
def _real_stability_checks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("stability") is not None:
        from modelcost.bench import stability

        monkeypatch.setattr(stability, "instability", _REAL_INSTABILITY[0])


@pytest.fixture(autouse=True)
def _finalists_repeat_their_own_figure(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The finalists' repeats (runs/finalists.py) of every run a test makes take no time and read back each
    finalist's own sweep p50 (a between-session spread of 0), so no pick depends on how busy the machine is;
    tests marked ``@pytest.mark.finalists`` time them for real."""
    if request.node.get_closest_marker("finalists") is not None:
        return
    from modelcost.runs import finalists

    real = finalists.repeat_finalists

    def own_figure(model: object, report: object, options: object, sweep_s: float, **kw: object) -> None:
        p50 = {(r.backend, r.precision, r.batch_size): r.latency_ms.p50
               for r in report.benchmarks if r.latency_ms is not None}  # type: ignore[attr-defined]
        real(model, report, options, sweep_s, measure=lambda *config: p50[config], clock=lambda: 0.0,
             on_start=kw.get("on_start"))  # type: ignore[arg-type]

    monkeypatch.setattr(finalists, "repeat_finalists", own_figure)


@pytest.fixture()
def stable_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Child processes (a sweep's configs) count their timings as stable too (fixtures/stable_children)."""
    import os
    from pathlib import Path

    site = str(Path(__file__).parent / "fixtures" / "stable_children")
    # this checkout too: sitecustomize imports modelcost before the child's own path is set up, so it must not
    # depend on how (or whether) modelcost is installed
    root = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (site, root, os.environ.get("PYTHONPATH")) if p))
