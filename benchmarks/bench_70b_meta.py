"""Benchmark: static analysis of a 70-billion-parameter Llama-style decoder from PyTorch, on the meta device.

    python3 benchmarks/bench_70b_meta.py            # zoo:llama-70b, batch 1, seq 2048, 3 fresh processes
    python3 benchmarks/bench_70b_meta.py --write    # ... and record the results in BENCHMARKS.md

``zoo:llama-70b`` (80 layers, hidden 8192, 64 query / 8 KV heads, SwiGLU 28672, vocab 32000, RMSNorm, rotary,
untied lm_head) is built under ``torch.device("meta")`` (no weight memory: the fp32 weights would be 276 GB)
and counted by running it once on meta inputs. Each analysis runs in a fresh ``python -c`` process (interpreter
start and imports included in the wall time); peak RSS is that process's ru_maxrss (os.wait4).
Targets (issue 2): under 60 s and under 2 GB on a 2-core machine. Params, MACs and FLOPs must equal the
hand-derived figures below.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when loaded by path (the tests do)
from bench_md import write_section  # noqa: E402
BENCH_MD = ROOT / "BENCHMARKS.md"
SECTION = "## Static analysis of a 70B decoder from PyTorch"
TARGET_WALL_S = 60.0
TARGET_RSS_MB = 2048.0
H, F, HEADS, KV_HEADS, VOCAB, LAYERS = 8192, 28672, 64, 8, 32000, 80
D = H // HEADS  # head dim 128


def expected_params() -> int:
    """Per layer: q 8192^2 + k, v 2 * 8192*1024 + o 8192^2 + MLP 3 * 8192*28672 + 2 RMSNorm weights 2 * 8192
    = 855,654,400; x 80 + embedding 32000*8192 + untied lm_head 8192*32000 + final norm 8192 = 68,976,648,192."""
    per_layer = 2 * H * H + 2 * H * KV_HEADS * D + 3 * H * F + 2 * H
    return LAYERS * per_layer + 2 * VOCAB * H + H


def expected_macs(batch: int, seq: int) -> int:
    """Per layer and token: q, o 2 h^2 + k, v 2 h*K*d + MLP 3 h*f; per layer attention (full S x S scores, no
    causal halving) heads * S * S * (d + d) per sequence; lm_head h*V per token. Embedding: a gather, 0 MACs."""
    tokens = batch * seq
    per_layer = tokens * (2 * H * H + 2 * H * KV_HEADS * D + 3 * H * F) + batch * HEADS * seq * seq * 2 * D
    return LAYERS * per_layer + tokens * H * VOCAB


def expected_flops(batch: int, seq: int) -> int:
    """2 x MACs (no biases) + per layer, T tokens (docs/COUNTING.md conventions): two RMSNorms (3 + scale) 8 T*h;
    rotary on q (x*cos, -x2, cat, *sin, +) 3.5 T*h and on k 3.5 T*K*d; attention softmax 5 + scale 1 per score
    6 B*heads*S^2; two residual adds 2 T*h; SiLU 4 + gate*up 1 = 5 T*f. Final norm 4 T*h; rotary tables once:
    positions x inv_freq S*d/2 + cos S*d + sin S*d."""
    tokens = batch * seq
    per_layer = (8 * tokens * H + 7 * tokens * H // 2 + 7 * tokens * KV_HEADS * D // 2
                 + 6 * batch * HEADS * seq * seq + 2 * tokens * H + 5 * tokens * F)
    return 2 * expected_macs(batch, seq) + LAYERS * per_layer + 4 * tokens * H + seq * D // 2 + 2 * seq * D


CHILD = """
import json, sys, time
t0 = time.perf_counter()
from modelcost import api
t1 = time.perf_counter()
r = api.analyze_static("zoo:llama-70b", input_shapes={"input_ids": (int(sys.argv[1]), int(sys.argv[2]))})
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "analyze_s": t2 - t1, "params": r.params.total, "macs": r.compute.macs,
                  "flops": r.compute.flops, "layers": len(r.layers), "uncounted": r.compute.uncounted_ops,
                  "problems": r.problems, "weight_bytes": r.storage.bytes,
                  "activation_bytes": r.memory.activation_bytes, "peak_bytes": r.memory.peak_activation_bytes}))
