"""GPU benchmark of training (issue 10): ResNet-50 and BERT-base, fp32 / AMP bf16 / torch.compile + AMP bf16 at
three batch sizes each (samples/s, MFU, measured vs predicted peak memory), then the predicted largest batch for
a 24 GB and an 80 GB card run on this GPU with the memory capped to that card's
(``torch.cuda.set_per_process_memory_fraction``).

    python3 benchmarks/train_gpu.py                 # everything, within a ~8 minute budget on an H100
    OUT=/some/dir python3 benchmarks/train_gpu.py   # ... and write $OUT/train_gpu.json and $OUT/train_gpu.md
    python3 benchmarks/train_gpu.py --from-json train_gpu.json --write   # that run's section into BENCHMARKS.md

One step = zero_grad + forward + loss (sum of the outputs) + backward + AdamW step, synthetic data on the GPU,
timed with CUDA events (``modelcost.bench.training``). MFU = the static count's FLOPs per step (forward +
backward + optimizer, ``modelcost.analysis.training``) / median step time / the GPU's spec dense peak of the
precision (fp32: CUDA-core FP32, TF32 off; AMP bf16: BF16 tensor). The predicted peak is the simulated eager step's
(``modelcost.analysis.training_peak``: every storage from allocation to release on meta tensors, rounded as the
caching allocator books it; other batches from the per-op lines of the step at two batch sizes), with the former
all-at-once bound in the JSON's ``static`` block (``peak_upper_bound_bytes``); torch.compile's partitioner keeps
fewer activations, so its measured peak is expected below it. Configs left
when the budget runs out are reported as skipped, never silently dropped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = {"resnet50": ("zoo:resnet50", None, (32, 64, 128)),
          "bert-base": ("zoo:bert-base", ["input_ids=16x128"], (16, 32, 64))}
CONFIGS = (("fp32", "eager"), ("amp_bf16", "eager"), ("amp_bf16", "compile"))
CARDS = (("24 GB (L4)", "L4"), ("80 GB (H100 SXM)", "H100 SXM"))
BUDGET_S = 400.0


def _configs() -> tuple:
    from modelcost.bench.base import BenchConfig

    timed = BenchConfig(warmup=3, warmup_max_s=3.0, warmup_min_cuda_s=0.5, min_time_s=1.0, min_iters=10,
                        max_time_s=4.0)
    check = BenchConfig(warmup=2, warmup_max_s=2.0, warmup_min_cuda_s=0.0, min_time_s=0.0, min_iters=3,
                        max_time_s=3.0)
    return timed, check


def _row(model: str, r: object, **extra: object) -> dict:
    from modelcost.report.json_report import to_plain

    return {"model": model, **to_plain(r), **extra}


def _skipped(model: str, precision: str, variant: str, batch: int, why: str) -> dict:
    return {"model": model, "precision": precision, "variant": variant, "batch_size": batch, "status": "skipped",
            "reason": why}


def run(models: list[str], variants: set[str], budget_s: float) -> dict:
    import torch

    from modelcost import api
    from modelcost.runs import train as training_run
    from modelcost.analysis import training_memory as tm
    from modelcost.analysis.training import analyze_training
    from modelcost.bench.training import measure_step
    from modelcost.core.training import TrainConfig
    from modelcost.hardware.specs import spec_from_table

    t0 = time.perf_counter()
    timed, check = _configs()
    gpu = api.gpu_spec()
    doc: dict = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "peak_tflops": gpu.peak_tflops,
                 "runs": [], "max_batch_checks": [], "static": {}}
    setups: dict = {}
    for name in models:
        source, shapes, batches = MODELS[name]
        loaded = training_run.load(source, batches[0], shapes, False)
        for precision in {p for p, _ in CONFIGS}:
            static = analyze_training(loaded, batches[0], TrainConfig(optimizer="adamw", precision=precision))
            setups[name, precision] = (training_run.step_setup(loaded, static, gpu, precision), static)
            doc["static"][f"{name} {precision}"] = {
                "batch_size": static.batch_size, "flops_per_step": static.flops_per_step,
                "macs_per_sample": static.macs_per_sample, "memory": dataclasses.asdict(static.memory)}
    order = [(n, p, v) for v in ("eager",) for n in models for p, vv in CONFIGS if vv == v and v in variants]
    order += [(n, p, v) for n in models for p, v in CONFIGS if v == "compile" and v in variants]
    checks_done = False
    for name, precision, variant in order:
        if variant == "compile" and not checks_done:
            doc["max_batch_checks"] = _max_batch_checks(models, setups, check, budget_s, t0, tm, spec_from_table,
                                                        measure_step)
            checks_done = True
        for batch in MODELS[name][2]:
            if time.perf_counter() - t0 > budget_s:
                doc["runs"].append(_skipped(name, precision, variant, batch, f"time budget {budget_s:.0f} s spent"))
                continue
            r = measure_step(setups[name, precision][0], precision, batch, device="cuda", variant=variant,
                             config=timed)
            doc["runs"].append(_row(name, r))
            print(_line(doc["runs"][-1]), flush=True)
    if not checks_done:
        doc["max_batch_checks"] = _max_batch_checks(models, setups, check, budget_s, t0, tm, spec_from_table,
                                                    measure_step)
    doc["wall_s"] = time.perf_counter() - t0
    return doc


def _max_batch_checks(models, setups, check, budget_s, t0, tm, spec_from_table, measure_step) -> list[dict]:
    """AMP bf16 eager at the predicted largest batch of each card, this GPU capped to the card's memory."""
    out = []
    for name in models:
        setup, static = setups[name, "amp_bf16"]
        for label, card in CARDS:
            memory = spec_from_table(card).memory_bytes
            best = tm.max_batch(static.memory, memory, 0.10)
            row = {"model": name, "card": label, "card_memory_bytes": memory, "predicted_max_batch": best,
                   "margin": 0.10}
            if time.perf_counter() - t0 > budget_s:
                row.update(status="skipped", reason="time budget spent")
            elif best < 1:
                row.update(status="skipped", reason="no batch predicted to fit")
            else:
                r = measure_step(setup, "amp_bf16", best, device="cuda", config=check, memory_cap_bytes=memory)
                row.update(status=r.status, reason=r.reason, peak_memory_bytes=r.peak_memory_bytes,
                           predicted_peak_bytes=r.predicted_peak_bytes, step_time_ms=r.step_time_ms,
                           samples_per_second=r.samples_per_second)
            out.append(row)
            print(f"max-batch check {name} {label}: batch {best} -> {row['status']} "
                  f"peak {_gib(row.get('peak_memory_bytes'))} of {_gib(memory)} {row.get('reason') or ''}", flush=True)
    return out


