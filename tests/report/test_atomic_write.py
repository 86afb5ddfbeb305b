"""A report path that cannot be written is a user error: one line, exit 1, no traceback, no temporary file left."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.core.errors import ModelcostError
from modelcost.report.atomic import atomic_write_text

CONV_FLOAT = str(Path(__file__).resolve().parents[2] / "sample_models" / "conv_float.onnx")


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "r.json"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert os.listdir(target.parent) == ["r.json"]


def test_unwritable_paths_are_one_line_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    # parent is a regular file: mkdir fails; the message names that file, not the temporary one
    with pytest.raises(ModelcostError, match=r"cannot write .*a_file/r\.json: .*a_file"):
        atomic_write_text(a_file / "r.json", "{}")
    # the target is a folder: the rename fails and the temporary file is removed
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ModelcostError, match="cannot write .*folder"):
        atomic_write_text(folder, "{}")
    assert os.listdir(folder) == []
    assert sorted(os.listdir(tmp_path)) == ["a_file", "folder"]


@pytest.mark.parametrize("where", ["parent_is_a_file", "is_a_folder"])
def test_cli_json_to_an_unwritable_path_exits_1_with_one_line(tmp_path: Path, where: str) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    path = a_file / "r.json" if where == "parent_is_a_file" else tmp_path
    result = CliRunner().invoke(app, ["analyze", CONV_FLOAT, "--static", "--json", str(path)])
    assert result.exit_code == 1, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot write "), result.stderr
    # refused before the analysis ran (the CLI checks output paths first), so nothing measured is lost to it
    assert result.stdout == ""
