"""The sweep plan refuses what it cannot honour, each with one line naming the key the user wrote: every key by its
type (a string is never a boolean), limits, [timing] by BenchConfig's own checks, [constraints] by recommend's, and
relative sources taken from the plan's folder. No measuring."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.core.errors import ModelcostError
from modelcost.sweep.plan import load_plan, parse_plan

MODEL = "[[models]]\nsource = 'm.onnx'\n"


def _refused(text: str) -> str:
    with pytest.raises(ModelcostError) as info:
        parse_plan(text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("plan")
    return message


def test_trust_pickle_takes_only_a_boolean() -> None:
    # bool("no") is True: the string used to turn unpickling ON
    text = MODEL + "[[models]]\nsource = 'n.pt'\ntrust_pickle = 'no'\n"
    assert _refused(text) == "plan: [[models]] #2 trust_pickle: expected true or false, got the string 'no'"
    assert "got the integer 1" in _refused(MODEL.replace("\n", "\ntrust_pickle = 1\n", 1)[:-1] + "\n")
    assert parse_plan(text.replace("'no'", "false")).models[1].trust_pickle is False


@pytest.mark.parametrize("text, words", [
    # each of these was a traceback
    ("[sweep]\ntimeout_s = 'long'\n" + MODEL, "[sweep] timeout_s: expected a number, got the string 'long'"),
    ("[timing]\nmin_time_s = 'fast'\n" + MODEL, "[timing] min_time_s: expected a number, got the string 'fast'"),
    ("sweep = 5\n" + MODEL, "sweep: expected a table, got the integer 5"),
    ("timing = [1, 2]\n" + MODEL, "timing: expected a table, got a list"),
    ("constraints = 'fast'\n" + MODEL, "constraints: expected a table, got the string 'fast'"),
    ("models = 'm.onnx'\n", "models: expected [[models]] tables"),
    ("models = [1]\n", "[[models]] #1: expected a table, got the integer 1"),
])
def test_a_value_of_the_wrong_type_is_one_line_naming_the_key(text: str, words: str) -> None:
    assert words in _refused(text)


# Every key of every table, given a value of a type it does not take.
WRONG_TYPES = [
    ("sweep", "backends", "'ort-cpu'", "expected a list"),
    ("sweep", "batch_sizes", "8", "expected a list, got the integer 8"),
    ("sweep", "precisions", "[16]", "precisions item 1: expected a string"),
    ("sweep", "batch_sizes", "[1, true]", "batch_sizes item 2: expected an integer, got the boolean true"),
    ("sweep", "batch_sizes", "[1.5]", "expected an integer, got the number 1.5"),
    ("sweep", "timeout_s", "true", "expected a number, got the boolean true"),
    ("timing", "warmup", "2.5", "expected an integer"),
    ("timing", "warmup_settle", "'2%'", "expected a number"),
    ("timing", "pin_cpu", "'no'", "expected true or false, got the string 'no'"),
    ("timing", "background", "0", "expected true or false, got the integer 0"),
    ("timing", "reuse_earlier", "'yes'", "expected true or false"),
    ("timing", "min_iters", "'50'", "expected an integer"),
    ("timing", "compile_mode", "1", "expected a string"),
    ("timing", "seed", "1.0", "expected an integer"),
    ("constraints", "max_latency_ms", "'10'", "expected a number, got the string '10'"),
    ("constraints", "min_throughput_ips", "[1]", "expected a number, got a list"),
    ("constraints", "max_memory_gb", "{}", "expected a number, got a table"),
    ("constraints", "max_accuracy_drop_pct", "false", "expected a number"),
    ("constraints", "latency_stat", "99", "expected a string"),
    ("constraints", "objective", "true", "expected a string"),
]


@pytest.mark.parametrize("table, key, value, words", WRONG_TYPES)
def test_every_table_key_is_checked_by_type(table: str, key: str, value: str, words: str) -> None:
    message = _refused(f"[{table}]\n{key} = {value}\n" + MODEL)
    assert f"[{table}] {key}" in message and words in message


@pytest.mark.parametrize("key, value, words", [
    ("source", "5", "[[models]] #1 source: expected a string, got the integer 5"),
    ("name", "5", "[[models]] #1 name: expected a string"),
    ("input_shapes", "'x=1x3'", "[[models]] #1 input_shapes: expected a list"),
    ("backends", "['ort-cpu', 1]", "[[models]] #1 backends item 2: expected a string"),
    ("precisions", "'fp16'", "[[models]] #1 precisions: expected a list"),
    ("batch_sizes", "[false]", "[[models]] #1 batch_sizes item 1: expected an integer, got the boolean false"),
    ("trust_pickle", "'false'", "[[models]] #1 trust_pickle: expected true or false"),
])
def test_every_model_key_is_checked_by_type(key: str, value: str, words: str) -> None:
    source = "" if key == "source" else "source = 'm.onnx'\n"
    assert words in _refused(f"[[models]]\n{source}{key} = {value}\n")


@pytest.mark.parametrize("text, words", [
    ("[sweep]\ntimeout_s = 0\n" + MODEL, "[sweep] timeout_s: must be > 0, got the integer 0"),
    ("[sweep]\ntimeout_s = -5.0\n" + MODEL, "[sweep] timeout_s: must be > 0"),
    ("[sweep]\ntimeout_s = 1e9\n" + MODEL, "[sweep] timeout_s: must be <= 86400"),
    ("[sweep]\ntimeout_s = nan\n" + MODEL, "[sweep] timeout_s: must be a finite number"),
    ("[timing]\nmax_time_s = inf\n" + MODEL, "[timing] max_time_s: must be a finite number"),
    ("[sweep]\nbatch_sizes = [4, -1]\n" + MODEL, "[sweep] batch_sizes item 2: must be >= 1, got the integer -1"),
    ("[sweep]\nbatch_sizes = []\n" + MODEL, "[sweep] batch_sizes: must not be empty"),
    ("[[models]]\nsource = ''\n", "[[models]] #1 source: must not be empty"),
    ("[[models]]\nsource = 'm.onnx'\nname = ''\n", "[[models]] #1 name: must not be empty"),
])
def test_limits(text: str, words: str) -> None:
    assert words in _refused(text)


def test_timing_checks_name_the_plan_keys_not_the_command_line_options() -> None:
    # BenchConfig's own check (max_time_s >= min_time_s, default 1.0): the plan names its keys, not --max-time-s
    message = _refused("[timing]\nmax_time_s = 0.5\n" + MODEL)
    assert message == "plan: [timing] max_time_s 0.5 is below the default min_time_s 1.0"
    assert _refused("[timing]\nmin_time_s = 5\nmax_time_s = 1\n" + MODEL) == (
        "plan: [timing] max_time_s 1.0 is below min_time_s 5.0")
    assert "--" not in _refused("[timing]\nmin_iters = 0\n" + MODEL)
    assert "[timing] compile_mode 'fast'" in _refused("[timing]\ncompile_mode = 'fast'\n" + MODEL)
    # the command line's messages keep its option names
    from modelcost.bench.base import BenchConfig

    with pytest.raises(ModelcostError, match="--max-time-s 0.5 is below --min-time-s 1.0"):
        BenchConfig(max_time_s=0.5)


def test_timing_device_is_refused_each_config_runs_on_its_backends_device() -> None:
    # it was accepted and then overridden by the backend's device in every config (sweep/adapter.py)
    assert "unknown key(s) device in [timing]" in _refused("[timing]\ndevice = 'cpu'\n" + MODEL)


def test_the_finalists_options_are_refused_a_sweep_repeats_with_repeats() -> None:
    # analyze / bench / recommend repeat their finalists (runs/finalists.py); a sweep's child never does
    assert "unknown key(s) finalist_repeats in [timing]" in _refused("[timing]\nfinalist_repeats = 3\n" + MODEL)


def test_models_written_as_one_table_is_told_to_use_double_brackets() -> None:
    message = _refused("[models]\nsource = 'm.onnx'\n")
    assert message == ("plan: models: expected [[models]] tables, one per model; [models] is a single table (write "
                       "[[models]] above each model's keys)")


@pytest.mark.parametrize("constraints, words", [
    ("max_latency_ms = -1", "[constraints] max_latency_ms must be a number >= 0, not -1"),
    ("min_throughput_ips = nan", "[constraints] min_throughput_ips: must be a finite number"),
    ("latency_stat = 'p42'", "[constraints] latency_stat must be one of p50, p90, p95, p99, mean, not 'p42'"),
    ("objective = 'cheapest'", "[constraints] objective must be one of throughput, latency, not 'cheapest'"),
    ("batch_sizes = [1]", "unknown key(s) batch_sizes in [constraints]"),
])
def test_constraints_are_checked_when_the_plan_is_read(constraints: str, words: str) -> None:
    # they used to be read only by `modelcost results --report`, which then failed on that database for good
    assert words in _refused(f"[constraints]\n{constraints}\n" + MODEL)


def test_constraints_that_pass_are_what_recommend_takes() -> None:
    plan = parse_plan("[constraints]\nmax_latency_ms = 10\nlatency_stat = 'p50'\nobjective = 'latency'\n" + MODEL)
    assert plan.constraints == {"max_latency_ms": 10, "latency_stat": "p50", "objective": "latency"}


def test_recommend_uses_the_same_constraints_check() -> None:
    from modelcost.decide.constraints import Constraints
    from modelcost.decide.recommend import recommend

    with pytest.raises(ModelcostError, match="max_latency_ms must be a number >= 0, not -1"):
        recommend([], Constraints(max_latency_ms=-1))


def test_input_shapes_and_backends_errors_name_the_model() -> None:
    shapes = _refused("[[models]]\nsource = 'm.onnx'\ninput_shapes = ['x:1x3']\n")
    assert shapes.startswith("plan: [[models]] #1 input_shapes 'x:1x3': expected NAME=DIMS") and "--" not in shapes
    assert "[[models]] #1 backends: unknown backend 'nope'" in _refused(MODEL + "backends = ['nope']\n")
    assert "[sweep] precisions: unknown precision(s) fp64" in _refused("[sweep]\nprecisions = ['fp64']\n" + MODEL)


def test_a_plan_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_bytes(b"[[models]]\nsource = '\xff.onnx'\n")
    with pytest.raises(ModelcostError) as info:
        load_plan(path)
    # offset: "[[models]]\n" is 11 bytes, "source = '" 10 more -> the 0xff byte is at 21
    assert str(info.value) == f"plan {path}: not UTF-8 text (byte 0xff at offset 21); save it as UTF-8"


def test_relative_sources_are_taken_from_the_plans_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "plans"
    folder.mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the cwd must not matter
    absolute = str(tmp_path / "abs.onnx")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    sources = ["m.onnx", "sub/f.py:make", "../up.pt2", "w.pt", "zoo:resnet50", "torchvision:resnet18",
               "pkg.mod:make", absolute, "plain_module:factory", "~/h.onnx"]
    text = "".join(f"[[models]]\nsource = '{s}'\nname = 'n{i}'\n" for i, s in enumerate(sources))
    (folder / "plan.toml").write_text(text)
    plan = load_plan(Path("..") / "plans" / "plan.toml")
    got = [m.source for m in plan.models]
    assert got == [str(folder / "m.onnx"), f"{folder / 'sub' / 'f.py'}:make", str(tmp_path / "up.pt2"),
                   str(folder / "w.pt"), "zoo:resnet50", "torchvision:resnet18", "pkg.mod:make", absolute,
                   "plain_module:factory", str(tmp_path / "home" / "h.onnx")]
    # the default name still comes from the source as written
    assert parse_plan("[[models]]\nsource = 'sub/f.py:make'\n", str(folder / "plan.toml")).models[0].name == "f"


def test_without_a_plan_file_sources_stay_as_written() -> None:
    assert parse_plan(MODEL).models[0].source == "m.onnx"


@pytest.mark.parametrize("text, words", [
    (MODEL + "trust_pickle = 'no'\n", "[[models]] #1 trust_pickle: expected true or false, got the string 'no'"),
    ("[sweep]\ntimeout_s = 'long'\n" + MODEL, "[sweep] timeout_s: expected a number"),
    ("[timing]\nmax_time_s = 0.5\n" + MODEL, "[timing] max_time_s 0.5 is below the default min_time_s 1.0"),
    ("[models]\nsource = 'm.onnx'\n", "[models] is a single table"),
    ("[constraints]\nmax_latency_ms = 'x'\n" + MODEL, "[constraints] max_latency_ms: expected a number"),
])
def test_sweep_command_refuses_a_bad_plan_in_one_line_and_writes_nothing(tmp_path: Path, text: str,
                                                                         words: str) -> None:
    from modelcost.cli.app import app

    plan, db = tmp_path / "plan.toml", tmp_path / "x.sqlite"
    plan.write_text(text)
    res = CliRunner().invoke(app, ["sweep", str(plan), "--db", str(db)])
    assert res.exit_code == 1, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and words in " ".join(res.output.split()), res.output
    assert not db.exists() and "Traceback" not in res.output


def test_sweep_command_refuses_a_plan_that_is_not_utf8(tmp_path: Path) -> None:
    from modelcost.cli.app import app

    plan = tmp_path / "plan.toml"
    plan.write_bytes(b"\xfe\xff[[models]]\n")
    res = CliRunner().invoke(app, ["sweep", str(plan), "--db", str(tmp_path / "x.sqlite")])
    assert res.exit_code == 1 and "not UTF-8 text" in res.output and len(res.output.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == ["plan.toml"]


def test_dry_run_lists_the_configs_and_opens_no_database(tmp_path: Path) -> None:
    """``sweep --dry-run``: the plan checked and expanded as a run would (2 backends x 2 batches = 4 configs, the
    relative source taken from the plan's folder), nothing measured, no database made."""
    import shutil

    from modelcost.cli.app import app

    shutil.copy(Path(__file__).resolve().parents[2] / "sample_models" / "resnet_tiny.onnx", tmp_path / "m.onnx")
    plan = tmp_path / "plan.toml"
    plan.write_text("[sweep]\nbackends = ['ort-cpu', 'torch-cpu']\nbatch_sizes = [1, 4]\n" + MODEL)
    res = CliRunner().invoke(app, ["sweep", str(plan), "--db", str(tmp_path / "x.sqlite"), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "4 config(s)" in res.output and "m ort-cpu fp32 b4" in res.output and str(tmp_path / "m.onnx") in res.output
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "plan.toml"]
