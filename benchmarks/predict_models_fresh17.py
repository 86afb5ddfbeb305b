"""An eighteenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was
measured: none is a calibration net, and none is in the first seventeen sets (benchmarks/predict_models_fresh16.py
lists the first sixteen; the seventeenth: shufflenet_v1_g3_ish, replknet31b_ish, efficientvit_b1_ish, mgp_str_base,
granite_speech_encoder, bigbird_roberta_base, perceiver_io_language, timesformer_base). Each is a factory ``NAME()``
with random weights (torch seeded with 0 first, so every machine builds the same ones) in eval mode that ``modelcost``
loads as ``benchmarks/predict_models_fresh17.py:NAME``. The two conv nets of plain torch are written here (torchvision
and timm, whose versions they follow, cannot be imported on the development machine); the other six come from
``transformers`` itself (random weights from a config at the published checkpoint's shape, its values written out
below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are modelcost's static count
at batch 1 (transformers 5.24, torch 2.13).

* lcnet_100_ish: PP-LCNet 1.0x (Cui et al., "PP-LCNet: A Lightweight CPU Convolutional Neural Network", 2021, as
  timm's lcnet_100 and PaddleClas's PPLCNet_x1_0 build it: a 3 x 3 stride-2 conv-BN-hard-swish to 16; 13
  depthwise-separable blocks, each a 3 x 3 or 5 x 5 depthwise conv-BN-hard-swish, an SE in the last two (on the
  depthwise output: average pool, a 1 x 1 conv with bias to a quarter, ReLU, a 1 x 1 conv with bias back,
  hard-sigmoid, times the input) and a 1 x 1 conv-BN-hard-swish, no residuals: 32 at 112 x 112; 64, 64 at 56; 128, 128
  at 28; 256 (3 x 3) and five 256 (5 x 5) at 14; 512, 512 (5 x 5, SE) at 7; average pooling, a 1 x 1 conv 512 -> 1280
  with bias (timm's head_bias) and no BN, hard-swish, dropout 0.2, flatten and a 1000-class linear), input 224 x 224
  (nn.Sequential's ``input``); 2,953,800 parameters (timm's 2.95 M; the paper's 2.96 M is PaddleClas's head conv
  without bias, 2,952,520, plus BN running statistics), 0.1557 GMACs (the paper's 161 M FLOPs, which matches
  Paddle's counter adding 2 ops per BN element, 5.04 M, to these 155.7 M): the dense 1 x 1 convs 86.6%, the depthwise
  convs 8.6% (5 x 5 4.6%, 3 x 3 3.9%), the stem conv 3.5%, the classifier 0.8%, the head conv 0.4%, the SE convs 0.1%.
* mobileone_s1_ish: MobileOne-S1 before re-parameterization (Vasu et al., "MobileOne: An Improved One millisecond
  Mobile Backbone", CVPR 2023, as apple/ml-mobileone's mobileone(variant="s1") builds it with inference_mode=False:
  every MobileOneBlock sums one conv-BN branch, a 1 x 1 conv-BN "scale" branch of the same stride and groups when the
  kernel is 3 x 3, and a BN identity branch when the width and size are kept, then ReLU; a 3 x 3 stride-2 stem block
  to 64; stages of 2, 8, 10 and 1 blocks at 96, 192, 512 and 1280, the first of each at stride 2, each block a 3 x 3
  depthwise MobileOneBlock (padding 1) then a 1 x 1 MobileOneBlock; no SE; average pooling and a 1000-class linear),
  input 224 x 224 (nn.Sequential's ``input``); 4,825,192 parameters (4,764,840 once re-parameterized, each block one
  conv with bias: the paper's 4.8 M), 0.8301 GMACs (0.8251 without the scale branches, the re-parameterized net: the
  paper's 825 M FLOPs, multiply-adds): the 1 x 1 convs 93.8%, the 3 x 3 depthwise convs 2.8%, the stem's 3 x 3 conv
  2.6%, the 1 x 1 scale branches 0.6% (depthwise 0.31%, the stem's 0.29%), the classifier 0.15%; the BN identity
  branches cost no MACs.
* hgnet_v2_b4: PP-HGNetV2-B4 (transformers' HGNetV2ForImageClassification at HGNetV2Config's defaults, the B4 that
  D-FINE uses as its backbone: HG blocks of six 3 x 3 (stages 1-2) or 1 x 1 + 5 x 5 depthwise "light" (stages 3-4)
  layers whose outputs are concatenated and squeezed by two 1 x 1 convs; a pooled linear head, without PaddleClas's
  1 x 1 conv to 2048 before it), pixel_values 224 x 224; 15,602,376 parameters (PaddleClas's 19.8 M with that conv),
  2.73 GMACs. The sets' first HG blocks (dense aggregation of six layers' outputs, the VoVNet idea with depthwise
  light layers).
* rt_detr_r18: RT-DETR with a ResNet-18-vd backbone (Zhao et al., "DETRs Beat YOLOs on Real-time Object Detection",
  CVPR 2024, PekingU/rtdetr_r18vd's shape), pixel_values 640 x 640; 20,174,608 parameters (the paper's 20 M), 30.76
  GMACs (the paper's 60 GFLOPs): the sets' first real-time detector, its first top-k query selection and multi-scale
  deformable attention (grid_sample). Neither exporter makes a file that agrees with torch (TorchScript: cosine 0.88
  at batch 1, the top-300 selection over random weights' scores; torch.export: ONNX Runtime rejects the input's
  dimensions), so its ort-cuda configs are expected to fail and be recorded as failures.
* aimv2_large_vision: AIMv2-L/14 at 224 (apple/aimv2-large-patch14-224), pixel_values 224 x 224; 312,345,600
  parameters (Apple's 0.3 B), 82.83 GMACs: the sets' first SwiGLU and RMSNorm ViT, and its largest by parameters.
* roformer_chinese_base: RoFormer (junnyu/roformer_chinese_base), input_ids 128; 123,555,840 parameters, 11.17 GMACs:
  the sets' first encoder with rotary positions computed in every layer (sinusoidal, no learned positions).
* opt_350m: OPT-350m (facebook/opt-350m), input_ids 128, no cache; 331,196,416 parameters (25,739,264 shared between
  the embedding and the head), 42.89 GMACs: the sets' only post-LayerNorm decoder, with its 512-wide embedding
  projected in and out (opt_125m is pre-LayerNorm at 768 throughout).
* wavlm_base_plus: WavLM Base+ (microsoft/wavlm-base-plus), input_values 16,000 samples; 94,381,936 parameters, 6.91
  GMACs: wav2vec 2.0's encoder with a gated relative position bias in every layer.

All eight build and run at batch 1 on the CPU and count completely ("every op counted", 2.5 to 4.8 s a count on the
2-core development machine), batch 64 exactly 64 x batch 1's MACs for all eight. torch._dynamo.explain finds one
graph and no break in each. Export (modelcost's ort-cpu bench at batch 1): seven export and agree with torch
(lcnet_100_ish and mobileone_s1_ish top-1 100%, the transformers models cosine 1.00000); rt_detr_r18 does not
(above). At batch 64 the largest peak activation modelcost counts is rt_detr_r18's 3.22 GB, then opt_350m's 1.55 GB.

Tried and left out: LongT5-TGlobal-base's encoder (transient-global local attention at 1,024 tokens, counted completely,
96.94 GMACs), because torch.compile fails on it in torch 2.13 (a fake-tensor error in aten.cat); UnivNet-c32 (a vocoder
of location-variable convolutions), because its Unfold does not export to ONNX; Hunyuan-0.5B (no published config at
hand to copy); Longformer, WavLM's siblings and MobileOne were left out of the seventeenth set as close to others or
breaking the graph: WavLM and MobileOne are in this one for their own mechanisms (the gated relative position bias;
depthwise over-parameterized branches, where repvgg_a0_ish's are dense 3 x 3).
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from torch import nn


# PP-LCNet's NET_CONFIG (PaddleClas pp_lcnet.py): per stage, [kernel, in, out, stride, use_se] for each block.
LCNET_CONFIG: dict[str, list[tuple[int, int, int, int, bool]]] = {
    "blocks2": [(3, 16, 32, 1, False)],
    "blocks3": [(3, 32, 64, 2, False), (3, 64, 64, 1, False)],
    "blocks4": [(3, 64, 128, 2, False), (3, 128, 128, 1, False)],
    "blocks5": [(3, 128, 256, 2, False)] + [(5, 256, 256, 1, False)] * 5,
    "blocks6": [(5, 256, 512, 2, True), (5, 512, 512, 1, True)],
}


def _conv_bn_hswish(cin: int, cout: int, k: int, stride: int, groups: int = 1) -> nn.Sequential:
    """PaddleClas ConvBNLayer: conv without bias, padding (k - 1) // 2, BN, hard-swish."""
    return nn.Sequential(OrderedDict(
        conv=nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
        bn=nn.BatchNorm2d(cout),
        act=nn.Hardswish(),
    ))


