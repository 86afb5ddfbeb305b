"""A nineteenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was measured:
none is a calibration net, and none is in the first eighteen sets (benchmarks/predict_models_fresh17.py lists the first
seventeen; the eighteenth: lcnet_100_ish, mobileone_s1_ish, hgnet_v2_b4, rt_detr_r18, aimv2_large_vision,
roformer_chinese_base, opt_350m, wavlm_base_plus). Each is a factory ``NAME()`` with random weights (torch seeded with 0
first, so every machine builds the same ones) in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh18.py:NAME``. The two conv nets of plain torch are written here (torchvision and timm,
whose versions they follow, cannot be imported on the development machine); the other six come from ``transformers``
itself (random weights from a config at the published checkpoint's shape, its values written out below): the code users
bring. Parameter counts are sum(numel) of the built module; GMACs are modelcost's static count at batch 1 (transformers
5.24, torch 2.13).

* mobilenetv4_conv_small_ish: MobileNetV4-Conv-Small (Qin et al., "MobileNetV4: Universal Models for the Mobile
  Ecosystem", ECCV 2024, as timm's mobilenetv4_conv_small builds it: ReLU throughout, BN, no SE, no layer scale; a 3 x 3
  stride-2 conv-BN-ReLU stem to 32; conv-BN-ReLU pairs 3 x 3 stride 2 to 32 then 1 x 1 to 32 (at 56) and 3 x 3 stride 2
  to 96 then 1 x 1 to 64 (at 28); universal inverted bottlenecks (an optional depthwise conv-BN at the input width, a
  1 x 1 expansion conv-BN-ReLU to make_divisible(in x e), an optional depthwise conv-BN-ReLU at the expanded width,
  strided when present, a 1 x 1 projection conv-BN, the identity added when the shape is kept): at 14, one ExtraDW
  (5 x 5 then 5 x 5, e 3) to 96, four inverted residuals (3 x 3, e 2), one ConvNeXt-like (3 x 3 before the expansion
  only, e 4); at 7, ExtraDW 3 x 3 + 3 x 3 (e 6) and 5 x 5 + 5 x 5 (e 4) to 128, inverted residuals 5 x 5 (e 4), 5 x 5 (e
  3) and two 3 x 3 (e 4); a 1 x 1 conv-BN-ReLU to 960; average pooling, a 1 x 1 conv 960 -> 1280 without bias, BN and
  ReLU (timm's head_norm), a 1000-class linear), input 224 x 224 (nn.Sequential's ``input``); 3,774,024 parameters (the
  paper's and timm's 3.8 M), 0.1860 GMACs (their 0.2 G): the dense 1 x 1 convs 62.8%, the dense 3 x 3 convs (stem and
  the two strided conv-BN-ReLUs) 33.0%, the depthwise convs 3.5% (5 x 5 2.2%, 3 x 3 1.3%), the classifier 0.7%. The
  sets' first universal inverted bottleneck.
* edgenext_small_ish: EdgeNeXt-S (Maaz et al., "EdgeNeXt: Efficiently Amalgamated CNN-Transformer Architecture for
  Mobile Vision Applications", ECCV Workshops 2022, as timm's edgenext_small builds it: a 4 x 4 stride-4 patchify conv
  and a channels LayerNorm; four stages at 48, 96, 160 and 304 of 3, 3, 9 and 3 blocks, each after the first entered by
  a LayerNorm and a 2 x 2 stride-2 conv; conv encoders (a k x k depthwise conv with bias, k 3, 5, 7 and 9 by stage,
  LayerNorm, a 4x MLP with GELU, layer scale, residual) and, as the last block of stages 2-4, one split depthwise
  transpose attention (SDTA) encoder: the channels chunked into 2, 3 and 4 groups (stages 2, 3 and 4), each but the last
  a 3 x 3 depthwise conv of its chunk plus the previous group's output, concatenated; sine-cosine Fourier positions
  through a 1 x 1 conv added in stage 2 only; cross-covariance attention (XCA: 8 heads, L2-normalized q and k, a
  channels x channels attention map with a learned temperature) with layer scale; a 4x MLP with layer scale; average
  pooling, LayerNorm, a 1000-class linear), input 224 x 224 (nn.Sequential's ``input``; timm's default input is 256);
  5,586,832 parameters (timm's and the paper's 5.59 M), 0.9596 GMACs (the paper's 1.26 G at 256, times (224 / 256)^2:
  0.965): the MLP linears and the XCA projections 92.1%, the convs 7.4% (the 2 x 2 downsampling convs 3.8%, the
  depthwise convs 2.4%, the stem 0.8%, the positions' 1 x 1 conv 0.5%), XCA's matmuls 0.4%. The sets' first
  cross-covariance (channel) attention.
* hubert_large: HuBERT Large (Hsu et al., "HuBERT: Self-Supervised Speech Representation Learning by Masked Prediction
  of Hidden Units", 2021, facebook/hubert-large-ll60k's config), input_values 16,000 samples (1 s at 16 kHz, 49 frames);
  315,438,720 parameters (the paper's 317 M for HuBERT Large), 17.81 GMACs: the linears 83.2%, the conv feature encoder
  13.8%, the weight-normed (recomputed every call, counted) grouped positional conv 2.4%, attention 0.7%. The sets'
  first pre-LayerNorm ("stable") wav2vec 2.0-style encoder with a LayerNorm'd conv feature encoder, and its largest
  speech model.
* data2vec_audio_base: data2vec Audio Base (Baevski et al., "data2vec: A General Framework for Self-supervised Learning
  in Speech, Vision and Language", ICML 2022, facebook/data2vec-audio-base's config), input_values 16,000 samples;
  93,164,288 parameters (wav2vec 2.0 Base's 95 M as the papers count it), 6.85 GMACs: the linears 61.1%, the conv
  feature encoder and the five positional convs 38.3% (the positional convs 2.5%), attention 0.7%. Its positional
  embedding is a stack of 5 grouped convs (kernel 19, 16 groups), not wav2vec 2.0's single weight-normed kernel-128
  conv.
* vitdet_base: ViTDet-B's backbone (Li et al., "Exploring Plain Vision Transformer Backbones for Object Detection", ECCV
  2022; detectron2's ViTDet-B shape, which VitDetConfig's defaults, a window-less ViT-B, are not), pixel_values
  448 x 448; 85,852,160 parameters (ViT-B's 86 M), 72.99 GMACs: the linears 91.2%, attention's matmuls 7.8%, the
  decomposed relative-position einsums 0.4%, the patch conv 0.6%. vitmatte_small's backbone is a ViTDet-S (width 384,
  image and trimap at 512 x 512); this is the plain backbone at base width, with global blocks whose relative positions
  span the whole 28 x 28 grid.
* upernet_convnext_tiny: UperNet with a ConvNeXt-T backbone (openmmlab/upernet-convnext-tiny's config, ADE20K),
  pixel_values 256 x 256 (below); 60,242,636 parameters (the ConvNeXt paper's 60 M), 58.91 GMACs (its 939 GFLOPs,
  multiply-adds at 2,048 x 512, are 58.7 at 256 x 256): the convs 90.8% (almost all in the head: the 3 x 3 FPN and
  fusion convs at strides 4 to 32 with 512 channels), the backbone's MLP linears 9.2%. The sets' first UperNet (pyramid
  pooling plus FPN fusion).
* olmo2_1b: OLMo 2 1B (allenai/OLMo-2-0425-1B's config), input_ids 128, no cache; 1,484,916,736 parameters (AllenAI's
  1.48 B; the embedding and the head are untied, 205.5 M each), 164.82 GMACs: the linears 99.4% (the LM head 16.0%),
  attention 0.7%. The sets' first decoder with normalization after each sublayer (before the residual add) and QK-norm
  over the whole q and k projections, and its largest by parameters.
* umt5_small_encoder: UMT5-small's encoder (google/umt5-small's config), input_ids 128; 150,153,216 parameters
  (131,268,608 of them the 256,384-token embedding, tied between the model's ``shared`` module and the encoder's and
  counted once), 2.52 GMACs: the linears 96.0%, attention 4.0%. Chosen as the text encoder because it is not a BERT
  variant and differs from t5_encoder_ish (T5-base-like: one relative position bias, ReLU FFN) in what it computes:
  every one of its 8 layers computes its own bucketed relative position bias, and its FFN is gated GELU; mT5-small would
  share T5's single bias, and LUKE and X-MOD are RoBERTa bodies (LUKE's entity-aware attention is idle on input_ids
  alone, X-MOD's adapters are one more MLP per layer).

All eight build and run at batch 1 on the CPU and count completely ("every op counted", 3.2 to 5.3 s a count on the
2-core development machine), batch 64 exactly 64 x batch 1's MACs for all eight. torch._dynamo.explain finds one graph
and no break in each (torch 2.13 here; torch 2.11 on the H100 machine too). Export (modelcost's ort-cpu bench at batch
1, fp32): all eight export and agree with torch (mobilenetv4_conv_small_ish and edgenext_small_ish top-1 100%, the
transformers models cosine 1.00000, max relative error at most 1.4e-3): six through the TorchScript exporter (opset 17);
upernet_convnext_tiny (its pyramid pooling's adaptive average pools to 3 x 3 and 6 x 6 of an 8 x 8 map) and olmo2_1b
(aten::diff in transformers' mask building) through the torch.export-based one (opset 20) after the TorchScript exporter
failed. olmo2_1b's export (5.5 GiB) was run on the H100 machine's CPU (torch 2.11, transformers 5.17): the development
machine had 3 GB of disk free. On the H100 machine (torch 2.11, eager) all eight ran at batch 64 in fp32 and fp16 with
finite outputs (peak memory at most 9.3 GB, olmo2_1b's in fp32; then vitdet_base's 7.7 GB and upernet_convnext_tiny's
6.7 GB). At batch 64 the largest peak activation modelcost counts is upernet_convnext_tiny's 5.04 GB (fp32), then
vitdet_base's 4.53 GB and olmo2_1b's 3.36 GB.

Sizes chosen: vitdet_base at 448 x 448 rather than detectron2's 1,024 x 1,024 (each global block's batch-64 attention
matrix would be 4,096^2 x 12 heads, 51 GB in fp32) or VitDetConfig's default 224 (a 14 x 14 grid is a single 14 x 14
window, so windowed and global attention would be the same): 448 gives four windows of 14 x 14 without padding.
upernet_convnext_tiny at 256 x 256, not its 512 x 512 training crop: at 512 and batch 64 (20.2 GB of peak activation
counted) eager CUDA fails, the auxiliary head's upsampled logits (64 x 150 x 512 x 512, 2.5 G elements) being more than
upsample_bilinear2d's channels-last kernel takes (INT_MAX elements).
"""

