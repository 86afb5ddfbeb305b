"""Input dtypes from the command line (``--input-shape NAME=1x128:int64``), token ids recognised without one, and a
model that cannot be traced reported as "not counted" (exit 3, ``compute.complete`` false), never as MACs 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost import api
from modelcost.cli import app
from modelcost.core.errors import ModelcostError
from modelcost.loaders.shapes import parse_input_specs

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

BERT = '''from transformers import BertConfig, BertModel


def bert():
    return BertModel(BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=16, max_position_embeddings=16))
'''
# MACs of that BERT at batch 1, sequence 4 (hidden 8, 2 heads of 4, FFN 16):
#   Q, K, V, output projections: 4 x (4 tokens x 8 x 8) = 1,024
#   attention: QK^T 2 heads x 4 x 4 x 4 = 128, AV the same = 128 -> 256
#   FFN: 4 x 8 x 16 + 4 x 16 x 8 = 1,024;  pooler: 1 x 8 x 8 = 64;  embeddings are lookups (0 MACs)
#   total 1,024 + 256 + 1,024 + 64 = 2,368
BERT_MACS = 2_368


@pytest.fixture()
def bert_factory(tmp_path: Path) -> str:
    pytest.importorskip("transformers")
    (tmp_path / "hf.py").write_text(BERT)
    return f"{tmp_path / 'hf.py'}:bert"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_parse_dtype_after_a_colon() -> None:
    shapes, dtypes = parse_input_specs(["x=1x3x8x8", "ids=2x128:int64", "m=2x128:bool", "h=1x4:fp16"])
    assert shapes == {"x": (1, 3, 8, 8), "ids": (2, 128), "m": (2, 128), "h": (1, 4)}
    assert dtypes == {"ids": "int64", "m": "bool", "h": "float16"}  # aliases become canonical names
    with pytest.raises(ModelcostError, match="unknown dtype 'int65'"):
        parse_input_specs(["ids=1x128:int65"])


def test_token_ids_are_int64_without_a_dtype(bert_factory: str) -> None:
    cost = api.analyze_static(bert_factory, input_shapes=["input_ids=1x4"])
    assert cost.inputs[0].dtype == "int64"
    assert cost.compute.complete and cost.compute.macs == BERT_MACS
    assert any("taken as int64 token ids" in n for n in cost.notes)


def test_explicit_dtype_reaches_the_model(bert_factory: str) -> None:
    cost = api.analyze_static(bert_factory, input_shapes=["input_ids=1x4:int32"])
    assert cost.inputs[0].dtype == "int32" and cost.compute.macs == BERT_MACS  # embedding takes Int too
    assert not any("taken as int64" in n for n in cost.notes)  # the user said it


def test_main_input_with_embeddings_is_token_ids(tmp_path: Path) -> None:
    """Not a known name: the model tells through main_input_name and its input embeddings."""
    (tmp_path / "m.py").write_text('''import torch
from torch import nn


class M(nn.Module):
    main_input_name = "words"

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 2)

    def get_input_embeddings(self):
        return self.emb

    def forward(self, words):
        return self.fc(self.emb(words))


def make():
    return M()
''')
    cost = api.analyze_static(f"{tmp_path / 'm.py'}:make", input_shapes=["words=1x3"])
    assert cost.inputs[0].dtype == "int64"
    assert cost.compute.macs == 3 * 4 * 2  # Linear 4 -> 2 on 3 tokens: 3 x 4 x 2 = 24


def test_dtype_overrides_example_inputs() -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "token_model.py"
    cost = api.analyze_static(f"{fixture}:build", input_shapes=["ids=2x7:int32"])
    assert {s.name: s.dtype for s in cost.inputs} == {"scale": "float32", "ids": "int32"}


def test_onnx_dtype_must_agree_with_the_file() -> None:
    with pytest.raises(ModelcostError, match="declares this input as float32, not int64"):
        api.analyze_static(str(SAMPLES / "resnet_tiny.onnx"), input_shapes=["input=1x3x32x32:int64"])
    ok = api.analyze_static(str(SAMPLES / "resnet_tiny.onnx"), input_shapes=["input=1x3x32x32:float32"])
    assert ok.compute.macs == 5_329_216  # sample_models/EXPECTED.md


def test_cli_accepts_a_dtype(bert_factory: str) -> None:
    result = invoke("analyze", bert_factory, "--static", "-s", "input_ids=1x4:int64")
    assert result.exit_code == 0, result.output
    assert "input_ids 1x4 int64" in result.stdout and f"{BERT_MACS:,}" in result.stdout


# --- a forward pass that fails: no counts, said so ---------------------------------------------------------------


def test_failed_forward_is_not_counted_not_zero(bert_factory: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = invoke("analyze", bert_factory, "--static", "-s", "input_ids=1x4:float32", "--json", str(out),
                    "--out", str(tmp_path / "rep"))
    assert result.exit_code == 3, result.output  # 3: partial result (1 = bad input, 2 = usage)
    assert "Traceback" not in result.output
    assert "not counted" in result.stdout and "the forward pass failed" in result.stdout
    assert "every op counted" not in result.stdout
    macs_row = next(line for line in result.stdout.splitlines() if line.startswith("│ MACs"))
    assert "not counted" in macs_row and " 0 " not in macs_row
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: not counted: the forward pass failed"), result.stderr
    doc = json.loads(out.read_text())
    assert doc["compute"]["complete"] is False
    assert doc["compute"]["incomplete_reasons"][0].startswith("the forward pass failed on meta inputs")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "not counted: the forward pass failed" in md


def test_failed_forward_in_the_api() -> None:
    import torch
    from torch import nn

    from modelcost.analysis.torch_counter import analyze_module

    class Broken(nn.Module):
        def forward(self, x):
            raise RuntimeError("nope")

    cost = analyze_module(Broken(), [torch.empty(2, 3, device="meta")])
    assert not cost.compute.complete and "RuntimeError: nope" in cost.compute.incomplete_reasons[0]
    assert api.analyze_static(str(SAMPLES / "resnet_tiny.onnx")).compute.complete
