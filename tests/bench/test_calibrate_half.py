"""The extra host price of a conv or BatchNorm call in fp16 (bench/calibrate_half.py): its micro-nets count as the
static count counts a model's calls of that class, and the arithmetic (signed difference, failure, median over
processes, the child's JSON line) on the CPU with made-up timings. The CUDA timing itself runs in calibrate only."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from modelcost.analysis.torch_counter import analyze_module
from modelcost.bench import calibrate_half as half
from modelcost.bench import calibrate_host as ch
from modelcost.core.calibration import HostCost
from modelcost.core.eager_ops import HALF_PRICED


@pytest.mark.parametrize("name", HALF_PRICED)
def test_each_class_net_counts_its_layers_in_its_class(name: str) -> None:
    # the calibrated price is per call of the class the count tallies: a net of 16 such layers is 16 such calls
    net, x = half.class_net(torch, name, "meta")
    assert analyze_module(net, [x]).eager_ops.by_class == {name: half.LAYERS}


@pytest.mark.parametrize("name", HALF_PRICED)
def test_each_class_net_runs_on_the_cpu_in_both_configs(name: str) -> None:
    for cast in (False, True):
        net, x = half.class_net(torch, name, "cpu", half=cast)
        with torch.inference_mode():
            y = net(x)
        assert y.shape == (1, half.CHANNELS, half.SIDE, half.SIDE)
        assert y.dtype == (torch.float16 if cast else torch.float32)
        assert y.is_contiguous(memory_format=torch.channels_last) == cast  # torch-half's layout for a conv net


def test_the_extra_per_call_is_the_signed_difference_over_the_calls() -> None:
    # the H100's diagnostic, per call: BatchNorm 16.0 -> 37.9 us; 16 calls: (606.4 - 256.0) / 16 = 21.9 us
    assert half.extra_per_call_us(606.4, 256.0) == pytest.approx(21.9)
    # a conv of 4 groups, 38.9 -> 31.9 us per call: cheaper in fp16 by 7.0 us, kept negative (not floored: a median
    # over floored process figures leans upward)
    assert half.extra_per_call_us(31.9 * 16, 38.9 * 16) == pytest.approx(-7.0)


def fake_clock(times_us: list[float]) -> tuple[Callable[[Callable[[], Any]], float], list[Any]]:
    """A ``time_us`` that runs each forward once (on the CPU) and answers the next of ``times_us``."""
    answers: Iterator[float] = iter(times_us)
    outputs: list[Any] = []

    def time_us(fn: Callable[[], Any]) -> float:
        outputs.append(fn())
        return next(answers)

    return time_us, outputs


def test_each_class_is_timed_in_fp32_and_in_fp16_channels_last() -> None:
    # (fp32, fp16) forwards of 16 calls, in HALF_PRICED's order: conv (400, 480) -> 80 / 16 = 5.0 us;
    # depthwise (200, 440) -> 15.0; grouped (620, 510) -> -110 / 16 = -6.875 (cheaper); BatchNorm (256, 606.4) -> 21.9
    time_us, outputs = fake_clock([400.0, 480.0, 200.0, 440.0, 620.0, 510.0, 256.0, 606.4])
    found, notes = half.half_call_us(torch, time_us, "cpu")
    assert found == pytest.approx({"conv": 5.0, "depthwise_conv": 15.0, "grouped_conv": -6.875,
                                  "batch_norm": 21.9})
    assert notes == []
    assert [o.dtype for o in outputs] == [torch.float32, torch.float16] * 4


def test_a_class_that_cannot_be_timed_is_left_out_and_said() -> None:
    # the third timing (the depthwise net's fp32 forward) fails; conv (400, 480) and BatchNorm (256, 606.4) are
    # timed: 5.0 and 21.9 us, and the depthwise conv is left out with its reason's first line
    answers = iter([400.0, 480.0, None, 256.0, 606.4])

    def flaky(fn: Callable[[], Any]) -> float:
        answer = next(answers)
        if answer is None:
            raise RuntimeError("CUDNN_STATUS_NOT_SUPPORTED\nat Conv_v8.cpp:123")
        fn()
        return answer

    found, notes = half.half_call_us(torch, flaky, "cpu", classes=("conv", "depthwise_conv", "batch_norm"))
    assert found == pytest.approx({"conv": 5.0, "batch_norm": 21.9})
    assert notes == ["half-precision calls: depthwise_conv not timed (RuntimeError: CUDNN_STATUS_NOT_SUPPORTED)"]


def test_the_stage_failing_as_a_whole_is_a_note_not_a_crash() -> None:
    class NoTorch:
        def inference_mode(self) -> None:
            raise RuntimeError("CUDA driver too old")

    said: list[str] = []
    assert ch.learn_half_calls(NoTorch(), said.append) == \
        ({}, ["half-precision calls: not calibrated (RuntimeError: CUDA driver too old)"])
    assert said == ["host price of half-precision calls"]  # its stage in Calibration.stage_s


def test_the_extra_is_the_median_over_the_processes_that_timed_it() -> None:
    # BatchNorm 21.9 / 19.5 / 24.0 us in three processes: the median 21.9; the depthwise conv timed in two (one
    # process could not): (15.0 + 13.0) / 2 = 14.0; a process without the stage (an older child) adds nothing
    here = ch.ProcessHost({"eager": HostCost(16.0, 1.0)}, half_us={"batch_norm": 21.9, "depthwise_conv": 15.0})
    children = iter([ch.ProcessHost({"eager": HostCost(15.0, 1.0)}, half_us={"batch_norm": 19.5}),
                     ch.ProcessHost({"eager": HostCost(17.0, 1.0)}, half_us={"batch_norm": 24.0,
                                                                             "depthwise_conv": 13.0}),
                     ch.ProcessHost({"eager": HostCost(18.0, 1.0)})])
    found, notes = ch.across_processes(here, lambda: next(children), processes=4)
    assert found.half_us == {"batch_norm": 21.9, "depthwise_conv": 14.0}
    assert notes[-1] == ("host price of an fp16 call over fp32, per call: depthwise_conv 15.0 / 13.0; batch_norm "
                         "21.9 / 19.5 / 24.0 us by process, the median kept")


def test_the_child_s_line_carries_the_extra_and_an_older_child_s_has_none(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture) -> None:
    # the child's JSON line round-trips every figure the parent reads (the host-cost test's former twin)
    measured = ch.ProcessHost({"eager": HostCost(11.6, 1.2, ch.HOST_NETS)}, {"eager": 470.0, "ort-cuda": 520.0},
                              3000.0, half_us={"batch_norm": 21.9, "conv": 5.0})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(ch, "measure_process", lambda torch_, progress: (measured, []))
    assert ch.main() == 0
    line = capsys.readouterr().out
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=line))
    assert ch.run_child() == measured
    older = {k: v for k, v in json.loads(line).items() if k != "half_us"}
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=json.dumps(older) + "\n"))
    assert ch.run_child().half_us == {}
