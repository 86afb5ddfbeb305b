"""The PyTorch counter: every aten formula, composites (attention, RNNs, RMS norm), the three op states,
parameters / buffers / tied weights, activation memory. Each expected figure is derived in a comment."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from modelcost import api
from modelcost.analysis import formulas, torch_ops
from modelcost.analysis.predict import per_call
from modelcost.analysis.torch_counter import analyze_module
from tests.conftest import requires_cuda

aten = torch.ops.aten


def meta(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.empty(shape, device="meta", dtype=dtype)


class Fn(nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def count(fn, *inputs: torch.Tensor):
    report = analyze_module(Fn(fn), list(inputs))
    assert not report.problems, report.problems
    return report.compute


def count_module(build, *inputs: torch.Tensor):
    with torch.device("meta"):
        module = build().eval()
    report = analyze_module(module, list(inputs))
    assert not report.problems, report.problems
    return report


def direct(op, *args, out, **kwargs) -> torch_ops.OpCost:
    """A formula on its own, for kernels that only exist on other devices (cuDNN, flash attention, ...)."""
    return torch_ops.op_cost(op, args, kwargs, out)


# ---------------------------------------------------------------------------------------------------
# matrix products


def test_mm_bmm_matmul_dot_mv():
    assert count(torch.mm, meta(3, 4), meta(4, 5)).macs == 60  # 3*5*4
    c = count(torch.bmm, meta(2, 3, 4), meta(2, 4, 5))
    assert (c.macs, c.flops) == (120, 240)  # 2 * 3*5*4; FLOPs 2 x MACs, no bias
    assert count(torch.matmul, meta(2, 1, 3, 4), meta(5, 4, 6)).macs == 720  # batch 2*5 x 3*6*4
    assert count(torch.dot, meta(7), meta(7)).macs == 7  # k
    assert count(torch.mv, meta(3, 4), meta(4)).macs == 12  # m*k
    assert direct(aten.vdot.default, meta(7), meta(7), out=meta()).macs == 7
    assert direct(aten.matmul.default, meta(2, 3, 4), meta(4, 5), out=meta(2, 3, 5)).macs == 120  # 2*3*5*4
    cost = direct(aten._int_mm.default, meta(16, 32, dtype=torch.int8), meta(32, 8, dtype=torch.int8),
                  out=meta(16, 8, dtype=torch.int32))
    assert (cost.macs, cost.macs_dtype) == (4096, "int8")  # 16*8*32


def test_addmm_family_adds_one_flop_per_output_for_the_bias():
    c = count_module(lambda: nn.Linear(4, 5), meta(3, 4)).compute
    assert (c.macs, c.flops) == (60, 135)  # addmm 3*5*4 = 60; 2*60 + 15 bias adds
    c = count_module(lambda: nn.Linear(4, 5, bias=False), meta(2, 3, 4)).compute
    assert (c.macs, c.flops) == (120, 240)  # (6,4)x(4,5): 6*5*4, no bias
    c = count(torch.baddbmm, meta(2, 3, 5), meta(2, 3, 4), meta(2, 4, 5))
    assert (c.macs, c.flops) == (120, 270)  # 2*3*5*4; 240 + 30 outputs
    c = count(lambda a, b, d: torch.baddbmm(a, b, d, beta=0), meta(2, 3, 5), meta(2, 3, 4), meta(2, 4, 5))
    assert c.flops == 240  # beta = 0: no bias added
    c = count(torch.addmv, meta(3), meta(3, 4), meta(4))
    assert (c.macs, c.flops) == (12, 27)  # 3*4; 24 + 3
    c = count(torch.addbmm, meta(3, 5), meta(2, 3, 4), meta(2, 4, 5))
    assert (c.macs, c.flops) == (120, 255)  # sum over the batch of 2 products 3*5*4; 240 + 15
    c = count(torch.addr, meta(3, 5), meta(3), meta(5))
    assert (c.macs, c.flops) == (15, 45)  # rank-1 update 3*5; 30 + 15
    cost = direct(aten._addmm_activation.default, meta(5), meta(3, 4), meta(4, 5), use_gelu=True, out=meta(3, 5))
    assert (cost.macs, cost.flops) == (60, 210)  # 60; 120 + 15 bias + 5 * 15 GELU
    cost = direct(aten.linear.default, meta(2, 3, 4), meta(5, 4), meta(5), out=meta(2, 3, 5))
    assert (cost.macs, cost.flops) == (120, 270)  # 30 outputs * 4; 240 + 30


def test_scaled_and_weight_only_quantised_matmuls():
    f8 = torch.float8_e4m3fn
    cost = direct(aten._scaled_mm.default, meta(16, 32, dtype=f8), meta(32, 8, dtype=f8), meta(), meta(),
                  out=meta(16, 8))
    assert (cost.macs, cost.macs_dtype) == (4096, "float8_e4m3fn")  # 16*8*32
    cost = direct(aten._weight_int8pack_mm.default, meta(4, 64), meta(32, 64, dtype=torch.int8), meta(32),
                  out=meta(4, 32))
    assert (cost.macs, cost.macs_dtype) == (8192, "int8")  # 4*32*64
    cost = direct(aten._weight_int4pack_mm.default, meta(4, 64), meta(4, 1, 32, 4, dtype=torch.int32), 32,
                  meta(2, 32, 2), out=meta(4, 32))
    assert (cost.macs, cost.macs_dtype) == (8192, "int4")  # 4*32*64


# ---------------------------------------------------------------------------------------------------
# convolution


@pytest.mark.parametrize(
    ("build", "shape", "macs", "flops"),
    [
        # plain 3x3, bias: out 8x16x16 = 2048 elements, each 3*9 MACs -> 55,296; FLOPs 2*55,296 + 2,048
        (lambda: nn.Conv2d(3, 8, 3, padding=1), (1, 3, 16, 16), 55_296, 112_640),
        # grouped (4 groups): out 2x16x10x10 = 3,200 elements, each (8/4)*9 = 18 MACs -> 57,600; no bias
        (lambda: nn.Conv2d(8, 16, 3, groups=4, padding=1, bias=False), (2, 8, 10, 10), 57_600, 115_200),
        # depthwise stride 2: out 16x16x16 = 4,096 elements, each 1*9 MACs -> 36,864
        (lambda: nn.Conv2d(16, 16, 3, groups=16, stride=2, padding=1, bias=False), (1, 16, 32, 32), 36_864, 73_728),
        # dilation 2: out 20 - 2*(3-1) = 16 -> 6x16x16 = 1,536 elements, each 4*9 -> 55,296 (dilation reads
        # other inputs, not more)
        (lambda: nn.Conv2d(4, 6, 3, dilation=2, bias=False), (1, 4, 20, 20), 55_296, 110_592),
        # transposed stride 2: each of 8*5*5 = 200 inputs scatters into 4*9 outputs -> 7,200; out 4x11x11 = 484 bias
        (lambda: nn.ConvTranspose2d(8, 4, 3, stride=2), (1, 8, 5, 5), 7_200, 14_884),
        # grouped transposed (2 groups): 200 inputs x (4/2)*9 -> 3,600
        (lambda: nn.ConvTranspose2d(8, 4, 3, stride=2, groups=2, bias=False), (1, 8, 5, 5), 3_600, 7_200),
        # conv1d: out 2x8x16 = 256 elements x 4*5 -> 5,120
        (lambda: nn.Conv1d(4, 8, 5, bias=False), (2, 4, 20), 5_120, 10_240),
        # conv3d: out 4x4x4x4 = 256 elements x 2*27 -> 13,824
        (lambda: nn.Conv3d(2, 4, 3, bias=False), (1, 2, 6, 6, 6), 13_824, 27_648),
    ],
)
def test_convolutions(build, shape, macs, flops):
    c = count_module(build, meta(*shape)).compute
    assert (c.macs, c.flops) == (macs, flops)


def test_device_specific_conv_kernels():
    x, w = meta(1, 3, 16, 16), meta(8, 3, 3, 3)
    # 8x14x14 = 1,568 outputs x 27 MACs = 42,336
    assert direct(aten.cudnn_convolution.default, x, w, [0, 0], [1, 1], [1, 1], 1, False, False, False,
                  out=meta(1, 8, 14, 14)).macs == 42_336
    cost = direct(aten._slow_conv2d_forward.default, x, w, [3, 3], meta(8), [1, 1], [0, 0], out=meta(1, 8, 14, 14))
    assert (cost.macs, cost.flops) == (42_336, 86_240)  # + 1,568 bias adds
    # depthwise through oneDNN: 4x6x6 = 144 outputs x 1*9 = 1,296
    assert direct(aten.mkldnn_convolution.default, meta(1, 4, 8, 8), meta(4, 1, 3, 3), None, [0, 0], [1, 1], [1, 1], 4,
                  out=meta(1, 4, 6, 6)).macs == 1_296
    # transposed (cuDNN): 8*5*5 inputs x 4*9 = 7,200
    assert direct(aten.cudnn_convolution_transpose.default, meta(1, 8, 5, 5), meta(8, 4, 3, 3), [0, 0], [0, 0], [2, 2],
                  [1, 1], 1, False, False, False, out=meta(1, 4, 11, 11)).macs == 7_200


# ---------------------------------------------------------------------------------------------------
# attention


def sdpa_block(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def einsum_block(q, k, v):
    scores = torch.einsum("bhld,bhsd->bhls", q, k) * q.shape[-1] ** -0.5
    return torch.einsum("bhls,bhsd->bhld", scores.softmax(-1), v)


QKV = ((2, 4, 8, 16), (2, 4, 10, 16), (2, 4, 10, 16))


def test_attention_sdpa_and_einsum_give_the_same_exact_macs():
    # scores: 2*4 heads x 8 x 10 x 16 = 10,240; weighted sum of v: the same -> 20,480 MACs
    # FLOPs: 2 * 20,480 + per score (2*4*8*10 = 640) softmax 5 + scale 1 -> 40,960 + 3,840 = 44,800
    a = count(sdpa_block, *(meta(*s) for s in QKV))
    e = count(einsum_block, *(meta(*s) for s in QKV))
    assert (a.macs, a.flops) == (20_480, 44_800)
    assert e.macs == a.macs == formulas.einsum_macs("bhld,bhsd->bhls", QKV[:2]) * 2
    # the einsum version: two einsums 2 * 2 * 10,240 + scale mul 640 + softmax 5*640 = 44,800 too
    assert e.flops == 44_800
    assert a.uncounted_ops == e.uncounted_ops == {}


@pytest.mark.parametrize(
    ("equation", "shapes", "macs"),
    [
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], 120),  # batched matmul 2 * 3*5*4
        ("bi,bi->b", [(2, 5), (2, 5)], 10),  # batched dot: 2 * 5
        ("i,j->ij", [(3,), (4,)], 12),  # outer product: every index combination, 3*4 (formulas.einsum_macs)
        ("bi,bi->bi", [(2, 5), (2, 5)], 10),  # elementwise product: 2*5, as the ONNX counter counts it
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 64),  # left to right: 2*3*4 + 2*4*5
    ],
)
def test_einsum_counts_as_the_shared_formula(equation, shapes, macs):
    c = count(lambda *xs: torch.einsum(equation, *xs), *(meta(*s) for s in shapes))
    assert (c.macs, c.flops) == (macs, 2 * macs) and macs == formulas.einsum_macs(equation, shapes)
    assert count(lambda x: torch.einsum("ij->j", x), meta(3, 4)).flops == 12  # one operand: a sum, 12 adds


class RelAttention(nn.Module):
    """XLNet's relative attention, reduced: a projection einsum of a (h, n, d) weight, then scores of two einsums
    (a module with a child, so its einsums are layers of their own, as XLNet's are)."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Parameter(torch.empty(32, 4, 8))
        self.dropout = nn.Dropout(0.0)

    def forward(self, h: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        q = torch.einsum("ibh,hnd->ibnd", h, self.q)
        scores = torch.einsum("ibnd,jbnd->bnij", q, q) + torch.einsum("ibnd,jbnd->bnij", q, r)[..., :6]
        return self.dropout(scores)


def test_each_einsum_call_keeps_its_matmul_shape():
    # h (i=6, b=2, h=32), weight (32, 4 heads, 8): the projection is M = 6 x 2 = 12, N = 4 x 8 = 32, K = 32
    # (formulas.einsum_gemm; 12,288 MACs), which its output (6, 2, 4, 8) alone would read as N = 8. The score
    # einsums are M = b x n x i = 2 x 4 x 6 = 48, N = j = 6 and 10 (r: 10 positions), K = d = 8 (2,304 and
    # 3,840 MACs). The module's three einsums are one layer of three calls, one shape per call as call_macs,
    # and the predictor's per_call gives each call its own
    with torch.device("meta"):
        module = RelAttention()
    report = analyze_module(module, [meta(6, 2, 32), meta(10, 2, 4, 8)])
    [layer] = [lc for lc in report.layers if lc.op == "einsum"]
    assert layer.gemm_shapes == [(12, 32, 32), (48, 6, 8), (48, 10, 8)]
    assert layer.call_macs == [12_288, 2_304, 3_840] == [math.prod(s) for s in layer.gemm_shapes]
    assert [c.gemm_shapes for c in per_call(layer, "gemm")] == [[(12, 32, 32)], [(48, 6, 8)], [(48, 10, 8)]]


def test_fourier_transforms_count_as_the_shared_formula():
    # x (2, 16, 32) real. fftn over (1, 2): cast to complex, then one complex 2-D transform of length 16 x 32 =
    # 512 over 1,024 points: 5 x 1,024 x 9 = 46,080 (formulas.fft_flops), unscaled (norm "backward")
    x = meta(2, 16, 32)
    assert count(lambda t: torch.fft.fftn(t, dim=(1, 2)), x).flops == 46_080
    # rfft over the last dim (32): 2.5 x 1,024 x 5 = 12,800; with norm "ortho" + 1 per real output value,
    # 2 x 16 x 17 complex = 544 x 2 = 1,088
    assert count(lambda t: torch.fft.rfft(t), x).flops == 12_800
    assert count(lambda t: torch.fft.rfft(t, norm="ortho"), x).flops == 12_800 + 1_088
    # irfft of (2, 16, 17) back to 32 real points: 2.5 x 1,024 x 5 = 12,800, scaled by 1 / 32: + 1,024
    spectrum = torch.empty(2, 16, 17, device="meta", dtype=torch.complex64)
    assert count(lambda t: torch.fft.irfft(t, n=32), spectrum).flops == 12_800 + 1_024
    assert count(lambda t: torch.fft.rfft(t), x).macs == 0


def test_fnet_counts_completely() -> None:
    # FNet's token mixing (transformers' FNetBasicFourierTransform): fftn over (sequence, hidden) per sample, the
    # real part kept. Hidden 32, sequence 16, batch 2: 5 x (2 x 16 x 32) x log2(16 x 32) = 46,080 FLOPs a layer
    transformers = pytest.importorskip("transformers")
    config = transformers.FNetConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, intermediate_size=64,
                                     max_position_embeddings=64, use_tpu_fourier_optimizations=False)
    with torch.device("meta"):
        model = transformers.FNetModel(config).eval()
    report = analyze_module(model, [torch.zeros(2, 16, dtype=torch.long)])
    assert report.compute.complete and report.compute.uncounted_ops == {}
    mixing = [lc.flops for lc in report.layers if lc.op == "FNetBasicFourierTransform"]
    assert mixing == [46_080, 46_080]


def test_attention_mask_gqa_and_real_cpu_kernel():
    masked = count(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                   *(meta(*s) for s in QKV), meta(8, 10))
    assert masked.flops == 44_800 + 640  # + 1 per score for the additive mask
    # GQA: 8 query heads share 2 kv heads: 8 x 6 x 6 x (16 + 16) = 9,216
    gqa = count(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                meta(1, 8, 6, 16), meta(1, 2, 6, 16), meta(1, 2, 6, 16))
    assert gqa.macs == 9_216
    # on real CPU tensors sdpa runs the fused CPU kernel: still counted once
    cpu = count(sdpa_block, *(torch.randn(s) for s in QKV))
    assert (cpu.macs, cpu.flops) == (20_480, 44_800)
    # the CPU kernel called directly (as a TorchScript graph would) goes through the aten formula
    direct_cpu = count(lambda q, k, v: aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0],
                       *(torch.randn(s) for s in QKV))
    assert direct_cpu.macs == 20_480


