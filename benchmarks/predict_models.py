"""Held-out architectures for benchmarks/predict_validate.py (issue 28), written here without torchvision: none
of them is a calibration net (bench/calibrate_fusion.py) and the predictor was never tuned on them. Each is
a factory ``NAME()`` (random weights) that ``modelcost`` loads as ``benchmarks/predict_models.py:NAME``; the zoo
adds resnet50, mobilenet_v2, bert-base and gpt2.

* vit_b16: ViT-B/16 (patch 16 conv, 12 pre-LN blocks, hidden 768, 12 heads, MLP 3072, class token), 224 x 224.
* efficientnet_ish: EfficientNet-B0-like MBConv stages (depthwise conv, squeeze-excite, SiLU), 224 x 224.
* convnext_ish: ConvNeXt-T-like (7x7 depthwise, LayerNorm, pointwise MLP with GELU; depths 3-3-9-3), 224 x 224.
* t5_encoder_ish: T5-base-like encoder (RMSNorm pre-norm, no biases, ReLU FFN 3072, 12 layers, hidden 768).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _Attention(nn.Module):
    def __init__(self, dim: int, heads: int, bias: bool = True) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)
        self.proj = nn.Linear(dim, dim, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, s, d))


class _VitBlock(nn.Module):
    def __init__(self, dim: int = 768, heads: int = 12, mlp: int = 3072) -> None:
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(dim), _Attention(dim, heads), nn.LayerNorm(dim)
        self.fc1, self.act, self.fc2 = nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, dim: int = 768, depth: int = 12, classes: int = 1000) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 16, stride=16)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, 197, dim))
        self.blocks = nn.Sequential(*[_VitBlock(dim) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


def vit_b16() -> nn.Module:
    return ViT()


class _MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, expand: int, kernel: int, stride: int) -> None:
        super().__init__()
        mid = cin * expand
        self.expand = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU()) \
            if expand != 1 else nn.Identity()
        self.dw = nn.Sequential(nn.Conv2d(mid, mid, kernel, stride, kernel // 2, groups=mid, bias=False),
                                nn.BatchNorm2d(mid), nn.SiLU())
        self.se_reduce, self.se_expand = nn.Conv2d(mid, max(1, cin // 4), 1), nn.Conv2d(max(1, cin // 4), mid, 1)
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(self.expand(x))
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(y.mean((2, 3), keepdim=True)))))
        y = self.project(y * s)
        return x + y if self.residual else y


def efficientnet_ish() -> nn.Module:
    stages = [(1, 16, 1, 3, 1), (6, 24, 2, 3, 2), (6, 40, 2, 5, 2), (6, 80, 3, 3, 2), (6, 112, 3, 5, 1),
              (6, 192, 4, 5, 2), (6, 320, 1, 3, 1)]  # expand, out channels, repeats, kernel, first stride
    layers: list[nn.Module] = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.SiLU()]
    cin = 32
    for expand, cout, repeats, kernel, stride in stages:
        for i in range(repeats):
            layers.append(_MBConv(cin, cout, expand, kernel, stride if i == 0 else 1))
            cin = cout
    layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.SiLU(), nn.AdaptiveAvgPool2d(1),
               nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


class _ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm, self.fc1, self.act, self.fc2 = nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.GELU(), \
            nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(self.act(self.fc1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


def convnext_ish() -> nn.Module:
    dims, depths = (96, 192, 384, 768), (3, 3, 9, 3)
    layers: list[nn.Module] = [nn.Conv2d(3, dims[0], 4, stride=4)]
    for i, (dim, depth) in enumerate(zip(dims, depths, strict=True)):
        if i:
            layers.append(nn.Conv2d(dims[i - 1], dim, 2, stride=2))
        layers += [_ConvNeXtBlock(dim) for _ in range(depth)]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(dims[-1]), nn.Linear(dims[-1], 1000)]
    return nn.Sequential(*layers)


class _RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight)


class _T5Layer(nn.Module):
    def __init__(self, dim: int = 768, heads: int = 12, ff: int = 3072) -> None:
        super().__init__()
        self.ln1, self.attn, self.ln2 = _RMSNorm(dim), _Attention(dim, heads, bias=False), _RMSNorm(dim)
        self.wi, self.act, self.wo = nn.Linear(dim, ff, bias=False), nn.ReLU(), nn.Linear(ff, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.wo(self.act(self.wi(self.ln2(x))))


class T5Encoder(nn.Module):
    def __init__(self, vocab: int = 32128, dim: int = 768, layers: int = 12) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.Sequential(*[_T5Layer(dim) for _ in range(layers)])
        self.norm = _RMSNorm(dim)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.norm(self.layers(self.embed(input_ids)))


def t5_encoder_ish() -> nn.Module:
    return T5Encoder()
