"""Hand-derived tests of every ONNX op formula: one tiny model per case, the expected figure derived in a comment
next to each assertion. MACs = multiply-accumulates; FLOPs = 2 x MACs + the per-element costs documented in
modelcost/analysis/formulas.py and onnx_ops_*.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from modelcost import api
from modelcost.core.errors import InternalError
from modelcost.core.types import CostReport, LayerCost

F = TensorProto.FLOAT


def _w(name: str, *shape: int, dtype: type = np.float32, value: float | None = None) -> TensorProto:
    arr = (
        np.full(shape, value, dtype=dtype)
        if value is not None
        else (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    )
    return numpy_helper.from_array(arr, name)


def _vi(name: str, shape: list | None, elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def run(
    tmp_path: Path,
    nodes: list,
    inputs: list,
    outputs: list,
    inits: list = (),
    opset: int = 17,
    extra_opsets: dict[str, int] | None = None,
    **options: object,
) -> CostReport:
    """Save a one-graph model and analyse it through the public API."""
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return api.analyze_static(str(path), **options)


def one(
    tmp_path: Path,
    op: str,
    in_shapes: dict[str, list],
    inits: list = (),
    attrs: dict | None = None,
    n_out: int = 1,
    opset: int = 17,
    domain: str = "",
    in_types: dict[str, int] | None = None,
    inputs_order: list[str] | None = None,
) -> tuple[LayerCost, CostReport]:
    """A model with the single node ``op``; data inputs from ``in_shapes``, weights from ``inits``."""
    names = inputs_order or [*in_shapes, *(t.name for t in inits)]
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name="n", domain=domain, **(attrs or {}))
    ins = [_vi(n, s, (in_types or {}).get(n, F)) for n, s in in_shapes.items()]
    extra = {domain: 1} if domain else None
    report = run(tmp_path, [node], ins, [helper.make_tensor_value_info(o, 0, None) for o in outs], inits, opset, extra)
    return report.layers[0], report


# --- conv family ------------------------------------------------------------------------------------------


def test_conv_plain_with_bias(tmp_path: Path) -> None:
    layer, _ = one(tmp_path, "Conv", {"x": [2, 3, 8, 8]}, [_w("w", 4, 3, 3, 3), _w("b", 4)])
    # output 2x4x6x6 (no pad): MACs = 2*4*36 * 3*9 = 7,776; FLOPs = 2*7,776 + bias 288 = 15,840
    assert (layer.macs, layer.flops) == (7_776, 15_840)
    assert layer.params == 108 + 4 and layer.output_shapes == [(2, 4, 6, 6)] and layer.macs_dtype == "float32"
    assert layer.groups == 1  # no group attribute: dense


def test_conv_strides_pads_dilation(tmp_path: Path) -> None:
    attrs = {"strides": [2, 2], "pads": [1, 1, 1, 1], "dilations": [2, 2]}
    layer, _ = one(tmp_path, "Conv", {"x": [1, 2, 9, 9]}, [_w("w", 3, 2, 3, 3)], attrs)
    # effective kernel 5: out = floor((9 + 2 - 5) / 2) + 1 = 4 -> 1x3x4x4; MACs = 3*16 * 2*9 = 864; no bias
    assert layer.output_shapes == [(1, 3, 4, 4)]
    assert (layer.macs, layer.flops) == (864, 1_728)


def test_conv_groups_and_depthwise(tmp_path: Path) -> None:
    layer, _ = one(tmp_path, "Conv", {"x": [1, 8, 5, 5]}, [_w("w", 4, 2, 3, 3)], {"group": 4, "pads": [1] * 4})
    # 4 groups of 2 in-channels: MACs = 4 out * 25 * (8/4) * 9 = 1,800
    assert layer.macs == 1_800 and layer.groups == 4
    layer, _ = one(tmp_path, "Conv", {"x": [1, 8, 5, 5]}, [_w("w", 8, 1, 3, 3)], {"group": 8, "pads": [1] * 4})
    # depthwise: MACs = 8 * 25 * 1 * 9 = 1,800
    assert layer.macs == 1_800 and layer.groups == 8


def test_conv_records_its_window(tmp_path: Path) -> None:
    # what the predictor tells a 3 x 3 stride-1 conv by: the kernel from the weight where the node gives none,
    # strides and dilations 1 where absent
    layer, _ = one(tmp_path, "Conv", {"x": [1, 8, 5, 5]}, [_w("w", 4, 8, 3, 3)], {"pads": [1] * 4})
    assert (layer.kernel_shape, layer.strides, layer.dilations) == ((3, 3), (1, 1), (1, 1))
    layer, _ = one(tmp_path, "Conv", {"x": [1, 8, 9, 9]}, [_w("w", 4, 8, 3, 3)],
                   {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 2]})
    assert (layer.kernel_shape, layer.strides, layer.dilations) == ((3, 3), (2, 2), (2, 2))
    layer, _ = one(tmp_path, "Relu", {"x": [1, 8, 5, 5]}, [], {})
    assert (layer.kernel_shape, layer.strides, layer.dilations) == (None, None, None)


def test_conv_auto_pad_same_upper_1d_and_3d(tmp_path: Path) -> None:
    layer, _ = one(
        tmp_path, "Conv", {"x": [1, 2, 7, 7]}, [_w("w", 2, 2, 3, 3)], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}
    )
    # SAME: out = ceil(7 / 2) = 4 -> 1x2x4x4; MACs = 2*16 * 2*9 = 576
    assert layer.output_shapes == [(1, 2, 4, 4)] and layer.macs == 576
    layer, _ = one(tmp_path, "Conv", {"x": [1, 4, 10]}, [_w("w", 6, 4, 3)])
    # 1-D: out 8; MACs = 6*8 * 4*3 = 576
    assert layer.macs == 576
    layer, _ = one(tmp_path, "Conv", {"x": [1, 2, 4, 4, 4]}, [_w("w", 3, 2, 3, 3, 3)])
    # 3-D: out 2x2x2; MACs = 3*8 * 2*27 = 1,296
    assert layer.macs == 1_296


def test_conv_transpose(tmp_path: Path) -> None:
    attrs = {"strides": [2, 2], "output_padding": [1, 1]}
    layer, _ = one(tmp_path, "ConvTranspose", {"x": [1, 4, 3, 3]}, [_w("w", 4, 2, 3, 3), _w("b", 2)], attrs)
    # out = (3-1)*2 + 3 + 1 = 8 -> 1x2x8x8. Each of the 4*9 input elements scatters into 2 * 9 outputs:
    # MACs = 36 * 18 = 648; FLOPs = 1,296 + bias 128 = 1,424
    assert layer.output_shapes == [(1, 2, 8, 8)]
    assert (layer.macs, layer.flops) == (648, 1_424)
    layer, _ = one(
        tmp_path, "ConvTranspose", {"x": [1, 4, 3, 3]}, [_w("w", 4, 1, 2, 2)], {"group": 2, "strides": [2, 2]}
    )
    # group 2: out channels = 1*2; each input element scatters into 1 * 4: MACs = 36 * 4 = 144
    assert layer.macs == 144


# --- gemm / matmul / einsum -------------------------------------------------------------------------------


def test_gemm_transposes_bias_alpha_beta(tmp_path: Path) -> None:
    layer, _ = one(tmp_path, "Gemm", {"a": [5, 3]}, [_w("b", 4, 5), _w("c", 4)], {"transA": 1, "transB": 1})
    # A' = 3x5, B' = 5x4: MACs = 3*4*5 = 60; FLOPs = 120 + bias 12 = 132
    assert (layer.macs, layer.flops) == (60, 132)
    layer, _ = one(tmp_path, "Gemm", {"a": [3, 5]}, [_w("b", 5, 4), _w("c", 4)], {"alpha": 0.5, "beta": 2.0})
    # MACs 60; FLOPs = 120 + bias 12 + alpha 12 + beta 12 = 156
    assert (layer.macs, layer.flops) == (60, 156)


def test_matmul_broadcast_and_vectors(tmp_path: Path) -> None:
    layer, _ = one(tmp_path, "MatMul", {"a": [2, 1, 4, 5], "b": [3, 5, 6]})
    # batch broadcast (2,1) x (3) -> 2x3; MACs = 6 * 4*6*5 = 720
    assert layer.output_shapes == [(2, 3, 4, 6)] and (layer.macs, layer.flops) == (720, 1_440)
    layer, _ = one(tmp_path, "MatMul", {"v": [5], "m": [5, 6]})
    # vector (1,5) x (5,6): MACs = 6 * 5 = 30
    assert layer.macs == 30


def test_einsum(tmp_path: Path) -> None:
    layer, _ = one(tmp_path, "Einsum", {"a": [2, 3, 4], "b": [2, 4, 5]}, attrs={"equation": "bij,bjk->bik"}, opset=12)
    # batched matmul: b*i*j*k = 2*3*4*5 = 120 MACs; as one matmul (formulas.einsum_gemm) M = b x i = 6, N = 5, K = 4
    assert (layer.macs, layer.flops, layer.gemm_shapes) == (120, 240, [(6, 5, 4)])
    layer, _ = one(
        tmp_path, "Einsum", {"q": [1, 2, 3, 4], "k": [1, 2, 5, 4]}, attrs={"equation": "bhqd,bhkd->bhqk"}, opset=12
    )
    # attention scores: 1*2*3*5*4 = 120 MACs
    assert layer.macs == 120
    layer, _ = one(tmp_path, "Einsum", {"a": [3, 4]}, attrs={"equation": "ij->i"}, opset=12)
    # one operand, a reduction: no MACs, one add per input element = 12 FLOPs; no matmul
    assert (layer.macs, layer.flops, layer.gemm_shapes) == (0, 12, [])
    layer, _ = one(tmp_path, "Einsum", {"a": [3, 4]}, attrs={"equation": "ij->ji"}, opset=12)
    assert (layer.macs, layer.flops) == (0, 0)  # a transpose


def test_dft(tmp_path: Path) -> None:
    # opset 17, axis attribute 1: a real signal (2 transforms of 8 points, last dim 1): 2.5 x 16 x log2 8 = 120
    # (formulas.fft_flops), as the PyTorch counter's rfft; onesided or not, the same work
    layer, _ = one(tmp_path, "DFT", {"x": [2, 8, 1]}, attrs={"axis": 1}, opset=17)
    assert (layer.macs, layer.flops) == (0, 120)
    layer, _ = one(tmp_path, "DFT", {"x": [2, 8, 1]}, attrs={"axis": 1, "onesided": 1}, opset=17)
    assert layer.flops == 120
    # a complex signal: 5 x 16 x 3 = 240; inverse, scaled by 1 / 8: + 1 per real output value (2 x 8 x 2 = 32)
    layer, _ = one(tmp_path, "DFT", {"x": [2, 8, 2]}, attrs={"axis": 1}, opset=17)
    assert layer.flops == 240
    layer, _ = one(tmp_path, "DFT", {"x": [2, 8, 2]}, attrs={"axis": 1, "inverse": 1}, opset=17)
    assert layer.flops == 240 + 32
    # opset 20: the axis is an input, -2 (the signal's last dim) where absent: x (4, 2, 8, 2) -> 8 transforms of
    # 8 complex points: 5 x 64 x 3 = 960
    layer, _ = one(tmp_path, "DFT", {"x": [4, 2, 8, 2]}, opset=20)
    assert layer.flops == 960
    # the dynamo exporter's rfft (opset 18): dft_length a constant, the input's size (32), onesided: x (2, 16, 32, 1)
    # -> 2.5 x 1,024 x 5 = 12,800, torch.fft.rfft's count (test_torch_counter.py). Axis 1 of x (4, 2, 8, 2) given
    # as an opset-20 input: 32 transforms of 2 complex points, 5 x 64 x log2 2 = 320
    length = numpy_helper.from_array(np.array(32, dtype=np.int64), "n")
    layer, _ = one(tmp_path, "DFT", {"x": [2, 16, 32, 1]}, [length], {"axis": 2, "onesided": 1}, opset=18)
    assert layer.flops == 12_800
    axis = numpy_helper.from_array(np.array(1, dtype=np.int64), "axis")
    layer, _ = one(tmp_path, "DFT", {"x": [4, 2, 8, 2]}, [axis], opset=20, inputs_order=["x", "", "axis"])
    assert layer.flops == 320


# --- attention --------------------------------------------------------------------------------------------


def test_onnx_attention_4d_3d_gqa_past(tmp_path: Path) -> None:
    shapes = {"q": [2, 4, 8, 16], "k": [2, 4, 10, 16], "v": [2, 4, 10, 16]}
    layer, _ = one(tmp_path, "Attention", shapes, opset=23)
    # B*H*L*S*(E+Ev) = 2*4*8*10*32 = 20,480 MACs; 640 scores * (softmax 5 + scale 1) = 3,840
    assert (layer.macs, layer.flops) == (20_480, 40_960 + 3_840)
    layer, _ = one(tmp_path, "Attention", shapes, attrs={"is_causal": 1}, opset=23)
    assert layer.flops == 40_960 + 640 * 7  # causal mask: +1 per score
    shapes3 = {"q": [2, 8, 64], "k": [2, 10, 32], "v": [2, 10, 32]}
    layer, _ = one(tmp_path, "Attention", shapes3, attrs={"q_num_heads": 4, "kv_num_heads": 2}, opset=23)
    # 3-D with 4 query heads of 16, 2 KV heads of 16 (grouped): 2*4*8*10*(16+16) = 20,480 MACs
    assert layer.macs == 20_480
    shapes_past = {
        "q": [1, 2, 1, 8],
        "k": [1, 2, 1, 8],
        "v": [1, 2, 1, 8],
        "past_key": [1, 2, 5, 8],
        "past_value": [1, 2, 5, 8],
    }
    layer, _ = one(
        tmp_path,
        "Attention",
        shapes_past,
        n_out=3,
        opset=23,
        inputs_order=["q", "k", "v", "", "past_key", "past_value"],
    )
    # decoding one token over 5 past + 1 new keys: 1*2*1*6*(8+8) = 192 MACs
    assert layer.macs == 192


def test_com_microsoft_attention(tmp_path: Path) -> None:
    layer, report = one(
        tmp_path,
        "Attention",
        {"x": [2, 8, 32]},
        [_w("w", 32, 96), _w("bias", 96)],
        {"num_heads": 4},
        domain="com.microsoft",
    )
    # projection 2*8*32*96 = 49,152; heads 4 of 8: 2*4*8*8*(8+8) = 8,192 -> 57,344 MACs
    # FLOPs = 114,688 + bias 2*8*96 = 1,536 + 512 scores * 6 = 3,072 -> 119,296
    assert (layer.macs, layer.flops) == (57_344, 119_296)
    assert layer.output_shapes == [(2, 8, 32)] and not report.problems


# --- recurrent --------------------------------------------------------------------------------------------


def test_lstm_gru_rnn(tmp_path: Path) -> None:
    layer, _ = one(
        tmp_path, "LSTM", {"x": [5, 2, 10]}, [_w("W", 1, 80, 10), _w("R", 1, 80, 20)], {"hidden_size": 20}, n_out=3
    )
    # 4 gates * 20 hidden * (10 in + 20 recurrent) per step and batch: 2,400 * 5 steps * 2 batch = 24,000 MACs
    # FLOPs = 48,000 + 27 * 5 * 2 * 20 = 53,400
    assert (layer.macs, layer.flops) == (24_000, 53_400)
    layer, _ = one(
        tmp_path,
        "GRU",
        {"x": [5, 2, 10]},
        [_w("W", 2, 60, 10), _w("R", 2, 60, 20)],
        {"hidden_size": 20, "direction": "bidirectional"},
        n_out=2,
    )
    # 2 directions * 5 * 2 * 3*20*(10+20) = 36,000 MACs
    assert layer.macs == 36_000
    layer, _ = one(
        tmp_path,
        "RNN",
        {"x": [2, 5, 10]},
        [_w("W", 1, 20, 10), _w("R", 1, 20, 20)],
        {"hidden_size": 20, "layout": 1},
        n_out=2,
        opset=14,
    )
    # layout 1 = [batch, seq, in]: 5 * 2 * 20*(10+20) = 6,000 MACs
    assert layer.macs == 6_000


# --- quantized --------------------------------------------------------------------------------------------


def _q(name: str, *shape: int, dtype: type = np.int8) -> TensorProto:
    return numpy_helper.from_array(np.ones(shape, dtype=dtype), name)


def _s(name: str, value: float = 0.1) -> TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def test_qlinear_conv_and_matmul(tmp_path: Path) -> None:
    inits = [
        _s("xs"),
        _q("xz", dtype=np.uint8),
        _q("w", 4, 3, 3, 3),
        _s("ws"),
        _q("wz"),
        _s("ys"),
        _q("yz", dtype=np.uint8),
        numpy_helper.from_array(np.zeros(4, np.int32), "b"),
    ]
    layer, report = one(
        tmp_path,
        "QLinearConv",
        {"x": [1, 3, 6, 6]},
        inits,
        in_types={"x": TensorProto.UINT8},
        inputs_order=["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
    )
    # as Conv: 4*16 * 3*9 = 1,728 MACs at int8 (the weight); FLOPs = 3,456 + bias 64 + requantize 4*64 = 3,776
    assert (layer.macs, layer.flops, layer.macs_dtype) == (1_728, 3_776, "int8")
    assert report.compute.macs_by_dtype == {"int8": 1_728}
    assert report.params.total == 108 + 4 and report.params.by_dtype == {"int8": 108, "int32": 4}
    inits = [_s("as"), _q("az", dtype=np.uint8), _q("b", 4, 5), _s("bs"), _q("bz"), _s("ys"), _q("yz", dtype=np.uint8)]
    layer, _ = one(
        tmp_path,
        "QLinearMatMul",
        {"a": [3, 4]},
        inits,
        in_types={"a": TensorProto.UINT8},
        inputs_order=["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
    )
    # 3*5*4 = 60 MACs; FLOPs = 120 + requantize 4*15 = 180
    assert (layer.macs, layer.flops, layer.macs_dtype) == (60, 180, "int8")


def test_conv_integer_and_matmul_integer(tmp_path: Path) -> None:
    layer, _ = one(
        tmp_path, "ConvInteger", {"x": [1, 3, 6, 6]}, [_q("w", 4, 3, 3, 3)], in_types={"x": TensorProto.UINT8}
    )
    assert (layer.macs, layer.macs_dtype) == (1_728, "int8")  # as Conv above, int32 output
    layer, _ = one(
        tmp_path, "MatMulInteger", {"a": [3, 4]}, [_q("b", 4, 5, dtype=np.uint8)], in_types={"a": TensorProto.UINT8}
    )
    assert (layer.macs, layer.flops, layer.macs_dtype) == (60, 120, "uint8")


def test_weight_only_dequantized_matmul_stays_float(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("DequantizeLinear", ["wq", "ws"], ["w"], name="dq"),
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    ]
    report = run(tmp_path, nodes, [_vi("x", [2, 4])], [_vi("y", None)], [_q("wq", 4, 3), _s("ws")])
    mm = report.layers[1]
    # 2*3*4 = 24 MACs; activations are float, so the MACs run at float32 (weight-only quantization), said in notes
    assert (mm.macs, mm.macs_dtype) == (24, "float32")
    assert any("weight-only" in n for n in report.notes)
    assert report.layers[0].flops == 12 * 2  # DequantizeLinear: 2 per element of the 4x3 weight


# --- elementwise, activations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "attrs", "per"),
    [
        ("Add", {}, 1),
        ("Relu", {}, 1),
        ("Sigmoid", {}, 3),
        ("Tanh", {}, 1),
        ("Erf", {}, 1),
        ("LeakyRelu", {}, 2),
        ("HardSwish", {}, 4),
        ("Elu", {}, 3),
        ("Selu", {}, 4),
        ("Softplus", {}, 3),
        ("Mish", {}, 5),
        ("Asin", {}, 1),
        ("Clip", {}, 1),
        ("Neg", {}, 1),
        ("Sqrt", {}, 1),
        ("Shrink", {}, 2),
    ],
)
def test_elementwise_per_output_element(tmp_path: Path, op: str, attrs: dict, per: int) -> None:
    schema_inputs = onnx.defs.get_schema(op).min_input
    shapes = {"a": [2, 3, 4]} if schema_inputs == 1 else {"a": [2, 3, 4], "b": [4]}
    layer, _ = one(tmp_path, op, shapes, attrs=attrs, opset=18)
    # 24 output elements (broadcast [2,3,4] with [4]) x per-element cost
    assert (layer.macs, layer.flops) == (0, 24 * per)


def test_gelu_swish_variadic_where_qdq(tmp_path: Path) -> None:
    assert one(tmp_path, "Gelu", {"a": [10]}, opset=20)[0].flops == 50  # erf form: 5 per element
    assert one(tmp_path, "Gelu", {"a": [10]}, attrs={"approximate": "tanh"}, opset=20)[0].flops == 80  # tanh form: 8
    assert one(tmp_path, "Swish", {"a": [10]}, opset=24)[0].flops == 40  # x*sigmoid(x): 4 per element
    assert one(tmp_path, "Sum", {"a": [6], "b": [6], "c": [6]})[0].flops == 12  # 3 inputs: 2 adds per element
    assert one(tmp_path, "Mean", {"a": [6], "b": [6], "c": [6]})[0].flops == 18  # 2 adds + 1 divide
    assert one(tmp_path, "Max", {"a": [6], "b": [6]})[0].flops == 6
    where = one(tmp_path, "Where", {"c": [2, 3], "a": [3], "b": [1]}, in_types={"c": TensorProto.BOOL})[0]
    assert where.flops == 6  # one select per output element
    dq, _ = one(tmp_path, "DequantizeLinear", {}, [_q("x", 4, 5), _s("s")])
    assert dq.flops == 40  # (x - zp) * scale: 2 per element
    q, _ = one(tmp_path, "QuantizeLinear", {"x": [4, 5]}, [_s("s")])
    assert q.flops == 80  # divide, round, add zero point, saturate: 4 per element
    dyn, _ = one(tmp_path, "DynamicQuantizeLinear", {"x": [4, 5]}, n_out=3)
    assert dyn.flops == 120  # min/max over input (2) + quantize (4) per element
    assert one(tmp_path, "CumSum", {"x": [4, 5]}, [_w("axis", dtype=np.int64, value=1)])[0].flops == 20


# --- normalisations, softmax, pooling, reductions ---------------------------------------------------------


def test_norms(tmp_path: Path) -> None:
    bn = [_w("s", 3), _w("b", 3), _w("m", 3), _w("v", 3, value=1.0)]
    layer, report = one(tmp_path, "BatchNormalization", {"x": [2, 3, 4, 4]}, bn)
    assert layer.flops == 2 * 96  # folded scale and shift: 2 per element
    assert (report.params.total, report.params.buffers) == (6, 6)  # scale+bias params; mean+var buffers
    layer, _ = one(tmp_path, "LayerNormalization", {"x": [2, 5, 8]}, [_w("g", 8), _w("b", 8)], {"axis": -1})
    assert layer.flops == 80 * 7  # 5 + affine scale 1 + shift 1
    layer, _ = one(tmp_path, "LayerNormalization", {"x": [2, 5, 8]}, [_w("g", 8)], {"axis": -1})
    assert layer.flops == 80 * 6  # no bias input: 5 + scale
    layer, _ = one(tmp_path, "InstanceNormalization", {"x": [2, 3, 4, 4]}, [_w("g", 3), _w("b", 3)])
    assert layer.flops == 96 * 7
    layer, _ = one(
        tmp_path, "GroupNormalization", {"x": [2, 4, 3, 3]}, [_w("g", 4), _w("b", 4)], {"num_groups": 2}, opset=21
    )
    assert layer.flops == 72 * 7
    layer, _ = one(tmp_path, "RMSNormalization", {"x": [2, 5, 8]}, [_w("g", 8)], opset=23)
    assert layer.flops == 80 * 4  # 3 + scale
    layer, _ = one(tmp_path, "LpNormalization", {"x": [3, 4]}, attrs={"axis": -1, "p": 2})
    assert layer.flops == 12 * 3 + 3  # 3 per element + 1 root per normalised row (3 rows)
    layer, _ = one(tmp_path, "LRN", {"x": [1, 4, 2, 2]}, attrs={"size": 3})
    assert layer.flops == 16 * (2 * 3 + 3)
    layer, _ = one(tmp_path, "MeanVarianceNormalization", {"x": [1, 4, 2, 2]})
    assert layer.flops == 16 * 5


def test_softmax_family(tmp_path: Path) -> None:
    assert one(tmp_path, "Softmax", {"x": [4, 10]})[0].flops == 200  # max, subtract, exp, sum, divide: 5
    assert one(tmp_path, "LogSoftmax", {"x": [4, 10]})[0].flops == 200
    assert one(tmp_path, "Hardmax", {"x": [4, 10]})[0].flops == 40  # one compare per input element


def test_pooling_and_reductions(tmp_path: Path) -> None:
    layer, _ = one(
        tmp_path, "MaxPool", {"x": [1, 2, 8, 8]}, attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4}
    )
    # out = floor((8 + 2 - 3) / 2) + 1 = 4 -> 32 outputs x 9 window = 288
    assert layer.output_shapes == [(1, 2, 4, 4)] and layer.flops == 288
    layer, _ = one(tmp_path, "AveragePool", {"x": [1, 2, 8, 8]}, attrs={"kernel_shape": [2, 2], "strides": [2, 2]})
    assert layer.flops == 32 * 4
    assert one(tmp_path, "GlobalAveragePool", {"x": [1, 2, 8, 8]})[0].flops == 128  # input elements
    assert one(tmp_path, "GlobalMaxPool", {"x": [1, 2, 8, 8]})[0].flops == 128
    layer, _ = one(
        tmp_path, "ReduceMean", {"x": [2, 3, 4]}, [_w("axes", 1, dtype=np.int64, value=2)], {"keepdims": 0}, opset=18
    )
    assert layer.flops == 24 and layer.output_shapes == [(2, 3)]  # input elements
    assert one(tmp_path, "ArgMax", {"x": [2, 3, 4]}, attrs={"axis": 1})[0].flops == 24


def test_topk_and_nonzero_cost_comparisons(tmp_path: Path) -> None:
    """The routing ops of a mixture of experts, as the PyTorch counter's topk and nonzero (formulas.topk_flops)."""
    k2 = [numpy_helper.from_array(np.array([2], np.int64), "k")]
    layer, _ = one(tmp_path, "TopK", {"x": [8, 4]}, k2, {"axis": -1}, n_out=2)
    # 32 input elements x (1 + ceil(log2 2)) = 64 comparisons; no MACs
    assert layer.status == "counted" and (layer.macs, layer.flops) == (0, 64)
    k1 = [numpy_helper.from_array(np.array([1], np.int64), "k")]
    assert one(tmp_path, "TopK", {"x": [8, 4]}, k1, {"axis": 0}, n_out=2)[0].flops == 32  # argmax: 1 each
    layer, _ = one(tmp_path, "NonZero", {"x": [2, 8]})
    assert layer.status == "counted" and (layer.macs, layer.flops) == (0, 16)  # one test per input element


