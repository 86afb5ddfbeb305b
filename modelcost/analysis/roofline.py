"""Roofline arithmetic: where a measured config sits against the GPU's compute and memory roofs.

Pure functions of core types (CostReport, BenchResult, GpuSpec, LayerProfile); nothing is measured here.

Definitions (docs and the report say the same):

* FLOPs at the benchmark's batch = CostReport FLOPs / the CostReport's batch x the benchmark's batch
  (every counted op scales linearly with batch at fixed sequence / image size).
* Peak for the precision used (``peak_key``): fp32 -> FP32 CUDA cores (TF32 off), tf32 -> TF32 tensor,
  fp16 / bf16 -> tensor with FP32 accumulate, int8 -> INT8 tensor, fp8 -> FP8 tensor with FP32 accumulate.
  MFU = achieved FLOP/s / that peak; ``mfu_measured`` uses the measured matmul ceiling when one is cached.
* Bytes moved (``bytes_basis``), the traffic no layer-by-layer execution can avoid:
  weights read once at the compute precision's element size (fp32/tf32 4 B, fp16/bf16 2 B, int8/fp8 1 B;
  a model already stored smaller counts its stored size) + inputs read once + outputs written once
  + every conv / matmul / attention output larger than the L2 cache, written once and read back once at the
  compute precision (it cannot stay on chip until its consumer runs). Elementwise, normalisation and
  activation outputs are assumed fused into the op that produces them, and outputs that fit in L2 are
  assumed to stay there. An unknown L2 size counts every conv / matmul output.
* Arithmetic intensity = FLOPs / bytes moved; ridge point = peak FLOP/s / peak bytes/s.
* Lower bound = max(FLOPs / peak FLOP/s, bytes / peak bandwidth); ``roof`` says which term is larger.
* Bound class: ``roof`` ("compute" or "memory"), unless the measured latency is more than
  ``OVERHEAD_RATIO`` (10x) the lower bound: then "overhead" - neither roof explains the time; kernel launches,
  host work, synchronisation or badly under-filled kernels do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from modelcost.analysis.summary import dtype_bytes
from modelcost.core.errors import ModelcostError
from modelcost.core.types import (
    BenchResult,
    CostReport,
    GpuSpec,
    LayerCost,
    LayerProfile,
    LayerRoofline,
    LayerTime,
    RooflinePoint,
    WhatIf,
)

OVERHEAD_RATIO = 10.0
ELEMENT_BYTES = {"fp64": 8.0, "fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "int8": 1.0, "fp8": 1.0,
                 "int4": 0.5, "fp4": 0.5}


def peak_key(precision: str) -> str:
    """The peak that bounds a benchmark precision ("fp16-autocast" -> "fp16", "fp32" -> "fp32")."""
    p = precision.lower()
    for needle, key in (("fp8", "fp8"), ("int8", "int8"), ("int4", "int4"), ("fp4", "fp4"), ("bf16", "bf16"),
                        ("fp16", "fp16"), ("half", "fp16"), ("tf32", "tf32"), ("fp32", "fp32"), ("fp64", "fp64")):
        if needle in p:
            return key
    raise ModelcostError(f"precision {precision!r}: no peak for it (use fp32, tf32, fp16, bf16, int8 or fp8)")


def cost_batch_size(cost: CostReport) -> int:
    """The batch the static analysis was done at: CostReport.batch_size, else the first input's first dim."""
    if cost.batch_size:
        return int(cost.batch_size)
    for spec in cost.inputs:
        if spec.shape and isinstance(spec.shape[0], int) and spec.shape[0] > 0:
            return int(spec.shape[0])
    return 1


def _activation_elements(layer: LayerCost) -> float:
    """Output elements of a layer (its activation bytes over its dtype's size; float32 when unknown)."""
    try:
        size = dtype_bytes(layer.macs_dtype or "float32")
    except ValueError:
        size = 4.0
    return layer.activation_bytes / size if size else 0.0


def _is_lookup(layer: LayerCost) -> bool:
    """An embedding / gather layer: it reads only the rows it is asked for, not its whole table."""
    op = layer.op.lower()
    return "embedding" in op or op == "gather"


