"""TensorRT logic that needs no TensorRT: which precision goes where, the engine cache key, and the ONNX
conversions a strongly typed build needs.

TensorRT 10 builds a *weakly typed* network from an fp32 ONNX file and takes the precision as builder flags
(``BuilderFlag.FP16``, ``INT8``); it can also build *strongly typed* networks (``NetworkDefinitionCreationFlag.
STRONGLY_TYPED``), which then refuse those flags. TensorRT 11 removed the flags: every network is strongly
typed, so the precision has to be in the ONNX model before the build — fp16 as an fp16 copy of the model, int8
and fp8 as a Q/DQ model (explicit quantization). The plan says, per TensorRT version and precision, which ONNX
conversion to make and which flags to set; ``tensorrt.py`` carries it out.

INT8 / FP8 Q/DQ models are made with ONNX Runtime's static quantization (QDQ format, symmetric, per-channel
weights) calibrated on the benchmark's own random inputs, which is enough to time the engine but says little
of the accuracy real calibration data would give (the report notes it). A model that already has Q/DQ nodes
is built as it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelcost.bench.base import Unavailable

FP8_MIN_CC = (8, 9)


@dataclass(frozen=True)
class TrtPlan:
    precision: str
    trt_major: int
    strongly_typed: bool
    onnx_transform: str  # "none" | "fp16" | "qdq-int8" | "qdq-fp8"
    builder_flags: tuple[str, ...] = ()  # trt.BuilderFlag members to set
    clear_flags: tuple[str, ...] = ()  # trt.BuilderFlag members to clear (TF32 for an honest fp32)
    notes: tuple[str, ...] = ()


def trt_major(version: str) -> int:
    m = re.match(r"\s*(\d+)", version or "")
    if not m:
        raise Unavailable(f"cannot read the TensorRT version {version!r}")
    return int(m.group(1))


def plan_precision(precision: str, trt_version: str, compute_capability: tuple[int, int], *,
                   model_has_qdq: bool = False) -> TrtPlan:
    """The build plan for ``precision`` on this TensorRT and GPU, or Unavailable with the reason."""
    major = trt_major(trt_version)
    if major < 10:
        raise Unavailable(f"TensorRT {trt_version} is too old: modelcost needs TensorRT 10 or newer")
    if precision == "fp8" and tuple(compute_capability) < FP8_MIN_CC:
        cc = ".".join(str(x) for x in compute_capability)
        raise Unavailable(f"FP8 needs compute capability 8.9+ (this GPU is {cc})")
    if precision not in ("fp32", "fp16", "int8", "fp8"):
        raise Unavailable(f"tensorrt has no {precision} (it has fp32, fp16, int8, fp8)")
    qdq = "none" if model_has_qdq else f"qdq-{precision}"
    calib_note = () if model_has_qdq else (
        "Q/DQ model made by onnxruntime static quantization calibrated on random inputs",)
    if precision == "fp32":
        return TrtPlan("fp32", major, major >= 11, "none", (), ("TF32",), ("TF32 off: plain fp32 kernels",))
    if major >= 11:
        transform = "fp16" if precision == "fp16" else qdq
        return TrtPlan(precision, major, True, transform, (), (),
                       ("TensorRT 11: strongly typed; the precision is in the ONNX model",) + calib_note)
    # TensorRT 10
    if precision == "fp16":
        return TrtPlan("fp16", major, False, "none", ("FP16",), (), ("TensorRT 10: weakly typed, BuilderFlag.FP16",))
    if precision == "int8":
        return TrtPlan("int8", major, False, qdq, ("INT8", "FP16"), (),
                       ("TensorRT 10: explicit quantization (Q/DQ) with BuilderFlag.INT8 and FP16",) + calib_note)
    return TrtPlan("fp8", major, True, qdq, (), (),
                   ("TensorRT 10: strongly typed build of an FP8 Q/DQ model",) + calib_note)


def engine_cache_doc(*, model_hash: str, shapes: dict[str, tuple[Sequence[int], Sequence[int], Sequence[int]]],
                     trt_version: str, gpu_name: str, compute_capability: tuple[int, int],
                     plan: TrtPlan) -> dict[str, Any]:
    """Everything a serialized engine depends on: the model, the optimization-profile shapes, the TensorRT version
    (engines are not portable across versions), the GPU (nor across GPU models / compute capabilities) and the plan
    (precision, typing, ONNX conversion and builder flags)."""
    return {
        "model": model_hash,
        "shapes": {k: [list(map(int, s)) for s in v] for k, v in sorted(shapes.items())},
        "tensorrt": trt_version,
        "gpu": gpu_name,
        "cc": list(compute_capability),
        "plan": [plan.precision, plan.strongly_typed, plan.onnx_transform,
                 list(plan.builder_flags), list(plan.clear_flags)],
    }


def engine_cache_key(*, model_hash: str, shapes: dict[str, tuple[Sequence[int], Sequence[int], Sequence[int]]],
                     trt_version: str, gpu_name: str, compute_capability: tuple[int, int], plan: TrtPlan) -> str:
    """sha256 of ``engine_cache_doc``: the name of the cached engine file."""
    doc = engine_cache_doc(model_hash=model_hash, shapes=shapes, trt_version=trt_version, gpu_name=gpu_name,
                           compute_capability=compute_capability, plan=plan)
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def static_profile(specs: Sequence[Any]) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """min = opt = max = the given shapes (one engine per batch size: the fastest kernels for that shape)."""
    return {s.name: (tuple(s.shape), tuple(s.shape), tuple(s.shape)) for s in specs}


def has_qdq(model: Any) -> bool:
    return any(n.op_type in ("QuantizeLinear", "DequantizeLinear") for n in model.graph.node)


def quantize_qdq(src: Path, dst: Path, calibration: Sequence[dict[str, Any]], kind: str) -> Path:
    """A Q/DQ copy of ``src`` (int8 or fp8 e4m3), symmetric, per-channel weights, calibrated on ``calibration``
    (a list of input feeds)."""
    from onnxruntime import quantization as q

    class Reader(q.CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(calibration)

        def get_next(self) -> dict[str, Any] | None:
            return next(self._it, None)

    qtype = q.QuantType.QInt8 if kind == "int8" else q.QuantType.QFLOAT8E4M3FN
    from modelcost.core.atomic import scratch_beside

    tmp = scratch_beside(dst)  # renamed over dst once whole: a run stopped while quantizing leaves no half dst
    try:
        q.quantize_static(
            str(src), str(tmp), Reader(), quant_format=q.QuantFormat.QDQ, activation_type=qtype, weight_type=qtype,
            per_channel=kind == "int8", calibrate_method=q.CalibrationMethod.MinMax,
            extra_options={"ActivationSymmetric": True, "WeightSymmetric": True},
        )
        tmp.replace(dst)
    except BaseException:
        tmp.unlink(missing_ok=True)  # this process's own temporary file
        raise
    return dst


def convert_for_plan(plan: TrtPlan, src: Path, cache_dir: Path, key: str,
                     calibration: Sequence[dict[str, Any]] | None = None) -> Path:
    """The ONNX file the plan builds from (cached by ``key`` + transform)."""
    if plan.onnx_transform == "none":
        return src
    if plan.onnx_transform == "fp16":
        from modelcost.bench.backends.ort import fp16_copy

        return fp16_copy(src, cache_dir, key)
    kind = plan.onnx_transform.removeprefix("qdq-")
    dst = Path(cache_dir) / f"onnx-qdq-{kind}" / f"{key}.onnx"
    if dst.exists():
        from modelcost.bench.cache import mark_used

        mark_used(dst)
        return dst
    if not calibration:
        raise Unavailable(f"{kind} needs calibration inputs to make a Q/DQ model")
    from modelcost.core import owned

    owned.make_folder(cache_dir, dst.parent)
    quantize_qdq(src, dst, calibration, kind)
    owned.record(cache_dir, dst)
    return dst