def test_fused_attention_kernels_of_every_device():
    q, k, v = (meta(*s) for s in QKV)
    out = meta(*QKV[0])
    for op, args in [
        (aten._scaled_dot_product_flash_attention.default, (q, k, v)),
        (aten._scaled_dot_product_efficient_attention.default, (q, k, v, None, False)),
        (aten._scaled_dot_product_cudnn_attention.default, (q, k, v, None, False)),
        (aten._scaled_dot_product_fused_attention_overrideable.default, (q, k, v)),
        (aten._scaled_dot_product_flash_attention_for_cpu.default, (q, k, v)),
        (aten._scaled_dot_product_attention_math.default, (q, k, v)),
    ]:
        cost = direct(op, *args, out=(out,))
        assert (cost.macs, cost.flops) == (20_480, 44_800), op  # as above
    masked = direct(aten._scaled_dot_product_efficient_attention.default, q, k, v, meta(2, 4, 8, 10), False, out=(out,))
    assert masked.flops == 45_440  # + 640 mask adds
    # flash / efficient forward kernels take (batch, seq, heads, dim)
    ql, kl = meta(2, 8, 4, 16), meta(2, 10, 4, 16)
    cost = direct(aten._flash_attention_forward.default, ql, kl, kl, None, None, 8, 10, 0.0, False, False,
                  out=(meta(2, 8, 4, 16),))
    assert cost.macs == 20_480


