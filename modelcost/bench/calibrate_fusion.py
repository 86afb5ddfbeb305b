"""Fusion per backend family, learned from profiles: how many kernels one layer of each kind becomes, and the
host time per kernel (``launch_us``), for eager fp32, autocast fp16, torch.compile fp16 and ONNX Runtime CUDA.

Seven small calibration nets (``NETS``), each a stack of 4 blocks of one pattern whose layer kinds are known by
construction (a linear stack, linear + GELU, linear + residual add + LayerNorm, conv, conv + BN + ReLU, an
attention block with SDPA, an embedding + linear). Each runs under each family inside ``torch.profiler``;
the CUDA kernels of one forward are counted (copies and memsets left out), and the kernels per layer kind are
the non-negative least-squares fit of counts = layers of each kind x kernels per layer. The nets are none of
the architectures benchmarks/predict_validate.py holds out.

``launch_us``: one forward of a net of 32 tiny blocks (Linear 8x8 + ReLU), host-bound by construction, timed
with the CUDA-event clock, over the kernels it ran. The time is the median over calibrate's host processes
(bench/calibrate_host.py's ``across_processes``) where they timed the family, else this process's.

Every kernel count is profiled in a fresh process (``python -m modelcost.bench.calibrate_fusion``), never in
calibrate's own: one torch.profiler session leaves its process's later kernel launches about 1.5x slower on an
H100 (eager price per aten call 17.3-18.3 us before one, 26-30 us after: benchmarks/profiler_host_diag.py,
benchmarks/results/device_2026-11-26j). So the host prices calibrate measures here and after (``launch_us``,
bench/calibrate_host.py, bench/calibrate_ort.py) are those of a process that has not profiled, as the
benchmarks' own processes have not.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modelcost.bench.timing import CudaEventClock
from modelcost.core.calibration import FAMILIES, KINDS, Fusion
from modelcost.core.text import first_line

BLOCKS = 4
COUNT_TIMEOUT_S = 600  # the kernel-count child: torch.compile and ONNX export of the nets under four families
# name -> layers of each kind in one block
NETS: dict[str, dict[str, int]] = {
    "linear": {"gemm": 1},
    "mlp": {"gemm": 1, "elementwise": 1},
    "residual-ln": {"gemm": 1, "elementwise": 1, "norm": 1},
    "conv": {"conv": 1},
    "conv-bn-relu": {"conv": 1, "norm": 1, "elementwise": 1},
    "attention": {"gemm": 2, "attention": 1},
    "embedding": {"lookup": 1, "gemm": 1},
}


def residual_block(torch: Any, width: int) -> Any:
    """Linear + residual add + LayerNorm over ``width`` features."""
    nn = torch.nn

    class Residual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc, self.norm = nn.Linear(width, width), nn.LayerNorm(width)

        def forward(self, x: Any) -> Any:
            return self.norm(x + self.fc(x))

    return Residual()


def attention_block(torch: Any, width: int, heads: int) -> Any:
    """One QKV projection, SDPA over ``heads`` heads, one output projection."""
    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv, self.out = nn.Linear(width, 3 * width), nn.Linear(width, width)

        def forward(self, x: Any) -> Any:
            b, s, _ = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
            return self.out(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, s, width))

    return Attention()


def _block(torch: Any, name: str) -> Any:
    nn = torch.nn

    class Embed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.fc = nn.Embedding(1000, 256), nn.Linear(256, 256)

        def forward(self, ids: Any) -> Any:
            return self.fc(self.emb(ids))

    return {
        "linear": lambda: nn.Linear(256, 256),
        "mlp": lambda: nn.Sequential(nn.Linear(256, 256), nn.GELU()),
        "residual-ln": lambda: residual_block(torch, 256),
        "conv": lambda: nn.Conv2d(32, 32, 3, padding=1),
        "conv-bn-relu": lambda: nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU()),
        "attention": lambda: attention_block(torch, 256, 4),
        "embedding": Embed,
    }[name]()


def _net(torch: Any, name: str, device: str = "cuda") -> tuple[Any, Any]:
    """(the net: BLOCKS blocks in sequence, or BLOCKS embeddings side by side summed, an input for it)."""
    nn = torch.nn
    if name == "embedding":
        class Many(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.parts = nn.ModuleList(_block(torch, name) for _ in range(BLOCKS))

            def forward(self, ids: Any) -> Any:
                return [p(ids) for p in self.parts]

        return Many().to(device).eval(), torch.randint(0, 1000, (8, 64), device=device)
    net = nn.Sequential(*[_block(torch, name) for _ in range(BLOCKS)]).to(device).eval()
    x = torch.randn(8, 32, 28, 28) if name.startswith("conv") else torch.randn(8, 64, 256)
    return net, x.to(device)


def kernel_names(torch: Any, fn: Callable[[], Any], runs: int = 3) -> list[str]:
    """The CUDA kernels ``runs`` calls of ``fn`` launch (copies and memsets left out), by name, from torch.profiler
    after two unprofiled calls."""
    from torch.autograd import DeviceType

    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == DeviceType.CUDA]
    return [n for n in names if not n.lower().startswith(("memcpy", "memset"))]


def count_kernels(torch: Any, fn: Callable[[], Any], runs: int = 3) -> float:
    """CUDA kernels one call of ``fn`` launches (copies and memsets left out), from torch.profiler."""
    return len(kernel_names(torch, fn, runs)) / runs


def _runner(torch: Any, family: str, net: Any, x: Any, tmp: str) -> Callable[[], Any]:
    """One forward of ``net`` under ``family``."""
    if family == "eager":
        return lambda: net(x)
    if family == "autocast":
        def run() -> Any:
            with torch.autocast("cuda", dtype=torch.float16):
                return net(x)
        return run
    if family == "compile":
        xx = x.half() if x.is_floating_point() else x  # token ids stay integers
        compiled = torch.compile(net.half())
        return lambda: compiled(xx)
    return _ort_runner(torch, net, x, tmp)


def _ort_runner(torch: Any, net: Any, x: Any, tmp: str, options: Any = None) -> Callable[[], Any]:
    """One forward of ``net`` exported to ONNX and run by ONNX Runtime's CUDA provider on ``x`` in place
    (``options``: the session's SessionOptions, default ONNX Runtime's own)."""
    import onnxruntime as ort

    path = os.path.join(tmp, f"net{id(net)}.onnx")
    try:
        torch.onnx.export(net, (x,), path, dynamo=False)
    except TypeError:
        torch.onnx.export(net, (x,), path)
    sess = ort.InferenceSession(path, options, providers=["CUDAExecutionProvider"])
    if "CUDAExecutionProvider" not in sess.get_providers():
        raise RuntimeError("onnxruntime has no CUDA execution provider here")
    binding = sess.io_binding()
    binding.bind_input(sess.get_inputs()[0].name, "cuda", 0, _np_dtype(x), list(x.shape), x.data_ptr())
    for out in sess.get_outputs():
        binding.bind_output(out.name, "cuda")
    return lambda: sess.run_with_iobinding(binding)


def _np_dtype(x: Any) -> Any:
    import numpy as np

    return np.int64 if not x.is_floating_point() else np.float32


def _fit(counts: dict[str, float]) -> dict[str, float]:
    """Kernels per layer kind: non-negative least squares of counts[net] = sum over kinds of layers x f."""
    nets = list(counts)
    a = [[NETS[n].get(k, 0) * BLOCKS for k in KINDS] for n in nets]
    f = nonnegative_fit(a, [counts[n] for n in nets])
    return {k: round(v, 3) for i, (k, v) in enumerate(zip(KINDS, f, strict=True)) if any(row[i] for row in a)}


def nonnegative_fit(a: Sequence[Sequence[float]], b: Sequence[float]) -> list[float]:
    """Least squares of a x = b with x >= 0, the small active-set way: the columns the fit makes negative are
    dropped (set to 0) and the others refitted, until none is negative. Shared by the fusion fit and the host cost
    fit (bench/calibrate_host.py)."""
    import numpy as np

    m, y = np.array(a, dtype=float), np.array(b, dtype=float)
    free = list(range(m.shape[1]))
    x = np.zeros(m.shape[1])
    while free:
        sol, *_ = np.linalg.lstsq(m[:, free], y, rcond=None)
        if (sol >= 0).all():
            x[free] = sol
            break
        free = [i for i, v in zip(free, sol, strict=True) if v >= 0]
    return [float(v) for v in x]


def tiny_linear_net(torch: Any, device: str = "cuda") -> tuple[Any, Any]:
    """A host-bound net by construction: 32 x (Linear 8x8 + ReLU) on one row."""
    nn = torch.nn
    net = nn.Sequential(*[m for _ in range(32) for m in (nn.Linear(8, 8), nn.ReLU())]).to(device).eval()
    return net, torch.randn(1, 8, device=device)


def tiny_net_us(torch: Any, family: str, tmp: str) -> float:
    """Host microseconds of one forward of the host-bound net (32 x Linear 8x8 + ReLU) under ``family``: the
    median of 30, CUDA-event clock."""
    net, x = tiny_linear_net(torch)
    fn = _runner(torch, family, net, x, tmp)
    for _ in range(3):
        fn()
    clock = CudaEventClock(torch)
    times = sorted(clock.time_ms(fn) for _ in range(30))
    return times[len(times) // 2] * 1e3


def time_tiny_nets(torch: Any, families: Sequence[str], progress: Callable[[str], None] = lambda what: None,
                   ) -> tuple[dict[str, float], list[str]]:
    """(family -> ``tiny_net_us`` for each of ``families`` this process can run, notes on those that cannot);
    shared by ``learn_fusion`` and bench/calibrate_host.py's processes."""
    times: dict[str, float] = {}
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="modelcost-calibrate-") as tmp, torch.inference_mode():
        for family in families:
            progress(f"launch cost, {family}")
            try:
                times[family] = tiny_net_us(torch, family, tmp)
            except Exception as exc:  # noqa: BLE001 - a family that cannot run here is left out, said why
                notes.append(f"{family}: not calibrated ({first_line(exc, 200)})")
            with contextlib.suppress(Exception):
                torch._dynamo.reset()
    return times, notes


