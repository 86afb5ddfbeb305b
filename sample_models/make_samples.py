"""Regenerate the sample ONNX models in this folder (deterministic: same bytes on every run).

    python3 sample_models/make_samples.py            # writes beside this script
    python3 sample_models/make_samples.py OUT_DIR    # writes elsewhere (the tests compare the bytes)

Only onnx.helper and numpy are used (no torch). Weights come from numpy's legacy RandomState(0) so they do
not change between numpy versions. EXPECTED.md holds each model's hand-derived figures; tests/test_samples.py
checks the analyser against them and runs every model once in onnxruntime to prove it is a real model.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8
OPSET = 17
HERE = Path(__file__).resolve().parent


def _rng(seed: int) -> np.random.RandomState:
    return np.random.RandomState(seed)


def _f32(rng: np.random.RandomState, name: str, *shape: int, positive: bool = False) -> TensorProto:
    data = rng.standard_normal(shape).astype(np.float32) * np.float32(0.1)
    return numpy_helper.from_array(np.abs(data) + np.float32(0.5) if positive else data, name)


def _i64(name: str, values: list[int]) -> TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _model(graph: onnx.GraphProto, opset: int = OPSET) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="modelcost-samples")
    model.ir_version = IR_VERSION
    return model


def _bn(rng: np.random.RandomState, name: str, x: str, y: str, c: int) -> tuple[onnx.NodeProto, list[TensorProto]]:
    inits = [
        _f32(rng, f"{name}.weight", c, positive=True),
        _f32(rng, f"{name}.bias", c),
        _f32(rng, f"{name}.running_mean", c),
        _f32(rng, f"{name}.running_var", c, positive=True),
    ]
    node = helper.make_node("BatchNormalization", [x, *(t.name for t in inits)], [y], name=name, epsilon=1e-5)
    return node, inits


def resnet_tiny() -> onnx.ModelProto:
    """conv-bn-relu, depthwise (stride 2), pointwise, a dilated residual block, max pool, global average pool,
    gemm. Input 'input' [1, 3, 32, 32], output 'logits' [1, 10]."""
    rng = _rng(0)
    n, inits = [], []

    def conv(name: str, x: str, y: str, cin: int, cout: int, k: int, bias: bool, **attrs: object) -> None:
        w = _f32(rng, f"{name}.weight", cout, cin // int(attrs.get("group", 1)), k, k)
        inits.append(w)
        ins = [x, w.name]
        if bias:
            inits.append(_f32(rng, f"{name}.bias", cout))
            ins.append(f"{name}.bias")
        n.append(helper.make_node("Conv", ins, [y], name=name, kernel_shape=[k, k], **attrs))

    def bn(name: str, x: str, y: str, c: int) -> None:
        node, ts = _bn(rng, name, x, y, c)
        n.append(node)
        inits.extend(ts)

    def relu(name: str, x: str) -> None:
        n.append(helper.make_node("Relu", [x], [name], name=name))

    conv("conv1", "input", "c1", 3, 16, 3, True, pads=[1, 1, 1, 1])
    bn("bn1", "c1", "b1", 16)
    relu("r1", "b1")
    conv("dw", "r1", "c2", 16, 16, 3, True, group=16, strides=[2, 2], pads=[1, 1, 1, 1])
    bn("bn2", "c2", "b2", 16)
    relu("r2", "b2")
    conv("pw", "r2", "c3", 16, 32, 1, False)
    bn("bn3", "c3", "b3", 32)
    relu("r3", "b3")
    conv("block.conv_a", "r3", "ca", 32, 32, 3, False, dilations=[2, 2], pads=[2, 2, 2, 2])
    relu("ra", "ca")
    conv("block.conv_b", "ra", "cb", 32, 32, 3, True, pads=[1, 1, 1, 1])
    n.append(helper.make_node("Add", ["cb", "r3"], ["res"], name="block.add"))
    relu("r4", "res")
    n.append(helper.make_node("MaxPool", ["r4"], ["mp"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]))
    n.append(helper.make_node("GlobalAveragePool", ["mp"], ["gap"], name="gap"))
    n.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    inits += [_f32(rng, "fc.weight", 10, 32), _f32(rng, "fc.bias", 10)]
    n.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        n,
        "resnet_tiny",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializer=inits,
    )
    return _model(graph)


def mlp_external() -> onnx.ModelProto:
    """Gemm 64->128, Relu, Gemm 128->32, Sigmoid, MatMul 32->10 + Add, Softmax; every weight in external data
    (mlp_external.onnx.data, packed back to back, no alignment padding). Input 'x' [1, 64]."""
    rng = _rng(1)
    inits = [
        _f32(rng, "fc1.weight", 128, 64),
        _f32(rng, "fc1.bias", 128),
        _f32(rng, "fc2.weight", 32, 128),
        _f32(rng, "fc2.bias", 32),
        _f32(rng, "head.weight", 32, 10),
        _f32(rng, "head.bias", 10),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h1"], name="fc1", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu"),
        helper.make_node("Gemm", ["a1", "fc2.weight", "fc2.bias"], ["h2"], name="fc2", transB=1),
        helper.make_node("Sigmoid", ["h2"], ["a2"], name="sigmoid"),
        helper.make_node("MatMul", ["a2", "head.weight"], ["h3"], name="head.matmul"),
        helper.make_node("Add", ["h3", "head.bias"], ["h4"], name="head.add"),
        helper.make_node("Softmax", ["h4"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp_external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=inits,
    )
    return _model(graph)


def dynamic_batch() -> onnx.ModelProto:
    """Single-head self-attention over 'tokens' [batch, seq, 16] with an additive 'mask' [batch, seq] (the two
    inputs share the symbols batch and seq), then LayerNormalization. Output 'out' [batch, seq, 16]."""
    rng = _rng(2)
    inits = [
        _f32(rng, "wq", 16, 16),
        _f32(rng, "ln.weight", 16, positive=True),
        _f32(rng, "ln.bias", 16),
        _i64("axis1", [1]),
    ]
    nodes = [
        helper.make_node("MatMul", ["tokens", "wq"], ["q"], name="q_proj"),
        helper.make_node("Transpose", ["tokens"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"], name="scores"),
        helper.make_node("Unsqueeze", ["mask", "axis1"], ["mask3"], name="mask_unsqueeze"),
        helper.make_node("Add", ["scores", "mask3"], ["masked"], name="mask_add"),
        helper.make_node("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "tokens"], ["ctx"], name="context"),
        helper.make_node("LayerNormalization", ["ctx", "ln.weight", "ln.bias"], ["out"], name="ln", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "dynamic_batch",
        [
            helper.make_tensor_value_info("tokens", TensorProto.FLOAT, ["batch", "seq", 16]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", 16])],
        initializer=inits,
    )
    return _model(graph)


ACT_SCALE = np.float32(0.05)  # activation quantization: uint8, zero point 128, per tensor


def _conv_weights() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The float weights both conv samples share: w1 [16, 8, 3, 3], b1 [16], w2 [16, 16, 1, 1], b2 [16]."""
    rng = _rng(3)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * np.float32(0.1)
    b1 = rng.standard_normal(16).astype(np.float32) * np.float32(0.1)
    w2 = rng.standard_normal((16, 16, 1, 1)).astype(np.float32) * np.float32(0.1)
    b2 = rng.standard_normal(16).astype(np.float32) * np.float32(0.1)
    return w1, b1, w2, b2


