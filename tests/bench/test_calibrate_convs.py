"""The conv table's shapes (bench/calibrate.CONVS): the large-M convs land in the classes they were chosen for,
the implicit-GEMM classes where batch-64 CNNs spend their conv time (M = batch x output pixels, N = output
channels, K = input channels per group x kernel area; classes s <= 128 < m <= 512 < l <= 2,048 < xl <= 8,192 < xxl)."""

from __future__ import annotations

from modelcost.bench.calibrate import LARGE_M_CONVS
from modelcost.core.calibration import conv_gemm


def test_large_m_convs_fill_their_classes() -> None:
    # batch 32: M = 32 x 56 x 56 = 100,352 (xxl), 32 x 28 x 28 = 25,088 (xxl), 32 x 14 x 14 = 6,272 (xl),
    # 32 x 32 x 32 = 32,768 (xxl); K of a 3x3 conv of 256 inputs 2,304 (xl), of 1,024 inputs 9,216 (xxl); the
    # depthwise 7x7 conv K = 49 (s) in the grouped class; 16 groups of 16 channels: K = 16 x 9 = 144 (m)
    expected = ["m:xxl n:s k:s", "m:xxl n:m k:m", "m:xxl n:l k:m", "m:xxl n:l k:l", "m:xxl n:m k:l",
                "m:xxl n:m k:xl", "m:xxl n:s k:xl", "m:xl n:l k:l", "m:xl n:l k:xxl", "m:xxl n:l k:s grouped",
                "m:xxl n:m k:m groups"]
    got = [conv_gemm(b * s * s, co, c // g * kk * kk, g, group_classes=True)[0]
           for b, c, co, s, kk, g in LARGE_M_CONVS]
    assert got == expected


def test_a_conv_table_with_large_m_classes_is_another_feature() -> None:
    # the validation table keeps a calibration's features with each row: predictions priced from the large-M
    # classes are another model from those priced from the nearest class of batch 1 and 32
    from modelcost.core.calibration import _large_m

    assert _large_m("m:xxl n:m k:m") and _large_m("m:xxl n:l k:xl")
    # what batch 32 already measured before: M xxl only with N or K of 128 or fewer; grouped classes are apart
    assert not any(_large_m(k) for k in ("m:xxl n:s k:m", "m:xxl n:m k:s", "m:xl n:l k:l", "m:xxl n:m k:m groups",
                                         "m:xxl n:l k:s grouped"))
