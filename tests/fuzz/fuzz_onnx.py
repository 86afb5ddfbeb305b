"""A seeded mutation fuzzer of the ONNX loader and counter, through the same path as
``modelcost analyze FILE --static``.

Each mutant is one sample model (sample_models/*.onnx) changed by one named mutator: byte-level (flips,
truncation, inserted / deleted bytes) or field-level (element types, dims, names, node inputs, attributes,
opsets, initializers ...). Mutant ``i`` of seed ``s`` is fully determined by ``(s, i)``, so any outcome can be
replayed. Every mutant runs in-process in a worker subprocess through typer's CliRunner (the CLI's own error
handling) and is classified:

    clean      exit 1 with exactly one ``error:`` line on stderr (bad input, said once)
    analysed   exit 0, or 3 (a partial result)
    traceback  any other exception, or an error that is not one line            -> a bug
    hang       no answer within the per-mutant time limit (the worker is killed) -> a bug
    crash      the worker died (segfault, out of memory under the memory limit)  -> a bug
    memory     the worker's peak RSS grew by more than GROWTH_MB on this mutant    -> a bug (even if it then
               ended cleanly: an allocation that the memory limit stopped may be caught and survived)

The worker runs under a memory limit (RLIMIT_AS), so a mutant that makes modelcost allocate without bound shows
up as a crash or a MemoryError traceback instead of swapping the machine.

    python3 tests/fuzz/fuzz_onnx.py --mutants 5000 --seed 1 --mem-mb 1024     # a long run: a table + JSON
    python3 tests/fuzz/fuzz_onnx.py --replay 1:1234 --save m.onnx             # write one mutant to a file

Adding cases: a mutator is a function ``(rng, model_bytes) -> bytes`` listed in MUTATORS under its name;
a regression seed is an .onnx file in tests/fuzz/corpus/ (tests/test_fuzz_onnx.py runs every one).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402 - beside this script, which also runs as a file
from harness import FAILURES, REPO, classify, summarise  # noqa: E402, F401 - re-exported for the tests

from modelcost.loaders.onnx_graph import all_graphs  # noqa: E402

HERE = Path(__file__).resolve().parent
SAMPLES = REPO / "sample_models"
CORPUS = HERE / "corpus"
GROWTH_MB = 256  # a mutant of a file under 100 KB that grows the worker's peak RSS by more than this is a bug
# The sample models fuzzed, with the extra CLI arguments each needs to get past its inputs.
SOURCES: dict[str, tuple[str, ...]] = {
    "resnet_tiny.onnx": (), "conv_float.onnx": (), "control_flow.onnx": (), "qdq_conv.onnx": (),
    "dynamic_batch.onnx": ("--input-shape", "tokens=2x8x16"), "mlp_external.onnx": (),
}

Mutator = Callable[[random.Random, bytes], bytes]


# --- byte-level mutators -------------------------------------------------------------------------------------


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def set_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF))
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def insert_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[at:]


def delete_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + data[at + rng.randint(1, 16):]


# --- field-level mutators: parse, edit one field, serialise --------------------------------------------------


def _model(data: bytes) -> Any:
    import onnx

    return onnx.load_from_string(data)


def _nodes(model: Any) -> list[Any]:
    return [n for g in all_graphs(model.graph) for n in g.node]


def _value_infos(model: Any) -> list[Any]:
    return [v for g in all_graphs(model.graph) for v in [*g.input, *g.output, *g.value_info]]


def _edit(fn: Callable[[random.Random, Any], None]) -> Mutator:
    def mutate(rng: random.Random, data: bytes) -> bytes:
        model = _model(data)
        fn(rng, model)
        return model.SerializeToString()

    mutate.__name__ = fn.__name__
    return mutate


BAD_TYPES = (0, 40, 999, -1, 8, 15, 16, 17, 21, 23, 2**31 - 1)  # invalid, string, complex, bfloat16, float8, int4


@_edit
def elem_type(rng: random.Random, model: Any) -> None:
    """A tensor or initializer whose element type is not valid (0, 40, 999) or unusual (string, complex)."""
    tensors = [v.type.tensor_type for v in _value_infos(model) if v.type.HasField("tensor_type")]
    inits = [t for g in all_graphs(model.graph) for t in g.initializer]
    if inits and (not tensors or rng.random() < 0.5):
        rng.choice(inits).data_type = rng.choice(BAD_TYPES)
    elif tensors:
        rng.choice(tensors).elem_type = rng.choice(BAD_TYPES)


@_edit
def dims(rng: random.Random, model: Any) -> None:
    """A dim of a declared tensor or initializer set to 0, negative, huge, or a symbol."""
    shapes = [v.type.tensor_type.shape for v in _value_infos(model) if v.type.tensor_type.HasField("shape")]
    shapes = [s for s in shapes if len(s.dim)]
    inits = [t for g in all_graphs(model.graph) for t in g.initializer if len(t.dims)]
    value = rng.choice((0, -1, -7, 2**31, 2**40, 2**62))
    if inits and (not shapes or rng.random() < 0.4):
        t = rng.choice(inits)
        t.dims[rng.randrange(len(t.dims))] = value
    elif shapes:
        shape = rng.choice(shapes)
        dim = shape.dim[rng.randrange(len(shape.dim))]
        if rng.random() < 0.3:
            dim.dim_param = rng.choice(("N", "", "a b", "0"))
        else:
            dim.dim_value = value


@_edit
def node_inputs(rng: random.Random, model: Any) -> None:
    """A node loses all or some of its inputs / outputs, or gets one that nothing produces."""
    nodes = _nodes(model)
    if not nodes:
        return
    node = rng.choice(nodes)
    choice = rng.randrange(4)
    if choice == 0:
        del node.input[:]
    elif choice == 1 and node.input:
        del node.input[rng.randrange(len(node.input))]
    elif choice == 2:
        node.input.append(rng.choice(("", "nowhere", node.output[0] if node.output else "x")))
    else:
        del node.output[:]


@_edit
def node_order(rng: random.Random, model: Any) -> None:
    """A node removed, duplicated, or the nodes of a graph shuffled (not topologically sorted)."""
    graph = rng.choice(list(all_graphs(model.graph)))
    if not graph.node:
        return
    nodes = list(graph.node)
    choice = rng.randrange(3)
    if choice == 0:
        nodes.pop(rng.randrange(len(nodes)))
    elif choice == 1:
        nodes.insert(rng.randrange(len(nodes)), nodes[rng.randrange(len(nodes))])
    else:
        rng.shuffle(nodes)
    del graph.node[:]
    graph.node.extend(nodes)


@_edit
def op_type(rng: random.Random, model: Any) -> None:
    """A node's op type swapped for another one in the model, an unknown one, or one in another domain."""
    nodes = _nodes(model)
    if not nodes:
        return
    node = rng.choice(nodes)
    pick = rng.randrange(3)
    if pick == 0:
        node.op_type = rng.choice(nodes).op_type
    elif pick == 1:
        node.op_type = rng.choice(("If", "Loop", "Scan", "Conv", "MatMul", "Gemm", "Reshape", "NotAnOp", ""))
    else:
        node.domain = rng.choice(("com.microsoft", "ai.onnx.ml", "bogus"))


