"""Does a torch.profiler session slow the host's kernel launches for the rest of the process? (issue 28,
seventeenth session)

`calibrate` measures the host's price per aten call in its own process and in two fresh ones, and keeps the
median. On four leases its own process read 26.1-28.2 us per call and the fresh ones 11.7-21.1, and its own
process had just profiled the fusion nets (bench/calibrate_fusion.count_kernels: torch.profiler with CUDA
activity). The benchmarks run in a process that profiles too. This script fits the price per call
(bench/calibrate_host's nets and fit) in a fresh process, then profiles one net once, then fits again.

    python3 benchmarks/profiler_host_diag.py --rounds 3   (on the GPU; prints JSON lines)

Written in the seventeenth session after its device time ran out: not run yet (the next session's first device
call; it needs torch alone, no ONNX Runtime parts).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    import torch

    from modelcost.bench.calibrate_fusion import _runner, count_kernels
    from modelcost.bench.calibrate_host import HOST_NETS, count_ops, fit, host_net, host_us

    with torch.no_grad():
        nets = {name: host_net(torch, name) for name in HOST_NETS}
        counts = {name: count_ops(torch, lambda n=net, x=x: n(x)) for name, (net, x) in nets.items()}

    def price(phase: str) -> None:
        for rnd in range(args.rounds):
            with torch.inference_mode():
                rows = [(*counts[name], host_us(torch, _runner(torch, "eager", net, x, "")))
                        for name, (net, x) in nets.items()]
            kernel_us, view_us = fit(rows)
            tiny = [t for (name, _), (_, _, t) in zip(nets.items(), rows, strict=True) if name == "tiny-linear"][0]
            print(json.dumps({"phase": phase, "round": rnd, "kernel_op_us": round(kernel_us, 2),
                              "view_op_us": round(view_us, 2), "tiny_linear_us": round(tiny, 1)}), flush=True)

    price("before any profiler")
    net, x = nets["mlp"]
    with torch.inference_mode():
        print("profiled kernels:", count_kernels(torch, lambda: net(x)), flush=True)
    price("after one torch.profiler session")


if __name__ == "__main__":
    main()
