"""Benchmark (GPU): what limits batch-1 decode of a Llama-3.2-1B-shaped decoder (issue 11).

For each decode variant (the StaticCache step compiled with CUDA graphs as ``modelcost llm`` does, then with
inductor's coordinate-descent tuning, then ``max-autotune``), one 128-token greedy generation after warm-up is
traced with torch.profiler: the GPU kernel time per decode step (the sum of kernel durations, i.e. what the GPU
was busy with) is set against the TPOT from CUDA events (which includes any time the GPU waited for the host).
If kernel time ~ TPOT the kernels are the limit (and the top kernels say which); if kernel time << TPOT the host
(launch / Python per step) is. Also: hf-eager at batch 1 measured three times with and without the garbage
collector running, for the repeatability of a launch-bound backend.

    python3 benchmarks/llm_decode_diag.py [--variants default,cdt,max-autotune] [--batches 1,8] [--top N] [--json PATH]

The decode steps' kernels are told from the prefill's by a marker kernel launched before the first step.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

VARIANTS = {
    "default": ({"mode": "reduce-overhead", "fullgraph": True}, {}),
    "cdt": ({"mode": "reduce-overhead", "fullgraph": True}, {"coordinate_descent_tuning": True}),
    "max-autotune": ({"mode": "max-autotune", "fullgraph": True}, {"coordinate_descent_tuning": True}),
}


MARKER = "spin_kernel"  # torch.cuda._sleep's kernel: launched once between the prefill and the first decode step


def _mix(kernels: list, per: int, top_n: int) -> dict:
    """Kernel time, kernels and the top kernels by name of ``kernels``, per one of ``per`` steps."""
    total_us, by_name = 0.0, {}
    for evt in kernels:
        dur = evt.time_range.elapsed_us()
        total_us += dur
        name = evt.name[:120]
        t, n = by_name.get(name, (0.0, 0))
        by_name[name] = (t + dur, n + 1)
    top = sorted(by_name.items(), key=lambda kv: -kv[1][0])[:top_n]
    return {"kernel_ms_per_step": total_us / 1e3 / per, "kernels_per_step": len(kernels) / per,
            "top": [{"name": k, "us_per_step": round(v[0] / per, 1), "calls_per_step": round(v[1] / per, 2)}
                    for k, v in top]}


def kernel_summary(prof, steps: int, top_n: int = 12) -> dict:
    """Sum of CUDA kernel time per decode step and the top kernels: the kernels after the marker (the decode
    steps) where the run launched one (``mark_decode``), else every kernel of the run (the prefill's too); with a
    marker, the prefill's kernels (those before it) as ``prefill``."""
    from torch.autograd import DeviceType

    kernels = sorted((e for e in prof.events() if e.device_type == DeviceType.CUDA), key=lambda e: e.time_range.start)
    marks = [i for i, e in enumerate(kernels) if MARKER in e.name]
    decode = kernels[marks[0] + 1:] if marks else kernels
    out = {"decode_only": bool(marks), **_mix(decode, steps, top_n)}
    if marks:
        out["prefill"] = _mix(kernels[:marks[0]], 1, top_n)
    return out


def mark_decode():
    """A patch of torch.compiler.cudagraph_mark_step_begin (the generation loop calls it before each decode step)
    that launches MARKER once, before the first: kernel_summary then counts the decode steps' kernels only."""
    import torch

    original = torch.compiler.cudagraph_mark_step_begin
    done = []

    def begin() -> None:
        if not done:
            torch.cuda._sleep(100)
            done.append(True)
        original()

    return original, begin


def diagnose_variant(lm, model, name: str, prompt: int, gen: int, batch: int = 1, top_n: int = 12) -> dict:
    import torch
    import torch._inductor.config as inductor_config

    from modelcost.bench import generation as g
    from modelcost.bench.timing import clock_for

    compile_kwargs, inductor = VARIANTS[name]
    g._fresh_device(True)
    saved = {k: getattr(inductor_config, k) for k in inductor}
    for k, v in inductor.items():
        setattr(inductor_config, k, v)
    t0 = time.perf_counter()
    ids = torch.randint(1, lm.vocab_size, (batch, prompt), device="cuda")
    run = g._static_runner(lm, model, batch, prompt, gen, "cuda", compile_kwargs=compile_kwargs)
    with torch.no_grad():
        for _ in range(2):  # compile + warm-up
            clock = clock_for("cuda")
            run(ids, clock)
            clock.intervals_ms()
    compile_s = time.perf_counter() - t0
    tpots = []
    for _ in range(3):
        clock = clock_for("cuda")
        run(ids, clock)
        tpots += clock.intervals_ms()[1:]
    tpots.sort()
    tpot = tpots[len(tpots) // 2]
    # host time per step: wall time of the decode loop without waiting for the GPU
    from torch.profiler import ProfilerActivity, profile

    original, begin = mark_decode()
    torch.compiler.cudagraph_mark_step_begin = begin
    try:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            clock = clock_for("cuda")
            t1 = time.perf_counter()
            run(ids, clock)
            host_ms = (time.perf_counter() - t1) * 1e3
            steps = clock.intervals_ms()
    finally:
        torch.compiler.cudagraph_mark_step_begin = original
    summary = kernel_summary(prof, gen - 1, top_n)  # the gen - 1 decode steps after the marker
    for k, v in saved.items():
        setattr(inductor_config, k, v)
    return {"variant": name, "batch": batch, "compile_kwargs": compile_kwargs, "inductor": inductor,
            "compile_s": round(compile_s, 1),
            "tpot_ms_p50": round(tpot, 4), "profiled_ttft_ms": round(steps[0], 3),
            "profiled_tpot_ms_mean": round(sum(steps[1:]) / len(steps[1:]), 4),
            "host_loop_ms_per_step_incl_profiler": round(host_ms / gen, 4), **summary}


def eager_repeatability(lm, model, prompt: int, gen: int) -> dict:
    from modelcost.bench.generation import measure_generation

    out = {}
    for label, collect in (("gc on", True), ("gc off", False)):
        if not collect:
            gc.collect()
            gc.disable()
        try:
            res = measure_generation(lm, backends=["hf-eager"], batch_sizes=[1], prompt_len=prompt, gen_len=gen,
                                     runs=3, warmup=1, repeats=3, device="cuda")
        finally:
            gc.enable()
        out[label] = [round(r.tpot_ms, 3) for r in res if r.tpot_ms]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="default,cdt,max-autotune")
    ap.add_argument("--prompt-len", type=int, default=512)
    ap.add_argument("--gen-len", type=int, default=128)
    ap.add_argument("--no-eager", action="store_true")
    ap.add_argument("--batches", default="1", help="comma list: each variant is diagnosed at each batch")
    ap.add_argument("--top", type=int, default=12, help="kernels listed per variant")
    ap.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "llm_decode_diag.json"))
    a = ap.parse_args()
    import torch

    from llm_gpu import LLAMA_32_1B

    from modelcost.loaders.llm_loader import load_causal_lm

    folder = Path(tempfile.mkdtemp(prefix="llama-1b-"))
    (folder / "config.json").write_text(json.dumps(LLAMA_32_1B))
    lm = load_causal_lm(str(folder), "bf16")
    torch.manual_seed(0)
    model = lm.build("cuda", torch.bfloat16)
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "variants": []}
    for name, batch in [(n, int(b)) for n in a.variants.split(",") for b in a.batches.split(",")]:
        t0 = time.perf_counter()
        try:
            row = diagnose_variant(lm, model, name, a.prompt_len, a.gen_len, batch, a.top)
        except Exception as exc:  # noqa: BLE001 - a variant that fails is reported, the others go on
            row = {"variant": name, "batch": batch, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        row["wall_s"] = round(time.perf_counter() - t0, 1)
        doc["variants"].append(row)
        print(json.dumps(row, indent=1), flush=True)
        Path(a.json).write_text(json.dumps(doc, indent=2))
    if not a.no_eager:
        doc["eager_b1_tpot_ms_repeats"] = eager_repeatability(lm, model, a.prompt_len, a.gen_len)
        print(json.dumps(doc["eager_b1_tpot_ms_repeats"]), flush=True)
    Path(a.json).write_text(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
