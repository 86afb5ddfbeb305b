"""Do the calibration's host figures hold where the benchmark times? (issue 28, seventeenth session)

The benchmark times a GPU config pinned to one CPU with one intra-op thread (bench.timing.pinned_to_one_cpu; a
pinned ONNX Runtime session gets one intra-op thread, bench/backends/ort.session_options), while `calibrate` measured
the host's cost unpinned, with default session options. After the pinning fix (9348710) the batch-1 cases read:
ONNX Runtime ~10 us per predicted kernel against the calibration's 18.5 (over-predicted 1.5-2.9x), eager ~30 us per
kernel against 11.7 per aten call (under-predicted). This script measures, in one process, alternating rounds:

* eager: the calibration's host cost per aten call (bench/calibrate_host.py's fit over its nets), unpinned and
  pinned, and one real forward (ALBERT-base, batch 1, 128 tokens: its aten calls counted) timed both ways;
* ONNX Runtime: the host time per kernel of the calibration's tiny Linear stack and of the seven fusion nets at one
  sample, under {default options, one intra-op thread} x {unpinned, pinned}.

    python3 benchmarks/host_pinning_diag.py --rounds 3 --out DIR   (on the GPU; writes DIR/host_pinning.json)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _albert(torch):
    spec = importlib.util.spec_from_file_location("fresh4", ROOT / "benchmarks" / "predict_models_fresh4.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    net = mod.albert_base().to("cuda").eval()
    return net, torch.randint(0, 30000, (1, 128), device="cuda")


def _ort_session(torch, net, x, tmp, one_thread: bool):
    """calibrate's ORT runner (bench/calibrate_fusion._ort_runner), with one intra-op thread where asked."""
    import onnxruntime as ort

    from modelcost.bench.calibrate_fusion import _ort_runner

    options = ort.SessionOptions()
    if one_thread:
        options.intra_op_num_threads = 1
    return _ort_runner(torch, net, x, tmp, options)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    import torch

    from modelcost.bench.calibrate_fusion import NETS, count_kernels
    from modelcost.bench.calibrate_host import count_ops, host_nets, host_us, price
    from modelcost.bench.timing import pinned_to_one_cpu

    rows: list[dict] = []
    nets, counts = host_nets(torch)
    with torch.no_grad():
        albert, ids = _albert(torch)
        albert_calls = count_ops(torch, lambda: albert(ids))
    print("albert aten calls (kernel, view):", albert_calls, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        ort_nets = {name: nets[name] for name in ("tiny-linear", *NETS)}
        sessions = {(name, one): _ort_session(torch, net, x, tmp, one) for name, (net, x) in ort_nets.items()
                    for one in (False, True)}
        ort_kernels = {name: count_kernels(torch, sessions[(name, True)]) for name in ort_nets}
        print("ort kernels:", ort_kernels, flush=True)
        for rnd in range(args.rounds):
            for pinned in (False, True):
                with torch.inference_mode(), pinned_to_one_cpu(pinned):
                    kernel_us, view_us, _ = price(torch, "eager", nets, counts)
                    albert_us = host_us(torch, lambda: albert(ids))
                    row = {"round": rnd, "pinned": pinned, "eager_kernel_op_us": round(kernel_us, 2),
                           "eager_view_op_us": round(view_us, 2), "albert_b1_ms": round(albert_us / 1e3, 3),
                           "albert_us_per_kernel_call": round(albert_us / albert_calls[0], 2)}
                    for (name, one), fn in sessions.items():
                        row[f"ort_{name}_{'1thread' if one else 'default'}_us_per_kernel"] = round(
                            host_us(torch, fn) / max(ort_kernels[name], 1.0), 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
    summary = {}
    for key in rows[0]:
        if key in ("round", "pinned"):
            continue
        for pinned in (False, True):
            vals = [r[key] for r in rows if r["pinned"] == pinned]
            summary[f"{key} {'pinned' if pinned else 'unpinned'}"] = round(statistics.median(vals), 2)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "host_pinning.json").write_text(json.dumps({"rows": rows, "median": summary,
                                                            "albert_calls": albert_calls,
                                                            "ort_kernels": ort_kernels,
                                                            "when": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=1))
    for k, v in summary.items():
        print(f"{k:60s} {v}")


if __name__ == "__main__":
    main()
