"""A short seeded slice of the fuzzer of sweep plans, results databases, llm configs and command lines
(tests/fuzz/fuzz_surfaces.py): every case gives a clean one-line error (exit 1), a usage error (exit 2) or a
result (exit 0 / 3); never a traceback, a hang, a dead worker, or a file changed outside the command's output
paths. The long runs (>= 5,000 cases per surface) are recorded in BENCHMARKS.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import fuzz_surfaces
import harness
import surface_cases

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
# Cases per surface in CI: a few seconds each on 2 cores (llm builds a transformers model per case). Enough for
# every mutator of the surface to be drawn (seed 2026: plan's by case 13, db's by 31, cli's by 20; the test says
# so); the long runs are BENCHMARKS.md's.
SLICE = {"plan": 150, "db": 100, "llm": 25, "cli": 40}
MUTATORS = {"plan": set(surface_cases.STRUCT + surface_cases.TEXT), "db": set(surface_cases.DB_MUTATORS),
            "cli": set(surface_cases.CLI_MUTATORS)}
# A hang never answers; a slow case does. The llm slice's default-size configs ({"model_type": "llama"} alone
# is 6.7 B parameters, 32 layers) take 15 s of CPU: at a load of 12 on 2 cores that is past a minute of wall time.
HANG_S = 300.0


@pytest.fixture(scope="module")
def slices() -> dict[str, list[dict]]:
    """Every surface's slice, run by one worker process (one start-up and warm-up for all four)."""
    return fuzz_surfaces.fuzz_slices(SLICE, seed=2026, timeout_s=HANG_S, mem_mb=2048)


# one xdist group: the four tests read one run of the fixture, in one test process
@pytest.mark.xdist_group("fuzz_surfaces")
@pytest.mark.parametrize("surface", sorted(SLICE))
def test_a_seeded_slice_has_no_traceback_hang_crash_or_lost_file(surface: str, slices: dict[str, list[dict]]) -> None:
    records = slices[surface]
    assert sorted(r["index"] for r in records) == list(range(SLICE[surface]))  # each case of the slice, once
    summary = harness.summarise(records)
    assert summary["mutants"] == SLICE[surface]
    assert summary["failures"] == [], summary["failures"][:5]
    # Both outcomes occur: the cases are neither all refused nor all harmless.
    assert summary["outcomes"].get("clean", 0) > 0 and summary["outcomes"].get("analysed", 0) > 0, summary
    if surface in MUTATORS:  # the slice draws every mutator of its surface at least once
        assert {r["mutator"] for r in records} == MUTATORS[surface]


@pytest.mark.parametrize("surface", surface_cases.SURFACES)
def test_the_cases_are_deterministic(surface: str) -> None:
    assert surface_cases.case(surface, 7, 11) == surface_cases.case(surface, 7, 11)


def test_every_mutator_is_drawn() -> None:
    drawn = {s: {surface_cases.case(s, 7, i).mutator for i in range(300)} for s in MUTATORS}
    assert drawn == MUTATORS


def test_the_toml_writer_round_trips() -> None:
    import math
    import tomllib

    doc = {"sweep": {"batch_sizes": [1, 2], "timeout_s": 1.5, "flag": True, "name": "ü \"q\""},
           "models": [{"source": "a.onnx"}, {"source": "b.py:f", "t": {"x": 1}}], "top": -3}
    assert tomllib.loads(surface_cases.to_toml(doc)) == doc
    assert math.isnan(tomllib.loads(surface_cases.to_toml({"a": {"v": math.nan}}))["a"]["v"])


def test_a_changed_input_or_guard_file_is_lost(tmp_path: Path) -> None:
    """The harness itself: a command that rewrites one of its input files, or a file of the guard, is 'lost'."""
    guard = fuzz_surfaces.make_guard(tmp_path)
    digest = fuzz_surfaces._digest(guard)
    case = surface_cases.Case("x", "y", {"plan.toml": b"not a plan"}, ["cache", "--clear"])
    outcome, detail = fuzz_surfaces.run_case(case, tmp_path / "case", guard, digest)
    # the guard's cache entries hold only foreign files: a --clear that keeps to what modelcost wrote leaves them
    assert outcome != "lost", detail
    (guard / "cache" / "onnx" / "my_model.onnx").write_bytes(b"changed")
    outcome, detail = fuzz_surfaces.run_case(case, tmp_path / "case", guard, digest)
    assert outcome == "lost" and "guard/cache/onnx/my_model.onnx" in detail, detail
