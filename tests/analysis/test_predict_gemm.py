"""The GEMM grid (core/calibration.py ``gemm_grid``; analysis/predict_gemm.py): a GEMM inside it is priced at
the throughput interpolated in log space between the measured corners, not by its class through the wave model."""

from __future__ import annotations

import dataclasses
import math

import pytest

from modelcost.analysis.predict import estimate_layers
from modelcost.analysis.predict_gemm import grid_points, grid_time_us
from modelcost.analysis.predict_transfer import transfer
from modelcost.core import calibration as calib
from modelcost.core.calibration import GemmPoint, features
from modelcost.core.types import LayerCost
from modelcost.hardware.specs import spec_from_table
from tests.analysis.test_predict import GEMM, cost_of, synthetic

CELL = (1024, 2048)


def rate(m: int) -> float:
    """FLOP/s of the test grid's fp16 points: 25 TFLOP/s at M = 1,024 rows, 100 at 2,048 (N, K do not matter)."""
    return {1024: 25e12, 2048: 100e12}[m]


def cell_points(precision: str = "fp16", leave_out: tuple[int, int, int] | None = None) -> list[GemmPoint]:
    """The eight corners of one grid cell, M, N, K each 1,024 or 2,048, timed at ``rate``."""
    return [GemmPoint(precision, m, n, k, 2 * m * n * k / rate(m) * 1e6)
            for m in CELL for n in CELL for k in CELL if (m, n, k) != leave_out]


def with_grid(points: list[GemmPoint]) -> calib.Calibration:
    return dataclasses.replace(synthetic(), gemm_grid=points)


def test_a_measured_corner_comes_back_at_its_time() -> None:
    cal = with_grid(cell_points())
    # 2 x 1024^3 FLOPs at 25 TFLOP/s = 85.89934592 us
    assert grid_time_us(grid_points(cal, "fp16"), 1024, 1024, 1024) == pytest.approx(2 * 1024**3 / 25e12 * 1e6)
    assert grid_time_us(grid_points(cal, "fp16"), 1024, 1024, 1024) == pytest.approx(85.89934592)


def test_between_corners_the_rate_is_interpolated_in_log_space() -> None:
    cal = with_grid(cell_points())
    m = 1024 * math.sqrt(2)  # halfway between 1,024 and 2,048 in log M: weight 1/2 each
    # log rate = (ln 25e12 + ln 100e12) / 2 -> rate = sqrt(25e12 x 100e12) = 50 TFLOP/s, whatever N and K are
    # inside the cell; time = 2 x m x 1536 x 1024 / 50e12 s
    assert grid_time_us(grid_points(cal, "fp16"), m, 1536, 1024) == pytest.approx(2 * m * 1536 * 1024 / 50e12 * 1e6)


def test_outside_the_grid() -> None:
    big = [GemmPoint("fp16", calib.GRID_M[-1], n, k, 2 * calib.GRID_M[-1] * n * k / 400e12 * 1e6)
           for n in CELL for k in CELL]
    cal = with_grid(cell_points() + big)
    # above the largest M (32,768): that row's rate (400 TFLOP/s) is kept, so twice the rows take twice the time
    m = 2 * calib.GRID_M[-1]
    assert grid_time_us(grid_points(cal, "fp16"), m, 1024, 1024) == pytest.approx(2 * m * 1024 * 1024 / 400e12 * 1e6)
    # below the smallest M (64), N or K (128): the grid does not answer (small-M points and classes do)
    assert grid_time_us(grid_points(cal, "fp16"), 32, 1024, 1024) is None
    assert grid_time_us(grid_points(cal, "fp16"), 1024, 64, 1024) is None
    # a cell with none of its corners measured does not answer either
    assert grid_time_us(grid_points(cal, "fp16"), 4096, 1024, 1024) is None
    assert grid_time_us(grid_points(cal, "fp32"), 1024, 1024, 1024) is None  # no fp32 grid


def test_a_corner_left_out_drops_out_of_the_weights() -> None:
    cal = with_grid(cell_points(leave_out=(2048, 1024, 1024)))
    m = 1024 * math.sqrt(2)
    # At N = K = 1,024 only the M = 1,024 corner is left (weight 1/2 of 1/2): its 25 TFLOP/s alone
    assert grid_time_us(grid_points(cal, "fp16"), m, 1024, 1024) == pytest.approx(2 * m * 1024 * 1024 / 25e12 * 1e6)


