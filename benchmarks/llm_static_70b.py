"""Benchmark: static generation analysis of zoo:llama-70b at P=4096, G=512, B=32 (issue 11: under 30 s here).

    python3 benchmarks/llm_static_70b.py            # 3 fresh processes of the command below
    python3 benchmarks/llm_static_70b.py --write    # ... and record the result in BENCHMARKS.md

Each run is a fresh process of ``python3 -m modelcost llm zoo:llama-70b --static --prompt-len 4096 --gen-len 512
--batch-size 32 --dtype fp16 --target-gpu "H100 SXM" --json FILE`` (interpreter start, imports, the meta build,
one prefill count and three decode-step counts, bounds, rendering and the JSON write all included). The JSON's
figures must equal the hand-derived ones below.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_md import write_section

SECTION = "## Static generation analysis of a 70B decoder (modelcost llm)"
COMMAND = ["-m", "modelcost", "llm", "zoo:llama-70b", "--static", "--prompt-len", "4096", "--gen-len", "512",
           "--batch-size", "32", "--dtype", "fp16", "--target-gpu", "H100 SXM"]
TARGET_S = 30.0
B, P, G = 32, 4096, 512
# per token: 80 layers x (2 * 8192^2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) = 68,451,041,280, head 262,144,000;
# attention 80 layers x 64 heads x 256 = 1,310,720 MACs per key position
LINEAR, HEAD, ATTN = 68_451_041_280, 262_144_000, 1_310_720
EXPECTED = {
    "kv_bytes_per_token": 2 * 80 * 8 * 128 * 2,  # 327,680
    "prefill_macs": B * (P * LINEAR + HEAD + 80 * 64 * P * P * 256),
    "decode_first_macs": B * (LINEAR + HEAD + ATTN * (P + 1)),
    "decode_macs_total": B * ((G - 1) * (LINEAR + HEAD) + ATTN * (P + 1 + P + G - 1) * (G - 1) // 2),
}


def _one_run(out: Path) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *COMMAND, "--json", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"modelcost llm failed: {proc.stderr.strip()[-500:]}")
    return wall, json.loads(out.read_text())["llm"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    walls, doc = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            wall, doc = _one_run(Path(tmp) / f"run{i}.json")
            walls.append(wall)
    got = {"kv_bytes_per_token": doc["kv_cache"]["bytes_per_token"], "prefill_macs": doc["prefill"]["macs"],
           "decode_first_macs": doc["decode"]["per_token"][0]["macs"], "decode_macs_total": doc["decode"]["macs_total"]}
    exact = got == EXPECTED
    median = sorted(walls)[len(walls) // 2]
    ok = exact and median < TARGET_S
    bounds = doc["bounds"]
    lines = [
        SECTION, "",
        "Command: `python3 benchmarks/llm_static_70b.py --write`, which times fresh processes of",
        f"`python3 {' '.join(c if ' ' not in c else repr(c) for c in COMMAND)} --json FILE`.", "",
        (f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}; "
         f"{time.strftime('%Y-%m-%d')}."), "",
        "| metric | result | target |", "|---|---:|---:|",
        f"| wall time per run, median (max) of {len(walls)} | {median:.2f} s ({max(walls):.2f} s) "
        f"| < {TARGET_S:.0f} s |",
    ]
    for key, value in EXPECTED.items():
        lines.append(f"| {key.replace('_', ' ')} (hand-derived {value:,}) | {got[key]:,} "
                     f"{'matches' if got[key] == value else 'DIFFERS'} | exact |")
    lines += ["", (f"Bounds on the H100 SXM table entry (fp16): TTFT >= {bounds['ttft_ms']:.0f} ms, TPOT >= "
                   f"{bounds['tpot_ms']:.1f} ms, max batch {bounds['max_batch']} (the fp16 weights, 138 GB, "
                   "exceed 80 GB)."),
              "", f"Load average (1 min) when the runs ended: {os.getloadavg()[0]:.2f}.", "",
              f"Result: **{'pass' if ok else 'FAIL'}**."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(ROOT / "BENCHMARKS.md", SECTION, text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
