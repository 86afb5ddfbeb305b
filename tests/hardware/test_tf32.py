"""The one TF32 switch (hardware/tf32.py): on inside, restored after, whichever API this torch has. The flags exist
without a GPU, so this runs on the CPU."""

from __future__ import annotations

import torch

from modelcost.hardware.tf32 import _tf32_switches, tf32_mode


def _state() -> list[object]:
    switches, _, _ = _tf32_switches(torch)
    return [getattr(obj, attr) for obj, attr in switches]


def test_tf32_on_then_restored() -> None:
    switches, on, off = _tf32_switches(torch)
    before = _state()
    with tf32_mode(True):
        assert _state() == [on] * len(switches)  # matmul and cuDNN conv (and RNN where torch has it)
        with tf32_mode(False):
            assert _state() == [off] * len(switches)
        assert _state() == [on] * len(switches)
    assert _state() == before
