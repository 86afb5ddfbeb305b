"""Validate the generation predictor (issue 28, bar "Generation": Llama-3.2-1B-shaped decode TPOT and TTFT at
batch 1 and 8 under hf-static-compile, within 10%): the committed script behind the ``<backend>/ttft`` and
``<backend>/tpot`` rows of modelcost/analysis/predict_errors.json.

The model is built offline from a transformers LlamaConfig with Llama-3.2-1B's published hyperparameters
(hidden 2048, 16 layers, 32 heads, 8 KV heads, intermediate 8192, vocabulary 128256, tied embeddings, RoPE theta
500000), random weights in bf16. Each batch is one case: modelcost's own ``llm`` path (api.llm with
measure=True and predict=True: the same loop ``modelcost llm`` times, bench/generation.py), so the prediction
and the measurement are of the same point. A case that fails is recorded with its error and the next one runs;
<out>/llm_cases.jsonl gets every phase as its case finishes and the tables are rewritten after each case, so a
run cut short keeps what it measured. About 2 minutes per case on an H100 (the compiled decode step's
coordinate-descent tuning is most of it); --budget-s stops starting cases.

    # on the GPU, after 'modelcost calibrate' (or with --calibrate / --calibration FILE)
    python benchmarks/predict_validate_llm.py --out benchmarks/results/predict
    python benchmarks/predict_validate_llm.py --out benchmarks/results/predict --write-table  # + the table rows

    # no GPU: the measured points of an earlier run predicted again from another calibration file
    python benchmarks/predict_validate_llm.py --repredict OLD/llm_cases.jsonl --calibration FILE --out DIR

Outputs: <out>/llm_cases.jsonl (one line per phase: model, GPU, calibrated_on, backend "<backend>/ttft" or
"/tpot", precision, batch, predicted, measured, error %), <out>/predict_validation_llm.json and .md (predicted
vs measured per case, and per GPU x calibration x backend/phase x precision: median / p90 / worst |error|).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
MODEL = "llama-3.2-1b-shaped"
LLAMA_3_2_1B = {  # published hyperparameters (meta-llama/Llama-3.2-1B config.json); weights random
    "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
    "vocab_size": 128256, "tie_word_embeddings": True, "max_position_embeddings": 131072, "rope_theta": 500000.0,
    "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
    "bos_token_id": 128000, "eos_token_id": 128001, "torch_dtype": "bfloat16",
}


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ROOT / "benchmarks" / "results" / "predict")))
    p.add_argument("--batches", default="1,8")
    p.add_argument("--backends", default="hf-static-compile", help="comma list (hf-eager also predicts)")
    p.add_argument("--prompt-len", type=int, default=512)
    p.add_argument("--gen-len", type=int, default=128)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--calibrate", action="store_true", help="calibrate this GPU first (into the cache)")
    p.add_argument("--calibration", type=Path, help="a calibration file to predict from (copied into the cache)")
    p.add_argument("--cache-dir", type=Path, help="MODELCOST_CACHE_DIR for this run (an empty one for transfer)")
    p.add_argument("--target-gpu", help="also predict for this table GPU (no measurement: a dry run on a CPU)")
    p.add_argument("--budget-s", type=float, default=420.0, help="stop starting cases after this many seconds")
    p.add_argument("--write-table", action="store_true", help="merge the summary into predict_errors.json")
    p.add_argument("--repredict", type=Path, metavar="CASES", help="no GPU: predict the measured points of CASES "
                   "(an earlier llm_cases.jsonl) again from --calibration, beside their stored measurements")
    return p.parse_args()


def run_case(config: Path, batch: int, args: argparse.Namespace) -> list[dict]:
    """Predicted vs measured TTFT and TPOT of one batch: one row per backend and phase."""
    from modelcost import api

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    report = api.llm(str(config), prompt_lens=[args.prompt_len], gen_lens=[args.gen_len], batch_sizes=[batch],
                     dtype="bf16", measure=True, backends=backends, runs=args.runs, warmup=1, predict=True,
                     target_gpu=args.target_gpu)
    rows = [phase_row(pred, phase, p, p.measured_ms)
            for pred in report.predictions for phase, p in (("ttft", pred.ttft), ("tpot", pred.tpot))]
    rows += [{"model": MODEL, "batch": batch, "note": f"{r.backend}: {r.status} {r.reason or ''} "
              f"{r.unstable or ''}".strip()} for r in report.benchmarks if r.status != "ok" or r.unstable]
    rows += [{"model": MODEL, "batch": batch, "note": n} for n in report.notes if n.startswith("predict")]
    return rows


def repredict(args: argparse.Namespace, config: Path) -> list[dict]:
    """--repredict: each measured (GPU, batch, backend) point of ``args.repredict`` predicted again for its GPU
    from the calibration in the cache (``args.calibration``), beside each measurement it stored (a file of several
    leases' cases, concatenated, holds a point more than once: one row per measurement)."""
    from modelcost import api

    measured = [c for c in read_cases_of(args.repredict) if c.get("measured_ms") is not None]
    rows = []
    for gpu, batch, backend in dict.fromkeys((c["gpu"], c["batch"], c["backend"].split("/")[0]) for c in measured):
        report = api.llm(str(config), prompt_lens=[args.prompt_len], gen_lens=[args.gen_len], batch_sizes=[batch],
                         dtype="bf16", predict=True, target_gpu=gpu, backends=[backend])
        for pred in report.predictions:
            for phase, p in (("ttft", pred.ttft), ("tpot", pred.tpot)):
                stored = [c["measured_ms"] for c in measured
                          if (c["gpu"], c["batch"], c["backend"]) == (gpu, batch, f"{backend}/{phase}")]
                rows += [phase_row(pred, phase, p, m) for m in stored or [None]]
    return rows


def phase_row(pred: Any, phase: str, p: Any, measured_ms: float | None) -> dict:
    """One phase ("ttft" / "tpot") of an LlmPrediction ``pred`` (``p``: that phase's LatencyPrediction) beside a
    measurement of it (None: not measured), as llm_cases.jsonl keeps it."""
    error = None if measured_ms is None else (p.latency_ms - measured_ms) / measured_ms * 100
    return {"model": MODEL, "gpu": p.gpu, "calibrated_on": p.calibrated_on, "backend": f"{p.backend}/{phase}",
            "precision": p.precision, "batch": p.batch_size, "prompt_len": pred.prompt_len, "gen_len": pred.gen_len,
            "predicted_ms": p.latency_ms, "measured_ms": measured_ms, "error_pct": error, "kernels": p.kernels,
            "features": list(p.calibration_features), "overhead_ms": p.overhead_ms}


def read_cases_of(path: Path) -> list[dict]:
    from predict_validate import read_cases

    if not path.is_file():
        sys.exit(f"predict_validate_llm: --repredict {path}: no such file")
    return read_cases(path)


def write_tables(out: Path, cases: list[dict]) -> dict:
    from predict_validate import refuse_without_calibration, summarise

    refuse_without_calibration(cases)
    summary = summarise(cases)  # rows without a measurement (another GPU, a failed run) have no error_pct
    summary["produced_by"] = "benchmarks/predict_validate_llm.py"
    summary["cases"] = [c for c in cases if "predicted_ms" in c]
    (out / "predict_validation_llm.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = [f"# Generation predictor: {MODEL}, bf16, predicted vs measured", "",
             "| GPU | calibrated on | backend/phase | batch | P | G | predicted ms | measured ms | error % |",
             "|---" * 9 + "|"]
    for c in summary["cases"]:
        measured = "-" if c["measured_ms"] is None else f"{c['measured_ms']:.3f}"
        error = "-" if c["error_pct"] is None else f"{c['error_pct']:+.1f}"
        lines.append(f"| {c['gpu']} | {c['calibrated_on']} | {c['backend']} | {c['batch']} | {c['prompt_len']} | "
                     f"{c['gen_len']} | {c['predicted_ms']:.3f} | {measured} | {error} |")
    lines += ["", "| GPU | calibrated on | backend/phase | precision | cases | median % | p90 % | worst % |",
              "|---" * 8 + "|"]
    lines += [f"| {e['gpu']} | {e['calibrated_on']} | {e['backend']} | {e['precision']} | {e['cases']} | "
              f"{e['median_pct']} | {e['p90_pct']} | {e['worst_pct']} |" for e in summary["entries"]]
    lines += ["", "## Failures and notes", ""] + [f"- {json.dumps(f)}" for f in summary["failures"]]
    (out / "predict_validation_llm.md").write_text("\n".join(lines) + "\n")
    return summary


def main() -> None:
    args = parse()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    from predict_validate import append_cases, prepare_cache, read_cases

    prepare_cache(args, args.calibration)
    from modelcost.core.errors import ModelcostError
    from modelcost.runs.predict import calibrations

    try:
        found = calibrations()  # none: every case would fail alike; say it once
    except ModelcostError as exc:
        sys.exit(f"predict_validate_llm: {exc} (or pass --calibrate / --calibration FILE)")
    print("calibrations: " + ", ".join(f"{c.gpu.name} ({c.created})" for c in found), flush=True)
    config = args.out / "llama-3.2-1b-shaped" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(LLAMA_3_2_1B, indent=2) + "\n")
    cases_file = args.out / "llm_cases.jsonl"
    if args.repredict:
        if not args.calibration or cases_file.exists():
            sys.exit("predict_validate_llm: --repredict needs --calibration FILE and an --out without llm_cases.jsonl")
        append_cases(cases_file, repredict(args, config))
        summary = write_tables(args.out, read_cases(cases_file))
        print(f"repredicted: {summary['entries']}", flush=True)
        if args.write_table:
            from predict_validate import merge_table

            merge_table(summary)
        return
    for batch in [int(b) for b in args.batches.split(",")]:
        if time.perf_counter() - t0 > args.budget_s:
            print(f"budget {args.budget_s:.0f} s spent: batch {batch} and later not run", flush=True)
            break
        t1 = time.perf_counter()
        try:
            rows = run_case(config, batch, args)
        except Exception as exc:  # noqa: BLE001 - a case that fails is recorded; the next one runs
            rows = [{"model": MODEL, "batch": batch, "error": f"{type(exc).__name__}: {exc}"[:500],
                     "trace": traceback.format_exc()[-1500:]}]
        append_cases(cases_file, rows)
        summary = write_tables(args.out, read_cases(cases_file))
        for r in rows:
            print(json.dumps(r), flush=True)
        print(f"batch {batch}: {len(rows)} rows in {time.perf_counter() - t1:.0f} s; entries {summary['entries']}",
              flush=True)
    summary = write_tables(args.out, read_cases(cases_file))
    if args.write_table:
        from predict_validate import merge_table

        merge_table(summary)


if __name__ == "__main__":
    main()
