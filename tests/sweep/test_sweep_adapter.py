"""The one place a sweep child measures a config (sweep/adapter.py): the benchmark first, in a process that has done
nothing else, and one static analysis per model and batch in a sweep, not one per backend, precision and repeat."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from modelcost import api
from modelcost.sweep.adapter import run_config, static_key
from modelcost.sweep.plan import Config


def _config(backend: str = "torch-cpu", precision: str = "fp32", batch: int = 1) -> Config:
    return Config("tiny", "tiny.py:make_model", "hash-1", backend, precision, batch, "cpu")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """api.run_benchmarks / api.analyze_static replaced by recorders (no model is loaded)."""
    seen: list[str] = []

    def bench(source, backends, precisions, batch_sizes, **_):  # noqa: ANN001, ANN202
        from modelcost.core.types import BenchResult

        seen.append("bench")
        return [BenchResult(backend=backends[0], precision=precisions[0], batch_size=batch_sizes[0],
                            status="ok")], None

    def static(source, batch_size, **_):  # noqa: ANN001, ANN202
        seen.append("static")
        return SimpleNamespace(params=SimpleNamespace(total=10), compute=SimpleNamespace(
            macs=7 * batch_size, flops=14 * batch_size, uncounted_ops={}), storage=SimpleNamespace(bytes=40),
            batch_size=batch_size)

    monkeypatch.setattr(api, "run_benchmarks", bench)
    monkeypatch.setattr(api, "analyze_static", static)
    return seen


def test_the_benchmark_runs_before_the_static_analysis(calls: list[str]) -> None:
    answer = run_config(_config(), {})
    assert calls == ["bench", "static"]
    assert answer["static"]["macs"] == 7 and answer["result"]["status"] == "ok"


def test_one_static_analysis_per_model_and_batch_in_a_sweep(calls: list[str], tmp_path: Path) -> None:
    # four configs of the same model at batch 1 (two backends x two repeats) and one at batch 2: two analyses
    configs = [_config("torch-cpu"), _config("ort-cpu"), _config("torch-cpu"), _config("ort-cpu"), _config(batch=2)]
    answers = [run_config(c, {}, tmp_path / f"static-{static_key(c)}.json") for c in configs]
    assert calls.count("static") == 2 and calls.count("bench") == 5
    assert [a["static"]["macs"] for a in answers] == [7, 7, 7, 7, 14]  # 7 MACs a sample (the recorder's figure)
    assert len({static_key(c) for c in configs}) == 2  # backend, precision and repeat are not in the key


def test_an_unreadable_stored_analysis_is_done_again(calls: list[str], tmp_path: Path) -> None:
    path = tmp_path / "static.json"
    path.write_text("{not json", encoding="utf-8")
    assert run_config(_config(), {}, path)["static"]["macs"] == 7
    assert calls == ["bench", "static"]
    assert '"macs": 7' in path.read_text(encoding="utf-8")  # and stored for the next config
