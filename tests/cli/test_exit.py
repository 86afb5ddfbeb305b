"""A command that imported torch ends with os._exit once its outputs are written (cli/app.py, signals.exit_fast):
the exit code is the command's, every output is complete, and the clean-up hooks still run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _modelcost(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "modelcost", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_a_finished_torch_command_exits_with_its_code_and_complete_outputs(tmp_path: Path) -> None:
    done = _modelcost("analyze", "zoo:resnet18", "--static", "--json", "r.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["params"]["total"] == 11_689_512  # ResNet-18
    assert "JSON report" in done.stdout  # the last line printed made it out (streams flushed before os._exit)


def test_a_failed_torch_command_keeps_its_code_and_removes_the_out_folder_it_made(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import torch\n\ndef make():\n    raise ValueError('no model here')\n")
    failed = _modelcost("analyze", "bad.py:make", "--static", "--out", "made", cwd=tmp_path)
    assert failed.returncode == 1
    assert "the factory raised ValueError: no model here" in failed.stderr + failed.stdout
    assert not (tmp_path / "made").exists()  # the at_exit hook ran on the fast way out


def test_exit_code_mapping_follows_sys_exit() -> None:
    from modelcost.cli.app import _exit_code

    assert (_exit_code(None), _exit_code(0), _exit_code(3)) == (0, 0, 3)
    assert _exit_code("message") == 1
