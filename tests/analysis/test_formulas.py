"""The shared cost formulas, each expectation derived by hand."""

from __future__ import annotations

import math

import pytest

from modelcost.analysis import formulas as f


def test_conv_macs_standard():
    # 1x3x224x224 -> 64 channels, 7x7 kernel, stride 2 -> 112x112 output (ResNet stem):
    # 64 * 112 * 112 outputs, each 3 * 7 * 7 = 147 MACs -> 802,816 * 147 = 118,013,952
    assert f.conv_macs(1, 64, (112, 112), 3, 1, (7, 7)) == 118_013_952


def test_conv_macs_grouped_and_depthwise():
    # groups=4: 32 -> 64 channels, 3x3, 8x8 output: each output sees 32/4 = 8 channels * 9 = 72 MACs;
    # 64 * 64 outputs * 72 = 294,912 per sample, batch 2 -> 589,824
    assert f.conv_macs(2, 64, (8, 8), 32, 4, (3, 3)) == 589_824
    # depthwise (groups = channels = 32), 3x3, 8x8 output: 32 * 64 outputs * 9 = 18,432
    assert f.conv_macs(1, 32, (8, 8), 32, 32, (3, 3)) == 18_432


def test_conv_transpose_macs():
    # ConvTranspose 16 -> 8 channels, 4x4 kernel, input 5x5: each of 16*25 input elements is scattered
    # into 8 * 16 outputs -> 400 * 128 = 51,200
    assert f.conv_transpose_macs(1, 16, (5, 5), 8, 1, (4, 4)) == 51_200
    # with groups=2 each input reaches only 8/2 = 4 output channels -> 25,600
    assert f.conv_transpose_macs(1, 16, (5, 5), 8, 2, (4, 4)) == 25_600


def test_matmul_macs_broadcast_and_vectors():
    # (2,3,4,5) x (5,6): batch 2*3, m=4, k=5, n=6 -> 6 * 4 * 6 * 5 = 720
    assert f.matmul_macs((2, 3, 4, 5), (5, 6)) == 720
    # (4,1,3,5) x (2,5,7): batch broadcasts to 4*2, m=3, k=5, n=7 -> 8 * 105 = 840
    assert f.matmul_macs((4, 1, 3, 5), (2, 5, 7)) == 840
    # vector . vector: 1 * 1 * k -> 5
    assert f.matmul_macs((5,), (5,)) == 5
    # matrix x vector (3,5) x (5,): m=3, n=1, k=5 -> 15
    assert f.matmul_macs((3, 5), (5,)) == 15