from __future__ import annotations

import math
from collections import OrderedDict

import torch
from torch import nn
from torch.nn import functional as F



# timm's mobilenetv4_conv_small arch_def (mobilenetv3.py _gen_mobilenet_v4, layer_scale_init_value None), per block:
# ("cn", kernel, stride, out) for a conv-BN-ReLU; ("uir", start dw kernel, mid dw kernel, stride, expansion, out) for a
# universal inverted bottleneck (0: that depthwise conv left out).
MNV4_CONV_SMALL: list[list[tuple]] = [
    [("cn", 3, 2, 32), ("cn", 1, 1, 32)],                                         # 112 -> 56
    [("cn", 3, 2, 96), ("cn", 1, 1, 64)],                                         # 56 -> 28
    [("uir", 5, 5, 2, 3.0, 96)] + [("uir", 0, 3, 1, 2.0, 96)] * 4 + [("uir", 3, 0, 1, 4.0, 96)],  # 28 -> 14
    [("uir", 3, 3, 2, 6.0, 128), ("uir", 5, 5, 1, 4.0, 128), ("uir", 0, 5, 1, 4.0, 128),
     ("uir", 0, 5, 1, 3.0, 128)] + [("uir", 0, 3, 1, 4.0, 128)] * 2,              # 14 -> 7
    [("cn", 1, 1, 960)],
]


