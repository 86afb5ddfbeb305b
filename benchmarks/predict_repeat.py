"""How far a measured case moves between two runs of predict_validate.py, and what that means for the
predictor's error (issue 28's bars; issue 27's between-run noise).

    python3 benchmarks/predict_repeat.py RUN_A/cases.jsonl RUN_B/cases.jsonl [--out DIR]

Each run is one or more processes on a machine of the same kind (the device lends a fresh VM per session), so
a case's two measurements differ by the machine, the process and cuDNN's algorithm choice, not by the code.
A prediction cannot be held to a tighter error than its own measurement repeats, so the predictor's error is
shown apart for the cases that repeat within ``STABLE_PCT`` and for those that move more.

Writes DIR/predict_repeat.md (and prints it): the move by backend and batch, the error split, the largest moves.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from predict_validate import p90  # the p90 the validation tables publish (benchmarks/ is on the path as a script)

STABLE_PCT = 5.0


def load(path: Path) -> dict[tuple, dict]:
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {(r["model"], r["backend"], r["precision"], r["batch"]): r for r in rows
            if r.get("measured_ms") and r.get("predicted_ms")}


def move_pct(a: float, b: float) -> float:
    """|b - a| / min(a, b) x 100: how much the slower of two measurements exceeds the faster."""
    return abs(b - a) / min(a, b) * 100.0


def pairs(a: dict[tuple, dict], b: dict[tuple, dict]) -> list[dict]:
    return [{"key": key, "move_pct": move_pct(a[key]["measured_ms"], b[key]["measured_ms"]),
             "a_ms": a[key]["measured_ms"], "b_ms": b[key]["measured_ms"],
             "errors": [abs(a[key]["error_pct"]), abs(b[key]["error_pct"])]} for key in sorted(a.keys() & b.keys())]


def report(both: list[dict], names: tuple[str, str]) -> str:
    lines = [f"# Measured cases repeated: {names[0]} against {names[1]}", "",
             f"{len(both)} cases measured in both runs. Move: |b - a| / min(a, b).", "",
             "| backend | batch | cases | median move % | p90 move % | within 2% | within 5% |",
             "|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[float]] = defaultdict(list)
    for p in both:
        groups[(p["key"][1], p["key"][3])].append(p["move_pct"])
    for (backend, batch), moves in sorted(groups.items()):
        lines.append(f"| {backend} | {batch} | {len(moves)} | {statistics.median(moves):.1f} | {p90(moves):.1f} | "
                     f"{sum(m <= 2 for m in moves)} | {sum(m <= STABLE_PCT for m in moves)} |")
    moves = [p["move_pct"] for p in both]
    lines += [f"| all | | {len(moves)} | {statistics.median(moves):.1f} | {p90(moves):.1f} | "
              f"{sum(m <= 2 for m in moves)} | {sum(m <= STABLE_PCT for m in moves)} |", "",
              "## The predictor's |error| on each run's measurement, split by how the case repeats", "",
              "| cases | count | median |error| % | p90 |error| % |", "|---|---|---|---|"]
    for label, chosen in ((f"repeat within {STABLE_PCT:g}%", [p for p in both if p["move_pct"] <= STABLE_PCT]),
                          (f"move more than {STABLE_PCT:g}%", [p for p in both if p["move_pct"] > STABLE_PCT])):
        errors = [e for p in chosen for e in p["errors"]]
        if errors:
            lines.append(f"| {label} | {len(chosen)} | {statistics.median(errors):.1f} | {p90(errors):.1f} |")
    lines += ["", "## Largest moves", "", "| model | backend | precision | batch | run A ms | run B ms | move % |",
              "|---|---|---|---|---|---|---|"]
    for p in sorted(both, key=lambda p: -p["move_pct"])[:12]:
        model, backend, precision, batch = p["key"]
        lines.append(f"| {model} | {backend} | {precision} | {batch} | {p['a_ms']:.3f} | {p['b_ms']:.3f} | "
                     f"{p['move_pct']:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--out", type=Path, help="a folder: predict_repeat.md is written into it")
    args = parser.parse_args()
    both = pairs(load(args.run_a), load(args.run_b))
    if not both:
        raise SystemExit("predict_repeat: no case was measured in both runs")
    text = report(both, (str(args.run_a), str(args.run_b)))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "predict_repeat.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