def _lookup_tables(cost: CostReport) -> list[LayerCost]:
    """Lookup layers whose table no matmul also reads in full (a table tied to an output projection, i.e. a
    MAC layer with the same parameter count, is read whole by that layer and stays in the weights)."""
    mac_params = {layer.params for layer in cost.layers if layer.macs > 0 and layer.params}
    return [layer for layer in cost.layers if _is_lookup(layer) and layer.params and layer.params not in mac_params]


def model_traffic(cost: CostReport, batch_size: int, key: str, l2_cache_bytes: int | None) -> tuple[int, str]:
    """Bytes a layer-by-layer execution must move at ``batch_size`` and precision ``key``, and the basis."""
    elem = ELEMENT_BYTES.get(key, 4.0)
    scale = batch_size / cost_batch_size(cost)
    tables = _lookup_tables(cost)
    table_params = sum(layer.params for layer in tables)
    dense_params = max(cost.params.total - table_params, 0)
    stored = cost.storage.bytes * dense_params / cost.params.total if cost.params.total and cost.storage.bytes else None
    weights = min(stored or dense_params * elem, dense_params * elem)
    rows = sum(_activation_elements(layer) * scale * elem for layer in tables)  # the rows gathered
    io = (cost.memory.input_bytes + cost.memory.output_bytes) * scale
    big = 0.0
    count = 0
    for layer in cost.layers:
        if layer.macs <= 0:
            continue
        out_bytes = _activation_elements(layer) * scale * elem
        if l2_cache_bytes is None or out_bytes > l2_cache_bytes:
            big += 2 * out_bytes
            count += 1
    l2 = f"the {l2_cache_bytes / 2**20:.0f} MiB L2" if l2_cache_bytes else "L2 (size unknown: all counted)"
    lookup = f" + the rows {len(tables)} embedding tables gather ({rows / 1e6:.2f} MB)" if tables else ""
    basis = (f"weights once at {key} ({weights / 1e6:.1f} MB){lookup} + inputs + outputs ({io / 1e6:.1f} MB) + "
             f"{count} conv/matmul outputs larger than {l2}, written and read once ({big / 1e6:.1f} MB); "
             "elementwise/norm outputs assumed fused")
    return int(weights + rows + io + big), basis


def _is_gpu_result(result: BenchResult) -> bool:
    """A result measured on a GPU: neither its device nor its backend name says CPU."""
    return not result.device.lower().startswith("cpu") and "cpu" not in result.backend.lower()


def roofline_point(cost: CostReport, result: BenchResult, gpu: GpuSpec) -> RooflinePoint | None:
    """The roofline of one measured config, or None when it did not run, ran on the CPU, or the GPU has no
    peak / bandwidth for its precision."""
    if result.status != "ok" or result.latency_ms is None or result.latency_ms.p50 <= 0 or not _is_gpu_result(result):
        return None
    try:
        key = peak_key(result.precision)
    except ModelcostError:
        return None
    peak = gpu.peak_tflops.get(key)
    if not peak or not gpu.bandwidth_gbps or cost.compute.flops <= 0:
        return None
    flops = round(cost.compute.flops * result.batch_size / cost_batch_size(cost))
    moved, basis = model_traffic(cost, result.batch_size, key, gpu.l2_cache_bytes)
    measured_s = result.latency_ms.p50 / 1e3
    compute_ms = flops / (peak * 1e12) * 1e3
    memory_ms = moved / (gpu.bandwidth_gbps * 1e9) * 1e3
    lower_ms = max(compute_ms, memory_ms)
    roof = "compute" if compute_ms >= memory_ms else "memory"
    ratio = result.latency_ms.p50 / lower_ms if lower_ms > 0 else float("inf")
    achieved = flops / measured_s / 1e12
    measured_peak = gpu.measured_tflops.get(key)
    return RooflinePoint(
        achieved_tflops=achieved,
        peak_tflops=peak,
        mfu=achieved / peak,
        achieved_gbps=moved / measured_s / 1e9,
        peak_gbps=gpu.bandwidth_gbps,
        intensity=flops / moved if moved else float("inf"),
        ridge_point=peak * 1e12 / (gpu.bandwidth_gbps * 1e9),
        bound="overhead" if ratio > OVERHEAD_RATIO else roof,
        lower_bound_ms=lower_ms,
        measured_over_bound=ratio,
        bytes_moved=moved,
        bytes_basis=basis,
        measured_peak_tflops=measured_peak,
        mfu_measured=achieved / measured_peak if measured_peak else None,
        roof=roof,
        compute_ms=compute_ms,
        memory_ms=memory_ms,
        peak_key=key,
        flops=flops,
    )


