"""A buffer's value that the model reads survives the build on meta (loaders/buffer_values.py): the count takes
it as exact, where the data oracle used to make one up (zeros) and the forward failed."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from modelcost import api
from modelcost.analysis.torch_counter import analyze_module
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.torch_loader import load_torch

FIXTURE = Path(__file__).parents[1] / "fixtures" / "buffer_padding.py"


def test_buffers_made_from_python_data_keep_their_values_on_meta() -> None:
    loaded = load_torch(f"{FIXTURE}:padded_conv", LoadOptions(input_shapes={"x": (1, 4, 100)}))
    # stride 3 and kernel 7 from torch.tensor, padding_total = 7 - 3 computed from them (a torch function of two
    # kept values), each wrapped in nn.Buffer (a new tensor object of the same storage)
    assert {k: int(v) for k, v in loaded.buffer_values.items()} == {"stride": 3, "kernel_size": 7,
                                                                    "padding_total": 4}
    assert all(b.is_meta for b in loaded.module.buffers())


def test_a_padding_read_from_buffers_counts_as_on_real_tensors() -> None:
    # 100 samples: frames = ceil((100 - 7 + 4) / 3) = 33, extra = 33 x 3 + 7 - 4 - 100 = 2; padded 4 + 100 + 2 =
    # 106 -> (106 - 7) / 3 + 1 = 34 outputs x 4 channels x 4 x 7 = 3,808 MACs (with zeros made up for the buffers
    # the padding came out wrong and the conv's input too short)
    report = api.analyze_static(f"{FIXTURE}:padded_conv", input_shapes=["x=1x4x100"])
    assert report.compute.complete and report.compute.macs == 3_808 and report.assumptions == []
    loaded = load_torch(f"{FIXTURE}:padded_conv", LoadOptions(input_shapes={"x": (1, 4, 100)}))
    real = analyze_module(loaded.instantiate("cpu"), [torch.randn(1, 4, 100)])
    assert real.compute.macs == report.compute.macs


def test_encodec_counts_completely_and_as_on_the_cpu() -> None:
    """transformers' EnCodec (24 kHz, default config) pads each conv's input by a length computed from its int64
    stride / kernel-size buffers; on meta those read as made-up zeros and the forward failed ("input (W: 24000) is
    too small"). Its count on meta now equals the count of a real CPU forward of 1 s of audio: 2,999,193,600
    MACs, with its 36 weight-normalised convs counted (w = g v / ||v|| in every forward)."""
    pytest.importorskip("transformers")
    report = api.analyze_static(f"{FIXTURE}:encodec_24khz", input_shapes=["input_values=1x1x24000"])
    assert report.compute.complete and report.compute.uncounted_ops == {} and report.assumptions == []
    assert (report.compute.macs, report.compute.flops) == (2_999_193_600, 6_066_860_097)


def test_a_training_step_reads_the_kept_buffer_values_too() -> None:
    # the same padded conv, one training step at batch 1: its forward's 3,808 MACs (as above), no problems and no
    # value made up (train's counter and its memory simulation take the buffers' values as analyze's does)
    report = api.train_static(f"{FIXTURE}:padded_conv", input_shapes=["x=1x4x100"])
    assert report.problems == [] and report.assumptions == []
    assert report.forward_macs == 3_808