# ---------------------------------------------------------------------------------------------------
# recurrent layers: gates (4 / 3 / 1) x hidden x (layer input + hidden) per step, layer and direction


def test_lstm_multilayer_bidirectional():
    r = count_module(lambda: nn.LSTM(16, 32, num_layers=2, bidirectional=True, batch_first=True), meta(3, 5, 16))
    # layer 0: 2 dirs x 5 steps x 3 batch x 4*32*(16+32) = 30 x 6,144 = 184,320
    # layer 1 (input 2*32): 30 x 4*32*(64+32) = 30 x 12,288 = 368,640 -> 552,960
    # FLOPs: 2 x MACs + 27 per hidden unit per step: 27 x 32 x 5 x 3 x 2 layers x 2 dirs = 51,840
    assert (r.compute.macs, r.compute.flops) == (552_960, 1_157_760)
    assert r.layers[0].output_shapes[0] == (3, 5, 64)
    assert r.compute.uncounted_ops == {}


def test_gru_rnn_projected_lstm_cells_and_packed():
    c = count_module(lambda: nn.GRU(10, 20), meta(7, 2, 10)).compute
    # 3*20*(10+20) x 7 steps x 2 batch = 25,200; FLOPs 50,400 + 20 x (7*2*20) = 56,000
    assert (c.macs, c.flops) == (25_200, 56_000)
    # Elman, 2 layers: (20*(10+20) + 20*(20+20)) x 14 = 1,400 x 14 = 19,600
    assert count_module(lambda: nn.RNN(10, 20, num_layers=2), meta(7, 2, 10)).compute.macs == 19_600
    # projection 5: per step 4*20*(10+5) + 20*5 = 1,300; x 3 steps
    assert count_module(lambda: nn.LSTM(10, 20, proj_size=5), meta(3, 1, 10)).compute.macs == 3_900
    # cells, batch 4, one step: LSTM 4*20*30*4 = 9,600; GRU 3*20*30*4 = 7,200; RNN 20*30*4 = 2,400
    assert count_module(lambda: nn.LSTMCell(10, 20), meta(4, 10)).compute.macs == 9_600
    assert count_module(lambda: nn.GRUCell(10, 20), meta(4, 10)).compute.macs == 7_200
    assert count_module(lambda: nn.RNNCell(10, 20), meta(4, 10)).compute.macs == 2_400
    # packed: lengths 3 and 2 are 5 real steps x 4*5*(4+5) = 900 (padding is not computed)
    lstm = nn.LSTM(4, 5)
    packed = count(lambda x: lstm(nn.utils.rnn.pack_padded_sequence(x, torch.tensor([3, 2])))[0].data,
                   torch.randn(3, 2, 4))
    assert packed.macs == 900


def test_fused_rnn_kernels():
    x = meta(5, 3, 16)
    weights = [meta(128, 16), meta(128, 32), meta(128), meta(128)]
    # cuDNN LSTM (mode 2): 5 steps x 3 batch x (128*16 + 128*32) = 15 x 6,144 = 92,160
    cost = direct(aten._cudnn_rnn.default, x, weights, 4, None, meta(1, 3, 32), meta(1, 3, 32), 2, 32, 0, 1, False,
                  0.0, False, False, [], None, out=(meta(5, 3, 32),))
    assert cost.macs == 92_160
    # oneDNN runs one LSTM layer per call: the same 92,160
    cost = direct(aten.mkldnn_rnn_layer.default, x, weights[0], weights[1], weights[2], weights[3], meta(3, 32),
                  meta(3, 32), False, [], 2, 32, 1, True, False, False, False, out=(meta(5, 3, 32),))
    assert cost.macs == 92_160


# ---------------------------------------------------------------------------------------------------
# elementwise, reductions, softmax, norms, pooling (FLOPs; 4x6 = 24 elements unless said)


