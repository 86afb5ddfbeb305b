"""Model code that asks its tensors' values, counted on meta (analysis/data_oracle.py): transformers' mask code
(``.item()`` on the attention mask), ``int(t)``, ``.tolist()``, a router's boolean masks. Before the oracle each
failed with 'Tensor.item() cannot be called on meta tensors' (analyze exit 3, train --static exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from modelcost import api
from modelcost.analysis.data_oracle import DataOracle, UnansweredQuestion
from modelcost.analysis.torch_counter import analyze_module
from modelcost.analysis.training import train_module
from modelcost.cli import app
from modelcost.core.assumptions import FROM_INPUTS, MADE_UP
from modelcost.core.training import TrainConfig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
FIXTURES = Path(__file__).parents[1] / "fixtures"
GPT2 = f"{FIXTURES}/hf_masked.py:gpt2"
LLAMA = f"{FIXTURES}/hf_masked.py:llama"
VALUES = f"{FIXTURES}/asks_values.py"


def _cli(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, [*args, "--json", str(out)])
    return result.exit_code, json.loads(out.read_text()) if out.exists() else {}, result.output


def _gpt2_macs(d: int = 32, t: int = 8, layers: int = 2, vocab: int = 100) -> int:
    # per token and layer: QKV 3·d·d, attention scores + context 2·T·d (full T x T, docs/COUNTING.md), out-projection
    # d·d, MLP (d -> 4d -> d) 8·d·d; then the LM head d·V per token:
    # 8 x 2 x (3072 + 512 + 1024 + 8192) + 8 x 3200 = 204800 + 25600 = 230400
    per_token_layer = 3 * d * d + 2 * t * d + d * d + 8 * d * d
    return t * layers * per_token_layer + t * d * vocab


def test_analyze_gpt2_with_an_attention_mask_is_complete_and_matches_the_hand_count(tmp_path: Path) -> None:
    code, doc, output = _cli(tmp_path, "analyze", GPT2, "--static")
    assert code == 0, output
    assert doc["compute"]["complete"] and doc["compute"]["macs"] == _gpt2_macs() == 230400
    asked = [a for a in doc["assumptions"] if "masking_utils" in a["asked_at"]]
    assert asked and all(a["basis"] == FROM_INPUTS and a["values_from"] == ["input attention_mask"] for a in asked)
    assert asked[0]["answer"] == "False"  # the mask has padding: fast_all(padding_mask) is False
    assert "assumed:" in output and "masking_utils.py" in output


@pytest.mark.parametrize("source", [GPT2, LLAMA], ids=["gpt2", "llama"])
def test_train_static_of_transformers_models_with_a_mask_matches_analyze(tmp_path: Path, source: str) -> None:
    code, analyzed, output = _cli(tmp_path, "analyze", source, "--static")
    assert code == 0, output
    code, trained, output = _cli(tmp_path, "train", source, "--static")
    assert code == 0, output
    training = trained["training"]
    assert not training["problems"] and not training["uncounted_ops"]
    assert training["forward_macs"] == analyzed["compute"]["macs"] > 0
    if source == GPT2:
        assert training["forward_macs"] == _gpt2_macs()
    assert any(a["basis"] == FROM_INPUTS for a in training["assumptions"])


def test_an_item_read_from_an_example_input_sets_the_shape_counted() -> None:
    r = api.analyze_static(f"{VALUES}:length_slice")
    assert not r.problems and r.compute.complete
    assert r.compute.macs == 3 * 4 * 5  # int(lengths.max()) = 3 positions through Linear(4 -> 5): 3·4·5 = 60
    [a] = r.assumptions
    assert (a.op, a.basis, a.values_from, a.answer) == ("aten._local_scalar_dense", FROM_INPUTS, ["input lengths"],
                                                        "3")
    assert a.asked_at.startswith("fixtures/asks_values.py:")


def test_a_tensor_made_from_python_numbers_has_its_values() -> None:
    # pos = 0..5; new_tensor([-1]) catted to pos[1::2]: [-1, 1, 3, 5]; n = -1 + 4 + torch.tensor(2) = 5 positions
    # through Linear(4 -> 5): 5·4·5 = 100 MACs. Both values are exact (constants): no assumption. Before, neither
    # tensor had values on meta, zeros were made up for them (n = 0 + 4 + 0 = 4) and an assumption said so; in
    # transformers 5.17's Funnel the made-up bounds failed the count.
    r = api.analyze_static(f"{VALUES}:relative_positions")
    assert not r.problems and r.compute.complete
    assert r.compute.macs == 5 * 4 * 5
    assert r.assumptions == []


def test_tolist_copies_the_values_to_the_cpu() -> None:
    r = api.analyze_static(f"{VALUES}:split_by_list")
    assert not r.problems and r.compute.macs == 3 * 4 * 5  # the first split part: 3 positions, Linear(4 -> 5)
    assert {a.op for a in r.assumptions} == {"aten._to_copy"}


def test_a_router_spreads_tokens_by_made_up_scores() -> None:
    router = _router()
    r = analyze_module(router, {"x": torch.empty(16, 8, device="meta")})
    assert not r.problems, r.problems
    # gate 16 tokens x 8 x 4 experts = 512; top-1: every token goes to exactly one expert, whatever the scores:
    # 16 x 8 x 8 = 1024 over the experts together
    assert r.compute.macs == 512 + 1024
    made_up = [a for a in r.assumptions if a.basis == MADE_UP]
    assert made_up and any("made up (standard normal)" in v and "aten.argmax" in v for a in made_up
                           for v in a.values_from)
    assert {a.op for a in made_up} >= {"aten.index", "aten._local_scalar_dense"}


def test_a_router_trains_on_meta() -> None:
    router = _router()
    report = train_module(router, lambda b: {"x": torch.empty(16 * b, 8, device="meta")}, 1, TrainConfig())
    assert not report.problems, report.problems
    assert report.forward_macs == 512 + 1024  # as the forward count above
    assert any(a.basis == MADE_UP for a in report.assumptions)


def _router() -> torch.nn.Module:
    import importlib.util

    spec = importlib.util.spec_from_file_location("asks_values", FIXTURES / "asks_values.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.device("meta"):
        return module.router()


def test_a_question_without_values_is_answered_from_zeros_unless_too_large() -> None:
    x = torch.empty(8, device="meta")  # no values, and larger than the limit: no twin
    oracle = DataOracle(limit_elements=4)
    with oracle:
        assert bool((x * 2).gt(0).all()) is False  # the scalar asked has no twin: made up as zero (False)
        with pytest.raises(UnansweredQuestion, match="aten.nonzero at .*test_data_oracle.py.* a 8 tensor"):
            (x * 2).gt(0).nonzero()  # 8 elements to make up, over the limit: refused, naming the line
    [a] = oracle.assumptions
    assert a.basis == MADE_UP and a.answer == "False" and "made up (zeros)" in a.values_from[0]


def test_a_write_the_oracle_cannot_follow_drops_the_twin() -> None:
    oracle = DataOracle()
    x = torch.empty(4, device="meta")
    weights = torch.nn.Parameter(torch.empty(4, device="meta"))  # made before the oracle: no values, as a model's
    oracle.seed("x", x, torch.tensor([1.0, 1.0, 0.0, 1.0]))
    with oracle:
        assert float(x.sum()) == 3.0  # from the seeded values
        view = x[:2]
        x.add_(torch.ones(4, device="meta"))  # followed: the add runs on the twins, the view's twin sees it
        assert float(view.sum()) == 4.0
        x.mul_(weights.detach())  # floats from the weights, kept floats: not made up, so the twins are stale
    assert x not in oracle.twins and view not in oracle.twins


class _ChecksItsScores(torch.nn.Module):
    """A check on values made from the weights (transformers' torch_compilable_check reduces to
    torch._check_tensor_all -> aten._is_all_true): VITS's spline flow checks its discriminant so."""

    def __init__(self) -> None:
        super().__init__()
        self.score = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.score(x)
        torch._check_tensor_all(s > 10.0, lambda: "scores must exceed 10")  # made-up normal scores never do
        return s * 2


