"""Load an ONNX file for static analysis: parse the graph, never the weights.

``load_onnx(path, options)`` parses the protobuf with ``onnx.load(..., load_external_data=False)``, checks the
external data files (``onnx_external``: they exist, are long enough, stay in the model's folder; nothing is
read), lists the declared inputs (symbolic dims as strings) and binds them to concrete shapes with
``--batch-size`` / ``--input-shape`` (``bind_inputs``). Bad input raises ModelcostError with one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError, UnboundDimensionError
from modelcost.core.lazy import require
from modelcost.core.text import first_line
from modelcost.core.types import TensorSpec
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.onnx_external import ExternalDataSummary, check_external_data
from modelcost.loaders.onnx_sanity import check_fields
from modelcost.loaders.onnx_types import value_info_dtype, value_info_shape
from modelcost.loaders.shapes import bind_shape

DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass
class LoadedOnnx:
    path: Path
    model: Any  # onnx.ModelProto, loaded with load_external_data=False: weight bytes are never read
    inputs: list[TensorSpec]  # bound: every dim concrete; initializers listed as graph inputs left out
    outputs: list[TensorSpec]  # as declared in the file (symbolic dims as str); the analysis infers them
    declared_inputs: list[TensorSpec]  # as in the file, symbolic dims as str ('' for an unnamed dim)
    file_size_bytes: int  # model file + every external data file it references
    external_data_bytes: int  # size of the external data files (0 when the weights are inside the file)
    opset: int | None  # version of the default (ai.onnx) domain
    notes: list[str] = field(default_factory=list)
    options: LoadOptions = field(default_factory=LoadOptions)
    source: str = ""
    external: ExternalDataSummary = field(default_factory=ExternalDataSummary)

    @property
    def opsets(self) -> dict[str, int]:
        """Domain -> imported version; the default domain is ''."""
        return {("" if o.domain in DEFAULT_DOMAINS else o.domain): int(o.version) for o in self.model.opset_import}


def load_onnx(source: str, options: LoadOptions) -> LoadedOnnx:
    """Parse ``source`` (a .onnx path), check its external data and bind its inputs (see module doc)."""
    path = Path(source)
    if not path.exists():
        raise ModelcostError(f"{source}: no such file")
    if not path.is_file():
        raise ModelcostError(f"{source}: not a file")
    model_bytes = path.stat().st_size
    model = _parse(path, model_bytes)
    check_fields(model, path.name)  # element types, names, op types, sizes (loaders/onnx_sanity.py)
    _check_graph(model.graph, path.name)
    external = check_external_data(model, path)
    declared = declared_inputs(model)
    outputs = [_output_spec(vi) for vi in model.graph.output]
    opset = next((int(o.version) for o in model.opset_import if o.domain in DEFAULT_DOMAINS), None)
    notes = []
    if external.tensors:
        notes.append(
            f"{external.tensors} tensors keep their data in {len(external.files)} external file(s) "
            f"({external.total_bytes} bytes); checked for presence and length, never read"
        )
    loaded = LoadedOnnx(
        path=path,
        model=model,
        inputs=[],
        outputs=outputs,
        declared_inputs=declared,
        file_size_bytes=model_bytes + external.total_bytes,
        external_data_bytes=external.total_bytes,
        opset=opset,
        notes=notes,
        options=options,
        source=source,
        external=external,
    )
    loaded.inputs = bind_inputs(loaded, options.batch_size)
    return loaded


def _parse(path: Path, size_bytes: int) -> Any:
    onnx = require("onnx")
    from google.protobuf.message import DecodeError

    if size_bytes == 0:
        raise ModelcostError(f"{path}: empty file, not an ONNX model")
    try:
        model = _parse_lean(onnx, path)
        if model is None:  # a text format, or bytes the lean reader refuses: onnx's own parser says what is wrong
            model = onnx.load(str(path), load_external_data=False)
    except (DecodeError, RuntimeWarning, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise ModelcostError(
            f"{path}: not a valid ONNX model (protobuf parse failed: {first_line(exc, with_type=False)}); the file is "
            "truncated or not ONNX"
        ) from None
    if not model.HasField("graph") or model.ir_version <= 0:
        raise ModelcostError(f"{path}: not an ONNX model (no graph or IR version in the file)")
    if not model.opset_import:
        raise ModelcostError(f"{path}: the model has no opset_import; the file is truncated or malformed")
    return model


_TEXT_FORMATS = (".textproto", ".txtpb", ".prototxt", ".pbtxt", ".json", ".onnxjson", ".onnxtext", ".onnxtxt")


def _parse_lean(onnx: Any, path: Path) -> Any | None:
    """The model without its big weights' bytes (``onnx_lean``), or None when onnx.load should parse the file."""
    from google.protobuf.message import DecodeError

    from modelcost.loaders.onnx_lean import WireError, lean_model_bytes

    if path.suffix.lower() in _TEXT_FORMATS:
        return None
    try:
        data = lean_model_bytes(path)
        model = onnx.ModelProto()
        model.ParseFromString(data)
    except (WireError, DecodeError, OSError, ValueError, RecursionError):
        return None
    return model


