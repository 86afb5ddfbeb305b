"""The host's extra price of a conv or BatchNorm call in half precision (issue 28): ``Calibration.half_call_us``.

torch-half (the model cast with .half(); a net of 2-D / 3-D convs run channels_last, bench/backends/
torch_backends.py) is the eager family, priced per aten call at eager fp32's price (bench/calibrate_host.py). On an
H100 its conv nets ran at batch 1, both host-bound, 1.30x eager fp32's time (the median of 22 pairs of the held-out
sets 11-16), its transformers 0.94x, where the one price predicts 1.02x for all. benchmarks/host_ops_diag.py timed
the calls one by one (benchmarks/results/device_2026-12-04/hostops/host_ops.json), fp32 contiguous against fp16
channels_last, in host microseconds per call: a BatchNorm 16.0 -> 37.9 (1.1 -> 3.1 kernels: a BatchNorm of fp16
weights leaves cuDNN for three native kernels), a depthwise 3 x 3 conv 12.6 -> 27.5 (1.1 -> 2.1 kernels), dense
3 x 3 and 1 x 1 convs 22.7 -> 27.9 and 22.2 -> 28.1, a conv of 4 groups 38.9 -> 31.9; ReLU, add and cat about
equal. So calibrate prices each class of core/eager_ops.HALF_PRICED apart, and the predictor adds
extra x the count's calls of that class to torch-half's host time (analysis/predict.half_calls_us).

How: per class, a stack of ``LAYERS`` layers of it (``class_net``: ``CHANNELS`` channels of ``SIDE`` x ``SIDE``,
batch 1, the diagnostic's size: every kernel a few microseconds, so the host sets the pace), one forward timed
host-bound as calibrate_host times its nets (the caller's ``time_us``: CUDA events around one forward, the median of
30 after warm-up, the layers' calls issued back to back), under ``inference_mode`` with cuDNN's autotuner on as the
torch backends run convs: once in fp32 contiguous (TF32 off, as eager fp32 runs) and once cast to fp16 channels_last
(as torch-half runs it). The extra per call is (fp16 time - fp32 time) / ``LAYERS``, signed: a grouped conv can be
cheaper in fp16 (the diagnostic's four-group conv, five kernels in fp32 against two). It is measured in each of
calibrate_host's processes and the median across them kept, as its other figures are. It is not floored at 0: the
first calibration that floored each process's figure (C8, benchmarks/results/device_2026-12-05) read the grouped
conv 2.5 / 6.4 / 5.6 / 0.0 us, and a median over floored figures leans upward wherever the true extra is near 0.
A class that cannot be timed is left out and said in a note; the predictor then adds nothing for it. Cost: 4 classes
x 2 configs x 33 forwards of 16 calls of ~15-40 us, plus cuDNN's autotuning of 6 conv shapes: 0.5 s in calibrate's
own process on the H100 (C8).

Only fp16 is timed (``PRECISION``): torch-half is deployed in fp16; a bf16 cast model takes no extra.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modelcost.core.eager_ops import HALF_PRICED
from modelcost.core.text import first_line

PRECISION = "fp16"  # the precision the extra is timed at (``Calibration.half_call_us``'s key)
LAYERS = 16  # calls of the class in one forward of its net
CHANNELS, SIDE = 32, 8  # a 1 x 32 x 8 x 8 activation, as benchmarks/host_ops_diag.py's
GROUPS = 4  # the grouped conv's groups (8 channels per group): the diagnostic's conv3x3_groups4

TimeUs = Callable[[Callable[[], Any]], float]  # host us of one host-bound call of a function


def class_layer(torch: Any, name: str) -> Any:
    """One layer of ``HALF_PRICED`` class ``name`` (core/eager_ops.call_class names its calls so)."""
    nn = torch.nn
    if name == "batch_norm":
        return nn.BatchNorm2d(CHANNELS)
    groups = {"conv": 1, "depthwise_conv": CHANNELS, "grouped_conv": GROUPS}[name]
    return nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1, groups=groups)


def class_net(torch: Any, name: str, device: str = "cuda", half: bool = False) -> tuple[Any, Any]:
    """(a stack of ``LAYERS`` layers of class ``name`` in eval mode, its input): fp32 contiguous, or with ``half``
    cast to fp16 channels_last, weights and input, as torch-half runs a conv net."""
    net = torch.nn.Sequential(*[class_layer(torch, name) for _ in range(LAYERS)]).to(device).eval()
    x = torch.randn(1, CHANNELS, SIDE, SIDE, device=device)
    if half:
        net = net.to(dtype=torch.float16, memory_format=torch.channels_last)  # 4-D weights only, as the backend
        x = x.to(dtype=torch.float16, memory_format=torch.channels_last)
    return net, x


def extra_per_call_us(half_us: float, fp32_us: float, calls: int = LAYERS) -> float:
    """The extra host us of one call in half precision: (half forward - fp32 forward) / calls, negative where the
    half call is the cheaper (module doc)."""
    return (half_us - fp32_us) / calls


def time_class(torch: Any, name: str, time_us: TimeUs, device: str = "cuda") -> tuple[float, float]:
    """(fp32 us, fp16 channels_last us) of one forward of class ``name``'s net, timed by ``time_us``; the fp32 one
    with TF32 off, as eager fp32 runs."""
    from modelcost.hardware.tf32 import tf32_mode

    net, x = class_net(torch, name, device)
    with tf32_mode(False):
        fp32_us = time_us(lambda: net(x))
    net, x = class_net(torch, name, device, half=True)
    return fp32_us, time_us(lambda: net(x))


def half_call_us(torch: Any, time_us: TimeUs, device: str = "cuda",
                 classes: Sequence[str] = HALF_PRICED) -> tuple[dict[str, float], list[str]]:
    """(class -> extra host us per call at ``PRECISION``, notes on classes that could not be timed), under
    ``inference_mode`` with cuDNN's autotuner on (module doc)."""
    from modelcost.hardware.tf32 import cudnn_autotune

    found: dict[str, float] = {}
    notes: list[str] = []
    with torch.inference_mode(), cudnn_autotune():
        for name in classes:
            try:
                fp32_us, half_us = time_class(torch, name, time_us, device)
                found[name] = round(extra_per_call_us(half_us, fp32_us), 3)
            except Exception as exc:  # noqa: BLE001 - a class not timed is priced as in fp32; the reason is kept
                notes.append(f"half-precision calls: {name} not timed ({first_line(exc, 200)})")
    if device == "cuda":
        with contextlib.suppress(Exception):
            torch.cuda.empty_cache()
    return found, notes


def spread_note(measured: Sequence[Mapping[str, float]]) -> str | None:
    """One note of each class's extra in each process that timed it ("batch_norm 21.5 / 19.8 us"), None without
    any."""
    classes = [c for c in HALF_PRICED if any(c in m for m in measured)]
    if not classes:
        return None
    each = "; ".join(f"{c} {' / '.join(f'{m[c]:.1f}' for m in measured if c in m)}" for c in classes)
    return f"host price of an {PRECISION} call over fp32, per call: {each} us by process, the median kept"