def _make_divisible(v: float, divisor: int = 8) -> int:
    """timm's make_divisible (round to the nearest multiple of 8, never below 90% of v)."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _conv_bn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, act: bool = True) -> nn.Sequential:
    """timm ConvNormAct: conv without bias, padding k // 2, BN, ReLU (or no activation)."""
    layers: OrderedDict[str, nn.Module] = OrderedDict(
        conv=nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), bn=nn.BatchNorm2d(cout))
    if act:
        layers["act"] = nn.ReLU()
    return nn.Sequential(layers)


class UniversalInvertedResidual(nn.Module):
    """timm UniversalInvertedResidual (MobileNetV4's UIB): an optional k x k depthwise conv-BN without activation at
    the input width ("start"), a 1 x 1 expansion conv-BN-ReLU to make_divisible(in x e), an optional k x k depthwise
    conv-BN-ReLU at the expanded width ("mid", strided when present), a 1 x 1 projection conv-BN, and the identity
    added when the shape is kept. start + mid: ExtraDW; mid only: the inverted residual; start only: ConvNeXt-like."""

    def __init__(self, cin: int, cout: int, k_start: int, k_mid: int, stride: int, exp: float) -> None:
        super().__init__()
        self.has_skip = cin == cout and stride == 1
        self.dw_start = (_conv_bn(cin, cin, k_start, 1 if k_mid else stride, groups=cin, act=False) if k_start
                         else nn.Identity())
        mid = _make_divisible(cin * exp)
        self.pw_exp = _conv_bn(cin, mid, 1)
        self.dw_mid = _conv_bn(mid, mid, k_mid, stride, groups=mid) if k_mid else nn.Identity()
        self.pw_proj = _conv_bn(mid, cout, 1, act=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pw_proj(self.dw_mid(self.pw_exp(self.dw_start(x))))
        return x + y if self.has_skip else y


def mobilenetv4_conv_small_ish() -> nn.Module:
    """MobileNetV4-Conv-Small as timm's mobilenetv4_conv_small (see the module docstring); input ``input``."""
    torch.manual_seed(0)
    layers: OrderedDict[str, nn.Module] = OrderedDict(conv_stem=_conv_bn(3, 32, 3, 2))  # 224 -> 112
    cin = 32
    for i, stage in enumerate(MNV4_CONV_SMALL):
        blocks: list[nn.Module] = []
        for cfg in stage:
            if cfg[0] == "cn":
                _, k, stride, cout = cfg
                blocks.append(_conv_bn(cin, cout, k, stride))
            else:
                _, k_start, k_mid, stride, exp, cout = cfg
                blocks.append(UniversalInvertedResidual(cin, cout, k_start, k_mid, stride, exp))
            cin = cout
        layers[f"stage{i}"] = nn.Sequential(*blocks)
    # timm's v4 head (head_norm=True, head_bias=False): pool, a 1 x 1 conv 960 -> 1280 without bias, BN, ReLU, linear
    layers["global_pool"] = nn.AdaptiveAvgPool2d(1)
    layers["conv_head"] = nn.Conv2d(cin, 1280, 1, bias=False)
    layers["norm_head"] = nn.BatchNorm2d(1280)
    layers["act2"] = nn.ReLU()
    layers["flatten"] = nn.Flatten(1)
    layers["classifier"] = nn.Linear(1280, 1000)
    return nn.Sequential(layers).eval()


class LayerNorm2d(nn.LayerNorm):
    """timm LayerNorm2d: LayerNorm over the channels of an NCHW tensor (permuted to NHWC and back)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class Mlp(nn.Module):
    """timm Mlp: linear to 4x, GELU, linear back."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class EdgeNeXtConvBlock(nn.Module):
    """timm edgenext ConvBlock: a k x k depthwise conv with bias, LayerNorm (channels last), Mlp, layer scale gamma,
    residual."""

    def __init__(self, dim: int, k: int) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, k, 1, k // 2, groups=dim, bias=True)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, 4 * dim)
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv_dw(x).permute(0, 2, 3, 1)
        y = self.gamma * self.mlp(self.norm(y))
        return x + y.permute(0, 3, 1, 2)


class PositionalEncodingFourier(nn.Module):
    """timm edgenext PositionalEncodingFourier: DETR's sine-cosine positions (32 frequencies per axis) for an H x W
    grid, built from the shape every call, then a 1 x 1 conv 64 -> dim with bias."""

    def __init__(self, dim: int, hidden_dim: int = 32, temperature: float = 10000.0) -> None:
        super().__init__()
        self.token_projection = nn.Conv2d(hidden_dim * 2, dim, kernel_size=1)
        self.scale = 2 * math.pi
        self.temperature = temperature
        self.hidden_dim = hidden_dim

    def forward(self, b: int, h: int, w: int) -> torch.Tensor:
        device, dtype = self.token_projection.weight.device, self.token_projection.weight.dtype
        inv_mask = ~torch.zeros((b, h, w)).to(device=device, dtype=torch.bool)
        y_embed = inv_mask.cumsum(1, dtype=dtype)
        x_embed = inv_mask.cumsum(2, dtype=dtype)
        eps = 1e-6
        y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.hidden_dim, dtype=dtype, device=device)
        dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / self.hidden_dim)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return self.token_projection(pos)


