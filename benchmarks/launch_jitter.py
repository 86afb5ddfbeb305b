"""Host jitter of a launch-bound GPU config: ResNet-50 eager batch 1, modelcost (m) and a hand-written CUDA-event
loop (h) in the order given, in one process. Used for the fidelity notes in BENCHMARKS.md.

    python3 benchmarks/launch_jitter.py mhmhm            # or: taskset -c 3 python3 benchmarks/launch_jitter.py mhmhm
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch
from modelcost import api
from modelcost.bench.base import BenchConfig
from modelcost.bench.runner import run_benchmarks

def mc(tag, **kw):
    config = BenchConfig(device="cuda", min_time_s=2, min_iters=100, max_time_s=15, e2e_max_s=0.3, e2e_min_iters=5,
                         **kw)
    t0 = time.perf_counter()
    model = api.bench_model("zoo:resnet50", batch_size=1)
    r, _ = run_benchmarks(model, backends=["torch-eager"], precisions=["fp32"], batch_sizes=[1], config=config)
    model.close()
    x = r[0]
    threads = [t.name for t in threading.enumerate()]
    print(tag, f"p50={x.latency_ms.p50:.3f} n={x.latency_ms.count} warm={x.extra.get('warmup_iters')} "
          f"threads={threads} wall={time.perf_counter()-t0:.1f}s", flush=True)

def hand(tag):
    from modelcost.loaders.zoo import ZOO
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    m = ZOO["resnet50"].factory().cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    ts = []
    with torch.inference_mode():
        for _ in range(200):
            m(x)
        torch.cuda.synchronize()
        for _ in range(600):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            m(x)
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
    ts.sort()
    print(tag, f"hand p50={ts[len(ts)//2]:.3f}", flush=True)

order = sys.argv[1]
for i, c in enumerate(order):
    (mc if c == "m" else hand)(f"{i}{c}")