def roofline_points(cost: CostReport, results: Iterable[BenchResult], gpu: GpuSpec) -> list[RooflinePoint | None]:
    return [roofline_point(cost, r, gpu) for r in results]


def what_if(cost: CostReport, gpu: GpuSpec, precision: str = "fp16", batch_size: int | None = None) -> WhatIf:
    """The fastest the model could possibly run on ``gpu``: max(FLOPs / peak, bytes / bandwidth)."""
    key = peak_key(precision)
    peak = gpu.peak_tflops.get(key)
    if not peak:
        have = ", ".join(k for k in ("fp32", "tf32", "fp16", "bf16", "int8", "fp8") if k in gpu.peak_tflops)
        raise ModelcostError(f"{gpu.name} has no {key} peak in the table (it has: {have})")
    if not gpu.bandwidth_gbps:
        raise ModelcostError(f"{gpu.name}: memory bandwidth unknown, no lower bound")
    batch = batch_size or cost_batch_size(cost)
    flops = round(cost.compute.flops * batch / cost_batch_size(cost))
    moved, basis = model_traffic(cost, batch, key, gpu.l2_cache_bytes)
    compute_ms = flops / (peak * 1e12) * 1e3
    memory_ms = moved / (gpu.bandwidth_gbps * 1e9) * 1e3
    lower = max(compute_ms, memory_ms)
    return WhatIf(
        gpu=gpu.name, precision=precision, peak_key=key, batch_size=batch, flops=flops, bytes_moved=moved,
        bytes_basis=basis, peak_tflops=peak, peak_gbps=gpu.bandwidth_gbps, compute_ms=compute_ms,
        memory_ms=memory_ms, lower_bound_ms=lower, bound="compute" if compute_ms >= memory_ms else "memory",
        max_throughput_ips=batch / (lower / 1e3) if lower > 0 else float("inf"),
    )


# --------------------------------------------------------------------------------------------------
# Per layer


def _layer_bytes(layer: LayerCost, input_bytes: float, scale: float, elem: float) -> float:
    """Weights at the compute precision (for a lookup: the rows it gathers, as many as its output) + this
    layer's output + its input (estimated, see layer_rooflines)."""
    out = _activation_elements(layer) * scale * elem
    weights = out if _is_lookup(layer) else layer.params * elem
    return weights + out + input_bytes


def _owner(name: str, candidates: set[str]) -> str | None:
    """The profiled unit a static layer belongs to: the same name, else the longest dotted prefix
    ("layer1.0.conv1" -> "layer1.0"), else a profiled name that starts with it (ONNX fused node names)."""
    if name in candidates:
        return name
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in candidates:
            return prefix
    starts = [c for c in candidates if c.startswith(name)]
    return min(starts, key=len) if starts else None


def _module_path(onnx_name: str) -> str | None:
    """'/encoder.0/output/dense/MatMul' (torch.onnx.export's node names) -> 'encoder.0.output.dense'."""
    if not onnx_name.startswith("/"):
        return None
    parts = onnx_name.strip("/").split("/")[:-1]
    return ".".join(parts) if parts else None


def _profile_units(profile: LayerProfile, static_names: set[str]) -> list[LayerTime]:
    """Profiled units to join with the static layers. When the profile is ONNX Runtime's (node names like
    '/encoder.0/output/dense/MatMul') but the static analysis is PyTorch's (module names), the nodes are
    summed per module path (a fused node takes the path of the first original node it covers)."""
    onnx_style = any(lt.name.startswith("/") or any(c.startswith("/") for c in lt.covers) for lt in profile.layers)
    if not onnx_style or any(name.startswith("/") for name in static_names):
        return list(profile.layers)
    units: dict[str, LayerTime] = {}
    for lt in profile.layers:
        path = _module_path(lt.name) or next((m for c in lt.covers if (m := _module_path(c))), None) or lt.name
        unit = units.setdefault(path, LayerTime(name=path, op=lt.op, time_ms=0.0, calls=0))
        unit.time_ms += lt.time_ms
        unit.calls += lt.calls
        if unit.op != lt.op:
            unit.op = "nodes"
    return list(units.values())