class CrossCovarianceAttn(nn.Module):
    """timm edgenext CrossCovarianceAttn (XCiT's XCA): q, k, v of C / heads channels each, L2-normalized q and k over
    the tokens, a (C / heads) x (C / heads) attention map scaled by a learned per-head temperature, softmax, times v,
    a linear projection."""

    def __init__(self, dim: int, num_heads: int = 8) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.temperature = nn.Parameter(torch.ones(num_heads, 1, 1))
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.num_heads, -1).permute(2, 0, 3, 4, 1).unbind(0)
        attn = (F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)) * self.temperature
        x = attn.softmax(dim=-1) @ v
        return self.proj(x.permute(0, 3, 1, 2).reshape(b, n, c))


class SplitTransposeBlock(nn.Module):
    """timm edgenext SplitTransposeBlock (the SDTA encoder): the channels chunked into ``scales`` groups, each but the
    last a 3 x 3 depthwise conv of its chunk plus the previous group's output (Res2Net-like), concatenated; optional
    Fourier positions added; XCA on LayerNorm'd tokens with layer scale, residual; LayerNorm, Mlp, layer scale, and the
    block's input added."""

    def __init__(self, dim: int, scales: int, num_heads: int, use_pos_emb: bool) -> None:
        super().__init__()
        width = max(int(math.ceil(dim / scales)), int(math.floor(dim // scales)))
        self.convs = nn.ModuleList(
            [nn.Conv2d(width, width, 3, 1, 1, groups=width, bias=True) for _ in range(max(1, scales - 1))])
        self.pos_embd = PositionalEncodingFourier(dim) if use_pos_emb else None
        self.norm_xca = nn.LayerNorm(dim, eps=1e-6)
        self.gamma_xca = nn.Parameter(1e-6 * torch.ones(dim))
        self.xca = CrossCovarianceAttn(dim, num_heads)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, 4 * dim)
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        spx = x.chunk(len(self.convs) + 1, dim=1)
        spo = []
        sp = spx[0]
        for i, conv in enumerate(self.convs):
            if i > 0:
                sp = sp + spx[i]
            sp = conv(sp)
            spo.append(sp)
        spo.append(spx[-1])
        x = torch.cat(spo, 1)
        b, c, h, w = x.shape
        x = x.reshape(b, c, h * w).permute(0, 2, 1)
        if self.pos_embd is not None:
            x = x + self.pos_embd(b, h, w).reshape(b, -1, x.shape[1]).permute(0, 2, 1)
        x = x + self.gamma_xca * self.xca(self.norm_xca(x))
        x = self.gamma * self.mlp(self.norm(x.reshape(b, h, w, c)))
        return shortcut + x.permute(0, 3, 1, 2)


def edgenext_small_ish() -> nn.Module:
    """EdgeNeXt-S as timm's edgenext_small (see the module docstring); input ``input``."""
    torch.manual_seed(0)
    dims, depths, kernels = (48, 96, 160, 304), (3, 3, 9, 3), (3, 5, 7, 9)
    scales, use_pos = (2, 2, 3, 4), (False, True, False, False)
    # Patchify stem: a 4 x 4 stride-4 conv with bias, LayerNorm2d
    layers: OrderedDict[str, nn.Module] = OrderedDict(
        stem=nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6)))
    cin = dims[0]
    for i in range(4):
        blocks: list[nn.Module] = []
        if i > 0:  # downsample: LayerNorm2d, a 2 x 2 stride-2 conv with bias
            blocks.append(nn.Sequential(LayerNorm2d(cin, eps=1e-6), nn.Conv2d(cin, dims[i], 2, 2)))
        # every stage but the first ends in one SDTA block (global_block_counts 0, 1, 1, 1), 8 heads
        n_conv = depths[i] - (1 if i > 0 else 0)
        blocks += [EdgeNeXtConvBlock(dims[i], kernels[i]) for _ in range(n_conv)]
        if i > 0:
            blocks.append(SplitTransposeBlock(dims[i], scales[i], 8, use_pos[i]))
        layers[f"stage{i}"] = nn.Sequential(*blocks)
        cin = dims[i]
    # Head: average pool, LayerNorm2d, flatten, a 1000-class linear
    layers["global_pool"] = nn.AdaptiveAvgPool2d(1)
    layers["norm"] = LayerNorm2d(cin, eps=1e-6)
    layers["flatten"] = nn.Flatten(1)
    layers["fc"] = nn.Linear(cin, 1000)
    return nn.Sequential(layers).eval()

