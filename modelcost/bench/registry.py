"""Every backend by name. A backend's module is imported only when that backend is chosen (or asked whether it
can run here), so ``import modelcost.bench.registry`` costs nothing.

The default sweep (``default=`` of each row; issue 9) is one config per way of deploying, at the precision that
route is normally deployed at, so that an answer comes in about a minute: the FP32 eager baseline (also the
accuracy reference), autocast FP16 (the one-line change), CUDA-graph replay of the FP16 model (no compile),
torch.compile + CUDA graphs at FP16 (the fastest PyTorch route; one compile serves the batch sizes), ONNX Runtime CUDA
at FP32 and FP16, and TensorRT (engine and ORT provider) at FP16. FP16 rather than BF16: the same tensor-core
speed on every GPU that has both, with 3 more mantissa bits (closer to FP32). Left out unless asked for: TF32
(between FP32 and FP16), BF16, the cast eager model (CUDA graphs of it are in), torch.compile without CUDA graphs
and at FP32 (the same compile, slower), INT8 / FP8 (they need a quantized model). ``--exhaustive`` runs every
row at every precision; ``--backends`` / ``--precisions`` choose any. On the CPU every backend is in it."""

from __future__ import annotations

import importlib

from modelcost.bench.base import Backend, BackendInfo
from modelcost.core.errors import ModelcostError

_T = "modelcost.bench.backends.torch_backends"
_O = "modelcost.bench.backends.ort"
_R = "modelcost.bench.backends.tensorrt"
_PT = ("pytorch",)
_ONNX = ("onnx",)
_ANY = ("pytorch", "onnx")

BACKENDS: dict[str, BackendInfo] = {b.name: b for b in (
    BackendInfo("torch-eager", "cuda", ("fp32", "tf32"), _PT,
                "PyTorch eager on CUDA; fp32 = TF32 off, tf32 = TF32 on for matmul and cuDNN", _T,
                reference_for=_PT, reference_note="TF32 off", profile="torch", default=("fp32",), simplicity=0,
                screen_rank=8, probes=(("fp32", 2),)),
    BackendInfo("torch-autocast", "cuda", ("fp16", "bf16"), _PT,
                "PyTorch eager, fp32 weights, torch.autocast to fp16 / bf16", _T, autocast=True, default=("fp16",),
                simplicity=0, screen_rank=7),
    BackendInfo("torch-half", "cuda", ("fp16", "bf16"), _PT,
                "PyTorch eager, model and inputs cast to fp16 / bf16 (channels_last for conv nets)", _T,
                cast=True, profile="torch", simplicity=0, screen_rank=6, probes=(("fp16", 0),)),
    BackendInfo("torch-compile", "cuda", ("fp32", "fp16", "bf16"), _PT,
                "torch.compile (inductor); fp16 / bf16 = the cast model; --compile-mode max-autotune", _T,
                cast=True, compile=True, simplicity=2, screen_rank=4),
    BackendInfo("torch-cudagraph", "cuda", ("fp32", "fp16", "bf16"), _PT,
                "CUDA-graph replay of the eager model (fp16 / bf16 = the cast model)", _T, cast=True, cudagraph=True,
                default=("fp16",), simplicity=1, screen_rank=3),
    BackendInfo("torch-compile-cudagraph", "cuda", ("fp32", "fp16", "bf16"), _PT,
                "CUDA-graph replay of the torch.compile'd model", _T, cast=True, compile=True, cudagraph=True,
                default=("fp16",), simplicity=3, screen_rank=1),
    BackendInfo("torch-cpu", "cpu", ("fp32",), _PT, "PyTorch eager on the CPU", _T, reference_for=_PT,
                profile="torch", default=("fp32",), simplicity=0, screen_rank=10, probes=(("fp32", 4),)),
    BackendInfo("ort-cuda", "cuda", ("fp32", "tf32", "fp16"), _ANY,
                "ONNX Runtime CUDA execution provider, I/O bound on the GPU; fp32 = TF32 off, tf32 = TF32 on; "
                "fp16 = an fp16 copy of the model, use_tf32 at ONNX Runtime's default (bench/backends/ort.use_tf32)",
                _O, reference_for=_ONNX, profile="onnx",
                default=("fp32", "fp16"), simplicity=0, screen_rank=5, probes=(("fp16", 1), ("fp32", 3))),
    BackendInfo("ort-tensorrt", "cuda", ("fp32", "fp16"), _ANY,
                "ONNX Runtime TensorRT execution provider, I/O bound on the GPU", _O, default=("fp16",),
                simplicity=2, screen_rank=2),
    BackendInfo("ort-cpu", "cpu", ("fp32",), _ANY, "ONNX Runtime CPU execution provider", _O, reference_for=_ONNX,
                profile="onnx", default=("fp32",), simplicity=0, screen_rank=9, probes=(("fp32", 5),)),
    BackendInfo("tensorrt", "cuda", ("fp32", "fp16", "int8", "fp8"), _ANY,
                "TensorRT engine built from ONNX (cached); int8 / fp8 from a Q/DQ model", _R, default=("fp16",),
                simplicity=2, screen_rank=0, model_precision=True),
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


def in_default_sweep(name: str, precision: str) -> bool:
    """Whether (backend, precision) is in the default sweep (the ``default`` of its row; module doc)."""
    return precision in info(name).default


def simplicity(name: str) -> int:
    """The ``simplicity`` of a backend's row; a name the registry does not know counts as compiled (2)."""
    entry = BACKENDS.get(name)
    return entry.simplicity if entry is not None else 2


def screen_rank(name: str) -> int:
    """The ``screen_rank`` of a backend's row; a name the registry does not know comes last."""
    entry = BACKENDS.get(name)
    return entry.screen_rank if entry is not None else max(e.screen_rank for e in BACKENDS.values()) + 1


def probe_order() -> list[tuple[str, str]]:
    """Every (backend, precision) a batch-size search may probe with, in the order of the rows' ``probes`` ranks."""
    ranked = [(rank, name, precision) for name, entry in BACKENDS.items() for precision, rank in entry.probes]
    return [(name, precision) for _, name, precision in sorted(ranked)]


def reference_backend(kind: str, device: str) -> str | None:
    """The backend whose FP32 outputs are the reference for a ``kind`` model on ``device``: the row that is the
    reference for that kind there (``reference_for``), else the CPU's, when the device's cannot run here (an
    ONNX Runtime without its CUDA provider). None when no row is the reference for ``kind``."""
    names = [name for d in dict.fromkeys((device, "cpu")) for name, entry in BACKENDS.items()
             if entry.device == d and kind in entry.reference_for]
    for name in names:
        if unavailable_reason(name) is None:
            return name
    return names[0] if names else None


def reference_label(name: str) -> str:
    """How the reference computed by backend ``name`` is named: 'torch-eager fp32 (TF32 off)', 'ort-cpu fp32'."""
    note = info(name).reference_note
    return f"{name} fp32" + (f" ({note})" if note else "")
