"""The progress bar while benchmarks run (issue 3): drawn on a terminal, silent in logs, and moved once per config."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pytest

from modelcost.bench import progress as progress_mod
from modelcost.bench.progress import progress_bar
from modelcost.bench.runner import run_benchmarks
from tests.bench.test_bench_runner import fast_config, tiny_model

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_draws_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    fake = _Tty()
    monkeypatch.setattr(sys, "stderr", fake)
    with progress_bar(3) as advance:
        advance("ort-cpu fp32 batch 1", 1)
        advance("ort-cpu fp32 batch 8", 2)
    text = fake.getvalue()
    assert "benchmarking" in text and "3/3" in text and "ort-cpu fp32 batch 8" in text


def test_bar_is_silent_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    with progress_bar(2) as advance:
        advance("torch-cpu fp32", 2)
    assert plain.getvalue() == ""  # CI logs and redirected stderr get no control codes


def test_a_cpu_sweep_moves_the_bar_once_per_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, str, int]] = []

    @contextlib.contextmanager
    def recording_bar(total: int):
        yield lambda label, steps=1: seen.append((total, label, steps))

    monkeypatch.setattr(progress_mod, "progress_bar", recording_bar)
    results, _ = run_benchmarks(tiny_model(), backends=["torch-cpu", "ort-cpu"], batch_sizes=[1, 2],
                                config=fast_config(tmp_path), progress=True)
    assert all(r.status == "ok" for r in results)
    # 2 backends x 1 precision x 2 batch sizes = 4 configs; the bar's steps add up to exactly that
    assert {total for total, _, _ in seen} == {4}
    assert sum(steps for _, _, steps in seen) == 4
    assert any("torch-cpu fp32 batch 2" in label for _, label, _ in seen)
    assert any("ort-cpu fp32 batch 1" in label for _, label, _ in seen)
