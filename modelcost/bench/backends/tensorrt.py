"""TensorRT engines built from ONNX through TensorRT's Python API, cached, and timed on a PyTorch stream.

Build (``build_engine``): ``trt.Builder`` -> ``create_network`` (flags 0, or ``1 << STRONGLY_TYPED`` for a strongly
typed build on TensorRT 10; TensorRT 11 networks are always strongly typed and that flag is deprecated there, so 0)
-> ``trt.OnnxParser.parse_from_file`` (on failure, ``num_errors`` / ``get_error(i)`` are reported) ->
``create_builder_config`` (the plan's ``BuilderFlag`` set / cleared; an optimization profile with min = opt = max =
the benchmarked shape for every dynamic input; a timing cache kept per TensorRT version and GPU) ->
``build_serialized_network``. The serialized engine is cached under ``<cache>/tensorrt/<key>.engine``, the key
covering the model hash, shapes, TensorRT version, GPU and plan (``trt_plan.engine_cache_key``).
Run: ``trt.Runtime.deserialize_cuda_engine`` -> ``create_execution_context`` -> ``set_input_shape`` for every input
(before any output shape is read) -> ``infer_shapes`` -> ``set_tensor_address`` for every I/O tensor (PyTorch
buffers) -> ``execute_async_v3(stream.cuda_stream)`` on the session's stream, where the CUDA events are recorded.

Nothing here is imported unless the ``tensorrt`` backend is chosen; without TensorRT it reports
"TensorRT not installed" and never a figure.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from modelcost.bench.backends import trt_plan
from modelcost.bench.backends.ort import TRT_MISSING
from modelcost.bench.base import BackendInfo, BenchConfig, OutOfMemory, Unavailable
from modelcost.bench.model import BenchModel
from modelcost.core.errors import ModelcostError

CALIBRATION_BATCHES = 8
DEVICE = "cuda"  # where sessions put their buffers (tests bind CPU tensors through a fake ``tensorrt``)


def make(entry: BackendInfo) -> TensorRTBackend:
    return TensorRTBackend(entry)


def _trt() -> Any:
    try:
        import tensorrt
    except ImportError as exc:
        raise Unavailable(TRT_MISSING) from exc
    return tensorrt


def _gpu_identity() -> tuple[str, tuple[int, int]]:
    """(GPU name, compute capability) of the current CUDA device."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.name, (props.major, props.minor)


def _new_stream() -> Any:
    import torch

    return torch.cuda.Stream()


def _synchronize() -> None:
    import torch

    torch.cuda.synchronize()


class TensorRTBackend:
    def __init__(self, entry: BackendInfo) -> None:
        self.entry = entry
        self.name = entry.name

    def unavailable_reason(self) -> str | None:
        try:
            _trt()
        except Unavailable as exc:
            return str(exc)
        from modelcost.bench.backends.torch_backends import cuda_unavailable_reason

        return cuda_unavailable_reason()

    def precision_reason(self, precision: str) -> str | None:
        try:
            trt_plan.plan_precision(precision, _trt().__version__, _gpu_identity()[1])
        except Unavailable as exc:
            return str(exc)
        return None

    def prepare(self, model: BenchModel, precision: str, config: BenchConfig) -> TrtRunner:
        return TrtRunner(model, precision, config)


def _torch_dtype(trt: Any, dtype: Any) -> Any:
    import torch

    table = {"FLOAT": torch.float32, "HALF": torch.float16, "BF16": torch.bfloat16, "INT32": torch.int32,
             "INT64": torch.int64, "INT8": torch.int8, "UINT8": torch.uint8, "BOOL": torch.bool,
             "FP8": torch.float8_e4m3fn}
    for name, torch_dtype in table.items():
        if hasattr(trt.DataType, name) and dtype == getattr(trt.DataType, name):
            return torch_dtype
    raise ModelcostError(f"TensorRT tensor type {dtype} has no PyTorch equivalent here")