@_edit
def attribute(rng: random.Random, model: Any) -> None:
    """An attribute's value made out of range, its type changed, or the attribute dropped."""
    nodes = [n for n in _nodes(model) if n.attribute]
    if not nodes:
        return
    node = rng.choice(nodes)
    attr = node.attribute[rng.randrange(len(node.attribute))]
    pick = rng.randrange(4)
    if pick == 0:
        node.attribute.remove(attr)
    elif pick == 1 and attr.ints:
        attr.ints[rng.randrange(len(attr.ints))] = rng.choice((0, -1, -3, 2**31, 2**62))
    elif pick == 2:
        attr.i = rng.choice((0, -1, 2**40))
        attr.type = rng.choice((1, 2, 3, 5, 7))
    else:
        del attr.ints[:]


@_edit
def initializer(rng: random.Random, model: Any) -> None:
    """An initializer dropped, its raw data cut short, or its name doubled."""
    graph = model.graph
    if not graph.initializer:
        return
    t = graph.initializer[rng.randrange(len(graph.initializer))]
    pick = rng.randrange(3)
    if pick == 0:
        graph.initializer.remove(t)
    elif pick == 1 and t.raw_data:
        t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data))]
    else:
        graph.initializer.add().CopyFrom(t)


@_edit
def opset(rng: random.Random, model: Any) -> None:
    """The default-domain opset set to 0, an ancient one, a future one, or removed; or the IR version changed."""
    if rng.random() < 0.3:
        model.ir_version = rng.choice((0, 1, 3, 99))
        return
    if model.opset_import and rng.random() < 0.8:
        model.opset_import[0].version = rng.choice((0, 1, 6, 9, 11, 99, -1))
    else:
        del model.opset_import[:]


