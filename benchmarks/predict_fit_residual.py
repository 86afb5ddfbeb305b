"""Fit the latency predictor's measured residual (issue 28; analysis/predict_residual.py says what it is) from the
validation's stored cases, and say what it does to each held-out set when fitted on the others.

Each CASES file is one held-out set (predict_validate.py's cases.jsonl, its predictions from one calibration of
the GPU it measured: --repredict them first so that every set is predicted by today's kernel model). Per case the
kernel model's prediction is ``model_ms`` (or predicted_ms / residual_factor, or predicted_ms where the row has
neither: a row written before the residual existed). Per backend:

    factor = exp(median over its cases of ln(measured_ms / model_ms))

the median of the ratios in log space, so a case 2x slow and one 2x fast weigh the same, and a few wild
host-bound cases do not pull it. The same per backend and bound (a case's ``bound``, or one derived from its
``overhead_ms`` as analysis/predict.bound_of does), where the bound has at least ``MIN_BOUND_CASES`` cases: a
prediction takes its bound's factor, else its backend's. Only cases predicted from their own GPU's calibration
are used (calibrated_on == gpu: a transferred prediction has the transfer's error too).

    python3 benchmarks/predict_fit_residual.py SET1.jsonl SET2.jsonl ... [--out FILE]   # default: the committed
                                                                                      # predict_residuals.json
        [--heuristic-plans SET1.jsonl ...]   # sets measured before abe4b94: their fp32 torch cases of conv nets
                                             # timed cuDNN's heuristic plans and are left out (heuristic_plans)

Writes the residual file (backend -> factor and cases, the fit's id, the sets it came from) with
``cross_validation``: each set predicted by the factors fitted on the other sets, its median / p90 |error| and
cases predicted low before and after; and prints the same as a table.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from predict_validate import obsolete, p90  # noqa: E402

from modelcost.analysis.predict_residual import MIN_BOUND_CASES, RESIDUAL_FILE, SCHEMA, fit_id, key  # noqa: E402
from modelcost.analysis.predict import bound_of  # noqa: E402
from modelcost.core.calibration import BACKEND_FAMILIES  # noqa: E402


def model_ms(case: dict) -> float:
    """The kernel model's prediction of a case, before any residual (module doc)."""
    if case.get("model_ms") is not None:
        return float(case["model_ms"])
    return float(case["predicted_ms"]) / float(case.get("residual_factor") or 1.0)


def usable(cases: list[dict]) -> list[dict]:
    """The cases a fit can use: measured, predicted, from their own GPU's calibration, and not of a session
    modelcost no longer builds (predict_validate.obsolete: ort-cuda fp16 measured with use_tf32 off)."""
    return [c for c in cases if c.get("measured_ms") and c.get("predicted_ms") and c.get("gpu")
            and c.get("gpu") == c.get("calibrated_on") and not obsolete(c)]


# The torch configs whose convs ran cuDNN's heuristic plans in sets measured before abe4b94 (the fp32 reference,
# run first, left its plans to them), and the share of a model's MACs in convs from which that matters
HEURISTIC_PLAN_BACKENDS = ("torch-eager", "torch-compile-cudagraph", "torch-compile")
HEURISTIC_PLAN_CONV_PCT = 10.0


def heuristic_plans(case: dict) -> bool:
    """Whether a case of a set measured before abe4b94 timed convs that a run now autotunes: an fp32 torch config of a
    model with ``HEURISTIC_PLAN_CONV_PCT`` or more of its MACs in convs (the row's ``conv_macs_pct``: re-predict a
    set by today's predict_validate to have it). VGG-16's batch-64 fp32 convs took 33.0 ms that way and 26.0 ms
    autotuned (H200, benchmarks/results/device_2026-11-26k): such a case measures another program than the one a
    prediction now stands for."""
    if case.get("conv_macs_pct") is None:
        raise SystemExit(f"predict_fit_residual: a case of {case.get('model')} has no conv_macs_pct: re-predict its "
                         "set (predict_validate.py --repredict) before --heuristic-plans can judge it")
    return case["precision"] == "fp32" and case["backend"] in HEURISTIC_PLAN_BACKENDS \
        and case["conv_macs_pct"] >= HEURISTIC_PLAN_CONV_PCT


def bound(case: dict) -> str | None:
    """The case's bound: as its row says, or from its kernel model's overhead (analysis/predict.bound_of); None
    for a row with neither (written before the bound existed)."""
    if case.get("bound"):
        return str(case["bound"])
    if case.get("overhead_ms") is None or case["backend"] not in BACKEND_FAMILIES:
        return None
    return bound_of(case["backend"], case["overhead_ms"])


def fit(cases: list[dict]) -> dict[str, float]:
    """``key`` -> exp(median ln(measured / model)) over ``cases``: per backend, and per backend and bound where the
    bound has ``MIN_BOUND_CASES`` cases (module doc)."""
    logs: dict[str, list[float]] = {}
    for c in cases:
        ratio = math.log(c["measured_ms"] / model_ms(c))
        logs.setdefault(key(c["backend"]), []).append(ratio)
        if bound(c):
            logs.setdefault(key(c["backend"], bound(c)), []).append(ratio)
    return {k: math.exp(statistics.median(v)) for k, v in sorted(logs.items())
            if "/" not in k or len(v) >= MIN_BOUND_CASES}


