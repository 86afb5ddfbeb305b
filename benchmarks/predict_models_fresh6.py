"""A seventh fresh held-out set for benchmarks/predict_validate.py (issue 28), written (seventeenth session) before
any of it was measured: none is a calibration net, and none is in the first six sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small,
opt_125m; squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base,
gpt_neo_125m, clip_text; mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12,
mpnet_base, tiny_starcoder, codegen_350m). Each is a factory ``NAME()`` with random weights in eval mode that
``modelcost`` loads as ``benchmarks/predict_models_fresh6.py:NAME``. The three CNNs are written here; the other
five come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its values
written out below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are
modelcost's static count at batch 1.

* xception_ish: Xception (Chollet, CVPR 2017) as timm's legacy_xception writes it (two unpadded 3 x 3 stem convs,
  32 stride 2 and 64; an entry flow of three downsampling modules to 128, 256 and 728, each two depthwise-separable
  3 x 3 convs and a stride-2 max pool beside a 1 x 1 stride-2 shortcut; a middle flow of eight 728-wide modules of
  three separable convs with identity shortcuts; an exit module to 1024, separable convs to 1536 and 2048, ReLU
  before every separable conv), 299 x 299; 22,855,952 parameters, 8.36 GMACs (timm: 22.9 M and 8.4 GMACs).
* convmixer_768_32: ConvMixer-768/32 (Trockman and Kolter, TMLR 2023): a 7 x 7 stride-7 patch embedding to 768
  channels (a 32 x 32 grid at 224), then 32 blocks of a residual 7 x 7 depthwise conv and a 1 x 1 conv, each
  followed by GELU and BatchNorm, at one resolution throughout, 224 x 224; 21,110,248 parameters (the paper's
  21.1 M), 20.68 GMACs (per block 604 M pointwise + 38.5 M depthwise, x 32, plus a 116 M stem).
* resnet34_ish: torchvision's ResNet-34 (basic blocks of two 3 x 3 convs, stages 3-4-6-3 at widths
  64-128-256-512, 1 x 1 stride-2 shortcuts where a stage starts), 224 x 224; 21,797,672 parameters, 3.66 GMACs
  (torchvision: 21,797,672 and "3.66 GFLOPS").
* pvt_v2_b0: transformers PvtV2ForImageClassification at OpenGVLab/pvt_v2_b0's config (overlapping strided-conv
  patch embeddings; four stages of 2 blocks at widths 32-64-160-256 with 1, 2, 5 and 8 heads; spatial-reduction
  attention, its keys and values from a conv of stride 8, 4, 2, 1 and a LayerNorm; MLPs of ratio 8-8-4-4 with a
  3 x 3 depthwise conv between their linears), pixel_values 224 x 224, eager attention (PVT-v2 has no SDPA path);
  3,666,760 parameters, 0.566 GMACs (the paper's 3.7 M and 0.6 GFLOPs, counted as multiply-adds).
* ast_audioset: transformers ASTForAudioClassification at MIT/ast-finetuned-audioset-10-10-0.4593's config (a
  ViT-B body: 12 layers, hidden 768, 12 heads, MLP 3072; 16 x 16 patches of a 1024-frame x 128-bin spectrogram at
  stride 10 both ways, 12 x 101 = 1,212 patches plus class and distillation tokens: 1,214 tokens; a 527-class
  head), input_values 1024 x 128; 86,594,063 parameters, 130.5 GMACs (the longest sequence of the seven sets).
* funnel_small_base: transformers FunnelBaseModel at funnel-transformer/small-base's config (the encoder without
  the decoder: three blocks of 4 layers at hidden 768, 12 heads of 64, MLP 3072; between blocks the sequence is
  mean-pooled to half (the class token kept apart, 128 -> 64 -> 32 tokens), only the queries pooled;
  relative-shift positional attention written as einsums), 128 tokens, eager attention (Funnel has no SDPA path);
  115,611,648 parameters, 7.91 GMACs.
* ernie45_03b: transformers Ernie4_5ForCausalLM at baidu/ERNIE-4.5-0.3B-PT's config (18 layers, hidden 1024,
  grouped-query attention of 16 query heads on 2 key/value heads of size 128, rotary theta 5e5, SwiGLU MLP 3072,
  no biases, vocabulary 103,424, tied head), 128 tokens, no cache; 360,748,032 parameters (the published 0.36 B),
  47.38 GMACs. It stands in for Qwen3-0.6B, whose export took 160 s here (over the 150 s limit).
* lfm2_350m: transformers Lfm2ForCausalLM at LiquidAI/LFM2-350M's config (a hybrid of 16 layers: 10 gated short
  convolutions (in-projection to three 1024-wide gates, a 3-wide causal depthwise conv, out-projection) and 6
  grouped-query attention layers (16 query heads on 8 key/value heads, RMSNorm on queries and keys); hidden 1024,
  SwiGLU MLP 4608 (6656 auto-adjusted), vocabulary 65,536, tied head), 128 tokens, no cache; 354,483,968
  parameters (the published "350M"), 45.57 GMACs.

All eight build and run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64: "every op
counted", batch 64 exactly 64 x batch 1's MACs), and export to ONNX by modelcost's own path (bench/export.py, opset
17, dynamic batch) into files ONNX Runtime's CPU provider runs at batch 1 and 2 (batch 2 within 1.2e-5 of torch):
the six non-LMs by the TorchScript exporter in 1.2 to 24 s each on the 2-core development machine (one torch
thread; ast_audioset the 24 s), ernie45_03b and lfm2_350m by the torch.export one (the TorchScript exporter
refused aten::diff, which transformers' mask code calls, at opset 17) in 90.5 s and 51.4 s. Every class is in the
GPU machine's transformers (5.17) as well as this one's (5.24), and the three that ask for SDPA (AST, ERNIE 4.5,
LFM2) declare it in both.
"""

