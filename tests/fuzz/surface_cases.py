"""The cases of the surface fuzzer (tests/fuzz/fuzz_surfaces.py runs them): for each surface (sweep plans, results
databases, ``llm`` configs, the command lines of ``llm`` / ``train`` / ``sweep`` / ``results``) one valid base
input, the named mutators that change it, and ``case``, which makes case ``i`` of seed ``s`` on a surface from
``(surface, s, i)`` alone, so any outcome can be replayed. Nothing here runs a command.
"""

from __future__ import annotations

import json
import math
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402 - beside this module, as for fuzz_surfaces.py

REPO = harness.REPO
SAMPLE_ONNX = REPO / "sample_models" / "resnet_tiny.onnx"
TINY_CNN = REPO / "tests" / "fixtures" / "tiny_cnn.py"

# Values that a demanding user (or a typo) can put where a setting goes: every JSON / TOML type, the edges of
# each number range, text that looks like a boolean or a number, and very long or non-ASCII text.
NASTY: tuple[Any, ...] = (
    "", "no", "yes", "true", "false", "long", "fast", "auto", "0", "-1", "1e9", "abc", ",", "1,,2", "ünïcode",
    "x" * 2000, "../../etc/passwd", "zoo:nope", "a:b:c", 0, 1, -1, -4, 2, 3, 7, 2**31, 2**53, 2**63 - 1, 10**9,
    10**12, 0.0, 0.5, -0.5, 1e-300, 1e308, math.nan, math.inf, -math.inf, True, False, [], [0], [1, 2], [-3],
    ["a"], [[]], [True], {}, {"a": 1}, {"source": 5},
)


@dataclass
class Case:
    """One fuzz case: the files it writes into an empty folder, the command line, and which of its paths the
    command may write (everything else there must be unchanged afterwards)."""

    mutator: str
    source: str
    files: dict[str, bytes]
    args: list[str]
    outputs: set[str] = field(default_factory=set)


# --- a small TOML writer (the standard library reads TOML only) ----------------------------------------------


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(doc: dict[str, Any]) -> str:
    """Top-level scalars first, then tables, then arrays of tables (a list of dicts under a key)."""
    lines = [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)
             and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines += [f"[{json.dumps(k)}]"] + [f"{json.dumps(kk)} = {_toml_value(vv)}" for kk, vv in v.items()]
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for table in v:
                lines += [f"[[{json.dumps(k)}]]"]
                lines += [f"{json.dumps(kk)} = {_toml_value(vv)}" for kk, vv in table.items()]
    return "\n".join(lines) + "\n"


