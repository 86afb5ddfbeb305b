"""Why a candidate is not faster, from what was measured: the kernels ONNX Runtime actually chose for the
candidate (its optimised graph), the roofline bound class of the base at that batch, and how latency scaled
with batch size in the comparison's own measurements. Every hint names the measurement it comes from.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.units import number

INT8_OPS = {"QGemm", "ConvInteger", "MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "QAttention",
            "DynamicQuantizeLSTM", "QEmbedLayerNormalization", "MatMulNBits"}
FLOAT_COMPUTE = {"Conv", "FusedConv", "NhwcConv", "Gemm", "FusedGemm", "MatMul", "FusedMatMul", "Attention",
                 "MultiHeadAttention", "ConvTranspose"}
# ONNX Runtime places small shape computations on the CPU on purpose: not counted as fallbacks.
SHAPE_OPS = {"Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Reshape", "Slice", "Constant",
             "ConstantOfShape", "Range", "Cast", "Expand", "Identity", "MemcpyToHost", "MemcpyFromHost"}
_PROVIDERS = {"ort-cpu": "CPUExecutionProvider", "ort-cuda": "CUDAExecutionProvider"}


@dataclass
class GraphFacts:
    """Op counts of the graph ONNX Runtime runs after its optimisations, for one provider."""

    backend: str
    int8_ops: int = 0
    quantize: int = 0
    dequantize: int = 0
    float_compute: int = 0
    cast: int = 0
    float16_weights: int = 0  # initializers still float16 after optimisation
    float32_weights: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    nodes_by_provider: dict[str, int] = field(default_factory=dict)  # from ORT profiling; empty when not run
    fallback_ops: dict[str, int] = field(default_factory=dict)  # op -> nodes run by another provider than asked


def is_int8_op(op: str) -> bool:
    return op.startswith(("QLinear", "QOrdered")) or op in INT8_OPS


def ort_graph_facts(model_path: str | Path, backend: str, feeds: dict[str, Any] | None = None) -> GraphFacts | None:
    """Ask ONNX Runtime for the optimised graph of ``model_path`` on ``backend``'s provider and count what runs;
    with ``feeds``, also run it once under ORT's profiler to see which provider ran each node. None for
    backends whose graph is compiled away (TensorRT) or not ONNX Runtime."""
    provider = _PROVIDERS.get(backend)
    if provider is None:
        return None
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory(prefix="modelcost-opt-") as tmp:
        out = Path(tmp) / "optimized.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.optimized_model_filepath = str(out)
        opts.log_severity_level = 3
        if feeds is not None:
            opts.enable_profiling = True
            opts.profile_file_prefix = str(Path(tmp) / "prof")
        providers = [provider] if provider == "CPUExecutionProvider" else [provider, "CPUExecutionProvider"]
        from modelcost.bench.backends.ort import quiet_ort_logs

        quiet_ort_logs(ort)
        session = ort.InferenceSession(str(model_path), sess_options=opts, providers=providers)
        graph = onnx.load(str(out), load_external_data=False).graph
        placement: list[tuple[str, str]] = []
        if feeds is not None:
            session.run(None, feeds)
            events = json.loads(Path(session.end_profiling()).read_text())
            placement = [(e["args"].get("op_name", "?"), e["args"].get("provider", "?")) for e in events
                         if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")]
    facts = GraphFacts(backend)
    facts.float16_weights = sum(t.data_type == onnx.TensorProto.FLOAT16 for t in graph.initializer)
    facts.float32_weights = sum(t.data_type == onnx.TensorProto.FLOAT for t in graph.initializer)
    for node in graph.node:
        facts.ops[node.op_type] = facts.ops.get(node.op_type, 0) + 1
    facts.int8_ops = sum(n for op, n in facts.ops.items() if is_int8_op(op))
    facts.quantize = facts.ops.get("QuantizeLinear", 0) + facts.ops.get("DynamicQuantizeLinear", 0)
    facts.dequantize = facts.ops.get("DequantizeLinear", 0)
    facts.float_compute = sum(n for op, n in facts.ops.items() if op in FLOAT_COMPUTE)
    facts.cast = facts.ops.get("Cast", 0)
    for op, prov in placement:
        facts.nodes_by_provider[prov] = facts.nodes_by_provider.get(prov, 0) + 1
        if prov != provider and op not in SHAPE_OPS:
            facts.fallback_ops[op] = facts.fallback_ops.get(op, 0) + 1
    return facts


def _kernel_hints(precision: str, backend: str, facts: GraphFacts | None) -> list[str]:
    out: list[str] = []
    if facts is None:
        return out
    if facts.fallback_ops:
        n = sum(facts.fallback_ops.values())
        ops = ", ".join(f"{op} x{c}" for op, c in sorted(facts.fallback_ops.items(), key=lambda kv: -kv[1]))
        out.append(f"{n} nodes of the candidate fell back from {_PROVIDERS[backend]} to another provider "
                   f"(ONNX Runtime profiling: {ops}), with host<->device copies around them")
    if precision == "int8" and facts.int8_ops == 0 and facts.dequantize:
        why = (" (ONNX Runtime's CUDA provider has no INT8 convolution kernels: TensorRT — the tensorrt or "
               "ort-tensorrt backend — runs Q/DQ models in INT8)" if backend == "ort-cuda" else "")
        out.append(f"INT8 kernels not used by {backend}: after ONNX Runtime's optimisation the candidate still has "
                   f"{facts.dequantize} DequantizeLinear and {facts.quantize} QuantizeLinear nodes and no integer op "
                   f"(QLinearConv, QGemm, MatMulInteger, ...); its {facts.float_compute} Conv/Gemm/MatMul nodes run "
                   f"in float, with the quantize/dequantize work on top{why}")
    elif precision == "int8" and facts.int8_ops:
        left = f"; {facts.float_compute} float Conv/Gemm/MatMul nodes remain" if facts.float_compute else ""
        out.append(f"INT8 kernels are used on {backend} ({facts.int8_ops} integer ops after optimisation{left})")
    if precision == "fp16" and facts.float16_weights == 0 and facts.float32_weights:
        out.append(f"FP16 kernels not used by {backend}: after ONNX Runtime's optimisation all "
                   f"{facts.float32_weights} weight tensors are float32 again (it casts ops that have no FP16 kernel "
                   f"back to float32 and folds the casts; {facts.cast} Cast nodes remain), so the candidate computes "
                   "in float32")
    elif precision == "fp16" and facts.cast:
        out.append(f"{facts.cast} Cast nodes between float16 and float32 remain after optimisation on {backend} "
                   "(ops without FP16 kernels run in float32)")
    return out


def hints(*, backend: str, batch_size: int, candidate_precision: str, faster: bool, base_ms: float,
          base_by_batch: dict[int, float], bound: str | None = None, over_bound: float | None = None,
          facts: GraphFacts | None = None) -> list[str]:
    """Reasons the speedup is absent (``faster`` False) or small, from: the kernels used (``facts``), the base's
    roofline bound class at this batch (``bound``, ``over_bound`` = measured / lower bound), and the base's
    measured median latency at each batch size on this backend (``base_by_batch``)."""
    out = _kernel_hints(candidate_precision, backend, facts)
    if bound == "overhead":
        ratio = f" (measured {over_bound:.0f}x the roofline lower bound)" if over_bound else ""
        out.append(f"overhead-bound at batch {batch_size}{ratio}: kernel launches and host work, not arithmetic or "
                   "memory traffic, set the latency, so cheaper arithmetic cannot show")
    elif bound == "memory":
        out.append(f"memory-bound at batch {batch_size} (roofline of the base): the time goes to moving bytes; "
                   "a candidate that still moves float activations between ops saves little")
    larger = [b for b in base_by_batch if b > batch_size]
    if bound is None and larger:
        big = max(larger)
        t_ratio = base_by_batch[big] / base_by_batch[batch_size]
        n_ratio = big / batch_size
        if t_ratio < 0.5 * n_ratio:
            out.append(f"overhead-bound at batch {batch_size} (measured): batch {big} does {number(n_ratio)}x the "
                       f"work in {t_ratio:.1f}x the time, so fixed per-call costs dominate at batch {batch_size}")
    if base_ms < 0.1:
        out.append(f"one call takes only {base_ms * 1e3:.0f} µs: per-call overhead dominates")
    if not out and not faster:
        out.append("no cause found in what was measured; profile the candidate (e.g. ONNX Runtime profiling, "
                   "'modelcost analyze' per-layer times) to see where its time goes")
    return out
