"""A fifth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (fifteenth session) before
any of it was measured: none is a calibration net, and none is in the first four sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small,
opt_125m). Each is a factory ``NAME()`` with random weights in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh4.py:NAME``. The three CNNs are written here; the other five come from
``transformers`` itself (random weights from a config at the published checkpoint's shape, its values written out
below): the code users bring. Parameter counts are sum(numel) of the built module.

* squeezenet1_1_ish: torchvision's SqueezeNet 1.1 (a 3 x 3 stride-2 stem of 64, eight Fire modules of a 1 x 1
  squeeze and 1 x 1 + 3 x 3 expands joined, ceil-mode max pools, a 1 x 1 conv classifier averaged over space; 1000
  classes), 224 x 224; 1,235,496 parameters, 0.35 GMACs (torchvision: 1,235,496 and "0.35 GFLOPS").
* ghostnet_ish: GhostNet 1.0x (Han et al., CVPR 2020, as huawei-noah's ghostnet.py writes it: ghost modules of a
  1 x 1 conv making half the channels and a cheap 3 x 3 depthwise conv the other half, 16 ghost bottlenecks with
  depthwise stride-2 convs, SE with a hard-sigmoid gate in 7 of them, a 960 -> 1280 head), 224 x 224; 5,182,508
  parameters, 0.141 GMACs (the paper's 5.2 M and 141 MFLOPs; timm's ghostnet_100: 5.18 M).
* edsr_baseline_ish: EDSR-baseline x2 (Lim et al. 2017: a 64-channel head, 16 residual blocks of conv-ReLU-conv
  without BatchNorm, a global skip, a conv to 256 channels and PixelShuffle(2), a conv to RGB; DIV2K's mean shift
  as a fixed buffer), 3 x 128 x 128 in, 3 x 256 x 256 out; 1,369,859 parameters (the paper's 1.37 M), 22.49 GMACs.
  PixelShuffle counts as a data move (no arithmetic, its bytes in memory), like ONNX's DepthToSpace.
* dinov2_small: transformers Dinov2Model at facebook/dinov2-small's config (ViT-S/14: hidden 384, 12 layers, 6
  heads, MLP 1536, layerscale; position embeddings for 518 x 518 resampled bicubically to the input's 16 x 16
  patches, as the checkpoint runs at 224), pixel_values 224 x 224 (257 tokens); 22,056,576 parameters, 6.12 GMACs.
* convnextv2_tiny: transformers ConvNextV2ForImageClassification at facebook/convnextv2-tiny-1k-224's config
  (depths 3-3-9-3, widths 96-192-384-768, GRN in every block), pixel_values 224 x 224; 28,635,496 parameters,
  4.46 GMACs (the paper's 28.6 M and 4.47 GFLOPs).
* albert_base: transformers AlbertForSequenceClassification at albert-base-v2's config (embeddings 128 projected to
  768, one layer shared by all 12, 12 heads, MLP 3072), a two-label head, 128 tokens; 11,685,122 parameters
  (11,683,584 of them the body and pooler: the paper's 12 M), 11.19 GMACs.
* gpt_neo_125m: transformers GPTNeoForCausalLM at EleutherAI/gpt-neo-125m's config (12 layers, hidden 768, 12 heads,
  global and local (window 256) attention alternating, learned positions, vocabulary 50,257, tied head), 128 tokens,
  no cache; 125,198,592 parameters, 16.11 GMACs. It stands in for BLOOM-560M (ALiBi, vocabulary 250,880), whose
  ONNX export took 167 s here (the TorchScript exporter failed, torch.export's took the time), over this set's
  150 s limit.
* clip_text: transformers CLIPTextModel at openai/clip-vit-base-patch32's text tower (12 layers, hidden 512, 8
  heads, MLP 2048 with quick-GELU, causal mask, pooled at the end token), 77 tokens; 63,165,952 parameters,
  2.98 GMACs.

All eight build and run at batch 1 on the CPU, and export to ONNX by modelcost's own path (bench/export.py, opset
17, dynamic batch) into files ONNX Runtime's CPU provider runs: 0.6 to 8 s each on the 2-core development
machine (one torch thread) by the TorchScript exporter, but gpt_neo_125m by the torch.export one (the TorchScript
file took transformers' logits_to_keep as an input of its own, as opt_125m's did) in 33 s. All eight count completely
(static analysis at batch 1 and 64). dinov2_small's bicubic resize of the position embeddings
(aten.upsample_bicubic2d; in its ONNX file a cubic Resize) had no formula in either counter when the set was
written; both counters got one (formulas.cubic_resize_flops) before the set was measured: a 1 x 384 x 37 x 37 ->
16 x 16 resample, 3.44 MFLOPs whatever the batch.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class _Fire(nn.Module):
    """SqueezeNet's Fire module: a 1 x 1 squeeze, then 1 x 1 and 3 x 3 expands side by side, joined."""

    def __init__(self, cin: int, squeeze: int, expand: int) -> None:
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1x1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3x3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.squeeze(x))
        return torch.cat((F.relu(self.expand1x1(x)), F.relu(self.expand3x3(x))), 1)