@pytest.mark.parametrize(
    ("fn", "flops"),
    [
        (lambda x: x + x, 24), (lambda x: x * 2, 24), (torch.relu, 24), (lambda x: x.clamp(0, 1), 24),
        (F.relu6, 24), (F.gelu, 5 * 24), (lambda x: F.gelu(x, approximate="tanh"), 8 * 24),
        (torch.sigmoid, 3 * 24), (F.silu, 4 * 24), (F.hardswish, 4 * 24), (F.hardsigmoid, 3 * 24),
        (F.leaky_relu, 2 * 24), (F.elu, 3 * 24), (F.mish, 5 * 24), (F.softplus, 3 * 24), (torch.tanh, 24),
        (torch.exp, 24), (torch.rsqrt, 24), (lambda x: torch.where(x > 0, x, x), 24 + 24),  # compare + select
        (lambda x: torch.addcmul(x, x, x), 3 * 24), (lambda x: F.glu(x, -1), 4 * 12),  # glu: 12 outputs
    ],
)
def test_elementwise(fn, flops):
    c = count(fn, meta(4, 6))
    assert (c.macs, c.flops, c.uncounted_ops) == (0, flops, {})


def test_every_elementwise_entry_is_wired_to_its_convention():
    for name, per in torch_ops._ELEMENTWISE.items():
        per_element = per if isinstance(per, int) else formulas.ELEMENTWISE_FLOPS[per]
        for packet in torch_ops._packets(name):
            assert torch_ops.FORMULAS[packet]({}, meta(2, 3)).flops == 6 * per_element, name


def test_scatter_accumulate_and_index_put():
    idx = torch.zeros(2, 5, dtype=torch.long, device="meta")
    assert count(lambda x, s: x.scatter_add(0, idx, s), meta(4, 5), meta(2, 5)).flops == 10  # one add per source
    rows = torch.zeros(3, dtype=torch.long, device="meta")
    assert count(lambda x, v: x.index_put((rows,), v, accumulate=True), meta(4, 5), meta(3, 5)).flops == 15
    assert count(lambda x, v: x.index_put((rows,), v), meta(4, 5), meta(3, 5)).flops == 0  # a plain scatter


@pytest.mark.parametrize(
    "fn",
    [torch.sum, lambda x: x.mean(1), lambda x: x.var(1), lambda x: torch.max(x, 1).values, torch.amax,
     lambda x: x.logsumexp(0), lambda x: x.cumsum(1), lambda x: x.norm(), lambda x: x.argmax()],
)
def test_reductions_cost_one_flop_per_input_element(fn):
    assert count(fn, meta(4, 6)).flops == 24


def test_max_of_two_tensors_is_elementwise_and_softmax_is_five():
    assert count(torch.max, meta(4, 6), meta(1, 6)).flops == 24  # 24 outputs
    assert count(lambda x: x.softmax(-1), meta(4, 6)).flops == 120  # 5 x 24
    assert count(lambda x: x.log_softmax(-1), meta(4, 6)).flops == 120


def test_norms():
    x = meta(2, 3, 4, 4)  # 96 elements
    assert count_module(lambda: nn.BatchNorm2d(3), x).compute.flops == 192  # inference: 2 per element
    with torch.device("meta"):
        bn = nn.BatchNorm2d(3).train()
    # batch statistics: (5 + scale + shift) x 96 = 672, + 1 for num_batches_tracked += 1
    assert analyze_module(bn, [x]).compute.flops == 673
    assert count_module(lambda: nn.InstanceNorm2d(3, affine=True), x).compute.flops == 672  # 7 x 96
    assert count_module(lambda: nn.InstanceNorm2d(3), x).compute.flops == 480  # 5 x 96
    assert count_module(lambda: nn.LayerNorm(6), meta(4, 6)).compute.flops == 168  # 7 x 24
    assert count_module(lambda: nn.LayerNorm(6, elementwise_affine=False), meta(4, 6)).compute.flops == 120
    assert count_module(lambda: nn.GroupNorm(2, 4), meta(2, 4, 3, 3)).compute.flops == 504  # 7 x 72
    assert count_module(lambda: nn.RMSNorm(6), meta(4, 6)).compute.flops == 96  # (3 + scale) x 24
    assert direct(aten._fused_rms_norm.default, meta(4, 6), [6], meta(6), 1e-5, out=(meta(4, 6),)).flops == 96


def test_pooling():
    # max pool 3x3 stride 2 pad 1 on 8x8 -> 4x4 x 2 channels = 32 outputs x 9 window = 288
    assert count_module(lambda: nn.MaxPool2d(3, 2, 1), meta(1, 2, 8, 8)).compute.flops == 288
    assert count_module(lambda: nn.AvgPool2d(2), meta(1, 2, 8, 8)).compute.flops == 128  # 32 outputs x 4
    assert count_module(lambda: nn.AvgPool1d(3), meta(1, 2, 9)).compute.flops == 18  # 6 outputs x 3
    assert count_module(lambda: nn.MaxPool3d(2), meta(1, 1, 4, 4, 4)).compute.flops == 64  # 8 outputs x 8
    assert count_module(lambda: nn.AdaptiveAvgPool2d(1), meta(1, 3, 5, 5)).compute.flops == 75  # global: inputs
    # 5 -> 3 adaptive windows [0,2) [1,4) [3,5): lengths 2 + 3 + 2 = 7 per dim -> 7 x 7 = 49
    assert count_module(lambda: nn.AdaptiveAvgPool2d(3), meta(1, 1, 5, 5)).compute.flops == 49
    assert count_module(lambda: nn.AdaptiveMaxPool2d(3), meta(1, 1, 5, 5)).compute.flops == 49


def test_linear_resizes_cost_a_lerp_per_resized_axis_as_onnx_resize():
    # bilinear 4x4 -> 8x8: 2 resized axes, 2^2 - 1 = 3 lerps of 3 FLOPs = 9 per output element; 1*2*8*8 = 128
    # outputs -> 1,152 (the figure test_onnx_counter.test_resize_modes gives the linear Resize an export makes)
    def bilinear(x):
        return F.interpolate(x, scale_factor=2, mode="bilinear")

    assert count(bilinear, meta(1, 2, 4, 4)).flops == 1152
    # align_corners moves the sample points, not the work: the same 1,152
    assert count(lambda x: F.interpolate(x, size=(8, 8), mode="bilinear", align_corners=True),
                 meta(1, 2, 4, 4)).flops == 1152
    # linear 5 -> 10: 1 lerp (3) per output; 1*2*10 = 20 outputs -> 60
    assert count(lambda x: F.interpolate(x, size=10, mode="linear"), meta(1, 2, 5)).flops == 60
    # trilinear 2x2x2 -> 4x4x4: 2^3 - 1 = 7 lerps, 21 per output; 64 outputs -> 1,344
    assert count(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"), meta(1, 1, 2, 2, 2)).flops == 1344
    # only the height resized (4x4 -> 8x4): 1 lerp per output; 1*2*8*4 = 64 outputs -> 192
    assert count(lambda x: F.interpolate(x, size=(8, 4), mode="bilinear"), meta(1, 2, 4, 4)).flops == 192
    # bicubic 4x4 -> 8x8: 2 resized axes, (4^2 - 1) / 3 = 5 four-tap interpolations of 7 FLOPs (4 multiplies, 3
    # adds) = 35 per output element; 128 outputs -> 4,480 (as test_onnx_counter.test_resize_modes' cubic Resize)
    cubic = count(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), meta(1, 2, 4, 4))
    assert cubic.uncounted_ops == {} and cubic.flops == 4480
    # DINOv2's position embeddings, 37x37 -> 16x16 over 384 channels: 384 x 256 x 35 = 3,440,640
    pos = count(lambda x: F.interpolate(x, size=(16, 16), mode="bicubic", align_corners=False), meta(1, 384, 37, 37))
    assert pos.flops == 384 * 256 * 35 == 3_440_640


