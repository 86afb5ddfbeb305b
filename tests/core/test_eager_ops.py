"""The classes of aten call whose host price differs in half precision (core/eager_ops.call_class): one rule for the
count that tallies them and the calibration that prices them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from modelcost.core.eager_ops import HALF_PRICED, call_class, conv_class


def shaped(*dims: int) -> SimpleNamespace:
    return SimpleNamespace(shape=dims)


def conv_args(in_channels: int, out_channels: int, groups: int, transposed: bool = False) -> tuple:
    """aten.convolution's positional arguments: input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups (a weight of out x in / groups x 3 x 3; a transposed one in x out / groups)."""
    weight = shaped(in_channels, out_channels // groups, 3, 3) if transposed else \
        shaped(out_channels, in_channels // groups, 3, 3)
    return (shaped(1, in_channels, 8, 8), weight, None, [1, 1], [1, 1], [1, 1], transposed, [0, 0], groups)


@pytest.mark.parametrize(("in_channels", "out_channels", "groups", "transposed", "expected"), [
    (32, 32, 1, False, "conv"),  # dense
    (32, 32, 32, False, "depthwise_conv"),  # one input channel per group: MobileNet's
    (32, 64, 32, False, "depthwise_conv"),  # a channel multiplier of 2: still torch's depthwise test
    (32, 48, 32, False, "grouped_conv"),  # 48 outputs are not a whole number per input channel
    (32, 32, 4, False, "grouped_conv"),  # ResNeXt's: 8 channels per group
    (32, 32, 32, True, "conv"),  # transposed: a dense conv whatever its groups
    (32, 16, 1, True, "conv"),
])
def test_a_conv_s_class_follows_torch_s_depthwise_test(in_channels: int, out_channels: int, groups: int,
                                                        transposed: bool, expected: str) -> None:
    assert conv_class(transposed, groups, in_channels, out_channels) == expected
    assert call_class("aten.convolution", conv_args(in_channels, out_channels, groups, transposed)) == expected
    assert call_class("aten._convolution", conv_args(in_channels, out_channels, groups, transposed)) == expected


def test_eval_batch_norms_are_one_class_and_other_calls_none() -> None:
    x, c = shaped(1, 8, 4, 4), shaped(8)
    for op in ("aten.native_batch_norm", "aten._native_batch_norm_legit_no_training", "aten.cudnn_batch_norm"):
        assert call_class(op, (x, c, c, c, c, False, 0.1, 1e-5)) == "batch_norm"
    assert call_class("aten.native_group_norm", (x, c, c, 1, 8, 16, 2, 1e-5)) is None
    assert call_class("aten.relu", (x,)) is None
    assert call_class("sdpa", ()) is None  # a composite's kind
    assert set(HALF_PRICED) == {"conv", "depthwise_conv", "grouped_conv", "batch_norm"}
