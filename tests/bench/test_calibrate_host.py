"""The host cost per aten call (bench/calibrate_host.py): the fit, and the calibration nets counted the way the
static count counts a model, so the price fitted on them applies to the calls a model's count holds."""

from __future__ import annotations

import pytest
import torch

from modelcost.analysis.torch_counter import analyze_module
from modelcost.bench.calibrate_host import HOST_NETS, count_ops, fit, host_net


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
