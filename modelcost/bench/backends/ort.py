"""The ONNX Runtime backends: CUDA execution provider with I/O binding, TensorRT execution provider, CPU.

On CUDA the inputs are PyTorch tensors on the GPU bound by pointer, and the outputs are bound to the device
buffers ONNX Runtime allocated on the first run, so a timed ``run_with_iobinding`` moves nothing between host
and device. ONNX Runtime is given a PyTorch stream as ``user_compute_stream`` and the CUDA events are recorded
on that same stream (ONNX Runtime rejects stream 0, so it is a stream of its own). fp16 = an fp16 copy of the
model (``onnxruntime.transformers.float16``, I/O kept fp32, ops without fp16 kernels left in fp32), cached.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from modelcost.bench.backends.ort_kernels import cpu_fallback, cpu_fallback_note, placed_off, placed_off_note
from modelcost.bench.base import BackendInfo, BenchConfig, OutOfMemory, Unavailable
from modelcost.bench.model import BenchModel
from modelcost.core.errors import ModelcostError, is_out_of_memory_text
from modelcost.core.lazy import INSTALL_HINTS
from modelcost.core.text import first_line

_EP = {
    "ort-cuda": "CUDAExecutionProvider",
    "ort-tensorrt": "TensorrtExecutionProvider",
    "ort-cpu": "CPUExecutionProvider",
}
TRT_MISSING = f"TensorRT not installed — {INSTALL_HINTS['tensorrt']}"


def make(entry: BackendInfo) -> OrtBackend:
    return OrtBackend(entry)


def tensorrt_libs_reason() -> str | None:
    """None when TensorRT's libraries load (the tensorrt wheel, or libnvinfer on the library path)."""
    import ctypes
    import importlib.util

    if importlib.util.find_spec("tensorrt") is not None or importlib.util.find_spec("tensorrt_libs") is not None:
        return None
    for lib in ("libnvinfer.so.10", "libnvinfer.so.11", "libnvinfer.so"):
        try:
            ctypes.CDLL(lib)
            return None
        except OSError:
            continue
    return TRT_MISSING


def use_tf32(precision: str) -> str:
    """The CUDA EP's ``use_tf32`` option for a session of ``precision``: off for fp32 alone, so fp32 means full
    fp32 as for torch-eager (the EP runs fp32 MatMul / Gemm / Conv as TF32 unless told not to; tf32 is its own
    entry). An fp16 session keeps ONNX Runtime's default, on: with it off, ORT's cuDNN convs left out the
    tensor-core kernels in fp16 too (Darknet-53 at batch 64 on an H100: 25.9 ms off, 10.4 ms on; ResNet-50 8.3 and
    7.9 ms; benchmarks/ort_provider_ab.py, BENCHMARKS.md). The fp16 copy's ops left in fp32, if any, then run as
    TF32, as they would under ONNX Runtime's defaults."""
    return "0" if precision == "fp32" else "1"


def quiet_ort_logs(ort: Any) -> None:
    """ONNX Runtime's process-wide logger prints every cuDNN-frontend plan it rejects while choosing kernels
    (with use_tf32=0, dozens of "[E:onnxruntime] ... No execution plans" lines per session on an H200) and a
    warning per CUDA session; the session still works. Keep only fatal messages unless MODELCOST_ORT_LOGS=1;
    real failures still raise from InferenceSession / run and become the config's reason."""
    from modelcost.core.env import env_flag

    ort.set_default_logger_severity(0 if env_flag("MODELCOST_ORT_LOGS") else 4)

class OrtBackend:
    def __init__(self, entry: BackendInfo) -> None:
        self.entry = entry
        self.name = entry.name
        self.provider = _EP[entry.name]

    def unavailable_reason(self) -> str | None:
        try:
            import onnxruntime as ort
        except ImportError:
            return f"onnxruntime is not installed — {INSTALL_HINTS['onnxruntime']}"
        if self.name == "ort-cpu":
            return None
        have = ort.get_available_providers()
        if self.name == "ort-tensorrt":
            if self.provider not in have:
                return "onnxruntime has no TensorRT execution provider (install onnxruntime-gpu: 'modelcost[gpu]')"
            if (why := tensorrt_libs_reason()) is not None:
                return why
        elif self.provider not in have:
            return f"onnxruntime has no CUDA execution provider — {INSTALL_HINTS['onnxruntime-gpu']}"
        from modelcost.bench.backends.torch_backends import cuda_unavailable_reason

        return cuda_unavailable_reason()

    def precision_reason(self, precision: str) -> str | None:
        if precision not in self.entry.precisions:
            return f"{self.name} has no {precision} (it has {', '.join(self.entry.precisions)})"
        return None

    def prepare(self, model: BenchModel, precision: str, config: BenchConfig) -> OrtRunner:
        return OrtRunner(self, model, precision, config)


