"""Does a torch.profiler session slow the host's kernel launches for the rest of the process? (issue 28,
seventeenth session)

`calibrate` measures the host's price per aten call in its own process and in two fresh ones, and keeps the
median. On four leases its own process read 26.1-28.2 us per call and the fresh ones 11.7-21.1, and its own
process had just profiled the fusion nets (bench/calibrate_fusion.count_kernels: torch.profiler with CUDA
activity), compiled them (torch.compile) and run them under ONNX Runtime. The benchmarks run in a process that
does the same. This script fits the price per call (bench/calibrate_host's nets and fit) in a fresh process, then
after each suspect in turn: one torch.profiler session, one torch.compile'd net, one ONNX Runtime CUDA session
(skipped where onnxruntime is absent).

    python3 benchmarks/profiler_host_diag.py --rounds 3 [--order compile,ort,profiler]   (on the GPU; JSON lines)

Written in the seventeenth session after its device time ran out; the suspects after the profiler added in the
eighteenth, before it first ran.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--order", default="profiler,compile,ort", help="the suspects in the order they run")
    args = p.parse_args()
    import torch

    from modelcost.bench.calibrate_fusion import count_kernels
    from modelcost.bench.calibrate_host import host_nets, price

    nets, counts = host_nets(torch)

    def rounds(phase: str) -> None:
        for rnd in range(args.rounds):
            kernel_us, view_us, times = price(torch, "eager", nets, counts)
            print(json.dumps({"phase": phase, "round": rnd, "kernel_op_us": round(kernel_us, 2),
                              "view_op_us": round(view_us, 2), "tiny_linear_us": round(times["tiny-linear"], 1)}),
                  flush=True)

    rounds("before any suspect")
    net, x = nets["mlp"]
    for suspect in args.order.split(","):
        if suspect == "profiler":
            with torch.inference_mode():
                print("profiled kernels:", count_kernels(torch, lambda: net(x)), flush=True)
            rounds("after one torch.profiler session")
        elif suspect == "compile":
            compiled = torch.compile(copy.deepcopy(net))
            with torch.inference_mode():
                for _ in range(3):
                    compiled(x)
            torch.cuda.synchronize()
            rounds("after one torch.compile'd net")
        elif suspect == "ort":
            try:
                from modelcost.bench.calibrate_fusion import _ort_runner
                with tempfile.TemporaryDirectory() as tmp, torch.inference_mode():
                    run = _ort_runner(torch, copy.deepcopy(net), x, tmp)
                    for _ in range(10):
                        run()
                rounds("after one ONNX Runtime CUDA session")
            except ImportError as exc:
                print("no ONNX Runtime phase:", exc, flush=True)


if __name__ == "__main__":
    main()
