"""The host's cost of an eager forward, per aten call (issue 28): ``Calibration.host_us``.

A batch-1 eager forward is issued by the host faster than the GPU runs it only for large layers; for the rest
the forward takes as long as the host takes to issue it. Pricing that per *layer* (schema 2's ``launch_us``)
charges a ResNet layer and a transformer layer alike, although a Llama decoder layer issues ~45 aten calls
and a conv + BN + ReLU three. So the host time is priced per aten call, in two kinds (core/eager_ops.py):
calls that launch a kernel, and calls that only make a view (reshape, transpose, t of a weight), which cost
host time and no GPU time.

Each calibration net (bench/calibrate_fusion.py's seven, at one sample: host-bound, the tiny Linear stack, and a
stack of view chains) is timed host-bound (CUDA events around one forward, the median of 30 after warm-up) and
its aten calls counted in one eager forward with the rule the static count uses, under ``no_grad`` as the
static count runs (under ``inference_mode`` view calls do not reach a dispatch mode), while the timing runs
under ``inference_mode`` as the benchmarks do. Then per family,
host time = kernel_op_us x kernel calls + view_op_us x view calls, fitted by non-negative least squares over the
nets. The calls are counted as the eager fp32 forward makes them for every family, because that is what the
static count sees: autocast's casts are in its per-call price.

A process on the lent VMs gets a host of its own pace (BENCHMARKS.md, issue 27), and one calibrating process drew
one twice as slow as the others (eager 30.6 us per call against 15.3 and 17.2 on two other machines, while the
benchmarks in the next process were not slower): every host-bound prediction took it. So the figures are measured
in ``HOST_PROCESSES`` processes, this one and fresh ones (``python -m modelcost.bench.calibrate_host``), and the
median of each is kept (``across_processes``); a child that fails is left out and said so.

The same processes time calibrate_fusion's host-bound net under every host-issued family but compile
(``TINY_FAMILIES``), and its median is what ``launch_us`` is priced from (``ProcessHost.tiny_us``). Timed in
calibrate's own process alone, ONNX Runtime's price per kernel read 7.8-19.3 us over 20 calibrations, and an H200
calibration whose own process was slow (eager 18.7 us per call against 11.6 and 11.8 in its children) priced it
at 12.1 us where the H100's read 8.1: the H200's eleventh set predicted ort-cuda at batch 1 40% slow, the H100's
transferred to the same cases 3% (benchmarks/results/device_2026-11-29).

Each process also takes its host's pace (bench.timing.host_pace_us, the loop the benchmarks time before and after
every GPU loop), once before and once after its measurements, and calibrate keeps every process's pace beside its
eager price (``Calibration.host_processes``): the pairs that can tell whether a process's price follows its pace.

Each process also times the extra host price of a conv or BatchNorm call in fp16, as torch-half issues it, over the
same call in fp32 (bench/calibrate_half.py says why: on an H100 a BatchNorm of fp16 weights cost the host 37.9 us per
call against 16.0, benchmarks/results/device_2026-12-04/hostops), and the median over the processes is kept
(``ProcessHost.half_us``, ``Calibration.half_call_us``).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelcost.bench.calibrate_fusion import (
    NETS,
    _net,
    _runner,
    child_failure,
    nonnegative_fit,
    time_tiny_nets,
    tiny_linear_net,
)
from modelcost.bench.calibrate_half import half_call_us, spread_note
from modelcost.bench.timing import CudaEventClock, host_pace_us, median_call_ms
from modelcost.core.calibration import HostCost, HostProcess
from modelcost.core.eager_ops import launches_kernel
from modelcost.core.text import first_line

HOST_NETS = (*NETS, "tiny-linear", "views")
FAMILIES = ("eager", "autocast")  # the host-issued families whose calls the static count sees one to one
# processes the host figures are measured in (module doc): three left the eager price 14.6 and 18.3 us in two
# calibrations of one H100 (processes of 12.1-21.2 us). Five kept 14.4 and 16.0 us on two H100 leases, and 21.6 on
# a third, where all five read 17.9-22.7 (a lease's pace, which no count of processes tells apart), and they
# cost 15-25 s each: with the window convs calibrate took 178.7 s against its 180 s bar
# (benchmarks/results/device_2026-12-01). Four keep the median of the middle two.
HOST_PROCESSES = 4
# the families whose host-bound net every process times (module doc); compile's is compiled in calibrate's alone
TINY_FAMILIES = ("eager", "autocast", "ort-cuda")
CHILD_TIMEOUT_S = 180.0


def views_net(torch: Any, device: str = "cuda") -> tuple[Any, Any]:
    """16 blocks of four view calls and one add: what a view costs the host, apart from a kernel."""
    nn = torch.nn

    class Views(nn.Module):
        def forward(self, x: Any) -> Any:
            b, s, d = x.shape
            y = x.view(b, s, 4, d // 4).transpose(1, 2).transpose(1, 2).reshape(b, s, d)
            return y + 1.0

    return nn.Sequential(*[Views() for _ in range(16)]).to(device).eval(), torch.randn(1, 64, 256, device=device)


def host_net(torch: Any, name: str, device: str = "cuda") -> tuple[Any, Any]:
    """A calibration net and its one-sample input (``HOST_NETS``)."""
    if name == "tiny-linear":
        return tiny_linear_net(torch, device)
    if name == "views":
        return views_net(torch, device)
    net, x = _net(torch, name, device)
    return net, x[:1]


def count_ops(torch: Any, fn: Callable[[], Any]) -> tuple[int, int]:
    """(kernel calls, view calls) of one call of ``fn``, sorted by core/eager_ops.py's rule."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    def keys(value: Any) -> list[int]:
        return [t.untyped_storage()._cdata for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]

    tally = [0, 0]

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            out = func(*args, **(kwargs or {}))
            tally[0 if launches_kernel(func._schema.is_mutable, keys((args, kwargs)), keys(out)) else 1] += 1
            return out

    with Count():
        fn()
    return tally[0], tally[1]


