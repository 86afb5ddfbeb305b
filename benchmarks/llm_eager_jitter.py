"""Diagnosis (GPU): why a launch-bound eager decode's TPOT moves between runs (issue 11's 2% repeatability).

    python3 benchmarks/llm_eager_jitter.py [--gens 8] [--batch 1]

Builds the Llama-3.2-1B-shaped decoder of llm_gpu.py (random bf16 weights), warms it up with two generations,
then runs ``--gens`` pairs of whole hf-eager generations (prompt 512, 128 new tokens), each pair one with Python's
garbage collector on and one with it paused (the order alternating, so a drift of the machine hits both alike).
For every generation: the median decode step (ms), its p90, and the GPU's mean / min SM clock and busy share
from NVML sampled during it. If the step time follows the clock, the GPU's clock management moves it; if the
GC-on generations are slower or wider, collections inside steps do.

Prints a table; writes $OUT/llm_eager_jitter.json when OUT is set.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.llm_gpu import LLAMA_32_1B  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gens", type=int, default=8, help="pairs of generations (GC on, GC paused)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--gen-len", type=int, default=128)
    a = ap.parse_args(argv)
    import torch

    from modelcost.bench.generation import gc_paused, generate
    from modelcost.hardware.nvml_sampler import sampling
    from modelcost.loaders.llm_loader import load_causal_lm

    if not torch.cuda.is_available():
        print("no CUDA GPU: this diagnosis measures on a GPU")
        return 1
    folder = Path(tempfile.mkdtemp(prefix="llama-3.2-1b-shape-"))
    (folder / "config.json").write_text(json.dumps(LLAMA_32_1B))
    lm = load_causal_lm(str(folder), "bf16")
    torch.manual_seed(0)
    model = lm.build("cuda", torch.bfloat16)
    ids = torch.randint(1, 128000, (a.batch, 512), device="cuda")
    for _ in range(2):
        generate(lm, model, "hf-eager", ids, a.gen_len)
    rows = []
    for i in range(2 * a.gens):
        paused = (i % 2 == 0) == (i // 2 % 2 == 0)  # on/off, off/on, ...: alternating order
        ctx = gc_paused() if paused else _gc_on()
        with sampling(0, interval_s=0.02) as gpu, ctx:
            _, steps = generate(lm, model, "hf-eager", ids, a.gen_len)
        decode = sorted(steps[1:])
        s = gpu.summary
        rows.append({"gc": "paused" if paused else "on", "tpot_p50_ms": statistics.median(decode),
                     "tpot_p90_ms": decode[int(0.9 * (len(decode) - 1))], "tpot_max_ms": decode[-1],
                     "sm_mhz_mean": s.sm_clock_mhz_mean, "sm_mhz_min": s.sm_clock_mhz_min,
                     "gpu_busy_pct": s.gpu_util_mean})
    print(f"{torch.cuda.get_device_name(0)}; torch {torch.__version__}; hf-eager b{a.batch}, P=512, "
          f"G={a.gen_len}; one row per generation")
    print("gc      p50 ms   p90 ms   max ms   SM MHz mean/min   busy %")
    for r in rows:
        print(f"{r['gc']:<7} {r['tpot_p50_ms']:7.3f}  {r['tpot_p90_ms']:7.3f}  {r['tpot_max_ms']:7.3f}  "
              f"{_f(r['sm_mhz_mean']):>6}/{_f(r['sm_mhz_min']):<6}     {_f(r['gpu_busy_pct'])}")
    for mode in ("on", "paused"):
        p50s = [r["tpot_p50_ms"] for r in rows if r["gc"] == mode]
        print(f"GC {mode}: per-generation TPOT p50 from {min(p50s):.3f} to {max(p50s):.3f} ms "
              f"({100 * (max(p50s) - min(p50s)) / min(p50s):.1f}% spread)")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "llm_eager_jitter.json").write_text(json.dumps(rows, indent=1))
    return 0


class _gc_on:
    def __enter__(self) -> None:
        gc.enable()

    def __exit__(self, *exc: object) -> None:
        return None


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


if __name__ == "__main__":
    raise SystemExit(main())
