"""The run-and-decide rooms (issue 26): api.py is re-exports only, each decision has one owner that the others
ask (this machine's GPU, whether a roofline may be drawn, what "interrupted" looks like), and run facts travel
in typed fields, not in notes read back."""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import pytest

from modelcost.core.types import BenchResult, CostReport, RunReport
from tests.analysis.test_roofline import make_cost, result

PACKAGE = Path(__file__).resolve().parents[2] / "modelcost"


def test_api_has_no_logic() -> None:
    """api.py holds imports, its docstring and __all__: every function is defined in the room of its command."""
    from modelcost import api

    tree = ast.parse((PACKAGE / "api.py").read_text())
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"ImportFrom", "Expr", "Assign"}, kinds  # Expr: the docstring; Assign: __all__
    assigned = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    assert assigned == ["__all__"]
    for name in api.__all__:
        obj = getattr(api, name)
        assert getattr(obj, "__module__", "modelcost.x") != "modelcost.api", name


def test_api_recommend_is_the_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """api.recommend goes through runs.inference.run (no second load -> static -> sweep copy), with the
    recommend options: static not required, the constraints' screening check, the recommend batches."""
    from modelcost import api
    from modelcost.decide.constraints import Constraints
    from modelcost.runs import inference

    seen = []

    def fake_run(source, options, on_stage=None, *, run=None):  # noqa: ANN001, ANN202
        seen.append(options)
        return RunReport(command=options.command)

    monkeypatch.setattr(inference, "run", fake_run)
    report, rec, folder = api.recommend("m.onnx", constraints=Constraints(max_latency_ms=5))
    (options,) = seen
    assert options.static_required is False and options.rejects is not None
    assert options.batch_sizes == (1, 8, 32) and report.command == "recommend" and folder is None
    assert rec.best is None  # nothing measured, nothing recommended


def test_this_machines_gpu_has_one_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command asks runs.gpu.this_gpu: patch it and api.gpu_spec, the roofline step, train's memory
    target and compare's GPU all see the patched GPU."""
    from modelcost import api
    from modelcost.hardware.specs import spec_from_table
    from modelcost.runs import gpu, train

    fake = spec_from_table("L4")
    asked = []

    def this_gpu(index: int = 0, *, cached_ceilings: bool = True, required: bool = True):  # noqa: ANN202
        asked.append(required)
        return fake

    monkeypatch.setattr(gpu, "this_gpu", this_gpu)
    assert api.gpu_spec() is fake
    assert api.attach_roofline(RunReport()).gpu is fake
    assert train.memory_target(None, None) == (fake.memory_bytes, fake.name)
    assert asked == [True, True, False]


def test_no_module_but_the_owner_asks_nvml_for_this_gpu() -> None:
    """query_gpu (NVML) is called from hardware/ and runs/gpu.py only: there is one 'this machine's GPU'."""
    callers = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("hardware/") or rel == "runs/gpu.py":
            continue
        if "query_gpu(" in path.read_text():
            callers.append(rel)
    assert callers == []


def _cost(complete: bool) -> CostReport:
    import dataclasses

    cost = make_cost()
    if complete:
        return cost
    compute = dataclasses.replace(cost.compute, complete=False, incomplete_reasons=["1 op not counted (MyOp)"])
    return dataclasses.replace(cost, compute=compute)


def _gpu_result() -> BenchResult:
    return result("fp32", 4, 1.0)


def test_incomplete_counts_place_nothing_on_the_roofline() -> None:
    """The one owner refuses a roofline on incomplete counts (the compare copy placed them): the reason is
    returned and no result gets a point."""
    from modelcost.hardware.specs import spec_from_table
    from modelcost.runs.gpu import place_on_roofline

    gpu = spec_from_table("H100 SXM")
    results = [_gpu_result()]
    why = place_on_roofline(results, _cost(complete=False), gpu)
    assert why is not None and "incomplete" in why and results[0].roofline is None
    assert place_on_roofline(results, _cost(complete=True), gpu) is None and results[0].roofline is not None


def test_comparer_places_rooflines_through_the_owner() -> None:
    """run_comparison hands the Comparer runs.gpu.place_on_roofline (the Comparer computes no roofline)."""
    source = (PACKAGE / "runs" / "compare.py").read_text()
    assert "roofline=this_machine.place_on_roofline" in source
    assert "roofline_point" not in (PACKAGE / "decide" / "compare.py").read_text()