def test_a_check_on_made_up_values_is_assumed_to_hold_and_said_so() -> None:
    # x 2 x 4 through a 4 -> 3 linear: 24 MACs; the check and the doubling: 6 comparisons + 6 checked + 6 products
    report = analyze_module(_ChecksItsScores().to("meta"), [torch.empty(2, 4, device="meta")])
    assert report.compute.complete and report.compute.macs == 24
    [check] = [a for a in report.assumptions if a.answer == "True"]
    assert check.basis == MADE_UP and any(v.startswith("assumed to hold: the check at") for v in check.values_from)


class _NamedExperts(torch.nn.Module):
    """SwitchTransformers' way: the experts a router chose are looked up by a name formatted from a meta scalar,
    f"expert_{idx[0]}": on meta that formatted the tensor's repr, and the lookup failed (KeyError)."""

    def __init__(self) -> None:
        super().__init__()
        self.router = torch.nn.Linear(4, 2)
        self.experts = torch.nn.ModuleDict({f"expert_{i}": torch.nn.Linear(4, 4) for i in range(2)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        choice = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for idx in torch.unique(choice):
            rows = choice == idx
            out[rows] = self.experts[f"expert_{idx}"](x[rows])
        return out


def test_a_scalar_formatted_into_a_name_gives_its_value() -> None:
    # 6 tokens of 4: the router 6 x 4 x 2 = 48 MACs; each token through one 4 -> 4 expert: 6 x 16 = 96; the
    # unique of the 6 choices a sort (6 x ceil(log2 6) = 18) and 6 neighbour comparisons: 24 FLOPs
    report = analyze_module(_NamedExperts().to("meta"), [torch.empty(6, 4, device="meta")])
    assert report.compute.complete and report.compute.macs == 48 + 96
    assert report.compute.flops_by_op.get("_unique2") == 24
    assert any(a.op == "Tensor.__format__" and a.basis == MADE_UP for a in report.assumptions)


class _Durations(torch.nn.Module):
    """VITS's and FastSpeech2-conformer's way to their output length: a duration per token from a conv (the weights:
    no values on meta), ``clamp_min(sum(ceil(exp(log_duration))), 1).long()`` frames. Made up for the ``clamp_min``'s
    output, normal values cast to 0 or a negative length, and VITS's forward failed ("Calculated padded input size
    per channel: (0)")."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Conv1d(4, 1, 1)
        self.out = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        log_duration = self.proj(x)  # 1 x 1 x T
        duration = torch.ceil(torch.exp(log_duration))
        length = torch.clamp_min(torch.sum(duration, [1, 2]), 1).long()
        frames = torch.zeros(int(length.max()), 4, device=x.device)
        return self.out(frames)


def test_a_length_from_durations_is_made_up_where_the_weights_output_is() -> None:
    # T = 8 tokens: the conv 8 x 4 x 1 = 32 MACs; then n frames through Linear(4 -> 2): 8n. The values are made up
    # for the conv's output (the exp's input) and the model's own ceil(exp(.)) runs on them: every token lasts at
    # least a frame, so n >= 8.
    report = analyze_module(_Durations().to("meta"), [torch.empty(1, 4, 8, device="meta")])
    assert not report.problems and report.compute.complete
    frames, rest = divmod(report.compute.macs - 32, 8)
    assert rest == 0 and frames >= 8
    [length] = [a for a in report.assumptions if a.op == "aten._local_scalar_dense"]
    assert length.basis == MADE_UP and length.answer == str(frames)
    [root] = length.values_from
    assert root.startswith("made up (standard normal): the 1x1x8 float32 input of aten.exp at ") and "forward" in root


def test_the_replay_keeps_the_values_it_has_and_starts_from_the_made_up_ones() -> None:
    log_duration = torch.empty(1, 1, 4, device="meta")  # a conv's output: no values
    mask = torch.empty(1, 1, 4, device="meta")
    oracle = DataOracle()
    oracle.seed("mask", mask, torch.tensor([[[1.0, 1.0, 0.0, 0.0]]]))
    with oracle:
        duration = torch.ceil(torch.exp(log_duration) * mask)
        n = int(torch.clamp_min(torch.sum(duration, [1, 2]), 1).long().max())
    # the mask's values are the input's: the padded tokens last 0 frames, the other two ceil(exp(.)) >= 1 each, from
    # the values made up for log_duration (kept as its twin)
    made_up = oracle.twins[log_duration].value
    assert n == int(torch.ceil(torch.exp(made_up[0, 0, :2])).sum()) >= 2
    [a] = oracle.assumptions
    assert a.basis == MADE_UP and a.values_from[0] == "input mask" and len(a.values_from) == 2


def test_a_tensor_with_values_is_not_replayed_and_a_write_drops_the_recipe() -> None:
    x = torch.empty(4, device="meta")  # no values, as a weight's output
    weights = torch.nn.Parameter(torch.empty(4, device="meta"))
    oracle = DataOracle()
    with oracle:
        e = x.exp()  # no values yet: its recipe is kept
        first = int(x.argmax())  # x asked first: made-up normals, its twin from then on
        total = float(e.sum())  # exp replayed on x's twin: no other values made up
        overwritten = x.exp()
        overwritten.mul_(weights.detach())  # a write the oracle cannot follow: the exp no longer says its values
        bool(overwritten.gt(0).all())
    made_up = oracle.twins[x].value
    assert first == int(made_up.argmax()) and total == pytest.approx(float(made_up.exp().sum()))
    [asked_sum] = [a for a in oracle.assumptions if a.answer == repr(total)]
    [root] = asked_sum.values_from
    assert "input of aten.argmax" in root  # the one made up for x
    assert any("input of aten.gt" in v for a in oracle.assumptions for v in a.values_from)  # not exp(x): made up


def test_the_replay_stops_replay_depth_recipes_deep() -> None:
    x = torch.empty(4, device="meta")  # no values
    deep, shallow = DataOracle(), DataOracle(replay_depth=3)
    totals = []
    for oracle in (deep, shallow):
        with oracle:
            y = x.abs()
            for _ in range(5):
                y = y + 1
            totals.append(float(y.sum()))
    # all replayed: sum(|x| + 5) from x's made-up values; x is the root, read by the abs
    assert totals[0] == pytest.approx(float((deep.twins[x].value.abs() + 5).sum())) and totals[0] >= 20
    assert "input of aten.abs" in deep.assumptions[0].values_from[0]
    # 3 deep: the sum, the fifth and the fourth add are replayed; the third add's result is made up (read by an add)
    assert x not in shallow.twins
    assert "input of aten.add" in shallow.assumptions[0].values_from[0]


def test_the_replay_keeps_no_meta_tensor_alive() -> None:
    # the training-peak simulation frees a meta tensor's bytes when the model drops it: a recipe that held its
    # inputs kept every small activation alive to the end of the step (test_training_peak's peaks grew)
    import weakref

    x = torch.empty(4, device="meta")  # no values
    oracle = DataOracle()
    with oracle:
        e = x.exp()
        doubled = e * 2
        dropped = weakref.ref(e)
        del e
        assert dropped() is None
        smallest = float(doubled.min())  # exp, then * 2, replayed all the same: 2 exp(x) > 0
    assert smallest > 0 and "input of aten.exp" in oracle.assumptions[0].values_from[0]
