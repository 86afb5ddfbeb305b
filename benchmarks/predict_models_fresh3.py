"""A fourth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (fourteenth session) before
any of it was measured: none is a calibration net, and none is in the first three sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small).
Each is a factory ``NAME()`` with random weights in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh3.py:NAME``. The three CNNs are written here; the other five come from
``transformers`` itself (random weights from a config at the published checkpoint's shape, its values written out
below): the code users bring. Parameter counts are sum(numel) of the built module.

* inception_v3_ish: Inception-v3 as torchvision writes it (stem to 35 x 35 x 192; Inception A x 3, B, C x 4 with
  1 x 7 / 7 x 1 factorised convs, D, E x 2 with 1 x 3 and 3 x 1 side by side; BN eps 0.001 + ReLU, average- and
  max-pool branches joined by concat; 1000 classes), 299 x 299, the auxiliary head left out; 23,834,568
  parameters, 5.71 GMACs (torchvision's without its aux head: 23,834,568 and 5.71 G).
* r3d_18_ish: torchvision's video R3D-18 (Conv3d 3 x 7 x 7 stem at stride 1, 2, 2; four stages of two BasicBlocks
  of 3 x 3 x 3 Conv3d + BatchNorm3d, 64-128-256-512, stages 2-4 halving time and space; Kinetics' 400 classes),
  16 frames of 112 x 112; 33,371,472 parameters, 40.70 GMACs (torchvision: 33.4 M, "40.70 GFLOPS").
* csp_darknet_ish: YOLOv5s's (v6+) CSP-Darknet53 backbone at width 0.5, depth 0.33 (6 x 6 stem, Conv + BN + SiLU,
  C3 blocks of 1-2-3-1 bottlenecks, SPPF), 256 x 256, returning the three scales the neck reads (strides 8, 16,
  32); 4,171,456 parameters (yolov5s's layers 0-9 sum to the same).
* segformer_b0: transformers SegformerForSemanticSegmentation at nvidia/segformer-b0-finetuned-ade-512-512's config
  (MiT-b0: widths 32-64-160-256, depths 2-2-2-2, heads 1-2-5-8, spatial reduction 8-4-2-1; all-MLP decoder of 256,
  ADE20K's 150 classes), pixel_values 512 x 512, logits at a quarter of that; 3,752,694 parameters, 8.39 GMACs
  (the paper's 3.8 M and "8.4 GFLOPs").
* mobilevit_small: transformers MobileViTForImageClassification at apple/mobilevit-small's config (MobileNetV2
  blocks and three MobileViT blocks of widths 144-192-240, patch 2, 4 heads), pixel_values 256 x 256; 5,578,632
  parameters, 2.00 GMACs (the paper's 5.6 M, timm's 2.0 GMACs). MobileViT has no SDPA path in transformers.
* smollm_135m: transformers LlamaForCausalLM at HuggingFaceTB/SmolLM-135M's config (30 layers, hidden 576, 9 heads,
  3 KV heads, MLP 1536, vocabulary 49,152, tied embeddings), 128 tokens, no cache; 134,515,008 parameters.
* electra_small: transformers ElectraForSequenceClassification at google/electra-small-discriminator's config
  (embeddings 128 projected to hidden 256, 12 layers, 4 heads, MLP 1024), a two-label head, 128 tokens;
  13,549,314 parameters (13,483,008 of them the discriminator's body).
* opt_125m: transformers OPTForCausalLM at facebook/opt-125m's config (12 layers, hidden 768, 12 heads, MLP 3072
  with ReLU, learned positions, vocabulary 50,272, tied head), 128 tokens, no cache; 125,239,296 parameters.

All eight build, run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64; SegFormer's
bilinear upsampling needed the PyTorch counter's linear-resize formula, the one ONNX's Resize already had) and
export to ONNX by modelcost's own path (bench/export.py, opset 17, dynamic batch) into files ONNX Runtime's CPU
provider runs. smollm_135m leaves the TorchScript exporter (no ONNX for aten::diff) for the torch.export one, and
so does opt_125m (its TorchScript file took transformers' logits_to_keep=0 as an input of its own): 139 s and 36 s
on the 2-core development machine (one torch thread), against 1 to 10 s for the rest.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _BasicConv(nn.Sequential):
    """Conv (no bias) + BatchNorm (eps 0.001) + ReLU: torchvision's Inception BasicConv2d."""

    def __init__(self, cin: int, cout: int, kernel: int | tuple[int, int], stride: int = 1,
                 padding: int | tuple[int, int] = 0) -> None:
        super().__init__(nn.Conv2d(cin, cout, kernel, stride, padding, bias=False), nn.BatchNorm2d(cout, eps=0.001),
                         nn.ReLU(inplace=True))