def host_us(torch: Any, fn: Callable[[], Any], runs: int = 30) -> float:
    """Microseconds of one host-bound call of ``fn`` (CUDA events, median of ``runs`` after 3 warm-ups)."""
    return median_call_ms(fn, CudaEventClock(torch).time_ms, runs, settle=torch.cuda.synchronize) * 1e3


def fit(rows: Sequence[tuple[int, int, float]]) -> tuple[float, float]:
    """(kernel_op_us, view_op_us): non-negative least squares of time = a x kernel calls + b x view calls over
    (kernel calls, view calls, time us) rows (``calibrate_fusion.nonnegative_fit``: a price the plain fit makes
    negative is 0, the other refitted alone)."""
    kernel_us, view_us = nonnegative_fit([[k, v] for k, v, _ in rows], [t for _, _, t in rows])
    return kernel_us, view_us


def host_nets(torch: Any) -> tuple[dict[str, tuple[Any, Any]], dict[str, tuple[int, int]]]:
    """(name -> (net, input), name -> (kernel calls, view calls)) of ``HOST_NETS``, the calls counted under
    ``no_grad``: the static count's mode (under inference_mode views skip the dispatch mode)."""
    with torch.no_grad():
        nets = {name: host_net(torch, name) for name in HOST_NETS}
        counts = {name: count_ops(torch, lambda n=net, x=x: n(x)) for name, (net, x) in nets.items()}
    return nets, counts