# the fp16 copy's conversion rules, in its cached name: a copy made by earlier rules is not reused (r2: training-mode
# BatchNormalization on weights kept fp32, ``weight_only_training_norms``)
FP16_RULES = "r2"


def fp16_copy_path(cache_dir: Path, key: str) -> Path:
    return Path(cache_dir) / "onnx-fp16" / f"{key}-{FP16_RULES}.onnx"


def fp16_copy(path: Path, cache_dir: Path, key: str) -> Path:
    """An fp16 copy of the model, I/O types kept fp32; cached under ``<cache>/onnx-fp16/<key>-<rules>.onnx``."""
    import onnx

    out = fp16_copy_path(cache_dir, key)
    if out.exists():
        from modelcost.bench.cache import mark_used

        mark_used(out)
        return out
    try:
        from onnxruntime.transformers.float16 import convert_float_to_float16
    except ImportError:
        try:
            from onnxconverter_common.float16 import convert_float_to_float16
        except ImportError as exc:
            raise Unavailable("no fp16 converter: onnxruntime.transformers or onnxconverter-common is needed") from exc
    from modelcost.core import owned
    from modelcost.core.atomic import scratch_beside
    from modelcost.loaders.onnx_external import needs_external_data

    model = _shapes_inferred(path)
    converted = one_cast_each(convert_float_to_float16(model, keep_io_types=True, disable_shape_infer=True,
                                                       node_block_list=weight_only_training_norms(model)))
    owned.make_folder(cache_dir, out.parent)
    tmp = scratch_beside(out)
    external = needs_external_data(converted)
    data = out.with_name(f"{out.name}.data")  # the weights of a model over protobuf's 2 GB, beside it
    try:
        onnx.save(converted, str(tmp), save_as_external_data=external, location=data.name)
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)  # this process's own temporary file
        raise
    owned.record(cache_dir, out, *([data] if external else []))
    return out


def weight_only_training_norms(model: Any) -> list[str]:
    """The nodes to keep fp32 in the fp16 copy: each training-mode BatchNormalization computed from weights alone,
    and the weight-only nodes before it. timm's weight standardization (NFNet's ScaledStdConv2d, BiT's StdConv2d)
    normalizes each conv's weight with ``F.batch_norm(training=True)`` in every forward, which exports as such a
    node. At fp32 ONNX Runtime folds it into a constant when the session starts; converted to fp16 it cannot (its
    CPU provider has no fp16 kernels to fold ReduceMean with), and the CUDA provider refuses the node ("Training
    mode does not support BN opset 14 (or higher) yet"): NFNet-F0's ort-cuda fp16 failed to start (H100,
    device_2026-12-02). Kept fp32, it folds as in the fp32 model, and the copy's convs take its result cast once."""
    constant = {init.name for init in model.graph.initializer} | {""}
    producer: dict[str, Any] = {}
    for node in model.graph.node:
        if all(name in constant for name in node.input):
            constant.update(node.output)
        for name in node.output:
            producer[name] = node
    keep: dict[str, None] = {}

    def ancestors(node: Any) -> None:
        if node.name in keep:
            return
        keep[node.name] = None
        for name in node.input:
            if name in producer:
                ancestors(producer[name])

    for node in model.graph.node:
        training = any(a.name == "training_mode" and a.i == 1 for a in node.attribute)
        if node.op_type == "BatchNormalization" and training and node.name and all(n in constant for n in node.input):
            ancestors(node)
    return [name for name in keep if name]


def one_cast_each(model: Any) -> Any:
    """``model`` with each repeated Cast node and value_info entry kept once. onnxruntime 1.31's fp16 converter
    puts a Cast before every fp32-only consumer (CumSum, Range, TopK...) of an fp16 tensor, each named and writing
    ``<tensor>_cast_to_fp32``: DETR's two CumSums of one mask made two nodes of one name and one output, which ONNX
    Runtime refuses ("two nodes with same node name"), and its ort-cuda fp16 configs failed (H100, 2026-11-27).
    1.32's converter shares one Cast; the copies are identical, so dropping the later ones changes nothing."""
    seen: set[bytes] = set()
    nodes = []
    for node in model.graph.node:
        key = node.SerializeToString()
        if node.op_type == "Cast" and key in seen:
            continue
        seen.add(key)
        nodes.append(node)
    first: dict[str, Any] = {}
    for info in model.graph.value_info:
        first.setdefault(info.name, info)
    infos = list(first.values())
    if len(nodes) != len(model.graph.node) or len(infos) != len(model.graph.value_info):
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        del model.graph.value_info[:]
        model.graph.value_info.extend(infos)
    return model


