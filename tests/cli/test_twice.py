"""Every command twice with the same output paths, as a nightly job or a Makefile target runs it: the second run
succeeds like the first, and every output it names is the second run's (a new file renamed over the old one, and
for JSON a ``created`` no earlier than the first run's), not the first run's left in place or appended to."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
CONV = str(SAMPLES / "conv_float.onnx")
TIMING = ("--min-time-s", "0", "--min-iters", "3", "--max-time-s", "0.05", "--warmup", "1")
INTERLEAVED = ("--rounds", "2", "--runs-per-block", "3", "--warmup-max-s", "0.1")
CPU = ("--device", "cpu", "--backends", "ort-cpu")


def _commands(d: Path) -> dict[str, tuple[list[str], list[Path]]]:
    """command -> (arguments, the output files it must rewrite on every run)."""
    model = d / "conv_float.onnx"  # quantize writes beside its model: a copy, so the sample folder stays clean
    return {
        "analyze": (["analyze", CONV, *CPU, *TIMING, "--json", str(d / "a.json"), "--out", str(d / "a"),
                     "--samples-csv", str(d / "a.csv")],
                    [d / "a.json", d / "a" / "report.json", d / "a" / "report.md", d / "a" / "report.html",
                     d / "a.csv"]),
        "analyze --static": (["analyze", CONV, "--static", "--json", str(d / "s.json")], [d / "s.json"]),
        "bench": (["bench", CONV, *CPU, *TIMING, "--json", str(d / "b.json"), "--samples-csv", str(d / "b.csv"),
                   "--roofline-plot", str(d / "b.png"), "--out", str(d / "b")],
                  [d / "b.json", d / "b.csv", d / "b" / "report.json", d / "b" / "benchmarks.csv"]),
        "gpu --name": (["gpu", "--name", "A100", "--json", str(d / "g.json")], [d / "g.json"]),
        "compare": (["compare", CONV, CONV, *CPU, *INTERLEAVED, "--out", str(d / "c")],
                    [d / "c" / "report.json", d / "c" / "report.md", d / "c" / "report.html"]),
        "quantize": (["quantize", str(model), "--int8", "--fp16", *CPU, *INTERLEAVED, "--out", str(d / "q")],
                     [d / "conv_float.int8.onnx", d / "conv_float.fp16.onnx",
                      d / "q" / "conv_float.int8" / "report.json", d / "q" / "conv_float.fp16" / "report.json"]),
        "recommend": (["recommend", CONV, *CPU, *TIMING, "--latency-stat", "p50", "--batch-sizes", "1,2",
                       "--out", str(d / "r"), "--samples-csv", str(d / "r.csv")],
                      [d / "r" / "report.json", d / "r" / "report.md", d / "r.csv"]),
        "train --static": (["train", f"{TINY_CNN}:make_model", "-s", "x=2x3x16x16", "--static", "--json",
                            str(d / "t.json"), "--out", str(d / "t")], [d / "t.json", d / "t" / "report.json"]),
        "llm --static": (["llm", "zoo:llama-tiny", "--static", "-p", "16", "-g", "4", "--target-gpu", "H100 SXM",
                          "--json", str(d / "l.json"), "--out", str(d / "l")], [d / "l.json", d / "l" / "report.json"]),
    }


TINY_CNN = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_cnn.py"


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


def _created(path: Path) -> str | None:
    return json.loads(path.read_text()).get("created") if path.suffix == ".json" else None


@pytest.mark.parametrize("name", list(_commands(Path("."))))
def test_every_command_twice_with_the_same_outputs(tmp_path: Path, name: str) -> None:
    shutil.copy(CONV, tmp_path / "conv_float.onnx")
    args, outputs = _commands(tmp_path)[name]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    before = {p: (_stamp(p), _created(p)) for p in outputs}  # every output exists after the first run
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "error" not in second.stderr, second.stderr
    for path in outputs:
        (ino, mtime), created = before[path]
        new_ino, new_mtime = _stamp(path)
        # Written again: a new file renamed over the old (another inode), or at least rewritten (a later mtime).
        assert new_ino != ino or new_mtime > mtime, f"{path.name} was not rewritten by the second run"
        if created is not None:
            assert (_created(path) or "") >= created, path  # ISO 8601 times sort as text
    for path in outputs:
        if path.suffix == ".csv" and path.name in ("a.csv", "b.csv", "r.csv"):
            # The NVML samples CSV is replaced, not appended to: one header line (no GPU here, no rows).
            assert path.read_text().count("backend,precision,batch_size") == 1
    for line in second.stdout.splitlines():
        if line.startswith(("JSON report:", "NVML samples:", "GPU spec JSON:")):
            assert "replaced the previous file" in line, line
    leftovers = [p.name for p in tmp_path.rglob("*") if (p.name.startswith(".") or p.name.endswith(".tmp"))
                 and p.name != ".modelcost-manifest"]  # the record of what modelcost wrote (core.owned) stays
    assert not leftovers, leftovers  # no temporary or staging file left behind