# --- mutations shared by the structured surfaces ----------------------------------------------------------------


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in a nested dict / list document."""
    out: list[tuple[Any, ...]] = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for k, v in items:
        out.append(prefix + (k,))
        out += _paths(v, prefix + (k,))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _drop(doc: Any, path: tuple[Any, ...]) -> None:
    for k in path[:-1]:
        doc = doc[k]
    del doc[path[-1]]


def _nasty(rng: random.Random) -> Any:
    return rng.choice(NASTY)


def mutate_doc(rng: random.Random, doc: dict[str, Any], name: str, keys: list[str]) -> None:
    """One structural change of ``doc``: ``set_value`` (a known or existing key gets a nasty value),
    ``drop_key``, ``unknown_key`` or ``retype`` (a table or list becomes another type)."""
    paths = _paths(doc)
    if name == "set_value":
        for _ in range(rng.randint(1, 3)):  # an earlier change may have replaced a table: paths are re-read
            paths = _paths(doc)
            known = tuple(rng.choice(keys).split(".")) if keys and rng.random() < 0.5 else None
            path = tuple(int(p) if p.isdigit() else p for p in known) if known else rng.choice(paths or [("x",)])
            value = _nasty(rng)
            try:
                _set(doc, path, value)
            except (KeyError, IndexError, TypeError):
                doc[str(path[-1])] = value
    elif name == "drop_key" and paths:
        _drop(doc, rng.choice(paths))
    elif name == "unknown_key":
        containers = [p for p in paths if isinstance(_get(doc, p), dict)] + [()]
        _set(doc, rng.choice(containers) + (rng.choice(("colour", "trust", "Source", "batch", "")),), _nasty(rng))
    elif name == "retype":
        branches = [p for p in paths if isinstance(_get(doc, p), dict | list)] or paths
        if branches:
            _set(doc, rng.choice(branches), rng.choice((5, "x", [1, 2], {"a": 1}, [], {}, [{"a": 1}])))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def mutate_bytes(rng: random.Random, data: bytes, name: str) -> bytes:
    """Text-level changes: ``flip_bytes``, ``truncate``, ``not_utf8`` (bytes no UTF-8 text holds)."""
    out = bytearray(data)
    if name == "flip_bytes":
        for _ in range(rng.randint(1, 6)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    elif name == "truncate":
        del out[rng.randrange(len(out)):]
    elif name == "not_utf8":
        at = rng.randrange(len(out) + 1)
        out[at:at] = rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"\xfe\xff"))
    return bytes(out)


STRUCT = ("set_value", "drop_key", "unknown_key", "retype")
TEXT = ("flip_bytes", "truncate", "not_utf8")


# --- surface: sweep plans ------------------------------------------------------------------------------------

PLAN_KEYS = ["sweep.backends", "sweep.precisions", "sweep.batch_sizes", "sweep.timeout_s", "timing.warmup",
             "timing.min_time_s", "timing.min_iters", "timing.max_time_s", "constraints.max_latency_ms",
             "constraints.min_throughput_ips", "constraints.max_memory_gb", "constraints.max_accuracy_drop_pct",
             "constraints.latency_stat", "constraints.objective", "models.0.source", "models.0.name",
             "models.0.input_shapes", "models.0.backends", "models.0.precisions", "models.0.batch_sizes",
             "models.0.trust_pickle", "models.1.source", "models.1.trust_pickle", "models.1.batch_sizes"]


def _base_plan(rng: random.Random) -> dict[str, Any]:
    models: list[dict[str, Any]] = [{"source": "model.onnx", "name": "tiny"}]
    if rng.random() < 0.5:
        models.append({"source": "cnn.py:make_model", "batch_sizes": [1, 2], "trust_pickle": False})
    doc: dict[str, Any] = {"sweep": {"backends": ["ort-cpu", "torch-cpu"], "precisions": ["fp32"],
                                     "batch_sizes": [1, 4], "timeout_s": 60},
                           "timing": {"min_time_s": 0.05, "max_time_s": 1.0},
                           "constraints": {"max_latency_ms": 10}, "models": models}
    for table in ("timing", "constraints"):
        if rng.random() < 0.3:
            del doc[table]
    return doc


def plan_case(rng: random.Random) -> Case:
    name = rng.choice(STRUCT + TEXT)
    doc = _base_plan(rng)
    if name in STRUCT:
        mutate_doc(rng, doc, name, PLAN_KEYS)
    text = to_toml(doc).encode()
    if name in TEXT:
        text = mutate_bytes(rng, text, name)
    files = {"plan.toml": text, "model.onnx": SAMPLE_ONNX.read_bytes(), "cnn.py": TINY_CNN.read_bytes()}
    return Case(name, "plan", files, ["sweep", "plan.toml", "--db", "results.sqlite", "--dry-run"],
                {"results.sqlite"})


# --- surface: results databases ------------------------------------------------------------------------------


def _result_row(model: str, backend: str, batch: int, p50_ms: float, status: str = "ok") -> dict[str, Any]:
    ok = status == "ok"
    return {"config_key": f"{model}-{backend}-{batch}", "model_name": model, "model_source": f"{model}.onnx",
            "model_hash": "0" * 16, "input_shapes": [], "backend": backend, "precision": "fp32", "batch_size": batch,
            "status": status, "reason": None if ok else "ModelcostError: no", "device_kind": "cpu",
            "device_name": "CPU", "versions_key": "v", "latency_p50_ms": p50_ms if ok else None,
            "latency_p90_ms": p50_ms * 1.1 if ok else None, "latency_p99_ms": p50_ms * 1.3 if ok else None,
            "throughput_ips": batch * 1000 / p50_ms if ok else None,
            "block_medians_ms": [p50_ms * (1 + 0.01 * i) for i in range(-3, 4)] if ok else None,
            "finished": "2026-11-25T00:00:00Z"}


def base_db(path: Path) -> None:
    """A small results database of two runs, written through the sweep's own writer (so its layout is real)."""
    sys.path.insert(0, str(REPO))
    from modelcost.sweep.db import ResultsDB

    db = ResultsDB(path)
    for run, scale in ((1, 1.0), (2, 1.2)):
        run_id = db.start_run(label=f"r{run}", engine="local", workers=1, command="modelcost sweep plan.toml",
                              plan_path="plan.toml", plan_toml='[[models]]\nsource = "m.onnx"\n', host="h",
                              configs_planned=6)
        for i in range(40):  # enough rows for the tables to span many pages
            model = f"model{i % 5}"
            db.insert_result({**_result_row(model, ("ort-cpu", "torch-cpu")[i % 2], 1 + i % 4, scale * (1 + i)),
                              "run_id": run_id, "static_json": {"pad": "x" * 400}})
        db.insert_result({**_result_row("broken", "ort-cpu", 1, 0.0, "failed"), "run_id": run_id})
        db.finish_run(run_id, "complete", 1.0)
    db.close()


