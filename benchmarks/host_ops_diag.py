"""What one eager aten call costs the host, op by op and precision by precision (issue 28: torch-half's batch 1).

calibrate prices a host-bound eager forward per aten call, one price for every call (bench/calibrate_host.py) and the
same price for torch-half as for eager fp32. On the H100 (benchmarks/results/device_2026-12-03/half_diag) the same
395 aten calls of ResNeSt-50 took 6.4 ms of host time in fp32 and 15-17 ms in fp16: 16 against 43 us per call, with
1.5x the kernels (a BatchNorm of fp16 weights leaves cuDNN for three native kernels; cuDNN's fp16 convs add layout
transforms). On transformers the one price erred the other way (+21-44% at batch 1, the fifteenth held-out set).
This script measures the price of each kind of call on its own, on tensors small enough that the host sets the pace,
so that a model of the host's time by op class can be fitted and checked:

* for each op (``OPS``) and each of fp32, fp16, and fp16 channels_last where the op takes a 4-D tensor, the host's
  microseconds per call (``CALLS`` calls issued back to back, one synchronize at the end, the median of ``REPS``)
  and the kernels one call launches (torch.profiler);
* the process's pace (bench.timing.host_pace_us) before and after, and the whole table again in ``--processes``
  fresh processes, to see whether the prices move with the pace from one process to the next.

Runs under ``torch.inference_mode`` with cudnn.benchmark on, pinned to one CPU with one torch thread, as the
benchmarks time a GPU config (bench.timing.pinned_to_one_cpu).

    python3 benchmarks/host_ops_diag.py --processes 3 --out DIR      (on the GPU; writes DIR/host_ops.json)
    python3 benchmarks/host_ops_diag.py --device cpu --processes 1 --out DIR   (a smoke run of the script itself)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CALLS = 200
REPS = 5
CHANNELS, SIDE = 32, 8  # a 1 x 32 x 8 x 8 activation: every kernel a few microseconds, the host the bottleneck


def ops(torch: Any, device: str, dtype: Any, channels_last: bool) -> dict[str, Callable[[], Any]]:
    """op name -> a call of it on small tensors of ``dtype`` (4-D ones channels_last where asked)."""
    nn, f = torch.nn, torch.nn.functional

    def four_d(t: Any) -> Any:
        return t.to(memory_format=torch.channels_last) if channels_last else t

    def module(m: Any) -> Any:
        m = m.to(device=device, dtype=dtype).eval()
        return m.to(memory_format=torch.channels_last) if channels_last else m

    x = four_d(torch.randn(1, CHANNELS, SIDE, SIDE, device=device, dtype=dtype))
    y = four_d(torch.randn(1, CHANNELS, SIDE, SIDE, device=device, dtype=dtype))
    scale = torch.randn(1, CHANNELS, 1, 1, device=device, dtype=dtype)
    tokens = torch.randn(1, 16, 64, device=device, dtype=dtype)
    heads = torch.randn(1, 4, 16, 16, device=device, dtype=dtype)
    conv3, conv1 = module(nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1)), module(nn.Conv2d(CHANNELS, CHANNELS, 1))
    dw, grouped = module(nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1, groups=CHANNELS)), \
        module(nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1, groups=4))
    bn, linear = module(nn.BatchNorm2d(CHANNELS)), nn.Linear(64, 64).to(device=device, dtype=dtype)
    ln = nn.LayerNorm(64).to(device=device, dtype=dtype)
    table = {
        "conv3x3": lambda: conv3(x), "conv1x1": lambda: conv1(x), "conv3x3_depthwise": lambda: dw(x),
        "conv3x3_groups4": lambda: grouped(x), "batch_norm": lambda: bn(x), "relu": lambda: torch.relu(x),
        "add": lambda: x + y, "mul_broadcast": lambda: x * scale, "cat": lambda: torch.cat([x, y], 1),
        "max_pool": lambda: f.max_pool2d(x, 2), "upsample_nearest": lambda: f.interpolate(x, scale_factor=2.0),
        "adaptive_avg_pool": lambda: f.adaptive_avg_pool2d(x, 1),
        "linear": lambda: linear(tokens), "layer_norm": lambda: ln(tokens), "gelu": lambda: f.gelu(tokens),
        "softmax": lambda: tokens.softmax(-1), "sdpa": lambda: f.scaled_dot_product_attention(heads, heads, heads),
        "matmul": lambda: heads @ heads.transpose(-1, -2),
        "transpose_copy": lambda: tokens.transpose(1, 2).contiguous(),
        "view": lambda: tokens.view(1, 16, 8, 8), "permute": lambda: heads.permute(0, 2, 1, 3),
    }
    return table


def host_us(torch: Any, call: Callable[[], Any], device: str) -> tuple[float, float]:
    """(microseconds per call with ``CALLS`` calls back to back and a synchronize after them: the slower of the host
    and the GPU; the same before that synchronize: the host's issue time alone), the medians of ``REPS``."""
    for _ in range(20):
        call()
    done, issued = [], []
    for _ in range(REPS):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(CALLS):
            call()
        issued.append((time.perf_counter() - t0) * 1e6 / CALLS)
        if device == "cuda":
            torch.cuda.synchronize()
        done.append((time.perf_counter() - t0) * 1e6 / CALLS)
    return round(statistics.median(done), 2), round(statistics.median(issued), 2)


def kernels_per_call(torch: Any, calls: dict[str, Callable[[], Any]], reps: int = 10) -> dict[str, float]:
    """op -> kernels one call launches, from one profiler session for all of ``calls`` (a session per op would
    cost the profiler's start-up each time): each op runs ``reps`` times in a range of its own and the GPU is
    synchronized before the next op starts, so its kernels run in the window from its range's start to the next's."""
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for op, call in calls.items():
            with record_function(f"op::{op}"):
                for _ in range(reps):
                    call()
            torch.cuda.synchronize()
    events = prof.events()
    starts = sorted((e.time_range.start, e.name.removeprefix("op::")) for e in events if e.name.startswith("op::"))
    kernels = [e.time_range.start for e in events if str(e.device_type).rsplit(".", 1)[-1] == "CUDA"
               and "Memcpy" not in e.name and "Memset" not in e.name]
    out = {}
    for i, (start, op) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else float("inf")
        out[op] = sum(start <= k < end for k in kernels) / reps
    return out


def measure(device: str) -> dict:
    """This process's table: pace before and after, and per config and op the host us per call and kernels."""
    import torch

    from modelcost.bench.timing import host_pace_us, pinned_to_one_cpu

    torch.backends.cudnn.benchmark = True
    configs = {"fp32": (torch.float32, False), "fp16": (torch.float16, False),
               "fp16_channels_last": (torch.float16, True)}
    out: dict[str, Any] = {"pace_us": [host_pace_us()]}
    with pinned_to_one_cpu(device == "cuda") as cpu, torch.inference_mode():
        out["pinned_cpu"] = cpu
        for name, (dtype, channels_last) in configs.items():
            if device == "cpu" and dtype == torch.float16:
                continue  # the smoke run: CPU fp16 convs are not what this measures
            rows = out.setdefault("ops", {}).setdefault(name, {})
            timed: dict[str, Callable[[], Any]] = {}
            for op, call in ops(torch, device, dtype, channels_last).items():
                if channels_last and op in ("linear", "layer_norm", "gelu", "softmax", "sdpa", "matmul",
                                            "transpose_copy", "view", "permute"):
                    continue  # no 4-D activation: the same calls as fp16
                try:
                    per_call, issue = host_us(torch, call, device)
                    rows[op] = {"host_us": per_call, "issue_us": issue, "kernels": None}
                    timed[op] = call
                except Exception as exc:  # noqa: BLE001 - one op that fails is said, the rest measured
                    rows[op] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
            if device == "cuda" and timed:
                for op, kernels in kernels_per_call(torch, timed).items():
                    rows[op]["kernels"] = kernels
    out["pace_us"].append(host_pace_us())
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--processes", type=int, default=3, help="fresh processes that each measure the whole table")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.child:
        print(json.dumps(measure(args.device)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    processes = []
    for i in range(args.processes):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--child", "--device", args.device], capture_output=True,
                              text=True, timeout=300, check=False)
        if done.returncode != 0:
            processes.append({"error": done.stderr.strip().splitlines()[-1:] or ["no output"]})
        else:
            processes.append(json.loads(done.stdout.strip().splitlines()[-1]))
        row = processes[-1]
        print(f"process {i}: {time.perf_counter() - t0:.0f} s, pace {row.get('pace_us')}, eager conv3x3 fp32 / "
              f"fp16 / fp16-CL and linear fp32: "
              + " / ".join(str(row.get("ops", {}).get(c, {}).get(o, {}).get("host_us"))
                           for c, o in (("fp32", "conv3x3"), ("fp16", "conv3x3"), ("fp16_channels_last", "conv3x3"),
                                        ("fp32", "linear"))), flush=True)
    (args.out / "host_ops.json").write_text(json.dumps({"processes": processes}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