def test_grid_sample_costs_as_a_resize_of_every_sampled_axis():
    # input 1 x 4 x 8 x 8 sampled at a 5 x 6 grid: 1*4*5*6 = 120 outputs. Bilinear: 2 axes, 2^2 - 1 = 3 lerps of
    # 3 FLOPs = 9 each -> 1,080; bicubic: (4^2 - 1) / 3 = 5 four-tap interpolations of 7 = 35 each -> 4,200;
    # nearest moves data: 0. The grid's weights (one set per output location) are not counted, as a resize's.
    x, grid = meta(1, 4, 8, 8), meta(1, 5, 6, 2)
    for mode, flops in (("bilinear", 1080), ("bicubic", 4200), ("nearest", 0)):
        c = count(lambda x, g, m=mode: F.grid_sample(x, g, mode=m, align_corners=False), x, grid)
        assert (c.macs, c.flops, c.uncounted_ops) == (0, flops, {}), mode
    # 3-D: input 1 x 2 x 4 x 4 x 4 at a 3 x 3 x 3 grid: 54 outputs x 3 x (2^3 - 1) = 1,134
    c = count(lambda x, g: F.grid_sample(x, g, align_corners=True), meta(1, 2, 4, 4, 4), meta(1, 3, 3, 3, 3))
    assert (c.flops, c.uncounted_ops) == (1134, {})


def test_weight_norm_is_counted_in_every_forward():
    # Conv1d(4 -> 8, kernel 3) under weight_norm: v is 8 x 4 x 3 = 96 elements, g 8: the norm (a reduction, 96),
    # g / norm (8) and v scaled (96) = 200 FLOPs, beside the conv's 8 x 10 x 12 = 960 MACs (+ 80 bias)
    conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 8, 3)).to("meta")
    c = count(conv, meta(1, 4, 12))
    assert (c.macs, c.flops, c.uncounted_ops) == (960, 2 * 960 + 80 + 200, {})


def test_rt_detr_counts_completely_with_its_deformable_sampling():
    """transformers' RT-DETR (default config, R50-D) at 640 x 640 left grid_sampler_2d uncounted, and the count
    incomplete, until grid sampling had its formula. Each decoder layer's MultiScaleDeformableAttention, hand-
    derived at 300 queries, 8 heads of 32, 3 levels, 4 points: grid samples (B x 8, 32, 300, 4) per level = 307,200
    outputs x 3 levels x 9 FLOPs (bilinear) = 8,294,400; the sampling grid 2 x loc - 1 over (1, 300, 8, 3, 4, 2) =
    57,600 elements x 2 = 115,200; the samples times their attention weights, (8, 32, 300, 12) = 921,600, and their
    sum over the 12, 921,600: 10,252,800 FLOPs, no MACs."""
    pytest.importorskip("transformers")
    fixture = Path(__file__).parents[1] / "fixtures" / "hf_rtdetr.py"
    r = api.analyze_static(f"{fixture}:rtdetr_r50", input_shapes=["pixel_values=1x3x640x640"])
    assert r.compute.complete and r.compute.uncounted_ops == {}
    deformable = [layer for layer in r.layers if layer.op == "MultiScaleDeformableAttention"]
    assert len(deformable) == 6  # one per decoder layer
    assert {(layer.macs, layer.flops) for layer in deformable} == {(0, 8_294_400 + 115_200 + 2 * 921_600)}
    assert r.compute.macs == 68_717_056_000  # the paper's RT-DETR-R50: 136 GFLOPs, i.e. about 68 GMACs


# ---------------------------------------------------------------------------------------------------
# states, registry


def test_zero_cost_and_uncounted_ops_are_listed_never_silent():
    c = count(lambda x: torch.cat([x.view(6, 4), x.t().transpose(0, 1).t()]), meta(4, 6))
    assert (c.macs, c.flops, c.uncounted_ops) == (0, 0, {})
    assert {"aten.view", "aten.t", "aten.transpose", "aten.cat"} <= set(c.zero_cost_ops)

    class Medians(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.keep = nn.Identity()

        def forward(self, x):
            return self.keep(torch.kthvalue(x, 3).values + 1)

    r = analyze_module(Medians(), [meta(4, 6)])
    assert r.compute.uncounted_ops == {"aten.kthvalue": 1}
    assert r.compute.flops == 4  # the add is still counted
    statuses = {layer.name: layer.status for layer in r.layers}
    assert statuses == {"kthvalue": "uncounted", "add": "counted", "keep": "zero_cost"}


def test_register_refuses_duplicates_and_classifies():
    with pytest.raises(ValueError, match="already has a cost"):
        torch_ops.register([aten.mm])(lambda a, out: torch_ops.OpCost())
    with pytest.raises(ValueError, match="already has a cost"):
        torch_ops.register_zero_cost([aten.view])
    assert torch_ops.classify(aten.mm.default) == "counted"
    assert torch_ops.classify(aten.view.default) == "zero_cost"
    assert torch_ops.classify(aten.kthvalue.default) == "uncounted"


# ---------------------------------------------------------------------------------------------------
# parameters, buffers, memory, attribution


class Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight
        self.bn = nn.BatchNorm1d(4)

    def forward(self, ids):
        return self.head(self.bn(self.emb(ids)))


def test_tied_parameters_once_and_buffers_apart():
    r = count_module(Tied, torch.zeros(3, dtype=torch.long, device="meta"))
    # emb/head weight 10*4 = 40 (once) + bn weight and bias 4 + 4 = 48
    assert (r.params.total, r.params.shared, r.params.trainable) == (48, 40, 48)
    # buffers: running mean 4 + running var 4 + num_batches_tracked 1 = 9 elements; 16 + 16 + 8 bytes
    assert (r.params.buffers, r.storage.buffer_bytes) == (9, 40)
    assert r.storage.bytes == 48 * 4 and r.params.by_dtype == {"float32": 48}
    assert {layer.name: layer.params for layer in r.layers} == {"emb": 40, "bn": 8, "head": 40}  # own params


def test_activation_bytes_and_peak_live():
    r = count_module(lambda: nn.Sequential(nn.Linear(100, 200), nn.ReLU(), nn.Linear(200, 50)), meta(1, 100))
    # outputs: linear 200 floats (800 B), relu 800 B, linear 50 floats (200 B) -> 1,800 B produced
    # peak: while ReLU runs, its input (800) and output (800) are alive -> 1,600 B
    assert (r.memory.activation_bytes, r.memory.peak_activation_bytes) == (1_800, 1_600)
    assert [layer.activation_bytes for layer in r.layers] == [800, 800, 200]
    inplace = count_module(lambda: nn.Sequential(nn.Linear(100, 200), nn.ReLU(inplace=True)), meta(1, 100))
    assert inplace.memory.activation_bytes == 800  # an in-place ReLU allocates nothing


def test_layers_and_never_called_modules():
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.unused = nn.Linear(4, 4)

        def forward(self, x):
            return self.a(x) + x

    r = count_module(Net, meta(2, 4))
    assert [(layer.name, layer.op, layer.macs, layer.flops) for layer in r.layers] == [
        ("a", "Linear", 32, 72),  # 2*4*4 MACs; 64 + 8 bias
        ("add", "add", 0, 8),  # the residual add the root runs itself
    ]
    assert r.layers[0].output_shapes == [(2, 4)] and r.layers[0].macs_dtype == "float32"
    assert any("never called: unused" in note for note in r.notes)
    assert r.params.total == 40  # the unused layer's parameters still count


def test_a_forward_that_reads_values_is_a_problem_with_partial_results():
    # A value read from a small tensor is answered by the data oracle (tests/analysis/test_data_oracle.py); one that
    # needs the values of more elements than it shadows (data_oracle.LIMIT_ELEMENTS) still fails, reported as before.
    from modelcost.analysis.data_oracle import LIMIT_ELEMENTS

    class ReadsValues(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x)
            return y[: len(torch.nonzero(y > 0))]

    rows = LIMIT_ELEMENTS // 4 + 1  # y has 4 * rows > LIMIT_ELEMENTS elements
    with torch.device("meta"):
        r = analyze_module(ReadsValues(), [meta(rows, 4)])
    assert r.problems and "forward pass failed on meta inputs" in r.problems[0]
    assert "the model reads tensor values" in r.problems[0]
    assert r.compute.macs == rows * 16  # what ran before the failure is reported: rows x 4 x 4


@pytest.mark.gpu
@requires_cuda
def test_attention_on_cuda_counts_once():
    q, k, v = (torch.randn(s, device="cuda", dtype=torch.float16) for s in QKV)
    assert count(sdpa_block, q, k, v).macs == 20_480  # flash / efficient kernel inside the composite
    flash = count(lambda a, b, c: aten._scaled_dot_product_efficient_attention(a, b, c, None, False)[0], q, k, v)
    assert flash.macs == 20_480  # the kernel alone, through its aten formula


# ---------------------------------------------------------------------------------------------------
# cross-check: fvcore's FlopCountAnalysis counts MACs (it calls them flops) of conv / linear / matmul


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, groups=4, padding=2, dilation=2),
            nn.Conv2d(16, 16, 3, groups=16, stride=2), nn.ConvTranspose2d(16, 8, 2, stride=2), nn.ReLU(),
        )
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class MLP3d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 16, bias=False)

    def forward(self, x):
        h = self.fc2(torch.relu(self.fc1(x)))
        return torch.matmul(h, h.transpose(1, 2))