def hubert_large() -> nn.Module:
    from transformers import HubertConfig, HubertModel

    # facebook/hubert-large-ll60k's config (Hsu et al., "HuBERT: Self-Supervised Speech Representation Learning by
    # Masked Prediction of Hidden Units", 2021): wav2vec 2.0's conv feature encoder (7 convs of 512 with bias, kernels
    # 10-3-3-3-3-2-2, strides 5-2-2-2-2-2-2, a LayerNorm after each ("layer"), GELU: 320 samples a frame), a
    # LayerNorm'd projection to 1024, a convolutional position embedding (kernel 128 in 16 groups); 24 pre-LayerNorm
    # ("stable") layers at 1024, 16 heads, FFN 4096 with GELU; 16,000 samples (1 s at 16 kHz, 49 frames)
    config = HubertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                          hidden_act="gelu", feat_extract_norm="layer", feat_extract_activation="gelu",
                          conv_dim=[512] * 7, conv_stride=[5, 2, 2, 2, 2, 2, 2], conv_kernel=[10, 3, 3, 3, 3, 2, 2],
                          conv_bias=True, num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16,
                          do_stable_layer_norm=True, feat_proj_layer_norm=True, layer_norm_eps=1e-5,
                          layerdrop=0.1)
    torch.manual_seed(0)
    return HubertModel(config).eval()