"""


def run_child(batch: int, seq: int) -> dict[str, object]:
    """One analysis in a fresh interpreter, reaped with os.wait4 so that its own CPU time and ru_maxrss are known."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(batch), str(seq)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall_s = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"analysis failed (exit {proc.returncode}):\n{err.decode()}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    result.update(wall_s=wall_s, cpu_s=usage.ru_utime + usage.ru_stime, rss_mb=usage.ru_maxrss / 1024)  # KiB
    return result


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def render(runs: list[dict[str, object]], batch: int, seq: int, command: str) -> str:
    import torch

    first = runs[0]
    wall_max = max(r["wall_s"] for r in runs)
    rss_max = max(r["rss_mb"] for r in runs)
    checks = {"params": (first["params"], expected_params()), "MACs": (first["macs"], expected_macs(batch, seq)),
              "FLOPs": (first["flops"], expected_flops(batch, seq))}
    lines = [
        SECTION, "", f"Command: `{command}`", "",
        (f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
        f"torch {torch.__version__}; {time.strftime('%Y-%m-%d')}."), "",
        (f"`zoo:llama-70b` (80 layers, hidden 8192, 64 query / 8 KV heads, SwiGLU 28672, vocab 32000, untied "
        f"lm_head) at batch {batch}, seq {seq}, built on the meta device and run once on meta inputs; "
        f"{first['layers']} layers reported. Each run is a fresh `python -c` process calling "
        f"`modelcost.api.analyze_static` (interpreter start and imports included); peak RSS is that process's "
        f"`ru_maxrss` (os.wait4); {len(runs)} runs. The fp32 weights it describes would take "
        f"{first['weight_bytes'] / 1e9:.0f} GB."), "",
        "| metric | result | target |", "|---|---:|---:|",
        (f"| wall time per analysis, median (max) | {_median([r['wall_s'] for r in runs]):.2f} s ({wall_max:.2f} s) "
        f"| < {TARGET_WALL_S:.0f} s |"),
        (f"| of which `from modelcost import api` / analyze_static (torch import inside), median | "
         f"{_median([r['import_s'] for r in runs]):.2f} s / {_median([r['analyze_s'] for r in runs]):.2f} s | |"),
        f"| CPU time (user + system), median | {_median([r['cpu_s'] for r in runs]):.2f} s | |",
        f"| peak RSS, max over runs | {rss_max:.0f} MB | < {TARGET_RSS_MB:.0f} MB |",
    ]
    for name, (got, want) in checks.items():
        lines.append(f"| {name} (hand-derived {want:,}) | {got:,} {'matches' if got == want else 'MISMATCH'} | exact |")
    ok = wall_max < TARGET_WALL_S and rss_max < TARGET_RSS_MB and all(g == w for g, w in checks.values())
    lines += [
        "", (f"Activation bytes {first['activation_bytes']:,}; peak live activations {first['peak_bytes']:,} bytes "
        "(attention counted as one fused op: its scores are not materialised)."), "",
        f"Load average (1 min) when the runs ended: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.", "",
        (f"Result: **{'pass' if ok else 'FAIL'}**. Uncounted ops: {first['uncounted'] or 'none'}; "
        f"problems: {first['problems'] or 'none'}."), "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--write", action="store_true", help="record the results in BENCHMARKS.md")
    args = parser.parse_args(argv)
    command = "python3 benchmarks/bench_70b_meta.py" + (f" --seq {args.seq}" if args.seq != 2048 else "")
    command += (f" --batch {args.batch}" if args.batch != 1 else "") + " --write"
    runs = [run_child(args.batch, args.seq) for _ in range(args.repeats)]
    text = render(runs, args.batch, args.seq, command)
    print(text)
    if args.write:
        write_section(BENCH_MD, SECTION, text)
        print(f"written to {BENCH_MD}")
    return 0 if "**pass**" in text else 1


if __name__ == "__main__":
    raise SystemExit(main())
