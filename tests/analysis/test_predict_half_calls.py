"""torch-half's host time: eager fp32's price per aten call plus the extra its convs and BatchNorms cost the host in
fp16 (analysis/predict.half_calls_us, ``Calibration.half_call_us``, ``EagerOps.by_class``), hand-derived on the
synthetic calibration of test_predict.py."""

from __future__ import annotations

import dataclasses
import json

import pytest

from modelcost.analysis.predict import LayerEstimate, forward_ms, host_ms, predict
from modelcost.analysis.predict_llm import predict_point
from modelcost.core import calibration as calib
from modelcost.core.calibration import HostCost
from modelcost.core.types import EagerOps
from tests.analysis.test_predict import GELU, cost_of, synthetic
from tests.analysis.test_predict_llm import HEAD, Q_DECODE, Q_PREFILL, SDPA_DECODE, SDPA_PREFILL, point

# 100 kernel calls, no views, 2 of them BatchNorms
OPS = EagerOps(100, 0, {"batch_norm": 2})


def priced(half_call_us: dict[str, dict[str, float]] | None = None) -> calib.Calibration:
    """The synthetic calibration with eager and autocast priced at 10 us per kernel call (views 0), and
    ``half_call_us``."""
    return dataclasses.replace(synthetic(), host_us={"eager": HostCost(10.0, 0.0), "autocast": HostCost(10.0, 0.0)},
                               half_call_us=half_call_us or {})


def test_torch_half_adds_the_extra_of_its_counted_calls() -> None:
    cal = priced({"fp16": {"batch_norm": 20.0}})
    # eager fp32: 100 x 10 us = 1,000 us. The cast model in fp16: + 2 BatchNorms x 20 us = 1,040 us.
    assert host_ms(cal, "eager", OPS, 7, "fp32") == pytest.approx(1.0)
    assert host_ms(cal, "eager", OPS, 7, "fp16") == pytest.approx(1.04)
    # a class the calibration did not time adds nothing: 3 depthwise convs at no price
    assert host_ms(cal, "eager", EagerOps(100, 0, {"batch_norm": 2, "depthwise_conv": 3}), 7, "fp16") \
        == pytest.approx(1.04)
    # nothing for: bf16 (not timed), autocast (a price of its own), no precision given (forward_ms's default)
    assert host_ms(cal, "eager", OPS, 7, "bf16") == pytest.approx(1.0)
    assert host_ms(cal, "autocast", OPS, 7, "fp16") == pytest.approx(1.0)
    assert host_ms(cal, "eager", OPS, 7) == pytest.approx(1.0)
    # compile: kernels x launch_us = 7 x 5 us, as before
    assert host_ms(cal, "compile", OPS, 7, "fp16") == pytest.approx(0.035)


def test_a_class_cheaper_in_fp16_takes_time_off_and_the_host_never_goes_below_zero() -> None:
    # a grouped conv 7 us cheaper in fp16 (the H100 diagnostic's four-group conv, 38.9 -> 31.9 us per call):
    # 100 x 10 us - 10 grouped convs x 7 us = 930 us
    cal = priced({"fp16": {"grouped_conv": -7.0}})
    assert host_ms(cal, "eager", EagerOps(100, 0, {"grouped_conv": 10}), 7, "fp16") == pytest.approx(0.93)
    # a made-up extra larger than the price: 1 x 10 us - 2 x 7 us = -4 us, held at 0
    assert host_ms(cal, "eager", EagerOps(1, 0, {"grouped_conv": 2}), 7, "fp16") == 0.0


def test_the_forward_of_torch_half_waits_on_the_dearer_host() -> None:
    cal = priced({"fp16": {"batch_norm": 20.0, "conv": 5.0}})
    layer = LayerEstimate("add", "elementwise", 0.0, 0.003)  # 3 us of GPU time: host-bound
    ops = EagerOps(100, 0, {"batch_norm": 2, "conv": 4})
    # torch-half: 1,000 + 2 x 20 + 4 x 5 = 1,060 us; torch-eager at fp32 1,000 us; torch-cudagraph (eager's
    # fusion, replayed): the kernel + one 20 us replay, no host model
    half_ms, half_over, _ = forward_ms([layer], cal, "torch-half", ops, "fp16")
    assert half_ms + half_over == pytest.approx(1.06)
    eager_ms, eager_over, _ = forward_ms([layer], cal, "torch-eager", ops, "fp32")
    assert eager_ms + eager_over == pytest.approx(1.0)
    assert forward_ms([layer], cal, "torch-cudagraph", ops, "fp16") == pytest.approx((0.003, 0.020, 1))