class LCNetSE(nn.Module):
    """PaddleClas SEModule (timm: SqueezeExcite with force_act_layer=ReLU, gate hard_sigmoid): average pool, 1 x 1 conv
    (with bias) to channels // 4, ReLU, 1 x 1 conv (with bias) back, hard-sigmoid, times the input."""

    def __init__(self, channels: int, reduction: int = 4) -> None:
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.conv1 = nn.Conv2d(channels, channels // reduction, 1)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(channels // reduction, channels, 1)
        self.hardsigmoid = nn.Hardsigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.hardsigmoid(self.conv2(self.relu(self.conv1(self.avg_pool(x)))))
        return x * s


def _lcnet_block(k: int, cin: int, cout: int, stride: int, use_se: bool) -> nn.Sequential:
    """DepthwiseSeparable (timm 'dsa': pointwise act, no skip): k x k depthwise conv-BN-hswish at the input width,
    optional SE on the depthwise output, 1 x 1 conv-BN-hswish."""
    layers: OrderedDict[str, nn.Module] = OrderedDict(dw_conv=_conv_bn_hswish(cin, cin, k, stride, groups=cin))
    if use_se:
        layers["se"] = LCNetSE(cin)
    layers["pw_conv"] = _conv_bn_hswish(cin, cout, 1, 1)
    return nn.Sequential(layers)


def lcnet_100_ish() -> nn.Module:
    """PP-LCNet 1.0x as timm's lcnet_100 / PaddleClas PPLCNet_x1_0 (see the module docstring); input ``input``."""
    torch.manual_seed(0)
    layers: OrderedDict[str, nn.Module] = OrderedDict(conv1=_conv_bn_hswish(3, 16, 3, 2))  # stem, 224 -> 112
    for name, cfg in LCNET_CONFIG.items():
        layers[name] = nn.Sequential(*[_lcnet_block(*c) for c in cfg])
    # Head: pool first, then a 1 x 1 conv 512 -> 1280 with bias (timm head_bias=True) and no BN, hswish, dropout.
    layers["avg_pool"] = nn.AdaptiveAvgPool2d(1)
    layers["last_conv"] = nn.Conv2d(512, 1280, 1, bias=True)
    layers["act"] = nn.Hardswish()
    layers["dropout"] = nn.Dropout(0.2)
    layers["flatten"] = nn.Flatten(1)
    layers["fc"] = nn.Linear(1280, 1000)
    return nn.Sequential(layers).eval()


class MobileOneBlock(nn.Module):
    """apple/ml-mobileone MobileOneBlock, train-time form: the sum of ``num_conv_branches`` k x k conv-BN branches, a
    1 x 1 conv-BN "scale" branch when k > 1 (same stride and groups, padding 0) and a BN identity branch when
    in == out and stride 1, then ReLU (no SE for s1)."""

    def __init__(self, cin: int, cout: int, k: int, stride: int, padding: int, groups: int = 1,
                 num_conv_branches: int = 1) -> None:
        super().__init__()
        self.rbr_skip = nn.BatchNorm2d(cin) if cout == cin and stride == 1 else None
        self.rbr_conv = nn.ModuleList(
            [self._conv_bn(cin, cout, k, stride, padding, groups) for _ in range(num_conv_branches)])
        self.rbr_scale = self._conv_bn(cin, cout, 1, stride, 0, groups) if k > 1 else None
        self.activation = nn.ReLU()

    @staticmethod
    def _conv_bn(cin: int, cout: int, k: int, stride: int, padding: int, groups: int) -> nn.Sequential:
        return nn.Sequential(OrderedDict(
            conv=nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
            bn=nn.BatchNorm2d(cout),
        ))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.rbr_conv[0](x)
        for branch in self.rbr_conv[1:]:
            out = out + branch(x)
        if self.rbr_scale is not None:
            out = out + self.rbr_scale(x)
        if self.rbr_skip is not None:
            out = out + self.rbr_skip(x)
        return self.activation(out)


def mobileone_s1_ish() -> nn.Module:
    """MobileOne-S1, un-reparameterized, as ml-mobileone's mobileone(variant="s1") (see the module docstring);
    input ``input``."""
    torch.manual_seed(0)
    widths = (1.5, 1.5, 2.0, 2.5)
    num_blocks = (2, 8, 10, 1)
    k = 1  # num_conv_branches for s1 (s0 uses 4); the stem always has 1
    in_planes = min(64, int(64 * widths[0]))
    layers: OrderedDict[str, nn.Module] = OrderedDict(stage0=MobileOneBlock(3, in_planes, 3, 2, 1))  # 224 -> 112
    for i, (base, w, n) in enumerate(zip((64, 128, 256, 512), widths, num_blocks)):
        planes = int(base * w)
        blocks: list[nn.Module] = []
        for stride in [2] + [1] * (n - 1):  # every stage's first block has stride 2
            # Depthwise 3 x 3 block (with its 1 x 1 depthwise scale branch), then the pointwise 1 x 1 block.
            blocks.append(MobileOneBlock(in_planes, in_planes, 3, stride, 1, groups=in_planes, num_conv_branches=k))
            blocks.append(MobileOneBlock(in_planes, planes, 1, 1, 0, num_conv_branches=k))
            in_planes = planes
        layers[f"stage{i + 1}"] = nn.Sequential(*blocks)
    layers["gap"] = nn.AdaptiveAvgPool2d(1)
    layers["flatten"] = nn.Flatten(1)
    layers["linear"] = nn.Linear(in_planes, 1000)
    return nn.Sequential(layers).eval()


def hgnet_v2_b4() -> nn.Module:
    from transformers import HGNetV2Config, HGNetV2ForImageClassification

    # PP-HGNetV2-B4 (PaddlePaddle's HGNetV2, as transformers' HGNetV2Config defaults build it, D-FINE's B4 backbone):
    # a stem of 3 x 3 convs to 32 and 48 (a 2 x 2 max-pool branch concatenated, stride 4 in all); four stages of HG
    # blocks (6 layers each, their outputs concatenated and squeezed by two 1 x 1 convs to the stage width; stages 3
    # and 4 "light": a 1 x 1 conv then a 5 x 5 depthwise conv per layer), widths 128, 512, 1024 and 2048, a strided
    # 3 x 3 depthwise conv-BN between stages; pooling and a 1000-class linear
    config = HGNetV2Config(num_labels=1000)
    torch.manual_seed(0)
    return HGNetV2ForImageClassification(config).eval()


def rt_detr_r18() -> nn.Module:
    from transformers import RTDetrConfig, RTDetrForObjectDetection, RTDetrResNetConfig

    # PekingU/rtdetr_r18vd's config (Zhao et al., "DETRs Beat YOLOs on Real-time Object Detection", CVPR 2024): a
    # ResNet-18-vd backbone (a deep stem, basic blocks 2-2-2-2, average-pool shortcuts), its last three stages through
    # a hybrid encoder (a 1 x 1 projection to 256, one attention-and-FFN layer (8 heads, FFN 1024) on the stride-32
    # map, a CSP-RepVGG top-down and bottom-up fusion with hidden expansion 0.5), the top 300 of the encoder's
    # per-pixel class scores as queries, 3 decoder layers of self-attention and multi-scale deformable attention
    # (grid_sample over 3 levels, 4 points per head), 80 classes
    backbone = RTDetrResNetConfig(embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2],
                                  layer_type="basic", hidden_act="relu", downsample_in_first_stage=False,
                                  downsample_in_bottleneck=False, out_features=["stage2", "stage3", "stage4"])
    config = RTDetrConfig(backbone_config=backbone, encoder_in_channels=[128, 256, 512], feat_strides=[8, 16, 32],
                          encoder_hidden_dim=256, encoder_ffn_dim=1024, encoder_layers=1, hidden_expansion=0.5,
                          decoder_layers=3, num_queries=300, num_labels=80, use_pretrained_backbone=False,
                          use_timm_backbone=False)
    torch.manual_seed(0)
    return RTDetrForObjectDetection(config).eval()


