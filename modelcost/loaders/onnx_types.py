"""ONNX element types and shapes as modelcost names them (standard library only: the enum values are
fixed by onnx.proto, so this module needs no onnx import)."""

from __future__ import annotations

from typing import Any

# TensorProto.DataType value -> (modelcost dtype name, bits per element)
_ONNX_DTYPES: dict[int, tuple[str, int]] = {
    1: ("float32", 32),
    2: ("uint8", 8),
    3: ("int8", 8),
    4: ("uint16", 16),
    5: ("int16", 16),
    6: ("int32", 32),
    7: ("int64", 64),
    8: ("string", 0),
    9: ("bool", 8),
    10: ("float16", 16),
    11: ("float64", 64),
    12: ("uint32", 32),
    13: ("uint64", 64),
    14: ("complex64", 64),
    15: ("complex128", 128),
    16: ("bfloat16", 16),
    17: ("float8_e4m3fn", 8),
    18: ("float8_e4m3fnuz", 8),
    19: ("float8_e5m2", 8),
    20: ("float8_e5m2fnuz", 8),
    21: ("uint4", 4),
    22: ("int4", 4),
    23: ("float4_e2m1", 4),
    24: ("float8_e8m0", 8),
    25: ("uint2", 2),
    26: ("int2", 2),
    27: ("float6_e2m3", 6),
    28: ("float6_e3m2", 6),
}

FLOAT_DTYPES = frozenset(
    {
        "float32",
        "float16",
        "bfloat16",
        "float64",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float4_e2m1",
        "float8_e8m0",
        "float6_e2m3",
        "float6_e3m2",
    }
)


def onnx_dtype_name(elem_type: int) -> str:
    """TensorProto.FLOAT (1) -> 'float32'; an unknown enum value -> 'onnx_type_<n>'."""
    return _ONNX_DTYPES.get(elem_type, (f"onnx_type_{elem_type}", 0))[0]


def onnx_dtype_bits(elem_type: int) -> int:
    return _ONNX_DTYPES.get(elem_type, ("", 0))[1]


def numel(dims: Any) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def packed_nbytes(dims: Any, elem_type: int) -> int:
    """Bytes a tensor's raw data takes: sub-byte types are packed and rounded up to whole bytes."""
    return (numel(dims) * onnx_dtype_bits(elem_type) + 7) // 8


def value_info_shape(type_proto: Any) -> tuple[int | str, ...] | None:
    """Shape of a tensor TypeProto: ints for known dims, the symbol (or '' when unnamed) for the others;
    None when the type carries no shape (unknown rank) or is not a tensor."""
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    tensor_type = type_proto.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    dims: list[int | str] = []
    for d in tensor_type.shape.dim:
        kind = d.WhichOneof("value")
        dims.append(d.dim_value if kind == "dim_value" and d.dim_value >= 0 else (d.dim_param if kind else ""))
    return tuple(dims)


def value_info_dtype(type_proto: Any) -> str | None:
    """dtype name of a tensor TypeProto; None when it is not a tensor or its element type is undefined (0)."""
    if not type_proto.HasField("tensor_type") or type_proto.tensor_type.elem_type == 0:
        return None
    return onnx_dtype_name(type_proto.tensor_type.elem_type)


def is_static(shape: tuple[int | str, ...] | None) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)
