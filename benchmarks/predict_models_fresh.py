"""A second, fresh held-out set for benchmarks/predict_validate.py (issue 28, twelfth session), chosen and
written before any of them was measured: none is a calibration net, none was in the first two validations, and
the predictor's form and prices were fixed before they ran (the eleventh session's code at 2b756bd, plus the
grouped-conv classes that wait for their first calibration). Each is a factory ``NAME()`` with random weights
that ``modelcost`` loads as ``benchmarks/predict_models_fresh.py:NAME``. The two decoders and the encoder come
from ``transformers`` itself (random weights from a config): the code users bring.

* resnext50_ish: ResNeXt-50 32x4d (bottlenecks whose 3x3 conv has 32 groups; depths 3-4-6-3), 224 x 224.
* vgg16_ish: VGG-16 with batch norm (13 3x3 convs, max pools, 4096-4096-1000 classifier), 224 x 224.
* densenet121_ish: DenseNet-121 (growth 32, blocks 6-12-24-16, BN-ReLU-conv, concatenation), 224 x 224.
* unet_ish: U-Net (base 32 channels, 4 levels down, transposed-conv up, skip concatenation), 224 x 224.
* mixer_b16: MLP-Mixer B/16 (12 layers, hidden 768, 196 tokens, token MLP 384, channel MLP 3072), 224 x 224.
* whisper_encoder_ish: Whisper-base-like encoder (two conv1d, 1500 frames, 6 pre-LN layers, hidden 512, 8
  heads), 80 mel bins x 3000 frames.
* qwen2_05b: transformers Qwen2ForCausalLM at Qwen2.5-0.5B's published shape (24 layers, hidden 896, 14 heads, 2
  KV heads, MLP 4864, vocabulary 151,936, tied embeddings), 128 tokens, no cache.
* modernbert_base: transformers ModernBertModel at ModernBERT-base's published shape (22 layers, hidden 768, 12
  heads, GeGLU 1152, local attention window 128 on two layers of three), 128 tokens.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout))


class _ResNeXtBlock(nn.Module):
    def __init__(self, cin: int, width: int, cout: int, stride: int, groups: int = 32) -> None:
        super().__init__()
        self.body = nn.Sequential(_conv_bn(cin, width, 1), nn.ReLU(inplace=True),
                                  _conv_bn(width, width, 3, stride, groups), nn.ReLU(inplace=True),
                                  _conv_bn(width, cout, 1))
        self.down = _conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.body(x) + self.down(x))


def resnext50_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 64, 7, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, (depth, width) in enumerate(zip((3, 4, 6, 3), (128, 256, 512, 1024), strict=True)):
        for j in range(depth):
            layers.append(_ResNeXtBlock(cin, width, 2 * width, 2 if i and not j else 1))
            cin = 2 * width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


def vgg16_ish() -> nn.Module:
    layers: list[nn.Module] = []
    cin = 3
    for item in (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"):
        if item == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [_conv_bn(cin, int(item), 3), nn.ReLU(inplace=True)]
            cin = int(item)
    layers += [nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(inplace=True), nn.Linear(4096, 4096),
               nn.ReLU(inplace=True), nn.Linear(4096, 1000)]
    return nn.Sequential(*layers)


class _DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int = 32, bottleneck: int = 4) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, bottleneck * growth, 1, bias=False),
                                  nn.BatchNorm2d(bottleneck * growth), nn.ReLU(),
                                  nn.Conv2d(bottleneck * growth, growth, 3, padding=1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.body(x)], 1)


def densenet121_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 64, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, depth in enumerate((6, 12, 24, 16)):
        for _ in range(depth):
            layers.append(_DenseLayer(cin))
            cin += 32
        if i < 3:
            layers += [nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, cin // 2, 1, bias=False), nn.AvgPool2d(2)]
            cin //= 2
    layers += [nn.BatchNorm2d(cin), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


def _double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(_conv_bn(cin, cout, 3), nn.ReLU(inplace=True), _conv_bn(cout, cout, 3), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, base: int = 32, classes: int = 2) -> None:
        super().__init__()
        widths = [base * 2**i for i in range(5)]  # 32, 64, 128, 256, 512
        self.down = nn.ModuleList([_double_conv(3, widths[0])] +
                                  [_double_conv(widths[i], widths[i + 1]) for i in range(4)])
        self.up = nn.ModuleList([nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) for i in range(4)])
        self.merge = nn.ModuleList([_double_conv(2 * widths[i], widths[i]) for i in range(4)])
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for i, block in enumerate(self.down):
            x = block(F.max_pool2d(x, 2) if i else x)
            skips.append(x)
        for i in reversed(range(4)):
            x = self.merge[i](torch.cat([skips[i], self.up[i](x)], 1))
        return self.head(x)


def unet_ish() -> nn.Module:
    return UNet()


class _MixerBlock(nn.Module):
    def __init__(self, tokens: int = 196, dim: int = 768, token_mlp: int = 384, channel_mlp: int = 3072) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.token = nn.Sequential(nn.Linear(tokens, token_mlp), nn.GELU(), nn.Linear(token_mlp, tokens))
        self.channel = nn.Sequential(nn.Linear(dim, channel_mlp), nn.GELU(), nn.Linear(channel_mlp, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.token(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel(self.ln2(x))


class Mixer(nn.Module):
    def __init__(self, dim: int = 768, depth: int = 12, classes: int = 1000) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 16, stride=16)
        self.blocks = nn.Sequential(*[_MixerBlock(dim=dim) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.patch(x).flatten(2).transpose(1, 2))
        return self.head(self.norm(x).mean(1))


def mixer_b16() -> nn.Module:
    return Mixer()


class _WhisperLayer(nn.Module):
    def __init__(self, dim: int = 512, heads: int = 8) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.ln1(x)
        q, k, v = (p(h).view(b, s, self.heads, d // self.heads).transpose(1, 2) for p in (self.q, self.k, self.v))
        x = x + self.out(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class WhisperEncoder(nn.Module):
    def __init__(self, mels: int = 80, dim: int = 512, layers: int = 6, frames: int = 1500) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv1d(mels, dim, 3, padding=1), nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        self.pos = nn.Parameter(torch.zeros(frames, dim))
        self.layers = nn.Sequential(*[_WhisperLayer(dim) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.conv2(F.gelu(self.conv1(features)))).transpose(1, 2)
        return self.norm(self.layers(x + self.pos))


def whisper_encoder_ish() -> nn.Module:
    return WhisperEncoder()


def qwen2_05b() -> nn.Module:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
                         tie_word_embeddings=True, use_cache=False, attn_implementation="sdpa")
    return Qwen2ForCausalLM(config).eval()


def modernbert_base() -> nn.Module:
    from transformers import ModernBertConfig, ModernBertModel

    config = ModernBertConfig(vocab_size=50368, hidden_size=768, intermediate_size=1152, num_hidden_layers=22,
                              num_attention_heads=12, local_attention=128, global_attn_every_n_layers=3,
                              attn_implementation="sdpa")
    return ModernBertModel(config).eval()
