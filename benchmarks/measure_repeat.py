"""How much a measurement repeats on a second machine of the same GPU kind (issue 28: a figure is only as good as
its repeat), by bound: the floor under any prediction's error.

Reads two case files of benchmarks/predict_validate.py that measured the same configs (model x backend x precision
x batch) on two machines of one GPU kind (two leases of an H100), pairs them, and reports per GPU x bound (the
bound the first file's prediction judged: analysis/predict.bound_of) the median, p90 and worst of
|second / first - 1| x 100. With ``--write-table`` the figures go into the predictor's table
(analysis/predict_errors.json, key ``repeats``; analysis/predict_table.RepeatEntry), replacing those of the same GPU
and bound, and every prediction of that GPU and bound carries them (``measured_repeat_pct``).

    python3 benchmarks/measure_repeat.py FIRST/cases.jsonl SECOND/cases.jsonl [--write-table]

On the twenty-seventh session's two H100 leases (benchmarks/results/device_2026-12-04: sixteenth_h100 and
repeat_h100) the 46 device-bound configs moved a median 0.9% and the 26 host-bound ones 15.0%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from predict_validate import TABLE, p90, read_cases  # noqa: E402 - the benchmarks folder, put on the path above


def key(case: dict) -> tuple:
    return case["gpu"], case["model"], case["backend"], case["precision"], case["batch"]


def measured(cases: list[dict]) -> dict[tuple, dict]:
    """The measured cases of one file by config (rows without a measurement, notes and failures left out)."""
    return {key(c): c for c in cases if c.get("measured_ms") and "backend" in c}


def repeats(first: list[dict], second: list[dict]) -> list[dict]:
    """Per GPU x bound of the configs both files measured: cases, median / p90 / worst |second / first - 1| %."""
    a, b = measured(first), measured(second)
    moved: dict[tuple[str, str], list[float]] = {}
    for k in a.keys() & b.keys():
        moved.setdefault((a[k]["gpu"], a[k]["bound"]), []).append(
            abs(b[k]["measured_ms"] / a[k]["measured_ms"] - 1.0) * 100.0)
    return [{"gpu": gpu, "bound": bound, "cases": len(v), "median_pct": round(statistics.median(v), 1),
             "p90_pct": round(p90(v), 1), "worst_pct": round(max(v), 1)}
            for (gpu, bound), v in sorted(moved.items())]


def merge(rows: list[dict], table: Path = TABLE) -> None:
    """Replace the table's repeat figures of the same GPU and bound with ``rows``."""
    doc = json.loads(table.read_text())
    fresh = {(r["gpu"], r["bound"]) for r in rows}
    doc["repeats"] = [r for r in doc.get("repeats", []) if (r["gpu"], r["bound"]) not in fresh] + rows
    table.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"merged {len(rows)} repeat rows into {table}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("first", type=Path, help="predict_validate's cases.jsonl of the first machine")
    p.add_argument("second", type=Path, help="... of the second machine, the same configs measured again")
    p.add_argument("--write-table", action="store_true", help="merge the figures into predict_errors.json")
    args = p.parse_args()
    rows = repeats(read_cases(args.first), read_cases(args.second))
    for r in rows:
        print(f"{r['gpu']} {r['bound']}-bound: {r['cases']} configs moved {r['median_pct']:.1f}% median, "
              f"{r['p90_pct']:.1f}% p90, {r['worst_pct']:.1f}% worst")
    if args.write_table and rows:
        merge(rows)


if __name__ == "__main__":
    main()
