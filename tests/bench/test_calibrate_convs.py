"""The conv table's shapes (bench/calibrate.CONVS): the large-M convs land in the classes they were chosen for,
the implicit-GEMM classes where batch-64 CNNs spend their conv time (M = batch x output pixels, N = output
channels, K = input channels per group x kernel area; classes s <= 128 < m <= 512 < l <= 2,048 < xl <= 8,192 < xxl)."""

from __future__ import annotations

import math

import pytest

from modelcost.bench.calibrate import CONVS, LARGE_M_CONVS, WINDOW_CONVS, conv_shapes
from modelcost.core.calibration import conv_gemm, window_sort


def test_large_m_convs_fill_their_classes() -> None:
    # batch 32: M = 32 x 56 x 56 = 100,352 (xxl), 32 x 28 x 28 = 25,088 (xxl), 32 x 14 x 14 = 6,272 (xl),
    # 32 x 32 x 32 = 32,768 (xxl); K of a 3x3 conv of 256 inputs 2,304 (xl), of 1,024 inputs 9,216 (xxl); the
    # depthwise 7x7 conv K = 49 (s) in the grouped class; 16 groups of 16 channels: K = 16 x 9 = 144 (m)
    expected = ["m:xxl n:s k:s", "m:xxl n:m k:m", "m:xxl n:l k:m", "m:xxl n:l k:l", "m:xxl n:m k:l",
                "m:xxl n:m k:xl", "m:xxl n:s k:xl", "m:xl n:l k:l", "m:xl n:l k:xxl", "m:xxl n:l k:s grouped",
                "m:xxl n:m k:m groups", "m:xxl n:m k:l"]
    # the four dense 3 x 3 convs in the 3 x 3 classes (bench/calibrate._conv_rows keeps them apart); the last,
    # 128 -> 256 at 28 x 28: K = 128 x 9 = 1,152 (l), N 256 (m), the class of AlexNet's 192 -> 384 at batch 64
    expected[5:7] = ["m:xxl n:m k:xl 3x3", "m:xxl n:s k:xl 3x3"]
    expected[8] = "m:xl n:l k:xxl 3x3"
    expected[11] = "m:xxl n:m k:l 3x3"
    got = [conv_gemm(b * s * s, co, c // g * kk * kk, g, group_classes=True, three_by_three=g == 1 and kk == 3)[0]
           for b, c, co, s, kk, g in LARGE_M_CONVS]
    assert got == expected


def test_the_3x3_classes_are_measured_at_both_batches() -> None:
    # CONVS's dense 3 x 3 convs: four ResNet stages at batch 1 and 32, and four large-M ones at batch 32; at
    # batch 1 M = 56^2 = 3,136 (xl), 28^2 = 784 (l), 14^2 = 196 (m), 7^2 = 49 (s); K = 9 x 64 = 576 (l), 9 x 128 =
    # 1,152 (l), 9 x 256 = 2,304 (xl), 9 x 512 = 4,608 (xl)
    three = [(b, c, s) for b, c, co, s, kk, g in CONVS if kk == 3 and g == 1]
    assert len(three) == 12 and sorted({b for b, _, _ in three}) == [1, 32]
    batch1 = [conv_gemm(s * s, c, 9 * c, 1, three_by_three=True)[0] for b, c, s in three if b == 1]
    assert batch1 == ["m:xl n:s k:l 3x3", "m:l n:s k:l 3x3", "m:m n:m k:xl 3x3", "m:s n:m k:xl 3x3"]


def test_a_conv_table_with_large_m_classes_is_another_feature() -> None:
    # the validation table keeps a calibration's features with each row: predictions priced from the large-M
    # classes are another model from those priced from the nearest class of batch 1 and 32
    from modelcost.core.calibration import _large_m

    assert _large_m("m:xxl n:m k:m") and _large_m("m:xxl n:l k:xl")
    # what batch 32 already measured before: M xxl only with N or K of 128 or fewer; grouped classes are apart
    assert not any(_large_m(k) for k in ("m:xxl n:s k:m", "m:xxl n:m k:s", "m:xl n:l k:l", "m:xxl n:m k:m groups",
                                         "m:xxl n:l k:s grouped"))


def test_the_conv_table_is_timed_with_cudnns_autotuner_on(monkeypatch) -> None:
    # the torch backends run convs with cudnn.benchmark on (bench/backends/torch_backends.py); a table timed by
    # cuDNN's heuristics alone priced convs by algorithms the models never ran. Restored afterwards.
    import torch

    from modelcost.bench import calibrate
    from modelcost.hardware.specs import spec_from_table

    seen = []
    monkeypatch.setattr(calibrate, "_conv_rows", lambda *a, **kw: seen.append(torch.backends.cudnn.benchmark) or {})
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", False)
    calibrate.conv_table(torch, spec_from_table("H100 SXM"), 128, lambda _: None)
    assert seen == [True, True, True] and torch.backends.cudnn.benchmark is False


def test_group_channels_spans_the_grouped_convs_calibrate_measures() -> None:
    # CONVS's convs of several channels per group (1 < groups < out channels): 128 / 32 = 4, 256 / 32 = 8,
    # 512 / 32 = 16, 1024 / 32 = 32 and 256 / 4 = 64 at batch 1 and 32, and 256 / 16 = 16 at large M; a grouped
    # conv of more output channels per group than the widest is priced as its groups' GEMMs (conv_gemm)
    from modelcost.core.calibration import GROUP_CHANNELS

    per_group = {co // g for b, c, co, s, kk, g in CONVS if 1 < g < co}
    assert (min(per_group), max(per_group)) == GROUP_CHANNELS == (4, 64)


def test_window_convs_fill_classes_of_their_own_sorts() -> None:
    # 3-D: M = batch x frames x pixels. R3D's 3 x 3 x 3 64 -> 64 over 4 x 8 x 56 x 56: M = 100,352 (xxl), N 64 (s),
    # K = 64 x 27 = 1,728 (l); 256 -> 256 over 4 x 4 x 14 x 14: M = 3,136 (xl), N 256 (m), K = 6,912 (xl); X3D's
    # pointwise 64 -> 256 over 4 x 8 x 28 x 28: M = 25,088 (xxl), N 256 (m), K 64 (s); its depthwise 3 x 3 x 3 of
    # 216 channels over 4 x 16 x 14 x 14: M = 12,544 (xxl), N 216 (m), K 27 (s), the depthwise 3-D sort.
    # Non-square 2-D at batch 32: TextNet's 1 x 3 of 64 at 56 x 56: M = 100,352, N 64, K 192 (m), the class its
    # 64-channel stage fell in beside a 7 x 7 stem; 3 x 1 of 256 at 14 x 14: M = 6,272 (xl), N 256, K 768 (l);
    # Inception's 1 x 7 of 192 at 17 x 17: M = 9,248 (xxl), N 192 (m), K = 1,344 (l).
    # Long grouped 1-D: wav2vec 2.0's positional conv, 768 -> 768, 128 taps, 16 groups: N 768 (l), K = 48 x 128 =
    # 6,144 (xl); M = 49 (s) at batch 1 over 49 frames, 499 (m) over 499, 32 x 49 = 1,568 (l), 64 x 49 = 3,136 (xl).
    got = [conv_gemm(b * math.prod(size), co, c // g * math.prod(w), g, group_classes=True,
                     window=window_sort(w, g, co))[0] for b, c, co, size, w, g in WINDOW_CONVS]
    assert got == ["m:xxl n:s k:l 3d", "m:xl n:m k:xl 3d", "m:xxl n:m k:s 3d", "m:xxl n:m k:s grouped-3d",
                   "m:xxl n:s k:m 1xk", "m:xl n:m k:l 1xk", "m:xxl n:m k:l 1xk",
                   *(f"m:{m} n:l k:xl grouped-1d-long" for m in ("s", "m", "l", "xl"))]
    # the square 2-D convs keep their classes: CONVS as (size, size) and (window, window), the window convs last
    assert conv_shapes()[:len(CONVS)] == [(b, c, co, (s, s), (kk, kk), g) for b, c, co, s, kk, g in CONVS]
    assert conv_shapes()[len(CONVS):] == WINDOW_CONVS


def test_the_unaligned_conv_stage_times_each_conv_against_its_padded_self(monkeypatch) -> None:
    # unaligned_conv_factors on the CPU: 'cuda' read as the CPU, every dtype as fp32 (the CPU's convs), each call
    # run once (no CUDA graph) by a clock that reads 2 us for a conv whose output channels miss 8 and 1 us for one
    # that does not, so each precision's median ratio is 2 / 1 = 2.0. Each conv is timed, then itself padded:
    # 78 -> 80 (78 = 9 x 8 + 6), 142 -> 144 (17 x 8 + 6), 46 -> 48 (5 x 8 + 6), every padded count a multiple of 8;
    # channels-last at fp16 and bf16, contiguous at TF32 (the cast backends' layouts), TF32 allowed in cuDNN for tf32
    # alone, cuDNN's autotuner on while timed, and both restored afterwards.
    from types import SimpleNamespace

    import torch

    from modelcost.bench import calibrate
    from modelcost.bench.calibrate import UNALIGNED_CONVS
    from modelcost.hardware.specs import spec_from_table

    cudnn = torch.backends.cudnn
    inputs: list[torch.Tensor] = []
    seen: list[tuple[int, int, bool, bool, bool]] = []  # (in, out channels, channels-last, TF32 in cuDNN, autotuned)

    def randn(*shape, device=None, dtype=None):
        inputs.append(torch.randn(*shape, dtype=dtype))
        return inputs[-1]

    def timed(torch_, fn, **_):
        out = fn()  # a channels-last conv's output is channels-last, not contiguous (2 x C x 6 x 6)
        seen.append((inputs[-1].shape[1], out.shape[1], out.is_contiguous(memory_format=torch.channels_last)
                     and not out.is_contiguous(), cudnn.conv.fp32_precision == "tf32", cudnn.benchmark))
        return 2.0 if out.shape[1] % 8 else 1.0

    fake = SimpleNamespace(randn=randn, nn=torch.nn, inference_mode=torch.inference_mode, float16=torch.float32,
                           bfloat16=torch.float32, float32=torch.float32)
    monkeypatch.setattr(calibrate, "graph_time_us", timed)
    monkeypatch.setattr(calibrate, "UNALIGNED_CONVS", ((2, 78, 78, 6, 3), (2, 78, 142, 6, 1), (2, 46, 46, 6, 3)))
    monkeypatch.setattr(cudnn, "benchmark", False)
    tf32_before = cudnn.conv.fp32_precision
    said: list[str] = []
    got = calibrate.unaligned_conv_factors(fake, spec_from_table("H100 SXM"), said.append)
    assert got == {"fp16": 2.0, "bf16": 2.0, "tf32": 2.0}  # one ratio per precision of GEMM_ALIGN
    assert said == ["unaligned convs, fp16", "unaligned convs, bf16", "unaligned convs, tf32"]
    channels = [(c, co) for c, co, *_ in seen]
    assert channels == [(78, 78), (80, 80), (78, 142), (80, 144), (46, 46), (48, 48)] * 3
    assert all(c % 8 == 0 and co % 8 == 0 for c, co in channels[1::2])
    assert [(last, tf32, tuned) for _, _, last, tf32, tuned in seen] == \
        [(True, False, True)] * 12 + [(False, True, True)] * 6
    assert cudnn.benchmark is False and cudnn.conv.fp32_precision == tf32_before
    # the real shapes: at batch 32, channels even but neither a multiple of 8 nor of TF32's 4
    assert all(b == 32 and c % 2 == co % 2 == 0 and c % 4 and co % 4 for b, c, co, _, _ in UNALIGNED_CONVS)


@pytest.mark.gpu
def test_the_conv_table_times_every_window_on_the_gpu() -> None:
    # Every conv of conv_shapes runs on the GPU at each table precision (fp16 channels-last, 3-D ones
    # channels_last_3d) and lands in a class of its sort with an efficiency above nothing.
    import torch

    from modelcost.bench import calibrate
    from modelcost.core.calibration import LONG_GROUPED, NON_SQUARE, VOLUMETRIC, VOLUMETRIC_GROUPED, key_sort
    from modelcost.runs.gpu import this_gpu

    table = calibrate.conv_table(torch, this_gpu(), 128, lambda _: None)
    for precision in calibrate.CONV_PRECISIONS:
        rows = table[precision]
        assert {VOLUMETRIC, VOLUMETRIC_GROUPED, NON_SQUARE, LONG_GROUPED} <= {key_sort(k) for k in rows}
        assert all(v > 0 for v in rows.values())


def test_conv_us_runs_each_window_by_the_conv_of_its_rank(monkeypatch) -> None:
    # conv_us on the CPU ('cuda' read as the CPU, the graph clock replaced by one that runs the call once): a 1-D
    # window is a Conv1d, a 2-D one a Conv2d, a 3-D one a Conv3d, each padded to keep its size (128 taps padded 64
    # each side give 49 + 128 - 128 + 1 = 50 frames, as wav2vec 2.0's positional conv before it drops the last);
    # channels-last leaves the 1-D conv's 3-D tensors as they are (torch has no channels-last of rank 3).
    from types import SimpleNamespace

    import torch

    from modelcost.bench import calibrate

    shapes: list[tuple[int, ...]] = []

    def timed(torch_, fn, **_):
        shapes.append(tuple(fn().shape))
        return 1.0

    fake = SimpleNamespace(randn=lambda *shape, device=None, dtype=None: torch.randn(*shape, dtype=dtype),
                           nn=torch.nn, inference_mode=torch.inference_mode)
    monkeypatch.setattr(calibrate, "graph_time_us", timed)
    for shape in ((1, 32, 32, (49,), (128,), 16), (1, 8, 8, (6, 6), (3, 3), 1), (1, 8, 8, (2, 6, 6), (3, 3, 3), 8)):
        assert calibrate.conv_us(fake, shape, torch.float32, channels_last=True) == 1.0
    assert shapes == [(1, 32, 50), (1, 8, 6, 6), (1, 8, 2, 6, 6)]
