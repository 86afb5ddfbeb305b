"""Benchmark: static training analysis (forward + backward + optimizer, memory by part) of a 70B decoder.

    python3 benchmarks/train_70b_meta.py            # zoo:llama-70b, batch 1, seq 2048, AMP bf16, AdamW, 3 runs
    python3 benchmarks/train_70b_meta.py --write    # ... and record the results in BENCHMARKS.md

Each run is a fresh ``python -c`` process calling ``modelcost.api.train_static`` (interpreter start and imports
included in the wall time; the step is counted and simulated for the peak at batch 1 and 2, for the per-batch
memory lines); peak RSS is that process's ru_maxrss (os.wait4). Targets (issue 10): under 60 s and under 2 GB
on a 2-core machine. The MACs must equal the hand derivation below.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_70b_meta import HEADS, LAYERS, D, expected_macs
from bench_md import write_section

BENCH_MD = ROOT / "BENCHMARKS.md"
SECTION = "## Static training analysis of a 70B decoder (issue 10)"
TARGET_WALL_S, TARGET_RSS_MB = 60.0, 2048.0
OPT_PEAK = ": fp32 weights, gradients, both AdamW moments and the foreach step's one parameter-sized temporary"

CHILD = """
import dataclasses, json, sys, time
t0 = time.perf_counter()
from modelcost import api
from modelcost.core.training import TrainConfig
r = api.train_static("zoo:llama-70b", input_shapes={"input_ids": (1, int(sys.argv[1]))},
                     config=TrainConfig(optimizer="adamw", precision="amp_bf16"), target_gpu="H100 SXM")
t1 = time.perf_counter()
print(json.dumps({"s": t1 - t0, "fwd": r.forward_macs, "dx": r.backward_input_grad_macs,
                  "dw": r.backward_weight_grad_macs, "flops": r.flops_per_step, "uncounted": r.uncounted_ops,
                  "memory": dataclasses.asdict(r.memory)}))
"""


def expected(seq: int) -> tuple[int, int, int]:
    """(forward, input-gradient, weight-gradient) MACs at batch 1. Forward F: bench_70b_meta.expected_macs
    (attention full S x S, no causal halving). Attention A = layers x heads x S^2 x 2d. Every linear is
    trainable: weight gradients = F - A. Input ids need no gradient, but the embedding's output does (the
    embedding is trained), so every linear's input gradient runs: F - A, + attention's four backward products
    2A. Total 3F."""
    fwd = expected_macs(1, seq)
    attention = LAYERS * HEADS * seq * seq * 2 * D
    return fwd, fwd - attention + 2 * attention, fwd - attention


def run_child(seq: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(seq)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"analysis failed:\n{err.decode()}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    result.update(wall_s=time.perf_counter() - start, rss_mb=usage.ru_maxrss / 1024)
    return result


def render(runs: list[dict], seq: int, command: str) -> str:
    import torch

    first = runs[0]
    wall = sorted(r["wall_s"] for r in runs)
    rss = max(r["rss_mb"] for r in runs)
    want = expected(seq)
    got = (first["fwd"], first["dx"], first["dw"])
    mem = first["memory"]
    ok = wall[-1] < TARGET_WALL_S and rss < TARGET_RSS_MB and got == want
    gib = 2**30
    return "\n".join([
        SECTION, "", f"Command: `{command}`", "",
        (f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, torch "
         f"{torch.__version__}; {time.strftime('%Y-%m-%d')}. `api.train_static('zoo:llama-70b')` at batch 1, seq "
         f"{seq}, AMP bf16, AdamW, in a fresh process per run (imports included); {len(runs)} runs."), "",
        "| metric | result | target |", "|---|---:|---:|",
        f"| wall time, median (max) | {wall[len(wall) // 2]:.1f} s ({wall[-1]:.1f} s) | < {TARGET_WALL_S:.0f} s |",
        f"| peak RSS, max | {rss:.0f} MB | < {TARGET_RSS_MB:.0f} MB |",
        f"| forward MACs (hand-derived {want[0]:,}) | {got[0]:,} "
        f"{'matches' if got[0] == want[0] else 'MISMATCH'} | exact |",
        f"| backward input-gradient MACs ({want[1]:,}) | {got[1]:,} "
        f"{'matches' if got[1] == want[1] else 'MISMATCH'} | exact |",
        f"| backward weight-gradient MACs ({want[2]:,}) | {got[2]:,} "
        f"{'matches' if got[2] == want[2] else 'MISMATCH'} | exact |",
        "",
        (f"Memory by part: weights {mem['weights_bytes'] / gib:.1f} GiB, gradients {mem['gradients_bytes'] / gib:.1f} "
         f"GiB, AdamW states {mem['optimizer_state_bytes'] / gib:.1f} GiB, activations saved for backward "
         f"{mem['activations_bytes'] / gib:.1f} GiB (the bf16 weight casts autocast keeps for backward included), "
         f"predicted peak {mem['peak_bytes'] / gib:.1f} GiB (the simulated step, every storage from allocation to "
         f"release, reaches it in the {mem['peak_phase']} phase{OPT_PEAK if mem['peak_phase'] == 'optimizer' else ''}"
         f"; forward {mem['forward_peak_bytes'] / gib:.1f} GiB, backward "
         f"{mem['backward_peak_bytes'] / gib:.1f} GiB; the former all-at-once bound "
         f"{mem['peak_upper_bound_bytes'] / gib:.1f} GiB). FLOPs per step {first['flops']:,}."), "",
        f"Result: **{'pass' if ok else 'FAIL'}**. Uncounted ops: {first['uncounted'] or 'none'}.", "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--write", action="store_true", help="record the results in BENCHMARKS.md")
    args = parser.parse_args(argv)
    command = "python3 benchmarks/train_70b_meta.py" + (f" --seq {args.seq}" if args.seq != 2048 else "") + " --write"
    text = render([run_child(args.seq) for _ in range(args.repeats)], args.seq, command)
    print(text)
    if args.write:
        write_section(BENCH_MD, SECTION, text)
    return 0 if "**pass**" in text else 1


if __name__ == "__main__":
    raise SystemExit(main())
