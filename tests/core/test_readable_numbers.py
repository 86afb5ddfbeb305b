"""Numbers people read: one formatter (core/units.number) for the terminal, Markdown and HTML: grouped digits or
K/M/G units, never exponent notation. JSON keeps plain numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.core.units import number

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
CONV = str(Path(__file__).resolve().parents[2] / "sample_models" / "conv_float.onnx")
FAST = ("--device", "cpu", "--backends", "ort-cpu", "--min-time-s", "0", "--min-iters", "5", "--max-time-s", "0.1",
        "--warmup", "1")
# 2.224e+04, 1e-06, 3E5: a number in exponent notation that stands alone (not inside a word, hash or base64 run).
EXPONENT = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")


@pytest.mark.parametrize(("value", "text"), [
    (22243.7, "22,244"),        # >= 1,000: a whole number, grouped (was '2.224e+04')
    (1e6, "1.00 M"),            # >= 1,000,000: K/M/G units, two decimals (si)
    (4.5e9, "4.50 G"),
    (999999.6, "1,000,000"),    # rounds up to a million below the unit threshold: still grouped
    (123.456, "123.5"),         # below 1,000: 4 significant digits
    (20.0, "20"),               # no trailing zeros: a limit of 20 reads '20'
    (0.000123456, "0.0001235"),  # small: 4 significant digits in fixed point (was '0.0001235' / '1.235e-04')
    (1e-05, "0.00001"),
    (-3.5e-7, "-0.00000035"),
    (0, "0"),
    (None, "-"),
])
def test_number(value: float | None, text: str) -> None:
    assert number(value) == text


def test_number_with_fewer_digits() -> None:
    assert number(1.23456e-6, 3) == "0.00000123"
    assert number(0.5, 2) == "0.5"


def _exponents(text: str) -> list[str]:
    text = re.sub(r"<(script|style)\b.*?</\1>", "", text, flags=re.DOTALL)  # code, not figures
    text = re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", "", text)  # embedded images
    return EXPONENT.findall(text)


def test_no_exponent_notation_in_a_real_cpu_runs_outputs(tmp_path: Path) -> None:
    """recommend with a throughput floor no CPU reaches (1,000,000 ips: the reasons quote the limit, the measured
    throughput and the shortfall), analyze with a benchmark, gpu --name and a what-if table: the terminal,
    report.md and report.html are scanned."""
    rec_dir, ana_dir = tmp_path / "rec", tmp_path / "ana"
    rec = CliRunner().invoke(app, ["recommend", CONV, *FAST, "--latency-stat", "p50", "--batch-sizes", "1,8",
                                   "--min-throughput", "1000000", "--out", str(rec_dir)])
    assert rec.exit_code == 1, rec.output  # nothing meets the constraint: exit 1, with the reasons printed
    assert "1.00 M ips" in rec.stdout  # the limit, in K/M/G units
    ana = CliRunner().invoke(app, ["analyze", CONV, *FAST, "--out", str(ana_dir), "--json", str(tmp_path / "a.json")])
    assert ana.exit_code == 0, ana.output
    gpu = CliRunner().invoke(app, ["gpu", "--name", "A100"])
    what_if = CliRunner().invoke(app, ["analyze", CONV, "--static", "--target-gpu", "L4", "--all-layers"])
    assert gpu.exit_code == 0 and what_if.exit_code == 0, (gpu.output, what_if.output)
    texts = {"recommend stdout": rec.stdout, "analyze stdout": ana.stdout, "gpu stdout": gpu.stdout,
             "what-if stdout": what_if.stdout}
    for folder in (rec_dir, ana_dir):
        for name in ("report.md", "report.html"):
            texts[f"{folder.name}/{name}"] = (folder / name).read_text()
    found = {where: _exponents(text) for where, text in texts.items()}
    assert not any(found.values()), found
    # JSON keeps plain numbers: the measured throughput is a float there, not a formatted string.
    doc = json.loads((tmp_path / "a.json").read_text())
    assert isinstance(doc["benchmarks"][0]["throughput_ips"], float)
