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
