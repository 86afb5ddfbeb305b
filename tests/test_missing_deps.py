"""An optional dependency that is missing gives one clear line naming what to install, never a traceback.

Each case runs ``python -m modelcost`` in a fresh process whose sitecustomize sets ``sys.modules[name] = None``,
so ``import name`` fails there exactly as if the package were not installed (this process is untouched).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONV_FLOAT = str(ROOT / "sample_models" / "conv_float.onnx")


def run_without(module: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    block = tmp_path / "block"
    block.mkdir(exist_ok=True)
    (block / "sitecustomize.py").write_text(f"import sys\nsys.modules[{module!r}] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(block), str(ROOT)]), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "modelcost", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300, check=False)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    # the static stage's progress line ("counted ...; benchmarking next") is not an error line
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.endswith("benchmarking next")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_without_onnx_an_onnx_file_names_the_package(tmp_path: Path) -> None:
    line = one_error_line(run_without("onnx", tmp_path, "analyze", CONV_FLOAT, "--static"))
    assert "onnx is not installed" in line and "pip install onnx" in line


def test_without_onnxruntime_its_backends_are_unavailable_with_the_install_line(tmp_path: Path) -> None:
    listing = run_without("onnxruntime", tmp_path, "backends")
    assert listing.returncode == 0, listing.stderr
    assert "onnxruntime is not installed" in listing.stdout and "pip install onnxruntime" in listing.stdout
    # static analysis of an ONNX file does not need onnxruntime; the benchmark then has nothing it can run
    bench = run_without("onnxruntime", tmp_path, "analyze", CONV_FLOAT, "--backends", "ort-cpu")
    assert "360,448" in bench.stdout  # conv_float MACs (sample_models/EXPECTED.md): the static part is reported
    assert "ort-cpu (fp32): unavailable" in bench.stdout and "onnxruntime is not installed" in bench.stdout
    assert "no configuration could be measured" in one_error_line(bench)


def test_without_matplotlib_the_report_is_written_without_plots(tmp_path: Path) -> None:
    out = tmp_path / "report"
    proc = run_without("matplotlib", tmp_path, "analyze", CONV_FLOAT, "--static", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert {"report.json", "report.md", "report.html"} <= {p.name for p in out.iterdir()}
    assert not (out / "plots").exists()
    assert "plots skipped: matplotlib is not installed" in (out / "report.md").read_text()
    assert "pip install matplotlib" in (out / "report.html").read_text()
