"""Where a sweep child's seconds go (issue 27: a pair of A/A sweeps is 48 children; each took 11-19 s on an H200).

    python3 benchmarks/child_profile.py PLAN LABEL [LABEL...]      # e.g. "resnet50 torch-eager fp32 b1"

Each config runs in a fresh process as ``modelcost.sweep.child`` runs it (``adapter.run_config``), with the
process's phases timed (interpreter start to ``import modelcost.api``, the static analysis, the benchmark) and the
benchmark under cProfile: the functions that took the most cumulative time are printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

T_START = time.perf_counter()


def child(plan_path: str, label: str, timing: str) -> None:
    import cProfile
    import pstats

    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.sweep.plan import load_plan
    from modelcost.sweep.run import planned_configs

    t_import = time.perf_counter()
    config = next(c for c in planned_configs(load_plan(plan_path)) if c.label == label)
    t0 = time.perf_counter()
    api.analyze_static(config.source, batch_size=config.batch_size, input_shapes=list(config.input_shapes))
    t_static = time.perf_counter()
    prof = cProfile.Profile()
    prof.enable()
    api.run_benchmarks(config.source, backends=[config.backend], precisions=[config.precision],
                       batch_sizes=[config.batch_size], input_shapes=list(config.input_shapes),
                       config=BenchConfig(**{**json.loads(timing), "device": config.device}))
    prof.disable()
    t_bench = time.perf_counter()
    print(f"== {label}: import {t_import - T_START:.1f} s, plan {t0 - t_import:.1f} s, static {t_static - t0:.1f} s, "
          f"bench {t_bench - t_static:.1f} s")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(28)


def main() -> None:
    if sys.argv[1] == "--child":
        child(*sys.argv[2:5])
        return
    from modelcost.sweep.plan import load_plan

    plan = load_plan(sys.argv[1])
    timing = json.dumps(plan.timing)
    for label in sys.argv[2:]:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--child", sys.argv[1], label, timing], capture_output=True,
                             text=True)
        print(out.stdout[-6000:], out.stderr[-1500:] if out.returncode else "")
        print(f"== {label}: process wall {time.perf_counter() - t0:.1f} s (exit {out.returncode})\n", flush=True)


if __name__ == "__main__":
    main()
