"""ONNX Runtime's CUDA kernels against torch's, per layer kind and precision (issue 28): ``Calibration.ort_factor``.

The predictor times a layer from the GEMM / conv / memory / attention tables, which torch's kernels (cuBLAS,
cuDNN, SDPA) were measured with. ONNX Runtime's CUDA EP runs the same layers differently: its fp16 model is a
conversion (``onnxruntime.transformers.float16``, I/O kept fp32: Cast nodes at the edges and around the ops left
in fp32), its convolutions run NCHW, and an exported attention is MatMul + Softmax + MatMul with the score matrix
in memory. On the validation set that made ort-cuda fp16 at batch 64 run 1.4-1.9x torch-half's time, which the
tables cannot see.

So each GPU-bound calibration net (``NETS``: four layers of one kind at a size where the GPU, not the host, sets the
time) runs under torch eager and under ONNX Runtime's CUDA EP, built as the ort-cuda backend builds its sessions
(fp32: TF32 off; fp16: the same converted copy, ``use_tf32`` at ONNX Runtime's default: ``backends.ort.use_tf32``;
graph optimizations on), and the factor of a kind is ORT's time over torch's for the net of that kind. The
predictor multiplies an ort-cuda layer's kernel time by the factor of its kind and precision.
None of these nets is a validation architecture.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelcost.bench.calibrate_fusion import attention_block, residual_block
from modelcost.bench.timing import WallClock, clock_for, median_call_ms
from modelcost.core.text import first_line

# net -> the layer kinds whose factor it gives
# (the conv nets: one per ``core.calibration.ORT_CONV_KINDS`` kind; ORT's fp16 convs ran 4x and 12x torch-half's
# time, 3 x 3 and dilated, benchmarks/ort_fp16_conv_diag.py)
KIND_OF_NET = {"gemm": ("gemm",), "conv": ("conv",), "conv-dilated": ("conv-dilated",),
               "residual-ln": ("norm", "elementwise"), "attention": ("attention",)}
PRECISIONS = ("fp32", "fp16")
RUNS = 15  # timed calls of each net per side (after 3 warm-ups): their median is the figure
# net -> its input: GPU-bound sizes (each of the four layers a fraction of a millisecond or more in fp16)
SHAPES = {"gemm": (32, 512, 1024), "conv": (32, 128, 56, 56), "conv-dilated": (32, 128, 56, 56),
          "residual-ln": (32, 512, 1024), "attention": (32, 256, 768)}


@dataclass(frozen=True)
class Device:
    """Where the nets run: the GPU (what calibrate measures), or the CPU (the tests run every step of it there)."""

    torch: str = "cuda"
    providers: tuple[Any, ...] = ("CUDAExecutionProvider",)  # its options per precision as ort-cuda's (``use_tf32``)

    @property
    def provider(self) -> str:
        first = self.providers[0]
        return first[0] if isinstance(first, tuple) else first


GPU = Device()


def _net(torch: Any, name: str, device: Device = GPU, shapes: dict[str, tuple[int, ...]] | None = None
         ) -> tuple[Any, Any]:
    """(net, input) of one calibration net, fp32 on ``device``."""
    nn = torch.nn
    blocks = {"gemm": lambda: nn.Linear(1024, 1024), "conv": lambda: nn.Conv2d(128, 128, 3, padding=1),
              "conv-dilated": lambda: nn.Conv2d(128, 128, 3, padding=2, dilation=2),
              "residual-ln": lambda: residual_block(torch, 1024),
              "attention": lambda: attention_block(torch, 768, 12)}[name]
    shape = (shapes or SHAPES)[name]
    return nn.Sequential(*[blocks() for _ in range(4)]).to(device.torch).eval(), torch.randn(*shape,
                                                                                          device=device.torch)


def torch_ms(torch: Any, net: Any, x: Any, precision: str, device: Device = GPU) -> float:
    """Median ms of one eager forward as the torch backends run it (cuDNN autotuned; fp32 with TF32 off; fp16 the
    cast model, channels_last for a conv net, as torch-half runs it and calibrate's fp16 conv table was timed.
    The factor over NCHW fp16 convs, 2.45 on an H100, put ORT's fp16 convs far under what they measured against
    torch-half's: 5.6x on VGG-16, 7.4x on a U-Net at batch 64, benchmarks/kernel_mix.py)."""
    from modelcost.hardware.tf32 import cudnn_autotune, tf32_mode

    net, x = (net.half(), x.half()) if precision == "fp16" else (net.float(), x.float())
    if precision == "fp16" and x.dim() == 4:
        net, x = net.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    try:
        with cudnn_autotune(), tf32_mode(False), torch.inference_mode():
            return median_call_ms(lambda: net(x), clock_for(device.torch).time_ms, RUNS)
    finally:
        net.float()


def ort_ms(torch: Any, name: str, net: Any, x: Any, precision: str, tmp: str, device: Device = GPU) -> float:
    """Median ms of one ONNX Runtime CUDA run of the net ``name`` (exported fp32 once, to a file named for it: an
    object id is reused once the net is freed; fp16: the ort-cuda backend's copy)."""
    import numpy as np
    import onnxruntime as ort

    from modelcost.bench.backends.ort import fp16_copy, use_tf32

    path = os.path.join(tmp, f"{name}.onnx")
    if not os.path.exists(path):
        with torch.no_grad():  # tracing for export: not under inference_mode
            torch.onnx.export(net.float(), (x.float(),), path, dynamo=False, opset_version=17)
    model = fp16_copy(Path(path), Path(tmp), name) if precision == "fp16" else Path(path)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    providers = [(p, {"use_tf32": use_tf32(precision)}) if p == "CUDAExecutionProvider" else p
                 for p in device.providers]
    sess = ort.InferenceSession(str(model), sess_options=options, providers=providers)
    if sess.get_providers()[0] != device.provider:
        raise RuntimeError(f"onnxruntime has no {device.provider} here")
    x = x.float().contiguous()
    binding = sess.io_binding()
    binding.bind_input(sess.get_inputs()[0].name, device.torch, 0, np.float32, list(x.shape), x.data_ptr())
    binding.bind_output(sess.get_outputs()[0].name, device.torch)
    # run_with_iobinding returns once the run is done: host wall time is the run's time
    return median_call_ms(lambda: sess.run_with_iobinding(binding), WallClock().time_ms, RUNS)


def measured_use_tf32(factor: dict[str, dict[str, float]]) -> dict[str, str]:
    """``Calibration.ort_use_tf32``: the CUDA EP's ``use_tf32`` each precision's factor was measured with."""
    from modelcost.bench.backends.ort import use_tf32

    return {precision: use_tf32(precision) for precision, kinds in factor.items() if kinds}


def learn_ort_factor(torch: Any, progress: Callable[[str], None], device: Device = GPU,
                     shapes: dict[str, tuple[int, ...]] | None = None) -> tuple[dict[str, dict[str, float]], list[str]]:
    """(precision -> kind -> ORT time over torch time, notes on what could not be measured)."""
    progress("ONNX Runtime against torch, per layer kind")
    factor: dict[str, dict[str, float]] = {p: {} for p in PRECISIONS}
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="modelcost-calibrate-ort-") as tmp:
        for name, kinds in KIND_OF_NET.items():
            try:  # a net that fails leaves its kinds at the tables' (torch's) time, said so; the others go on
                net, x = _net(torch, name, device, shapes)
                for precision in PRECISIONS:
                    ratio = (ort_ms(torch, name, net, x, precision, tmp, device)
                             / torch_ms(torch, net, x, precision, device))
                    factor[precision].update({k: round(ratio, 3) for k in kinds})
            except Exception as exc:  # noqa: BLE001
                notes.append(f"ort-cuda time factor of {', '.join(kinds)}: not calibrated ({first_line(exc, 200)})")
            net = x = None
            torch.cuda.empty_cache()
    return {p: f for p, f in factor.items() if f}, notes
