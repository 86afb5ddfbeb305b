"""calibrate's stage clock (bench/calibrate.StageClock): each progress message starts a stage that lasts until the
next, a repeated one sums, and the seconds travel in ``Calibration.stage_s``."""

from __future__ import annotations

from modelcost.bench.calibrate import StageClock
from modelcost.core import calibration as calib


def test_each_stage_lasts_until_the_next_message_and_repeats_sum() -> None:
    # a clock read at 0, 10, 12.5, 30 and 31 s: "gemm" from 0 to 10 and again from 12.5 to 30 (27.5 s in all),
    # "conv" from 10 to 12.5 (2.5 s), "host" from 30 until stop at 31 (1 s); every message still reaches progress
    ticks = iter([0.0, 10.0, 12.5, 30.0, 31.0])
    said: list[str] = []
    clock = StageClock(said.append, clock=lambda: next(ticks))
    for what in ("gemm", "conv", "gemm", "host"):
        clock(what)
    assert clock.stop() == {"gemm": 27.5, "conv": 2.5, "host": 1.0}
    assert said == ["gemm", "conv", "gemm", "host"]
    assert clock.stop() == {"gemm": 27.5, "conv": 2.5, "host": 1.0}  # nothing running: nothing added


def test_stage_seconds_round_trip_and_an_older_file_has_none() -> None:
    from tests.analysis.test_predict import synthetic

    cal = synthetic()
    cal.stage_s = {"GEMM efficiency, fp16": 21.5}
    doc = calib.to_dict(cal)
    assert calib.from_dict(doc).stage_s == {"GEMM efficiency, fp16": 21.5}
    del doc["stage_s"]
    assert calib.from_dict(doc).stage_s == {}


def test_the_size_curves_move_the_bytes_they_say_through_the_kernels_they_mean(monkeypatch) -> None:
    # strided_curve and unvectorized_curve run on the CPU with 'cuda' read as 'cpu' and each call run once (no CUDA
    # graph). For sizes of 4 KiB and 64 KiB, fp16 and fp32: every point is at its size's bytes (half read, half
    # written); the copy's source is read across the destination's fastest dimension
    # (analysis.torch_counter.reads_across), and the product of at least 4 rows by a broadcast row is a
    # non-vectorized call (torch_counter.unvectorized), as the calls they stand for are counted.
    from types import SimpleNamespace

    import torch

    from modelcost.analysis.torch_counter import reads_across, unvectorized
    from modelcost.bench import calibrate

    made: list[torch.Tensor] = []

    def empty(*shape, device=None, **kwargs):
        made.append(torch.empty(*shape, **kwargs))
        return made[-1]

    fake = SimpleNamespace(empty=empty, empty_like=torch.empty_like, mul=torch.mul, float16=torch.float16,
                           float32=torch.float32, finfo=torch.finfo)
    monkeypatch.setattr(calibrate, "graph_time_us", lambda torch_, fn, **_: (fn(), 1.0)[1])
    monkeypatch.setattr(calibrate, "MEMORY_SIZES", (4096, 65536))
    strided = calibrate.strided_curve(fake, lambda _: None)
    copies, made[:] = list(made), []
    broadcast = calibrate.unvectorized_curve(fake, lambda _: None)
    for curve in (strided, broadcast):
        assert {e: [p.size_bytes for p in c] for e, c in curve.items()} == {"2": [4096, 65536], "4": [4096, 65536]}
    for src, dst in zip(copies[::2], copies[1::2], strict=True):  # each size: the source, then the destination
        assert reads_across([src.mT], [dst]) and 2 * dst.numel() * dst.element_size() in (4096, 65536)
    for x, w in zip(made[::2], made[1::2], strict=True):  # each size: the matrix, then the row
        assert x.shape[0] >= 4 and unvectorized([x, w], [torch.empty_like(x)])