def _gib(value: object) -> str:
    return "-" if value is None else f"{value / 2**30:.2f} GiB"  # type: ignore[operator]


def _line(r: dict) -> str:
    mfu = "-" if r.get("mfu") is None else f"{100 * r['mfu']:.1f}%"
    sps = "-" if r.get("samples_per_second") is None else f"{r['samples_per_second']:,.0f}"
    ms = "-" if r.get("step_time_ms") is None else f"{r['step_time_ms']:.2f}"
    ratio = "-"
    if r.get("peak_memory_bytes") and r.get("predicted_peak_bytes"):
        ratio = f"{r['predicted_peak_bytes'] / r['peak_memory_bytes']:.3f}"
    return (f"{r['model']:<9} {r['precision']:<8} {r['variant']:<7} {r['batch_size']:>5} {r['status']:<7} {ms:>9} "
            f"{sps:>9} {mfu:>6} {_gib(r.get('peak_memory_bytes')):>10} {_gib(r.get('predicted_peak_bytes')):>10} "
            f"{ratio:>6} {r.get('reason') or ''}")


HEADER = (f"{'model':<9} {'precision':<8} {'variant':<7} {'batch':>5} {'status':<7} {'step ms':>9} {'samples/s':>9} "
          f"{'MFU':>6} {'peak':>10} {'predicted':>10} {'pred/meas':>6}")


SECTION = "## Training on the GPU: ResNet-50 and BERT-base (issue 10)"
COMMAND = "OUT=DIR python3 benchmarks/train_gpu.py"


