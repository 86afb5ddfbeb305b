"""Benchmark: static analysis of a Llama-7B-shaped ONNX graph whose weights are one sparse external file.

    python3 benchmarks/bench_llama7b_onnx.py            # the standard Llama-7B config, seq 2048
    python3 benchmarks/bench_llama7b_onnx.py --write    # ... and record the results in BENCHMARKS.md

The graph (32 decoder layers, hidden 4096, 32 heads, SwiGLU MLP 11008, vocab 32000, untied embeddings,
RMSNorm decomposed into Pow/ReduceMean/Add/Sqrt/Div/Mul, rotary embeddings with cos/sin computed from the
positions) is written with onnx.helper into a temporary folder; its ~27 GB of fp32 weights live in ONE
external data file that is created sparse (truncated to size, nothing written), so the benchmark needs no
disk space and proves that the analysis never reads weight bytes. The analysis runs in a fresh Python
subprocess (imports included in the time) and its wall time and peak RSS (ru_maxrss of the child) are
measured. Targets (issue 2): under 2 s and under 300 MB on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when loaded by path (the tests do)
from bench_md import write_section  # noqa: E402
BENCH_MD = ROOT / "BENCHMARKS.md"
SECTION = "## Static analysis of a Llama-7B-shaped ONNX graph"
TARGET_WALL_S = 2.0
TARGET_RSS_MB = 300.0


@dataclass(frozen=True)
class LlamaConfig:
    layers: int = 32
    hidden: int = 4096
    heads: int = 32
    intermediate: int = 11008
    vocab: int = 32000
    rms_eps: float = 1e-6

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def expected_params(c: LlamaConfig) -> int:
    """Hand count: embedding V*h + per layer (4 h*h attention + 3 h*I MLP + 2 h norms) + final norm h
    + untied lm_head h*V.  Llama-7B: 131,072,000 + 32 * 202,383,360 + 4,096 + 131,072,000 = 6,738,415,616."""
    per_layer = 4 * c.hidden * c.hidden + 3 * c.hidden * c.intermediate + 2 * c.hidden
    return c.vocab * c.hidden + c.layers * per_layer + c.hidden + c.hidden * c.vocab


def expected_macs(c: LlamaConfig, batch: int, seq: int) -> int:
    """Hand count of MACs: per layer and token the q/k/v/o projections (4 h*h) and the MLP (3 h*I); per layer
    the attention scores and weighted sum, heads * S * S * (d + d) per sequence; the lm_head h*V per token.
    The rotary and norm arithmetic is elementwise (FLOPs, no MACs); the embedding is a Gather (no MACs)."""
    tokens = batch * seq
    per_layer = tokens * (4 * c.hidden * c.hidden + 3 * c.hidden * c.intermediate)
    per_layer += batch * c.heads * seq * seq * 2 * c.head_dim
    return c.layers * per_layer + tokens * c.hidden * c.vocab


def expected_flops(c: LlamaConfig, batch: int, seq: int) -> int:
    """Hand count of FLOPs = 2 x MACs + per element (formulas.py conventions), T = batch * seq tokens:
    RMSNorm (Pow, ReduceMean over input, Div, Mul weight: 4 per element; Add eps, Sqrt: 1 per token each)
    = 4*T*h + 2*T, twice per layer and once at the end; rotary on q and k: Neg on half, two Muls and an Add
    = 3.5*T*h each; attention scale Mul, mask Add and Softmax (5) = 7 per score; two residual Adds T*h;
    SwiGLU Sigmoid (3) + two Muls = 5*T*I; cos/sin tables once: Mul S*d/2 + Cos + Sin S*d each."""
    tokens = batch * seq
    norm = 4 * tokens * c.hidden + 2 * tokens
    per_layer = 2 * norm + 7 * tokens * c.hidden + 7 * batch * c.heads * seq * seq + 2 * tokens * c.hidden
    per_layer += 5 * tokens * c.intermediate
    tables = seq * c.head_dim // 2 + 2 * seq * c.head_dim
    return 2 * expected_macs(c, batch, seq) + c.layers * per_layer + norm + tables


class _Builder:
    """Collects nodes and external-data initializers; every weight is placed at a running offset in one file."""

    def __init__(self, data_file: str) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self.data_file = data_file
        self.offset = 0
        self._n = 0

    def weight(self, name: str, dims: list[int]) -> str:
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
        t.data_location = TensorProto.EXTERNAL
        length = 4
        for d in dims:
            length *= d
        for key, value in (("location", self.data_file), ("offset", str(self.offset)), ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.inits.append(t)
        return name

    def ints(self, name: str, values: list[int]) -> str:
        self.inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def const(self, name: str, value: float) -> str:
        self.nodes.append(helper.make_node("Constant", [], [name], value=helper.make_tensor(name, 1, [], [value])))
        return name

    def op(self, op_type: str, inputs: list[str], prefix: str, **attrs: object) -> str:
        self._n += 1
        out = f"{prefix}/{op_type}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def _rms_norm(b: _Builder, x: str, weight: str, p: str) -> str:
    sq = b.op("Pow", [x, "two"], p)
    mean = b.op("ReduceMean", [sq, "axis_last"], p, keepdims=1)
    std = b.op("Sqrt", [b.op("Add", [mean, "rms_eps"], p)], p)
    return b.op("Mul", [b.op("Div", [x, std], p), weight], p)


def _rotary(b: _Builder, x: str, p: str) -> str:
    """x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x2, x1) over the last axis."""
    x1 = b.op("Slice", [x, "zero", "half_dim", "axis_last"], p)
    x2 = b.op("Slice", [x, "half_dim", "big", "axis_last"], p)
    rotated = b.op("Concat", [b.op("Neg", [x2], p), x1], p, axis=-1)
    return b.op("Add", [b.op("Mul", [x, "cos"], p), b.op("Mul", [rotated, "sin"], p)], p)


def _attention(b: _Builder, c: LlamaConfig, x: str, i: int) -> str:
    p = f"layers.{i}.self_attn"
    heads = []
    for proj in ("q", "k", "v"):
        y = b.op("MatMul", [x, b.weight(f"{p}.{proj}_proj.weight", [c.hidden, c.hidden])], p)
        y = b.op("Transpose", [b.op("Reshape", [y, "heads_shape"], p)], p, perm=[0, 2, 1, 3])
        heads.append(_rotary(b, y, p) if proj in "qk" else y)
    q, k, v = heads
    scores = b.op("MatMul", [q, b.op("Transpose", [k], p, perm=[0, 1, 3, 2])], p)
    scores = b.op("Add", [b.op("Mul", [scores, "attn_scale"], p), "causal_mask"], p)
    ctx = b.op("MatMul", [b.op("Softmax", [scores], p, axis=-1), v], p)
    ctx = b.op("Reshape", [b.op("Transpose", [ctx], p, perm=[0, 2, 1, 3]), "hidden_shape"], p)
    return b.op("MatMul", [ctx, b.weight(f"{p}.o_proj.weight", [c.hidden, c.hidden])], p)


def _mlp(b: _Builder, c: LlamaConfig, x: str, i: int) -> str:
    p = f"layers.{i}.mlp"
    gate = b.op("MatMul", [x, b.weight(f"{p}.gate_proj.weight", [c.hidden, c.intermediate])], p)
    up = b.op("MatMul", [x, b.weight(f"{p}.up_proj.weight", [c.hidden, c.intermediate])], p)
    act = b.op("Mul", [gate, b.op("Sigmoid", [gate], p)], p)  # SiLU
    return b.op("MatMul", [b.op("Mul", [act, up], p), b.weight(f"{p}.down_proj.weight", [c.intermediate, c.hidden])], p)


def _prelude(b: _Builder, c: LlamaConfig) -> None:
    """Shared constants, rotary cos/sin [S, d] from the positions, and the causal mask [S, S]."""
    b.ints("heads_shape", [0, 0, c.heads, c.head_dim])
    b.ints("hidden_shape", [0, 0, c.hidden])
    b.ints("axis_last", [-1])
    b.ints("zero", [0])
    b.ints("one_i", [1])
    b.ints("half_dim", [c.head_dim // 2])
    b.ints("big", [1 << 62])
    b.const("two", 2.0)
    b.const("rms_eps", c.rms_eps)
    b.const("attn_scale", c.head_dim**-0.5)
    inv_freq = [10000.0 ** (-2 * j / c.head_dim) for j in range(c.head_dim // 2)]
    b.nodes.append(
        helper.make_node(
            "Constant", [], ["inv_freq"], value=helper.make_tensor("inv_freq", 1, [len(inv_freq)], inv_freq)
        )
    )
    p = "rotary"
    seq = b.op("Slice", [b.op("Shape", ["input_ids"], p), "one_i", "big"], p)  # [S]
    pos = b.op(
        "Range",
        [
            b.op("Squeeze", [b.op("Cast", ["zero"], p, to=1)], p),
            b.op("Squeeze", [b.op("Cast", [seq], p, to=1)], p),
            b.const("one_f", 1.0),
        ],
        p,
    )
    freqs = b.op("Mul", [b.op("Unsqueeze", [pos, "axis_last"], p), "inv_freq"], p)  # [S, d/2]
    emb = b.op("Concat", [freqs, freqs], p, axis=-1)  # [S, d]
    b.nodes.append(helper.make_node("Cos", [emb], ["cos"], name="rotary/cos"))
    b.nodes.append(helper.make_node("Sin", [emb], ["sin"], name="rotary/sin"))
    p = "mask"
    square = b.op("Concat", [seq, seq], p, axis=0)
    filled = b.op("ConstantOfShape", [square], p, value=helper.make_tensor("v", 1, [1], [-1e9]))
    b.nodes.append(helper.make_node("Trilu", [filled, "one_i"], ["causal_mask"], name="mask/trilu", upper=1))


def build_llama_onnx(folder: Path, c: LlamaConfig = LlamaConfig(), name: str = "llama.onnx") -> Path:
    """Write the graph to folder/name and its weights' external data to folder/name.data (sparse)."""
    data_name = name + ".data"
    b = _Builder(data_name)
    _prelude(b, c)
    x = b.op("Gather", [b.weight("embed_tokens.weight", [c.vocab, c.hidden]), "input_ids"], "embed", axis=0)
    for i in range(c.layers):
        h = _rms_norm(b, x, b.weight(f"layers.{i}.input_layernorm.weight", [c.hidden]), f"layers.{i}.input_layernorm")
        x = b.op("Add", [x, _attention(b, c, h, i)], f"layers.{i}")
        h = _rms_norm(
            b,
            x,
            b.weight(f"layers.{i}.post_attention_layernorm.weight", [c.hidden]),
            f"layers.{i}.post_attention_layernorm",
        )
        x = b.op("Add", [x, _mlp(b, c, h, i)], f"layers.{i}")
    h = _rms_norm(b, x, b.weight("norm.weight", [c.hidden]), "norm")
    logits_in = b.op("MatMul", [h, b.weight("lm_head.weight", [c.hidden, c.vocab])], "lm_head")
    b.nodes.append(helper.make_node("Identity", [logits_in], ["logits"], name="logits"))
    graph = helper.make_graph(
        b.nodes,
        "llama",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", c.vocab])],
        initializer=b.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="modelcost-bench")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(model.SerializeToString())
    with open(folder / data_name, "wb") as f:
        f.truncate(b.offset)  # sparse: the size is set, no byte is written
    return path