from __future__ import annotations

import torch
from torch import nn


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, padding: int | None = None, groups: int = 1,
             relu: bool = False) -> nn.Sequential:
    pad = kernel // 2 if padding is None else padding
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, stride, pad, groups=groups, bias=False),
                               nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


class _SeparableConv(nn.Sequential):
    """Xception's separable conv: a 3 x 3 depthwise conv, then a 1 x 1 pointwise one, neither with a bias nor a
    BatchNorm between them."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(nn.Conv2d(cin, cin, 3, 1, 1, groups=cin, bias=False), nn.Conv2d(cin, cout, 1, bias=False))


class _XceptionBlock(nn.Module):
    """One Xception module (timm's legacy_xception, after Cadene's port of Chollet's Keras model): ``reps`` x (ReLU,
    separable conv, BatchNorm), a 3 x 3 stride-2 max pool when it downsamples, and a 1 x 1 conv + BatchNorm shortcut
    when the shape changes (else the identity). ``grow_first``: the first separable conv widens (else the last)."""

    def __init__(self, cin: int, cout: int, reps: int, stride: int, start_with_relu: bool = True,
                 grow_first: bool = True) -> None:
        super().__init__()
        self.skip = _conv_bn(cin, cout, 1, stride, padding=0) if cin != cout or stride != 1 else nn.Identity()
        layers: list[nn.Module] = []
        for i in range(reps):
            if grow_first:
                a, b = (cin if i == 0 else cout), cout
            else:
                a, b = cin, (cin if i < reps - 1 else cout)
            layers += [nn.ReLU(), _SeparableConv(a, b), nn.BatchNorm2d(b)]
        if not start_with_relu:
            layers = layers[1:]
        if stride != 1:
            layers.append(nn.MaxPool2d(3, stride, 1))
        self.rep = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rep(x) + self.skip(x)


def xception_ish() -> nn.Module:
    # entry flow: two unpadded 3 x 3 convs (32 stride 2, 64), three downsampling modules to 128, 256, 728;
    # middle flow: eight modules of three 728-wide separable convs; exit flow: a module to 1024 (widening last),
    # separable convs to 1536 and 2048, average pooling, a 1000-class linear
    layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2, padding=0, relu=True), _conv_bn(32, 64, 3, padding=0, relu=True),
                               _XceptionBlock(64, 128, 2, 2, start_with_relu=False), _XceptionBlock(128, 256, 2, 2),
                               _XceptionBlock(256, 728, 2, 2)]
    layers += [_XceptionBlock(728, 728, 3, 1) for _ in range(8)]
    layers += [_XceptionBlock(728, 1024, 2, 2, grow_first=False), _SeparableConv(1024, 1536), nn.BatchNorm2d(1536),
               nn.ReLU(), _SeparableConv(1536, 2048), nn.BatchNorm2d(2048), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
               nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers).eval()


class _Residual(nn.Module):
    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x) + x


def convmixer_768_32() -> nn.Module:
    # ConvMixer-768/32 (Trockman and Kolter 2022): a 7 x 7 stride-7 patch embedding to 768 channels (32 x 32
    # patches at 224), then 32 blocks of a residual 7 x 7 depthwise conv and a 1 x 1 pointwise conv, each followed
    # by GELU and BatchNorm; average pooling and a 1000-class linear
    dim, depth, kernel, patch = 768, 32, 7, 7
    layers: list[nn.Module] = [nn.Conv2d(3, dim, patch, patch), nn.GELU(), nn.BatchNorm2d(dim)]
    for _ in range(depth):
        layers += [_Residual(nn.Sequential(nn.Conv2d(dim, dim, kernel, groups=dim, padding=kernel // 2), nn.GELU(),
                                           nn.BatchNorm2d(dim))),
                   nn.Conv2d(dim, dim, 1), nn.GELU(), nn.BatchNorm2d(dim)]
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, 1000)]
    return nn.Sequential(*layers, *head).eval()


class _BasicBlock(nn.Module):
    """ResNet's basic block (torchvision's BasicBlock): two 3 x 3 convs with BatchNorm, ReLU after the first and
    after the sum; a 1 x 1 stride-2 conv + BatchNorm shortcut where the block downsamples."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(_conv_bn(cin, cout, 3, stride, relu=True), _conv_bn(cout, cout, 3))
        self.skip = _conv_bn(cin, cout, 1, stride, padding=0) if cin != cout or stride != 1 else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