def _shapes_inferred(path: Path) -> Any:
    """The model at ``path`` with its shapes inferred and then its weights loaded. The converter's own shape
    inference serializes the whole model, which protobuf refuses past 2 GB ("EncodeError: Failed to serialize
    proto": BLOOM-560M's fp32 export, 2.2 GB); inferred before the external weights are read, the proto holds only
    their references."""
    import onnx
    from onnx.external_data_helper import load_external_data_for_model

    model = onnx.shape_inference.infer_shapes(onnx.load(str(path), load_external_data=False))
    load_external_data_for_model(model, str(path.parent))
    return model


def session_options(ort: Any, device: str, config: BenchConfig, profile_dir: Path | None = None) -> Any:
    """The SessionOptions of a timed session: every graph optimization, quiet logs, and for a CUDA session timed
    pinned to one CPU (``config.pin_cpu``, bench.timing.pinned_to_one_cpu) one intra-op thread: a pool of
    spinning workers on that one CPU would take it from the thread that issues the kernels (the CPU nodes of a
    CUDA-EP graph, shape arithmetic and the like, then wait on them as torch's CPU ops did). ``profile_dir``:
    ONNX Runtime profiles the session into it until ``OrtRunner.read_placement`` ends that after its first run."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    if device == "cuda" and config.pin_cpu:
        options.intra_op_num_threads = 1
    if profile_dir is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_dir / "placement")
    return options


# a first run may take this long whatever the config's budget: it includes cuDNN's exhaustive conv-algorithm
# search (ONNX Runtime's default), seconds on a large conv net
FIRST_RUN_FLOOR_S = 60.0


def guarded_run(runner: OrtRunner, call: Callable[[Any], Any]) -> Any:
    """A session's first run, ``call(run_options)``, stopped through ONNX Runtime's terminate flag once it passes
    the config's whole time budget (``max_time_s``, at least ``FIRST_RUN_FLOOR_S``): a forward that long cannot be
    timed within it, and one call cannot be interrupted otherwise (FNet's CPU DFTs under ort-cuda ran one batch-64
    forward for minutes; H100, device_2026-12-02). ONNX Runtime reads the flag between nodes. Not for ort-tensorrt,
    whose first run builds its engine (minutes, rightly)."""
    import onnxruntime as ort

    if runner.backend.name == "ort-tensorrt":
        return call(None)
    limit_s = max(runner.config.max_time_s, FIRST_RUN_FLOOR_S)
    options = ort.RunOptions()
    timer = threading.Timer(limit_s, lambda: setattr(options, "terminate", True))
    timer.daemon = True
    timer.start()
    try:
        return call(options)
    except Exception as exc:
        if options.terminate:
            runner.read_placement()
            cause = f"; {runner.cpu_fallback}" if runner.cpu_fallback else ""
            raise ModelcostError(f"one ONNX Runtime run took over {limit_s:g} s (the config's time budget, "
                                 f"{{max_time_s}}, and at least {FIRST_RUN_FLOOR_S:g} s) and was stopped: not "
                                 f"timed{cause}", fields="max_time_s") from exc
        raise
    finally:
        timer.cancel()
        runner.read_placement()


class OrtRunner:
    """An InferenceSession for one precision; every batch size shares it (the model's batch is dynamic)."""

    def __init__(self, backend: OrtBackend, model: BenchModel, precision: str, config: BenchConfig) -> None:
        import onnxruntime as ort

        self.backend, self.model, self.precision, self.config = backend, model, precision, config
        self.device = backend.entry.device
        self.notes: list[str] = []
        t0 = time.perf_counter()
        path = model.onnx_file(config.cache_dir)
        if model.export_note:
            self.notes.append(model.export_note)
        if precision == "fp16" and backend.name == "ort-cuda":
            path = fp16_copy(path, config.cache_dir, model.content_hash()[:16])
            self.notes.append("fp16 copy of the model (onnxruntime.transformers.float16, I/O kept fp32)")
        self.stream = None
        providers: list[Any] = [backend.provider]
        if self.device == "cuda":
            import torch

            self.stream = torch.cuda.Stream()
            cuda_opts = {
                "device_id": str(torch.cuda.current_device()),
                "user_compute_stream": str(self.stream.cuda_stream),
                "use_tf32": use_tf32(precision),
            }
            providers = [("CUDAExecutionProvider", cuda_opts)]
            if backend.name == "ort-tensorrt":
                from modelcost.core import owned

                trt_cache = Path(config.cache_dir) / "ort-tensorrt"
                owned.claim_tree(config.cache_dir, trt_cache)  # ONNX Runtime names the files it writes there
                trt_opts = {
                    "device_id": cuda_opts["device_id"],
                    "user_compute_stream": cuda_opts["user_compute_stream"],
                    "trt_fp16_enable": str(precision == "fp16"),
                    "trt_engine_cache_enable": "True",
                    "trt_engine_cache_path": str(trt_cache),
                    "trt_timing_cache_enable": "True",
                }
                providers.insert(0, ("TensorrtExecutionProvider", trt_opts))
        quiet_ort_logs(ort)
        # ort-cuda's first run is profiled, for where its nodes ran (``read_placement``)
        self._profile_dir = Path(tempfile.mkdtemp(prefix="modelcost-ort-")) if backend.name == "ort-cuda" else None
        options = session_options(ort, self.device, config, self._profile_dir)
        try:
            self.ort_session = ort.InferenceSession(str(path), sess_options=options, providers=providers)
        except Exception as exc:
            self._drop_profile()
            if is_out_of_memory_text(str(exc)):
                raise OutOfMemory(first_line(exc, with_type=False)) from exc
            raise
        used = self.ort_session.get_providers()
        if not used or used[0] != backend.provider:
            raise ModelcostError(f"onnxruntime did not use {backend.provider} (it used {', '.join(used)})")
        # nodes the CUDA EP has no kernel for run on the CPU: said beside the figure (and in a run stopped by
        # ``guarded_run``), from the installed ONNX Runtime's kernel registry
        missing = cpu_fallback(path, backend.provider) if backend.name == "ort-cuda" else None
        self.cpu_nodes = dict(missing.most_common()) if missing else None  # BenchResult.extra.cpu_nodes
        self.cpu_fallback = cpu_fallback_note(missing, backend.provider, ort.__version__) if missing else None
        if self.cpu_fallback:
            self.notes.append(self.cpu_fallback)
        self.build_s = time.perf_counter() - t0
        self.input_names = [i.name for i in self.ort_session.get_inputs()]
        self.output_names = [o.name for o in self.ort_session.get_outputs()]

    def session(self, batch_size: int, host_inputs: Sequence[Any]) -> OrtSession:
        return OrtSession(self, host_inputs)

    def read_placement(self) -> str | None:
        """After the session's first run (``guarded_run``), once: end ONNX Runtime's profile of it and read where its
        nodes ran (``ort_kernels.placed_off``). Nodes that took time off the CUDA provider become this runner's
        ``cpu_nodes`` and a note, where the kernel registry named none (onnxruntime-gpu's listing crashes its process:
        ``ort_kernels.kernel_ranges``). Returns the new note, for the session that ran; None otherwise. A profile that
        cannot be read costs the note, not the run."""
        if self._profile_dir is None:
            return None
        found = None
        try:
            events = json.loads(Path(self.ort_session.end_profiling()).read_text(encoding="utf-8"))
            found = placed_off(events, self.backend.provider)
        except Exception:  # noqa: BLE001 - the placement is a note; the timed runs do not depend on it
            found = None
        finally:
            self._drop_profile()
        if found is None or not found[0] or self.cpu_nodes:
            return None
        nodes, ms = found
        self.cpu_nodes = dict(nodes.most_common())
        self.cpu_fallback = placed_off_note(nodes, ms, self.backend.provider)
        self.notes.append(self.cpu_fallback)
        return self.cpu_fallback

    def _drop_profile(self) -> None:
        if self._profile_dir is not None:
            shutil.rmtree(self._profile_dir, ignore_errors=True)
            self._profile_dir = None

    def close(self) -> None:
        if self._profile_dir is not None and getattr(self, "ort_session", None) is not None:
            with contextlib.suppress(Exception):  # a session closed before its first run: end its profile here,
                self.ort_session.end_profiling()  # not in a folder already gone when the session is freed
        self._drop_profile()
        self.ort_session = None


class OrtSession:
    def __init__(self, runner: OrtRunner, host_inputs: Sequence[Any]) -> None:
        self.runner = runner
        self.device = runner.device
        self.stream = runner.stream
        self.build_s = 0.0
        self.notes: list[str] = []
        sess = runner.ort_session
        specs = runner.model.specs(1)
        order = [s.name for s in specs]
        by_name = dict(zip(order, host_inputs, strict=True))
        missing = [n for n in runner.input_names if n not in by_name]
        if missing:
            raise ModelcostError(f"the ONNX model's inputs {missing} are not among the model's inputs {order}")
        self.feed = {n: by_name[n] for n in runner.input_names}
        self._outputs: list[Any] | None = None
        self._io: Any = None
        t0 = time.perf_counter()
        said = runner.cpu_fallback
        try:
            if self.device == "cuda":
                self.bind_io("cuda")
            else:
                self._outputs = guarded_run(runner, lambda options: sess.run(runner.output_names, self.feed, options))
        except Exception as exc:
            if is_out_of_memory_text(str(exc)):
                raise OutOfMemory(first_line(exc, with_type=False)) from exc
            raise
        self.build_s = time.perf_counter() - t0  # ort-tensorrt: the engine for this shape is built here
        if runner.cpu_fallback != said and runner.cpu_fallback:  # found in this session's first run
            self.notes.append(runner.cpu_fallback)
        if self.device == "cuda":
            self.timing = ("GPU time between CUDA events on ONNX Runtime's compute stream around run_with_iobinding "
                           "(inputs and outputs bound on the GPU; no host<->device copies)")
        else:
            self.timing = (
                "host wall time (perf_counter) around InferenceSession.run on the CPU; inputs already in memory"
            )

    def bind_io(self, device_type: str) -> None:
        """Bind the inputs (PyTorch tensors on ``device_type``) by pointer; run once so ONNX Runtime allocates the
        outputs on the device, then keep those output buffers bound, and run once more with them."""
        import torch

        sess = self.runner.ort_session
        cuda = device_type == "cuda"
        device_id = torch.cuda.current_device() if cuda else 0
        self._tensors = [torch.from_numpy(a.copy()).to(device_type) for a in self.feed.values()]
        if cuda:
            torch.cuda.synchronize()
        io = sess.io_binding()
        for name, arr, t in zip(self.feed, self.feed.values(), self._tensors, strict=True):
            io.bind_input(name, device_type, device_id, arr.dtype.type, tuple(t.shape), t.data_ptr())
        for name in self.runner.output_names:
            io.bind_output(name, device_type, device_id)
        guarded_run(self.runner, lambda options: sess.run_with_iobinding(io, options))
        values = io.get_outputs()
        io.clear_binding_outputs()
        for name, value in zip(self.runner.output_names, values, strict=True):
            io.bind_ortvalue_output(name, value)
        self._io, self._values = io, values
        sess.run_with_iobinding(io)
        if cuda:
            torch.cuda.synchronize()

    def run(self) -> None:
        if self._io is not None:
            self.runner.ort_session.run_with_iobinding(self._io)
        else:
            self._outputs = self.runner.ort_session.run(self.runner.output_names, self.feed)

    def device_outputs(self) -> list[Any]:
        """The bound outputs where they are, as torch tensors sharing their memory (DLPack; bench.accuracy then
        compares them on the GPU). Raises where there is nothing bound or this build has no DLPack: the caller
        then takes ``outputs()``."""
        import torch

        if self._io is None or not self._values:
            raise ValueError("no outputs bound on the device")
        if self.device == "cuda":
            torch.cuda.synchronize()  # ONNX Runtime's own stream
        return [torch.from_dlpack(getattr(v, "_ortvalue", v)) for v in self._values]

    def outputs(self) -> list[Any]:
        import numpy as np

        outs = list(self._io.copy_outputs_to_cpu()) if self._io is not None else list(self._outputs or [])
        return [o.astype(np.float32) if o.dtype.kind == "f" else o for o in outs]

    def run_e2e(self, host_inputs: Sequence[Any]) -> None:
        specs = self.runner.model.specs(1)
        feed = dict(zip([s.name for s in specs], host_inputs, strict=True))
        self.runner.ort_session.run(self.runner.output_names, {n: feed[n] for n in self.runner.input_names})

    def memory_peak_bytes(self) -> tuple[int | None, str]:
        return None, "nvml"  # ONNX Runtime's arena is not PyTorch's: the runner measures with NVML

    def close(self) -> None:
        self._io = None
        self._values = []
        self._tensors = []
        self._outputs = None