def test_resize_modes(tmp_path: Path) -> None:
    scales = [_w("roi", 0), numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    layer, report = one(tmp_path, "Resize", {"x": [1, 2, 4, 4]}, scales, {"mode": "nearest"})
    assert layer.status == "zero_cost" and report.compute.zero_cost_ops == {"Resize": 1}
    layer, _ = one(tmp_path, "Resize", {"x": [1, 2, 4, 4]}, scales, {"mode": "linear"})
    # 2 resized axes: 3 lerps of 3 FLOPs = 9 per output element; 1*2*8*8 = 128 outputs -> 1,152
    assert layer.flops == 1_152
    layer, report = one(tmp_path, "Resize", {"x": [1, 2, 4, 4]}, scales, {"mode": "cubic"})
    # 2 resized axes: (4^2 - 1) / 3 = 5 four-tap interpolations of 7 FLOPs = 35 per output element; 128 outputs ->
    # 4,480 (the PyTorch counter's upsample_bicubic2d gives the same)
    assert layer.status == "counted" and layer.flops == 4_480 and report.compute.uncounted_ops == {}
    layer, _ = one(tmp_path, "Resize", {"x": [1, 2, 4, 4]}, scales, {"mode": "cubic", "cubic_coeff_a": -0.5,
                                                                       "exclude_outside": 1})
    assert layer.flops == 4_480  # other weights, the same work


def test_grid_sample_modes(tmp_path: Path) -> None:
    # X 1 x 4 x 8 x 8 at a 5 x 6 grid: 120 outputs; as the PyTorch counter's grid_sampler_2d
    # (test_torch_counter.test_grid_sample_costs_as_a_resize_of_every_sampled_axis): 9 / 35 / 0 FLOPs each
    shapes = {"x": [1, 4, 8, 8], "grid": [1, 5, 6, 2]}
    for opset, mode, flops in ((16, "bilinear", 1_080), (16, "bicubic", 4_200), (16, "nearest", 0),
                               (20, "linear", 1_080), (20, "cubic", 4_200)):
        layer, report = one(tmp_path, "GridSample", shapes, attrs={"mode": mode}, opset=opset)
        assert (layer.status, layer.flops, report.compute.uncounted_ops) == ("counted", flops, {}), (opset, mode)
    layer, _ = one(tmp_path, "GridSample", shapes, opset=16)  # the default mode: bilinear
    assert layer.flops == 1_080


def test_rotary_embedding(tmp_path: Path) -> None:
    shapes = {"x": [1, 2, 3, 8], "cos": [1, 3, 4], "sin": [1, 3, 4]}
    layer, _ = one(tmp_path, "RotaryEmbedding", shapes, opset=23)
    # every element rotated: x*cos + rot(x)*sin = 3 FLOPs x 48 elements
    assert layer.flops == 144
    shapes = {"x": [1, 2, 3, 8], "cos": [1, 3, 2], "sin": [1, 3, 2]}
    layer, _ = one(tmp_path, "RotaryEmbedding", shapes, attrs={"rotary_embedding_dim": 4}, opset=23)
    assert layer.flops == 3 * 6 * 4  # 6 vectors of 8, 4 dims rotated each


@pytest.mark.parametrize(
    ("op", "shapes", "attrs", "macs", "flops"),
    [
        # FusedMatMul [2,3,4] x [2,4,5]: 2*3*5 outputs x k 4 = 120 MACs
        ("FusedMatMul", {"a": [2, 3, 4], "b": [2, 4, 5]}, {}, 120, 240),
        # MultiHeadAttention, 4 heads of 8, 8 queries over 10 keys: 2*4*8*10*(8+8) = 10,240 MACs;
        # FLOPs 20,480 + 640 scores * (softmax 5 + scale 1) = 24,320
        ("MultiHeadAttention", {"q": [2, 8, 32], "k": [2, 10, 32], "v": [2, 10, 32]}, {"num_heads": 4}, 10_240, 24_320),
        # RotaryEmbedding [1, 3, 16] with 2 heads of 8, all rotated: 3 FLOPs x 48 elements
        ("RotaryEmbedding", {"x": [1, 3, 16], "pos": [1, 3], "cos": [3, 4], "sin": [3, 4]}, {"num_heads": 2}, 0, 144),
        ("Gelu", {"x": [2, 5]}, {}, 0, 50),  # 5 per element
        ("FastGelu", {"x": [2, 5], "bias": [5]}, {}, 0, 90),  # tanh form 8 + bias 1
        ("BiasGelu", {"x": [2, 5], "bias": [5]}, {}, 0, 60),  # bias 1 + erf form 5
        ("QuickGelu", {"x": [2, 5]}, {}, 0, 40),  # x * sigmoid(1.702 x): 4
        ("BiasAdd", {"x": [2, 5, 4], "bias": [4], "skip": [2, 5, 4]}, {}, 0, 80),  # two adds per element
        # SkipLayerNormalization: skip add 1 + norm 5 + scale 1 + shift 1 = 8 per element x 64
        ("SkipLayerNormalization", {"x": [2, 4, 8], "skip": [2, 4, 8], "g": [8], "b": [8]}, {}, 0, 512),
        ("SimplifiedLayerNormalization", {"x": [2, 4, 8], "g": [8]}, {}, 0, 256),  # RMS 3 + scale 1
        ("SkipSimplifiedLayerNormalization", {"x": [2, 4, 8], "skip": [2, 4, 8], "g": [8]}, {}, 0, 320),  # 1 + 3 + 1
    ],
)
def test_onnxruntime_contrib_ops(tmp_path: Path, op: str, shapes: dict, attrs: dict, macs: int, flops: int) -> None:
    layer, report = one(tmp_path, op, shapes, attrs=attrs, domain="com.microsoft")
    assert (layer.macs, layer.flops) == (macs, flops)
    assert layer.status == "counted" and report.problems == []


def test_lp_pooling(tmp_path: Path) -> None:
    layer, _ = one(tmp_path, "LpPool", {"x": [1, 2, 4, 4]}, attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, opset=18)
    assert layer.flops == 8 * 4  # 1x2x2x2 outputs x window 4
    assert one(tmp_path, "GlobalLpPool", {"x": [1, 2, 4, 4]})[0].flops == 32  # input elements


# --- states, control flow, parameters, memory -------------------------------------------------------------


def test_zero_cost_and_uncounted_states(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Transpose", ["r"], ["t"], name="transpose", perm=[1, 0]),
        helper.make_node("Unique", ["t"], ["v"], name="unique"),
    ]
    inits = [numpy_helper.from_array(np.array([4, 6], np.int64), "shape")]
    report = run(tmp_path, nodes, [_vi("x", [2, 12])], [_vi("v", None)], inits)
    assert report.compute.zero_cost_ops == {"Reshape": 1, "Transpose": 1}
    assert report.compute.uncounted_ops == {"Unique": 1} and report.problems == []  # known op, no formula
    assert [layer.status for layer in report.layers] == ["zero_cost", "zero_cost", "uncounted"]
    assert report.params.total == 0 and report.params.constants == 2  # shape (2) is a constant


def test_unknown_shape_is_uncounted_with_note(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
        helper.make_node("Cast", ["nz"], ["f"], name="cast", to=F),
        helper.make_node("Relu", ["f"], ["y"], name="relu"),
    ]
    report = run(tmp_path, nodes, [_vi("x", [3, 4])], [_vi("y", None)])
    relu = report.layers[2]
    # NonZero's output length depends on the data: Relu's output shape is unknown, so it is not counted
    assert relu.status == "uncounted" and report.compute.uncounted_ops == {"Relu": 1}
    assert report.compute.incomplete_reasons == ["Relu x1: a tensor shape could not be inferred"]
    assert not report.compute.complete


def test_slice_of_unfolded_table_gets_its_shape(tmp_path: Path) -> None:
    """Slice(position table [512, 8], 0, seq) where the table is too big to fold (its data is never read) and the
    file carries the exporter's symbolic value_info ('seq'): the slice length still comes out as the bound seq."""
    nodes = [
        helper.make_node("Shape", ["x"], ["seq_len"], name="shape", start=1, end=2),
        helper.make_node("Slice", ["table", "zero", "seq_len", "zero"], ["pos"], name="slice"),
        helper.make_node("Add", ["x", "pos"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [_vi("x", ["batch", "seq", 8])],
        [_vi("y", None)],
        [_w("table", 512, 8), numpy_helper.from_array(np.array([0], np.int64), "zero")],
        value_info=[_vi("pos", ["seq", 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(tmp_path / "m.onnx"))
    report = api.analyze_static(str(tmp_path / "m.onnx"), input_shapes=["x=2x10x8"])
    # the Add broadcasts [2, 10, 8] + [10, 8]: 160 FLOPs
    assert report.layers[1].output_shapes == [(10, 8)] and report.compute.flops == 160


def test_scan_trip_count(tmp_path: Path) -> None:
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["x_t", "w"], ["p"], name="mm"),
            helper.make_node("Add", ["acc", "p"], ["acc_next"], name="add"),
            helper.make_node("Identity", ["acc_next"], ["out_t"], name="id"),
        ],
        "body",
        [_vi("acc", [1, 4]), _vi("x_t", [1, 3])],
        [_vi("acc_next", [1, 4]), _vi("out_t", [1, 4])],
    )
    node = helper.make_node("Scan", ["acc0", "xs"], ["acc", "outs"], name="scan", body=body, num_scan_inputs=1)
    report = run(
        tmp_path,
        [node],
        [_vi("acc0", [1, 4]), _vi("xs", [6, 1, 3])],
        [_vi("acc", None), _vi("outs", None)],
        [_w("w", 3, 4)],
    )
    # 6 steps x (MatMul 1*4*3 = 12 MACs, Add 4 FLOPs): 72 MACs, 6*(24+4) = 168 FLOPs
    assert (report.compute.macs, report.compute.flops) == (72, 168)
    assert any("Scan 'scan': 6 iterations" in n for n in report.notes)
    assert report.outputs[1].shape == (6, 1, 4)


def test_params_tied_constants_unused(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="mm1"),
        helper.make_node("MatMul", ["a", "w"], ["b"], name="mm2"),
        helper.make_node("Add", ["b", "eps"], ["c"], name="add_eps"),
        helper.make_node("Constant", [], ["k"], name="k", value=numpy_helper.from_array(np.ones((4, 4), np.float32))),
        helper.make_node("Mul", ["c", "k"], ["y"], name="mul"),
    ]
    report = run(
        tmp_path,
        nodes,
        [_vi("x", [2, 4])],
        [_vi("y", None)],
        [_w("w", 4, 4), _w("eps", dtype=np.float32, value=1e-5), _w("unused", 3)],
    )
    # w (16) is read by two nodes: counted once, shared 16; 'unused' (3) is stored so counted, with a note
    assert (report.params.total, report.params.shared) == (19, 16)
    assert report.params.constants == 1 + 16  # scalar eps + the 4x4 Constant node
    assert report.layers[0].params == 16 and report.layers[1].params == 16  # each layer shows the weight it reads
    assert any("read by no node" in n for n in report.notes)


def test_storage_sizes(tmp_path: Path) -> None:
    inits = [_w("w", 10, 6), numpy_helper.from_array(np.ones(5, np.float16), "h")]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
        helper.make_node("Cast", ["a"], ["a16"], name="cast", to=TensorProto.FLOAT16),
        helper.make_node("Slice", ["a16", "st", "en"], ["s"], name="slice"),
        helper.make_node("Add", ["s", "h"], ["y"], name="add"),
    ]
    st = [
        numpy_helper.from_array(np.array([0], np.int64), "st"),
        numpy_helper.from_array(np.array([5], np.int64), "en"),
    ]
    report = run(tmp_path, nodes, [_vi("x", [1, 10])], [_vi("y", None)], inits + st)
    # params 60 fp32 + 5 fp16 = 65; bytes 240 + 10 = 250; fp16 130, int8 65, int4 30 + 3 (halves rounded up per tensor)
    assert report.params.by_dtype == {"float32": 60, "float16": 5}
    s = report.storage
    assert (s.bytes, s.fp16_bytes, s.int8_bytes, s.int4_bytes) == (250, 130, 65, 33)


def test_memory_activation_peak(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="a"),
        helper.make_node("Relu", ["a"], ["b"], name="b"),
        helper.make_node("Add", ["a", "b"], ["y"], name="y"),
    ]
    report = run(tmp_path, nodes, [_vi("x", [1, 100])], [_vi("y", None)])
    # three fp32 tensors of 100 elements = 1,200 bytes written; a, b and y are live together at the Add: 1,200
    assert report.memory.activation_bytes == 1_200 and report.memory.peak_activation_bytes == 1_200
    assert report.memory.input_bytes == 400 and report.memory.output_bytes == 400


