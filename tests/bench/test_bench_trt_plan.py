"""TensorRT logic that needs no TensorRT: precision plans for TensorRT 10 and 11, engine cache keys, Q/DQ and
fp16 conversions, and the honest 'not installed' answer."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
import torch

from modelcost.bench.backends import trt_plan
from modelcost.bench.base import Unavailable
from modelcost.core.types import TensorSpec


def test_trt10_uses_flags_for_fp16_and_qdq_for_int8() -> None:
    fp32 = trt_plan.plan_precision("fp32", "10.13.0.35", (9, 0))
    assert (fp32.strongly_typed, fp32.onnx_transform, fp32.builder_flags, fp32.clear_flags) == (
        False, "none", (), ("TF32",))
    fp16 = trt_plan.plan_precision("fp16", "10.13.0.35", (9, 0))
    assert (fp16.strongly_typed, fp16.onnx_transform, fp16.builder_flags) == (False, "none", ("FP16",))
    int8 = trt_plan.plan_precision("int8", "10.13.0.35", (9, 0))
    assert int8.onnx_transform == "qdq-int8" and "INT8" in int8.builder_flags
    fp8 = trt_plan.plan_precision("fp8", "10.13.0.35", (9, 0))
    assert fp8.strongly_typed and fp8.onnx_transform == "qdq-fp8" and fp8.builder_flags == ()


def test_trt11_is_strongly_typed_with_the_precision_in_the_model() -> None:
    for precision, transform in (("fp32", "none"), ("fp16", "fp16"), ("int8", "qdq-int8"), ("fp8", "qdq-fp8")):
        plan = trt_plan.plan_precision(precision, "11.1.0", (9, 0))
        assert plan.strongly_typed and plan.onnx_transform == transform and plan.builder_flags == ()


def test_strongly_typed_plans_never_carry_precision_flags() -> None:
    for version in ("10.8.0", "11.0.0"):
        for precision in ("fp32", "fp16", "int8", "fp8"):
            plan = trt_plan.plan_precision(precision, version, (8, 9))
            assert not (plan.strongly_typed and plan.builder_flags), (version, precision)


def test_a_qdq_model_is_built_as_it_is() -> None:
    assert trt_plan.plan_precision("int8", "11.0", (9, 0), model_has_qdq=True).onnx_transform == "none"


def test_fp8_needs_sm89_and_old_tensorrt_is_refused() -> None:
    with pytest.raises(Unavailable, match=r"8\.9\+ \(this GPU is 8\.0\)"):
        trt_plan.plan_precision("fp8", "10.13", (8, 0))
    assert trt_plan.plan_precision("fp8", "10.13", (8, 9)).precision == "fp8"
    with pytest.raises(Unavailable, match="TensorRT 10 or newer"):
        trt_plan.plan_precision("fp16", "8.6.1", (9, 0))
    with pytest.raises(Unavailable, match="no bf16"):
        trt_plan.plan_precision("bf16", "10.13", (9, 0))


def test_engine_cache_key_changes_with_every_input() -> None:
    plan = trt_plan.plan_precision("fp16", "10.13.0", (9, 0))
    base = dict(model_hash="abc", shapes={"x": ((1, 3), (1, 3), (1, 3))}, trt_version="10.13.0",
                gpu_name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), plan=plan)
    key = trt_plan.engine_cache_key(**base)
    assert key == trt_plan.engine_cache_key(**dict(base)) and len(key) == 64
    changes = [("model_hash", "abd"), ("shapes", {"x": ((8, 3), (8, 3), (8, 3))}), ("trt_version", "10.14.0"),
               ("gpu_name", "NVIDIA H200"), ("compute_capability", (9, 1)),
               ("plan", dataclasses.replace(plan, builder_flags=()))]
    keys = {trt_plan.engine_cache_key(**{**base, k: v}) for k, v in changes}
    assert len(keys) == len(changes) and key not in keys


def test_static_profile_is_min_opt_max_of_the_shape() -> None:
    prof = trt_plan.static_profile([TensorSpec("x", (8, 3, 4, 4), "float32")])
    assert prof == {"x": ((8, 3, 4, 4), (8, 3, 4, 4), (8, 3, 4, 4))}


def _tiny_onnx(path) -> None:  # noqa: ANN001
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 6 * 6, 5))
    torch.onnx.export(net.eval(), (torch.randn(2, 3, 8, 8),), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "b"}, "y": {0: "b"}}, opset_version=17, dynamo=False)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_int8_conversion_makes_a_qdq_model_that_runs(tmp_path) -> None:  # noqa: ANN001
    import onnxruntime as ort

    src = tmp_path / "m.onnx"
    _tiny_onnx(src)
    assert not trt_plan.has_qdq(onnx.load(str(src)))
    plan = trt_plan.plan_precision("int8", "11.0", (9, 0))
    calib = [{"x": np.random.default_rng(i).standard_normal((1, 3, 8, 8)).astype(np.float32)} for i in range(4)]
    out = trt_plan.convert_for_plan(plan, src, tmp_path, "k", calib)
    model = onnx.load(str(out))
    assert trt_plan.has_qdq(model) and out.parent.name == "onnx-qdq-int8"
    zero_points = [init for init in model.graph.initializer if "zero_point" in init.name]
    assert zero_points and all(not onnx.numpy_helper.to_array(z).any() for z in zero_points)  # symmetric
    y = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, calib[0])[0]
    assert y.shape == (1, 5)
    assert trt_plan.convert_for_plan(plan, src, tmp_path, "k", None) == out  # cached


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_fp16_conversion_keeps_fp32_io(tmp_path) -> None:  # noqa: ANN001
    src = tmp_path / "m.onnx"
    _tiny_onnx(src)
    out = trt_plan.convert_for_plan(trt_plan.plan_precision("fp16", "11.0", (9, 0)), src, tmp_path, "k")
    model = onnx.load(str(out))
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in model.graph.initializer)


@pytest.mark.skipif(__import__("importlib").util.find_spec("tensorrt") is not None, reason="TensorRT is installed here")
def test_tensorrt_backend_says_not_installed() -> None:
    from modelcost.bench.registry import unavailable_reason

    assert unavailable_reason("tensorrt") == "TensorRT not installed — pip install 'modelcost[tensorrt]'"
