"""Diagnosis (GPU): why a launch-bound eager decode's TPOT moves between runs (issue 11's 2% repeatability).

    python3 benchmarks/llm_eager_jitter.py [--gens 8] [--batch 1]

Builds the Llama-3.2-1B-shaped decoder of llm_gpu.py (random bf16 weights), warms it up with two generations,
then runs ``--gens`` rounds of whole hf-eager generations (prompt 512, 128 new tokens), one generation per variant
per round (round-robin, so a drift of the machine hits every variant alike). Variants (``--variants``):
``gc-on`` (Python's garbage collector on), ``gc-paused`` (off, as modelcost times generation), ``threads1``
(GC paused and torch's CPU thread pool at one thread: no spinning OpenMP workers beside the launching thread),
``pinned`` (GC paused, the launching thread alone pinned to one core). For every generation: the median decode
step (ms), its p90, the launching thread's CPU time as a share of the wall time (near 100%: it ran the whole
time, so a slow generation ran on a slower or shared core; lower: it was descheduled), the machine's steal time
(/proc/stat, a VM's CPU taken by its host) and the GPU's mean / min SM clock and busy share (NVML).

Prints a table; writes $OUT/llm_eager_jitter.json when OUT is set.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.llm_gpu import LLAMA_32_1B, TINY  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gens", type=int, default=4, help="rounds (one generation of each variant per round)")
    ap.add_argument("--variants", default="gc-on,gc-paused,threads1,pinned")
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test of this script (with --tiny)")
    ap.add_argument("--tiny", action="store_true", help="2 layers, hidden 128: a smoke test, not a figure")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--gen-len", type=int, default=128)
    a = ap.parse_args(argv)
    import torch

    from modelcost.bench.generation import generate
    from modelcost.hardware.nvml_sampler import sampling
    from modelcost.loaders.llm_loader import load_causal_lm

    if a.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA GPU: this diagnosis measures on a GPU")
        return 1
    folder = Path(tempfile.mkdtemp(prefix="llama-3.2-1b-shape-"))
    (folder / "config.json").write_text(json.dumps(dict(LLAMA_32_1B, **(TINY if a.tiny else {}))))
    lm = load_causal_lm(str(folder), "bf16")
    torch.manual_seed(0)
    model = lm.build(a.device, torch.bfloat16)
    ids = torch.randint(1, 1000, (a.batch, 512), device=a.device)
    for _ in range(2):
        generate(lm, model, "hf-eager", ids, a.gen_len)
    variants = a.variants.split(",")
    rows = []
    for _ in range(a.gens):
        for variant in variants:
            with _variant(variant, torch), sampling(0, interval_s=0.02) as gpu:
                cpu0, wall0, steal0 = time.thread_time(), time.perf_counter(), _steal_ticks()
                _, steps = generate(lm, model, "hf-eager", ids, a.gen_len)
                cpu_s, wall_s, steal = time.thread_time() - cpu0, time.perf_counter() - wall0, _steal_ticks() - steal0
            decode = sorted(steps[1:])
            s = gpu.summary
            rows.append({"variant": variant, "tpot_p50_ms": statistics.median(decode),
                         "tpot_p90_ms": decode[int(0.9 * (len(decode) - 1))], "tpot_max_ms": decode[-1],
                         "thread_cpu_share": cpu_s / wall_s, "steal_s": steal / os.sysconf("SC_CLK_TCK"),
                         "sm_mhz_mean": s.sm_clock_mhz_mean, "sm_mhz_min": s.sm_clock_mhz_min,
                         "gpu_busy_pct": s.gpu_util_mean})
    gpu = torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu (smoke test)"
    print(f"{gpu}; torch {torch.__version__}; hf-eager b{a.batch}, P=512, "
          f"G={a.gen_len}; one row per generation; {os.cpu_count()} CPUs")
    print("variant     p50 ms   p90 ms   max ms  thread CPU  steal s  SM MHz mean/min  busy %")
    for r in rows:
        print(f"{r['variant']:<10} {r['tpot_p50_ms']:7.3f}  {r['tpot_p90_ms']:7.3f}  {r['tpot_max_ms']:7.3f}  "
              f"{100 * r['thread_cpu_share']:9.0f}%  {r['steal_s']:7.2f}  "
              f"{_f(r['sm_mhz_mean']):>6}/{_f(r['sm_mhz_min']):<6}   {_f(r['gpu_busy_pct'])}")
    for variant in variants:
        p50s = [r["tpot_p50_ms"] for r in rows if r["variant"] == variant]
        print(f"{variant}: per-generation TPOT p50 from {min(p50s):.3f} to {max(p50s):.3f} ms "
              f"({100 * (max(p50s) - min(p50s)) / min(p50s):.1f}% spread)")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "llm_eager_jitter.json").write_text(json.dumps(rows, indent=1))
    return 0


@contextlib.contextmanager
def _variant(name: str, torch: Any) -> Iterator[None]:
    from modelcost.bench.generation import gc_paused

    if name == "gc-on":
        gc.enable()
        yield
        return
    threads, affinity = torch.get_num_threads(), os.sched_getaffinity(0)
    with gc_paused():
        try:
            if name == "threads1":
                torch.set_num_threads(1)
            elif name == "pinned":
                os.sched_setaffinity(0, {sorted(affinity)[len(affinity) // 2]})  # this thread only (Linux)
            yield
        finally:
            torch.set_num_threads(threads)
            os.sched_setaffinity(0, affinity)


def _steal_ticks() -> int:
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8])
    except (OSError, IndexError, ValueError):
        return 0


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


if __name__ == "__main__":
    raise SystemExit(main())
