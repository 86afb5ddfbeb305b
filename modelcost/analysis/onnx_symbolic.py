"""ONNX Runtime's symbolic shape inference (``onnxruntime/tools/symbolic_shape_infer.py``) on a skeleton.

onnx's own inference stops where a shape flows through value arithmetic it does not propagate: the TorchScript
exporter's attention-mask and ``expand`` patterns (``ConstantOfShape -> Mul -> Equal -> Where -> Expand``) leave
every tensor after the embeddings of a BERT export without a shape. ONNX Runtime's symbolic inference propagates
those values (with sympy) and knows the com.microsoft contrib ops (Attention, SkipLayerNormalization, ...); it is
run when onnx's inference leaves a main-graph tensor without a static shape, and its static shapes are handed
back to onnx's inference as hints.

Three things are done differently from ``SymbolicShapeInference.infer_shapes``:

* the module is loaded from its file, not imported as ``onnxruntime.tools.symbolic_shape_infer``: the package's
  ``__init__`` imports torch for helpers we do not use (BENCHMARKS.md, 'Figures that used to live in docstrings');
* the skeleton's stubs (weights whose bytes were never read) are turned into graph inputs of known shape, so the
  inference never tries to read their values;
* the inference loop is driven here, so that an incomplete inference returns what it found instead of raising
  (and of writing ``sym_shape_infer_temp.onnx`` into the working folder, as ``infer_shapes`` does).
"""

from __future__ import annotations

import importlib.util
import logging
import os
from typing import Any

from modelcost.loaders.onnx_lean import is_stub
from modelcost.loaders.onnx_types import is_static, value_info_shape

_MODULE: list[Any] = []  # the loaded module, once


def _module() -> Any | None:
    """ORT's symbolic_shape_infer module, or None when onnxruntime (or sympy) is not installed."""
    if _MODULE:
        return _MODULE[0]
    spec = importlib.util.find_spec("onnxruntime")
    path = os.path.join(spec.submodule_search_locations[0], "tools", "symbolic_shape_infer.py") if spec else ""
    module = None
    if path and os.path.isfile(path):
        file_spec = importlib.util.spec_from_file_location("_modelcost_ort_symbolic_shape_infer", path)
        if file_spec is not None and file_spec.loader is not None:
            module = importlib.util.module_from_spec(file_spec)
            try:
                file_spec.loader.exec_module(module)
            except ImportError:  # sympy missing: onnx's inference alone
                module = None
    _MODULE.append(module)
    return module


def _without_stubs(model: Any) -> Any:
    """A copy of ``model`` whose stubbed initializers and stubbed Constant nodes are graph inputs of known shape."""
    from onnx import helper

    copy = type(model)()
    copy.CopyFrom(model)
    graph = copy.graph
    stubs = [t for t in graph.initializer if is_stub(t)]
    keep = [t for t in graph.initializer if not is_stub(t)]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    nodes = []
    for node in graph.node:
        value = next((a.t for a in node.attribute if a.name == "value" and a.HasField("t")), None)
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and value is not None and is_stub(value):
            value.name = node.output[0]
            stubs.append(value)
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    declared = {vi.name for vi in graph.input}
    graph.input.extend(
        helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in stubs if t.name not in declared
    )
    return copy


def symbolic_shapes(model: Any) -> dict[str, Any]:
    """name -> ValueInfoProto for every main-graph tensor ORT's symbolic inference gives a static shape, or {}
    when it is not available or fails (the caller then keeps onnx's inference alone)."""
    module = _module()
    if module is None:
        return {}
    logging.getLogger(module.__name__).setLevel(logging.ERROR)
    try:
        engine = module.SymbolicShapeInference(2**31 - 1, True, False, 0)  # int_max, auto_merge, guess rank, verbose
        engine._preprocess(_without_stubs(model))
        while engine.run_:
            engine._infer_impl()
        engine._update_output_from_vi()
        graph = engine.out_mp_.graph
    except Exception:  # noqa: BLE001 - an op it cannot handle: onnx's inference alone, nothing lost
        return {}
    return {vi.name: vi for vi in (*graph.value_info, *graph.output) if is_static(value_info_shape(vi.type))}