def data2vec_audio_base() -> nn.Module:
    from transformers import Data2VecAudioConfig, Data2VecAudioModel

    # facebook/data2vec-audio-base's config (Baevski et al., "data2vec: A General Framework for Self-supervised
    # Learning in Speech, Vision and Language", ICML 2022): wav2vec 2.0's conv feature encoder (7 convs of 512, no
    # bias, a LayerNorm after each, GELU: 320 samples a frame), a LayerNorm'd projection to 768, a positional
    # embedding of 5 grouped convs in a row (kernel 19, 16 groups, each followed by a LayerNorm without affine and
    # GELU), its output added to the input; 12 post-LayerNorm layers at 768, 12 heads, FFN 3072 with GELU; 16,000
    # samples
    config = Data2VecAudioConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                 intermediate_size=3072, hidden_act="gelu", feat_extract_activation="gelu",
                                 conv_dim=[512] * 7, conv_stride=[5, 2, 2, 2, 2, 2, 2],
                                 conv_kernel=[10, 3, 3, 3, 3, 2, 2], conv_bias=False, num_conv_pos_embeddings=5,
                                 conv_pos_kernel_size=19, num_conv_pos_embedding_groups=16, layer_norm_eps=1e-5)
    torch.manual_seed(0)
    return Data2VecAudioModel(config).eval()


def vitdet_base() -> nn.Module:
    from transformers import VitDetConfig, VitDetModel

    # ViTDet-B (Li et al., "Exploring Plain Vision Transformer Backbones for Object Detection", ECCV 2022, as
    # detectron2's COCO Mask R-CNN ViTDet-B backbone builds it): ViT-B/16 (12 layers at 768, 12 heads, MLP 3072, qkv
    # bias), absolute positions pretrained at 224 (14 x 14, interpolated to the input's grid), 14 x 14 windowed
    # attention with decomposed relative positions (use_rel_pos) in every block but 2, 5, 8 and 11, which attend
    # globally (with relative positions over the whole grid); no residual conv blocks. pixel_values 448 x 448 (a
    # 28 x 28 grid, four windows of 14 without padding; detectron2's 1,024 x 1,024 would make each global block's
    # batch-64 attention matrix 4,096^2 x 12 heads, 51 GB in fp32)
    config = VitDetConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, mlp_ratio=4,
                          hidden_act="gelu", layer_norm_eps=1e-6, image_size=448, pretrain_image_size=224,
                          patch_size=16, num_channels=3, qkv_bias=True, drop_path_rate=0.1,
                          window_block_indices=[0, 1, 3, 4, 6, 7, 9, 10], residual_block_indices=[],
                          use_absolute_position_embeddings=True, use_relative_position_embeddings=True,
                          window_size=14)
    torch.manual_seed(0)
    return VitDetModel(config).eval()


