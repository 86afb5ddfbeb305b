"""What a GPU training step of the encoder fixture holds at its peak, by allocation site (issue 25: the predicted
peak is 15-22% below a measured GPU step). Records the caching allocator's history over one steady step, replays
it to the peak and groups the live blocks by the Python frames that allocated them; then the peak again under
each SDPA backend and with cuBLAS's workspace off (each in a fresh process: the workspace is set at start-up).

    PYTHONPATH=. python3 benchmarks/train_peak_gpu_diag.py
"""

from __future__ import annotations

import collections
import contextlib
import os
import subprocess
import sys

import torch

BATCH = 16


def make_model(dropout: float) -> torch.nn.Module:
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=dropout, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)


def step_peak(precision: str, dropout: float, backend: str = "", history: bool = False) -> int:
    torch.manual_seed(0)
    model = make_model(dropout).cuda().train()
    x = torch.randn(BATCH, 256, 512, device="cuda")
    opt = torch.optim.AdamW(model.parameters())
    amp = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if precision == "amp_bf16" else contextlib.nullcontext
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"math": SDPBackend.MATH, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    kernel = (lambda: sdpa_kernel(backends[backend])) if backend else contextlib.nullcontext

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        with amp(), kernel():
            loss = model(x).float().sum()
        loss.backward()
        opt.step()

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    if history:
        torch.cuda.memory._record_memory_history(max_entries=500000, stacks="python")
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    if history:
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        report(snap, base, peak)
    return peak


def site(frames: list[dict]) -> str:
    keep = [f"{os.path.basename(f['filename'])}:{f['line']}:{f['name']}" for f in frames
            if "torch/cuda/memory" not in f["filename"] and "train_peak_gpu_diag" not in f["filename"]][:3]
    return " < ".join(keep) or "(no Python frame: autograd engine / C++)"


def report(snap: dict, base: int, peak: int) -> None:
    alive: dict[int, tuple[int, str]] = {}
    now, best, best_alive, best_i = base, base, {}, -1
    events = snap["device_traces"][0]
    for i, e in enumerate(events):
        if e["action"] == "alloc":
            alive[e["addr"]] = (e["size"], site(e.get("frames", [])))
            now += e["size"]
            if now > best:
                best, best_alive, best_i = now, dict(alive), i
        elif e["action"] == "free_requested" and e["addr"] in alive:
            now -= alive.pop(e["addr"])[0]
    print(f"  replayed peak {best:,} (allocator's {peak:,}); base (params + states) {base:,}; "
          f"at event {best_i} of {len(events)}")
    groups: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    for size, where in best_alive.values():
        groups[where] += size
        counts[where] += 1
    for where, size in groups.most_common(25):
        print(f"  {size:>14,} B in {counts[where]:>3} blocks  {where}")


def main() -> None:
    if len(sys.argv) > 1:
        precision, dropout, backend = sys.argv[1], float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""
        print(step_peak(precision, dropout, backend))
        return
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    for precision in ("fp32", "amp_bf16"):
        for dropout in (0.1, 0.0):
            print(f"== {precision} dropout {dropout}: live blocks at the peak", flush=True)
            step_peak(precision, dropout, history=True)
    for precision in ("fp32", "amp_bf16"):
        for backend in ("", "math", "efficient", "flash", "cudnn"):
            for env in ("", ":0:0"):
                extra = {"CUBLAS_WORKSPACE_CONFIG": env} if env else {}
                proc = subprocess.run([sys.executable, __file__, precision, "0.1", backend], capture_output=True,
                                      text=True, env={**os.environ, **extra})
                out = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 else proc.stderr.strip()[-160:]
                print(f"{precision} sdpa {backend or 'default'} cublas workspace {env or 'default'}: {out}", flush=True)


if __name__ == "__main__":
    main()
