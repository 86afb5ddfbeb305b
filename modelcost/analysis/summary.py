"""Assemble a CostReport from per-layer costs and the parameter list: the part both counters share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from modelcost.core.types import (
    ComputeStats,
    CostReport,
    LayerCost,
    MemoryStats,
    ModelInfo,
    ParamStats,
    StorageStats,
    TensorSpec,
)

DTYPE_BYTES: dict[str, float] = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2, "uint16": 2,
    "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "int4": 0.5, "uint4": 0.5, "complex64": 8, "complex128": 16, "float4_e2m1": 0.5,
    "uint32": 4, "uint64": 8, "string": 0,
    "float8_e8m0": 1, "int2": 0.25, "uint2": 0.25, "float6_e2m3": 0.75, "float6_e3m2": 0.75,  # newer ONNX types
}


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of a dtype name ("float32" -> 4, "int4" -> 0.5)."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}") from None


def tensor_bytes(shape: Sequence[int], dtype: str) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return int(n * dtype_bytes(dtype) + 0.5)  # int4: half a byte per element, rounded up per tensor


@dataclass(frozen=True)
class ParamTensor:
    """One distinct parameter (or ONNX weight initializer) tensor, counted once however often it is used."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    trainable: bool | None = None  # None: not known (ONNX)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def size_bytes(self) -> int:
        return tensor_bytes(self.shape, self.dtype)


def param_and_storage_stats(
    params: Iterable[ParamTensor], shared: int = 0, buffers: Iterable[ParamTensor] = (), constants: int = 0
) -> tuple[ParamStats, StorageStats]:
    """Parameters by dtype and the storage they take now and would take at fp16 / int8 / int4
    (each element at 2, 1 and 0.5 bytes; 0.5 rounds up per tensor)."""
    plist = list(params)
    blist = list(buffers)
    by_dtype: Counter[str] = Counter()
    bytes_by_dtype: Counter[str] = Counter()
    trainable = 0
    trainable_known = any(p.trainable is not None for p in plist)
    for p in plist:
        by_dtype[p.dtype] += p.numel
        bytes_by_dtype[p.dtype] += p.size_bytes
        trainable += p.numel if p.trainable else 0
    total = sum(by_dtype.values())
    pstats = ParamStats(
        total=total,
        trainable=trainable if trainable_known else None,
        by_dtype=dict(by_dtype),
        shared=shared,
        buffers=sum(b.numel for b in blist),
        constants=constants,
    )
    sstats = StorageStats(
        bytes=sum(bytes_by_dtype.values()),
        by_dtype=dict(bytes_by_dtype),
        buffer_bytes=sum(b.size_bytes for b in blist),
        fp16_bytes=2 * total,
        int8_bytes=total,
        int4_bytes=sum((p.numel + 1) // 2 for p in plist),
    )
    return pstats, sstats


def compute_stats(
    layers: Sequence[LayerCost],
    uncounted_ops: dict[str, int],
    zero_cost_ops: dict[str, int],
    incomplete_reasons: Sequence[str] = (),
) -> ComputeStats:
    """Totals of ``layers``. The result is *complete* only when no op is uncounted and no other reason is given:
    an uncounted op may carry MACs (a MatMul whose shape is unknown, a custom op), so the totals are then lower
    bounds. Each uncounted op without a reason of its own gets one ("Op xN: not counted")."""
    macs_by_dtype: Counter[str] = Counter()
    flops_by_op: Counter[str] = Counter()
    macs_by_op: Counter[str] = Counter()
    for layer in layers:
        if layer.macs:
            macs_by_dtype[layer.macs_dtype or "unknown"] += layer.macs
            macs_by_op[layer.op] += layer.macs
        if layer.flops:
            flops_by_op[layer.op] += layer.flops
    return ComputeStats(
        macs=sum(layer.macs for layer in layers),
        flops=sum(layer.flops for layer in layers),
        macs_by_dtype=dict(macs_by_dtype),
        flops_by_op=dict(flops_by_op.most_common()),
        macs_by_op=dict(macs_by_op.most_common()),
        uncounted_ops=dict(sorted(uncounted_ops.items())),
        zero_cost_ops=dict(sorted(zero_cost_ops.items())),
        complete=not uncounted_ops and not incomplete_reasons,
        incomplete_reasons=_reasons(uncounted_ops, incomplete_reasons),
    )


def _reasons(uncounted_ops: dict[str, int], given: Sequence[str]) -> list[str]:
    reasons = list(dict.fromkeys(given))
    for op, n in sorted(uncounted_ops.items()):
        if not any(r.startswith((f"{op} x", f"{op}:")) for r in reasons):
            reasons.append(f"{op} x{n}: not counted (no formula for this op)")
    return reasons


def build_report(
    model: ModelInfo,
    inputs: list[TensorSpec],
    outputs: list[TensorSpec],
    layers: list[LayerCost],
    params: ParamStats,
    storage: StorageStats,
    uncounted_ops: dict[str, int],
    zero_cost_ops: dict[str, int],
    activation_bytes: int,
    peak_activation_bytes: int,
    notes: list[str] | None = None,
    problems: list[str] | None = None,
    batch_size: int | None = None,
    incomplete_reasons: Sequence[str] = (),
) -> CostReport:
    """The one place a CostReport is put together, so both counters fill it alike.

    Arithmetic intensity = FLOPs / (weight bytes + input bytes + activation bytes written), the bytes an
    unfused execution moves at least once."""
    compute = compute_stats(layers, uncounted_ops, zero_cost_ops, incomplete_reasons)
    input_bytes = sum(tensor_bytes(t.shape, t.dtype) for t in inputs if t.is_static)  # type: ignore[arg-type]
    output_bytes = sum(tensor_bytes(t.shape, t.dtype) for t in outputs if t.is_static)  # type: ignore[arg-type]
    moved = storage.bytes + input_bytes + activation_bytes
    memory = MemoryStats(
        weight_bytes=storage.bytes,
        input_bytes=input_bytes,
        output_bytes=output_bytes,
        activation_bytes=activation_bytes,
        peak_activation_bytes=peak_activation_bytes,
        arithmetic_intensity=compute.flops / moved if moved else 0.0,
    )
    storage.file_size_bytes = model.file_size_bytes if storage.file_size_bytes is None else storage.file_size_bytes
    return CostReport(
        model=model, inputs=inputs, outputs=outputs, params=params, storage=storage, compute=compute,
        memory=memory, layers=layers, notes=list(notes or []), problems=list(problems or []), batch_size=batch_size,
    )


def peak_live_bytes(
    steps: Sequence[tuple[Sequence[tuple[object, int]], Sequence[object]]], keep: Iterable[object] = ()
) -> int:
    """Peak bytes of simultaneously live activations when ``steps`` run in this (topological) order.

    Each step is (produced, consumed): produced is [(tensor id, bytes)], consumed is [tensor id]. A tensor is
    live from the step that produces it through its last consumer; ids in ``keep`` (the graph's outputs) stay
    live to the end. A step's inputs and outputs are live together while it runs."""
    last_use: dict[object, int] = {}
    for i, (produced, consumed) in enumerate(steps):
        for tid, _ in produced:
            last_use.setdefault(tid, i)
        for tid in consumed:
            last_use[tid] = i
    for tid in keep:
        last_use[tid] = len(steps)
    live: dict[object, int] = {}
    peak = 0
    for i, (produced, _) in enumerate(steps):
        for tid, nbytes in produced:
            live[tid] = nbytes
        peak = max(peak, sum(live.values()))
        for tid in [t for t in live if last_use.get(t, i) <= i]:
            del live[tid]
    return peak
