"""Every backend by name. A backend's module is imported only when that backend is chosen (or asked whether it
can run here), so ``import modelcost.bench.registry`` costs nothing."""

from __future__ import annotations

import importlib

from modelcost.bench.base import Backend, BackendInfo
from modelcost.core.errors import ModelcostError

_T = "modelcost.bench.backends.torch_backends"
_O = "modelcost.bench.backends.ort"
_R = "modelcost.bench.backends.tensorrt"
_PT = ("pytorch",)
_ANY = ("pytorch", "onnx")

BACKENDS: dict[str, BackendInfo] = {b.name: b for b in (
    BackendInfo("torch-eager", "cuda", ("fp32", "tf32"), _PT,
                "PyTorch eager on CUDA; fp32 = TF32 off, tf32 = TF32 on for matmul and cuDNN", _T,
                reference=True, profile="torch"),
    BackendInfo("torch-autocast", "cuda", ("fp16", "bf16"), _PT,
                "PyTorch eager, fp32 weights, torch.autocast to fp16 / bf16", _T, autocast=True),
    BackendInfo("torch-half", "cuda", ("fp16", "bf16"), _PT,
                "PyTorch eager, model and inputs cast to fp16 / bf16 (channels_last for conv nets)", _T,
                cast=True, profile="torch"),
    BackendInfo("torch-compile", "cuda", ("fp32", "fp16", "bf16"), _PT,
                "torch.compile (inductor); fp16 / bf16 = the cast model; --compile-mode max-autotune", _T,
                cast=True, compile=True),
    BackendInfo("torch-cudagraph", "cuda", ("fp32", "fp16", "bf16"), _PT,
                "CUDA-graph replay of the eager model (fp16 / bf16 = the cast model)", _T, cast=True, cudagraph=True),
    BackendInfo("torch-compile-cudagraph", "cuda", ("fp32", "fp16", "bf16"), _PT,
                "CUDA-graph replay of the torch.compile'd model", _T, cast=True, compile=True, cudagraph=True),
    BackendInfo("torch-cpu", "cpu", ("fp32",), _PT, "PyTorch eager on the CPU", _T, reference=True, profile="torch"),
    BackendInfo("ort-cuda", "cuda", ("fp32", "tf32", "fp16"), _ANY,
                "ONNX Runtime CUDA execution provider, I/O bound on the GPU; fp32 = TF32 off, tf32 = TF32 on; "
                "fp16 = an fp16 copy of the model", _O, reference=True, profile="onnx"),
    BackendInfo("ort-tensorrt", "cuda", ("fp32", "fp16"), _ANY,
                "ONNX Runtime TensorRT execution provider, I/O bound on the GPU", _O),
    BackendInfo("ort-cpu", "cpu", ("fp32",), _ANY, "ONNX Runtime CPU execution provider", _O, reference=True,
                profile="onnx"),
    BackendInfo("tensorrt", "cuda", ("fp32", "fp16", "int8", "fp8"), _ANY,
                "TensorRT engine built from ONNX (cached); int8 / fp8 from a Q/DQ model", _R),
)}


def profiled() -> dict[str, tuple[str, str]]:
    """backend -> (profiler framework, device) for the backends whose time can be attributed per layer."""
    return {name: (entry.profile, entry.device) for name, entry in BACKENDS.items() if entry.profile}


def info(name: str) -> BackendInfo:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ModelcostError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)} "
                             "(see 'modelcost backends')") from None


def get_backend(name: str) -> Backend:
    """Import the backend's module now and make the backend."""
    entry = info(name)
    module = importlib.import_module(entry.module)
    return module.make(entry)


def unavailable_reason(name: str) -> str | None:
    """None when ``name`` can run here, else the plain reason."""
    try:
        return get_backend(name).unavailable_reason()
    except ModelcostError as exc:
        return str(exc)
    except ImportError as exc:
        return f"{exc.__class__.__name__}: {exc}"


def parse_backends(text: str | None) -> list[str] | None:
    """'torch-eager, ort-cuda' -> ['torch-eager', 'ort-cuda'] (validated); None/'' -> None (= the default)."""
    if not text or text.strip() in ("", "all"):
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        info(n)
    return names


def default_backends(device: str) -> list[str]:
    """Every backend of ``device`` ('cuda' or 'cpu')."""
    return [name for name, entry in BACKENDS.items() if entry.device == device]
