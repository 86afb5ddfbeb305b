"""Which aten calls of an eager forward launch a GPU kernel: one rule for the static count
(analysis/torch_counter.py, on the meta device) and for the calibration that prices them (bench/calibrate_host.py,
on the GPU), so the predictor's host model counts what it was calibrated on.

A call launches a kernel when it writes memory: it is an in-place or out= op (its schema mutates an argument),
or one of its tensor outputs lives in a storage none of its tensor inputs live in (a new tensor). Anything else
(a view, a reshape of a contiguous tensor, detach, a metadata read) issues no kernel, but its host time is real:
it is counted apart, as a view op. A call without tensor outputs (``item``, ``size``) is a view op too (a
device-to-host copy is a copy, not a kernel, as the calibration's profiler counts leave copies out).

Some calls cost the host more in half precision than in fp32, beyond the one price per call: on an H100
(benchmarks/results/device_2026-12-04/hostops/host_ops.json, benchmarks/host_ops_diag.py) a BatchNorm of fp16
weights took 37.9 us per call against 16.0 in fp32 (it leaves cuDNN for three native kernels), a depthwise conv
27.5 against 12.6, a dense conv 28 against 22, and a grouped conv 31.9 against 38.9 (fp16 channels_last, as
torch-half runs a conv net, against fp32 contiguous). ``call_class`` names the class of such a call
(``HALF_PRICED``): the count tallies each (``EagerOps.by_class``), calibrate prices each
(bench/calibrate_half.py), the predictor adds the price to torch-half's host time (analysis/predict.host_ms).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

# The classes of aten call whose host price in half precision calibrate measures apart (module doc)
HALF_PRICED = ("conv", "depthwise_conv", "grouped_conv", "batch_norm")
# aten.convolution is what a dispatch mode sees of every F.conv1d/2d/3d and conv_transpose (the rest runs below it);
# _convolution where a caller issues it itself. Arguments: input, weight, bias, stride, padding, dilation,
# transposed, output_padding, groups (both ops alike).
CONV_OPS = frozenset({"aten.convolution", "aten._convolution"})
# An eval BatchNorm as the count sees it: native_batch_norm (what F.batch_norm dispatches, on meta and CPU alike,
# under no_grad with training=False), the _legit ops a torch.export graph holds, and the backend ops a caller may
# issue itself. On the GPU an fp32 BatchNorm runs cudnn_batch_norm below F.batch_norm, one of fp16 weights
# native_batch_norm: the count sees one call per BatchNorm either way.
BATCH_NORM_OPS = frozenset({"aten.native_batch_norm", "aten._native_batch_norm_legit",
                            "aten._native_batch_norm_legit_no_training", "aten._native_batch_norm_legit_functional",
                            "aten.cudnn_batch_norm", "aten.miopen_batch_norm"})


def launches_kernel(mutable: bool, input_storages: Iterable[int], output_storages: Iterable[int]) -> bool:
    """True for a call that writes memory (module doc). Storages are identified by any key that tells two apart
    (a storage's data pointer or its id while the run lasts)."""
    if mutable:
        return True
    inputs = set(input_storages)
    return any(key not in inputs for key in output_storages)


def conv_class(transposed: bool, groups: int, in_channels: int, out_channels: int) -> str:
    """"depthwise_conv", "grouped_conv" or "conv": torch's own test of a depthwise conv (ConvParams::is_depthwise in
    aten/src/ATen/native/Convolution.cpp: not transposed, groups > 1, one input channel per group and a whole number
    of output channels per input channel; a 1-D conv is viewed as 2-D before that test, so Conv1d's count too);
    other convs of groups > 1 are grouped; transposed convs, whatever their groups, are dense convs."""
    if transposed or groups <= 1:
        return "conv"
    if in_channels == groups and out_channels % in_channels == 0:
        return "depthwise_conv"
    return "grouped_conv"


def call_class(op: str, args: Sequence[Any]) -> str | None:
    """The ``HALF_PRICED`` class of one aten call (``op``: its overload packet's name, "aten.convolution"; ``args``
    its positional arguments, tensors with a ``shape``), None for any other call. A conv's input and output channels
    are dimension 1 of its input and dimension 0 of its weight (a transposed one's weight is in x out / groups, but
    a transposed conv is "conv" whatever its channels)."""
    if op in BATCH_NORM_OPS:
        return "batch_norm"
    if op not in CONV_OPS or len(args) < 9:
        return None
    x, weight, transposed, groups = args[0], args[1], bool(args[6]), int(args[8])
    return conv_class(transposed, groups, int(x.shape[1]), int(weight.shape[0]))
