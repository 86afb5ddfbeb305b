"""The host cost per aten call (bench/calibrate_host.py): the fit, and the calibration nets counted the way the
static count counts a model, so the price fitted on them applies to the calls a model's count holds."""

from __future__ import annotations

import pytest
import torch

from modelcost.analysis.torch_counter import analyze_module
from modelcost.bench.calibrate_host import HOST_NETS, count_ops, fit, host_net
from modelcost.core.calibration import HostCost


def test_the_fit_recovers_known_prices() -> None:
    # Nets timed at exactly 18 us per kernel call and 4 us per view call:
    # (64, 32) -> 64 x 18 + 32 x 4 = 1,280 us; (16, 64) -> 288 + 256 = 544; (12, 44) -> 216 + 176 = 392.
    rows = [(64, 32, 1280.0), (16, 64, 544.0), (12, 44, 392.0)]
    assert fit(rows) == pytest.approx((18.0, 4.0))


def test_a_negative_price_is_refitted_as_zero() -> None:
    # Times that views would explain with a negative price: (10, 0) 100 us, (10, 10) 90 us. The plain fit gives
    # a = 10, b = -1; views are then priced 0 and kernels refitted alone: a = (10 x 100 + 10 x 90) / 200 = 9.5.
    assert fit([(10, 0, 100.0), (10, 10, 90.0)]) == pytest.approx((9.5, 0.0))


@pytest.mark.parametrize("name", [n for n in HOST_NETS if n != "attention"])
def test_calibration_nets_count_as_the_static_count_counts_them(name: str) -> None:
    net, x = host_net(torch, name, "cpu")
    with torch.no_grad():
        on_cpu = count_ops(torch, lambda: net(x))
    meta_net, meta_x = host_net(torch, name, "meta")
    ops = analyze_module(meta_net, [meta_x]).eager_ops
    assert on_cpu == (ops.kernel_ops, ops.view_ops)


def test_attention_counts_one_copy_more_on_meta() -> None:
    # The attention net's 4 blocks: qkv addmm, SDPA (one fused kernel), out addmm = 12 kernel calls on the CPU,
    # whose fused kernel writes its output so that transpose(1, 2).reshape is a view. On meta SDPA's output is
    # contiguous in (batch, heads, seq, dim), so the reshape copies: one kernel call more per block (16).
    net, x = host_net(torch, "attention", "cpu")
    with torch.no_grad():
        assert count_ops(torch, lambda: net(x)) == (12, 44)
    meta_net, meta_x = host_net(torch, "attention", "meta")
    ops = analyze_module(meta_net, [meta_x]).eager_ops
    assert (ops.kernel_ops, ops.view_ops) == (16, 44)


def test_the_host_figures_are_the_median_over_processes() -> None:
    from modelcost.bench.calibrate_host import ProcessHost, across_processes

    # The third H100 lease's calibrating process drew a slow host: eager 30.6 us per kernel call where two other
    # machines read 15.3 and 17.2. Over three processes the median keeps the typical pace: 17.2 (and 1.3 per view).
    here = ProcessHost({"eager": HostCost(30.6, 1.9), "autocast": HostCost(58.4, 0.1)})
    children = iter([ProcessHost({"eager": HostCost(15.3, 1.3), "autocast": HostCost(28.5, 0.1)}),
                     ProcessHost({"eager": HostCost(17.2, 1.0), "autocast": HostCost(31.2, 0.2)})])
    found, notes = across_processes(here, lambda: next(children), processes=3)
    assert (found.cost["eager"].kernel_op_us, found.cost["eager"].view_op_us) == (17.2, 1.3)
    assert found.cost["autocast"].kernel_op_us == 31.2
    assert notes == ["host cost per aten call (eager): 30.6 / 15.3 / 17.2 us in 3 processes, the median kept"]


def test_the_host_bound_net_is_the_median_over_the_processes_that_timed_it() -> None:
    from modelcost.bench.calibrate_host import ProcessHost, across_processes

    # The H200 calibration of 2026-11-29: its own process was slow (eager 18.7 us per call, its children 11.6
    # and 11.8), and ONNX Runtime's host-bound net timed there alone priced a kernel at 12.1 us. Nets of 775, 520
    # and 505 us under ort-cuda: the median is 520; under eager 700, 470, 480: 480.
    here = ProcessHost({"eager": HostCost(18.7, 1.0)}, {"eager": 700.0, "ort-cuda": 775.0})
    children = iter([ProcessHost({"eager": HostCost(11.6, 1.0)}, {"eager": 470.0, "ort-cuda": 520.0}),
                     ProcessHost({"eager": HostCost(11.8, 1.0)}, {"eager": 480.0, "ort-cuda": 505.0})])
    found, notes = across_processes(here, lambda: next(children), processes=3)
    assert found.tiny_us == {"eager": 480.0, "ort-cuda": 520.0}
    assert notes[-1] == "host-bound net under ort-cuda: 775 / 520 / 505 us in 3 processes, the median kept"
    # a child that has no onnxruntime: ort-cuda's median is over the two processes that timed it, (775 + 520) / 2
    children = iter([ProcessHost({}, {"eager": 470.0}), ProcessHost({}, {"eager": 480.0, "ort-cuda": 520.0})])
    found, _ = across_processes(here, lambda: next(children), processes=3)
    assert found.tiny_us == {"eager": 480.0, "ort-cuda": 647.5}