def _conv_graph(name: str, nodes: list[onnx.NodeProto], inits: list[TensorProto]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])],
        initializer=inits,
    )
    return _model(graph)


def conv_float() -> onnx.ModelProto:
    """x [1, 8, 16, 16] -> Conv 8->16 k3 p1 (+bias) -> Relu -> Conv 16->16 k1 (+bias) -> y [1, 16, 16, 16]."""
    w1, b1, w2, b2 = _conv_weights()
    names = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias")
    inits = [numpy_helper.from_array(a, n) for a, n in zip((w1, b1, w2, b2), names, strict=True)]
    nodes = [
        helper.make_node("Conv", ["x", *names[:2]], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("Conv", ["r1", *names[2:]], ["y"], name="conv2", kernel_shape=[1, 1]),
    ]
    return _conv_graph("conv_float", nodes, inits)


def _qdq(x: str, y: str, tag: str, nodes: list[onnx.NodeProto], inits: list[TensorProto]) -> None:
    """QuantizeLinear then DequantizeLinear of an activation (uint8, per tensor)."""
    scale, zp = f"{tag}.scale", f"{tag}.zp"
    inits += [numpy_helper.from_array(ACT_SCALE, scale), numpy_helper.from_array(np.uint8(128), zp)]
    nodes.append(helper.make_node("QuantizeLinear", [x, scale, zp], [f"{tag}.q"], name=f"{tag}.quantize"))
    nodes.append(helper.make_node("DequantizeLinear", [f"{tag}.q", scale, zp], [y], name=f"{tag}.dequantize"))


def _qdq_weights(
    tag: str, w: np.ndarray, b: np.ndarray, nodes: list[onnx.NodeProto], inits: list[TensorProto]
) -> tuple[str, str]:
    """int8 weights per output channel (symmetric, zero point 0) and int32 biases at scale w_scale * act_scale,
    each followed by its DequantizeLinear; returns the dequantized weight and bias names."""
    w_scale = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127).astype(np.float32)
    w_q = np.clip(np.round(w / w_scale.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
    b_scale = (w_scale * ACT_SCALE).astype(np.float32)
    b_q = np.round(b / b_scale).astype(np.int32)
    inits += [
        numpy_helper.from_array(w_q, f"{tag}.weight_q"),
        numpy_helper.from_array(w_scale, f"{tag}.weight_scale"),
        numpy_helper.from_array(np.zeros(w.shape[0], np.int8), f"{tag}.weight_zp"),
        numpy_helper.from_array(b_q, f"{tag}.bias_q"),
        numpy_helper.from_array(b_scale, f"{tag}.bias_scale"),
    ]
    w_in = [f"{tag}.weight_q", f"{tag}.weight_scale", f"{tag}.weight_zp"]
    nodes.append(helper.make_node("DequantizeLinear", w_in, [f"{tag}.weight"], name=f"{tag}.weight_dequantize", axis=0))
    b_in = [f"{tag}.bias_q", f"{tag}.bias_scale"]
    nodes.append(helper.make_node("DequantizeLinear", b_in, [f"{tag}.bias"], name=f"{tag}.bias_dequantize", axis=0))
    return f"{tag}.weight", f"{tag}.bias"


def qdq_conv() -> onnx.ModelProto:
    """conv_float quantized in QDQ form, as onnxruntime's static quantizer writes it: activations uint8 per
    tensor, weights int8 per output channel (axis 0), biases int32."""
    w1, b1, w2, b2 = _conv_weights()
    nodes: list[onnx.NodeProto] = []
    inits: list[TensorProto] = []
    _qdq("x", "xq", "in", nodes, inits)
    w, b = _qdq_weights("conv1", w1, b1, nodes, inits)
    nodes.append(helper.make_node("Conv", ["xq", w, b], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu"))
    _qdq("r1", "r1q", "act", nodes, inits)
    w, b = _qdq_weights("conv2", w2, b2, nodes, inits)
    nodes.append(helper.make_node("Conv", ["r1q", w, b], ["c2"], name="conv2", kernel_shape=[1, 1]))
    _qdq("c2", "y", "out", nodes, inits)
    return _conv_graph("qdq_conv", nodes, inits)


def _branch(name: str, nodes: list[onnx.NodeProto], out: str) -> onnx.GraphProto:
    """An If branch: no inputs (it reads the outer scope), one [1, 16] float output."""
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 16])])


