"""Does cuDNN's autotuner change what a conv costs? (issue 28, nineteenth session)

The torch backends run every conv with ``torch.backends.cudnn.benchmark`` on (bench/backends/torch_backends.py),
and ONNX Runtime's CUDA EP searches its conv algorithms too; calibrate's conv table was timed with it off, by
cuDNN's heuristics. This times each conv of calibrate's table (bench/calibrate.CONVS) and VGG-16's and AlexNet's
batch-64 convs both ways, replayed from a CUDA graph (bench/calibrate.graph_time_us), at fp32 (TF32 off), TF32 and
fp16 (channels_last, as torch-half runs a conv net), and prints the time with the autotuner on over the time
without, per conv and as a median per precision.

Each mode runs in a fresh process of its own: torch keeps the cuDNN plan it found for a conv's shape and reuses
it whatever the benchmark flag says later, so a conv timed by the heuristics first keeps their plan when the
autotuner is turned on (the first version of this script timed both modes in one process and saw no difference).
Two more modes, for VGG-16's and AlexNet's convs, show what a measured config got after modelcost's fp32 reference
outputs had run the same convs first: "heuristic-first" runs each conv once with the benchmark flag off (the
reference before this session), "reference-first" once under hardware/tf32.no_cudnn_autotune (the reference now:
deterministic on, so its plan is keyed apart), then times it with the autotuner on.

    python3 benchmarks/conv_autotune_diag.py [--out FILE.jsonl]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from modelcost.bench.calibrate import CONVS, graph_time_us  # noqa: E402
from modelcost.hardware.tf32 import cudnn_autotune, no_cudnn_autotune, tf32_mode  # noqa: E402

# (batch, in channels, out channels, input side, kernel, stride, groups)
VGG16_B64 = [(64, c, co, s, 3, 1, 1) for c, co, s in (
    (3, 64, 224), (64, 64, 224), (64, 128, 112), (128, 128, 112), (128, 256, 56), (256, 256, 56), (256, 512, 28),
    (512, 512, 28), (512, 512, 14))]
ALEXNET_B64 = [(64, 3, 64, 224, 11, 4, 1), (64, 64, 192, 27, 5, 1, 1), (64, 192, 384, 13, 3, 1, 1),
               (64, 384, 256, 13, 3, 1, 1), (64, 256, 256, 13, 3, 1, 1)]
TABLE = [(b, c, co, s, kk, 1, g) for b, c, co, s, kk, g in CONVS]


MODES = ("off", "on", "heuristic-first", "reference-first")


def time_us(torch, spec: tuple, precision: str, mode: str) -> float:
    b, c, co, s, kk, stride, g = spec
    dtype = torch.float16 if precision == "fp16" else torch.float32
    fmt = torch.channels_last if precision == "fp16" else torch.contiguous_format
    conv = torch.nn.Conv2d(c, co, kk, stride, kk // 2, groups=g, bias=False).to("cuda", dtype).to(memory_format=fmt)
    x = torch.randn(b, c, s, s, device="cuda", dtype=dtype).to(memory_format=fmt)
    with tf32_mode(precision == "tf32"), torch.inference_mode():
        if mode in ("heuristic-first", "reference-first"):
            with cudnn_autotune(False) if mode == "heuristic-first" else no_cudnn_autotune():
                conv(x)
        with cudnn_autotune(mode != "off"):
            return graph_time_us(torch, lambda: conv(x))


def measure(mode: str) -> list[dict]:
    """Every conv at every precision in ``mode`` (``MODES``), in this process; the last two modes time VGG-16's
    and AlexNet's convs only."""
    import torch

    groups = (("vgg16_b64", VGG16_B64), ("alexnet_b64", ALEXNET_B64), ("calibrate", TABLE))
    rows = []
    for group, specs in groups if mode in ("off", "on") else groups[:2]:
        for precision in ("fp32", "tf32", "fp16"):
            for spec in specs:
                rows.append({"group": group, "precision": precision, "conv": list(spec),
                             "us": time_us(torch, spec, precision, mode)})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # a child: one mode, its rows to stdout
    args = p.parse_args()
    if args.mode:
        print(json.dumps(measure(args.mode)))
        return
    import subprocess

    found = {}
    for mode in MODES:
        out = subprocess.run([sys.executable, __file__, "--mode", mode], capture_output=True, text=True, check=True)
        found[mode] = {(r["group"], r["precision"], tuple(r["conv"])): r["us"]
                       for r in json.loads(out.stdout.strip().splitlines()[-1])}
    rows = [{"group": g, "precision": p, "conv": list(c), **{f"{m}_us": found[m].get((g, p, c)) for m in MODES}}
            for g, p, c in found["off"]]
    for r in rows:
        firsts = "".join(f"  {m} {r[f'{m}_us']:9.1f}" for m in MODES[2:] if r[f"{m}_us"] is not None)
        print(f"{r['group']:11s} {r['precision']} {str(tuple(r['conv'])):32s} off {r['off_us']:9.1f} us  "
              f"on {r['on_us']:9.1f} us  on/off {r['on_us'] / r['off_us']:.3f}{firsts}")
    for group in dict.fromkeys(r["group"] for r in rows):
        for precision in ("fp32", "tf32", "fp16"):
            mine = [r for r in rows if r["group"] == group and r["precision"] == precision]
            line = f"== {group} {precision}: sum off {sum(r['off_us'] for r in mine) / 1e3:.2f} ms"
            for m in MODES[1:]:
                if all(r[f"{m}_us"] is not None for r in mine):
                    line += f", {m} {sum(r[f'{m}_us'] for r in mine) / 1e3:.2f} ms"
            ratios = [r["on_us"] / r["off_us"] for r in mine]
            print(f"{line}; on/off median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
                  f"max {max(ratios):.3f}")
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
