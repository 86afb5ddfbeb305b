"""A third fresh held-out set for benchmarks/predict_validate.py (issue 28), written (thirteenth session) before
any of it was measured: none is a calibration net, and none is in the first two sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base). Each is a factory
``NAME()`` with random weights in eval mode that ``modelcost`` loads as ``benchmarks/predict_models_fresh2.py:NAME``.
The three CNNs are written here; the other five come from ``transformers`` itself (random weights from a config at
the published checkpoint's shape): the code users bring. Parameter counts are sum(numel) of the built module.

* regnety_016_ish: RegNetY-1.6GF (pycls / timm regnety_016: stem 32, widths 48-120-336-888, depths 2-6-17-2,
  group width 24, bottleneck ratio 1, squeeze-excite at 0.25 of the block's input width, BN + ReLU), 224 x 224;
  11,202,430 parameters.
* shufflenet_v2_ish: ShuffleNetV2 x1.0 (stem 24, stages 116-232-464 of 4-8-4 blocks, conv5 1024; channel split,
  channel shuffle by view / transpose / reshape, depthwise 3x3), 224 x 224; 2,278,604 parameters.
* mobilenetv3_large_ish: MobileNetV3-Large (the published 15-block table, hardswish, squeeze-excite with
  hardsigmoid, last conv 960, classifier 1280), 224 x 224; 5,483,032 parameters.
* swin_tiny: transformers SwinModel at microsoft/swin-tiny-patch4-window7-224's config (patch 4, embed 96, depths
  2-2-6-2, heads 3-6-12-24, window 7, pooled output), pixel_values 224 x 224; 27,519,354 parameters.
* wav2vec2_base: transformers Wav2Vec2Model at facebook/wav2vec2-base's config (7 conv feature layers of 512 with
  group norm, 12 post-LN layers, hidden 768, 12 heads, MLP 3072, positional conv kernel 128 in 16 groups), masking
  off (mask_time_prob 0: no masked_spec_embed, eval deterministic), the positional conv's weight norm folded into
  its weight as for inference (the norm, recomputed every forward, is an op the static count has no formula for),
  input_values of 16,000 samples (1 s of audio); 94,370,816 parameters.
* pythia_160m: transformers GPTNeoXForCausalLM at EleutherAI/pythia-160m's config (12 layers, hidden 768, 12
  heads, MLP 3072, rotary on 25 % of each head, parallel residual, vocabulary 50,304, untied head), 128 tokens, no
  cache; 162,322,944 parameters.
* gemma3_270m: transformers Gemma3ForCausalLM (text only, Gemma3TextConfig) at google/gemma-3-270m's config (18
  layers, hidden 640, 4 heads, 1 KV head, head dim 256, MLP 2048, vocabulary 262,144, sliding window 512 on five
  layers of six, tied embeddings), 128 tokens, no cache; 268,098,176 parameters.
* deberta_v3_small: transformers DebertaV2Model at microsoft/deberta-v3-small's config (6 layers, hidden 768, 12
  heads, MLP 3072, disentangled relative attention c2p + p2c with shared keys, position buckets 256, vocabulary
  128,100), 128 tokens; 141,304,320 parameters. DeBERTa has no SDPA path in transformers: its own attention runs.

All eight build, run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64) and export to ONNX
by modelcost's own path (bench/export.py, opset 17, dynamic batch) into files ONNX Runtime's CPU provider runs.
pythia_160m and gemma3_270m leave the TorchScript exporter (no ONNX for aten::diff, which transformers' mask code
calls) for the torch.export one: 30 s and 110 s on the 2-core development machine, against 1 to 13 s for the rest.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout))


class _RegNetYBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, group_width: int = 24, se_ratio: float = 0.25) -> None:
        super().__init__()
        se = int(round(cin * se_ratio))
        self.conv1 = nn.Sequential(_conv_bn(cin, cout, 1), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(_conv_bn(cout, cout, 3, stride, cout // group_width), nn.ReLU(inplace=True))
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cout, se, 1), nn.ReLU(inplace=True),
                                nn.Conv2d(se, cout, 1), nn.Sigmoid())
        self.conv3 = _conv_bn(cout, cout, 1)
        self.down = _conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv2(self.conv1(x))
        return F.relu(self.conv3(y * self.se(y)) + self.down(x))


def regnety_016_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2), nn.ReLU(inplace=True)]
    cin = 32
    for depth, width in zip((2, 6, 17, 2), (48, 120, 336, 888), strict=True):
        for j in range(depth):
            layers.append(_RegNetYBlock(cin, width, 1 if j else 2))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers).eval()


def _channel_shuffle(x: torch.Tensor, groups: int = 2) -> torch.Tensor:
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


class _ShuffleBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        half = cout // 2
        self.stride = stride
        self.branch1 = nn.Sequential(_conv_bn(cin, cin, 3, stride, cin), _conv_bn(cin, half, 1),
                                     nn.ReLU(inplace=True)) if stride > 1 else nn.Identity()
        self.branch2 = nn.Sequential(_conv_bn(cin if stride > 1 else half, half, 1), nn.ReLU(inplace=True),
                                     _conv_bn(half, half, 3, stride, half), _conv_bn(half, half, 1),
                                     nn.ReLU(inplace=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), 1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), 1)
        return _channel_shuffle(out)


class _GlobalMean(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean((2, 3))


def shufflenet_v2_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 24, 3, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 24
    for repeats, cout in zip((4, 8, 4), (116, 232, 464), strict=True):
        for j in range(repeats):
            layers.append(_ShuffleBlock(cin, cout, 1 if j else 2))
            cin = cout
    layers += [_conv_bn(cin, 1024, 1), nn.ReLU(inplace=True), _GlobalMean(), nn.Linear(1024, 1000)]
    return nn.Sequential(*layers).eval()


def _make_divisible(v: float, divisor: int = 8) -> int:
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


class _MobileV3Block(nn.Module):
    def __init__(self, cin: int, kernel: int, expand: int, cout: int, se: bool, hswish: bool, stride: int) -> None:
        super().__init__()
        act = nn.Hardswish if hswish else nn.ReLU
        self.expand = nn.Sequential(_conv_bn(cin, expand, 1), act()) if expand != cin else nn.Identity()
        self.dw = nn.Sequential(_conv_bn(expand, expand, kernel, stride, expand), act())
        squeeze = _make_divisible(expand // 4)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(expand, squeeze, 1), nn.ReLU(inplace=True),
                                nn.Conv2d(squeeze, expand, 1), nn.Hardsigmoid()) if se else None
        self.project = _conv_bn(expand, cout, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(self.expand(x))
        if self.se is not None:
            y = y * self.se(y)
        y = self.project(y)
        return x + y if self.residual else y


def mobilenetv3_large_ish() -> nn.Module:
    table = [(16, 3, 16, 16, False, False, 1), (16, 3, 64, 24, False, False, 2), (24, 3, 72, 24, False, False, 1),
             (24, 5, 72, 40, True, False, 2), (40, 5, 120, 40, True, False, 1), (40, 5, 120, 40, True, False, 1),
             (40, 3, 240, 80, False, True, 2), (80, 3, 200, 80, False, True, 1), (80, 3, 184, 80, False, True, 1),
             (80, 3, 184, 80, False, True, 1), (80, 3, 480, 112, True, True, 1), (112, 3, 672, 112, True, True, 1),
             (112, 5, 672, 160, True, True, 2), (160, 5, 960, 160, True, True, 1), (160, 5, 960, 160, True, True, 1)]
    # input channels, kernel, expanded channels, output channels, squeeze-excite, hardswish, stride
    layers: list[nn.Module] = [_conv_bn(3, 16, 3, 2), nn.Hardswish()]
    layers += [_MobileV3Block(*row) for row in table]
    layers += [_conv_bn(160, 960, 1), nn.Hardswish(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(960, 1280),
               nn.Hardswish(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers).eval()


def swin_tiny() -> nn.Module:
    from transformers import SwinConfig, SwinModel

    config = SwinConfig(image_size=224, patch_size=4, num_channels=3, embed_dim=96, depths=[2, 2, 6, 2],
                        num_heads=[3, 6, 12, 24], window_size=7, mlp_ratio=4.0, attn_implementation="sdpa")
    return SwinModel(config).eval()


def wav2vec2_base() -> nn.Module:
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    config = Wav2Vec2Config(vocab_size=32, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                            intermediate_size=3072, feat_extract_norm="group", do_stable_layer_norm=False,
                            conv_dim=(512,) * 7, conv_stride=(5, 2, 2, 2, 2, 2, 2), conv_kernel=(10, 3, 3, 3, 3, 2, 2),
                            conv_bias=False, num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16,
                            mask_time_prob=0.0, mask_feature_prob=0.0, attn_implementation="sdpa")
    model = Wav2Vec2Model(config).eval()
    conv = model.encoder.pos_conv_embed.conv  # weight norm folded into the weight, as for inference
    if parametrize.is_parametrized(conv, "weight"):
        parametrize.remove_parametrizations(conv, "weight", leave_parametrized=True)
    return model


def pythia_160m() -> nn.Module:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    config = GPTNeoXConfig(vocab_size=50304, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                           intermediate_size=3072, hidden_act="gelu", rotary_pct=0.25, rotary_emb_base=10000,
                           max_position_embeddings=2048, use_parallel_residual=True, tie_word_embeddings=False,
                           layer_norm_eps=1e-5, use_cache=False, attn_implementation="sdpa")
    return GPTNeoXForCausalLM(config).eval()


def gemma3_270m() -> nn.Module:
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(vocab_size=262144, hidden_size=640, intermediate_size=2048, num_hidden_layers=18,
                              num_attention_heads=4, num_key_value_heads=1, head_dim=256, max_position_embeddings=32768,
                              sliding_window=512, query_pre_attn_scalar=256, tie_word_embeddings=True,
                              rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                                               "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                              use_cache=False, attn_implementation="sdpa")
    return Gemma3ForCausalLM(config).eval()


def deberta_v3_small() -> nn.Module:
    from transformers import DebertaV2Config, DebertaV2Model

    config = DebertaV2Config(vocab_size=128100, hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
                             intermediate_size=3072, hidden_act="gelu", max_position_embeddings=512, type_vocab_size=0,
                             layer_norm_eps=1e-7, relative_attention=True, max_relative_positions=-1,
                             position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True,
                             pos_att_type=["p2c", "c2p"], position_biased_input=False, pad_token_id=0)
    return DebertaV2Model(config).eval()
