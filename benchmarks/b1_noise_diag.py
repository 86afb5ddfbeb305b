"""Where does the between-process noise of a launch-bound GPU figure come from? (issue 27)

ResNet-50 eager fp32 batch 1 is timed in many fresh processes, interleaved, under different CPU placements:

    free     no pinning at all
    late     pinned to the highest CPU after CUDA is initialised (what ``bench.timing.pinned_to_one_cpu`` does)
    early    the whole process started on one CPU (``taskset -c N``) before CUDA is initialised
    numa     the process started on the CPUs of the GPU's NUMA node (when the machine has more than one)
    mc       ``modelcost.api.run_benchmarks`` as a sweep child calls it (its own warm-up, pinning and clock)

Each process prints one JSON line: its p50 / p10 / p90 (CUDA events around each call, after a 1.5 s warm-up),
the CPU its main thread ran on when CUDA was initialised and that CPU's NUMA node, and the mean SM clock (NVML)
while it was timed. The driver prints the machine's topology first, then a table per mode.

    bash .device/on-device.sh python3 benchmarks/b1_noise_diag.py run [ROUNDS]

``probes [PROCESSES]`` asks which probe tells a slow process from its own first milliseconds: each fresh process
takes four host probes (a pure-Python loop, the launch of a tiny CUDA kernel through torch, a pointer chase over
64 MiB, a 256 MiB memcpy) before and after timing ResNet-50 eager fp32 batch 1 (torch, CUDA events) and
MobileNet-V2 fp32 batch 1 under ONNX Runtime's CUDA provider (host-timed ``run``), pinned as modelcost pins; the
driver prints each process and the rank correlation of every probe with each figure.

    bash .device/on-device.sh python3 benchmarks/b1_noise_diag.py probes [PROCESSES]
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu_now() -> int:
    return ctypes.CDLL("libc.so.6").sched_getcpu()


def _node_of(cpu: int) -> int:
    for p in Path(f"/sys/devices/system/cpu/cpu{cpu}").glob("node*"):
        return int(p.name[4:])
    return 0


def _pin_all_threads(cpu: int) -> None:
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {cpu})
        except OSError:
            pass


def _steal_ticks() -> dict[str, int]:
    """Per-CPU steal ticks (/proc/stat, 8th value): time the hypervisor ran something else on this vCPU."""
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu"):
            parts = line.split()
            out[parts[0]] = int(parts[8]) if len(parts) > 8 else 0
    return out


def _cpu_probe_us() -> float:
    """The host's pace: the best of 5 runs of a fixed pure-Python loop (microseconds): bench.timing.host_pace_us,
    the figure every GPU config records, over 200,000 additions."""
    sys.path.insert(0, str(ROOT))
    from modelcost.bench.timing import host_pace_us

    return host_pace_us(5, 200_000)


def _event_times_ms(torch, fn, calls: int) -> list[float]:
    """CUDA-event time of each of ``calls`` calls of ``fn``, each waited for before the next (modelcost's own
    clock, bench.timing.CudaEventClock)."""
    from modelcost.bench.timing import CudaEventClock

    clock = CudaEventClock(torch)
    return [clock.time_ms(fn) for _ in range(calls)]


def _child_row(cmd: list[str], label: object) -> dict | None:
    """The last JSON line a child run of this script printed; None (``label`` and its stderr printed) when it printed
    none."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    line = next((x for x in reversed(out.stdout.splitlines()) if x.startswith("{")), None)
    if line is None:
        print(label, "failed:", out.stderr[-800:])
        return None
    return json.loads(line)


def _launch_probe_us(torch) -> float:
    """Host microseconds per launch of a tiny kernel (median of 5 loops of 500 launches)."""
    x = torch.zeros(1, device="cuda")
    laps = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(500):
            x.add_(1)
        laps.append((time.perf_counter() - t0) / 500 * 1e6)
        torch.cuda.synchronize()
    return statistics.median(laps)


def _clock_sampler(stop: threading.Event, out: list[float]) -> None:
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        while not stop.is_set():
            out.append(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
            time.sleep(0.02)
    except Exception:  # noqa: BLE001 - no NVML: no clock figure
        return


def one(mode: str) -> None:
    sys.path.insert(0, str(ROOT))
    import torch

    if mode == "mc":
        from modelcost import api
        from modelcost.bench.base import BenchConfig

        t0 = time.perf_counter()
        torch.cuda.init()
        cpu = _cpu_now()
        cfg = BenchConfig(warmup=5, min_time_s=0.3, min_iters=30, max_time_s=2.0, e2e_min_iters=5, e2e_max_s=0.3,
                          device="cuda")
        results, _ = api.run_benchmarks("zoo:resnet50", backends=["torch-eager"], precisions=["fp32"],
                                        batch_sizes=[1], config=cfg)
        lat = results[0].latency_ms
        print(json.dumps({"mode": mode, "p50": lat.p50, "p10": None, "p90": lat.p90, "cpu": cpu,
                          "node": _node_of(cpu), "sm_mhz": None, "s": round(time.perf_counter() - t0, 1)}))
        return
    from modelcost.loaders.zoo import ZOO

    torch.cuda.init()
    torch.zeros(1, device="cuda")
    cpu = _cpu_now()
    model = ZOO["resnet50"].factory().eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    if mode == "late":
        _pin_all_threads(max(os.sched_getaffinity(0)))
    probe_before = (_cpu_probe_us(), _launch_probe_us(torch))
    steal0 = _steal_ticks()
    with torch.inference_mode():
        end = time.perf_counter() + 1.5
        while time.perf_counter() < end:
            model(x)
        torch.cuda.synchronize()
        clocks: list[float] = []
        stop = threading.Event()
        sampler = threading.Thread(target=_clock_sampler, args=(stop, clocks), daemon=True)
        sampler.start()
        times = _event_times_ms(torch, lambda: model(x), 400)
        stop.set()
    steal1 = _steal_ticks()
    probe_after = (_cpu_probe_us(), _launch_probe_us(torch))
    where = _cpu_now()
    times.sort()
    q = statistics.quantiles(times, n=10)
    print(json.dumps({"mode": mode, "p50": statistics.median(times), "p10": q[0], "p90": q[-1], "cpu": cpu,
                      "node": _node_of(cpu), "sm_mhz": round(statistics.mean(clocks)) if clocks else None,
                      "cpu_probe_us": [round(probe_before[0]), round(probe_after[0])],
                      "launch_us": [round(probe_before[1], 2), round(probe_after[1], 2)], "timed_on": where,
                      "steal_here": steal1.get(f"cpu{where}", 0) - steal0.get(f"cpu{where}", 0),
                      "steal_all": steal1["cpu"] - steal0["cpu"]}))


_CHASE: dict[int, list[int]] = {}


def _chase_ns(mib: int = 64) -> float:
    """Memory latency: ns per step of a pointer chase over a random cycle of ``mib`` MiB (numpy-built, 2^20 steps)."""
    import numpy as np

    if mib not in _CHASE:
        n = mib * 1024 * 1024 // 8
        order = np.random.default_rng(0).permutation(n)
        nxt = np.empty(n, dtype=np.int64)
        nxt[order] = np.roll(order, -1)
        _CHASE[mib] = nxt.tolist()  # a Python list: each step is a dependent load
    lst = _CHASE[mib]
    steps, i = 1 << 20, 0
    t0 = time.perf_counter()
    for _ in range(steps):
        i = lst[i]
    return (time.perf_counter() - t0) / steps * 1e9


def _memcpy_gbs(mib: int = 256) -> float:
    import numpy as np

    a = np.ones(mib * 1024 * 1024 // 8)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return a.nbytes / best / 1e9


def _all_probes(torch) -> dict:
    return {"py_us": round(_cpu_probe_us()), "launch_us": round(_launch_probe_us(torch), 2),
            "chase_ns": round(_chase_ns(), 1), "memcpy_gbs": round(_memcpy_gbs(), 2)}


def one_probes(onnx_path: str) -> None:
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import onnxruntime as ort
    import torch

    from modelcost.bench.timing import pinned_to_one_cpu
    from modelcost.loaders.zoo import ZOO

    torch.cuda.init()
    torch.zeros(1, device="cuda")
    model = ZOO["resnet50"].factory().eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    sess = ort.InferenceSession(onnx_path, providers=["CUDAExecutionProvider"])
    feed = {sess.get_inputs()[0].name: np.random.rand(1, 3, 224, 224).astype(np.float32)}
    with pinned_to_one_cpu(True) as cpu:
        before = _all_probes(torch)
        with torch.inference_mode():
            end = time.perf_counter() + 1.0
            while time.perf_counter() < end:
                model(x)
            torch.cuda.synchronize()
            times = _event_times_ms(torch, lambda: model(x), 300)
        end = time.perf_counter() + 1.0
        while time.perf_counter() < end:
            sess.run(None, feed)
        ort_ms = []
        for _ in range(300):
            t0 = time.perf_counter()
            sess.run(None, feed)
            ort_ms.append((time.perf_counter() - t0) * 1e3)
        after = _all_probes(torch)
    print(json.dumps({"cpu": cpu, "eager_p50": statistics.median(times), "ort_p50": statistics.median(ort_ms),
                      "before": before, "after": after}))


def _spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0.0] * len(v)
        for k, i in enumerate(order):
            r[i] = float(k)
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else float("nan")


def run_probes(processes: int) -> None:
    sys.path.insert(0, str(ROOT))
    import torch

    from modelcost.loaders.zoo import ZOO

    onnx_path = "/tmp/b1_probe_mobilenet_v2.onnx"
    if not Path(onnx_path).exists():
        torch.onnx.export(ZOO["mobilenet_v2"].factory().eval(), (torch.randn(1, 3, 224, 224),), onnx_path,
                          dynamo=False, opset_version=17)
    rows = []
    t_start = time.perf_counter()
    for k in range(processes):
        row = _child_row([sys.executable, __file__, "one-probes", onnx_path], k)
        if row is None:
            continue
        rows.append(row)
        print(f"{k:3d} {time.perf_counter() - t_start:6.0f}s cpu {row['cpu']} eager {row['eager_p50']:.3f} ms  "
              f"ort {row['ort_p50']:.3f} ms  before {row['before']}  after {row['after']}", flush=True)
    if len(rows) < 4:
        return
    print("\nrank correlation (Spearman) of each probe with each figure, over", len(rows), "processes")
    for when in ("before", "after"):
        for probe in ("py_us", "launch_us", "chase_ns", "memcpy_gbs"):
            xs = [r[when][probe] for r in rows]
            print(f"{when:6s} {probe:10s} eager {_spearman(xs, [r['eager_p50'] for r in rows]):+.2f}  "
                  f"ort {_spearman(xs, [r['ort_p50'] for r in rows]):+.2f}")
    print(f"eager vs ort: {_spearman([r['eager_p50'] for r in rows], [r['ort_p50'] for r in rows]):+.2f}")


def topology() -> dict:
    cpus = sorted(os.sched_getaffinity(0))
    nodes = sorted({_node_of(c) for c in cpus})
    for cmd in (["lscpu"], ["nvidia-smi", "topo", "-m"], ["nvidia-smi", "-q", "-d", "CLOCK,PERFORMANCE"]):
        try:
            print(subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout[-3000:])
        except Exception as exc:  # noqa: BLE001
            print(cmd[0], "failed:", exc)
    local = []
    for p in Path("/sys/bus/pci/drivers/nvidia").glob("0000:*/local_cpulist"):
        local.append(p.read_text().strip())
        print("GPU", p.parent.name, "local CPUs", local[-1])
    print("CPUs", cpus, "NUMA nodes", nodes)
    return {"cpus": cpus, "nodes": nodes, "local": local}


def run(rounds: int) -> None:
    topo = topology()
    top = max(topo["cpus"])
    modes = {"free": [], "late": [], "early": ["taskset", "-c", str(top)]}
    if len(topo["nodes"]) > 1 and topo["local"]:
        modes["numa"] = ["taskset", "-c", topo["local"][0]]
    rows: dict[str, list[dict]] = {m: [] for m in modes}
    for r in range(rounds):
        for mode, prefix in modes.items():
            arg = "free" if mode in ("early", "early0", "numa") else mode
            row = _child_row([*prefix, sys.executable, __file__, "one", arg], mode)
            if row is None:
                continue
            rows[mode].append(row)
            print(f"round {r} {mode:6s} p50 {row['p50']:.3f} ms  p90 {row['p90']:.3f}  cpu {row['cpu']:>2}->"
                  f"{row.get('timed_on')}  sm {row['sm_mhz']}  cpu probe {row.get('cpu_probe_us')} us  launch "
                  f"{row.get('launch_us')} us  steal here {row.get('steal_here')} all {row.get('steal_all')}",
                  flush=True)
    print("\nmode    runs  p50 min / median / max (ms)   max/min-1")
    for mode, rs in rows.items():
        p = sorted(x["p50"] for x in rs)
        if p:
            print(f"{mode:6s} {len(p):5d}  {p[0]:.3f} / {statistics.median(p):.3f} / {p[-1]:.3f}   "
                  f"{p[-1] / p[0] - 1:.1%}")


if __name__ == "__main__":
    if sys.argv[1] == "one":
        one(sys.argv[2])
    elif sys.argv[1] == "one-probes":
        one_probes(sys.argv[2])
    elif sys.argv[1] == "probes":
        run_probes(int(sys.argv[2]) if len(sys.argv) > 2 else 30)
    else:
        run(int(sys.argv[2]) if len(sys.argv) > 2 else 4)
