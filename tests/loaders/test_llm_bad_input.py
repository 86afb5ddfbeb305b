"""``modelcost llm`` under bad input (issue 24): one red line that names the key or option and says why, never a
traceback, a hang or a silently different model. Cases that hung on the old code run under a SIGALRM deadline,
so they fail there instead of hanging."""

from __future__ import annotations

import contextlib
import json
import signal

import pytest
from typer.testing import CliRunner

from modelcost.analysis.llm_bounds import _decode_sum_ms, _phase_ms
from modelcost.cli import app
from modelcost.core.llm import DecodeCost, DecodeTokenCost, GenerationPoint, KvCache, PrefillCost

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

# a Llama of 2 layers, 4 heads (2 KV heads), hidden 64: counts in well under a second
TINY = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
        "max_position_embeddings": 4096, "tie_word_embeddings": False}
GPT2 = {"model_type": "gpt2", "vocab_size": 1000, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 1024,
        "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 0}


@contextlib.contextmanager
def deadline(seconds: int):
    """Raise TimeoutError in the test after ``seconds`` (the old code's loops are plain Python: interruptible)."""
    def _raise(signum, frame):
        raise TimeoutError(f"no answer in {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _config(tmp_path, base=TINY, drop=(), **changes) -> str:
    data = {k: v for k, v in {**base, **changes}.items() if k not in drop}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def _llm(*args: str, seconds: int = 60):
    with deadline(seconds):
        return CliRunner().invoke(app, ["llm", *args, "--static"])


def _refused(result, *words: str) -> str:
    """The command exited 1 through user_errors (no traceback); its error line holds every word."""
    text = " ".join(result.output.split())
    assert result.exit_code == 1, text
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in text and text.count("error:") == 1, text
    for word in words:
        assert word in text, text
    return text


def test_kv_heads_must_divide_the_heads(tmp_path) -> None:
    # 32 query heads cannot be split into 5 groups: the old code's meta prefill failed in SDPA, the decode step
    # then read the half-made cache and died with AttributeError
    result = _llm(_config(tmp_path, num_attention_heads=32, num_key_value_heads=5))
    _refused(result, "num_key_value_heads 5", "num_attention_heads 32")


def test_a_forward_that_fails_on_meta_is_one_line(tmp_path) -> None:
    # the same model from a factory (no config.json to check): the counter's failure, not an AttributeError
    factory = tmp_path / "bad_lm.py"
    factory.write_text(
        "from transformers import LlamaConfig, LlamaForCausalLM\n\n"
        "def build():\n"
        "    return LlamaForCausalLM(LlamaConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2,\n"
        "        num_attention_heads=32, num_key_value_heads=5, intermediate_size=128))\n")
    _refused(_llm(f"{factory}:build"), "prefill", "forward pass failed")


@pytest.mark.parametrize(("option", "value"), [("--prompt-len", "1000000000"), ("--gen-len", "1000000000"),
                                               ("--batch-size", "1000000000")])
def test_lengths_and_batch_have_a_ceiling(option, value) -> None:
    # the old code died on -p (a meta tensor of 1e9 x 1e9 scores overflows) and took -g / -b as they came
    _refused(_llm("zoo:llama-tiny", option, value, "-p", "16") if option != "--prompt-len"
             else _llm("zoo:llama-tiny", option, value), option, "1,000,000,000")


@pytest.mark.parametrize(("key", "value"), [
    ("num_hidden_layers", 10**12), ("num_hidden_layers", 0), ("num_hidden_layers", -1),
    ("num_attention_heads", 2048), ("hidden_size", 10**9), ("vocab_size", 10**12), ("intermediate_size", 10**12)])
def test_config_sizes_have_a_ceiling(tmp_path, key, value) -> None:
    # refused before the model is built: the old code built 10^12 layers until memory ran out. 2,048 heads (KV
    # heads too) over a hidden size of 4,096: transformers' own check (hidden a multiple of heads) passes
    wide = {"hidden_size": 4096, "num_key_value_heads": 2048} if key == "num_attention_heads" else {}
    _refused(_llm(_config(tmp_path, **{**wide, key: value}), seconds=30), key, f"{value:,}")


def test_the_key_is_named_as_the_config_spells_it(tmp_path) -> None:
    # GPT-2 calls its layer count n_layer (transformers maps num_hidden_layers onto it)
    _refused(_llm(_config(tmp_path, base=GPT2, n_layer=10**12), seconds=30), "n_layer", "1,000,000,000,000")


def test_a_config_value_of_the_wrong_type_says_why(tmp_path) -> None:
    # transformers' validation message spans lines; the old one-line error kept only "Validation error for field"
    _refused(_llm(_config(tmp_path, num_hidden_layers="32")), "num_hidden_layers", "expected int")


def test_defaults_filled_in_are_listed(tmp_path) -> None:
    out = tmp_path / "llm.json"
    result = _llm(_config(tmp_path, drop=("vocab_size", "max_position_embeddings", "tie_word_embeddings")),
                  "-p", "16", "-g", "3", "--json", str(out))
    assert result.exit_code == 0, result.output
    # LlamaConfig's defaults: a 32,000-token vocabulary, 2,048 positions, an untied head
    expected = {"vocab_size": 32000, "max_position_embeddings": 2048, "tie_word_embeddings": False}
    assert json.loads(out.read_text())["llm"]["config_defaults"] == expected
    text = " ".join(result.output.split())
    assert "transformers' defaults" in text and "vocab_size=32000" in text


def test_a_bare_model_type_is_a_default_model_and_says_so(tmp_path) -> None:
    from modelcost.loaders.llm_loader import load_causal_lm

    with deadline(60):
        lm = load_causal_lm(_config(tmp_path, base={"model_type": "llama"}), "fp16")
    # {"model_type": "llama"} alone is LlamaConfig(): the 6.74 B Llama-7B shape, every size a default
    assert lm.config_defaults["hidden_size"] == 4096 and lm.config_defaults["num_hidden_layers"] == 32
    assert set(lm.config_defaults) >= {"vocab_size", "intermediate_size", "num_attention_heads",
                                       "num_key_value_heads", "max_position_embeddings"}


def test_zoo_and_complete_configs_list_no_defaults(tmp_path) -> None:
    out = tmp_path / "llm.json"
    result = _llm("zoo:llama-tiny", "-p", "8", "-g", "2", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["llm"]["config_defaults"] == {}
    assert "transformers' defaults" not in result.output


def test_positions_past_the_model_are_refused(tmp_path) -> None:
    gpt2 = _config(tmp_path, base=GPT2)
    # P + G - 1 positions are fed (the last new token is never fed back): 4,096 + 2 - 1 = 4,097 > 1,024
    _refused(_llm(gpt2, "-p", "4096", "-g", "2"), "n_positions", "1,024", "4,097")
    # 1,000 + 26 - 1 = 1,025 > 1,024; one point of a sweep past it refuses the sweep
    _refused(_llm(gpt2, "-p", "16,1000", "-g", "26"), "n_positions")
    # 1,000 + 25 - 1 = 1,024 positions: positions 0..1,023, exactly what GPT-2 has
    assert _llm(gpt2, "-p", "1000", "-g", "25").exit_code == 0


def test_a_default_position_limit_is_named_as_a_default(tmp_path) -> None:
    # max_position_embeddings not written: LlamaConfig's 2,048 applies, and the message says it is a default
    text = _refused(_llm(_config(tmp_path, drop=("max_position_embeddings",)), "-p", "4096"),
                    "max_position_embeddings", "2,048")
    assert "default" in text


def _point(steps: int, first: tuple[int, int], last: tuple[int, int], prompt: int = 100) -> GenerationPoint:
    """A point whose first / last decode steps have (flops, bytes) ``first`` / ``last``."""
    a = DecodeTokenCost(2, prompt + 1, 0, first[0], first[1], 0.0)
    z = DecodeTokenCost(steps + 1, prompt + steps, 0, last[0], last[1], 0.0)
    per = [a] if steps == 1 else [a, z]
    return GenerationPoint(1, prompt, steps + 1, KvCache("fp16", 1, 2, 2, 2), PrefillCost(1, 1, 1, 1, 1.0, "last", 0),
                           DecodeCost(steps, per, 0, 0, 0, 0), 0)


def _loop_sum_ms(point: GenerationPoint, tflops: float, gbps: float) -> float:
    """The old per-step loop: the reference the closed form must match."""
    dec = point.decode
    a, z = dec.per_token[0], dec.per_token[-1]
    span = max(z.context_len - a.context_len, 1)
    total = 0.0
    for j in range(dec.steps):
        flops = a.flops + (z.flops - a.flops) * j / span
        nbytes = a.bytes + (z.bytes - a.bytes) * j / span
        total += max(_phase_ms(flops, nbytes, tflops, gbps))
    return total


@pytest.mark.parametrize(("steps", "first", "last"), [
    (1, (10**12, 10**9), (10**12, 10**9)),  # one step
    (2, (10**12, 10**9), (2 * 10**12, 3 * 10**9)),
    (50, (10**9, 10**10), (10**9, 3 * 10**10)),  # memory-bound throughout
    (50, (10**14, 10**9), (2 * 10**14, 10**9)),  # compute-bound throughout
    (97, (10**12, 5 * 10**9), (10**15, 6 * 10**9)),  # memory-bound first, compute-bound from a middle step on
    (97, (10**15, 10**9), (10**12, 10**11)),  # compute-bound first, memory-bound later
    (64, (1_000_000_000_000, 3_350_000_000), (1_000_000_000_000, 3_350_000_000)),  # the two lines equal
])
def test_decode_sum_closed_form_matches_the_loop(steps, first, last) -> None:
    point = _point(steps, first, last)
    assert _decode_sum_ms(point, 1000.0, 3350.0) == pytest.approx(_loop_sum_ms(point, 1000.0, 3350.0), rel=1e-12)


def test_decode_sum_of_a_trillion_steps_is_immediate() -> None:
    # memory-bound throughout: step j reads 1e9 + j bytes (one byte more per step, over 1e12 - 1 steps), at
    # 1 GB/s that is (1e9 + j) / 1e9 s = 1e3 + j * 1e-6 ms; the sum over j = 0..n-1 is
    # n * 1e3 + 1e-6 * n (n - 1) / 2 ms with n = 1e12
    n = 10**12
    point = _point(n, (1, 10**9), (1, 10**9 + n - 1))
    with deadline(5):
        total = _decode_sum_ms(point, 1000.0, 1.0)
    assert total == pytest.approx(n * 1e3 + 1e-6 * n * (n - 1) / 2, rel=1e-9)


def test_a_long_generation_against_a_gpu_returns(tmp_path) -> None:
    # 2^24 new tokens (the ceiling): the old loop ran once per step; the closed form answers at once
    result = _llm("zoo:llama-tiny", "-p", "16", "-g", str(2**24), "--target-gpu", "H100 SXM", seconds=60)
    assert result.exit_code == 0, result.output
    assert "lower bounds on H100 SXM" in result.output


def test_per_layer_sizes_are_checked_one_by_one() -> None:
    from types import SimpleNamespace

    from modelcost.core.errors import ModelcostError
    from modelcost.loaders.llm_limits import check_config

    # Gemma-3n style: one MLP width per layer; each is a size, and the one past the ceiling is named
    check_config("x", {}, SimpleNamespace(intermediate_size=[128, 256]))
    with pytest.raises(ModelcostError, match=r"intermediate_size 1,000,000,000 is past"):
        check_config("x", {}, SimpleNamespace(intermediate_size=[128, 10**9]))

    class PerLayer:  # a config that will not give one global value for a per-layer key (transformers raises)
        @property
        def num_attention_heads(self):
            raise RuntimeError("'num_attention_heads' is a per-layer attribute")

    check_config("x", {}, PerLayer())