def test_a_child_that_fails_is_left_out_and_said() -> None:
    import subprocess

    from modelcost.bench.calibrate_host import ProcessHost, across_processes

    def fails() -> ProcessHost:
        raise subprocess.CalledProcessError(1, ["python"], stderr="Traceback ...\nRuntimeError: CUDA busy\n")

    here = ProcessHost({"eager": HostCost(16.0, 1.0)})
    found, notes = across_processes(here, fails, processes=3)
    assert found.cost == {"eager": HostCost(16.0, 1.0)}  # the median of one process: its own figures
    assert notes[0] == "host cost: a child process failed (CalledProcessError: RuntimeError: CUDA busy)"
    assert len(notes) == 3 and "16.0 us in 1 processes" in notes[-1]
    # nothing measured: the caller falls back (launch_us alone, timed in calibrate_fusion)
    assert across_processes(ProcessHost(), fails, processes=2) == (ProcessHost(), [notes[0]])


def test_the_child_refuses_without_a_gpu(capsys) -> None:
    import torch

    from modelcost.bench.calibrate_host import main

    if torch.cuda.is_available():
        return
    assert main() == 1 and "no CUDA GPU" in capsys.readouterr().err


def test_a_child_that_times_out_is_said_in_words() -> None:
    import subprocess

    from modelcost.bench.calibrate_host import ProcessHost, across_processes

    def hangs() -> ProcessHost:
        raise subprocess.TimeoutExpired(["python"], 180.0, stderr=b"still importing torch\n")

    _, notes = across_processes(ProcessHost({"eager": HostCost(16.0, 1.0)}), hangs, processes=2)
    assert notes[0] == "host cost: a child process failed (TimeoutExpired: still importing torch)"


def test_a_failure_without_a_message_is_noted_by_its_type() -> None:
    # str(exc) == "": the note's reason was its first line, which an empty message does not have (IndexError
    # inside the handler, and calibrate died); core.text.first_line gives the type alone
    from modelcost.bench.calibrate_host import learn_host_cost

    class Silent:
        def no_grad(self) -> None:
            raise RuntimeError()

    assert learn_host_cost(Silent(), lambda what: None) == ({}, ["host cost: not calibrated (RuntimeError)"])


def test_each_process_keeps_its_pace_beside_its_eager_price() -> None:
    from modelcost.bench.calibrate_host import ProcessHost, across_processes
    from modelcost.core.calibration import HostProcess

    # C5's four processes (H100, device_2026-12-03) read 19.4 / 23.3 / 20.3 / 14.7 us per eager call; the paces
    # here are made up. The median pace of 3,100 / 4,200 / 3,300 / 2,600 is (3,100 + 3,300) / 2 = 3,200; a child
    # that printed no pace (an older modelcost) keeps its price and has no pair.
    here = ProcessHost({"eager": HostCost(19.4, 2.6)}, {}, 3100.0)
    children = iter([ProcessHost({"eager": HostCost(23.3, 2.6)}, {}, 4200.0),
                     ProcessHost({"eager": HostCost(20.3, 2.6)}, {}, 3300.0),
                     ProcessHost({"eager": HostCost(14.7, 2.6)}, {}, 2600.0),
                     ProcessHost({"eager": HostCost(30.0, 2.6)})])
    found, notes = across_processes(here, lambda: next(children), processes=5)
    assert found.processes == (HostProcess(3100.0, 19.4), HostProcess(4200.0, 23.3), HostProcess(3300.0, 20.3),
                               HostProcess(2600.0, 14.7))
    assert found.pace_us == 3200.0 and found.cost["eager"].kernel_op_us == 20.3
    assert notes[-1] == "host pace: 3,100 / 4,200 / 3,300 / 2,600 us in 4 processes (bench.timing.host_pace_us's loop)"


def test_a_child_reports_its_pace_and_an_older_child_none(monkeypatch) -> None:
    import json
    import subprocess

    from modelcost.bench import calibrate_host

    line = {"cost": {"eager": {"kernel_op_us": 12.5, "view_op_us": 2.0}}, "tiny_us": {"eager": 480.0}}
    for doc, pace in ((dict(line, pace_us=2950.5), 2950.5), (line, None)):
        done = subprocess.CompletedProcess([], 0, stdout="loading\n" + json.dumps(doc) + "\n", stderr="")
        monkeypatch.setattr(subprocess, "run", lambda *a, d=done, **k: d)
        child = calibrate_host.run_child()
        assert (child.cost["eager"].kernel_op_us, child.tiny_us, child.pace_us) == (12.5, {"eager": 480.0}, pace)
