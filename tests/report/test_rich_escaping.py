"""Text the user typed reaches the terminal as typed: rich never reads it as markup ([red]) or emoji (:llama:)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_factory_name_is_not_an_emoji(tmp_path: Path) -> None:
    """'hf.py:llama: the factory raised ...' once printed 'hf.py🦙 the factory raised ...'."""
    (tmp_path / "hf.py").write_text('def llama():\n    raise RuntimeError("no weights :smile: [bold]here[/bold]")\n')
    result = invoke("analyze", f"{tmp_path / 'hf.py'}:llama", "--static")
    assert result.exit_code == 1
    assert "hf.py:llama: the factory raised" in result.stderr
    assert ":smile: [bold]here[/bold]" in result.stderr  # the user's own message, untouched
    assert "\N{LLAMA}" not in result.stderr and "\N{SMILING FACE WITH SMILING EYES}" not in result.stderr


def test_model_path_with_markup_is_printed_as_typed(tmp_path: Path) -> None:
    folder = tmp_path / "[red]models :fire:"  # no '/' in a name: [red]... stays unclosed, still markup to rich
    folder.mkdir()
    model = folder / "[bold]net.onnx"
    shutil.copy(SAMPLES / "resnet_tiny.onnx", model)
    result = invoke("analyze", str(model), "--static", "--top", "0")
    assert result.exit_code == 0, result.output
    assert "[bold]net  (onnx)" in result.stdout  # the table title is the file's stem, as named
    missing = invoke("analyze", str(folder / "[i]gone.onnx"), "--static")
    assert missing.exit_code == 1
    assert "[red]models :fire:/[i]gone.onnx" in missing.stderr
    assert "\N{FIRE}" not in missing.stderr


def test_bench_title_keeps_the_model_reference(tmp_path: Path) -> None:
    from rich.console import Console

    from modelcost.core.types import BenchResult
    from modelcost.report.console_bench import print_benchmarks

    console = Console(record=True, width=200)
    failed = BenchResult("ort-cpu", "fp32", 1, "failed", reason="boom [x] :llama:")
    print_benchmarks([failed], title="benchmarks: hf.py:llama: [dim]x[/dim]", console=console)
    text = console.export_text()
    assert "benchmarks: hf.py:llama: [dim]x[/dim]" in text and "boom [x] :llama:" in text
    assert "\N{LLAMA}" not in text
