"""A sixth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (sixteenth session) before
any of it was measured: none is a calibration net, and none is in the first five sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small,
opt_125m; squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base,
gpt_neo_125m, clip_text). Each is a factory ``NAME()`` with random weights in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh5.py:NAME``. The three CNNs are written here; the other five come from
``transformers`` itself (random weights from a config at the published checkpoint's shape, its values written out
below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are modelcost's static
count at batch 1.

* mnasnet1_0_ish: torchvision's MNASNet 1.0 (a 3 x 3 stride-2 stem of 32, a depthwise-separable conv to 16, then
  16 inverted residuals of expansion 3 or 6 with 3 x 3 and 5 x 5 depthwise convs, no squeeze-excite, ReLU; a 320 ->
  1280 head), 224 x 224; 4,383,312 parameters, 0.314 GMACs (torchvision: 4,383,312 and "0.31 GFLOPS").
* repvgg_a0_ish: RepVGG-A0 (Ding et al., CVPR 2021) in its deploy form, each block's 3 x 3, 1 x 1 and identity
  branches fused into one biased 3 x 3 conv and a ReLU: 22 plain convs in stages of 1-2-4-14-1 at widths
  48-48-96-192-1280, each stage's first stride 2, then average pooling and a 1000-class linear, 224 x 224;
  8,309,384 parameters, 1.36 GMACs (the paper's 8.30 M and 1.4 GFLOPs, counted as multiply-adds).
* efficientnetv2_s_ish: torchvision's EfficientNetV2-S (Tan and Le 2021: a 24-channel stem, three stages of
  Fused-MBConv (a 3 x 3 conv expanding 1x or 4x, a 1 x 1 projection), three of MBConv (1 x 1 expand 4x or 6x, 3 x 3
  depthwise, SE squeezed to a quarter of the block's input, 1 x 1 project), 40 blocks, SiLU, BatchNorm eps 1e-3; a
  256 -> 1280 head), at its evaluation size 384 x 384; 21,458,488 parameters, 8.37 GMACs (torchvision: 21,458,488
  and "8.37 GFLOPS" at 384).
* levit_128s: transformers LevitForImageClassificationWithTeacher at facebook/levit-128S's config (a four-conv
  stride-16 stem, stages of 2, 3 and 4 attention + MLP blocks at widths 128-256-384 with 4, 6 and 8 heads of key
  size 16 and learned attention biases, two subsampling attention blocks between stages, every linear followed by
  BatchNorm, hard-swish; a classifier and a distillation head averaged), pixel_values 224 x 224; 7,777,058
  parameters, 0.305 GMACs (the paper's 7.8 M and 305 MFLOPs; timm's levit_128s: 7.78 M).
* poolformer_s12: transformers PoolFormerForImageClassification at sail/poolformer_s12's config (a 3 x 3 average
  pool minus its input as the token mixer, GroupNorm, 1 x 1 conv MLPs of ratio 4 with GELU, layer scale; stages
  2-2-6-2 at widths 64-128-320-512 after overlapping strided-conv patch embeddings), pixel_values 224 x 224;
  11,915,176 parameters, 1.81 GMACs (the paper's 12 M and 1.8 GMACs).
* mpnet_base: transformers MPNetModel at microsoft/mpnet-base's config (the body of sentence-transformers'
  all-mpnet-base-v2: 12 layers, hidden 768, 12 heads, MLP 3072, a relative position bias of 32 buckets computed once
  and added to every layer's scores, a pooler; eager attention, MPNet has no SDPA path), 128 tokens; 109,486,464
  parameters (the published 110 M), 11.17 GMACs.
* tiny_starcoder: transformers GPTBigCodeForCausalLM at bigcode/tiny_starcoder_py's config (multi-query attention:
  12 query heads sharing one 64-wide key/value head; 20 layers, hidden 768, MLP 3072, learned positions,
  vocabulary 49,152, tied head), 128 tokens, no cache; 164,144,128 parameters (the published 164 M), 20.69 GMACs.
* codegen_350m: transformers CodeGenForCausalLM at Salesforce/codegen-350M-mono's config (GPT-J's block:
  attention and MLP side by side off one LayerNorm; one fused qkv projection, rotary on the first 32 of each head's
  64 dims, 20 layers, hidden 1024, 16 heads, MLP 4096, vocabulary 51,200, an untied head with a bias), 128 tokens,
  no cache, eager attention; 356,712,448 parameters (the published "350M"), 39.59 GMACs.

All eight build and run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64), and export to
ONNX by modelcost's own path (bench/export.py, opset 17, dynamic batch) into files ONNX Runtime's CPU provider runs
at batch 1 and 2 (batch 2 within 4e-6 of torch): by the TorchScript exporter in 1.5 to 12.5 s each on the 2-core
development machine (one torch thread; mpnet_base the 12.5 s), but tiny_starcoder and codegen_350m by the
torch.export one (the TorchScript file took transformers' logits_to_keep as an input of its own, as opt_125m's and
gpt_neo_125m's did) in 54 s and 133-137 s, codegen_350m near this set's 150 s limit.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, act: type[nn.Module] | None = None,
             eps: float = 1e-5) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout, eps=eps)]
    return nn.Sequential(*layers, act()) if act is not None else nn.Sequential(*layers)


class _Residual(nn.Module):
    """``body(x) + x`` when the block keeps its shape, else ``body(x)``."""

    def __init__(self, body: nn.Module, residual: bool) -> None:
        super().__init__()
        self.body = body
        self.residual = residual

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x) + x if self.residual else self.body(x)


def _mnas_block(cin: int, cout: int, kernel: int, stride: int, expansion: int) -> nn.Module:
    """MNASNet's inverted residual (torchvision's _InvertedResidual): 1 x 1 expand, k x k depthwise, 1 x 1 project,
    BatchNorm after each and ReLU after the first two; no squeeze-excite."""
    mid = cin * expansion
    body = nn.Sequential(_conv_bn(cin, mid, 1, act=nn.ReLU),
                         _conv_bn(mid, mid, kernel, stride, groups=mid, act=nn.ReLU), _conv_bn(mid, cout, 1))
    return _Residual(body, cin == cout and stride == 1)


# torchvision's mnasnet1_0 stacks: in, out, kernel, stride, expansion, repeats
_MNAS_CFG = ((16, 24, 3, 2, 3, 3), (24, 40, 5, 2, 3, 3), (40, 80, 5, 2, 6, 3), (80, 96, 3, 1, 6, 2),
             (96, 192, 5, 2, 6, 4), (192, 320, 3, 1, 6, 1))


def mnasnet1_0_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2, act=nn.ReLU), _conv_bn(32, 32, 3, groups=32, act=nn.ReLU),
                               _conv_bn(32, 16, 1)]
    for cin, cout, kernel, stride, expansion, repeats in _MNAS_CFG:
        layers.append(_mnas_block(cin, cout, kernel, stride, expansion))
        layers += [_mnas_block(cout, cout, kernel, 1, expansion) for _ in range(repeats - 1)]
    head = [_conv_bn(320, 1280, 1, act=nn.ReLU), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(1280, 1000)]
    return nn.Sequential(*layers, *head).eval()


def repvgg_a0_ish() -> nn.Module:
    # RepVGG-A0 as deployed (its 3 x 3, 1 x 1 and identity branches fused into one biased 3 x 3 conv per block):
    # blocks 1-2-4-14-1, widths 48-48-96-192-1280 (64-64-128-256-512 x 0.75, the last x 2.5), each stage's first
    # block stride 2
    layers: list[nn.Module] = []
    cin = 3
    for width, blocks in ((48, 1), (48, 2), (96, 4), (192, 14), (1280, 1)):
        for i in range(blocks):
            layers += [nn.Conv2d(cin, width, 3, 2 if i == 0 else 1, 1), nn.ReLU(inplace=True)]
            cin = width
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers, *head).eval()


class _SqueezeExcite(nn.Module):
    """torchvision's SqueezeExcitation with SiLU: average, 1 x 1 reduce, SiLU, 1 x 1 expand, sigmoid gate."""

    def __init__(self, channels: int, squeeze: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.fc2(F.silu(self.fc1(F.adaptive_avg_pool2d(x, 1)))))


