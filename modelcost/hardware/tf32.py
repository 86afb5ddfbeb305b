"""TF32 on or off for fp32 matmuls and cuDNN convolutions / RNNs, restored afterwards: the one switch used by the
torch backends, the training step, the layer profiler and the measured GPU ceilings. Also cuDNN's autotuner off for
a while (``no_cudnn_autotune``: the batch-search probes and the fp32 reference outputs, whose plans it keeps apart
from the measured configs') and on (``cudnn_autotune``: calibrate's conv table). Imports torch only when used."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any


def _tf32_switches(torch: Any) -> tuple[list[tuple[Any, str]], Any, Any]:
    """The settings that allow TF32, and their on / off values: the ``fp32_precision`` API where torch has it
    (2.9+; mixing it with the legacy flags makes torch raise), else the legacy ``allow_tf32`` flags."""
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        cudnn = torch.backends.cudnn
        switches = [(matmul, "fp32_precision"), (cudnn.conv, "fp32_precision"), (cudnn.rnn, "fp32_precision")]
        return switches, "tf32", "ieee"
    return [(matmul, "allow_tf32"), (torch.backends.cudnn, "allow_tf32")], True, False


@contextlib.contextmanager
def tf32_mode(enabled: bool) -> Iterator[None]:
    """TF32 for matmul and cuDNN convolutions / RNNs on or off, restored afterwards."""
    import torch

    switches, on, off = _tf32_switches(torch)
    old = [getattr(obj, attr) for obj, attr in switches]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for obj, attr in switches:
            setattr(obj, attr, on if enabled else off)
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for (obj, attr), value in zip(switches, old, strict=True):
                setattr(obj, attr, value)


@contextlib.contextmanager
def _cudnn_flags(**values: bool) -> Iterator[None]:
    """``torch.backends.cudnn``'s flags set to ``values``, restored afterwards; nothing to do in a process that has
    not imported torch."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    cudnn = torch.backends.cudnn
    saved = {name: getattr(cudnn, name) for name in values}
    for name, value in values.items():
        setattr(cudnn, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(cudnn, name, value)


def cudnn_autotune(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """cuDNN's benchmark mode (autotuning at every new shape: what the torch backends run convs under) on or off,
    restored afterwards."""
    return _cudnn_flags(benchmark=enabled)


def no_cudnn_autotune() -> contextlib.AbstractContextManager[None]:
    """cuDNN's benchmark mode off, and its deterministic mode on, both restored afterwards: convs pick their
    algorithms by cuDNN's heuristics, and the plans they find stay apart from the measured configs'. torch keeps
    one plan per conv shape (aten/src/ATen/native/cudnn/Conv_v8.cpp: ``benchmark_cache``, keyed by the shapes,
    ``deterministic`` and ``allow_tf32``, not by the benchmark flag) and reuses it whatever the flag says later, so a
    heuristic plan found here would have been the eager fp32 config's too, which then never autotuned: keyed by
    ``deterministic``, the config finds its own."""
    return _cudnn_flags(benchmark=False, deterministic=True)


def matmul_mode(torch: Any) -> str:
    """The fp32 matmul mode torch is in now: "tf32" or "ieee" (what a calibration records beside each table)."""
    matmul = torch.backends.cuda.matmul
    mode = getattr(matmul, "fp32_precision", "none")
    if mode != "none":  # "none": left at the default, which the legacy flag still reports
        return "tf32" if mode == "tf32" else "ieee"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return "tf32" if matmul.allow_tf32 else "ieee"