def network_flags(trt: Any, plan: trt_plan.TrtPlan) -> int:
    """``create_network`` flags. TensorRT 10: ``1 << STRONGLY_TYPED`` for a strongly typed build (EXPLICIT_BATCH is
    ignored since 10.0 and never passed). TensorRT 11: 0 — every network is strongly typed and the flag is kept
    only for compatibility (deprecated, ignored)."""
    if not plan.strongly_typed or plan.trt_major >= 11:
        return 0
    return 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)


def parser_errors(parser: Any) -> str:
    errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
    return "; ".join(errors) or "no detail"


def configure(trt: Any, config: Any, plan: trt_plan.TrtPlan) -> None:
    """The plan's builder flags. A precision flag this TensorRT lacks (TensorRT 11 removed FP16, INT8, FP8, ...)
    is refused with the reason rather than an AttributeError."""
    for flag in plan.builder_flags:
        member = getattr(trt.BuilderFlag, flag, None)
        if member is None:
            raise Unavailable(f"TensorRT {trt.__version__} has no BuilderFlag.{flag} (strongly typed builds only)")
        config.set_flag(member)
    for flag in plan.clear_flags:
        if hasattr(trt.BuilderFlag, flag):
            config.clear_flag(getattr(trt.BuilderFlag, flag))


def add_profile(builder: Any, network: Any, config: Any, shapes: dict[str, Any]) -> None:
    """One optimization profile (min, opt, max from ``shapes``) for the inputs with a dynamic dimension (-1)."""
    inputs = [network.get_input(i) for i in range(network.num_inputs)]
    dynamic = [t for t in inputs if any(int(d) < 0 for d in t.shape)]
    if not dynamic:
        return
    profile = builder.create_optimization_profile()
    for tensor in dynamic:
        if tensor.name not in shapes:
            raise ModelcostError(f"no shape for TensorRT input {tensor.name!r} (the model's inputs are "
                                 f"{', '.join(sorted(shapes))})")
        lo, opt, hi = shapes[tensor.name]
        profile.set_shape(tensor.name, tuple(lo), tuple(opt), tuple(hi))
    if config.add_optimization_profile(profile) < 0:
        asked = {t.name: shapes[t.name] for t in dynamic}
        raise ModelcostError(f"TensorRT rejected the optimization profile {asked}")


def _write_atomic(path: Path, data: bytes, cache_dir: Path | None) -> None:
    """Write atomically; in the cache (``cache_dir``) the file is recorded as modelcost's (``core.owned``)."""
    from modelcost.core import owned
    from modelcost.core.atomic import replace_atomically

    if cache_dir is None:
        replace_atomically(path, data)
    else:
        owned.write(cache_dir, path, data)


def build_engine(trt: Any, onnx_path: Path, plan: trt_plan.TrtPlan, shapes: dict[str, Any],
                 timing_cache: Path, cache_dir: Path | None = None) -> bytes:
    """The serialized engine of ``onnx_path`` built as ``plan`` says; the timing cache file is read and updated
    (recorded as modelcost's when it lies in the cache folder ``cache_dir``)."""
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(network_flags(trt, plan))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        raise ModelcostError(f"TensorRT's ONNX parser failed on {Path(onnx_path).name}: {parser_errors(parser)}")
    config = builder.create_builder_config()
    configure(trt, config, plan)
    add_profile(builder, network, config, shapes)
    cache = config.create_timing_cache(timing_cache.read_bytes() if timing_cache.exists() else b"")
    if cache is None:  # an unreadable cache file: start an empty one
        cache = config.create_timing_cache(b"")
    config.set_timing_cache(cache, ignore_mismatch=False)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise ModelcostError("TensorRT could not build the engine (see TensorRT's log above)")
    _write_atomic(timing_cache, bytes(memoryview(cache.serialize())), cache_dir)
    return bytes(memoryview(serialized))


