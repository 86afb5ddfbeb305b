"""The cache folder: its size is reported after a run that used it, ``modelcost cache`` lists it and
``--clear`` empties what modelcost wrote (and nothing else)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.bench.cache import cache_usage, clear_cache, mark_used, usage_note
from modelcost.cli import app
from modelcost.core import owned

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FAST = ["--min-time-s", "0.02", "--min-iters", "5", "--max-time-s", "0.3", "--warmup", "2", "--device", "cpu"]


def _fill(root: Path) -> None:
    """Entries as modelcost writes them (each file recorded in the manifest), and one file of the user's."""
    for rel, size in (("onnx/net-abc/model.onnx", 3000), ("onnx-qdq-int8/k.onnx", 500), ("tensorrt/k.engine", 1000),
                      ("tensorrt/timing.cache", 24)):
        owned.write(root, root / rel, b"x" * size)
    (root / "mine.txt").write_text("not modelcost's")


def test_usage_counts_every_entry_and_clear_leaves_other_files(tmp_path: Path):
    _fill(tmp_path)
    usage = cache_usage(tmp_path)
    # onnx 3000 B in 1 file; onnx-qdq-int8 500 B in 1; tensorrt 1000 + 24 = 1024 B in 2: 4524 B in 4 files
    assert [(e.name, e.size_bytes, e.files) for e in usage.entries] == [
        ("onnx", 3000, 1), ("onnx-qdq-int8", 500, 1), ("tensorrt", 1024, 2)]
    assert (usage.size_bytes, usage.files, usage.others) == (4524, 4, ["mine.txt"])
    removed = clear_cache(tmp_path)
    assert removed.size_bytes == 4524
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    assert cache_usage(tmp_path / "absent").entries == []


def test_note_only_when_the_run_wrote_or_reused_a_file(tmp_path: Path):
    _fill(tmp_path)
    old = time.time() - 3600
    for p in tmp_path.rglob("*"):
        os.utime(p, (old, old))
    started = time.time()
    assert usage_note(tmp_path, started) is None  # nothing touched since the run started
    mark_used(tmp_path / "onnx" / "net-abc" / "model.onnx")  # what a reused export does
    note = usage_note(tmp_path, started)
    assert note == (f"cache: {tmp_path} holds 4.42 KiB (ONNX exports of PyTorch models 2.93 KiB, Q/DQ INT8 / FP8 "
                    "copies of ONNX models 500 B, TensorRT engines and timing caches 1.00 KiB); 'modelcost cache' "
                    "lists it, 'modelcost cache --clear' empties it")  # 4524 / 1024 = 4.42; 3000 / 1024 = 2.93


def test_cache_command_lists_and_clears(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    _fill(tmp_path)
    res = CliRunner().invoke(app, ["cache"])
    assert res.exit_code == 0, res.output
    assert str(tmp_path) in res.output and "onnx-qdq-int8" in res.output and "4.42 KiB" in res.output
    assert "left alone (not written by modelcost): mine.txt" in res.output
    res = CliRunner().invoke(app, ["cache", "--clear"])
    assert res.exit_code == 0, res.output
    assert "removed 4.42 KiB in 4 files" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    res = CliRunner().invoke(app, ["cache"])
    assert "holds nothing modelcost wrote" in res.output


def test_a_bench_run_that_exports_says_where_the_cache_is(tmp_path: Path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(cache))
    factory = tmp_path / "mlp.py"
    factory.write_text("import torch\n\ndef make():\n    return torch.nn.Sequential(torch.nn.Linear(16, 8))\n\n"
                       "def example_inputs(batch_size=1):\n    return [torch.randn(batch_size, 16)]\n")
    for attempt in ("export", "reuse"):
        out = tmp_path / f"{attempt}.json"
        res = CliRunner().invoke(app, ["bench", f"{factory}:make", "--backends", "ort-cpu", "--json", str(out), *FAST])
        assert res.exit_code == 0, res.output
        note = next(n for n in json.loads(out.read_text())["run_notes"] if n.startswith("cache: "))
        size = cache_usage(cache).size_bytes
        assert size > 16 * 8 * 4  # at least the weights: 16 x 8 float32
        assert str(cache) in note and "ONNX exports of PyTorch models" in note and "--clear" in note
        assert "cache: " in res.output and "modelcost cache --clear" in " ".join(res.output.split())
    old = time.time() - 3600  # a later run: the export was made an hour ago
    for p in cache.rglob("*"):
        os.utime(p, (old, old))
    res = CliRunner().invoke(app, ["bench", f"{factory}:make", "--backends", "torch-cpu", *FAST])
    assert res.exit_code == 0 and "cache: " not in res.output  # torch-cpu alone never touches the cache