def render_md(doc: dict) -> str:
    """The BENCHMARKS.md section of one run (measured figures only; skipped configs say so)."""
    lines = [SECTION, "", f"Command: `{COMMAND}` (then `--from-json DIR/train_gpu.json --write`)", "",
             (f"{doc['device']}, torch {doc['torch']}, {doc['wall_s']:.0f} s. One step = zero_grad + forward + loss "
              "(sum of the outputs) + backward + AdamW step on synthetic data already on the GPU, CUDA events around "
              "it, median of the timed steps after warm-up. MFU = counted FLOPs per step (forward + backward + "
              "optimizer, static count on meta) / median step time / spec dense peak of the precision (fp32: "
              f"CUDA-core FP32; AMP bf16: BF16 tensor): {doc['peak_tflops'].get('fp32', 0):.1f} / "
              f"{doc['peak_tflops'].get('bf16', 0):.1f} TFLOP/s. Peak = torch.cuda.max_memory_allocated over the timed "
              "steps; predicted = the simulated eager step's peak at that batch (static, on meta tensors: every "
              "storage from allocation to release, rounded to 512 B as the caching allocator books it; library "
              "workspaces not included)."), "",
             ("| model | precision | variant | batch | status | step ms | samples/s | MFU | peak | predicted | "
             "predicted / measured |"), "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in doc["runs"]:
        ratio = "-"
        if r.get("peak_memory_bytes") and r.get("predicted_peak_bytes"):
            ratio = f"{r['predicted_peak_bytes'] / r['peak_memory_bytes']:.3f}"
        mfu = "-" if r.get("mfu") is None else f"{100 * r['mfu']:.1f}%"
        ms = "-" if r.get("step_time_ms") is None else f"{r['step_time_ms']:.2f}"
        sps = "-" if r.get("samples_per_second") is None else f"{r['samples_per_second']:,.0f}"
        status = r["status"] + (f" ({r['reason']})" if r.get("reason") else "")
        lines.append(f"| {r['model']} | {r['precision']} | {r['variant']} | {r['batch_size']} | {status} | {ms} | "
                     f"{sps} | {mfu} | {_gib(r.get('peak_memory_bytes'))} | {_gib(r.get('predicted_peak_bytes'))} | "
                     f"{ratio} |")
    lines += ["", ("Largest batch predicted for a card (AMP bf16, AdamW, 10% margin), run on this GPU with "
              "`torch.cuda.set_per_process_memory_fraction` capping it to the card's memory:"), "",
              "| model | card | predicted largest batch | status | measured peak | predicted peak |",
              "|---|---|---:|---|---:|---:|"]
    for c in doc["max_batch_checks"]:
        status = c["status"] + (f" ({c['reason']})" if c.get("reason") else "")
        lines.append(f"| {c['model']} | {c['card']} | {c['predicted_max_batch']} | {status} | "
                     f"{_gib(c.get('peak_memory_bytes'))} | {_gib(c.get('predicted_peak_bytes'))} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma list of: " + ", ".join(MODELS))
    parser.add_argument("--variants", default="eager,compile")
    parser.add_argument("--budget-s", type=float, default=BUDGET_S, help="stop starting new configs after this")
    parser.add_argument("--from-json", help="render a finished run's JSON instead of measuring")
    parser.add_argument("--write", action="store_true", help="with --from-json: write the section to BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.from_json:
        text = render_md(json.loads(Path(args.from_json).read_text()))
        print(text)
        if args.write:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from bench_md import write_section

            write_section(ROOT / "BENCHMARKS.md", SECTION, text)
        return 0
    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU here: this benchmark measures on a GPU")
        return 1
    print(HEADER, flush=True)
    doc = run([m.strip() for m in args.models.split(",")], set(args.variants.split(",")), args.budget_s)
    print("\n" + HEADER)
    for r in doc["runs"]:
        print(_line(r))
    print("\nmax-batch checks (AMP bf16 eager, memory capped with set_per_process_memory_fraction, margin 10%):")
    for c in doc["max_batch_checks"]:
        print(f"  {c['model']:<9} {c['card']:<17} predicted max batch {c['predicted_max_batch']:>5}: {c['status']}"
              f"  peak {_gib(c.get('peak_memory_bytes'))} predicted {_gib(c.get('predicted_peak_bytes'))}"
              f"  {c.get('reason') or ''}")
    print(f"\n{doc['device']}, torch {doc['torch']}, {doc['wall_s']:.0f} s")
    out = os.environ.get("OUT")
    if out:
        path = Path(out) / "train_gpu.json"
        path.write_text(json.dumps(doc, indent=2))
        (Path(out) / "train_gpu.md").write_text(render_md(doc))
        print(f"JSON: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
