"""TensorRT engines built from ONNX through TensorRT's Python API, cached, and timed on a PyTorch stream.

Build (``build_engine``): ``trt.Builder`` -> ``create_network`` (STRONGLY_TYPED where the plan says so) ->
``trt.OnnxParser.parse_from_file`` -> ``create_builder_config`` (plan's flags; an optimization profile with
min = opt = max = the benchmarked shape for every dynamic input; a timing cache kept per TensorRT version and GPU)
-> ``build_serialized_network``. The serialized engine is cached under ``<cache>/tensorrt/<key>.engine``, the key
covering the model hash, shapes, TensorRT version, GPU and plan (``trt_plan.engine_cache_key``).
Run: ``Runtime.deserialize_cuda_engine`` -> ``create_execution_context`` -> ``set_input_shape`` /
``set_tensor_address`` for PyTorch-allocated buffers -> ``execute_async_v3(stream)``.

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


def make(entry: BackendInfo) -> TensorRTBackend:
    return TensorRTBackend(entry)


def _trt() -> Any:
    try:
        import tensorrt
    except ImportError as exc:
        raise Unavailable(TRT_MISSING) from exc
    return tensorrt


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
        import torch

        try:
            trt_plan.plan_precision(precision, _trt().__version__, torch.cuda.get_device_capability())
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


def build_engine(trt: Any, onnx_path: Path, plan: trt_plan.TrtPlan, shapes: dict[str, Any], timing_cache: Path) -> bytes:
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    flags = 0
    if plan.strongly_typed:
        flags |= 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise ModelcostError(f"TensorRT's ONNX parser failed: {errors or 'no detail'}")
    config = builder.create_builder_config()
    for flag in plan.builder_flags:
        config.set_flag(getattr(trt.BuilderFlag, flag))
    for flag in plan.clear_flags:
        if hasattr(trt.BuilderFlag, flag):
            config.clear_flag(getattr(trt.BuilderFlag, flag))
    dynamic = [network.get_input(i) for i in range(network.num_inputs) if any(d < 0 for d in network.get_input(i).shape)]
    if dynamic:
        profile = builder.create_optimization_profile()
        for tensor in dynamic:
            lo, opt, hi = shapes[tensor.name]
            profile.set_shape(tensor.name, lo, opt, hi)
        config.add_optimization_profile(profile)
    cache = config.create_timing_cache(timing_cache.read_bytes() if timing_cache.exists() else b"")
    config.set_timing_cache(cache, ignore_mismatch=False)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise ModelcostError("TensorRT could not build the engine (see TensorRT's log above)")
    timing_cache.parent.mkdir(parents=True, exist_ok=True)
    timing_cache.write_bytes(bytes(cache.serialize()))
    return bytes(serialized)


class TrtRunner:
    def __init__(self, model: BenchModel, precision: str, config: BenchConfig) -> None:
        import onnx
        import torch

        self.trt = _trt()
        self.model, self.precision, self.config = model, precision, config
        self.device = "cuda"
        self.notes: list[str] = []
        t0 = time.perf_counter()
        src = model.onnx_file(config.cache_dir)
        if model.export_note:
            self.notes.append(model.export_note)
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.gpu_name, self.cc = props.name, (props.major, props.minor)
        self.plan = trt_plan.plan_precision(precision, self.trt.__version__, self.cc,
                                            model_has_qdq=trt_plan.has_qdq(onnx.load(str(src), load_external_data=False)))
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

    def engine_bytes(self, batch_size: int) -> tuple[bytes, bool]:
        """(serialized engine, whether it came from the cache)."""
        shapes = trt_plan.static_profile(self.model.specs(batch_size))
        key = trt_plan.engine_cache_key(model_hash=self.model.content_hash(), shapes=shapes,
                                        trt_version=self.trt.__version__, gpu_name=self.gpu_name,
                                        compute_capability=self.cc, plan=self.plan)
        cache = Path(self.config.cache_dir) / "tensorrt"
        path = cache / f"{key}.engine"
        if path.exists():
            return path.read_bytes(), True
        gpu = re.sub(r"[^A-Za-z0-9]+", "_", self.gpu_name)
        data = build_engine(self.trt, self.onnx_path, self.plan, shapes,
                            cache / f"timing-{self.trt.__version__}-{gpu}.cache")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{time.time_ns()}")
        tmp.write_bytes(data)
        tmp.replace(path)
        return data, False

    def session(self, batch_size: int, host_inputs: Sequence[Any]) -> TrtSession:
        return TrtSession(self, batch_size, host_inputs)

    def close(self) -> None:
        pass


class TrtSession:
    def __init__(self, runner: TrtRunner, batch_size: int, host_inputs: Sequence[Any]) -> None:
        import torch

        trt = runner.trt
        self.runner, self.device, self.notes = runner, "cuda", []
        self.stream = torch.cuda.Stream()
        t0 = time.perf_counter()
        data, cached = runner.engine_bytes(batch_size)
        self.notes.append("engine from the cache" if cached else "engine built now and cached")
        self.engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(data)
        if self.engine is None:
            raise ModelcostError("TensorRT could not deserialize the engine")
        self.context = self.engine.create_execution_context()
        if self.context is None:
            raise OutOfMemory("TensorRT could not create an execution context (device memory)")
        specs = runner.model.specs(batch_size)
        host = {s.name: a for s, a in zip(specs, host_inputs, strict=True)}
        self.inputs: dict[str, Any] = {}
        self.outputs_: dict[str, Any] = {}
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        for name in names:
            if self.engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
                dtype = _torch_dtype(trt, self.engine.get_tensor_dtype(name))
                t = torch.from_numpy(host[name].copy()).to("cuda", dtype)
                self.context.set_input_shape(name, tuple(t.shape))
                self.context.set_tensor_address(name, t.data_ptr())
                self.inputs[name] = t
        for name in names:
            if self.engine.get_tensor_mode(name) != trt.TensorIOMode.INPUT:
                dtype = _torch_dtype(trt, self.engine.get_tensor_dtype(name))
                t = torch.empty(tuple(self.context.get_tensor_shape(name)), dtype=dtype, device="cuda")
                self.context.set_tensor_address(name, t.data_ptr())
                self.outputs_[name] = t
        torch.cuda.synchronize()
        self.build_s = time.perf_counter() - t0
        self.timing = ("GPU time between CUDA events around execute_async_v3 on the engine's stream (inputs and "
                       "outputs already on the GPU; no host<->device copies)")

    def run(self) -> None:
        if not self.context.execute_async_v3(self.stream.cuda_stream):
            raise ModelcostError("TensorRT execute_async_v3 failed")

    def outputs(self) -> list[Any]:
        self.stream.synchronize()
        return [t.float().cpu().numpy() if t.is_floating_point() else t.cpu().numpy() for t in self.outputs_.values()]

    def run_e2e(self, host_inputs: Sequence[Any]) -> None:
        import torch

        specs = self.runner.model.specs(1)
        host = {s.name: a for s, a in zip(specs, host_inputs, strict=True)}
        with torch.cuda.stream(self.stream):
            for name, t in self.inputs.items():
                t.copy_(torch.from_numpy(host[name]))
            self.run()
            outs = [t.cpu() for t in self.outputs_.values()]
        del outs

    def memory_peak_bytes(self) -> tuple[int | None, str]:
        return None, "nvml"

    def close(self) -> None:
        self.context = None
        self.engine = None
        self.inputs, self.outputs_ = {}, {}