def test_einsum_macs():
    # attention scores 'bhld,bhsd->bhls', b=2 h=4 l=8 s=10 d=16: every index combination once:
    # 2 * 4 * 8 * 10 * 16 = 10,240 (= matmul (2,4,8,16) x (2,4,16,10))
    assert f.einsum_macs("bhld,bhsd->bhls", [(2, 4, 8, 16), (2, 4, 10, 16)]) == 10_240
    assert (f.einsum_macs("bhld,bhsd->bhls", [(2, 4, 8, 16), (2, 4, 10, 16)])
            == f.matmul_macs((2, 4, 8, 16), (2, 4, 16, 10)))
    # implicit output and ellipsis: '...ij,...jk' with (3,2,4),(3,4,5): 3 * 2 * 4 * 5 = 120
    assert f.einsum_macs("...ij,...jk", [(3, 2, 4), (3, 4, 5)]) == 120
    # one operand (a sum or transpose) multiplies nothing
    assert f.einsum_macs("ij->ji", [(3, 4)]) == 0
    # chain 'ij,jk,kl->il' (2,3),(3,4),(4,5): first ij,jk -> ik: 2*3*4 = 24; then ik,kl -> il: 2*4*5 = 40
    assert f.einsum_macs("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]) == 64


def test_einsum_gemm_splits_the_indices_as_one_matmul():
    # XLNet's projection 'ibh,hnd->ibnd', i = 128 tokens, b = 2, h = 768, n = 12 heads, d = 64: a matmul of
    # M = i x b = 256 rows (the left operand's own output indices), N = n x d = 768 (the right's), K = h = 768
    # (the output lacks it); M x N x K = einsum_macs = 128 x 2 x 768 x 12 x 64
    assert f.einsum_gemm("ibh,hnd->ibnd", [(128, 2, 768), (768, 12, 64)]) == (256, 768, 768)
    assert math.prod(f.einsum_gemm("ibh,hnd->ibnd", [(128, 2, 768), (768, 12, 64)])) == \
        f.einsum_macs("ibh,hnd->ibnd", [(128, 2, 768), (768, 12, 64)])
    # its relative scores 'ibnd,jbnd->bnij' with j = 256 keys: batch indices b, n (in both and the output) go to
    # M: 2 x 12 x 128 = 3,072; N = j = 256; K = d = 64
    assert f.einsum_gemm("ibnd,jbnd->bnij", [(128, 2, 12, 64), (256, 2, 12, 64)]) == (3072, 256, 64)
    # implicit output: 'bij,bjk' sums b too (it is repeated): output 'ik', M = 3, N = 5, K = b x j = 8
    assert f.einsum_gemm("bij,bjk", [(2, 3, 4), (2, 4, 5)]) == (3, 5, 8)
    # ellipsis dims are batch: '...ij,...jk->...ik' (3,2,4),(3,4,5): M = 3 x 2, N = 5, K = 4
    assert f.einsum_gemm("...ij,...jk->...ik", [(3, 2, 4), (3, 4, 5)]) == (6, 5, 4)
    # one operand or three: not one matmul
    assert f.einsum_gemm("ij->ji", [(3, 4)]) is None
    assert f.einsum_gemm("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]) is None


def test_fft_flops():
    # a complex transform of length 8 over 16 points (two transforms): 5 x 16 x log2 8 = 240 FLOPs; a real
    # input or output halves it (120); length 512 = 16 x 32 as one 2-D transform of 1,024 points: 5 x 1,024 x 9
    assert f.fft_flops(16, 8) == 240 and f.fft_flops(16, 8, real=True) == 120
    assert f.fft_flops(1024, 16 * 32) == 46_080
    assert f.fft_flops(7, 1) == 0  # a length-1 transform is the identity
    # not a power of two: log2 of the length all the same (5 x 12 x log2 12 = 215.1 -> 215)
    assert f.fft_flops(12, 12) == 215


def test_attention_macs_and_extra_flops():
    # q (2,4,8,16), k/v (2,4,10,16): scores 2*4*8*10*16 = 10,240 + weighted sum of v 10,240 = 20,480
    assert f.attention_macs((2, 4, 8, 16), (2, 4, 10, 16), (2, 4, 10, 16)) == 20_480
    # grouped-query: k/v with 1 head broadcast over 4 query heads: same count
    assert f.attention_macs((2, 4, 8, 16), (2, 1, 10, 16), (2, 1, 10, 16)) == 20_480
    # 2*4*8*10 = 640 scores * (softmax 5 + scale 1) = 3,840; with an additive mask 640 * 7 = 4,480
    assert f.attention_extra_flops((2, 4, 8, 16), (2, 4, 10, 16), has_mask=False) == 3_840
    assert f.attention_extra_flops((2, 4, 8, 16), (2, 4, 10, 16), has_mask=True) == 4_480


def test_rnn_macs():
    # LSTM input 10, hidden 20, seq 5, batch 3, one layer: per step 4 gates * 20 * (10 + 20) = 2,400;
    # * 5 steps * 3 batch = 36,000
    assert f.rnn_macs("lstm", 5, 3, 10, 20) == 36_000
    # two layers, bidirectional: layer 0: 2 dirs * 5 * 3 * 2,400 = 72,000;
    # layer 1 input is 2*20 = 40: 4 * 20 * (40 + 20) = 4,800 per step -> 2 * 15 * 4,800 = 144,000 -> 216,000
    assert f.rnn_macs("lstm", 5, 3, 10, 20, num_layers=2, directions=2) == 216_000
    # GRU 3 gates: 3 * 20 * 30 = 1,800 per step * 15 = 27,000; Elman RNN 1 gate: 600 * 15 = 9,000
    assert f.rnn_macs("gru", 5, 3, 10, 20) == 27_000
    assert f.rnn_macs("rnn", 5, 3, 10, 20) == 9_000
    # LSTM with proj_size 8: recurrent input is 8: 4 * 20 * (10 + 8) = 1,440, projection 20 * 8 = 160
    # -> 1,600 per step * 15 = 24,000
    assert f.rnn_macs("lstm", 5, 3, 10, 20, proj_size=8) == 24_000


def test_elementwise_and_norms():
    assert f.elementwise_flops("Add", 100) == 100
    assert f.elementwise_flops("sigmoid", 100) == 300
    assert f.elementwise_flops("gelu", 10) == 50
    assert f.elementwise_flops("NoSuchOp", 10) is None
    # layer norm over 1,000 elements with scale and shift: (5 + 1 + 1) * 1,000
    assert f.norm_flops(1_000, True, True) == 7_000
    # max pool 3x3 windows over 49 outputs: 49 * 9 = 441
    assert f.pool_flops(49, (3, 3)) == 441


def test_einsum_rejects_mismatched_shapes():
    with pytest.raises(ValueError):
        f.einsum_macs("ij,jk->ik", [(2, 3)])