def test_unsorted_graph_and_sequence_output(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["a"], ["y"], name="relu"),  # written before its producer
        helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
        helper.make_node("SequenceConstruct", ["y", "y"], ["seq"], name="seq"),
    ]
    report = run(
        tmp_path,
        nodes,
        [_vi("x", [2, 4])],
        [_vi("y", None), helper.make_tensor_sequence_value_info("seq", F, None)],
        [_w("w", 4, 3)],
    )
    # counted in sorted order: MatMul 2*3*4 = 24 MACs (48 FLOPs), then Relu 6 FLOPs; SequenceConstruct moves data
    assert [layer.name for layer in report.layers] == ["mm", "relu", "seq"]
    assert (report.compute.macs, report.compute.flops) == (24, 54)
    assert any("not in topological order" in n for n in report.notes)
    assert report.outputs[1].dtype == "unknown"


# --- registry ------------------------------------------------------------------------------------------------


def test_registry_refuses_duplicates() -> None:
    from modelcost.analysis import onnx_ops

    onnx_ops.registered_ops()
    with pytest.raises(InternalError):
        onnx_ops.register("Conv")(lambda ctx: None)
    with pytest.raises(InternalError):
        onnx_ops.register_zero_cost("Reshape")


def test_every_schema_op_has_one_state() -> None:
    from modelcost.analysis import onnx_ops

    ops = onnx_ops.registered_ops()
    default = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    for domain, op in ops:
        # nothing registered under a name that no schema knows (typos), contrib ops aside; ONNX Runtime registers
        # SimplifiedLayerNormalization in the default domain (its transformer optimizer writes it there)
        assert domain == "com.microsoft" or op in default or op == "SimplifiedLayerNormalization", op
    states = {op: onnx_ops.lookup("", op)[0] for op in default}
    assert set(states.values()) <= {"counted", "zero_cost", "control", "none"}
    assert states["If"] == states["Loop"] == states["Scan"] == "control"
    counted = sum(1 for s in states.values() if s == "counted")
    assert counted > 100  # the families cover most of the schema; the rest is listed as uncounted when met


def test_torch_export_matches_hand_count(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1, groups=1)
            self.dw = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.fc = nn.Linear(16, 4)

        def forward(self, x):  # noqa: ANN001, ANN202
            y = self.dw(torch.relu(self.conv(x)))  # [1, 8, 6, 6]
            seq = y.flatten(2).transpose(1, 2)  # [1, 36, 8]
            out, _ = self.lstm(seq)
            return self.fc(out[:, -1])

    path = tmp_path / "net.onnx"
    torch.onnx.export(Net().eval(), (torch.randn(1, 3, 6, 6),), str(path), dynamo=False)
    report = api.analyze_static(str(path))
    # conv 8*36*3*9 = 7,776; depthwise 8*36*9 = 2,592; LSTM 36 steps * 4*16*(8+16) = 55,296; fc 16*4 = 64
    assert report.compute.macs == 7_776 + 2_592 + 55_296 + 64
    assert report.compute.uncounted_ops == {} and report.problems == []