def price(torch: Any, family: str, nets: dict[str, tuple[Any, Any]],
          counts: dict[str, tuple[int, int]]) -> tuple[float, float, dict[str, float]]:
    """(kernel_op_us, view_op_us, name -> host us of one forward) of ``family``: ``host_nets`` timed under
    ``inference_mode`` (how the benchmark runs them) and ``fit`` over their counted calls. Also what
    benchmarks/host_pinning_diag.py and profiler_host_diag.py measure, so they measure what calibrate does."""
    with torch.inference_mode():
        times = {name: host_us(torch, _runner(torch, family, net, x, "")) for name, (net, x) in nets.items()}
    kernel_us, view_us = fit([(*counts[name], t) for name, t in times.items()])
    return kernel_us, view_us, times


def learn_host_cost(torch: Any, progress: Callable[[str], None]) -> tuple[dict[str, HostCost], list[str]]:
    """(family -> HostCost, notes on families that could not be measured)."""
    found: dict[str, HostCost] = {}
    notes: list[str] = []
    progress("host cost per aten call, eager and autocast")
    try:
        nets, counts = host_nets(torch)
        for family in FAMILIES:
            kernel_us, view_us, _ = price(torch, family, nets, counts)
            found[family] = HostCost(round(kernel_us, 3), round(view_us, 3), HOST_NETS)
    except Exception as exc:  # noqa: BLE001 - the predictor falls back to launch_us; the reason is kept
        notes.append(f"host cost: not calibrated ({first_line(exc, 200)})")
    with contextlib.suppress(Exception):
        torch.cuda.empty_cache()
    return found, notes


@dataclass
class ProcessHost:
    """What one process measured of its host: the price per aten call by family (``learn_host_cost``), one
    forward of the host-bound net by family, in us (``tiny_net_times``), its host's pace (``pace_us``: the mean
    of ``host_pace_us`` before and after), and the extra us of a call of each half-priced class in fp16
    (``half_us``: bench/calibrate_half.py). From ``across_processes``: the medians, and ``processes`` each measuring
    process's pace and eager price."""

    cost: dict[str, HostCost] = field(default_factory=dict)
    tiny_us: dict[str, float] = field(default_factory=dict)
    pace_us: float | None = None
    processes: tuple[HostProcess, ...] = ()
    half_us: dict[str, float] = field(default_factory=dict)

    def as_process(self) -> HostProcess | None:
        """This process's pace and eager price; None without a pace."""
        if self.pace_us is None:
            return None
        eager = self.cost.get("eager")
        return HostProcess(self.pace_us, eager.kernel_op_us if eager else None)


def tiny_net_times(torch: Any) -> dict[str, float]:
    """family -> host us of one forward of calibrate_fusion's host-bound net, for each of ``TINY_FAMILIES`` this
    process can run (a family that cannot, ort-cuda without onnxruntime-gpu, is left out: ``learn_fusion`` times
    it again in calibrate's process and says why)."""
    return time_tiny_nets(torch, TINY_FAMILIES)[0]


def measure_process(torch: Any, progress: Callable[[str], None]) -> tuple[ProcessHost, list[str]]:
    """(this process's ``ProcessHost``, notes on what it could not measure)."""
    before = host_pace_us()
    cost, notes = learn_host_cost(torch, progress)
    tiny = tiny_net_times(torch)
    half, half_notes = learn_half_calls(torch, progress)
    return ProcessHost(cost, tiny, round((before + host_pace_us()) / 2, 1), half_us=half), notes + half_notes


def learn_half_calls(torch: Any, progress: Callable[[str], None]) -> tuple[dict[str, float], list[str]]:
    """(class -> extra host us per fp16 call, notes): bench/calibrate_half.py's stage, timed as this module times
    its nets (``host_us``); nothing and a note where it fails as a whole."""
    progress("host price of half-precision calls")
    try:
        return half_call_us(torch, lambda fn: host_us(torch, fn))
    except Exception as exc:  # noqa: BLE001 - torch-half is then priced at eager fp32's price per call; said
        return {}, [f"half-precision calls: not calibrated ({first_line(exc, 200)})"]