def _seven(cin: int, cout: int, vertical: bool) -> _BasicConv:
    """One half of a factorised 7 x 7: a 7 x 1 (vertical) or 1 x 7 conv."""
    return _BasicConv(cin, cout, (7, 1) if vertical else (1, 7), padding=(3, 0) if vertical else (0, 3))


class _InceptionA(nn.Module):
    def __init__(self, cin: int, pool_features: int) -> None:
        super().__init__()
        self.b1 = _BasicConv(cin, 64, 1)
        self.b5 = nn.Sequential(_BasicConv(cin, 48, 1), _BasicConv(48, 64, 5, padding=2))
        self.b3 = nn.Sequential(_BasicConv(cin, 64, 1), _BasicConv(64, 96, 3, padding=1),
                                _BasicConv(96, 96, 3, padding=1))
        self.pool = _BasicConv(cin, pool_features, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pooled = self.pool(F.avg_pool2d(x, 3, 1, 1))
        return torch.cat((self.b1(x), self.b5(x), self.b3(x), pooled), 1)


class _InceptionB(nn.Module):  # grid reduction 35 -> 17
    def __init__(self, cin: int) -> None:
        super().__init__()
        self.b3 = _BasicConv(cin, 384, 3, 2)
        self.b3dbl = nn.Sequential(_BasicConv(cin, 64, 1), _BasicConv(64, 96, 3, padding=1),
                                   _BasicConv(96, 96, 3, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.b3(x), self.b3dbl(x), F.max_pool2d(x, 3, 2)), 1)


class _InceptionC(nn.Module):  # the factorised 7 x 7 block at 17 x 17
    def __init__(self, cin: int, c7: int) -> None:
        super().__init__()
        self.b1 = _BasicConv(cin, 192, 1)
        self.b7 = nn.Sequential(_BasicConv(cin, c7, 1), _seven(c7, c7, False), _seven(c7, 192, True))
        self.b7dbl = nn.Sequential(_BasicConv(cin, c7, 1), _seven(c7, c7, True), _seven(c7, c7, False),
                                   _seven(c7, c7, True), _seven(c7, 192, False))
        self.pool = _BasicConv(cin, 192, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pooled = self.pool(F.avg_pool2d(x, 3, 1, 1))
        return torch.cat((self.b1(x), self.b7(x), self.b7dbl(x), pooled), 1)


class _InceptionD(nn.Module):  # grid reduction 17 -> 8
    def __init__(self, cin: int) -> None:
        super().__init__()
        self.b3 = nn.Sequential(_BasicConv(cin, 192, 1), _BasicConv(192, 320, 3, 2))
        self.b7x3 = nn.Sequential(_BasicConv(cin, 192, 1), _seven(192, 192, False), _seven(192, 192, True),
                                  _BasicConv(192, 192, 3, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.b3(x), self.b7x3(x), F.max_pool2d(x, 3, 2)), 1)


class _InceptionE(nn.Module):  # the expanded-filter block at 8 x 8: 1 x 3 and 3 x 1 side by side
    def __init__(self, cin: int) -> None:
        super().__init__()
        self.b1 = _BasicConv(cin, 320, 1)
        self.b3_1 = _BasicConv(cin, 384, 1)
        self.b3_2a = _BasicConv(384, 384, (1, 3), padding=(0, 1))
        self.b3_2b = _BasicConv(384, 384, (3, 1), padding=(1, 0))
        self.b3dbl_1 = nn.Sequential(_BasicConv(cin, 448, 1), _BasicConv(448, 384, 3, padding=1))
        self.b3dbl_3a = _BasicConv(384, 384, (1, 3), padding=(0, 1))
        self.b3dbl_3b = _BasicConv(384, 384, (3, 1), padding=(1, 0))
        self.pool = _BasicConv(cin, 192, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y3 = self.b3_1(x)
        y3dbl = self.b3dbl_1(x)
        return torch.cat((self.b1(x), self.b3_2a(y3), self.b3_2b(y3), self.b3dbl_3a(y3dbl), self.b3dbl_3b(y3dbl),
                          self.pool(F.avg_pool2d(x, 3, 1, 1))), 1)


def inception_v3_ish() -> nn.Module:
    stem = [_BasicConv(3, 32, 3, 2), _BasicConv(32, 32, 3), _BasicConv(32, 64, 3, padding=1), nn.MaxPool2d(3, 2),
            _BasicConv(64, 80, 1), _BasicConv(80, 192, 3), nn.MaxPool2d(3, 2)]  # 299 -> 35 x 35 x 192
    blocks = [_InceptionA(192, 32), _InceptionA(256, 64), _InceptionA(288, 64), _InceptionB(288),
              _InceptionC(768, 128), _InceptionC(768, 160), _InceptionC(768, 160), _InceptionC(768, 192),
              _InceptionD(768), _InceptionE(1280), _InceptionE(2048)]
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.5), nn.Linear(2048, 1000)]
    return nn.Sequential(*stem, *blocks, *head).eval()


def _conv_bn3d(cin: int, cout: int, kernel: tuple[int, int, int], stride: tuple[int, int, int],
               padding: tuple[int, int, int]) -> nn.Sequential:
    return nn.Sequential(nn.Conv3d(cin, cout, kernel, stride, padding, bias=False), nn.BatchNorm3d(cout))


class _BasicBlock3d(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = _conv_bn3d(cin, cout, (3, 3, 3), (stride,) * 3, (1, 1, 1))
        self.conv2 = _conv_bn3d(cout, cout, (3, 3, 3), (1, 1, 1), (1, 1, 1))
        self.down = _conv_bn3d(cin, cout, (1, 1, 1), (stride,) * 3, (0, 0, 0)) if stride != 1 or cin != cout \
            else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.conv2(F.relu(self.conv1(x))) + self.down(x))


def r3d_18_ish() -> nn.Module:
    # torchvision's video r3d_18 (Kinetics-400 head): the stem keeps time (stride 1, 2, 2), no max pool; stages
    # 2-4 halve time and space alike
    layers: list[nn.Module] = [_conv_bn3d(3, 64, (3, 7, 7), (1, 2, 2), (1, 3, 3)), nn.ReLU(inplace=True)]
    cin = 64
    for width, stride in zip((64, 128, 256, 512), (1, 2, 2, 2), strict=True):
        layers += [_BasicBlock3d(cin, width, stride), _BasicBlock3d(width, width, 1)]
        cin = width
    layers += [nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(512, 400)]
    return nn.Sequential(*layers).eval()


class _ConvSiLU(nn.Sequential):
    """YOLOv5's Conv: conv (no bias, padding k // 2 unless given) + BatchNorm (eps 0.001) + SiLU."""

    def __init__(self, cin: int, cout: int, kernel: int = 1, stride: int = 1, padding: int | None = None) -> None:
        super().__init__(nn.Conv2d(cin, cout, kernel, stride, kernel // 2 if padding is None else padding, bias=False),
                         nn.BatchNorm2d(cout, eps=0.001), nn.SiLU(inplace=True))


class _Bottleneck(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.cv1 = _ConvSiLU(channels, channels, 1)
        self.cv2 = _ConvSiLU(channels, channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.cv2(self.cv1(x))


class _C3(nn.Module):
    """CSP bottleneck with 3 convs: half the channels through n bottlenecks, half straight across, then joined."""

    def __init__(self, cin: int, cout: int, n: int) -> None:
        super().__init__()
        hidden = cout // 2
        self.cv1 = _ConvSiLU(cin, hidden)
        self.cv2 = _ConvSiLU(cin, hidden)
        self.m = nn.Sequential(*(_Bottleneck(hidden) for _ in range(n)))
        self.cv3 = _ConvSiLU(2 * hidden, cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class _SPPF(nn.Module):
    """Spatial pyramid pooling, fast: three 5 x 5 max pools in a row, all four maps joined."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.cv1 = _ConvSiLU(cin, cin // 2)
        self.pool = nn.MaxPool2d(5, 1, 2)
        self.cv2 = _ConvSiLU(cin // 2 * 4, cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.cv2(torch.cat((x, y1, y2, self.pool(y2)), 1))


class _CSPDarknet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        # yolov5s.yaml (v6+) backbone at width 0.5, depth 0.33: C3 repeats 3-6-9-3 become 1-2-3-1
        self.p2 = nn.Sequential(_ConvSiLU(3, 32, 6, 2, 2), _ConvSiLU(32, 64, 3, 2), _C3(64, 64, 1))  # 6 x 6 stem
        self.p3 = nn.Sequential(_ConvSiLU(64, 128, 3, 2), _C3(128, 128, 2))
        self.p4 = nn.Sequential(_ConvSiLU(128, 256, 3, 2), _C3(256, 256, 3))
        self.p5 = nn.Sequential(_ConvSiLU(256, 512, 3, 2), _C3(512, 512, 1), _SPPF(512, 512))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        p3 = self.p3(self.p2(x))
        p4 = self.p4(p3)
        return p3, p4, self.p5(p4)  # strides 8, 16, 32: what the detection neck reads


def csp_darknet_ish() -> nn.Module:
    return _CSPDarknet().eval()


def segformer_b0() -> nn.Module:
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    # nvidia/segformer-b0-finetuned-ade-512-512's config (the MiT-b0 encoder of nvidia/mit-b0, ADE20K's 150 classes)
    config = SegformerConfig(num_channels=3, num_encoder_blocks=4, depths=[2, 2, 2, 2], sr_ratios=[8, 4, 2, 1],
                             hidden_sizes=[32, 64, 160, 256], patch_sizes=[7, 3, 3, 3], strides=[4, 2, 2, 2],
                             num_attention_heads=[1, 2, 5, 8], mlp_ratios=[4, 4, 4, 4], hidden_act="gelu",
                             layer_norm_eps=1e-6, decoder_hidden_size=256, num_labels=150, reshape_last_stage=True,
                             attn_implementation="sdpa")
    return SegformerForSemanticSegmentation(config).eval()


def mobilevit_small() -> nn.Module:
    from transformers import MobileViTConfig, MobileViTForImageClassification

    # apple/mobilevit-small's config (ImageNet-1k head)
    config = MobileViTConfig(num_channels=3, image_size=256, patch_size=2, hidden_sizes=[144, 192, 240],
                             neck_hidden_sizes=[16, 32, 64, 96, 128, 160, 640], num_attention_heads=4, mlp_ratio=2.0,
                             expand_ratio=4.0, hidden_act="silu", conv_kernel_size=3, output_stride=32,
                             layer_norm_eps=1e-5, qkv_bias=True, num_labels=1000)
    return MobileViTForImageClassification(config).eval()


def smollm_135m() -> nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    # HuggingFaceTB/SmolLM-135M's config
    config = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                         num_attention_heads=9, num_key_value_heads=3, hidden_act="silu", max_position_embeddings=2048,
                         rms_norm_eps=1e-5, rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                         attention_bias=False, mlp_bias=False, tie_word_embeddings=True, bos_token_id=0,
                         eos_token_id=0, use_cache=False, attn_implementation="sdpa")
    return LlamaForCausalLM(config).eval()


def electra_small() -> nn.Module:
    from transformers import ElectraConfig, ElectraForSequenceClassification

    # google/electra-small-discriminator's config, with a two-label sequence-classification head
    config = ElectraConfig(vocab_size=30522, embedding_size=128, hidden_size=256, num_hidden_layers=12,
                           num_attention_heads=4, intermediate_size=1024, hidden_act="gelu",
                           max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0,
                           num_labels=2, use_cache=False, attn_implementation="sdpa")
    return ElectraForSequenceClassification(config).eval()


def opt_125m() -> nn.Module:
    from transformers import OPTConfig, OPTForCausalLM

    # facebook/opt-125m's config
    config = OPTConfig(vocab_size=50272, hidden_size=768, num_hidden_layers=12, ffn_dim=3072, num_attention_heads=12,
                       max_position_embeddings=2048, do_layer_norm_before=True, word_embed_proj_dim=768,
                       activation_function="relu", enable_bias=True, layer_norm_elementwise_affine=True,
                       pad_token_id=1, bos_token_id=2, eos_token_id=2, tie_word_embeddings=True, use_cache=False,
                       attn_implementation="sdpa")
    return OPTForCausalLM(config).eval()
