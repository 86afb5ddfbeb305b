"""bench.export: the ONNX file a PyTorch model is exported to takes exactly the model's inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from modelcost.bench.export import export_to_onnx
from modelcost.bench.model import from_module
from modelcost.core.types import TensorSpec

onnx = pytest.importorskip("onnx")


class KeepLast(nn.Module):
    """transformers' causal LMs end their forward with ``logits_to_keep: int = 0``: an int argument with a
    default, which the TorchScript exporter fills in and makes a graph input of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, keep: int = 0) -> torch.Tensor:
        return self.fc(x)[:, -keep:, :]


def test_the_export_takes_only_the_model_inputs_not_a_defaulted_int_argument(tmp_path: Path) -> None:
    model = from_module(KeepLast().eval(), lambda b: [TensorSpec("x", (b, 5, 4), "float32")], name="keep_last")
    path, note = export_to_onnx(model, tmp_path)
    graph = onnx.load(str(path)).graph
    # ONNX Runtime is fed the spec'd inputs only (bench.backends.ort): an input "keep" could never be fed
    assert [i.name for i in graph.input] == ["x"], note


def test_the_note_says_the_opset_written_and_why_the_first_exporter_was_not_used(tmp_path: Path) -> None:
    # KeepLast's TorchScript file takes an input "keep" the model was not given, so the torch.export-based
    # exporter writes it, at its own opset (18 here), not the TorchScript exporter's 17; the note said "opset 17"
    # and dropped the first exporter's reason
    model = from_module(KeepLast().eval(), lambda b: [TensorSpec("x", (b, 5, 4), "float32")], name="keep_last")
    path, note = export_to_onnx(model, tmp_path)
    opset = next(o.version for o in onnx.load(str(path)).opset_import if o.domain in ("", "ai.onnx"))
    assert f"torch.export-based exporter (opset {opset}, dynamic batch; torchscript exporter failed: " in note
    assert "the file takes inputs the model was not given" in note