def test_the_roofline_reason_is_a_fact_not_a_note() -> None:
    """flow.roofline_plot_problem and console_gpu read run.no_roofline_reason, whatever the notes say."""
    from rich.console import Console

    from modelcost.cli.flow import roofline_plot_problem
    from modelcost.report.console_gpu import print_run_gpu

    run = RunReport(benchmarks=[_gpu_result()], no_roofline_reason="no NVIDIA GPU here (test)",
                    notes=["roofline: something else entirely"])
    assert roofline_plot_problem(run) == "no NVIDIA GPU here (test)"
    console = Console(record=True, width=160)
    print_run_gpu(run, console)
    assert "no roofline: no NVIDIA GPU here (test)" in console.export_text()


def test_interrupted_is_one_fact_with_one_note() -> None:
    """The library marks 'the user (Ctrl-C)'; the CLI, which knows the signal, marks it again: one note."""
    run = RunReport(notes=["kept"])
    run.mark_interrupted()
    assert run.interrupted_by == "the user (Ctrl-C)" and not run.complete
    run.mark_interrupted("SIGTERM")
    assert run.interrupted_by == "SIGTERM"
    assert run.notes == ["kept", "interrupted by SIGTERM: this report holds what finished before it stopped"]


@pytest.mark.parametrize(("argv", "expected"), [
    (["modelcost", "compare", "a.onnx", "b.onnx", "--rounds", "4"], "compare a.onnx b.onnx --rounds 4"),
    (["pytest", "-q", "tests/x.py"], "compare"),  # in-process (CliRunner): another program's arguments
])
def test_one_command_line_format(monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: str) -> None:
    from modelcost.cli.options import command_line

    monkeypatch.setattr(sys, "argv", argv)
    assert command_line("compare") == expected


def test_a_new_timing_option_is_its_declaration_and_its_use() -> None:
    """Issue 26: a timing option is declared once, as a BenchConfig field with ``option(...)`` metadata; the
    CLI builds the flag from it and hands the converted value back as that field. A dummy option declared on a
    subclass reaches the config through a command without any other edit."""
    import dataclasses

    import typer
    from typer.testing import CliRunner

    from modelcost.bench.base import BenchConfig, option
    from modelcost.cli.timing import timing_options

    @dataclasses.dataclass(frozen=True)
    class WithDummy(BenchConfig):
        cool_down_s: float = dataclasses.field(default=0.5, metadata=option("Rest between configs (s).", min=0))
        keep_warm: bool = dataclasses.field(default=True, metadata=option("Cold.", flag="--cold", inverted=True))

    seen = []
    app = typer.Typer()

    @app.command()
    @timing_options(config_class=WithDummy, only=("cool_down_s", "keep_warm", "min_iters"))
    def cmd(model: str, timing: dict | None = None) -> None:  # noqa: ARG001
        seen.append(WithDummy(**timing))

    res = CliRunner().invoke(app, ["m", "--cool-down-s", "2.5", "--cold", "--min-iters", "7"])
    assert res.exit_code == 0, res.output
    assert (seen[0].cool_down_s, seen[0].keep_warm, seen[0].min_iters) == (2.5, False, 7)
    res = CliRunner().invoke(app, ["m", "--cool-down-s", "nan"])  # a float option refuses NaN, as every one
    assert res.exit_code == 2 and len(seen) == 1
    CliRunner().invoke(app, ["m"])
    assert (seen[1].cool_down_s, seen[1].keep_warm) == (0.5, True)  # the field's defaults


def test_the_cache_summary_is_a_typed_fact_not_a_note_read_back() -> None:
    """The console prints where the exports / engines are kept from ``RunReport.cache_summary``, set where the
    note is made; a note that merely begins with 'cache:' is not picked out by its wording any more."""
    from modelcost.cli.flow import Printer
    from modelcost.runs.inference import _cache_note
    from modelcost.runs.model import RunOptions

    run = RunReport()
    _cache_note(run, RunOptions(), lambda directory, since: "cache: /x holds 1 KiB", 0.0)
    assert run.cache_summary == "cache: /x holds 1 KiB" and run.notes == ["cache: /x holds 1 KiB"]
    assert "cache:" not in inspect.getsource(Printer)
