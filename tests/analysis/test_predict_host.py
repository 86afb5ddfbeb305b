"""The pooled host price (analysis/predict_host.py): the median of the stored calibrations of a GPU kind stands in
for a calibration's own price per aten call where it pools enough calibrations and the own price is within the
band; hand-derived on the synthetic calibration of test_predict.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from modelcost.analysis import predict_host
from modelcost.analysis.predict import pooled_from, predict
from modelcost.analysis.predict_host import HostPool, pool_for, with_pooled_host
from modelcost.core import calibration as calib
from modelcost.core.calibration import HostCost
from modelcost.core.types import EagerOps
from tests.analysis.test_predict import GELU, cost_of, synthetic

POOLS = {"G": HostPool(12, {"eager": HostCost(16.0, 2.0), "autocast": HostCost(32.0, 0.5)})}


def own(eager_us: float):  # noqa: ANN201
    return dataclasses.replace(synthetic(), host_us={"eager": HostCost(eager_us, 1.0),
                                                     "autocast": HostCost(30.0, 0.0)})


def test_the_pool_stands_in_within_the_band_and_with_enough_calibrations() -> None:
    # the band is [16 / 2, 16 x 2] = [8, 32] us: 8 and 32 are in, 7.9 and 32.1 out (another sort of host)
    assert [pool_for(own(us), "G", POOLS) is not None for us in (7.9, 8.0, 21.6, 32.0, 32.1)] \
        == [False, True, True, True, False]
    assert pool_for(own(20.0), "other GPU", POOLS) is None
    two = {"G": dataclasses.replace(POOLS["G"], calibrations=2)}  # under MIN_CALIBRATIONS (3)
    assert pool_for(own(20.0), "G", two) is None
    assert pool_for(dataclasses.replace(own(20.0), host_us={}), "G", POOLS) is None  # nothing of its own to judge


def test_the_pooled_calibration_carries_the_pool_s_prices_and_size() -> None:
    cal = with_pooled_host(own(21.0), "G", POOLS)
    assert cal.host_us == POOLS["G"].host_us and cal.host_pooled_from == 12
    assert with_pooled_host(own(40.0), "G", POOLS) == own(40.0)  # outside the band: itself


def test_a_host_bound_prediction_is_priced_at_the_pool_and_says_so() -> None:
    # 100 kernel calls, no views: 100 x 21 us = 2.1 ms of host issue on its own price, 100 x 16 = 1.6 ms pooled;
    # the GELU's kernel takes microseconds, so the host sets the time (no residual: an empty residual table)
    cost = dataclasses.replace(cost_of(GELU), eager_ops=EagerOps(100, 0))
    mine = predict(cost, own(21.0), "torch-eager", "fp32", 1, residuals={}, table=[], repeats=[])
    pooled = predict(cost, with_pooled_host(own(21.0), "G", POOLS), "torch-eager", "fp32", 1, residuals={},
                     table=[], repeats=[])
    assert mine.bound == pooled.bound == "host"
    assert mine.latency_ms == pytest.approx(2.1) and pooled.latency_ms == pytest.approx(1.6)
    assert (mine.host_pooled_from, pooled.host_pooled_from) == (0, 12)
    # a device-bound forward's figure does not come from the host's price: it names no pool
    graph = predict(cost, with_pooled_host(own(21.0), "G", POOLS), "torch-compile-cudagraph", "fp32", 1,
                    residuals={}, table=[], repeats=[])
    assert graph.bound == "device" and graph.host_pooled_from == 0
    # nor does a host-bound forward priced per kernel (ort-cuda: its family's launch_us, not host_us)
    pooled_cal = with_pooled_host(own(21.0), "G", POOLS)
    assert pooled_from(pooled_cal, "ort-cuda", cost.eager_ops, "host") == 0
    assert pooled_from(pooled_cal, "torch-eager", None, "host") == 0  # calls not counted: priced per kernel
    assert pooled_from(pooled_cal, "torch-eager", cost.eager_ops, "host") == 12
    # and the pool's size is never written to a calibration file
    assert "host_pooled_from" not in calib.to_dict(with_pooled_host(own(21.0), "G", POOLS))


def test_the_committed_pool_reads_and_a_bad_file_pools_nothing(tmp_path: Path) -> None:
    committed = predict_host.load()
    assert committed["H100 SXM"].calibrations >= predict_host.MIN_CALIBRATIONS
    bad = tmp_path / "host_prices.json"
    bad.write_text(json.dumps({"schema": "something else", "gpus": {}}))
    assert predict_host.load(str(bad)) == {}
    bad.write_text("{")
    assert predict_host.load(str(bad)) == {}


def test_the_terminal_says_when_the_pooled_price_was_used() -> None:
    from modelcost.report import console_predict

    cost = dataclasses.replace(cost_of(GELU), eager_ops=EagerOps(100, 0))
    mine = predict(cost, own(21.0), "torch-eager", "fp32", 1, residuals={}, table=[], repeats=[])
    pooled = predict(cost, with_pooled_host(own(21.0), "G", POOLS), "torch-eager", "fp32", 1, residuals={},
                     table=[], repeats=[])
    assert "pooled" not in str(console_predict.predictions_table([mine]).caption)
    caption = " ".join(str(console_predict.predictions_table([mine, pooled]).caption).split())
    assert "host-bound configs priced at the host's cost per aten call pooled over 12 stored calibrations" in caption