def upernet_convnext_tiny() -> nn.Module:
    from transformers import ConvNextConfig, UperNetConfig, UperNetForSemanticSegmentation

    # openmmlab/upernet-convnext-tiny's config (Xiao et al., "Unified Perceptual Parsing for Scene Understanding",
    # ECCV 2018, on Liu et al.'s ConvNeXt-T, ADE20K's 150 classes): a ConvNeXt-T backbone (depths 3-3-9-3, widths 96,
    # 192, 384, 768; all four stages out) into UperNet's head: a pyramid pooling module on the stride-32 map (pool
    # scales 1, 2, 3, 6, each a 1 x 1 conv-BN-ReLU to 512, upsampled and concatenated, a 3 x 3 conv-BN-ReLU), an FPN
    # (1 x 1 lateral convs to 512, top-down bilinear upsampling, 3 x 3 FPN convs), all four levels upsampled to stride
    # 4 and concatenated (2,048 channels), a 3 x 3 conv-BN-ReLU to 512 and a 1 x 1 classifier; the FCN auxiliary head
    # on stage 3 (a 3 x 3 conv-BN-ReLU to 256, a 1 x 1 classifier) runs too; logits upsampled to the input
    backbone = ConvNextConfig(num_channels=3, patch_size=4, num_stages=4, hidden_sizes=[96, 192, 384, 768],
                              depths=[3, 3, 9, 3], hidden_act="gelu", layer_scale_init_value=1e-6,
                              drop_path_rate=0.3, out_features=["stage1", "stage2", "stage3", "stage4"])
    config = UperNetConfig(backbone_config=backbone, hidden_size=512, pool_scales=[1, 2, 3, 6],
                           use_auxiliary_head=True, auxiliary_in_channels=384, auxiliary_channels=256,
                           auxiliary_num_convs=1, auxiliary_concat_input=False, num_labels=150)
    torch.manual_seed(0)
    return UperNetForSemanticSegmentation(config).eval()


def olmo2_1b() -> nn.Module:
    from transformers import Olmo2Config, Olmo2ForCausalLM

    # allenai/OLMo-2-0425-1B's config (Team OLMo, "2 OLMo 2 Furious", 2025): 16 decoder layers at 2048, 16 heads of
    # 128 (no grouped keys), a SwiGLU MLP of 8192, OLMo 2's post-sublayer RMSNorm (each block's attention and MLP
    # output normalized before the residual add) and RMSNorm over the whole q and k projections (QK-norm), rotary
    # positions (theta 500,000), an untied LM head over 100,352; 128 tokens, no cache
    config = Olmo2Config(vocab_size=100352, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                         num_attention_heads=16, num_key_value_heads=16, hidden_act="silu",
                         max_position_embeddings=4096, rope_parameters={"rope_theta": 500000.0, "rope_type": "default"},
                         rms_norm_eps=1e-6, attention_bias=False, tie_word_embeddings=False, pad_token_id=100277,
                         eos_token_id=100257, use_cache=False)
    torch.manual_seed(0)
    return Olmo2ForCausalLM(config).eval()


def umt5_small_encoder() -> nn.Module:
    from transformers import UMT5Config, UMT5EncoderModel

    # google/umt5-small's config (Chung et al., "UniMax: Fairer and More Effective Language Sampling for Large-Scale
    # Multilingual Pretraining", ICLR 2023), its encoder only: 8 pre-RMSNorm layers at 512, 6 heads of 64 (384 wide),
    # a gated-GELU FFN of 1024, a 256,384-token embedding; unlike T5 (t5_encoder_ish), whose first layer's bucketed
    # relative position bias is shared by all, every UMT5 layer learns and computes its own (32 buckets, distance
    # 128); 128 tokens
    config = UMT5Config(vocab_size=256384, d_model=512, d_kv=64, d_ff=1024, num_layers=8, num_heads=6,
                        relative_attention_num_buckets=32, relative_attention_max_distance=128, dropout_rate=0.1,
                        layer_norm_epsilon=1e-6, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                        use_cache=False)
    torch.manual_seed(0)
    return UMT5EncoderModel(config).eval()