def corrupt_db(rng: random.Random, data: bytes, name: str) -> bytes:
    """Page-level damage of an SQLite file (4096-byte pages)."""
    page = 4096
    pages = max(1, len(data) // page)
    out = bytearray(data)
    if name == "garbage_page":
        i = rng.randrange(1, pages) if pages > 1 else 0
        out[i * page:(i + 1) * page] = rng.randbytes(page)
    elif name == "zero_page":
        i = rng.randrange(pages)
        out[i * page:(i + 1) * page] = bytes(page)
    elif name == "flip_in_page":
        i = rng.randrange(pages)
        for _ in range(rng.randint(1, 16)):
            out[i * page + rng.randrange(page)] ^= 1 << rng.randrange(8)
    elif name == "truncate_pages":
        del out[rng.randrange(1, pages + 1) * page:]
    elif name == "truncate_mid":
        del out[rng.randrange(len(out)):]
    elif name == "header":
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(100)] = rng.randrange(256)
    elif name == "tail_pages":  # corrupted past its first pages: the header and schema still read
        for i in range(max(2, pages - rng.randint(1, 3)), pages):
            out[i * page:(i + 1) * page] = rng.randbytes(page)
    elif name == "swap_pages" and pages > 2:
        i, j = rng.sample(range(1, pages), 2)
        a, b = bytes(out[i * page:(i + 1) * page]), bytes(out[j * page:(j + 1) * page])
        out[i * page:(i + 1) * page], out[j * page:(j + 1) * page] = b, a
    elif name == "not_a_db":
        return rng.choice((b"", b"hello\n", rng.randbytes(5000), b"SQLite format 3\x00" + bytes(84)))
    return bytes(out)


DB_MUTATORS = ("garbage_page", "zero_page", "flip_in_page", "truncate_pages", "truncate_mid", "header",
               "tail_pages", "swap_pages", "not_a_db", "intact")
RESULTS_ARGS: tuple[tuple[str, ...], ...] = (
    (), ("--report", "r.md"), ("--report", "r.html"), ("--compare", "1", "2"), ("--compare", "r1", "r2"),
    ("--json", "-"), ("--json", "out.json"), ("--model", "model1", "--status", "ok"), ("--run", "latest"),
    ("--since", "2026-01-01"),
)


