"""A held-out set's cases with some of them measured again (issue 28, seventeenth session): every case of SET whose
model, backend, precision and batch a NEWER file measured takes the newer measurement (measured_ms and unstable);
the newer file's cases of SET's models that SET lacks are added. The predictions are left as they are: re-predict
the result (predict_validate.py --repredict) before fitting or tabling it.

    python3 benchmarks/merge_remeasured.py SET.jsonl NEWER.jsonl ... --out MERGED.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def case_key(case: dict) -> tuple:
    return case.get("model"), case.get("backend"), case.get("precision"), case.get("batch")


def merge(cases: list[dict], newer: list[dict]) -> tuple[list[dict], int, int]:
    """(SET's cases with the newer measurements, how many were replaced, how many added)."""
    latest = {case_key(c): c for c in newer if c.get("measured_ms")}
    models = {c.get("model") for c in cases}
    out, replaced = [], 0
    for c in cases:
        new = latest.pop(case_key(c), None) if c.get("measured_ms") else None
        if new is not None:
            c = {**c, "measured_ms": new["measured_ms"], "unstable": new.get("unstable", [])}
            replaced += 1
        out.append(c)
    added = [c for k, c in latest.items() if k[0] in models and k not in {case_key(o) for o in out}]
    return out + added, replaced, len(added)


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("set", type=Path)
    p.add_argument("newer", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    merged, replaced, added = merge(read(args.set), [c for path in args.newer for c in read(path)])
    args.out.write_text("".join(json.dumps(c) + "\n" for c in merged))
    print(f"{args.out}: {len(merged)} cases, {replaced} measured again, {added} added")


if __name__ == "__main__":
    main()