def test_bf16_takes_the_fp16_grid_when_it_has_none() -> None:
    cal = with_grid(cell_points())
    assert grid_time_us(grid_points(cal, "bf16"), 1024, 1024, 1024) == \
        pytest.approx(grid_time_us(grid_points(cal, "fp16"), 1024, 1024, 1024))


def test_the_predictor_prices_a_gemm_inside_the_grid_by_it_and_a_conv_by_its_class() -> None:
    [est] = estimate_layers(cost_of(GEMM), with_grid(cell_points()), "fp16", 1)
    # M = N = K = 2,048: a corner, 2 x 2048^3 / 100e12 s = 0.17179869184 ms (the class model: 0.4027 ms, in
    # test_predict.test_gemm_at_known_efficiency_and_waves)
    assert est.compute_ms == pytest.approx(2 * 2048**3 / 100e12 * 1e3) and est.calibrated
    conv = LayerCost("conv", "Conv2d", groups=1, macs=64 * 64 * 9 * 56 * 56, params=64 * 64 * 9,
                     output_shapes=[(1, 64, 56, 56)], macs_dtype="float16", status="counted")
    [with_it] = estimate_layers(cost_of(conv), with_grid(cell_points()), "fp16", 1)
    [without] = estimate_layers(cost_of(conv), synthetic(), "fp16", 1)
    assert with_it.compute_ms == without.compute_ms


def test_transfer_moves_grid_times_by_peak_and_waves() -> None:
    h100 = synthetic("H100 SXM", **spec_from_table("H100 SXM").peak_tflops)
    h100 = dataclasses.replace(h100, gpu=dataclasses.replace(h100.gpu, sm_count=132), gemm_grid=cell_points())
    point = h100.gemm_grid[-1]  # M = N = K = 2,048: 16 x 16 = 256 tiles of 128 x 128
    # H200: the same 132 SMs and peaks, so the same time
    assert transfer(h100, spec_from_table("H200")).gemm_grid[-1].time_us == pytest.approx(point.time_us)
    # A100 SXM: fp16 peak 311.87 against 989.43 TFLOP/s; 256 tiles on 132 SMs = 2 waves, 256/264 busy; on 108
    # SMs 3 waves, 256/324 busy: time x (989.43 / 311.87) x (256/264) / (256/324) = x 3.8936
    a100 = spec_from_table("A100 SXM")
    moved = transfer(h100, a100).gemm_grid[-1]
    ratio = 989.42976 / 311.86944 * (256 / 264) / (256 / 324)
    assert moved.time_us == pytest.approx(point.time_us * ratio) and ratio == pytest.approx(3.8936, abs=1e-3)


def test_the_grid_round_trips_and_is_a_feature() -> None:
    cal = with_grid(cell_points())
    assert calib.from_dict(calib.to_dict(cal)).gemm_grid == cal.gemm_grid
    assert "gemm_grid" in features(cal) and "gemm_grid" not in features(synthetic())
    doc = calib.to_dict(synthetic())
    del doc["gemm_grid"]  # a file written before the grid still reads
    assert calib.from_dict(doc).gemm_grid == []


