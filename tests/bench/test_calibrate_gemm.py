"""calibrate's GEMM grid (bench/calibrate_gemm.py), run on the CPU with a stand-in timer: which shapes it times,
which it leaves out, and that each call multiplies contiguous operands of the shape it is filed under."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from modelcost.bench import calibrate_gemm
from modelcost.core.types import GpuSpec


def test_the_grid_times_each_shape_and_leaves_out_the_long_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibrate_gemm, "GRID_M", (64, 128))
    monkeypatch.setattr(calibrate_gemm, "GRID_NK", (128, 256))
    seen: list[tuple[int, int, int]] = []

    def fake_time_us(torch_: Any, fn: Any, target_ms: float) -> float:
        out = fn()
        assert out.is_contiguous()
        seen.append(tuple(out.shape))
        return 7.0

    # fp16 peak 1 TFLOP/s and a 0.01 ms limit: a shape is kept while 2MNK <= 1e7 FLOPs. The largest,
    # 2 x 128 x 256 x 256 = 16,777,216, is left out; the next, 2 x 128 x 256 x 128 = 8,388,608, is kept
    gpu = GpuSpec(name="Fake", architecture="test", peak_tflops={"fp16": 1.0, "fp32": 0.0})
    points = calibrate_gemm.gemm_grid(torch, gpu, lambda what: None, {"fp16": torch.float32, "fp32": torch.float32},
                                      0.01, fake_time_us, device="cpu")
    shapes = {(p.m, p.n, p.k) for p in points}
    assert (128, 256, 256) not in shapes and len(points) == 7  # 2 x 2 x 2 less one; no fp32 (no peak)
    assert {p.precision for p in points} == {"fp16"} and {p.time_us for p in points} == {7.0}
    assert sorted(seen) == sorted((m, n) for m, n, _ in shapes)