@pytest.mark.parametrize(("build", "shape"), [(ConvNet, (2, 3, 20, 20)), (MLP3d, (2, 5, 32))])
def test_macs_agree_with_fvcore(build, shape):
    fvcore = pytest.importorskip("fvcore.nn")
    torch.manual_seed(0)
    model = build().eval()
    x = torch.randn(shape)
    analysis = fvcore.FlopCountAnalysis(model, (x,))
    analysis.unsupported_ops_warnings(False)
    analysis.uncalled_modules_warnings(False)
    by_op = analysis.by_operator()
    fvcore_macs = sum(by_op.get(op, 0) for op in ("conv", "linear", "addmm", "matmul", "bmm", "einsum"))
    ours = analyze_module(model, [x]).compute.macs  # real CPU tensors here
    with torch.device("meta"):
        on_meta = analyze_module(build().eval(), [meta(*shape)]).compute.macs
    assert ours == on_meta == fvcore_macs > 0


def test_a_failing_formula_leaves_the_op_uncounted_with_a_note(monkeypatch):
    def broken(a, out):
        raise KeyError("unexpected argument")

    monkeypatch.setitem(torch_ops.FORMULAS, aten.mm, broken)
    r = analyze_module(Fn(lambda a, b: torch.mm(a, b) + 1), [meta(3, 4), meta(4, 5)])
    assert r.compute.uncounted_ops == {"aten.mm": 1} and not r.problems
    assert r.compute.flops == 15  # the add after it still counts
    assert any("aten.mm: its formula failed" in note for note in r.notes)


def test_eager_ops_count_kernel_launches_and_views() -> None:
    """The forward's aten calls as eager issues them (core/eager_ops.py), what the predictor's host model prices."""

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            y = self.fc(x).view(2, 4, 8)
            return torch.relu_(y) + 1, F.scaled_dot_product_attention(y, y, y)

    with torch.device("meta"):
        block = Block()
    report = analyze_module(block, [meta(1, 8, 8)])
    # Linear on a 3-d input: view to 2-d, t (weight), addmm (kernel), _unsafe_view back; then .view: 4 views.
    # Kernels: addmm, relu_ (in place: it writes), add (a new tensor), and SDPA: one fused kernel whatever it
    # runs inside on meta (a composite: its parts are absorbed) = 4.
    assert (report.eager_ops.kernel_ops, report.eager_ops.view_ops) == (4, 4)


def test_eager_ops_tally_the_calls_whose_half_precision_price_differs() -> None:
    """EagerOps.by_class: the calls of each core/eager_ops.HALF_PRICED class, which torch-half's host time prices
    apart (analysis/predict.half_calls_us)."""
    with torch.device("meta"):
        net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                            nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.BatchNorm2d(8), nn.Flatten(),
                            nn.Linear(8 * 4 * 4, 10)).eval()
    report = analyze_module(net, [meta(1, 3, 4, 4)])
    # The 3 -> 8 conv is dense (groups 1): conv 1. The 8 -> 8 conv of 8 groups has one input channel per group:
    # depthwise_conv 1. Each BatchNorm2d in eval is one aten.native_batch_norm: batch_norm 2. ReLU, the flatten's
    # view and the Linear's addmm are none of the classes.
    assert report.eager_ops.by_class == {"batch_norm": 2, "conv": 1, "depthwise_conv": 1}
    # a net with none of them tallies nothing
    with torch.device("meta"):
        mlp = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8))
    assert analyze_module(mlp, [meta(2, 8)]).eager_ops.by_class == {}


def test_a_conv_layer_records_its_groups() -> None:
    """What the predictor's conv table tells dense from grouped convs by; other layers record none."""
    with torch.device("meta"):
        net = nn.Sequential(nn.Conv2d(32, 32, 3, groups=32), nn.Conv2d(32, 64, 1), nn.ReLU())
    report = analyze_module(net, [meta(1, 32, 16, 16)])
    assert [layer.groups for layer in report.layers] == [32, 1, None]


def test_a_conv_layer_records_its_window() -> None:
    """What the predictor's conv table tells a 3 x 3 stride-1 conv (cuDNN's Winograd) from others by: the kernel,
    stride and dilation per spatial dim; other layers record none."""
    with torch.device("meta"):
        net = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 3, stride=2, dilation=2),
                            nn.Conv2d(8, 8, (1, 7), padding=(0, 3)), nn.ReLU())
    report = analyze_module(net, [meta(1, 8, 32, 32)])
    windows = [(layer.kernel_shape, layer.strides, layer.dilations) for layer in report.layers]
    assert windows == [((3, 3), (1, 1), (1, 1)), ((3, 3), (2, 2), (2, 2)), ((1, 7), (1, 1), (1, 1)),
                       (None, None, None)]