_BASE_DB: list[bytes] = []


def base_db_bytes() -> bytes:
    """The bytes of ``base_db`` (made once per process)."""
    if not _BASE_DB:
        with tempfile.TemporaryDirectory() as tmp:
            base_db(Path(tmp) / "base.sqlite")
            _BASE_DB.append((Path(tmp) / "base.sqlite").read_bytes())
    return _BASE_DB[0]


def db_case(rng: random.Random, base: bytes) -> Case:
    name = rng.choice(DB_MUTATORS)
    data = base if name == "intact" else corrupt_db(rng, base, name)
    extra = list(rng.choice(RESULTS_ARGS))
    return Case(name, "db", {"results.sqlite": data}, ["results", "results.sqlite", *extra],
                {"r.md", "r.html", "out.json"})


# --- surface: llm configs ------------------------------------------------------------------------------------

LLM_BASES: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 256, "max_position_embeddings": 512},
    "gpt2": {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 256, "n_positions": 256},
    "mistral": {"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
                "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 256, "sliding_window": 32,
                "max_position_embeddings": 512},
    "qwen2": {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
              "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 256, "max_position_embeddings": 512},
    "mixtral": {"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
                "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 256, "num_local_experts": 4,
                "num_experts_per_tok": 2, "max_position_embeddings": 512},
}
LLM_KEYS = ["model_type", "hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
            "num_hidden_layers", "vocab_size", "max_position_embeddings", "sliding_window", "head_dim",
            "num_local_experts", "num_experts_per_tok", "n_embd", "n_head", "n_layer", "n_positions",
            "tie_word_embeddings", "torch_dtype", "rope_theta", "layer_types", "architectures"]
LLM_ARG_VALUES: dict[str, tuple[str, ...]] = {
    "-p": ("16", "8,16", "100", "0", "-1", "abc", "", ",", "1000000000", "4096", "1e3"),
    "-g": ("8", "1", "4,8", "0", "-2", "x", "", "1000000000"),
    "-b": ("1", "2,4", "64", "0", "-1", "b", "", "1000000000"),
    "--dtype": ("bf16", "fp16", "fp32", "int8", "", "float"),
    "--kv-dtype": ("fp8", "int8", "fp32", "int4", ""),
    "--target-gpu": ("H100 SXM", "H200", "nope", ""),
}


def llm_case(rng: random.Random) -> Case:
    base = rng.choice(sorted(LLM_BASES))
    doc = json.loads(json.dumps(LLM_BASES[base]))
    name = rng.choice(STRUCT + TEXT + ("model_type", "not_an_object"))
    if name in STRUCT:
        mutate_doc(rng, doc, name, LLM_KEYS)
    elif name == "model_type":
        doc = {"model_type": rng.choice(("llama", "gpt2", "mixtral", "nope", "bert", ""))} if rng.random() < 0.5 \
            else {**doc, "model_type": rng.choice(sorted(LLM_BASES) + ["nope"])}
    text = json.dumps(doc, allow_nan=True).encode()
    if name in TEXT:
        text = mutate_bytes(rng, text, name)
    elif name == "not_an_object":
        text = rng.choice((b"[]", b'"x"', b"1", b"null", b""))
    args = ["llm", "config.json", "--static", "-p", "16", "-g", "8"]
    for flag in rng.sample(sorted(LLM_ARG_VALUES), rng.randint(0, 2)):
        args += [flag, rng.choice(LLM_ARG_VALUES[flag])]
    return Case(name, base, {"config.json": text}, args, {"out.json"})


# --- surface: command lines ----------------------------------------------------------------------------------

CLI_VALUES = ("", "0", "-1", "-4", "1", "2", "abc", ",", "1,,2", "auto", "1e9", "1000000000", "nan", "inf", "0.5",
              "fp32", "bf16", "H100 SXM", "x" * 300, "ünï", "1,2", "--static")