# ---------------------------------------------------------------------------------------------------------
# measurement

CHILD = """
import json, sys, time
t0 = time.perf_counter()
from modelcost import api
t1 = time.perf_counter()
report = api.analyze_static(sys.argv[1], input_shapes={"input_ids": (int(sys.argv[2]), int(sys.argv[3]))})
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "analyze_s": t2 - t1, "params": report.params.total,
                  "macs": report.compute.macs, "flops": report.compute.flops, "layers": len(report.layers),
                  "uncounted": report.compute.uncounted_ops, "problems": report.problems,
                  "weight_bytes": report.storage.bytes, "file_size_bytes": report.storage.file_size_bytes}))
"""


def run_child(path: Path, batch: int, seq: int) -> dict[str, object]:
    """One analysis in a fresh interpreter: wall time of the whole process and its own peak RSS (wait4)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(batch), str(seq)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall_s = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"analysis failed (exit {proc.returncode}):\n{err.decode()}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    # Linux: ru_maxrss in KiB. CPU time (user + system) shows what other load on the machine did to the wall time.
    result.update(wall_s=wall_s, cpu_s=usage.ru_utime + usage.ru_stime, rss_mb=usage.ru_maxrss / 1024)
    return result


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def measure(repeats: int, batch: int, seq: int) -> dict[str, object]:
    c = LlamaConfig()
    with tempfile.TemporaryDirectory(prefix="modelcost-llama7b-") as tmp:
        t0 = time.perf_counter()
        path = build_llama_onnx(Path(tmp), c)
        build_s = time.perf_counter() - t0
        data = Path(tmp) / "llama.onnx.data"
        st = data.stat()
        runs = [run_child(path, batch, seq) for _ in range(repeats)]
        children_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        model_bytes = path.stat().st_size
    first = runs[0]
    checks = {
        "params": (first["params"], expected_params(c)),
        "macs": (first["macs"], expected_macs(c, batch, seq)),
        "flops": (first["flops"], expected_flops(c, batch, seq)),
    }
    return {
        "runs": runs,
        "build_s": build_s,
        "data_bytes": st.st_size,
        "data_disk_bytes": st.st_blocks * 512,
        "model_bytes": model_bytes,
        "children_rss_mb": children_rss_mb,
        "checks": checks,
        "batch": batch,
        "seq": seq,
        "wall_median_s": _median([r["wall_s"] for r in runs]),
        "wall_max_s": max(r["wall_s"] for r in runs),
        "cpu_median_s": _median([r["cpu_s"] for r in runs]),
        "load_avg_1min": os.getloadavg()[0],
        "rss_max_mb": max(r["rss_mb"] for r in runs),
        "analyze_median_s": _median([r["analyze_s"] for r in runs]),
        "import_median_s": _median([r["import_s"] for r in runs]),
    }


def render(res: dict[str, object], command: str) -> str:
    import onnx as onnx_mod

    r = res
    ok_time = r["wall_max_s"] < TARGET_WALL_S
    ok_rss = r["rss_max_mb"] < TARGET_RSS_MB
    first = r["runs"][0]
    lines = [
        SECTION,
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
        f"onnx {onnx_mod.__version__}; {time.strftime('%Y-%m-%d')}.",
        "",
        "The graph (32 layers, hidden 4096, 32 heads, SwiGLU 11008, vocab 32000, untied lm_head, RMSNorm as "
        f"Pow/ReduceMean/Add/Sqrt/Div/Mul, rotary from positions) has {first['layers']} nodes; its weights are "
        f"one external file of {r['data_bytes']:,} bytes created sparse ({r['data_disk_bytes']:,} bytes on disk). "
        f"Model file {r['model_bytes']:,} bytes. Inputs bound with `--input-shape input_ids={r['batch']}x{r['seq']}`. "
        f"Each run is a fresh `python -c` process calling `modelcost.api.analyze_static` (interpreter start and "
        f"imports included); peak RSS is that process's `ru_maxrss` (os.wait4), {len(r['runs'])} runs.",
        "",
        "| metric | result | target |",
        "|---|---:|---:|",
        f"| wall time per analysis, median (max) | {r['wall_median_s']:.2f} s ({r['wall_max_s']:.2f} s) "
        f"| < {TARGET_WALL_S:.0f} s |",
        f"| of which `from modelcost import api` / analyze_static (onnx import inside), median "
        f"| {r['import_median_s']:.2f} s / "
        f"{r['analyze_median_s']:.2f} s | |",
        f"| CPU time (user + system) per analysis, median | {r['cpu_median_s']:.2f} s | |",
        f"| peak RSS, max over runs | {r['rss_max_mb']:.0f} MB | < {TARGET_RSS_MB:.0f} MB |",
        f"| RUSAGE_CHILDREN ru_maxrss | {r['children_rss_mb']:.0f} MB | |",
    ]
    for name, (got, want) in r["checks"].items():
        lines.append(f"| {name} (hand-derived {want:,}) | {got:,} {'matches' if got == want else 'MISMATCH'} | exact |")
    verdict = "pass" if ok_time and ok_rss and all(g == w for g, w in r["checks"].values()) else "FAIL"
    lines += [
        "",
        "The hand derivations are `expected_params`, `expected_macs` and `expected_flops` in the script (per layer: "
        "4 h² + 3 h·I weights and MACs per token, 2 · heads · S² · d attention MACs, FLOPs by formulas.py).",
        "",
        f"Load average (1 min) when the runs ended: {r['load_avg_1min']:.2f} on {os.cpu_count()} cores.",
        "",
        f"Result: **{verdict}**. Uncounted ops: {first['uncounted'] or 'none'}; "
        f"problems: {first['problems'] or 'none'}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--write", action="store_true", help="record the results in BENCHMARKS.md")
    args = parser.parse_args(argv)
    command = "python3 benchmarks/bench_llama7b_onnx.py" + (f" --seq {args.seq}" if args.seq != 2048 else "")
    command += (f" --batch {args.batch}" if args.batch != 1 else "") + " --write"
    res = measure(args.repeats, args.batch, args.seq)
    text = render(res, command)
    print(text)
    if args.write:
        write_section(BENCH_MD, SECTION, text)
        print(f"written to {BENCH_MD}")
    failed = "**FAIL**" in text
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