def resnet34_ish() -> nn.Module:
    # torchvision's resnet34: a 7 x 7 stride-2 stem of 64 and a 3 x 3 stride-2 max pool, then basic blocks 3-4-6-3
    # at widths 64-128-256-512 (each later stage's first block stride 2), average pooling, a 1000-class linear
    layers: list[nn.Module] = [_conv_bn(3, 64, 7, 2, relu=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(_BasicBlock(cin, width, stride if i == 0 else 1))
            cin = width
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers, *head).eval()


def pvt_v2_b0() -> nn.Module:
    from transformers import PvtV2Config, PvtV2ForImageClassification

    # OpenGVLab/pvt_v2_b0's config: overlapping strided-conv patch embeddings (7 x 7 stride 4, then 3 x 3 stride 2),
    # stages of 2 blocks at widths 32-64-160-256 with 1, 2, 5 and 8 heads; spatial-reduction attention (keys and
    # values from a strided conv of ratio 8, 4, 2, 1 and a LayerNorm), MLPs of ratio 8-8-4-4 with a 3 x 3 depthwise
    # conv inside; eager attention: PVT-v2 has no SDPA path
    config = PvtV2Config(image_size=224, num_channels=3, num_encoder_blocks=4, depths=[2, 2, 2, 2],
                         sr_ratios=[8, 4, 2, 1], hidden_sizes=[32, 64, 160, 256], patch_sizes=[7, 3, 3, 3],
                         strides=[4, 2, 2, 2], num_attention_heads=[1, 2, 5, 8], mlp_ratios=[8, 8, 4, 4],
                         hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         drop_path_rate=0.0, layer_norm_eps=1e-6, qkv_bias=True, linear_attention=False,
                         num_labels=1000, attn_implementation="eager")
    return PvtV2ForImageClassification(config).eval()


def ast_audioset() -> nn.Module:
    from transformers import ASTConfig, ASTForAudioClassification

    # MIT/ast-finetuned-audioset-10-10-0.4593's config: a ViT-B body (12 layers, hidden 768, 12 heads, MLP 3072)
    # over 16 x 16 patches of a 1024-frame x 128-bin log-mel spectrogram taken at stride 10 both ways (12 x 101 =
    # 1212 patches, plus class and distillation tokens: 1214), a 527-class AudioSet head
    config = ASTConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                       hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                       layer_norm_eps=1e-12, patch_size=16, qkv_bias=True, frequency_stride=10, time_stride=10,
                       max_length=1024, num_mel_bins=128, num_labels=527, attn_implementation="sdpa")
    return ASTForAudioClassification(config).eval()