class TrtRunner:
    def __init__(self, model: BenchModel, precision: str, config: BenchConfig) -> None:
        import onnx

        self.trt = _trt()
        self.model, self.precision, self.config = model, precision, config
        self.device = DEVICE
        self.notes: list[str] = []
        t0 = time.perf_counter()
        src = model.onnx_file(config.cache_dir)
        if model.export_note:
            self.notes.append(model.export_note)
        self.gpu_name, self.cc = _gpu_identity()
        proto = onnx.load(str(src), load_external_data=False)
        self.output_names = [o.name for o in proto.graph.output]  # the reference's order, for the accuracy check
        self.plan = trt_plan.plan_precision(precision, self.trt.__version__, self.cc,
                                            model_has_qdq=trt_plan.has_qdq(proto))
        del proto
        self.notes.extend(self.plan.notes)
        key = model.content_hash()[:16]
        calibration = None
        if self.plan.onnx_transform.startswith("qdq"):
            calibration = [self._feed(b) for b in range(1, CALIBRATION_BATCHES + 1)]
        self.onnx_path = trt_plan.convert_for_plan(self.plan, src, config.cache_dir, key, calibration)
        self.build_s = time.perf_counter() - t0

    def _feed(self, seed: int) -> dict[str, Any]:
        from modelcost.bench.inputs import make_host_inputs

        specs = self.model.specs(1)
        arrays, _ = make_host_inputs(specs, int_high=self.model.int_high(), seed=10_000 + seed)
        return {s.name: a for s, a in zip(specs, arrays, strict=True)}

    def engine_path(self, batch_size: int) -> tuple[Path, dict[str, Any]]:
        shapes = trt_plan.static_profile(self.model.specs(batch_size))
        key = trt_plan.engine_cache_key(model_hash=self.model.content_hash(), shapes=shapes,
                                        trt_version=self.trt.__version__, gpu_name=self.gpu_name,
                                        compute_capability=self.cc, plan=self.plan)
        return Path(self.config.cache_dir) / "tensorrt" / f"{key}.engine", shapes

    def engine_bytes(self, batch_size: int, rebuild: bool = False) -> tuple[bytes, bool]:
        """(serialized engine, whether it came from the cache)."""
        path, shapes = self.engine_path(batch_size)
        if path.exists() and not rebuild:
            from modelcost.bench.cache import mark_used

            mark_used(path)
            return path.read_bytes(), True
        gpu = re.sub(r"[^A-Za-z0-9]+", "_", self.gpu_name)
        data = build_engine(self.trt, self.onnx_path, self.plan, shapes,
                            path.parent / f"timing-{self.trt.__version__}-{gpu}.cache", self.config.cache_dir)
        _write_atomic(path, data, self.config.cache_dir)
        return data, False

    def session(self, batch_size: int, host_inputs: Sequence[Any]) -> TrtSession:
        return TrtSession(self, batch_size, host_inputs)

    def close(self) -> None:
        pass


