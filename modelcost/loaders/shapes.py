"""Parse and apply the user's shape options: ``--input-shape NAME=1x3x224x224[:DTYPE]`` and ``--batch-size N``."""

from __future__ import annotations

from collections.abc import Iterable

from modelcost.core.errors import ModelcostError, UnboundDimensionError
from modelcost.core.types import TensorSpec

BATCH_DIM_NAMES = {"batch", "batch_size", "n", "b", "N", "B", "batch_dim", "unk__0"}


# dtype names --input-shape accepts after a colon (NAME=1x128:int64), with common aliases -> torch / numpy name
DTYPES = {
    "float32": "float32", "fp32": "float32", "float": "float32", "float16": "float16", "fp16": "float16",
    "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16", "float64": "float64", "fp64": "float64",
    "double": "float64", "int64": "int64", "long": "int64", "int32": "int32", "int": "int32", "int16": "int16",
    "int8": "int8", "uint8": "uint8", "bool": "bool",
}


def parse_input_shapes(items: Iterable[str] | None, option: str | None = None) -> dict[str, tuple[int, ...]]:
    """['x=1x3x224x224', 'ids=2,128:int64'] -> {'x': (1, 3, 224, 224), 'ids': (2, 128)} (dtypes dropped)."""
    return parse_input_specs(items, option)[0]


def parse_input_specs(items: Iterable[str] | None, option: str | None = None,
                      ) -> tuple[dict[str, tuple[int, ...]], dict[str, str]]:
    """['x=1x3x224x224', 'ids=2,128:int64'] -> ({'x': (1, 3, 224, 224), 'ids': (2, 128)}, {'ids': 'int64'}):
    the shapes, and the dtypes given after a colon (canonical names, see ``DTYPES``). Errors name ``option``,
    the place the user wrote the item (a sweep plan names its key); without it, the ``input_shapes`` field."""
    fields = "input_shapes" if option is None else ()
    option = option or "{input_shapes}"
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, str] = {}
    for item in items or ():
        name, sep, dims = item.partition("=")
        if not sep or not name or not dims:
            raise ModelcostError(f"{option} {item!r}: expected NAME=DIMS[:DTYPE] such as input=1x3x224x224 or "
                                 "input_ids=1x128:int64", fields=fields)
        dims, colon, dtype = dims.partition(":")
        if colon:
            if dtype.strip().lower() not in DTYPES:
                raise ModelcostError(f"{option} {item!r}: unknown dtype {dtype!r}; use one of "
                                     f"{', '.join(sorted(set(DTYPES.values())))}", fields=fields)
            dtypes[name.strip()] = DTYPES[dtype.strip().lower()]
        try:
            shape = tuple(int(d) for d in dims.replace(",", "x").split("x"))
        except ValueError:
            raise ModelcostError(f"{option} {item!r}: dimensions must be integers such as 1x3x224x224 "
                                 "(a dtype goes after a colon: input_ids=1x128:int64)", fields=fields) from None
        if any(d <= 0 for d in shape):
            raise ModelcostError(f"{option} {item!r}: dimensions must be positive", fields=fields)
        shapes[name.strip()] = shape
    return shapes, dtypes


def bind_shape(
    spec: TensorSpec, batch_size: int | None, given: dict[str, tuple[int, ...]], bound: dict[str, int] | None = None
) -> TensorSpec:
    """Resolve every symbolic dim of ``spec``: an explicit --input-shape wins; else a dim named in ``bound``
    (symbols shared between inputs); else the first dim takes --batch-size. An unbound dim raises
    UnboundDimensionError naming the input, the dim and the option to set."""
    if spec.name in given:
        shape = given[spec.name]
        if len(shape) != len(spec.shape):
            raise ModelcostError(
                f"{{input_shapes}} {spec.name}: the model's input has {len(spec.shape)} dims {_fmt(spec.shape)}, "
                f"got {len(shape)}", fields="input_shapes")
        for want, got in zip(spec.shape, shape, strict=True):
            if isinstance(want, int) and want != got:
                raise ModelcostError(
                    f"{{input_shapes}} {spec.name}: the model fixes {_fmt(spec.shape)}, got {_fmt(shape)}",
                    fields="input_shapes")
        return TensorSpec(spec.name, shape, spec.dtype)
    bound = bound if bound is not None else {}
    dims: list[int] = []
    for i, d in enumerate(spec.shape):
        if isinstance(d, int) and d > 0:
            dims.append(d)
        elif isinstance(d, str) and d in bound:
            dims.append(bound[d])
        elif i == 0 and batch_size is not None:
            dims.append(batch_size)
            if isinstance(d, str) and d:
                bound[d] = batch_size
        else:
            label = repr(d) if isinstance(d, str) and d else f"#{i} (unnamed)"
            rest = ["N" if not (isinstance(x, int) and x > 0) else str(x) for x in spec.shape[i:]]
            example = "x".join([str(x) for x in dims] + rest)
            hint = "{batch_size} N or " if i == 0 else ""
            raise UnboundDimensionError(
                f"input {spec.name!r} has unbound dimension {label} at position {i} of {_fmt(spec.shape)}; "
                f"set it with {hint}{{input_shapes}} {spec.name}={example}", fields=("batch_size", "input_shapes"))
    return TensorSpec(spec.name, tuple(dims), spec.dtype)


def _fmt(shape: Iterable[object]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"
