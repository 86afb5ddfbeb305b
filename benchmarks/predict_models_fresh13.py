"""A fourteenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was measured:
none is a calibration net, and none is in the first thirteen sets (resnet50, mobilenet_v2, efficientnet_ish,
convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish, densenet121_ish, unet_ish,
mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish, shufflenet_v2_ish,
mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small; inception_v3_ish,
r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small, opt_125m; squeezenet1_1_ish,
ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base, gpt_neo_125m, clip_text; mnasnet1_0_ish,
repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12, mpnet_base, tiny_starcoder, codegen_350m;
xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset, funnel_small_base, ernie45_03b, lfm2_350m;
wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny, depth_anything_small, esm2_150m, bart_base, smollm2_360m;
googlenet_ish, sd_vae_decoder_ish, mobilenet_v1, bit_50, beit_base, squeezebert, bloom_560m, yolos_tiny;
darknet53_ish, fcn_resnet50_ish, swin2sr_x2, wav2vec2_conformer, mobilevitv2, detr_resnet50, marian_en_de, qwen3_06b;
vovnet39_ish, cvt_13, focalnet_tiny, deeplabv3_mobilenet_v2, swiftformer_xs, convbert_small, distilbert_base,
mobilellm_125m; dla34_ish, x3d_m_ish, textnet_small, vitmatte_small, pvt_tiny, mobilebert, sew_d_tiny, nanochat_d20;
s3d_ish, inception_v4_ish, res2net50_ish, swinv2_tiny, dinov3_vits16, xlnet_base, nomic_embed_v15, xglm_564m). Each
is a factory ``NAME()`` with random weights (torch seeded with 0 first, so every machine builds the same ones) in
eval mode that ``modelcost`` loads as ``benchmarks/predict_models_fresh13.py:NAME``. The three conv nets are written
here (torchvision and timm, whose versions they follow, cannot be imported on the development machine); the other
five come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its values
written out below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are modelcost's
static count at batch 1.

* resnest50_ish: ResNeSt-50 (Zhang et al., "ResNeSt: Split-Attention Networks", CVPR-W 2022, as timm's resnest50d
  builds it: a deep stem of three 3 x 3 conv-BN-ReLU (32, 32, 64) and a max pool; 3, 4, 6 and 3 bottlenecks of width
  64 to 512 whose 3 x 3 conv is a split-attention one (radix 2: a 2-group conv to twice the width, the two splits
  summed, pooled and through two 1 x 1 convs to a softmax across the splits, which weighs them back into one);
  strided blocks average-pool after it (avd) and in their shortcut before a 1 x 1 conv (ResNet-D)), input 224 x 224
  (nn.Sequential's ``input``); 27,483,240 parameters (timm's 27.48 M, the paper's 27.5 M), 5.37 GMACs (the paper's
  5.39 G): the 2-group 3 x 3 convs 54%, 1 x 1 convs 39.5%, the stem 6.7%. The sets' first softmax over a grouped
  conv's splits (resnext50_ish's 32 groups are not weighed; res2net50_ish chains its splits).
* hrnet_w18_small_v2_ish: HRNet-W18-Small-V2 (Wang et al., "Deep High-Resolution Representation Learning for Visual
  Recognition", TPAMI 2020, as timm's hrnet_w18_small_v2 builds it: two 3 x 3 stride-2 conv-BN-ReLU to 64 and two
  bottlenecks to 256; then 2, 3 and 4 parallel branches at 1/4 to 1/32 of the input with 18, 36, 72 and 144 channels,
  in 1, 3 and 2 modules of two basic blocks per branch and a full exchange between the branches (a 1 x 1 conv and
  nearest upsampling up, 3 x 3 stride-2 convs down, summed, ReLU); the classification head's bottleneck per branch
  (to 128, 256, 512, 1024) summed down the resolutions by 3 x 3 stride-2 convs, a 1 x 1 conv to 2048, pooling and a
  1000-class linear), input 224 x 224 (``x``); 15,597,464 parameters (timm's 15.6 M), 2.60 GMACs: 3 x 3 convs 84%
  (38.7% strided), 1 x 1 16%; the head 38.5% (its three strided convs alone 26.7%), the multi-resolution stages 39%,
  the stem and first stage 22.6%. Many thin convs (18 to 144 channels) on four resolutions at once, 44 resampling
  paths between them in the six modules.
* nfnet_f0_ish: NFNet-F0 (Brock et al., "High-Performance Large-Scale Image Recognition Without Normalization", ICML
  2021, as timm's dm_nfnet_f0 builds it: no normalization layer; every conv a scaled weight-standardized one (its
  weight standardized again in every forward by F.batch_norm over the fan-in, times a gain / sqrt(fan-in)) with
  TensorFlow's SAME padding (an F.pad before each stride-2 one); a stem of four 3 x 3 convs (16, 32, 64, 128); 1, 2,
  6 and 3 normalizer-free bottlenecks at 256, 512, 1536 and 1536 (a 1 x 1 conv to half, two 3 x 3 in groups of 128
  channels, a 1 x 1 back, each after a GELU x 1.7015; squeeze-excitation x 2, a skip gain (zero at init, as timm has
  it), the residual x 0.2 added to the shortcut, the block's input x 1 / its expected std); a 1 x 1 conv to 3072,
  pooling and a 1000-class linear), input 256 x 256, its test resolution (``input``); 71,489,284 parameters (the
  paper's 71.5 M), 12.38 GMACs (the paper's 12.38 G): 1 x 1 convs 50%, the blocks' 3 x 3 convs (128-channel groups)
  44%, the stem 5.5%, squeeze-excitation and classifier 0.2%. The weight standardization is FLOPs (no MACs) once per
  forward whatever the batch: batch 64 counts 64 x batch 1's MACs but 63.30 x its FLOPs (0.28 of batch 1's
  25.2 GFLOPs), and the ONNX file keeps it (57 BatchNormalization nodes over weights). The ninth set's bit_50
  standardizes its weights too, but normalizes its activations (GroupNorm); nothing here does.
* groupvit_gcc_yfcc: transformers GroupViTVisionModel at nvidia/groupvit-gcc-yfcc's vision config (Xu et al.,
  "GroupViT: Semantic Segmentation Emerges from Text Supervision", CVPR 2022: a 16 x 16 patch embedding to 384 (196
  patches at 224 x 224) and 12 pre-LayerNorm layers of 6 heads and MLP 1536 (GELU) in stages of 6, 3 and 3; 64
  learned group tokens ride along the patches in the first stage and 8 in the second, and a grouping block closes
  each (an MLP-mixer over the group tokens, cross-attention from them to the tokens, a hard assignment of every token
  to one group by argmax and one-hot, straight-through, and an MLP), leaving 64, then 8 segment tokens: 260, 72 and 8
  tokens in the three stages; the 8 tokens' mean pooled), pixel_values 224 x 224, its own bmm attention (no SDPA
  path); 28,837,136 parameters, 3.97 GMACs: linears 90% (the layers' 80%, the grouping blocks' 9.5%), attention 8.7%,
  the patch embedding 1.5%. A ViT whose token count falls inside the forward; its hard assignment exports as ArgMax
  and ScatterElements.
* fnet_base: transformers FNetModel at google/fnet-base's config (Lee-Thorp et al., "FNet: Mixing Tokens with Fourier
  Transforms", NAACL 2022: BERT-base's shape, 12 post-LayerNorm layers at 768 and FFN 3072 with GELU (tanh), each
  self-attention replaced by the real part of a 2D discrete Fourier transform over the sequence and hidden dimensions
  (torch.fft.fftn: no parameters); vocabulary 32,000, 4 token types, 512 positions), input_ids 128 tokens; 82,861,056
  parameters, 7.32 GMACs, all in linears (the FFNs 99%, the embedding projection 1%); the 12 FFTs are FLOPs only
  (5 N log2 N, 0.66% of them). The sets' first encoder without attention and first FFT (cuFFT on the GPU; the ONNX
  file's 24 DFT nodes).
* canine_s: transformers CanineModel at google/canine-s's config (Clark et al., "CANINE: Pre-training an Efficient
  Tokenization-Free Encoder for Language Representation", TACL 2022: Unicode code points in, no vocabulary, each
  hashed by 8 functions into 16,384 buckets; one transformer layer at 768 over the characters whose attention stays
  within blocks of 128 characters; a kernel-4 stride-4 Conv1d down to molecules, the first character kept as [CLS];
  BERT-base's 12 layers over the molecules; the molecules repeated back to characters, concatenated with the first
  encoding, a kernel-4 conv from 1536 to 768 and one full-attention layer over the characters; a tanh pooler),
  input_ids 256 characters (at 128 the local attention would be one block, i.e. global; at 256 it keeps to two),
  eager attention; 132,082,944 parameters (the paper's 132 M), 10.65 GMACs: linears 85% (the deep stack over 64
  molecules 51%, the two character layers 17% each), the upsampling conv 11.4%, the downsampling conv 1.4%, attention
  2.1% (the local layer's 0.47%, half the full one's 0.95%). The set's local attention (no published decoder with a
  sliding window under 128 tokens fits 15 GMACs: below), and the sets' first character-level model.
* openai_gpt: transformers OpenAIGPTLMHeadModel at openai-community/openai-gpt's config (Radford et al., "Improving
  Language Understanding by Generative Pre-Training", 2018: GPT-1, 12 decoder layers at 768, 12 heads of 64, FFN 3072
  with GELU, biases everywhere and Conv1D linears as in GPT-2, but post-LayerNorm (after each residual add, as in
  BERT) and no final LayerNorm; 512 learned positions; the 40,478-token BPE vocabulary tied to the head), 128 tokens,
  eager attention (its own matmuls, no SDPA path); 116,534,784 parameters (the tied embedding counted once),
  15.15 GMACs: the layers' Conv1D linears 72%, the 40,478-way head 26%, attention 2%; its fp32 logits are 1.33 GB at
  batch 64. The first set's gpt2 is GPT-2 small: pre-LayerNorm, a final LayerNorm, 50,257 tokens.
* speecht5_hifigan: transformers SpeechT5HifiGan at microsoft/speecht5_hifigan's config (Kong et al., "HiFi-GAN:
  Generative Adversarial Networks for Efficient and High Fidelity Speech Synthesis", NeurIPS 2020, the vocoder
  SpeechT5 (Ao et al., ACL 2022) ships: an 80-bin log-mel spectrogram normalized by a stored mean and scale, a
  kernel-7 Conv1d to 512, four stride-4 kernel-8 ConvTranspose1d halving the channels to 32 while the length grows
  256-fold, each followed by three residual blocks (kernels 3, 7 and 11, each of three convs dilated 1, 3 and 5 and
  three undilated, leaky ReLU 0.1) averaged; a kernel-7 conv to one channel and tanh), spectrogram 100 frames x 80
  (1.6 s of 16 kHz audio, 25,600 samples out); 12,656,257 parameters, 13.67 GMACs: Conv1d 96.9% (kernel 11 50.6%,
  kernel 7 32.5%, kernel 3 13.8%; a third of each dilated), ConvTranspose1d 3.1%; a quarter in each of the four
  stages, the last one's 32 channels over all 25,600 samples. The sets' first 1D-conv generator and first dilated and
  transposed 1D convs. With this init (std 0.01) its waveform peaks near 2.5e-5 (2.7e-5 at batch 3), under fp16's
  smallest normal number (6.1e-5).

All eight build and run at batch 1 on the CPU and count completely (static analysis at batch 1 and 64: "every op
counted"; 1.6 to 3.7 s at batch 1 on the 2-core development machine), batch 64 exactly 64 x batch 1's MACs for all
eight (nfnet_f0_ish's FLOPs 63.30 x, above), in transformers 5.24 (not tried in the GPU machine's 5.17). Five export
to ONNX by the TorchScript exporter (opset 17, batch 2, dynamic batch): resnest50_ish, hrnet_w18_small_v2_ish,
nfnet_f0_ish, groupvit_gcc_yfcc and speecht5_hifigan; three by modelcost's fallback, the torch.export one (opset 20):
fnet_base (the TorchScript exporter has no aten::fft_fftn), canine_s (the TorchScript file fails in ONNX Runtime on
the final character encoder's attention matmul, "left operand cannot broadcast": the thirteenth set left CANINE out
for it, and bench/export_parity.py now catches it) and openai_gpt (the TorchScript trace takes logits_to_keep as an
input). Each file passes the exporter's check (ONNX Runtime's CPU provider at batch 1) and runs at batch 3 too,
within 1e-5 of torch (the conv nets' 2e-7 or less on random-init logits up to 0.1; speecht5_hifigan's 3e-11 on a
waveform up to 2.7e-5), but for fnet_base: 9.4e-4 on outputs up to 5.2 (cosine still above 0.999; the check reports a
relative error of 0.1 on its small elements), where torch's own fp32 is within 3e-6 of float64: ONNX Runtime's CPU
DFT is the less exact one. Each export takes 6 to 37 s with its check. torch._dynamo.explain finds one graph and no
break in each of the eight. At batch 64 the largest peak activation modelcost counts is openai_gpt's 1.35 GB (its
logits), then speecht5_hifigan's 1.05 GB; the rest stay under 0.81 GB.

Tried and left out: Locutusque/TinyMistral-248M (MistralModel with its sliding_window of 32, the local-attention
decoder this set wanted), 23.76 GMACs at 128 tokens without its head, over this set's 15; state-spaces/mamba2-130m
(transformers Mamba2Model), 21.24 GMACs, 46% of them in the chunked scan's einsums over a sequence padded to its
256-token chunk, and transformers runs mamba_ssm's kernels instead of that scan where they are installed, so a GPU
may not run what was counted; Ettin's decoders (ModernBertDecoder): ModernBERT's layers with a causal mask, a trivial
variant of the first fresh set's modernbert_base.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def _make_divisible(v: float, divisor: int = 8, min_value: int | None = None) -> int:
    """timm's make_divisible: round to a multiple of ``divisor`` (not below ``min_value``), never below 90% of v."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class _SplitAttn(nn.Module):
    """ResNeSt's split-attention conv (timm's SplitAttn, radix 2, cardinality 1): a 3 x 3 conv in ``radix`` groups
    to radix x C channels (BN, ReLU); the radix splits summed, globally average-pooled, through a 1 x 1 conv (with
    bias) to max(32, C x radix / 4) channels, BN, ReLU and a 1 x 1 conv back to radix x C; a softmax across the
    radix splits weighs them into C channels."""

    def __init__(self, channels: int, radix: int = 2) -> None:
        super().__init__()
        self.radix = radix
        attn_chs = _make_divisible(channels * radix * 0.25, 8, min_value=32)
        self.conv = nn.Conv2d(channels, channels * radix, 3, 1, 1, groups=radix, bias=False)
        self.bn0 = nn.BatchNorm2d(channels * radix)
        self.fc1 = nn.Conv2d(channels, attn_chs, 1)
        self.bn1 = nn.BatchNorm2d(attn_chs)
        self.fc2 = nn.Conv2d(attn_chs, channels * radix, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn0(self.conv(x)))
        b, rc, h, w = x.shape
        x = x.reshape(b, self.radix, rc // self.radix, h, w)
        gap = x.sum(dim=1).mean((2, 3), keepdim=True)
        attn = self.fc2(torch.relu(self.bn1(self.fc1(gap))))
        attn = torch.softmax(attn.view(b, 1, self.radix, -1).transpose(1, 2), dim=1)  # over the radix splits
        return (x * attn.reshape(b, self.radix, rc // self.radix, 1, 1)).sum(dim=1)


class _ResNestBottleneck(nn.Module):
    """timm's ResNestBottleneck (radix 2, cardinality 1, base width 64, avd): a 1 x 1 conv-BN-ReLU to ``planes``, the
    split-attention 3 x 3 at stride 1, a 3 x 3 stride-2 average pool after it in a strided block, a 1 x 1 conv-BN to
    4 x planes, added to the shortcut (a 2 x 2 average pool, ceil mode, at the stride, and a 1 x 1 conv-BN where the
    shape changes: ResNet-D's avg_down), ReLU."""

    def __init__(self, cin: int, planes: int, stride: int) -> None:
        super().__init__()
        cout = 4 * planes
        self.conv1 = nn.Sequential(nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes),
                                   nn.ReLU(inplace=True))
        self.conv2 = _SplitAttn(planes)
        self.avd_last = nn.AvgPool2d(3, stride, padding=1) if stride > 1 else None
        self.conv3 = nn.Sequential(nn.Conv2d(planes, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.downsample = None
        if stride != 1 or cin != cout:
            pool: nn.Module = nn.AvgPool2d(2, stride, ceil_mode=True, count_include_pad=False) if stride > 1 \
                else nn.Identity()
            self.downsample = nn.Sequential(pool, nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv2(self.conv1(x))
        if self.avd_last is not None:
            out = self.avd_last(out)
        out = self.conv3(out)
        return torch.relu(out + (x if self.downsample is None else self.downsample(x)))


def resnest50_ish() -> nn.Module:
    # ResNeSt-50 (Zhang et al., "ResNeSt: Split-Attention Networks", CVPR-W 2022; timm's resnest50d, the paper's
    # ResNeSt-50): a deep stem of three 3 x 3 conv-BN-ReLU (32, 32, 64; the first at stride 2) and a 3 x 3 stride-2
    # max pool; stages of 3, 4, 6 and 3 split-attention bottlenecks of width 64, 128, 256 and 512 (radix 2: every
    # 3 x 3 conv a 2-group conv to twice the width, a softmax over the two splits from their pooled sum; strided
    # blocks average-pool after it, and their shortcuts average-pool before a 1 x 1 conv); global average pooling
    # and a 1000-class linear
    torch.manual_seed(0)
    layers: list[nn.Module] = [
        nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.Conv2d(32, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for planes, depth, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(depth):
            layers.append(_ResNestBottleneck(cin, planes, stride if i == 0 else 1))
            cin = 4 * planes
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)).eval()


class _Basic(nn.Module):
    """ResNet's basic block (timm's BasicBlock, expansion 1): two 3 x 3 conv-BN, ReLU between, added to the input."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, 1, 1, bias=False), nn.BatchNorm2d(channels),
                                  nn.ReLU(inplace=True), nn.Conv2d(channels, channels, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + x)


class _Bottleneck(nn.Module):
    """ResNet's bottleneck (timm's Bottleneck, expansion 4): 1 x 1, 3 x 3 and 1 x 1 conv-BN (ReLU between), added to
    the input or to its 1 x 1 conv-BN projection, ReLU."""

    def __init__(self, cin: int, planes: int) -> None:
        super().__init__()
        cout = 4 * planes
        self.body = nn.Sequential(nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True),
                                  nn.Conv2d(planes, planes, 3, 1, 1, bias=False), nn.BatchNorm2d(planes),
                                  nn.ReLU(inplace=True), nn.Conv2d(planes, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.downsample = None if cin == cout else nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False),
                                                                 nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + (x if self.downsample is None else self.downsample(x)))


def _conv_bn_relu(cin: int, cout: int, stride: int, relu: bool = True) -> nn.Sequential:
    """A 3 x 3 conv-BN(-ReLU) without bias."""
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU(inplace=True)) if relu else nn.Sequential(*layers)


class _HRModule(nn.Module):
    """HRNet's HighResolutionModule: each branch (one resolution) through its two basic blocks, then every output
    the ReLU of the sum of all branches brought to its resolution: lower ones by a 1 x 1 conv-BN and nearest
    upsampling, higher ones by a chain of 3 x 3 stride-2 conv-BN (ReLU between)."""

    def __init__(self, channels: tuple[int, ...]) -> None:
        super().__init__()
        self.branches = nn.ModuleList(nn.Sequential(_Basic(c), _Basic(c)) for c in channels)
        self.fuse = nn.ModuleList()
        for i, ci in enumerate(channels):
            row = nn.ModuleList()
            for j, cj in enumerate(channels):
                if j > i:
                    row.append(nn.Sequential(nn.Conv2d(cj, ci, 1, bias=False), nn.BatchNorm2d(ci),
                                             nn.Upsample(scale_factor=2 ** (j - i), mode="nearest")))
                elif j == i:
                    row.append(nn.Identity())
                else:
                    row.append(nn.Sequential(*(_conv_bn_relu(cj, ci if k == i - j - 1 else cj, 2, k < i - j - 1)
                                               for k in range(i - j))))
            self.fuse.append(row)

    def forward(self, xs: list[torch.Tensor]) -> list[torch.Tensor]:
        xs = [branch(x) for branch, x in zip(self.branches, xs)]
        outs = []
        for row in self.fuse:
            y = row[0](xs[0])
            for j in range(1, len(xs)):
                y = y + row[j](xs[j])
            outs.append(torch.relu(y))
        return outs


class _HRNet(nn.Module):
    """HRNet-W18-Small-V2 for classification, as timm's hrnet_w18_small_v2 builds it."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(_conv_bn_relu(3, 64, 2), _conv_bn_relu(64, 64, 2))
        self.layer1 = nn.Sequential(_Bottleneck(64, 64), _Bottleneck(256, 64))
        self.transition1 = nn.ModuleList([_conv_bn_relu(256, 18, 1), _conv_bn_relu(256, 36, 2)])
        self.stage2 = nn.ModuleList([_HRModule((18, 36))])
        self.transition2 = _conv_bn_relu(36, 72, 2)  # the new, lowest branch from the lowest one before
        self.stage3 = nn.ModuleList(_HRModule((18, 36, 72)) for _ in range(3))
        self.transition3 = _conv_bn_relu(72, 144, 2)
        self.stage4 = nn.ModuleList(_HRModule((18, 36, 72, 144)) for _ in range(2))
        # the classification head: each branch through a bottleneck to 128, 256, 512 and 1024, summed from the
        # highest resolution down through 3 x 3 stride-2 conv-BN-ReLU (with bias), a 1 x 1 conv-BN-ReLU to 2048
        self.incre = nn.ModuleList(_Bottleneck(c, p) for c, p in zip((18, 36, 72, 144), (32, 64, 128, 256)))
        self.down = nn.ModuleList(nn.Sequential(nn.Conv2d(cin, 2 * cin, 3, 2, 1), nn.BatchNorm2d(2 * cin),
                                                nn.ReLU(inplace=True)) for cin in (128, 256, 512))
        self.final = nn.Sequential(nn.Conv2d(1024, 2048, 1), nn.BatchNorm2d(2048), nn.ReLU(inplace=True))
        self.classifier = nn.Linear(2048, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer1(self.stem(x))
        xs = [t(x) for t in self.transition1]
        for module in self.stage2:
            xs = module(xs)
        xs = [*xs, self.transition2(xs[-1])]
        for module in self.stage3:
            xs = module(xs)
        xs = [*xs, self.transition3(xs[-1])]
        for module in self.stage4:
            xs = module(xs)
        y = self.incre[0](xs[0])
        for i in range(1, 4):
            y = self.incre[i](xs[i]) + self.down[i - 1](y)
        y = self.final(y)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


def hrnet_w18_small_v2_ish() -> nn.Module:
    # HRNet-W18-Small-V2 (Wang et al., "Deep High-Resolution Representation Learning for Visual Recognition", TPAMI
    # 2020; timm's hrnet_w18_small_v2, the HRNet-Image-Classification config): two 3 x 3 stride-2 conv-BN-ReLU to 64,
    # two bottlenecks to 256; then parallel branches at 1/4, 1/8, 1/16 and 1/32 of the input with 18, 36, 72 and 144
    # channels, added one per stage by a 3 x 3 stride-2 conv (1, 3 and 2 HighResolutionModules in stages 2-4, each
    # two basic blocks per branch then a full exchange between the branches: 1 x 1 conv + nearest upsampling up, 3 x 3
    # stride-2 convs down); a head of a bottleneck per branch (to 128, 256, 512, 1024) summed down the resolutions by
    # 3 x 3 stride-2 convs, a 1 x 1 conv to 2048, average pooling and a 1000-class linear
    torch.manual_seed(0)
    return _HRNet().eval()


_GELU_GAMMA = 1.7015043497085571  # NFNets' gain that keeps GELU's output at unit variance (the official JAX code's)


class _GammaGELU(nn.Module):
    """timm's GammaAct for GELU: gelu(x) x 1.7015."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x) * _GELU_GAMMA


class _ScaledStdConvSame(nn.Conv2d):
    """timm's ScaledStdConv2dSame (NFNet's scaled weight standardization): each forward standardizes the weight per
    output channel (F.batch_norm over its fan-in, eps 1e-5) scaled by a learned gain / sqrt(fan-in), then convolves
    with TensorFlow's SAME padding (F.pad at run time where a stride-2 window makes it uneven)."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1,
                 gain_init: float = 1.0) -> None:
        # SAME is a static, symmetric padding at stride 1 (the conv's own) and a run-time one at stride 2
        super().__init__(cin, cout, kernel, stride, kernel // 2 if stride == 1 else 0, groups=groups, bias=True)
        self.gain = nn.Parameter(torch.full((cout, 1, 1, 1), gain_init))
        self.scale = self.weight[0].numel() ** -0.5
        self.eps = 1e-5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, s = self.kernel_size[0], self.stride[0]
        if s > 1:
            ih, iw = x.shape[-2:]
            pad_h = max((math.ceil(ih / s) - 1) * s + k - ih, 0)
            pad_w = max((math.ceil(iw / s) - 1) * s + k - iw, 0)
            x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])
        weight = F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None,
                              weight=(self.gain * self.scale).view(-1), training=True, momentum=0.0,
                              eps=self.eps).reshape_as(self.weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, 1, self.groups)


class _SE(nn.Module):
    """timm's SEModule (rd_ratio 0.5): global average pooling, a 1 x 1 conv to half, ReLU, a 1 x 1 conv back,
    sigmoid, the input scaled by it."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        rd = _make_divisible(channels * 0.5)
        self.fc1 = nn.Conv2d(channels, rd, 1)
        self.fc2 = nn.Conv2d(rd, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(x.mean((2, 3), keepdim=True)))))


class _NormFreeBlock(nn.Module):
    """timm's NormFreeBlock as dm_nfnet_f0 builds it: out = gelu_gamma(x) x beta; the shortcut x, or in a stage's
    first block a 2 x 2 average pool (ceil mode) at the stride and a 1 x 1 conv of out; the residual: 1 x 1 conv to
    half the width, two grouped 3 x 3 convs (groups of 128 channels; the first strided), a 1 x 1 conv back, each
    after a gamma-GELU, then squeeze-excitation x 2 and a learned skip gain (skipinit, zero at init as timm has it);
    the block returns residual x alpha (0.2) + shortcut."""

    def __init__(self, cin: int, cout: int, stride: int, beta: float, alpha: float = 0.2) -> None:
        super().__init__()
        mid = cout // 2
        groups = mid // 128
        self.beta, self.alpha = beta, alpha
        self.downsample = None
        if cin != cout or stride != 1:
            pool: nn.Module = nn.AvgPool2d(2, stride, ceil_mode=True, count_include_pad=False) if stride > 1 \
                else nn.Identity()
            self.downsample = nn.Sequential(pool, _ScaledStdConvSame(cin, cout, 1))
        self.act = _GammaGELU()
        self.conv1 = _ScaledStdConvSame(cin, mid, 1)
        self.conv2 = _ScaledStdConvSame(mid, mid, 3, stride, groups)
        self.conv2b = _ScaledStdConvSame(mid, mid, 3, 1, groups)
        self.conv3 = _ScaledStdConvSame(mid, cout, 1)
        self.attn_last = _SE(cout)
        self.skipinit_gain = nn.Parameter(torch.tensor(0.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.act(x) * self.beta
        shortcut = x if self.downsample is None else self.downsample(out)
        out = self.conv1(out)
        out = self.conv2(self.act(out))
        out = self.conv2b(self.act(out))
        out = self.conv3(self.act(out))
        out = 2.0 * self.attn_last(out)
        return out * self.skipinit_gain * self.alpha + shortcut


def nfnet_f0_ish() -> nn.Module:
    # NFNet-F0 (Brock et al., "High-Performance Large-Scale Image Recognition Without Normalization", ICML 2021;
    # timm's dm_nfnet_f0, the DeepMind weights' layout): no normalization layer at all; every conv a scaled
    # weight-standardized one (its weight re-standardized in each forward) with TF SAME padding; a stem of four
    # 3 x 3 convs (16, 32, 64, 128; strides 2, 1, 1, 2; gamma-GELU between); stages of 1, 2, 6 and 3 normalizer-free
    # bottlenecks at 256, 512, 1536 and 1536 (stride 1, 2, 2, 2; grouped 3 x 3 convs of 128 channels a group,
    # squeeze-excitation, residuals scaled by 0.2 and inputs by 1 / expected std); a 1 x 1 conv to 3072, gamma-GELU,
    # average pooling and a 1000-class linear. 256 x 256 is its test resolution (192 in training)
    torch.manual_seed(0)
    act = _GammaGELU()
    layers: list[nn.Module] = [_ScaledStdConvSame(3, 16, 3, 2), act, _ScaledStdConvSame(16, 32, 3, 1), act,
                               _ScaledStdConvSame(32, 64, 3, 1), act, _ScaledStdConvSame(64, 128, 3, 2)]
    cin, expected_var = 128, 1.0
    for cout, depth, stride in ((256, 1, 1), (512, 2, 2), (1536, 6, 2), (1536, 3, 2)):
        for i in range(depth):
            layers.append(_NormFreeBlock(cin, cout, stride if i == 0 else 1, beta=expected_var ** -0.5))
            if i == 0:
                expected_var = 1.0
            expected_var += 0.2 ** 2
            cin = cout
    layers += [_ScaledStdConvSame(1536, 3072, 1), _GammaGELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(3072, 1000)]
    return nn.Sequential(*layers).eval()


def groupvit_gcc_yfcc() -> nn.Module:
    from transformers import GroupViTVisionConfig, GroupViTVisionModel

    # nvidia/groupvit-gcc-yfcc's vision config (Xu et al., "GroupViT: Semantic Segmentation Emerges from Text
    # Supervision", CVPR 2022): a 16 x 16 patch embedding to 384 (196 patches at 224 x 224), 12 pre-LayerNorm
    # layers of 6 heads and MLP 1536 (GELU) in three stages of 6, 3 and 3; learned group tokens (64, then 8) ride
    # along the patches in the first two stages, and after each a grouping block (an MLP-mixer over the group
    # tokens, cross-attention from them to the tokens, then a hard assignment: argmax + one-hot, straight-through)
    # merges the tokens into 64, then 8 segment tokens; a final LayerNorm and the 8 tokens' mean as the pooled output
    config = GroupViTVisionConfig(hidden_size=384, intermediate_size=1536, depths=[6, 3, 3], num_hidden_layers=12,
                                  num_group_tokens=[64, 8, 0], num_output_groups=[64, 8, 8], num_attention_heads=6,
                                  image_size=224, patch_size=16, num_channels=3, hidden_act="gelu",
                                  layer_norm_eps=1e-5, dropout=0.0, attention_dropout=0.0, assign_eps=1.0,
                                  assign_mlp_ratio=[0.5, 4])
    torch.manual_seed(0)
    return GroupViTVisionModel(config).eval()


def fnet_base() -> nn.Module:
    from transformers import FNetConfig, FNetModel

    # google/fnet-base's config (Lee-Thorp et al., "FNet: Mixing Tokens with Fourier Transforms", NAACL 2022):
    # BERT-base's shape (12 layers at 768, FFN 3072 with GELU (tanh), post-LayerNorm) with every self-attention
    # replaced by a parameter-free 2D discrete Fourier transform over the sequence and hidden dimensions, of which
    # the real part is kept (torch.fft.fftn: no MACs counted, its FLOPs by 5 N log2 N); vocabulary 32,000, 4 token
    # types, 512 positions; the sequence output and a tanh pooler of the first token
    config = FNetConfig(vocab_size=32000, hidden_size=768, num_hidden_layers=12, intermediate_size=3072,
                        hidden_act="gelu_new", hidden_dropout_prob=0.1, max_position_embeddings=512,
                        type_vocab_size=4, layer_norm_eps=1e-12, use_tpu_fourier_optimizations=False,
                        tpu_short_seq_length=512, pad_token_id=3, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    return FNetModel(config).eval()


def canine_s() -> nn.Module:
    from transformers import CanineConfig, CanineModel

    # google/canine-s's config (Clark et al., "CANINE: Pre-training an Efficient Tokenization-Free Encoder for
    # Language Representation", TACL 2022): Unicode code points in, no vocabulary: each hashed by 8 functions into
    # 16,384 buckets of 768 / 8 embedding columns; one local transformer layer whose attention stays inside blocks of
    # 128 characters; a stride-4 conv (kernel 4) down to molecules (the first character kept as [CLS]); BERT-base's
    # 12 layers over the molecules; upsampling by repetition, concatenated with the character encoding, a conv
    # (kernel 4, 1536 -> 768) and one full-attention layer back over the characters; a tanh pooler
    config = CanineConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                          hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                          max_position_embeddings=16384, type_vocab_size=16, layer_norm_eps=1e-12, pad_token_id=0,
                          bos_token_id=0xE000, eos_token_id=0xE001, downsampling_rate=4, upsampling_kernel_size=4,
                          num_hash_functions=8, num_hash_buckets=16384, local_transformer_stride=128)
    torch.manual_seed(0)
    return CanineModel(config).eval()


def openai_gpt() -> nn.Module:
    from transformers import OpenAIGPTConfig, OpenAIGPTLMHeadModel

    # openai-community/openai-gpt's config (Radford et al., "Improving Language Understanding by Generative
    # Pre-Training", 2018: GPT-1): 12 decoder layers at 768 (12 heads of 64, FFN 3072 with GELU, biases everywhere,
    # Conv1D linears) with post-LayerNorm (after each residual add, BERT's order, and no final LayerNorm), 512 learned
    # positions, the 40,478-token BPE vocabulary's embedding tied to the LM head; eager attention (no SDPA path)
    config = OpenAIGPTConfig(vocab_size=40478, n_positions=512, n_embd=768, n_layer=12, n_head=12, afn="gelu",
                             resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1, layer_norm_epsilon=1e-5)
    torch.manual_seed(0)
    return OpenAIGPTLMHeadModel(config).eval()


def speecht5_hifigan() -> nn.Module:
    from transformers import SpeechT5HifiGan, SpeechT5HifiGanConfig

    # microsoft/speecht5_hifigan's config (Kong et al., "HiFi-GAN: Generative Adversarial Networks for Efficient and
    # High Fidelity Speech Synthesis", NeurIPS 2020, the vocoder SpeechT5 (Ao et al., ACL 2022) ships): an 80-bin
    # log-mel spectrogram, normalized by stored mean and scale, through a kernel-7 Conv1d to 512, four stride-4
    # ConvTranspose1d (kernel 8) halving the channels to 32 while the length grows 256-fold, each followed by three
    # multi-receptive-field residual blocks (kernels 3, 7 and 11, each of three dilated (1, 3, 5) and three plain
    # convs with leaky ReLU 0.1) averaged; a kernel-7 conv to one channel and tanh: 16 kHz audio
    config = SpeechT5HifiGanConfig(model_in_dim=80, sampling_rate=16000, upsample_initial_channel=512,
                                   upsample_rates=[4, 4, 4, 4], upsample_kernel_sizes=[8, 8, 8, 8],
                                   resblock_kernel_sizes=[3, 7, 11],
                                   resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5], [1, 3, 5]],
                                   initializer_range=0.01, leaky_relu_slope=0.1, normalize_before=True)
    torch.manual_seed(0)
    return SpeechT5HifiGan(config).eval()