def factor_of(case: dict, factors: dict[str, float]) -> float:
    """The factor ``case`` takes under ``factors``: its bound's, else its backend's, else 1."""
    return factors.get(key(case["backend"], bound(case)), factors.get(key(case["backend"]), 1.0))


def errors(cases: list[dict], factors: dict[str, float]) -> dict:
    """Median and p90 |error| % and cases predicted low of ``cases`` under ``factors`` (``factor_of``)."""
    signed = [(model_ms(c) * factor_of(c, factors) - c["measured_ms"]) / c["measured_ms"] * 100 for c in cases]
    errs = sorted(abs(e) for e in signed)
    if not errs:
        return {"cases": 0}
    return {"cases": len(errs), "median_pct": round(statistics.median(errs), 1),
            "p90_pct": round(p90(errs), 1),
            "low_cases": sum(e < 0 for e in signed)}


def cross_validation(sets: dict[str, list[dict]]) -> list[dict]:
    """Each set under the factors fitted on the other sets, beside the kernel model alone."""
    rows = []
    for name, cases in sets.items():
        others = fit([c for other, rest in sets.items() if other != name for c in rest])
        rows.append({"held_out": name, "factors": {b: round(f, 4) for b, f in others.items()},
                     "kernel_model": errors(cases, {}), "with_residual": errors(cases, others)})
    return rows


def backends(cases: list[dict], factors: dict[str, float]) -> dict:
    """The file's ``backends``: per backend its factor and cases, and ``bound`` -> the same where fitted."""
    out: dict[str, dict] = {}
    for k, f in factors.items():
        if "/" not in k:
            out[k] = {"factor": round(f, 4), "cases": sum(c["backend"] == k for c in cases)}
    for k, f in factors.items():
        if "/" in k:
            backend, name = k.split("/")
            out[backend].setdefault("bound", {})[name] = {
                "factor": round(f, 4), "cases": sum(c["backend"] == backend and bound(c) == name for c in cases)}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", type=Path, nargs="+", help="one cases.jsonl per held-out set")
    p.add_argument("--out", type=Path, default=RESIDUAL_FILE)
    p.add_argument("--heuristic-plans", type=Path, nargs="*", default=[], metavar="CASES",
                   help="sets (of CASES) measured before abe4b94: their fp32 torch cases of conv nets are left out "
                        "(heuristic_plans)")
    args = p.parse_args()
    sets: dict[str, list[dict]] = {}
    left_out: dict[str, int] = {}
    for path in args.cases:
        if not path.is_file():
            sys.exit(f"predict_fit_residual: {path}: no such file")
        rows = usable([json.loads(line) for line in path.read_text().splitlines() if line.strip()])
        if path in args.heuristic_plans:
            kept = [c for c in rows if not heuristic_plans(c)]
            left_out[str(path)], rows = len(rows) - len(kept), kept
        if not rows:
            sys.exit(f"predict_fit_residual: {path} has no measured case predicted from its own GPU's calibration")
        sets[str(path)] = rows
    if set(args.heuristic_plans) - set(args.cases):
        sys.exit("predict_fit_residual: --heuristic-plans names a file that is not one of the CASES")
    every = [c for rows in sets.values() for c in rows]
    factors = fit(every)
    gpus = sorted({c["gpu"] for c in every})
    doc = {"schema": SCHEMA, "produced_by": "benchmarks/predict_fit_residual.py", "fit": fit_id(factors),
           "fitted_on": {"gpus": gpus, "cases": len(every), "architectures": len({c["model"] for c in every}),
                         "sets": [{"file": name, "cases": len(rows),
                                   "architectures": sorted({c["model"] for c in rows}),
                                   **({"heuristic_plan_cases_left_out": left_out[name]} if name in left_out else {})}
                                  for name, rows in sets.items()]},
           "backends": backends(every, factors),
           "in_sample": {"kernel_model": errors(every, {}), "with_residual": errors(every, factors)},
           "cross_validation": cross_validation(sets) if len(sets) > 1 else []}
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    archs = doc["fitted_on"]["architectures"]
    print(f"fit {doc['fit']} on {len(every)} cases of {archs} architectures ({', '.join(gpus)})")
    for name, n in left_out.items():
        print(f"  {name}: {n} fp32 torch cases of conv nets left out (heuristic cuDNN plans)")
    for b, row in doc["backends"].items():
        print(f"  {b}: x{row['factor']:.3f} ({row['cases']} cases)")
        for name, sub in row.get("bound", {}).items():
            print(f"    {name}-bound: x{sub['factor']:.3f} ({sub['cases']} cases)")
    for row in doc["cross_validation"]:
        k, r = row["kernel_model"], row["with_residual"]
        print(f"  held out {row['held_out']}: median {k['median_pct']}% -> {r['median_pct']}%, p90 {k['p90_pct']}% -> "
              f"{r['p90_pct']}%, low {k['low_cases']} -> {r['low_cases']} of {k['cases']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