def test_a_dense_pointwise_conv_whose_class_was_not_measured_is_the_gemm_it_is() -> None:
    # A 1 x 1 conv of 1,024 -> 2,048 channels over 32 x 64 pixels: M = 2,048, N = 2,048, K = 1,024, a corner of
    # the grid (100 TFLOP/s): 2 x 2048 x 2048 x 1024 / 100e12 s = 85.89934592 us. The synthetic conv table
    # measured only m:xl n:s k:l, so its class (m:l n:l k:l) is priced from the grid, and counts as calibrated.
    cal = with_grid(cell_points())
    corner_ms = 2 * 2048 * 2048 * 1024 / 100e12 * 1e3
    dense = LayerCost("pw", "Conv2d", macs=2048 * 2048 * 1024, params=2048 * 1024, output_shapes=[(1, 2048, 32, 64)],
                      macs_dtype="float16", status="counted", groups=1, kernel_shape=(1, 1), strides=(1, 1))
    [est] = estimate_layers(cost_of(dense), cal, "fp16", 1)
    assert est.compute_ms == pytest.approx(corner_ms) and est.calibrated
    assert corner_ms == pytest.approx(0.08589934592)
    # a Conv1d of window 1 over 2,048 positions is the same GEMM
    one_d = dataclasses.replace(dense, op="Conv1d", output_shapes=[(1, 2048, 2048)], kernel_shape=(1,), strides=(1,))
    [est] = estimate_layers(cost_of(one_d), cal, "fp16", 1)
    assert est.compute_ms == pytest.approx(corner_ms)
    # ... where a 1 x 1 conv measured its class, the class prices it: 16 x 16 = 256 tiles of 128 on 100 SMs, 3
    # waves, 256 / 300 busy: 2 x 2048 x 2048 x 1024 / (100e12 x 0.4 x 256 / 300) s
    measured = dataclasses.replace(cal, conv_efficiency={"fp16": {"m:l n:l k:l": 0.4}})
    [by_class] = estimate_layers(cost_of(dense), measured, "fp16", 1)
    assert by_class.compute_ms == pytest.approx(2 * 2048 * 2048 * 1024 / (100e12 * 0.4 * 256 / 300) * 1e3)
    # not pointwise, a transposed 1 x 1 conv, a window the count does not know, or grouped (cuDNN's grouped
    # kernels are not their groups' GEMMs): the class model, as before, outside calibration
    for other in (dataclasses.replace(dense, kernel_shape=(3, 3)), dataclasses.replace(dense, op="ConvTranspose2d"),
                  dataclasses.replace(dense, kernel_shape=None), dataclasses.replace(dense, groups=2)):
        [est] = estimate_layers(cost_of(other), cal, "fp16", 1)
        [without] = estimate_layers(cost_of(other), synthetic(), "fp16", 1)
        assert est.compute_ms == without.compute_ms and not est.calibrated


def test_a_gemm_of_fewer_rows_than_the_grid_lies_between_the_small_m_points_and_the_grid() -> None:
    # A Linear of 1,024 -> 1,024 features over 40 tokens (M 40, N = K = 1,024), fp16: more rows than the small-M
    # points (GEMV_MAX_M = 16) and fewer than the grid's first M (64). The grid: M = 64 at N = K = 1,024 and 2,048,
    # each 2 x 64 x N x K / 1 TFLOP/s (read-bound: 134.217728 us at 1,024); the small-M point at 16 rows of the
    # 1,024 x 1,024 fp16 weight (2 MiB) timed at 100 us. Linear in M between them:
    # 100 + (40 - 16) / (64 - 16) x (134.217728 - 100) = 117.108864 us.
    grid = [GemmPoint("fp16", 64, n, k, 2 * 64 * n * k / 1e12 * 1e6) for n in CELL for k in CELL]
    gemv = [GemmPoint("fp16", 16, 1024, 1024, 100.0)]
    cal = dataclasses.replace(synthetic(), gemm_grid=grid, gemv=gemv)
    few = LayerCost("fc", "Linear", macs=40 * 1024 * 1024, params=1024 * 1024, output_shapes=[(40, 1024)],
                    macs_dtype="float16", status="counted")
    [est] = estimate_layers(cost_of(few), cal, "fp16", 1)
    assert est.compute_ms == pytest.approx(0.117108864) and est.calibrated
    # without small-M points, the grid's time at 64 rows alone: 134.217728 us (the class model priced it by its
    # FLOPs from 128 rows' class)
    [alone] = estimate_layers(cost_of(few), dataclasses.replace(cal, gemv=[]), "fp16", 1)
    assert alone.compute_ms == pytest.approx(0.134217728)
    # at the ends: 16 rows are the small-M points' (100 us), 64 the grid's
    from modelcost.analysis.predict import few_rows_us

    points = grid_points(cal, "fp16")
    assert few_rows_us(cal, "fp16", points, 16, 1024, 1024) is None  # gemv_us prices it
    assert few_rows_us(cal, "fp16", points, 64, 1024, 1024) is None  # the grid prices it
    assert few_rows_us(cal, "fp16", points, 17, 1024, 1024) == pytest.approx(100 + 1 / 48 * 34.217728)
    # a weight the grid does not reach (N 64 < 128): the class model, as before
    assert few_rows_us(cal, "fp16", points, 40, 64, 1024) is None