def aimv2_large_vision() -> nn.Module:
    from transformers import Aimv2VisionConfig, Aimv2VisionModel

    # apple/aimv2-large-patch14-224's config (Fini et al., "Multimodal Autoregressive Pre-training of Large Vision
    # Encoders", CVPR 2025): 14 x 14 patches of a 224 x 224 image (256 tokens, no class token, RMSNorm after the patch
    # conv, sine-cosine positions), 24 pre-RMSNorm layers at 1024 with 8 heads of 128 (no q, k, v bias) and a SwiGLU
    # MLP of 2816, a final RMSNorm and the attention-pooling head
    config = Aimv2VisionConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=24, num_attention_heads=8,
                               num_channels=3, image_size=224, patch_size=14, rms_norm_eps=1e-5, qkv_bias=False,
                               mlp_bias=False, hidden_act="silu", use_head=True)
    torch.manual_seed(0)
    return Aimv2VisionModel(config).eval()


def roformer_chinese_base() -> nn.Module:
    from transformers import RoFormerConfig, RoFormerModel

    # junnyu/roformer_chinese_base's config (Su et al., "RoFormer: Enhanced Transformer with Rotary Position
    # Embedding", 2021): BERT-base's shape (12 post-LayerNorm layers at 768, 12 heads, FFN 3072 with GELU, vocabulary
    # 50,000) with no learned positions: sinusoidal rotary embeddings (1,536 positions) rotate q and k in every layer
    config = RoFormerConfig(vocab_size=50000, embedding_size=768, hidden_size=768, num_hidden_layers=12,
                            num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
                            max_position_embeddings=1536, type_vocab_size=2, layer_norm_eps=1e-12, rotary_value=False)
    torch.manual_seed(0)
    return RoFormerModel(config).eval()


