"""Issue 13: a sweep's wall time with 1 and with 2 workers (one GPU each), and whether the per-config figures
of the two runs agree within the measurement noise (exclusive GPUs: a second worker must not disturb the first).

Run on a 2-GPU machine from the repo root (each command well under 10 minutes; no Ray needed):

    MODELCOST_CACHE_DIR=/tmp/mc-w1 timeout 580 python3 -m modelcost sweep benchmarks/sweep_2gpu.toml \\
        --db sweep_2gpu.sqlite --workers 1 --label w1
    MODELCOST_CACHE_DIR=/tmp/mc-w2 timeout 580 python3 -m modelcost sweep benchmarks/sweep_2gpu.toml \\
        --db sweep_2gpu.sqlite --workers 2 --label w2 --force
    python3 benchmarks/sweep_workers.py sweep_2gpu.sqlite w1 w2 --json sweep_2gpu.json --write-md

Each run starts with its own empty cache (ONNX exports are made again), so both pay the same preparation.
A run cut off by ``timeout`` can be finished by re-running its command with the same label (it resumes; add
nothing else): this script sums the wall time of every run with the label and takes each config's last row.
Prints a short table; ``--json`` writes the figures; ``--write-md`` writes the BENCHMARKS.md section.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from modelcost.sweep.db import ResultsDB
from modelcost.sweep.compare import compare_rows

SECTION = "## Sweep wall time with 1 and 2 workers, one GPU each (issue 13)"


def _runs(db: ResultsDB, label: str) -> tuple[list[dict], list[dict]]:
    runs = [r for r in db.runs() if r["label"] == label]
    if not runs:
        sys.exit(f"no run labelled {label!r} in {db.path}")
    rows = [row for r in runs for row in db.results("WHERE run_id = ?", (r["run_id"],))]
    return runs, rows


def summarise(db_path: str, label_a: str, label_b: str) -> dict:
    db = ResultsDB(db_path, create=False)
    out: dict = {"db": db_path, "runs": {}}
    rows_by = {}
    for label in (label_a, label_b):
        runs, rows = _runs(db, label)
        rows_by[label] = rows
        out["runs"][label] = {
            "run_ids": [r["run_id"] for r in runs], "workers": runs[-1]["workers"],
            "wall_s": sum(r["wall_s"] or 0.0 for r in runs), "status": [r["status"] for r in runs],
            "configs": len(rows), "ok": sum(r["status"] == "ok" for r in rows),
            "devices": sorted({f"{r['worker']}={r['device_name']}" for r in rows}),
            "notes": runs[-1]["notes"]}
    changes = compare_rows(rows_by[label_a], rows_by[label_b], tolerance_pct=0.0).changes
    judged = [c for c in changes if c.judgement is not None and c.verdict != "too noisy to judge"]
    diffs = [abs(c.b_ms / c.a_ms - 1) * 100 for c in judged if c.a_ms and c.b_ms]
    out["compare"] = {
        "configs_in_both": len(changes), "judged": len(judged),
        "no_significant_difference": sum(not c.judgement.significant for c in judged),
        "median_abs_p50_diff_pct": statistics.median(diffs) if diffs else None,
        "max_abs_p50_diff_pct": max(diffs) if diffs else None,
        "configs": [{"config": c.label, "gpu": c.gpu, "a_p50_ms": c.a_ms, "b_p50_ms": c.b_ms, "verdict": c.verdict,
                     "why": c.detail}
                    for c in changes]}
    a, b = out["runs"][label_a]["wall_s"], out["runs"][label_b]["wall_s"]
    out["wall_speedup"] = a / b if a and b else None
    db.close()
    return out


def table(s: dict, label_a: str, label_b: str) -> str:
    lines = ["| run | workers | configs (ok) | wall time | GPUs used |", "|---|---:|---:|---:|---|"]
    for label in (label_a, label_b):
        r = s["runs"][label]
        lines.append(f"| {label} (run {', '.join(map(str, r['run_ids']))}) | {r['workers']} | {r['configs']} "
                     f"({r['ok']}) | {r['wall_s'] / 60:.2f} min | {'; '.join(r['devices'])} |")
    c = s["compare"]
    med = "-" if c["median_abs_p50_diff_pct"] is None else f"{c['median_abs_p50_diff_pct']:.2f}%"
    mx = "-" if c["max_abs_p50_diff_pct"] is None else f"{c['max_abs_p50_diff_pct']:.2f}%"
    speed = "-" if s["wall_speedup"] is None else f"{s['wall_speedup']:.2f}x"
    lines += ["", f"wall time {label_a} / {label_b}: {speed}",
              (f"per-config agreement: {c['no_significant_difference']} of {c['judged']} configs judged show no "
              f"significant difference (results --compare: per-run p50s, between-run noise, docs/MEASURING.md); "
              f"|p50 difference| median {med}, max {mx}")]
    lines += ["", "| config | GPU | p50 ms " + label_a + " | p50 ms " + label_b + " | " + label_b + " vs " + label_a
              + " |", "|---|---|---:|---:|---|"]
    for row in c["configs"]:
        fa = "-" if row["a_p50_ms"] is None else f"{row['a_p50_ms']:.4g}"
        fb = "-" if row["b_p50_ms"] is None else f"{row['b_p50_ms']:.4g}"
        lines.append(f"| {row['config']} | {row['gpu']} | {fa} | {fb} | {row['verdict']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("label_a", nargs="?", default="w1")
    ap.add_argument("label_b", nargs="?", default="w2")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--write-md", action="store_true", help="write the BENCHMARKS.md section")
    args = ap.parse_args()
    s = summarise(args.db, args.label_a, args.label_b)
    text = table(s, args.label_a, args.label_b)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(s, indent=2) + "\n")
    if args.write_md:
        from bench_md import write_section

        cmd = ("MODELCOST_CACHE_DIR=/tmp/mc-w1 python3 -m modelcost sweep benchmarks/sweep_2gpu.toml --db "
               "sweep_2gpu.sqlite --workers 1 --label w1\nMODELCOST_CACHE_DIR=/tmp/mc-w2 python3 -m modelcost sweep "
               "benchmarks/sweep_2gpu.toml --db sweep_2gpu.sqlite --workers 2 --label w2 --force\n"
               f"python3 benchmarks/sweep_workers.py sweep_2gpu.sqlite {args.label_a} {args.label_b} --write-md")
        write_section(ROOT / "BENCHMARKS.md", SECTION,
                      f"{SECTION}\n\nThe plan: `benchmarks/sweep_2gpu.toml` (ResNet-50, BERT-base seq 128, MobileNetV2 "
                      "x torch-eager fp32, torch-half fp16, ort-cuda fp32/fp16 x batch 1 and 64; short timing "
                      "budgets). Wall time includes each config's child process start, model build, static "
                      "analysis, ONNX export (cold cache per run) and timing.\n\n```\n" + cmd + "\n```\n\n" + text)


if __name__ == "__main__":
    main()
