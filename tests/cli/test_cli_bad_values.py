"""Values the long fuzz runs of issue 24 found unrefused (tests/fuzz/fuzz_surfaces.py, BENCHMARKS.md): each is
now one clear line (exit 1) or click's usage error (exit 2), never a traceback."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.sweep.db import ResultsDB
from tests.cli.test_cli_analyze import assert_one_error_line

FIXTURES = Path(__file__).parents[1] / "fixtures"
CNN = f"{FIXTURES / 'tiny_cnn.py'}:make_model"


@pytest.mark.parametrize("command", [["train", CNN, "--static"], ["analyze", CNN, "--static"]])
def test_an_output_name_too_long_for_the_file_system_is_one_line(tmp_path: Path, command: list[str]) -> None:
    # 300 characters: past the 255 bytes a name may have on Linux file systems (ENAMETOOLONG from stat)
    result = CliRunner().invoke(app, [*command, "--json", str(tmp_path / ("x" * 300))])
    assert_one_error_line(result, "cannot write", "File name too long")


@pytest.mark.parametrize("args", [
    ["train", CNN, "--static", "--memory-gb", "nan"],  # NaN passed min=0.001: every comparison with NaN is false
    ["train", CNN, "--static", "--margin", "nan"],
    ["results", "r.sqlite", "--tolerance-pct", "inf"],
    ["results", "r.sqlite", "--resolution-pct", "nan"],
    ["sweep", "plan.toml", "--repeats", "0"],
])
def test_a_number_that_is_not_finite_is_a_usage_error(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and result.exception is None or isinstance(result.exception, SystemExit)
    assert "finite" in result.output or "Invalid value" in result.output, result.output


def test_results_with_text_that_is_not_utf8_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    db = ResultsDB(path)
    run = db.start_run(label="a", engine="local", workers=1)
    db.insert_result({"run_id": run, "config_key": "k", "model_name": "m", "model_source": "m.onnx",
                      "model_hash": "h", "backend": "ort-cpu", "precision": "fp32", "batch_size": 1, "status": "ok"})
    db.close()
    with sqlite3.connect(path) as conn:  # a damaged record: bytes no UTF-8 text holds, in a TEXT column
        conn.execute("UPDATE results SET model_name = CAST(x'ff41' AS TEXT)")
    assert_one_error_line(CliRunner().invoke(app, ["results", str(path)]), "damaged", "not UTF-8")


def test_llm_config_with_a_window_that_is_not_a_number_is_one_line(tmp_path: Path) -> None:
    config = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 256, "n_positions": 256,
              "bos_token_id": 0, "eos_token_id": 0,
              "sliding_window": "ünïcode"}  # a TypeError inside transformers' cache before
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["llm", str(tmp_path / "config.json"), "--static", "-p", "16", "-g", "8"])
    assert_one_error_line(result, "sliding_window", "expected a number")
