"""Issue 9: how long the everyday answers take on this GPU, cold (empty caches) and warm (the same caches again).

For one model (default zoo:resnet50): `modelcost analyze MODEL` with the defaults, then `modelcost recommend MODEL
--batch-sizes 1,64,256`, each as a fresh `python3 -m modelcost` process with its wall time; the first run of each
starts from an empty cache folder (MODELCOST_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR fresh: no ONNX export, no
compiled kernels), the second reuses it. With --exhaustive, also the full-length sweep of the same space
(`recommend --exhaustive`: every backend x precision, no screening) to check the screened pick's throughput
against the best config found exhaustively.

    python3 benchmarks/answer_time.py zoo:resnet50 [--steps analyze-cold,recommend-cold] [--exhaustive]
        [--cache DIR] [--out DIR] [--batch-sizes 1,64,256] [--exhaustive-batch-sizes 256]

Prints a table; writes answer_time_<model>.json into --out (default $OUT or .).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import shutil
import tempfile
import time
from pathlib import Path


def run(args: list[str], cache: Path, json_path: Path, timeout_s: float, report_folder: bool = False) -> dict:
    """The command as a user types it, plus --json (the versioned report; for recommend, with the recommendation).
    ``report_folder``: recommend writes its report folder instead (--out: Markdown, HTML and the plots, about 2 s
    more on the lent H100; every round before the sixth session's was timed that way)."""
    env = dict(os.environ, MODELCOST_CACHE_DIR=str(cache), TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"),
               PYTHONUNBUFFERED="1")
    if args[0] == "recommend" and report_folder:
        cmd = [sys.executable, "-m", "modelcost", *args, "--out", str(json_path.with_suffix(""))]
        json_path = json_path.with_suffix("") / "report.json"
    else:
        cmd = [sys.executable, "-m", "modelcost", *args, "--json", str(json_path)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        rc = proc.returncode
    except subprocess.TimeoutExpired:  # SIGTERM: modelcost writes what it measured (marked incomplete) and stops
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        rc, out = 124, (out or "") + f"\n[timed out after {timeout_s:g} s]"
    output = out or ""
    tail = output[-3000:]
    wall_s = time.perf_counter() - t0
    data = json.loads(json_path.read_text()) if json_path.exists() else {}
    return {"command": "modelcost " + " ".join(args), "rc": rc, "wall_s": round(wall_s, 1), "tail": tail,
            "report": data, "output": output}


def best_ok(report: dict) -> dict | None:
    ok = [b for b in report.get("benchmarks", []) if b.get("status") == "ok" and b.get("throughput_ips")]
    return max(ok, key=lambda b: b["throughput_ips"]) if ok else None


def summarize(rows: list[dict]) -> list[dict]:
    summary = []
    keys = ("backend", "precision", "batch_size", "throughput_ips")
    for row in rows:
        r = {k: v for k, v in row.items() if k != "report"}
        rep = row["report"]
        p = pick(rep) or best_ok(rep)
        r["pick"] = None if p is None else {k: p.get(k) for k in keys}
        best = best_ok(rep)
        r["best_measured"] = None if best is None else {k: best.get(k) for k in keys}
        r["batch_sizes"] = sorted({b.get("batch_size") for b in rep.get("benchmarks", []) if b.get("batch_size")})
        r["screened"] = sum(1 for b in rep.get("benchmarks", []) if b.get("status") == "screened")
        notes = rep.get("run_notes", []) + rep.get("notes", [])
        r["notes"] = [n for n in notes if "throughput batch" in n or "screen" in n or "default sweep" in n][:3]
        summary.append(r)
    exh = next((r for r in summary if r["temp"] == "exhaustive"), None)
    warm = next((r for r in summary if r["what"] == "recommend" and r["temp"] == "warm"), None)
    warm = warm or next((r for r in summary if r["what"] == "recommend" and r["temp"] == "cold"), None)
    if exh and warm and exh["best_measured"] and warm["pick"]:
        exh["pick_vs_exhaustive_best"] = round(warm["pick"]["throughput_ips"] / exh["best_measured"]["throughput_ips"],
                                               4)
    return summary


def pick(report: dict) -> dict | None:
    rec = report.get("recommendation") or {}
    return rec.get("best")


STEPS = ("analyze-cold", "analyze-warm", "recommend-cold", "recommend-warm")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default="zoo:resnet50")
    ap.add_argument("--steps", default=",".join(STEPS), help="comma list of " + ", ".join(STEPS))
    ap.add_argument("--exhaustive", action="store_true",
                    help="also `recommend --exhaustive` (every backend x precision, full-length, no screening), "
                         "after the other steps, on the recommend cache")
    ap.add_argument("--cache", help="keep the caches here (default: a temporary folder): a later call on the same "
                                    "machine can reuse them")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--timeout-s", type=float, default=240)
    ap.add_argument("--batch-sizes", default="1,64,256", help="recommend's --batch-sizes (default 1,64,256)")
    ap.add_argument("--exhaustive-timeout-s", type=float, default=590)
    ap.add_argument("--exhaustive-batch-sizes", default=None,
                    help="the exhaustive step's --batch-sizes (default: --batch-sizes)")
    ap.add_argument("--report-folder", action="store_true",
                    help="recommend writes its report folder (--out, with plots) instead of --json alone")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = [s for s in a.steps.split(",") if s] + (["recommend-exhaustive"] if a.exhaustive else [])
    name = a.model.replace(":", "_").replace("/", "_")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.cache) if a.cache else Path(tmp)
        caches = {"analyze": root / "cache-analyze", "recommend": root / "cache-recommend"}
        for step in steps:
            what, temp = step.split("-")
            sizes = (a.exhaustive_batch_sizes or a.batch_sizes) if temp == "exhaustive" else a.batch_sizes
            args = ["analyze", a.model] if what == "analyze" else ["recommend", a.model, "--batch-sizes", sizes]
            if temp == "exhaustive":
                args.append("--exhaustive")
            if temp == "cold":  # cold: an empty cache of its own
                shutil.rmtree(caches[what], ignore_errors=True)
            timeout_s = a.exhaustive_timeout_s if temp == "exhaustive" else a.timeout_s
            r = run(args, caches[what], Path(tmp) / f"{what}-{temp}.json", timeout_s, a.report_folder)
            r.update(what=what, temp=temp)
            (out / f"{name}-{step}.json").write_text(json.dumps(r["report"], indent=1))  # the report, for reading
            (out / f"{name}-{step}.log").write_text(r.pop("output"))  # all it printed (MODELCOST_TRACE lines too)
            rows.append(r)
            print(f"{what:9} {temp:10} rc={r['rc']} {r['wall_s']:7.1f} s  {r['command']}", flush=True)
            summary = summarize(rows)
            (out / f"answer_time_{name}.json").write_text(json.dumps(summary, indent=1))  # after every step
    print("\nwhat                  temp  rc   wall s  batches          screened  pick")
    for r in summary:
        p = r["pick"]
        ps = f"{p['backend']} {p['precision']} b{p['batch_size']} {p['throughput_ips']:,.0f} ips" if p else "-"
        print(f"{r['what']:10} {r['temp']:10} {r['rc']:3} {r['wall_s']:8.1f}  {str(r['batch_sizes']):16} "
              f"{r['screened']:8}  {ps}  {r.get('pick_vs_exhaustive_best', '')}")


if __name__ == "__main__":
    main()