def layer_rooflines(
    cost: CostReport, gpu: GpuSpec, precision: str, batch_size: int | None = None,
    profile: LayerProfile | None = None,
) -> list[LayerRoofline]:
    """Per-layer intensity and bound class against ``gpu``'s ridge point, with measured time when a profile
    is given ("where the time goes vs where the FLOPs are").

    A layer's bytes = its weights at the compute precision + its output + its input, the input estimated
    as the output of the layer before it in execution order (the graph inputs for the first layer): the
    static analysis does not keep per-layer input sizes. With a profile, static layers are folded into the
    profiled unit that owns them (same name, or the enclosing module); rows are sorted by measured time,
    else by FLOPs."""
    key = peak_key(precision)
    peak = gpu.peak_tflops.get(key)
    if not peak or not gpu.bandwidth_gbps:
        raise ModelcostError(f"{gpu.name} has no {key} peak or no bandwidth: no per-layer roofline")
    batch = batch_size or cost_batch_size(cost)
    scale = batch / cost_batch_size(cost)
    elem = ELEMENT_BYTES.get(key, 4.0)
    ridge = peak * 1e12 / (gpu.bandwidth_gbps * 1e9)
    total_flops = cost.compute.flops * scale or 1.0
    rows: dict[str, dict] = {}
    units = _profile_units(profile, {layer.name for layer in cost.layers}) if profile else []
    times = {lt.name: lt for lt in units}
    names = set(times)
    covered = {member: lt.name for lt in units for member in lt.covers}
    prev_out = float(cost.memory.input_bytes * scale)  # graph inputs, as stored
    for layer in cost.layers:
        moved = _layer_bytes(layer, prev_out, scale, elem)
        prev_out = _activation_elements(layer) * scale * elem
        owner = None
        if profile:
            owner = layer.name if layer.name in names else (covered.get(layer.name) or _owner(layer.name, names))
        op = times[owner].op if owner and times[owner].op != "nodes" else layer.op
        row = rows.setdefault(owner or layer.name, {"op": op,
                                                     "flops": 0.0, "bytes": 0.0, "layers": 0})
        row["flops"] += layer.flops * scale
        row["bytes"] += moved
        row["layers"] += 1
    for name, lt in times.items():  # profiled units with no static layer (time without counted FLOPs)
        rows.setdefault(name, {"op": lt.op, "flops": 0.0, "bytes": 0.0, "layers": 0})
    total_time = sum(lt.time_ms for lt in times.values()) or None
    out = []
    for name, r in rows.items():
        intensity = r["flops"] / r["bytes"] if r["bytes"] else float("inf") if r["flops"] else 0.0
        lower = max(r["flops"] / (peak * 1e12), r["bytes"] / (gpu.bandwidth_gbps * 1e9)) * 1e3
        lt = times.get(name)
        time_ms = lt.time_ms if lt else None
        out.append(LayerRoofline(
            name=name, op=r["op"], flops=int(r["flops"]), flops_share=r["flops"] / total_flops,
            bytes_moved=int(r["bytes"]), intensity=intensity, bound="compute" if intensity >= ridge else "memory",
            lower_bound_ms=lower, time_ms=time_ms,
            time_share=(time_ms / total_time) if (time_ms is not None and total_time) else None,
            achieved_tflops=(r["flops"] / (time_ms / 1e3) / 1e12) if time_ms else None, layers=r["layers"],
        ))
    out.sort(key=lambda row: (row.time_ms or 0.0, row.flops), reverse=True)
    return out


def ridge_point(gpu: GpuSpec, precision: str) -> float | None:
    key = peak_key(precision)
    peak = gpu.peak_tflops.get(key)
    return peak * 1e12 / (gpu.bandwidth_gbps * 1e9) if peak and gpu.bandwidth_gbps else None


def precisions_of(results: Sequence[BenchResult]) -> list[str]:
    """The distinct peak keys of the GPU results, in first-seen order."""
    seen: list[str] = []
    for r in results:
        if r.status == "ok" and _is_gpu_result(r):
            try:
                key = peak_key(r.precision)
            except ModelcostError:
                continue
            if key not in seen:
                seen.append(key)
    return seen
