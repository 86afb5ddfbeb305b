"""Fusion per backend family (bench/calibrate_fusion.py): the kernel counts come from a fresh process and the
launch price from calibrate's own, which never profiles (a torch.profiler session leaves a process's later
launches ~1.5x slower: benchmarks/results/device_2026-11-26j)."""

from __future__ import annotations

import subprocess

import pytest
import torch

from modelcost.bench import calibrate_fusion as cf

# Each layer one kernel: per net 4 blocks x its layers. linear 4 x 1 = 4, mlp 4 x (gemm + elementwise) = 8,
# residual-ln 4 x 3 = 12, conv 4, conv-bn-relu 4 x 3 = 12, attention 4 x (2 gemm + attention) = 12,
# embedding 4 x (lookup + gemm) = 8; the host-bound net 32 x (Linear + ReLU) = 64 kernels.
ONE_EACH = {"linear": 4, "mlp": 8, "residual-ln": 12, "conv": 4, "conv-bn-relu": 12, "attention": 12,
            "embedding": 8, "tiny": 64}


def test_fusion_and_launch_from_counts_and_host_time() -> None:
    notes: list[str] = []
    fusion, launch = cf.fusion_and_launch({"eager": 1280.0}, {"eager": {"counts": ONE_EACH}}, notes)
    assert fusion["eager"].kernels_per_layer == {k: 1.0 for k in fusion["eager"].kernels_per_layer}
    assert set(fusion["eager"].kernels_per_layer) == {"gemm", "elementwise", "norm", "conv", "attention", "lookup"}
    assert launch == {"eager": pytest.approx(20.0)}  # 1,280 us over 64 kernels
    assert notes == []


def test_a_family_counted_with_an_error_is_noted_once() -> None:
    notes: list[str] = []
    counted = {"compile": {"error": "BackendCompilerFailed: no triton"}, "ort-cuda": {"error": "ImportError: x"}}
    # compile was timed here, so its count's failure is news; ort-cuda could not be timed and was noted then.
    fusion, launch = cf.fusion_and_launch({"compile": 500.0}, counted, notes)
    assert (fusion, launch) == ({}, {})
    assert notes == ["compile: not calibrated (BackendCompilerFailed: no triton)"]


def test_learn_fusion_never_profiles_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def profiles(*_: object, **__: object) -> float:
        raise AssertionError("calibrate's own process profiled")

    monkeypatch.setattr(cf, "count_kernels", profiles)
    monkeypatch.setattr(cf, "tiny_net_us", lambda torch, family, tmp: 640.0)
    fusion, launch, notes = cf.learn_fusion(torch, lambda what: None,
                                            counter=lambda: {f: {"counts": ONE_EACH} for f in cf.FAMILIES})
    assert set(fusion) == set(cf.FAMILIES)
    assert launch == {f: pytest.approx(10.0) for f in cf.FAMILIES}  # 640 us over 64 kernels
    assert notes == []


def test_a_family_timed_across_processes_is_not_timed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # calibrate_host's processes timed the host-bound net under ort-cuda and eager (medians 512 and 1,280 us);
    # only autocast and compile are timed here (640 us). Over the net's 64 kernels: 8, 20 and 10 us per kernel.
    timed: list[str] = []
    monkeypatch.setattr(cf, "count_kernels", lambda *_: 0.0)
    monkeypatch.setattr(cf, "tiny_net_us", lambda torch, family, tmp: timed.append(family) or 640.0)
    _, launch, _ = cf.learn_fusion(torch, lambda what: None,
                                   counter=lambda: {f: {"counts": ONE_EACH} for f in cf.FAMILIES},
                                   tiny_us={"ort-cuda": 512.0, "eager": 1280.0})
    assert timed == ["autocast", "compile"]
    assert launch == {"eager": pytest.approx(20.0), "autocast": pytest.approx(10.0),
                      "compile": pytest.approx(10.0), "ort-cuda": pytest.approx(8.0)}


def test_a_failed_count_process_keeps_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cf, "tiny_net_us", lambda torch, family, tmp: 640.0)

    def fails() -> dict:
        raise subprocess.CalledProcessError(1, ["python"], stderr="Traceback ...\nRuntimeError: CUDA busy\n")

    assert cf.learn_fusion(torch, lambda what: None, counter=fails) == (
        {}, {}, ["fusion: the kernel-count process failed (CalledProcessError: RuntimeError: CUDA busy)"])


def test_each_net_is_counted_from_a_fresh_dynamo(monkeypatch: pytest.MonkeyPatch) -> None:
    # nn.Sequential's forward recompiled for another net's input shape compiles with dynamic shapes: the conv net
    # counted fourth ran 20 kernels where, compiled alone, it runs 13 (H100). So every net starts from a reset.
    events: list[str] = []
    monkeypatch.setattr(torch._dynamo, "reset", lambda: events.append("reset"))

    def built(torch_: object, name: str) -> tuple[None, None]:
        events.append(name)
        return None, None

    monkeypatch.setattr(cf, "_net", built)
    monkeypatch.setattr(cf, "tiny_linear_net", lambda torch_: (None, None))
    monkeypatch.setattr(cf, "_runner", lambda *_: None)
    monkeypatch.setattr(cf, "count_kernels", lambda *_: 1.0)
    counts = cf.kernel_counts(torch, "compile", "/nonexistent")
    assert set(counts) == {*cf.NETS, "tiny"}
    assert events == [e for name in cf.NETS for e in ("reset", name)]