def median_host_cost(measured: Sequence[dict[str, HostCost]]) -> dict[str, HostCost]:
    """Per family, the median kernel_op_us and view_op_us over the processes that measured it."""
    out = {}
    for family in dict.fromkeys(f for found in measured for f in found):
        costs = [found[family] for found in measured if family in found]
        out[family] = HostCost(round(statistics.median(c.kernel_op_us for c in costs), 3),
                               round(statistics.median(c.view_op_us for c in costs), 3), costs[0].learned_from)
    return out


def run_child() -> ProcessHost:
    """``measure_process`` in a fresh process (``python -m modelcost.bench.calibrate_host``) on the same GPU."""
    done = subprocess.run([sys.executable, "-m", "modelcost.bench.calibrate_host"], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=True)
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    cost = {f: HostCost(float(v["kernel_op_us"]), float(v["view_op_us"]), HOST_NETS) for f, v in doc["cost"].items()}
    pace = doc.get("pace_us")
    return ProcessHost(cost, {f: float(us) for f, us in doc["tiny_us"].items()}, None if pace is None else float(pace),
                       half_us={c: float(us) for c, us in doc.get("half_us", {}).items()})


def across_processes(here: ProcessHost, child: Callable[[], ProcessHost] = run_child,
                     processes: int = HOST_PROCESSES) -> tuple[ProcessHost, list[str]]:
    """(the median over this process's figures ``here`` and ``processes`` - 1 fresh ones, of the host cost and of
    the host-bound net's time, family by family; notes: each process's eager price and ort-cuda net, and any
    child that failed)."""
    measured, notes = [here], []
    for _ in range(processes - 1):
        try:
            measured.append(child())
        except Exception as exc:  # noqa: BLE001 - a failed child is left out, and said so
            notes.append(f"host cost: a child process failed ({child_failure(exc)})")
    costs = [m.cost for m in measured if m.cost]
    eager = [f"{c['eager'].kernel_op_us:.1f}" for c in costs if "eager" in c]
    if costs:
        notes.append(f"host cost per aten call (eager): {' / '.join(eager)} us in {len(costs)} processes, the "
                     "median kept")
    ort = [f"{m.tiny_us['ort-cuda']:.0f}" for m in measured if "ort-cuda" in m.tiny_us]
    if ort:
        notes.append(f"host-bound net under ort-cuda: {' / '.join(ort)} us in {len(ort)} processes, the median "
                     "kept")
    processes = tuple(p for p in (m.as_process() for m in measured) if p is not None)
    if processes:
        notes.append(f"host pace: {' / '.join(f'{p.pace_us:,.0f}' for p in processes)} us in {len(processes)} "
                     "processes (bench.timing.host_pace_us's loop)")
    half = spread_note([m.half_us for m in measured if m.half_us])
    if half:
        notes.append(half)
    paces = [p.pace_us for p in processes]
    return ProcessHost(median_host_cost(costs), median_times([m.tiny_us for m in measured]),
                       statistics.median(paces) if paces else None, processes,
                       median_times([m.half_us for m in measured])), notes


def median_times(measured: Sequence[dict[str, float]]) -> dict[str, float]:
    """Per family, the median over the processes that timed it."""
    families = dict.fromkeys(f for times in measured for f in times)
    return {f: statistics.median(times[f] for times in measured if f in times) for f in families}


def main() -> int:
    """Print this process's ``ProcessHost`` as one JSON line (a child of ``across_processes``)."""
    import torch

    if not torch.cuda.is_available():
        print("calibrate_host: no CUDA GPU", file=sys.stderr)
        return 1
    found, notes = measure_process(torch, lambda what: None)
    if not found.cost and not found.tiny_us and not found.half_us:
        print("; ".join(notes) or "calibrate_host: nothing measured", file=sys.stderr)
        return 1
    print(json.dumps({"cost": {f: {"kernel_op_us": c.kernel_op_us, "view_op_us": c.view_op_us}
                               for f, c in found.cost.items()}, "tiny_us": found.tiny_us, "pace_us": found.pace_us,
                      "half_us": found.half_us}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