def test_a_calibration_without_the_field_predicts_exactly_as_before() -> None:
    # A calibration made before half_call_us: torch-half's latency is the same float whether the count tallied its
    # BatchNorms or not (a count from before by_class), and its overhead is the calls at eager's price alone:
    # 100 x 10 us - the GELU's 6.194304 us of memory time (test_predict's test_a_memory_bound_layer_and_fusion).
    cal = priced()
    tallied = dataclasses.replace(cost_of(GELU), eager_ops=OPS)
    untallied = dataclasses.replace(cost_of(GELU), eager_ops=EagerOps(100, 0))
    new = predict(tallied, cal, "torch-half", "fp16", 1, table=[])
    old = predict(untallied, cal, "torch-half", "fp16", 1, table=[])
    assert new.latency_ms == old.latency_ms
    assert new.overhead_ms == pytest.approx(1.0 - 6.194304e-3)
    assert "half_calls" not in new.calibration_features
    # with the field, the same count: + 2 x 20 us of overhead, and the prediction names the feature
    half = predict(tallied, priced({"fp16": {"batch_norm": 20.0}}), "torch-half", "fp16", 1, table=[])
    assert half.overhead_ms - new.overhead_ms == pytest.approx(0.040)
    assert half.calibration_features[-1] == "half_calls"
    # eager fp32 of the same count is unmoved by the field
    fp32 = predict(tallied, priced({"fp16": {"batch_norm": 20.0}}), "torch-eager", "fp32", 1, table=[])
    assert fp32.overhead_ms == predict(tallied, cal, "torch-eager", "fp32", 1, table=[]).overhead_ms


def test_half_call_us_round_trips_through_json_and_an_older_file_has_none() -> None:
    cal = priced({"fp16": {"batch_norm": 21.9, "depthwise_conv": 14.9, "conv": 5.3, "grouped_conv": 0.0}})
    doc = json.loads(json.dumps(calib.to_dict(cal)))
    assert calib.from_dict(doc).half_call_us == cal.half_call_us
    doc.pop("half_call_us")  # a schema-2 file written before the field
    assert calib.from_dict(doc).half_call_us == {}


def test_the_feature_is_held_only_with_the_field() -> None:
    assert calib.features(priced()) == ("host_us",)
    assert calib.features(priced({"fp16": {"batch_norm": 20.0}})) == ("host_us", "half_calls")


def test_a_generation_step_carries_its_classes_and_its_precision() -> None:
    # hf-eager's prefill in fp16 is the eager family at a 2-byte precision: its 2 counted depthwise convs (a
    # Mamba-like block, say) add 2 x 50 us to the host's 300 x 10 us + the loop's argmax (a kernel call, 10 us) and
    # slice (a view, 0 us): 3,010 us without the field, 3,110 with it
    prefill = dataclasses.replace(cost_of(Q_PREFILL, SDPA_PREFILL, HEAD),
                                  eager_ops=EagerOps(300, 0, {"depthwise_conv": 2}))
    decode = dataclasses.replace(cost_of(Q_DECODE, SDPA_DECODE, HEAD), eager_ops=EagerOps(100, 0))
    gqa = point(elements=256, size=512)
    plain = predict_point(prefill, decode, gqa, priced(), "hf-eager", "fp16", table=[])
    half = predict_point(prefill, decode, gqa, priced({"fp16": {"depthwise_conv": 50.0}}), "hf-eager", "fp16",
                         table=[])
    assert plain.ttft.latency_ms == pytest.approx(3.01)
    assert half.ttft.latency_ms == pytest.approx(3.11)
    assert half.tpot.latency_ms == plain.tpot.latency_ms  # the decode step has none