def bind_io(trt: Any, engine: Any, context: Any, host: dict[str, Any], device: str,
            output_order: Sequence[str] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """Device buffers for every I/O tensor of ``engine``: inputs filled from ``host`` and their shapes set on
    ``context`` first (output shapes are known only then), outputs allocated at the shapes TensorRT infers, and
    every address given to ``context.set_tensor_address``. Outputs come in ``output_order`` (the ONNX graph's)."""
    import numpy as np
    import torch

    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    is_input = {n: engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT for n in names}
    inputs: dict[str, Any] = {}
    for name in (n for n in names if is_input[n]):
        if engine.is_shape_inference_io(name):
            raise Unavailable(f"input {name!r} is a shape tensor (host memory): "
                              "not supported by modelcost's TensorRT runner")
        if name not in host:
            raise ModelcostError(f"TensorRT input {name!r} is not among the model's inputs ({', '.join(host)})")
        dtype = _torch_dtype(trt, engine.get_tensor_dtype(name))
        t = torch.from_numpy(np.ascontiguousarray(host[name])).to(device, dtype)
        if not context.set_input_shape(name, tuple(t.shape)):
            raise ModelcostError(f"TensorRT rejected shape {tuple(t.shape)} for input {name!r} "
                                 f"(engine shape {tuple(engine.get_tensor_shape(name))})")
        inputs[name] = t
    unresolved = context.infer_shapes()
    if unresolved:
        raise ModelcostError(f"TensorRT could not infer the shapes of {', '.join(map(str, unresolved))}")
    outputs: dict[str, Any] = {}
    rank = {n: i for i, n in enumerate(output_order)}
    for name in sorted((n for n in names if not is_input[n]), key=lambda n: rank.get(n, len(rank))):
        shape = tuple(int(d) for d in context.get_tensor_shape(name))
        if any(d < 0 for d in shape):
            raise Unavailable(f"output {name!r} has a data-dependent shape {shape} (needs an output allocator): "
                              "not supported by modelcost's TensorRT runner")
        outputs[name] = torch.empty(shape, dtype=_torch_dtype(trt, engine.get_tensor_dtype(name)), device=device)
    for name, t in {**inputs, **outputs}.items():
        if not context.set_tensor_address(name, t.data_ptr()):
            raise ModelcostError(f"TensorRT refused the buffer address of {name!r}")
    return inputs, outputs


class TrtSession:
    def __init__(self, runner: TrtRunner, batch_size: int, host_inputs: Sequence[Any]) -> None:
        trt = runner.trt
        self.runner, self.device, self.notes = runner, runner.device, []
        self.context = self.engine = None
        self.inputs: dict[str, Any] = {}
        self.outputs_: dict[str, Any] = {}
        self.stream = _new_stream()
        t0 = time.perf_counter()
        self.runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
        data, cached = runner.engine_bytes(batch_size)
        self.engine = self.runtime.deserialize_cuda_engine(data)
        if self.engine is None and cached:  # a stale or damaged cache file: build it again
            data, cached = runner.engine_bytes(batch_size, rebuild=True)
            self.engine = self.runtime.deserialize_cuda_engine(data)
        if self.engine is None:
            raise ModelcostError("TensorRT could not deserialize the engine (see TensorRT's log above)")
        self.notes.append("engine from the cache" if cached else "engine built now and cached")
        self.context = self.engine.create_execution_context()
        if self.context is None:
            raise OutOfMemory("TensorRT could not create an execution context (device memory)")
        specs = runner.model.specs(batch_size)
        host = {s.name: a for s, a in zip(specs, host_inputs, strict=True)}
        self.inputs, self.outputs_ = bind_io(trt, self.engine, self.context, host, self.device, runner.output_names)
        _synchronize()
        self.build_s = time.perf_counter() - t0
        self.timing = ("GPU time between CUDA events around execute_async_v3 on the engine's stream (inputs and "
                       "outputs already on the GPU; no host<->device copies)")

    def run(self) -> None:
        if not self.context.execute_async_v3(self.stream.cuda_stream):
            raise ModelcostError("TensorRT execute_async_v3 failed (see TensorRT's log above)")

    def outputs(self) -> list[Any]:
        self.stream.synchronize()
        return [t.float().cpu().numpy() if t.is_floating_point() else t.cpu().numpy() for t in self.outputs_.values()]

    def run_e2e(self, host_inputs: Sequence[Any]) -> None:
        import torch

        names = [s.name for s in self.runner.model.specs(1)]
        host = dict(zip(names, host_inputs, strict=True))
        with torch.cuda.stream(self.stream):
            for name, t in self.inputs.items():
                t.copy_(torch.from_numpy(host[name]))
            self.run()
            outs = [t.cpu() for t in self.outputs_.values()]
        del outs

    def memory_peak_bytes(self) -> tuple[int | None, str]:
        return None, "nvml"

    def close(self) -> None:
        if self.stream is not None:  # TensorRT may still be using the buffers: let it finish before they go
            self.stream.synchronize()
        self.context = None  # the context before the engine, the engine before its runtime
        self.engine = None
        self.runtime = None
        self.inputs, self.outputs_ = {}, {}
