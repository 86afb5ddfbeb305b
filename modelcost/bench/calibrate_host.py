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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from modelcost.bench.calibrate_fusion import NETS, _net, _runner, nonnegative_fit, tiny_linear_net
from modelcost.bench.timing import CudaEventClock, median_call_ms
from modelcost.core.calibration import HostCost
from modelcost.core.eager_ops import launches_kernel

HOST_NETS = (*NETS, "tiny-linear", "views")
FAMILIES = ("eager", "autocast")  # the host-issued families whose calls the static count sees one to one


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


def learn_host_cost(torch: Any, progress: Callable[[str], None]) -> tuple[dict[str, HostCost], list[str]]:
    """(family -> HostCost, notes on families that could not be measured)."""
    found: dict[str, HostCost] = {}
    notes: list[str] = []
    progress("host cost per aten call, eager and autocast")
    try:
        with torch.no_grad():  # the static count's mode: under inference_mode views skip the dispatch mode
            nets = {name: host_net(torch, name) for name in HOST_NETS}
            counts = {name: count_ops(torch, lambda n=net, x=x: n(x)) for name, (net, x) in nets.items()}
        with torch.inference_mode():  # how the benchmark runs them
            for family in FAMILIES:
                rows = [(*counts[name], host_us(torch, _runner(torch, family, net, x, ""))) for name, (net, x)
                        in nets.items()]
                kernel_us, view_us = fit(rows)
                found[family] = HostCost(round(kernel_us, 3), round(view_us, 3), HOST_NETS)
    except Exception as exc:  # noqa: BLE001 - the predictor falls back to launch_us; the reason is kept
        notes.append(f"host cost: not calibrated ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    with contextlib.suppress(Exception):
        torch.cuda.empty_cache()
    return found, notes