def funnel_small_base() -> nn.Module:
    from transformers import FunnelBaseModel, FunnelConfig

    # funnel-transformer/small-base's config (the encoder alone, no decoder): three blocks of 4 layers at hidden 768
    # (12 heads of 64, MLP 3072), the sequence mean-pooled to half between blocks (the class token kept apart),
    # relative-shift positional attention; eager attention: Funnel has no SDPA path
    config = FunnelConfig(vocab_size=30522, block_sizes=[4, 4, 4], num_decoder_layers=2, d_model=768, n_head=12,
                          d_head=64, d_inner=3072, hidden_act="gelu_new", hidden_dropout=0.0, attention_dropout=0.0,
                          activation_dropout=0.0, layer_norm_eps=1e-9, pooling_type="mean",
                          attention_type="relative_shift", separate_cls=True, truncate_seq=True, pool_q_only=True,
                          attn_implementation="eager")
    return FunnelBaseModel(config).eval()


def ernie45_03b() -> nn.Module:
    from transformers import Ernie4_5Config, Ernie4_5ForCausalLM

    # baidu/ERNIE-4.5-0.3B-PT's config: 18 layers, hidden 1024, grouped-query attention (16 query heads sharing 2
    # key/value heads, head size 128), rotary theta 5e5 on interleaved pairs, SwiGLU MLP 3072, no biases,
    # vocabulary 103,424, tied head
    config = Ernie4_5Config(vocab_size=103424, hidden_size=1024, intermediate_size=3072, num_hidden_layers=18,
                            num_attention_heads=16, num_key_value_heads=2, head_dim=128, hidden_act="silu",
                            max_position_embeddings=131072, rms_norm_eps=1e-5, pad_token_id=0, bos_token_id=1,
                            eos_token_id=2, tie_word_embeddings=True, use_bias=False,
                            rope_parameters={"rope_type": "default", "rope_theta": 500000.0}, use_cache=False,
                            attn_implementation="sdpa")
    return Ernie4_5ForCausalLM(config).eval()


def lfm2_350m() -> nn.Module:
    from transformers import Lfm2Config, Lfm2ForCausalLM

    # LiquidAI/LFM2-350M's config: a hybrid of 16 layers, 10 of gated short convolutions (a 3-wide causal depthwise
    # conv between two gated projections) and 6 of grouped-query attention (16 query heads, 8 key/value heads, RMSNorm
    # on queries and keys, rotary theta 1e6), hidden 1024, SwiGLU MLP (6656 auto-adjusted to 4608), vocabulary
    # 65,536, tied head
    layer_types = ["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv", "conv",
                   "full_attention", "conv", "full_attention", "conv", "full_attention", "conv", "full_attention",
                   "conv"]
    config = Lfm2Config(vocab_size=65536, hidden_size=1024, intermediate_size=6656, num_hidden_layers=16,
                        num_attention_heads=16, num_key_value_heads=8, max_position_embeddings=128000, norm_eps=1e-5,
                        pad_token_id=0, bos_token_id=1, eos_token_id=7, tie_word_embeddings=True,
                        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, conv_bias=False,
                        conv_L_cache=3, block_multiple_of=256, block_ffn_dim_multiplier=1.0,
                        block_auto_adjust_ff_dim=True, layer_types=layer_types, use_cache=False,
                        attn_implementation="sdpa")
    return Lfm2ForCausalLM(config).eval()