def _fused_mbconv(cin: int, cout: int, expansion: int, stride: int) -> nn.Module:
    """EfficientNetV2's Fused-MBConv: one 3 x 3 conv expands (or, at expansion 1, is the whole block), a 1 x 1
    projects; BatchNorm eps 1e-3, SiLU."""
    if expansion == 1:
        body = _conv_bn(cin, cout, 3, stride, act=nn.SiLU, eps=1e-3)
    else:
        mid = cin * expansion
        body = nn.Sequential(_conv_bn(cin, mid, 3, stride, act=nn.SiLU, eps=1e-3), _conv_bn(mid, cout, 1, eps=1e-3))
    return _Residual(body, cin == cout and stride == 1)


def _mbconv(cin: int, cout: int, expansion: int, stride: int) -> nn.Module:
    """EfficientNetV2's MBConv: 1 x 1 expand, 3 x 3 depthwise, SE squeezed to a quarter of the block's input, 1 x 1
    project."""
    mid = cin * expansion
    body = nn.Sequential(_conv_bn(cin, mid, 1, act=nn.SiLU, eps=1e-3),
                         _conv_bn(mid, mid, 3, stride, groups=mid, act=nn.SiLU, eps=1e-3),
                         _SqueezeExcite(mid, max(1, cin // 4)), _conv_bn(mid, cout, 1, eps=1e-3))
    return _Residual(body, cin == cout and stride == 1)


# torchvision's efficientnet_v2_s stages: fused, expansion, stride, in, out, layers
_EFFV2_CFG = ((True, 1, 1, 24, 24, 2), (True, 4, 2, 24, 48, 4), (True, 4, 2, 48, 64, 4), (False, 4, 2, 64, 128, 6),
              (False, 6, 1, 128, 160, 9), (False, 6, 2, 160, 256, 15))


def efficientnetv2_s_ish() -> nn.Module:
    layers: list[nn.Module] = [_conv_bn(3, 24, 3, 2, act=nn.SiLU, eps=1e-3)]
    for fused, expansion, stride, cin, cout, repeats in _EFFV2_CFG:
        block = _fused_mbconv if fused else _mbconv
        layers += [block(cin if i == 0 else cout, cout, expansion, stride if i == 0 else 1) for i in range(repeats)]
    head = [_conv_bn(256, 1280, 1, act=nn.SiLU, eps=1e-3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(1280, 1000)]
    return nn.Sequential(*layers, *head).eval()


def levit_128s() -> nn.Module:
    from transformers import LevitConfig, LevitForImageClassificationWithTeacher

    # facebook/levit-128S's config: a 4-conv stride-16 stem, stages of 2, 3 and 4 blocks at widths 128-256-384 with
    # 4, 6 and 8 heads of key size 16, attention biases per head and offset, two subsampling attention blocks
    # between stages, BatchNorm'd linears, hard-swish; a classifier and a distillation head (averaged)
    config = LevitConfig(image_size=224, num_channels=3, kernel_size=3, stride=2, padding=1, patch_size=16,
                         hidden_sizes=[128, 256, 384], num_attention_heads=[4, 6, 8], depths=[2, 3, 4],
                         key_dim=[16, 16, 16], drop_path_rate=0, mlp_ratio=[2, 2, 2], attention_ratio=[2, 2, 2],
                         down_ops=[["Subsample", 16, 128 // 16, 4, 2, 2], ["Subsample", 16, 256 // 16, 4, 2, 2]],
                         num_labels=1000)
    return LevitForImageClassificationWithTeacher(config).eval()


def poolformer_s12() -> nn.Module:
    from transformers import PoolFormerConfig, PoolFormerForImageClassification

    # sail/poolformer_s12's config: average pooling (3 x 3, minus the input) as the token mixer, GroupNorm(1),
    # 1 x 1 conv MLPs of ratio 4, layer scale; stages 2-2-6-2 at widths 64-128-320-512
    config = PoolFormerConfig(num_channels=3, patch_size=16, stride=16, pool_size=3, mlp_ratio=4.0, depths=[2, 2, 6, 2],
                              hidden_sizes=[64, 128, 320, 512], patch_sizes=[7, 3, 3, 3], strides=[4, 2, 2, 2],
                              padding=[2, 1, 1, 1], num_encoder_blocks=4, drop_path_rate=0.0, hidden_act="gelu",
                              use_layer_scale=True, layer_scale_init_value=1e-5, num_labels=1000)
    return PoolFormerForImageClassification(config).eval()


def mpnet_base() -> nn.Module:
    from transformers import MPNetConfig, MPNetModel

    # microsoft/mpnet-base's config (the body sentence-transformers' all-mpnet-base-v2 runs): 12 layers, hidden
    # 768, 12 heads, MLP 3072, a relative position bias of 32 buckets added to every layer's scores, a pooler
    config = MPNetConfig(vocab_size=30527, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                         intermediate_size=3072, hidden_act="gelu", hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=0.0, max_position_embeddings=514, layer_norm_eps=1e-5,
                         relative_attention_num_buckets=32, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    return MPNetModel(config).eval()


def tiny_starcoder() -> nn.Module:
    from transformers import GPTBigCodeConfig, GPTBigCodeForCausalLM

    # bigcode/tiny_starcoder_py's config: GPT-BigCode (SantaCoder's) multi-query attention, one key/value head for
    # 12 query heads; 20 layers, hidden 768, MLP 3072, learned positions, vocabulary 49,152, tied head
    config = GPTBigCodeConfig(vocab_size=49152, n_positions=8192, n_embd=768, n_layer=20, n_head=12, n_inner=3072,
                              activation_function="gelu_pytorch_tanh", resid_pdrop=0.0, embd_pdrop=0.0,
                              attn_pdrop=0.0, layer_norm_epsilon=1e-5, scale_attn_weights=True, multi_query=True,
                              bos_token_id=0, eos_token_id=0, tie_word_embeddings=True, use_cache=False,
                              attn_implementation="sdpa")
    return GPTBigCodeForCausalLM(config).eval()


def codegen_350m() -> nn.Module:
    from transformers import CodeGenConfig, CodeGenForCausalLM

    # Salesforce/codegen-350M-mono's config: 20 layers, hidden 1024, 16 heads, one fused qkv projection, rotary on
    # the first 32 of each head's 64 dims, attention and MLP in parallel off one LayerNorm (GPT-J's block), MLP
    # 4096, vocabulary 51,200, an untied head (with a bias); eager attention: the GPU machine's transformers (5.17)
    # has no SDPA path for CodeGen and refused the first build, so both machines run the same eager attention
    config = CodeGenConfig(vocab_size=51200, n_positions=2048, n_ctx=2048, n_embd=1024, n_layer=20, n_head=16,
                           rotary_dim=32, n_inner=None, activation_function="gelu_new", resid_pdrop=0.0,
                           embd_pdrop=0.0, attn_pdrop=0.0, layer_norm_epsilon=1e-5, bos_token_id=1,
                           eos_token_id=50256, tie_word_embeddings=False, use_cache=False,
                           attn_implementation="eager")
    return CodeGenForCausalLM(config).eval()