def test_a_layer_tallies_its_kernel_calls_and_the_elements_they_move() -> None:
    """What the predictor charges an eager norm by (LayerCost.eager_kernels / eager_elements): an RMSNorm written
    as transformers writes it runs one kernel per aten call, not one fused kernel."""

    class RMSNorm(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(16))

        def forward(self, x):
            v = x.pow(2).mean(-1, keepdim=True)
            return self.weight * (x * torch.rsqrt(v + 1e-6))

    with torch.device("meta"):
        net = nn.Sequential(RMSNorm(), nn.ReLU())
    report = analyze_module(net, [meta(2, 8, 16)])
    norm, relu = report.layers
    # x is 2 x 8 x 16 = 256 elements, v is 2 x 8 x 1 = 16. Kernels and the elements they read + write:
    # pow 256 + 256; mean 256 + 16; add (the scalar is no tensor) 16 + 16; rsqrt 16 + 16;
    # x * rsqrt: 256 + 16 + 256; weight * that: 16 + 256 + 256 -> 6 kernels, 1,904 elements
    assert (norm.eager_kernels, norm.eager_elements) == (6, 512 + 272 + 32 + 32 + 528 + 528)
    assert (relu.eager_kernels, relu.eager_elements) == (1, 256 + 256)


def test_a_top_level_copy_is_a_zero_cost_layer_and_a_view_is_none() -> None:
    """A cat or clone at a call site outside any leaf module does no arithmetic but writes memory: the predictor
    prices its bytes, so it is a layer (status zero_cost, its kernel calls tallied); a transpose is a view."""

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.act = nn.ReLU()  # a child, so the root's own calls are call sites (a root alone is one layer)

        def forward(self, x):
            y = torch.cat([self.act(x), x], dim=1)  # 2 x 8 -> 2 x 16: reads 2 x 16, writes 32
            return y.t().clone()  # t: a view, no layer; clone reads 32, writes 32

    report = analyze_module(Block(), [meta(2, 8)])
    assert [(layer.name, layer.status, layer.eager_kernels, layer.eager_elements) for layer in report.layers] == \
        [("act", "counted", 1, 16 + 16), ("cat", "zero_cost", 1, 16 + 16 + 32), ("clone", "zero_cost", 1, 32 + 32)]
    assert report.compute.zero_cost_ops == {"aten.cat": 1, "aten.clone": 1, "aten.t": 1}