def squeezenet1_1_ish() -> nn.Module:
    # torchvision's squeezenet1_1: a 3 x 3 stride-2 stem, max pools (ceil mode) after it and after Fires 2 and 4
    features = [nn.Conv2d(3, 64, 3, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, ceil_mode=True), _Fire(64, 16, 64),
                _Fire(128, 16, 64),
                nn.MaxPool2d(3, 2, ceil_mode=True), _Fire(128, 32, 128), _Fire(256, 32, 128),
                nn.MaxPool2d(3, 2, ceil_mode=True), _Fire(256, 48, 192), _Fire(384, 48, 192), _Fire(384, 64, 256),
                _Fire(512, 64, 256)]
    head = [nn.Dropout(0.5), nn.Conv2d(512, 1000, 1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*features, *head).eval()


def _divisible(v: float, divisor: int = 4) -> int:
    """GhostNet's (and MobileNet's) _make_divisible: round to the divisor, never more than 10% down."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, relu: bool = False) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU(inplace=True)) if relu else nn.Sequential(*layers)


class _Ghost(nn.Module):
    """A ghost module: a 1 x 1 conv makes half the channels, a cheap 3 x 3 depthwise conv of them the other half."""

    def __init__(self, cin: int, cout: int, relu: bool) -> None:
        super().__init__()
        self.cout = cout
        init = math.ceil(cout / 2)
        self.primary = _conv_bn(cin, init, 1, relu=relu)
        self.cheap = _conv_bn(init, init, 3, groups=init, relu=relu)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.primary(x)
        return torch.cat((x1, self.cheap(x1)), 1)[:, :self.cout]


class _SqueezeExcite(nn.Module):
    """GhostNet's SE: squeeze to a quarter (divisible by 4), ReLU, expand, hard-sigmoid gate."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        reduced = _divisible(channels * 0.25)
        self.reduce = nn.Conv2d(channels, reduced, 1)
        self.expand = nn.Conv2d(reduced, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * F.hardsigmoid(self.expand(F.relu(self.reduce(F.adaptive_avg_pool2d(x, 1)))))


class _GhostBottleneck(nn.Module):
    def __init__(self, cin: int, mid: int, cout: int, kernel: int, stride: int, se: bool) -> None:
        super().__init__()
        self.ghost1 = _Ghost(cin, mid, relu=True)
        self.dw = _conv_bn(mid, mid, kernel, stride, groups=mid) if stride > 1 else nn.Identity()
        self.se = _SqueezeExcite(mid) if se else nn.Identity()
        self.ghost2 = _Ghost(mid, cout, relu=False)
        self.shortcut = nn.Identity() if cin == cout and stride == 1 else \
            nn.Sequential(_conv_bn(cin, cin, kernel, stride, groups=cin), _conv_bn(cin, cout, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ghost2(self.se(self.dw(self.ghost1(x)))) + self.shortcut(x)


# GhostNet 1.0x (Han et al., CVPR 2020; huawei-noah's ghostnet.py): kernel, expansion, out, SE, stride
_GHOST_CFG = ((3, 16, 16, 0, 1), (3, 48, 24, 0, 2), (3, 72, 24, 0, 1), (5, 72, 40, 1, 2), (5, 120, 40, 1, 1),
              (3, 240, 80, 0, 2), (3, 200, 80, 0, 1), (3, 184, 80, 0, 1), (3, 184, 80, 0, 1), (3, 480, 112, 1, 1),
              (3, 672, 112, 1, 1), (5, 672, 160, 1, 2), (5, 960, 160, 0, 1), (5, 960, 160, 1, 1),
              (5, 960, 160, 0, 1), (5, 960, 160, 1, 1))


def ghostnet_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 16, 3, 2, relu=True)]
    cin = 16
    for kernel, mid, cout, se, stride in _GHOST_CFG:
        layers.append(_GhostBottleneck(cin, _divisible(mid), _divisible(cout), kernel, stride, bool(se)))
        cin = _divisible(cout)
    head = [_conv_bn(cin, 960, 1, relu=True), nn.AdaptiveAvgPool2d(1), nn.Conv2d(960, 1280, 1),
            nn.ReLU(inplace=True), nn.Flatten(), nn.Dropout(0.2), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers, *head).eval()


class _ResBlock(nn.Module):
    """EDSR's residual block: conv, ReLU, conv, no BatchNorm, residual scale 1."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(F.relu(self.conv1(x)))


class _EDSR(nn.Module):
    def __init__(self, blocks: int = 16, channels: int = 64, scale: int = 2) -> None:
        super().__init__()
        # EDSR's MeanShift: DIV2K's RGB mean (std 1) on a 0-255 range, a fixed buffer (no parameters)
        self.register_buffer("rgb_mean", 255.0 * torch.tensor([0.4488, 0.4371, 0.4040]).view(1, 3, 1, 1))
        self.head = nn.Conv2d(3, channels, 3, padding=1)
        self.body = nn.Sequential(*(_ResBlock(channels) for _ in range(blocks)),
                                  nn.Conv2d(channels, channels, 3, padding=1))
        self.upsample = nn.Sequential(nn.Conv2d(channels, channels * scale * scale, 3, padding=1),
                                      nn.PixelShuffle(scale))
        self.tail = nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.head(x - self.rgb_mean)
        x = x + self.body(x)
        return self.tail(self.upsample(x)) + self.rgb_mean


def edsr_baseline_ish() -> nn.Module:
    return _EDSR().eval()


def dinov2_small() -> nn.Module:
    from transformers import Dinov2Config, Dinov2Model

    # facebook/dinov2-small's config: position embeddings for 518 x 518 (37 x 37 patches), resampled to the input
    config = Dinov2Config(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, mlp_ratio=4,
                          hidden_act="gelu", layer_norm_eps=1e-6, image_size=518, patch_size=14, num_channels=3,
                          qkv_bias=True, layerscale_value=1.0, drop_path_rate=0.0, use_swiglu_ffn=False,
                          attn_implementation="sdpa")
    return Dinov2Model(config).eval()


def convnextv2_tiny() -> nn.Module:
    from transformers import ConvNextV2Config, ConvNextV2ForImageClassification

    # facebook/convnextv2-tiny-1k-224's config (ImageNet-1k head)
    config = ConvNextV2Config(num_channels=3, patch_size=4, num_stages=4, hidden_sizes=[96, 192, 384, 768],
                              depths=[3, 3, 9, 3], hidden_act="gelu", layer_norm_eps=1e-12, drop_path_rate=0.0,
                              image_size=224, num_labels=1000)
    return ConvNextV2ForImageClassification(config).eval()


def albert_base() -> nn.Module:
    from transformers import AlbertConfig, AlbertForSequenceClassification

    # albert-base-v2's config (one shared layer group, embeddings 128 projected to 768), a two-label head
    config = AlbertConfig(vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12,
                          num_hidden_groups=1, num_attention_heads=12, intermediate_size=3072, inner_group_num=1,
                          hidden_act="gelu_new", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                          max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12,
                          classifier_dropout_prob=0.1, pad_token_id=0, bos_token_id=2, eos_token_id=3, num_labels=2,
                          attn_implementation="sdpa")
    return AlbertForSequenceClassification(config).eval()


def gpt_neo_125m() -> nn.Module:
    from transformers import GPTNeoConfig, GPTNeoForCausalLM

    # EleutherAI/gpt-neo-125m's config: global and local (window 256) attention layers alternating; GPT-Neo has no
    # SDPA path in transformers (its eager attention, unscaled q.k in fp32)
    config = GPTNeoConfig(vocab_size=50257, hidden_size=768, num_layers=12, num_heads=12,
                          attention_types=[[["global", "local"], 6]], window_size=256, intermediate_size=None,
                          activation_function="gelu_new", max_position_embeddings=2048, layer_norm_epsilon=1e-5,
                          resid_dropout=0.0, embed_dropout=0.0, attention_dropout=0.0, bos_token_id=50256,
                          eos_token_id=50256, tie_word_embeddings=True, use_cache=False)
    return GPTNeoForCausalLM(config).eval()


def clip_text() -> nn.Module:
    from transformers import CLIPTextConfig, CLIPTextModel

    # openai/clip-vit-base-patch32's text tower (its text_config, eos_token_id 2 and all: pooled at argmax(ids))
    config = CLIPTextConfig(vocab_size=49408, hidden_size=512, intermediate_size=2048, projection_dim=512,
                            num_hidden_layers=12, num_attention_heads=8, max_position_embeddings=77,
                            hidden_act="quick_gelu", layer_norm_eps=1e-5, attention_dropout=0.0, pad_token_id=1,
                            bos_token_id=0, eos_token_id=2, attn_implementation="sdpa")
    return CLIPTextModel(config).eval()