def kernel_counts(torch: Any, family: str, tmp: str) -> dict[str, float]:
    """Kernels of one forward of each of ``NETS`` and of the host-bound net (key "tiny") under ``family``. It
    profiles: run it in a process whose later launches do not matter (``main``)."""
    counts = {}
    for name in NETS:
        # each net compiled afresh: a recompile of nn.Sequential's forward for another net's input shape
        # compiles it with dynamic shapes, and the conv net that came fourth ran 20 kernels for 4 convs where,
        # compiled alone, it runs 13 (H100, torch 2.11), as a model compiled for one batch does
        with contextlib.suppress(Exception):
            torch._dynamo.reset()
        net, x = _net(torch, name)
        counts[name] = count_kernels(torch, _runner(torch, family, net, x, tmp))
    net, x = tiny_linear_net(torch)
    counts["tiny"] = count_kernels(torch, _runner(torch, family, net, x, tmp))
    return counts


def counts_in_child() -> dict[str, dict[str, Any]]:
    """``main``'s family -> {"counts": net -> kernels} or {"error": why}, from a fresh process on the same GPU."""
    done = subprocess.run([sys.executable, "-m", "modelcost.bench.calibrate_fusion"], capture_output=True, text=True,
                          timeout=COUNT_TIMEOUT_S, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def child_failure(exc: BaseException) -> str:
    """'TypeName: why' of a failed child process: the last line of its stderr where it has one (a timeout keeps
    raw bytes), else the exception's own message; shared with bench/calibrate_host.py's children."""
    err = getattr(exc, "stderr", None) or ""
    err = err.decode(errors="replace") if isinstance(err, bytes) else err
    why = err.strip().splitlines()[-1] if err.strip() else str(exc)
    return f"{type(exc).__name__}: {why[:200]}"


def learn_fusion(torch: Any, progress: Callable[[str], None],
                 counter: Callable[[], dict[str, dict[str, Any]]] = counts_in_child,
                 tiny_us: Mapping[str, float] | None = None,
                 ) -> tuple[dict[str, Fusion], dict[str, float], list[str]]:
    """(family -> Fusion, family -> launch_us, notes on families that could not be measured). The host-bound
    net's time is ``tiny_us``'s (the median over processes) where it has the family, else timed here; the kernel
    counts come from ``counter`` (a fresh process: see the module's note)."""
    host_us: dict[str, float] = dict(tiny_us or {})
    timed, notes = time_tiny_nets(torch, [f for f in FAMILIES if f not in host_us], progress)
    host_us.update(timed)
    progress("fusion: kernel counts, in a fresh process")
    try:
        counted = counter()
    except Exception as exc:  # noqa: BLE001 - no fusion at all; the reason is kept
        return {}, {}, [*notes, f"fusion: the kernel-count process failed ({child_failure(exc)})"]
    return (*fusion_and_launch(host_us, counted, notes), notes)


def fusion_and_launch(host_us: dict[str, float], counted: dict[str, dict[str, Any]],
                      notes: list[str]) -> tuple[dict[str, Fusion], dict[str, float]]:
    """(family -> Fusion, family -> launch_us) of the families both timed (``host_us``) and counted
    (``counted``); a family timed but counted with an error gets a note in ``notes`` (one that could not be timed
    has its note already)."""
    fusion: dict[str, Fusion] = {}
    launch: dict[str, float] = {}
    for family, doc in counted.items():
        if family not in host_us:
            continue
        if "error" in doc:
            notes.append(f"{family}: not calibrated ({doc['error']})")
            continue
        counts = {name: float(doc["counts"][name]) for name in NETS}
        fusion[family] = Fusion(family, _fit(counts), tuple(NETS))
        launch[family] = host_us[family] / max(float(doc["counts"]["tiny"]), 1.0)
    return fusion, launch


def main() -> int:
    """Print ``kernel_counts`` of every family as one JSON line (``counts_in_child``'s process)."""
    import torch

    if not torch.cuda.is_available():
        print("calibrate_fusion: no CUDA GPU", file=sys.stderr)
        return 1
    from modelcost.hardware.tf32 import cudnn_autotune, tf32_mode

    out: dict[str, dict[str, Any]] = {}
    # as the torch backends run convs: cuDNN autotuned, fp32 with TF32 off (the conv nets' counts were the same
    # with cuDNN's heuristic plans on an H100, benchmarks/conv_kernels_diag.py --heuristic)
    with tempfile.TemporaryDirectory(prefix="modelcost-calibrate-") as tmp, torch.inference_mode(), \
            cudnn_autotune(), tf32_mode(False):
        for family in FAMILIES:
            try:
                out[family] = {"counts": kernel_counts(torch, family, tmp)}
            except Exception as exc:  # noqa: BLE001 - the parent notes it
                out[family] = {"error": first_line(exc, 200)}
            with contextlib.suppress(Exception):
                torch._dynamo.reset()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
