"""Accuracy metrics against the reference, derived by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from modelcost.bench.accuracy import compare, looks_like_class_scores


def test_metrics_of_a_known_difference() -> None:
    ref = [np.array([[3.0, 4.0], [1.0, 0.0]], dtype=np.float32)]
    out = [np.array([[3.0, 4.5], [1.0, 0.0]], dtype=np.float32)]
    acc = compare(out, ref, batch_size=2, reference_name="ref")
    # |diff| max = 0.5 at an element whose reference is 4 -> rel 0.125; the zero element's floor is 1e-3 * 4
    assert acc.max_abs_err == pytest.approx(0.5)
    assert acc.max_rel_err == pytest.approx(0.125)
    # cosine: <y, r> = 9 + 18 + 1 = 28; |y| = sqrt(9 + 20.25 + 1) = sqrt(30.25) = 5.5; |r| = sqrt(26)
    assert acc.cosine == pytest.approx(28 / (5.5 * math.sqrt(26)))
    # [batch=2, classes=2] looks like class scores: row argmaxes (1, 0) agree in both rows
    assert acc.top1_agreement == 1.0 and acc.reference == "ref"


def test_top1_counts_disagreeing_rows() -> None:
    ref = [np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.1], [0.0, 5.0]])]
    out = [np.array([[0.0, 1.0], [0.0, 1.0], [0.2, 0.1], [0.0, 5.0]])]
    assert compare(out, ref, batch_size=4, reference_name="r").top1_agreement == 0.75  # row 2 flipped


def test_no_top1_for_outputs_that_are_not_class_scores() -> None:
    ref = [np.ones((2, 3, 4), dtype=np.float32)]
    acc = compare([r.copy() for r in ref], ref, batch_size=2, reference_name="r")
    assert acc.top1_agreement is None and acc.max_abs_err == 0.0 and acc.cosine == 1.0
    assert not looks_like_class_scores(np.ones((2, 1)), 2)  # one class: not scores
    assert not looks_like_class_scores(np.ones((3, 10)), 2)  # first dim is not the batch


def test_small_reference_values_are_measured_against_the_floor() -> None:
    ref = [np.array([1000.0, 1e-9])]
    out = [np.array([1000.0, 1e-9 + 0.5])]
    # floor = 1e-3 * 1000 = 1; rel of the second element = 0.5 / max(1e-9, 1) = 0.5 (not 5e8)
    assert compare(out, ref, batch_size=2, reference_name="r").max_rel_err == pytest.approx(0.5)


def test_mismatched_outputs_are_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        compare([np.ones(3)], [np.ones(4)], batch_size=1, reference_name="r")
    with pytest.raises(ValueError, match="outputs"):
        compare([np.ones(3)], [np.ones(3), np.ones(3)], batch_size=1, reference_name="r")


def test_chunks_add_up_to_the_whole_and_a_nan_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import modelcost.bench.accuracy as accuracy

    # Two outputs over several chunks of 4 elements: the figures are those of the whole, concatenated vectors.
    # y = (1..10) and (2, 2); r = y except element 7 (8 -> 6) and the last (2 -> 1)
    # max abs = 2 (8 vs 6, and 2 vs 1 is 1); rel = 2/6 at that element and 1/1 = 1 at the last -> max rel 1
    # <y, r> = sum(k^2, 1..10) - 64 + 48 + 4 + 2 = 385 - 16 + 6 = 375; |y|^2 = 385 + 8 = 393; |r|^2 = 385 - 28 + 5 = 362
    monkeypatch.setattr(accuracy, "CHUNK", 4)
    y = [np.arange(1.0, 11.0), np.array([2.0, 2.0])]
    r = [y[0].copy(), np.array([2.0, 1.0])]
    r[0][7] = 6.0
    acc = compare(y, r, batch_size=1, reference_name="r")
    assert acc.max_abs_err == 2.0 and acc.max_rel_err == 1.0
    assert acc.cosine == pytest.approx(375 / math.sqrt(393 * 362))
    # an overflowed fp16 output (NaN) reads as NaN, never as a small error from the chunks around it
    y[0][2] = np.nan
    assert math.isnan(compare(y, r, batch_size=1, reference_name="r").max_abs_err)


def test_torch_outputs_give_the_same_figures_where_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CUDA session's outputs are compared on the GPU; the torch path is the numpy one's sums, here on the CPU with
    # chunks of 4 elements (the figures of test_chunks_add_up_to_the_whole_and_a_nan_is_kept), fp16 outputs included.
    import torch

    import modelcost.bench.accuracy as accuracy

    monkeypatch.setattr(accuracy, "DEVICE_CHUNK", 4)
    y = [np.arange(1.0, 11.0), np.array([2.0, 2.0])]
    r = [y[0].copy(), np.array([2.0, 1.0])]
    r[0][7] = 6.0
    acc = compare([torch.from_numpy(a).half() for a in y], [a.astype(np.float32) for a in r], batch_size=1,
                  reference_name="r")
    assert acc.max_abs_err == 2.0 and acc.max_rel_err == 1.0
    assert acc.cosine == pytest.approx(375 / math.sqrt(393 * 362))
    # class scores: top-1 by row, as in test_top1_counts_disagreeing_rows
    ref = [np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.1], [0.0, 5.0]])]
    out = [torch.tensor([[0.0, 1.0], [0.0, 1.0], [0.2, 0.1], [0.0, 5.0]])]
    assert compare(out, ref, batch_size=4, reference_name="r").top1_agreement == 0.75
    y[0][2] = np.nan
    assert math.isnan(compare([torch.from_numpy(a) for a in y], r, batch_size=1, reference_name="r").max_abs_err)


def test_ort_outputs_reach_torch_without_a_copy() -> None:
    # ONNX Runtime's bound outputs become torch tensors through DLPack (compared on the GPU where they live); with
    # nothing bound the session says so and the sweep takes the host copy instead.
    import onnxruntime as ort
    import torch

    from modelcost.bench.backends.ort import OrtSession

    session = OrtSession.__new__(OrtSession)
    session.device, session._io = "cpu", object()
    value = ort.OrtValue.ortvalue_from_numpy(np.arange(6, dtype=np.float16).reshape(2, 3))
    session._values = [value]
    (got,) = session.device_outputs()
    assert got.dtype == torch.float16 and got.tolist() == [[0, 1, 2], [3, 4, 5]]
    session._values = []
    with pytest.raises(ValueError, match="no outputs bound"):
        session.device_outputs()
