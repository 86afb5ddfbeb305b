"""Where ONNX Runtime's fp16 conv nets spend their time on the GPU (issue 28): kernels by name and time, fp16
against fp32, for conv stacks (plain, dilated, LeakyReLU) and for the tenth set's conv nets at batch 64.

The tenth held-out set's ort-cuda fp16 forwards of conv nets measured 2-4x over their predictions, and some of
them no faster than fp32 (FCN-ResNet-50 at batch 64: 205 ms fp16, 194 ms fp32; torch-half ran it in 27 ms) while
ResNet-50's fp16 forward took 0.38x its fp32 one. This exports each net as the ort backends do (TorchScript
exporter, opset 17, dynamic batch), makes the same fp16 copy (``bench.backends.ort.fp16_copy``), runs it under the
CUDA EP with the backend's options (``use_tf32`` as ort-cuda sets it: off for fp16 too until 1838ed7, which is
what made these fp16 convs slow; benchmarks/ort_provider_ab.py), and lists the kernels one forward launches, by
total time.

    # on a CUDA machine with onnxruntime-gpu
    python3 benchmarks/ort_fp16_conv_diag.py [--nets a,b] [--cuda-option KEY=VALUE] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

BATCH = 64


def stack(torch, dilation: int = 1, act: str = "relu", channels: int = 256):  # noqa: ANN001, ANN201
    """Four 3 x 3 convs of ``channels`` -> ``channels``, each BatchNorm + activation (as the ResNets' and Darknet's)."""
    nn = torch.nn
    layers = []
    for _ in range(4):
        layers += [nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False),
                   nn.BatchNorm2d(channels), nn.LeakyReLU(0.1) if act == "leaky" else nn.ReLU()]
    return nn.Sequential(*layers)


def nets(torch) -> dict:  # noqa: ANN001
    """name -> (module builder, input shape at BATCH)."""
    import predict_models_fresh9 as fresh9

    return {"c256-d1-relu": (lambda: stack(torch), (BATCH, 256, 40, 40)),
            "c256-d2-relu": (lambda: stack(torch, dilation=2), (BATCH, 256, 40, 40)),
            "c256-d1-leaky": (lambda: stack(torch, act="leaky"), (BATCH, 256, 40, 40)),
            "darknet53_ish": (fresh9.darknet53_ish, (BATCH, 3, 256, 256)),
            "fcn_resnet50_ish": (fresh9.fcn_resnet50_ish, (BATCH, 3, 320, 320))}


def export(torch, module, shape: tuple, path: Path) -> None:  # noqa: ANN001
    x = torch.randn(2, *shape[1:])
    torch.onnx.export(module.eval(), (x,), str(path), input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False)


def kernels(torch, session, feed: dict) -> list[tuple[str, float]]:  # noqa: ANN001
    """(name, device time in us) of the kernels one ``session.run`` launches, after three unprofiled runs."""
    from torch.autograd import DeviceType

    for _ in range(3):
        session.run(None, feed)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        session.run(None, feed)
        torch.cuda.synchronize()
    return [(e.name, e.time_range.elapsed_us()) for e in prof.events() if e.device_type == DeviceType.CUDA]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nets", default="all")
    p.add_argument("--out", type=Path)
    p.add_argument("--cuda-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a CUDA EP provider option beyond the backend's (e.g. prefer_nhwc=1)")
    args = p.parse_args()
    import numpy as np
    import onnxruntime as ort
    import torch

    from modelcost.bench.backends.ort import fp16_copy, use_tf32

    if not torch.cuda.is_available():
        sys.exit("ort_fp16_conv_diag: needs a CUDA GPU")
    torch.manual_seed(0)
    table = nets(torch)
    chosen = list(table) if args.nets == "all" else args.nets.split(",")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            build, shape = table[name]
            path = Path(tmp) / f"{name}.onnx"
            export(torch, build(), shape, path)
            feed = {"x": np.random.default_rng(0).standard_normal(shape, dtype=np.float32)}
            for precision in ("fp32", "fp16"):
                model = fp16_copy(path, Path(tmp), name) if precision == "fp16" else path
                options = ort.SessionOptions()
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                options.log_severity_level = 3
                cuda = {"device_id": "0", "use_tf32": use_tf32(precision),
                        **dict(o.split("=", 1) for o in args.cuda_option)}
                session = ort.InferenceSession(str(model), sess_options=options,
                                               providers=[("CUDAExecutionProvider", cuda)])
                found = kernels(torch, session, feed)
                by_name: dict[str, list[float]] = collections.defaultdict(list)
                for kernel, us in found:
                    by_name[kernel[:100]].append(us)
                total_ms = sum(us for _, us in found) / 1e3
                top = sorted(by_name.items(), key=lambda kv: -sum(kv[1]))[:12]
                out[f"{name} {precision}"] = {"kernels": len(found), "kernel_ms": total_ms,
                                              "top": [(k, len(v), sum(v) / 1e3) for k, v in top]}
                print(f"== {name} {precision}: {len(found)} kernels, {total_ms:.2f} ms of kernel time", flush=True)
                for k, v in top[:8]:
                    print(f"   {sum(v) / 1e3:8.3f} ms  x{len(v):<4} {k}", flush=True)
                del session
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