def _check_graph(graph: Any, model_name: str) -> None:
    """Every tensor a main-graph node reads is a graph input, an initializer or some node's output."""
    known = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    known |= {s.values.name for s in graph.sparse_initializer}
    known.add("")
    produced = {o for node in graph.node for o in node.output}
    for node in graph.node:
        for name in node.input:
            if name not in known and name not in produced:
                label = node.name or node.op_type
                raise ModelcostError(
                    f"{model_name}: node {label!r} reads tensor {name!r} that no input, initializer or node "
                    "produces; the model is truncated or malformed"
                )
    for vi in graph.output:
        if vi.name not in known and vi.name not in produced:
            raise ModelcostError(
                f"{model_name}: graph output {vi.name!r} is produced by no node; the model is malformed"
            )
    looped = _node_in_cycle(graph)
    if looped is not None:
        raise ModelcostError(
            f"{model_name}: node {looped.name or looped.op_type!r} is in a cycle (it depends on its own output); "
            "an ONNX graph must be acyclic, the model is malformed"
        )


def _node_in_cycle(graph: Any) -> Any | None:
    """A node of a cycle of the main graph (Kahn's algorithm: what never becomes ready), or None."""
    from modelcost.loaders.onnx_graph import node_reads

    producer = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
    users: list[list[int]] = [[] for _ in graph.node]
    waiting = []
    for i, node in enumerate(graph.node):
        deps = {producer[name] for name in node_reads(node) if name in producer}
        for d in deps:
            users[d].append(i)
        waiting.append(len(deps))
    ready = [i for i, n in enumerate(waiting) if n == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for user in users[i]:
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if done == len(graph.node):
        return None
    return next(node for i, node in enumerate(graph.node) if waiting[i] > 0)


def _spec(vi: Any, model_name: str, what: str) -> TensorSpec:
    """A graph input as declared (a tensor of unknown rank gets shape ()); a non-tensor or untyped input is an
    error, since it cannot be bound to a shape."""
    dtype = value_info_dtype(vi.type)
    if dtype is None:
        kind = vi.type.WhichOneof("value") or "untyped"
        what_it_is = "a tensor of undefined element type" if kind == "tensor_type" else f"a {kind}"
        raise ModelcostError(
            f"{model_name}: {what} {vi.name!r} is {what_it_is}; modelcost analyses models with typed tensor inputs"
        )
    return TensorSpec(vi.name, value_info_shape(vi.type) or (), dtype)


def _output_spec(vi: Any) -> TensorSpec:
    """A graph output as declared; an output that is not a typed tensor gets dtype 'unknown' and shape ('?',)."""
    dtype = value_info_dtype(vi.type)
    if dtype is None:
        return TensorSpec(vi.name, ("?",), "unknown")
    shape = value_info_shape(vi.type)
    return TensorSpec(vi.name, ("?",) if shape is None else shape, dtype)


def unranked_inputs(model: Any) -> set[str]:
    """Names of graph inputs whose rank the file does not declare."""
    return {vi.name for vi in model.graph.input if value_info_shape(vi.type) is None}


def declared_inputs(model: Any) -> list[TensorSpec]:
    """Graph inputs as declared, without those that are initializers (IR < 4 models list weights as inputs)."""
    inits = {t.name for t in model.graph.initializer}
    return [_spec(vi, "model", "input") for vi in model.graph.input if vi.name not in inits]


def bind_inputs(
    loaded: LoadedOnnx, batch_size: int | None, input_shapes: dict[str, tuple[int, ...]] | None = None
) -> list[TensorSpec]:
    """Concrete input shapes at ``batch_size``: --input-shape entries first (a symbolic leading dim of those is
    replaced by ``batch_size`` when it is given), then symbols shared between inputs, then the batch size for a
    leading dim. Raises UnboundDimensionError (input, dim, option) when a dim stays unbound."""
    given = dict(loaded.options.input_shapes if input_shapes is None else input_shapes)
    declared = loaded.declared_inputs
    names = [d.name for d in declared]
    for name in given:
        if name not in names:
            raise ModelcostError(
                f"{{input_shapes}} {name}: the model has no input {name!r}; its inputs are "
                f"{', '.join(names) or '(none)'}", fields="input_shapes")
    _check_dtypes(declared, loaded.options.input_dtypes)
    bound: dict[str, int] = {}
    for spec in declared:
        if spec.name in given:
            given[spec.name] = _batched(spec, given[spec.name], batch_size)
            _record_symbols(spec, given[spec.name], bound)
    unranked = unranked_inputs(loaded.model)
    result = []
    for spec in declared:
        if spec.name in unranked:
            if spec.name not in given:
                raise UnboundDimensionError(
                    f"input {spec.name!r} has no declared shape (rank unknown); "
                    f"set it with {{input_shapes}} {spec.name}=DIMS", fields="input_shapes")
            result.append(TensorSpec(spec.name, given[spec.name], spec.dtype))
            continue
        lead = spec.shape[0] if spec.shape else None
        if batch_size is not None and isinstance(lead, str) and lead in bound and spec.name not in given:
            if bound[lead] != batch_size:
                raise ModelcostError(
                    f"{{batch_size}} {batch_size} conflicts with dimension {lead!r} = {bound[lead]} set by "
                    "{input_shapes}; give one of them", fields=("input_shapes", "batch_size"))
        result.append(bind_shape(spec, batch_size, given, bound))
    return result


def _check_dtypes(declared: list[TensorSpec], dtypes: dict[str, str]) -> None:
    """An ONNX file declares its input dtypes: a dtype given with --input-shape must agree (it cannot change it)."""
    for spec in declared:
        if spec.name in dtypes and dtypes[spec.name] != spec.dtype:
            raise ModelcostError(
                f"{{input_shapes}} {spec.name}: the model declares this input as {spec.dtype}, "
                f"not {dtypes[spec.name]}; drop the dtype or give :{spec.dtype}", fields="input_shapes")


def _batched(spec: TensorSpec, shape: tuple[int, ...], batch_size: int | None) -> tuple[int, ...]:
    if batch_size is not None and shape and spec.shape and not isinstance(spec.shape[0], int):
        return (batch_size, *shape[1:])
    return shape


def _record_symbols(spec: TensorSpec, shape: tuple[int, ...], bound: dict[str, int]) -> None:
    """Symbols an --input-shape fixes also bind the same symbols in the other inputs; a clash is an error."""
    if len(shape) != len(spec.shape):
        return  # bind_shape reports the rank mismatch
    for sym, value in zip(spec.shape, shape, strict=True):
        if isinstance(sym, str) and sym:
            if bound.get(sym, value) != value:
                raise ModelcostError(
                    f"{{input_shapes}}: dimension {sym!r} is {bound[sym]} in one input and {value} in {spec.name!r}; "
                    "inputs that share a dimension name must agree", fields="input_shapes")
            bound[sym] = value
