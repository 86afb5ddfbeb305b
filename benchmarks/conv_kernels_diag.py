"""How many CUDA kernels one conv layer becomes under torch.compile fp16 (calibrate's ``compile`` family), for
calibrate's own fusion net and for conv stacks of the widths real CNNs run at (issue 28).

calibrate learns kernels per layer from small nets (bench/calibrate_fusion.py): its conv net is 4 convs of 32 -> 32
channels, 3 x 3, at 28 x 28, batch 8, and the H100's calibration read 4.7 kernels per conv under torch.compile.
Each kernel past the first adds ``kernel_gap_us`` to a prediction, so a deep CNN at batch 1 (Darknet-53's 52 convs:
about 0.23 ms against a measured 0.45 ms forward) is priced by that count. This counts the kernels of the same net
and of wider ones, and names the kernels of one conv, to see whether 4.7 holds for the convs models run.

It did not (twenty-first session, H100): every net here ran 3.25 kernels per conv (4.25 at 128 channels, batch 64),
autotuned or not. The 4.7 was calibrate's child compiling its nets one after another, the later ones with dynamic
shapes (fixed in 8e0d737; results in benchmarks/results/device_2026-11-28/).

    python3 benchmarks/conv_kernels_diag.py [--heuristic] [--out FILE.json]   # on a CUDA machine
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# name -> (channels, spatial, batch, with BN + LeakyReLU after each conv)
NETS = {"calibrate-conv": (32, 28, 8, False), "c64-56-b1": (64, 56, 1, False), "c256-14-b1": (256, 14, 1, False),
        "c256-14-b1-bn-act": (256, 14, 1, True), "c128-32-b64": (128, 32, 64, False)}


def net_of(torch, channels: int, blocks: int = 4, bn_act: bool = False):  # noqa: ANN001, ANN201
    nn = torch.nn
    layers = []
    for _ in range(blocks):
        layers.append(nn.Conv2d(channels, channels, 3, padding=1))
        if bn_act:
            layers += [nn.BatchNorm2d(channels), nn.LeakyReLU(0.1)]
    return nn.Sequential(*layers).cuda().eval().half()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--heuristic", action="store_true", help="cuDNN's heuristic plans (benchmark mode off), as "
                   "calibrate's kernel-count child ran them before it autotuned")
    args = p.parse_args()
    import torch

    from modelcost.bench.calibrate_fusion import kernel_names

    if not torch.cuda.is_available():
        sys.exit("conv_kernels_diag: needs a CUDA GPU")
    torch.backends.cudnn.benchmark = not args.heuristic  # autotuned: as the torch backends run convs
    out = {}
    for name, (c, s, b, bn_act) in NETS.items():
        net = net_of(torch, c, bn_act=bn_act)
        x = torch.randn(b, c, s, s, device="cuda", dtype=torch.half)
        with torch.inference_mode():
            for mode, fn in (("eager", lambda net=net, x=x: net(x)),
                             ("compile", lambda f=torch.compile(net), x=x: f(x))):
                names = kernel_names(torch, fn, runs=1)  # one forward's kernels, by name
                out[f"{name} {mode}"] = {"kernels_per_conv": len(names) / 4,
                                         "kernels": collections.Counter(n[:90] for n in names).most_common()}
                print(f"{name:20} {mode:8} {len(names) / 4:5.2f} kernels per conv", flush=True)
        torch._dynamo.reset()
    for key in ("calibrate-conv compile", "c256-14-b1-bn-act compile"):
        print(key, json.dumps(out[key]["kernels"], indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
