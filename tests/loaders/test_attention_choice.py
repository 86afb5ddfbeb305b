"""Which attention implementation a transformers model is counted with (loaders/attention.py): its own when it
runs on meta (eager, sdpa), else sdpa / eager; ``--attn-implementation`` chooses, and is refused in one line for
a name transformers does not know or a model that is not a transformers one."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.loaders.attention import attention_for_counting

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
GPT2 = f"{Path(__file__).parents[1] / 'fixtures'}/hf_masked.py:gpt2"
GPT2_MACS = 230400  # tests/analysis/test_data_oracle.py derives it by hand


def test_eager_attention_on_request_gives_the_same_macs(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["analyze", GPT2, "--static", "--attn-implementation", "eager", "--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["compute"]["macs"] == GPT2_MACS  # eager's two matmuls are the same 2·T·d per token as SDPA's
    assert "attention implementation eager (--attn-implementation)" in doc["notes"]
    assert not any(layer["op"] == "scaled_dot_product_attention" for layer in doc["layers"])


@pytest.mark.parametrize("value, source, why", [("bogus", GPT2, "refuses it"),
                                                ("eager", "zoo:resnet18", "not a transformers model")])
def test_attn_implementation_refused_in_one_line(value: str, source: str, why: str) -> None:
    result = CliRunner().invoke(app, ["analyze", source, "--static", "--attn-implementation", value])
    assert result.exit_code == 1 and f"--attn-implementation {value}" in result.output and why in result.output
    assert "Traceback" not in result.output


class _Model:
    """What attention_for_counting reads of a transformers model: config._attn_implementation, _supports_sdpa and
    set_attn_implementation."""

    def __init__(self, implementation: str, supports_sdpa: bool) -> None:
        self.config = SimpleNamespace(_attn_implementation=implementation)
        self._supports_sdpa = supports_sdpa

    def set_attn_implementation(self, name: str) -> None:
        self.config._attn_implementation = name


@pytest.mark.parametrize("own, sdpa, counted", [("sdpa", True, "sdpa"), ("eager", True, "eager"),
                                                ("flash_attention_2", True, "sdpa"),
                                                ("flex_attention", False, "eager")])
def test_a_model_keeps_a_countable_attention_and_swaps_another(own: str, sdpa: bool, counted: str) -> None:
    model = _Model(own, sdpa)
    note = attention_for_counting(model, None, "m.py:make")
    assert model.config._attn_implementation == counted
    assert (note is None) == (own == counted)
    if note:
        assert f"{own} cannot run on meta tensors: counted with {counted}" in note


def test_a_module_that_is_not_transformers_is_left_alone() -> None:
    assert attention_for_counting(object(), None, "m.py:make") is None