@_edit
def graph_io(rng: random.Random, model: Any) -> None:
    """A graph input or output removed, or its type cleared."""
    graph = model.graph
    pool = [graph.input, graph.output]
    field = rng.choice([f for f in pool if len(f)] or pool)
    if not len(field):
        return
    v = field[rng.randrange(len(field))]
    if rng.random() < 0.5:
        field.remove(v)
    else:
        v.ClearField("type")


def bad_utf8_name(rng: random.Random, data: bytes) -> bytes:
    """A node, tensor or input name replaced by bytes that are not valid UTF-8 (same length, so it still parses)."""
    model = _model(data)
    names = [n.name for n in _nodes(model) if n.name] + [v.name for v in _value_infos(model) if v.name]
    names = [n.encode() for n in names if len(n.encode()) >= 2]
    if not names:
        return flip_bytes(rng, data)
    name = rng.choice(names)
    bad = bytes([0xFF, 0xC3]) + name[2:]  # 0xFF never starts a UTF-8 sequence
    return data.replace(name, bad, rng.choice((1, -1)))


MUTATORS: dict[str, Mutator] = {
    "flip_bytes": flip_bytes, "set_bytes": set_bytes, "truncate": truncate, "insert_bytes": insert_bytes,
    "delete_bytes": delete_bytes, "elem_type": elem_type, "dims": dims, "node_inputs": node_inputs,
    "node_order": node_order, "op_type": op_type, "attribute": attribute, "initializer": initializer,
    "opset": opset, "graph_io": graph_io, "bad_utf8_name": bad_utf8_name,
}


def mutant(seed: int, index: int) -> tuple[str, str, bytes]:
    """Mutant ``index`` of ``seed``: (source model, mutator name, bytes). Deterministic."""
    rng = random.Random(f"{seed}:{index}")
    source = rng.choice(sorted(SOURCES))
    name = rng.choice(sorted(MUTATORS))
    data = (SAMPLES / source).read_bytes()
    try:
        return source, name, MUTATORS[name](rng, data)
    except Exception:  # noqa: BLE001 - a field edit that cannot apply to this model: flip bytes instead
        return source, "flip_bytes", flip_bytes(rng, data)


# --- running one mutant through the CLI ----------------------------------------------------------------------


def run_file(path: Path, extra: tuple[str, ...] = ()) -> tuple[str, str]:
    """Analyse one file in-process through the CLI: (outcome, detail)."""
    from typer.testing import CliRunner

    from modelcost.cli import app

    return classify(CliRunner().invoke(app, ["analyze", str(path), "--static", *extra]))


def run_files_isolated(paths: list[Path], *, timeout_s: float = 60.0,
                       mem_mb: int = 1024) -> dict[Path, tuple[str, str]]:
    """``run_file`` on each file, in one worker subprocess under the memory limit and with a time limit per file
    (harness.fuzz: a file that hangs or kills its worker is that file's outcome, and a fresh worker goes on):
    path -> (outcome, detail). For regression seeds, so that one that regresses to allocating without bound
    fails its test instead of the machine."""
    files = [str(p) for p in paths]

    def describe(index: int) -> dict[str, Any]:
        return {"source": files[index], "mutator": "seed"}

    records = harness.fuzz(Path(__file__).resolve(), describe, 0, len(files), timeout_s=timeout_s, mem_mb=mem_mb,
                           extra=("--files", os.pathsep.join(files)))
    return {Path(files[r["index"]]): (r["outcome"], r["detail"]) for r in records}


