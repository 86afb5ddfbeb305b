"""A short seeded slice of the ONNX mutation fuzzer (tests/fuzz/fuzz_onnx.py) and its regression seeds: every
malformed file gives a clean one-line error (exit 1) or an analysis (exit 0 / 3); never a traceback, a hang or
a dead worker. The long run (>= 5,000 mutants, under a memory limit) is recorded in BENCHMARKS.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import fuzz_onnx

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SEEDS = sorted(fuzz_onnx.CORPUS.glob("*.onnx"))
SLICE = 400  # about 4 s of CPU: a worker process start (1.5 s), then about 6 ms a mutant
CHUNK = 400  # one test, one worker start (two chunks for the xdist processes to share cost a second start)


@pytest.fixture(scope="module")
def seed_outcomes() -> dict[Path, tuple[str, str]]:
    """Every regression seed analysed in one worker subprocess, under the memory limit and a time limit per seed
    (one process start and one set of imports for all of them, not one per seed)."""
    return fuzz_onnx.run_files_isolated(SEEDS)


@pytest.mark.xdist_group("fuzz-onnx-seeds")  # one test process runs the fixture above once for all seeds
@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_regression_seed_is_a_clean_error_or_an_analysis(path: Path, seed_outcomes: dict) -> None:
    outcome, detail = seed_outcomes[path]
    assert outcome in ("clean", "analysed"), detail


@pytest.mark.parametrize(("name", "needle"), [
    ("initializer_elem_type_40", "initializer 'conv1.weight' has element type 40, which is not an ONNX type"),
    ("node_name_not_utf8", "the name of node #0 is not valid UTF-8 text"),
    ("subgraph_name_not_utf8", "the graph name (in the else_branch of node #2) is not valid UTF-8 text"),
])
def test_a_corrupt_field_is_named_in_the_error(name: str, needle: str) -> None:
    outcome, detail = fuzz_onnx.run_file(fuzz_onnx.CORPUS / f"{name}.onnx")
    assert outcome == "clean" and needle in detail, detail


def test_the_mutants_are_deterministic() -> None:
    assert fuzz_onnx.mutant(7, 11) == fuzz_onnx.mutant(7, 11)
    assert {fuzz_onnx.mutant(7, i)[1] for i in range(200)} == set(fuzz_onnx.MUTATORS)  # every mutator is drawn


@pytest.mark.parametrize("start", range(0, SLICE, CHUNK))
def test_a_seeded_slice_has_no_traceback_hang_or_crash(start: int) -> None:
    records = fuzz_onnx.fuzz(seed=2026, count=CHUNK, start=start, timeout_s=20.0, mem_mb=1024)
    summary = fuzz_onnx.summarise(records)
    assert summary["mutants"] == CHUNK and [r["index"] for r in records] == list(range(start, start + CHUNK))
    assert summary["failures"] == [], summary["failures"][:5]
    # Both outcomes occur: the mutants are neither all rejected at parse nor all harmless.
    assert summary["outcomes"].get("clean", 0) > CHUNK // 5 and summary["outcomes"].get("analysed", 0) > CHUNK // 5


def test_the_classifier_sees_a_traceback_and_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness itself: an exception is a traceback; a mutant that does not answer in time is a hang and the
    run goes on with the next mutant."""

    class Result:
        exception, exit_code, stderr = ValueError("boom"), 1, ""

    assert fuzz_onnx.classify(Result())[0] == "traceback"
    Result.exception, Result.stderr = SystemExit(1), "error: one line\n"
    assert fuzz_onnx.classify(Result()) == ("clean", "error: one line")
    Result.stderr = "error: one line\nand another\n"
    assert fuzz_onnx.classify(Result())[0] == "traceback"
    monkeypatch.setenv("MODELCOST_FUZZ_SLEEP_INDEX", "1")
    records = fuzz_onnx.fuzz(seed=3, count=3, timeout_s=2.0)
    assert [r["outcome"] for r in records][1] == "hang" and len(records) == 3