CLI_COMMANDS: dict[str, tuple[list[str], dict[str, tuple[str, ...]], set[str]]] = {
    # command -> (base args, option -> its own good values, output paths)
    "llm": (["llm", "config.json", "--static"],
            {**LLM_ARG_VALUES, "--json": ("out.json",), "--attention": ("causal", "full"),
             "--routing": ("uniform", "zipf:1.2", "zipf:-1", "routing.json")}, {"out.json"}),
    "train": (["train", "cnn.py:make_model", "--static"],
              {"--batch-size": ("1", "4"), "--precisions": ("fp32", "amp_bf16,fp32", "fp16"),
               "--optimizer": ("sgd", "adam"), "--memory-gb": ("1", "0.001"), "--margin": ("0.1", "0.9"),
               "--target-gpu": ("H100 SXM",), "--input-shape": ("x=2x3x16x16", "x=1x3x8x8:float16"),
               "--batch-sizes": ("1,2", "auto"), "--json": ("out.json",)}, {"out.json"}),
    "sweep": (["sweep", "plan.toml", "--dry-run"],
              {"--db": ("results.sqlite",), "--workers": ("1", "2"), "--label": ("nightly",), "--force": ()},
              {"results.sqlite"}),
    "results": (["results", "results.sqlite"],
                {"--model": ("model1",), "--gpu": ("H100",), "--batch": ("1",), "--status": ("ok", "failed"),
                 "--run": ("latest", "r1"), "--since": ("2026-01-01",), "--until": ("2026-12-01",),
                 "--report": ("r.md", "r.html", "r.txt"), "--json": ("-", "out.json"),
                 "--compare": ("1", "r1"), "--tolerance-pct": ("2", "-1")}, {"r.md", "r.html", "r.txt", "out.json"}),
}
CLI_MUTATORS = ("good_values", "nasty_values", "missing_value", "unknown_option", "repeated")


def cli_case(rng: random.Random, db_bytes: bytes) -> Case:
    command = rng.choice(sorted(CLI_COMMANDS))
    base, options, outputs = CLI_COMMANDS[command]
    name = rng.choice(CLI_MUTATORS)
    args = list(base)
    for opt in rng.sample(sorted(options), min(len(options), rng.randint(1, 3))):
        good = options[opt]
        if opt == "--compare":  # two values
            args += [opt, rng.choice(good + CLI_VALUES), rng.choice(("2", "r2", "latest") + CLI_VALUES)]
            continue
        if not good:  # a flag
            args.append(opt)
            continue
        value = rng.choice(good) if name != "nasty_values" else rng.choice(CLI_VALUES)
        args += [opt, value] if name != "missing_value" else [opt]
    if name == "unknown_option":
        args.append(rng.choice(("--nope", "-z", "--static=1", "extra-arg")))
    elif name == "repeated":
        args += args[len(base):]
    doc = {"sweep": {"backends": ["ort-cpu"], "precisions": ["fp32"]}, "models": [{"source": "model.onnx"}]}
    files = {"config.json": json.dumps(LLM_BASES["llama"]).encode(), "cnn.py": TINY_CNN.read_bytes(),
             "plan.toml": to_toml(doc).encode(), "model.onnx": SAMPLE_ONNX.read_bytes(),
             "routing.json": b"[0.5, 0.25, 0.25]"}
    if command == "results":
        files["results.sqlite"] = db_bytes
    return Case(name, command, files, args, set(outputs))


# --- one case --------------------------------------------------------------------------------------------------

SURFACES = ("plan", "db", "llm", "cli")


def case(surface: str, seed: int, index: int) -> Case:
    """Case ``index`` of ``seed`` on ``surface``. Deterministic."""
    rng = random.Random(f"{surface}:{seed}:{index}")
    db_bytes = base_db_bytes() if surface in ("db", "cli") else b""
    if surface == "plan":
        return plan_case(rng)
    if surface == "db":
        return db_case(rng, db_bytes)
    if surface == "llm":
        return llm_case(rng)
    return cli_case(rng, db_bytes)