def _files_worker(files: list[str], indices: list[int], mem_mb: int) -> None:
    """In the subprocess: analyse each file through the CLI (harness.serve answers one JSON line each)."""
    import warnings

    warnings.simplefilter("ignore")
    harness.limit_memory(mem_mb)
    harness.build_each_cli_once()
    run_file(SAMPLES / "conv_float.onnx")  # every import made before the first file's clock starts

    def run_case(index: int) -> dict[str, Any]:
        outcome, detail = run_file(Path(files[index]))
        return {"source": files[index], "mutator": "seed", "outcome": outcome, "detail": detail}

    harness.serve(indices, run_case, GROWTH_MB)


def _worker(seed: int, indices: list[int], mem_mb: int) -> None:
    """In the subprocess: analyse each mutant through the CLI (harness.serve answers one JSON line each)."""
    import warnings

    warnings.simplefilter("ignore")
    harness.limit_memory(mem_mb)
    harness.build_each_cli_once()
    run_file(SAMPLES / "conv_float.onnx")  # every import made before the first mutant's clock starts
    with tempfile.TemporaryDirectory(prefix="modelcost-fuzz-") as tmp:
        folder = Path(tmp)
        (folder / "mlp_external.onnx.data").symlink_to(SAMPLES / "mlp_external.onnx.data")

        def run_case(index: int) -> dict[str, Any]:
            source, name, data = mutant(seed, index)
            path = folder / "mutant.onnx"
            path.write_bytes(data)
            outcome, detail = run_file(path, SOURCES[source])
            return {"source": source, "mutator": name, "outcome": outcome, "detail": detail}

        harness.serve(indices, run_case, GROWTH_MB)


def _describe(seed: int) -> Callable[[int], dict[str, Any]]:
    def describe(index: int) -> dict[str, Any]:
        source, name, _ = mutant(seed, index)
        return {"source": source, "mutator": name}

    return describe


def fuzz(seed: int, count: int, *, start: int = 0, timeout_s: float = 20.0, mem_mb: int = 1024,
         progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Run mutants ``start .. start+count-1`` of ``seed``; one record per mutant. A worker that hangs past
    ``timeout_s`` on one mutant, or dies, is replaced and the run goes on with the next mutant."""
    return harness.fuzz(Path(__file__).resolve(), _describe(seed), seed, count, start=start, timeout_s=timeout_s,
                        mem_mb=mem_mb, progress=progress)


# --- the long run --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutants", type=int, default=500)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=20.0, help="per mutant: longer is a hang")
    ap.add_argument("--mem-mb", type=int, default=1024, help="address-space limit of the worker (RLIMIT_AS)")
    ap.add_argument("--json", type=Path, help="write the summary and every failure here")
    ap.add_argument("--replay", help="SEED:INDEX: analyse that one mutant and print its outcome")
    ap.add_argument("--save", type=Path, help="with --replay: also write the mutant here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--indices", help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)  # with --worker: analyse these files (os.pathsep between)
    args = ap.parse_args(argv)
    if args.worker and args.files:
        _files_worker(args.files.split(os.pathsep), [int(i) for i in args.indices.split(",")], args.mem_mb)
        return 0
    if args.worker:
        _worker(args.seed, [int(i) for i in args.indices.split(",")], args.mem_mb)
        return 0
    if args.replay:
        seed, index = (int(x) for x in args.replay.split(":"))
        recs = fuzz(seed, 1, start=index, timeout_s=args.timeout_s, mem_mb=args.mem_mb)
        if args.save:
            args.save.write_bytes(mutant(seed, index)[2])
        print(json.dumps(recs[0], indent=2))
        return 1 if recs[0]["outcome"] in FAILURES else 0
    t0 = time.monotonic()
    records = fuzz(args.seed, args.mutants, start=args.start, timeout_s=args.timeout_s, mem_mb=args.mem_mb,
                   progress=harness.progress_printer(args.mutants))
    settings = {"seed": args.seed, "start": args.start, "timeout_s": args.timeout_s, "mem_mb": args.mem_mb}
    return harness.finish(records, t0, settings, f"mutants (seed {args.seed})", args.json)


if __name__ == "__main__":
    sys.exit(main())