def _loop_body() -> onnx.GraphProto:
    """(iteration, cond, h [1, 16]) -> (cond, tanh(h @ w_loop))."""
    vi = helper.make_tensor_value_info
    return helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cond"),
            helper.make_node("MatMul", ["h", "w_loop"], ["hm"], name="matmul"),
            helper.make_node("Tanh", ["hm"], ["h_next"], name="tanh"),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("h", TensorProto.FLOAT, [1, 16])],
        [vi("cond_out", TensorProto.BOOL, []), vi("h_next", TensorProto.FLOAT, [1, 16])],
    )


def control_flow() -> onnx.ModelProto:
    """x [1, 8]: an If on a data-dependent condition (then: MatMul 8x16 + Relu, else: MatMul 8x16), a Loop with
    the constant trip count 3 (body: MatMul 16x16 + Tanh on the carried state), then an If whose condition is a
    Constant true (then: Add a bias, else: Mul a scale). Output 'y' [1, 16]."""
    rng = _rng(4)
    mm = helper.make_node
    then_g = _branch(
        "then",
        [mm("MatMul", ["x", "w_then"], ["t1"], name="matmul"), mm("Relu", ["t1"], ["t_out"], name="relu")],
        "t_out",
    )
    else_g = _branch("else", [mm("MatMul", ["x", "w_else"], ["e_out"], name="matmul")], "e_out")
    add_g = _branch("add", [mm("Add", ["looped", "bias"], ["a_out"], name="add")], "a_out")
    mul_g = _branch("mul", [mm("Mul", ["looped", "scale"], ["m_out"], name="mul")], "m_out")
    always = numpy_helper.from_array(np.array(True), "always")
    nodes = [
        mm("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        mm("Greater", ["s", "zero"], ["positive"], name="greater"),
        mm("If", ["positive"], ["branch"], name="if_data", then_branch=then_g, else_branch=else_g),
        mm("Loop", ["trips", "", "branch"], ["looped"], name="loop", body=_loop_body()),
        mm("Constant", [], ["always"], name="always", value=always),
        mm("If", ["always"], ["y"], name="if_const", then_branch=add_g, else_branch=mul_g),
    ]
    inits = [
        _f32(rng, "w_then", 8, 16),
        _f32(rng, "w_else", 8, 16),
        _f32(rng, "w_loop", 16, 16),
        _f32(rng, "bias", 16),
        _f32(rng, "scale", 16),
        numpy_helper.from_array(np.float32(0), "zero"),
        numpy_helper.from_array(np.int64(3), "trips"),
    ]
    x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in (("x", [1, 8]), ("y", [1, 16])))
    return _model(helper.make_graph(nodes, "control_flow", [x], [y], initializer=inits))


SAMPLES: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet_tiny": resnet_tiny,
    "mlp_external": mlp_external,
    "dynamic_batch": dynamic_batch,
    "conv_float": conv_float,
    "qdq_conv": qdq_conv,
    "control_flow": control_flow,
}
EXTERNAL = {"mlp_external"}


def move_to_external(model: onnx.ModelProto, data_name: str) -> bytes:
    """Move every initializer's bytes to one external blob, back to back; returns the blob."""
    blob = bytearray()
    for t in model.graph.initializer:
        raw = numpy_helper.to_array(t).tobytes()
        offset = len(blob)
        blob += raw
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for key, value in (("location", data_name), ("offset", str(offset)), ("length", str(len(raw)))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
    return bytes(blob)


def write_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in SAMPLES.items():
        model = build()
        onnx.checker.check_model(model, full_check=True)
        path = out_dir / f"{name}.onnx"
        if name in EXTERNAL:
            data_name = f"{name}.onnx.data"
            (out_dir / data_name).write_bytes(move_to_external(model, data_name))
            written.append(out_dir / data_name)
        path.write_bytes(model.SerializeToString(deterministic=True))
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for p in write_all(target):
        print(f"{p}  {p.stat().st_size} bytes")