def opt_350m() -> nn.Module:
    from transformers import OPTConfig, OPTForCausalLM

    # facebook/opt-350m's config (Zhang et al., "OPT: Open Pre-trained Transformer Language Models", 2022): 24
    # post-LayerNorm decoder layers at 1024 (the only OPT that normalizes after each block), 16 heads, FFN 4096 with
    # ReLU; tokens embedded at 512 and projected up to 1024 (and down again before the tied LM head over 50,272),
    # learned positions (2,048); 128 tokens, no cache
    config = OPTConfig(vocab_size=50272, hidden_size=1024, num_hidden_layers=24, ffn_dim=4096, num_attention_heads=16,
                       max_position_embeddings=2048, do_layer_norm_before=False, word_embed_proj_dim=512,
                       activation_function="relu", enable_bias=True, dropout=0.1, use_cache=False)
    torch.manual_seed(0)
    return OPTForCausalLM(config).eval()


def wavlm_base_plus() -> nn.Module:
    from transformers import WavLMConfig, WavLMModel

    # microsoft/wavlm-base-plus's config (Chen et al., "WavLM: Large-Scale Self-Supervised Pre-Training for Full Stack
    # Speech Processing", 2022): wav2vec 2.0's conv feature encoder (7 convs of 512, strides 5-2-2-2-2-2-2, group norm
    # after the first, GELU, no bias: 320 samples a frame) and a convolutional position embedding (kernel 128 in 16
    # groups); 12 post-LayerNorm layers at 768, 12 heads, FFN 3072, whose attention adds a gated relative position
    # bias (320 log-spaced buckets up to 800 frames, learned per head in the first layer and shared, gated per query
    # by a sigmoid of its projection); 16,000 samples (1 s at 16 kHz, 49 frames)
    config = WavLMConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                         hidden_act="gelu", feat_extract_norm="group", conv_bias=False, do_stable_layer_norm=False,
                         num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16, num_buckets=320,
                         max_bucket_distance=800, layerdrop=0.1)
    torch.manual_seed(0)
    return WavLMModel(config).eval()