def test_a_transposed_operand_is_tallied_as_an_uncoalesced_call() -> None:
    """What the predictor prices at the transposed-copy rate (LayerCost.eager_strided_kernels): Whisper's encoder
    transposes its conv output into the residual stream, so the stream is laid out (batch, channels, frames)
    while its shape reads (batch, frames, channels). Eager then reads across the fastest dimension wherever a
    contiguous tensor meets it: LayerNorm copies its input to contiguous, the residual add reads the MLP's
    output transposed."""

    class Stream(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(4, 8, 1)
            self.ln = nn.LayerNorm(8)
            self.fc = nn.Linear(8, 8)
            self.act = nn.GELU()

        def forward(self, x):
            h = self.act(self.conv(x).transpose(1, 2))  # 2 x 16 x 8 in the conv's layout: a view, then GELU on it
            return h + self.fc(self.ln(h))

    with torch.device("meta"):
        net = Stream()
    report = analyze_module(net, [meta(2, 4, 16)])
    tally = {layer.name: (layer.eager_strided_kernels, layer.eager_strided_elements) for layer in report.layers}
    # conv: contiguous in, contiguous out. GELU keeps its input's layout (however permuted): coalesced.
    # LayerNorm: input 256 elements (2 x 16 x 8) read across, + weight 8 + bias 8; writes out 256 + mean and rstd
    # (2 x 16 x 1) 32 each: 592. fc: a matmul, never judged (cuBLAS takes a transposed operand).
    # The root's add: out takes h's layout (its first input), the fc output (contiguous) is read across:
    # 256 + 256 read, 256 written.
    assert tally["conv"] == (0, 0) and tally["act"] == (0, 0) and tally["fc"] == (0, 0)
    assert tally["ln"] == (1, 256 + 8 + 8 + 256 + 32 + 32)
    assert tally["add"] == (1, 3 * 256)


def test_reads_across_judges_layouts_not_shapes() -> None:
    from modelcost.analysis.torch_counter import reads_across

    a = torch.empty(4, 6, device="meta")
    at = torch.empty(6, 4, device="meta").t()  # 4 x 6, strides (1, 4)
    assert reads_across([a, at], [a]) and reads_across([at], [a])  # a transposed input, a contiguous output
    assert not reads_across([at, at], [at])  # one permuted layout throughout: coalesced
    assert not reads_across([a, torch.empty(1, 6, device="meta").expand(4, 6)], [a])  # a broadcast operand
    assert not reads_across([torch.empty(6, device="meta")], [a])  # another shape (a bias)
    assert not reads_across([at], [torch.empty(1, device="meta")])  # a scalar output


def test_unvectorized_judges_what_tensoriterator_can_run_as_one_flat_vector() -> None:
    from modelcost.analysis.torch_counter import unvectorized

    a, b = torch.empty(4, 6, device="meta"), torch.empty(4, 6, device="meta")
    row = torch.empty(6, device="meta")
    assert not unvectorized([a, b], [a.new_empty(4, 6)])  # same shape, layout and dtype: vectorized
    assert unvectorized([a, row], [a.new_empty(4, 6)])  # a broadcast row (RMSNorm's weight)
    assert unvectorized([a, torch.empty(1, 6, device="meta").expand(4, 6)], [a.new_empty(4, 6)])  # stride 0
    assert not unvectorized([a, torch.empty((), device="meta")], [a.new_empty(4, 6)])  # a 0-d scalar
    # [2, 3, 4, 5] permuted from [2, 4, 3, 5] (attention's q after view and transpose) beside a contiguous operand
    q = torch.empty(2, 4, 3, 5, device="meta").transpose(1, 2)
    assert unvectorized([q, torch.empty(2, 3, 4, 5, device="meta")], [torch.empty(2, 3, 4, 5, device="meta")])
    assert not unvectorized([q, q], [torch.empty(2, 4, 3, 5, device="meta").transpose(1, 2)])  # one layout: dense
    half = torch.empty(4, 6, device="meta", dtype=torch.bfloat16)
    assert unvectorized([half], [a.new_empty(4, 6)])  # a widening cast (bf16 -> fp32): the unrolled kernel
    assert not unvectorized([a], [half.new_empty(4, 6)])  # fp32 -> bf16: a vectorized cast kernel of its own
    assert unvectorized([a[:, 3:]], [torch.empty(4, 6, device="meta")[:, 3:]])  # a slice written: not dense
    # a sparse operand or output has no strides: not judged (the count must not fail on it)
    dense, sparse = torch.randn(4, 6), torch.randn(4, 6).to_sparse()
    assert not unvectorized([sparse, dense], [dense]) and not unvectorized([dense], [sparse])


class _RmsNormRope(nn.Module):
    """transformers' LlamaRMSNorm and rotary embedding (apply_rotary_pos_emb with rotate_half), in bf16."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(64))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        h = self.weight * h.to(x.dtype)
        q = h.view(2, 8, 4, 16).transpose(1, 2)  # (2, 4 heads, 8 positions, 16)
        half = torch.cat((-q[..., 8:], q[..., :8]), dim=-1)
        return q * cos.unsqueeze(1) + half * sin.unsqueeze(1)


def test_rmsnorm_and_rope_count_their_unvectorized_calls() -> None:
    # The kernel calls, as eager issues them on (2, 8, 64) bf16 activations:
    #   RMSNorm: to(fp32) widening (unvectorized), pow, mean (a reduction), add eps (a scalar), rsqrt,
    #   h * rsqrt (a (2, 8, 1) operand broadcast: unvectorized), to(bf16) (vectorized cast), weight * h (a (64,)
    #   weight broadcast: unvectorized) -> 8 calls, 3 unvectorized;
    #   rotary: neg of a slice (its input is not dense in the output's layout: unvectorized), cat (not pointwise),
    #   q * cos (q transposed from the view, cos broadcast over the heads: unvectorized), half * sin (sin
    #   broadcast: unvectorized), the sum (q * cos keeps q's permuted layout, half * sin is contiguous:
    #   unvectorized) -> 5 calls, 4 unvectorized.
    net = _RmsNormRope().to(device="meta", dtype=torch.bfloat16)
    x = torch.empty(2, 8, 64, dtype=torch.bfloat16, device="meta")
    cos = sin = torch.empty(2, 8, 16, dtype=torch.bfloat16, device="meta")
    cost = analyze_module(net, [x, cos, sin])
    kernels = sum(layer.eager_kernels or 0 for layer in cost.layers)
    slow = sum(layer.eager_unvectorized_kernels or 0 for layer in cost.layers)
    assert (kernels, slow) == (13, 7)
    # their elements: to(fp32) 1,024 + 1,024; h * rsqrt 1,024 + 16 + 1,024; weight * h 64 + 1,024 + 1,024;
    # neg 512 + 512; q * cos 1,024 + 256 + 1,024; half * sin the same; the sum 3 x 1,024
    assert sum(layer.eager_unvectorized_elements or 0 for layer in cost.layers) == (
        2048 + 2064 + 2112 + 1024 + 2304 + 2304 + 3072)


class _SharedLayers(nn.Module):
    """ALBERT's way: one Linear applied three times, one ReLU module twice, and attention's two bmm in one scope."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(64, 64, bias=False)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = self.act(self.fc(x))
        scores = torch.bmm(x, x.transpose(1, 2))  # (2, 8, 8): 2 x 8 x 8 x 64 = 8,192 MACs
        return torch.bmm(scores, x)  # (2, 8, 64): 2 x 8 x 64 x 8 = 8,192 MACs


def test_a_layer_that_runs_again_keeps_its_calls_and_each_calls_macs():
    report = count_module(_SharedLayers, meta(2, 8, 64))
    layers = {layer.name: layer for layer in report.layers}
    # fc: 3 calls of 2 x 8 rows x 64 x 64 = 65,536 MACs each; one entry summing them (196,608)
    assert (layers["fc"].calls, layers["fc"].call_macs, layers["fc"].macs) == (3, [65_536] * 3, 196_608)
    assert len(layers["fc"].output_shapes) == 3
    act = layers["act"]  # the one ReLU after each fc: 3 calls, no MACs
    assert act.calls == 3 and act.call_macs == [0, 0, 0]
    bmm = layers["bmm"]  # the root scope's two bmm: one entry, two calls of different outputs and the same MACs
    assert (bmm.calls, bmm.call_macs, bmm.output_shapes) == (2, [8_192, 8_192], [(2, 8, 8), (2, 8, 64)])


class _UpcastNorm(nn.Module):
    """transformers' RMSNorm inside a bf16 model: the statistics in fp32, the result back in bf16."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return h.to(x.dtype)


def test_eager_calls_keep_their_bytes_in_the_dtypes_they_ran_in():
    report = count_module(_UpcastNorm, meta(1, 4, 8, dtype=torch.bfloat16))
    [layer] = [entry for entry in report.layers if entry.eager_kernels]
    # x (32 bf16 elements) -> fp32 copy: 32 in + 32 out = 64 elements, 32 x 2 + 32 x 4 = 192 B; pow: 32 + 32 fp32 =
    # 256 B; mean: 32 + 4 = 144 B; add: 4 + 4 = 32 B; rsqrt: 4 + 4 = 32 B; mul: 32 + 4 + 32 = 272 B; back to bf16:
    # 32 fp32 + 32 bf16 = 192 B. 7 calls, 64 + 64 + 36 + 8 + 8 + 68 + 64 = 312 elements, 1,120 bytes: 3.59 B each,
    # where pricing every element at the model's 2 bytes would say 624.
    assert (layer.eager_kernels, layer.eager_elements, layer.eager_bytes) == (7, 312, 1120)


def test_the_ops_a_scan_of_transformers_found_uncounted():
    """A scan of 599 transformers architectures (2026-11-27) found four aten ops left uncounted; each now has its
    cost, derived by hand here."""
    # the gated delta net's triangular solves (Qwen3-Next): A 2 x 4 x 4 against B 2 x 4 x 3, 6 columns of 4: each
    # 4 x 3 / 2 = 6 multiply-subtracts (12 FLOPs) and 4 divides -> 6 x 16 = 96; unitriangular: no divides, 72
    a, b = meta(2, 4, 4), meta(2, 4, 3)
    c = count(lambda a, b: torch.linalg.solve_triangular(a, b, upper=False), a, b)
    assert (c.macs, c.flops, c.uncounted_ops) == (0, 96, {})
    c = count(lambda a, b: torch.linalg.solve_triangular(a, b, upper=True, unitriangular=True), a, b)
    assert c.flops == 72
    # cdist by its matmul (Mimi's codebook): x1 1 x 5 x 3, x2 1 x 4 x 3 -> 20 distances x 3 = 60 MACs; FLOPs 120 +
    # the squared norms 2 x (15 + 12) = 54 + 3 per distance 60 = 234. Directly (small sizes): 3 x 3 per distance
    x1, x2 = meta(1, 5, 3), meta(1, 4, 3)
    c = count(lambda x, y: torch.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), x1, x2)
    assert (c.macs, c.flops, c.uncounted_ops) == (60, 234, {})
    c = count(lambda x, y: torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"), x1, x2)
    assert (c.macs, c.flops, c.uncounted_ops) == (0, 180, {})
    # DAC's commitment loss: 2 x 3 elements, subtract and square (2) + the mean (1) = 18; unreduced 12
    x, y = meta(2, 3), meta(2, 3)
    assert count(lambda x, y: F.mse_loss(x, y), x, y).flops == 18
    assert count(lambda x, y: F.mse_loss(x, y, reduction="none"), x, y).flops == 12
    # RT-DETRv2's and D-FINE's checks (torch._assert_async on a reduction): one per input element, as `all`:
    # the comparison 3 + the check of its 3 booleans 3 = 6
    c = count(lambda x: torch.ops.aten._is_all_true(x > 0), meta(3))
    assert (c.uncounted_ops, c.flops) == ({}, 6)
