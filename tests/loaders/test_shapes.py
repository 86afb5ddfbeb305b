from __future__ import annotations

import pytest

from modelcost.core.errors import ModelcostError, UnboundDimensionError
from modelcost.core.types import TensorSpec
from modelcost.loaders.shapes import bind_shape, parse_input_shapes


def test_parse_input_shapes():
    assert parse_input_shapes(["x=1x3x224x224", "ids=2,128"]) == {"x": (1, 3, 224, 224), "ids": (2, 128)}
    for bad in ["x", "x=", "=1x2", "x=1xa", "x=0x3"]:
        with pytest.raises(ModelcostError):
            parse_input_shapes([bad])


def test_bind_batch_and_shared_symbols():
    bound: dict[str, int] = {}
    ids = bind_shape(TensorSpec("ids", ("batch", "seq"), "int64"), 4, {"ids": (4, 16)}, bound)
    assert ids.shape == (4, 16)
    x = bind_shape(TensorSpec("x", ("N", 3, 32, 32), "float32"), 8, {}, bound)
    assert x.shape == (8, 3, 32, 32)
    # 'N' is now bound to 8 and a second input sharing it takes the same value
    y = bind_shape(TensorSpec("y", ("N", 10), "float32"), None, {}, bound)
    assert y.shape == (8, 10)


def test_unbound_dimension_names_input_dim_and_option():
    with pytest.raises(UnboundDimensionError) as info:
        bind_shape(TensorSpec("ids", ("batch", "seq"), "int64"), 2, {})
    msg = str(info.value)
    assert "'ids'" in msg and "'seq'" in msg and "--input-shape ids=2xN" in msg


def test_given_shape_must_match_fixed_dims():
    with pytest.raises(ModelcostError):
        bind_shape(TensorSpec("x", ("N", 3, 32, 32), "float32"), None, {"x": (1, 4, 32, 32)})
    with pytest.raises(ModelcostError):
        bind_shape(TensorSpec("x", ("N", 3), "float32"), None, {"x": (1, 3, 3)})
