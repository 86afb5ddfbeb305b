"""A thirteenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was
measured: none is a calibration net, and none is in the first twelve sets (resnet50, mobilenet_v2, efficientnet_ish,
convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish, densenet121_ish, unet_ish,
mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish, shufflenet_v2_ish,
mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small; inception_v3_ish,
r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small, opt_125m; squeezenet1_1_ish,
ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base, gpt_neo_125m, clip_text;
mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12, mpnet_base, tiny_starcoder,
codegen_350m; xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset, funnel_small_base,
ernie45_03b, lfm2_350m; wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny, depth_anything_small, esm2_150m,
bart_base, smollm2_360m; googlenet_ish, sd_vae_decoder_ish, mobilenet_v1, bit_50, beit_base, squeezebert,
bloom_560m, yolos_tiny; darknet53_ish, fcn_resnet50_ish, swin2sr_x2, wav2vec2_conformer, mobilevitv2, detr_resnet50,
marian_en_de, qwen3_06b; vovnet39_ish, cvt_13, focalnet_tiny, deeplabv3_mobilenet_v2, swiftformer_xs,
convbert_small, distilbert_base, mobilellm_125m; dla34_ish, x3d_m_ish, textnet_small, vitmatte_small, pvt_tiny,
mobilebert, sew_d_tiny, nanochat_d20). Each is a factory ``NAME()`` with random weights (torch seeded with 0 first,
so every machine builds the same ones) in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh12.py:NAME``. The three conv nets are written here (torchvision and timm, whose
versions they follow, cannot be imported on the development machine); the other five come from ``transformers``
itself (random weights from a config at the published checkpoint's shape, its values written out below): the code
users bring. Parameter counts are sum(numel) of the built module; GMACs are modelcost's static count at batch 1.

* s3d_ish: S3D (Xie et al., "Rethinking Spatiotemporal Feature Learning: Speed-Accuracy Trade-offs in Video
  Classification", ECCV 2018, as torchvision's s3d builds it: GoogLeNet inflated to 3D with every k x k x k conv
  split into a 1 x k x k spatial and a k x 1 x 1 temporal conv-BN-ReLU: a separable 7 x 7 x 7 stem at stride 2 in
  time and space to 64, a 1 x 1 x 1 conv and a separable 3 x 3 x 3 to 192, nine separable Inception blocks between
  max pools, a 2 x 7 x 7 average pool, a 1 x 1 x 1 conv to Kinetics' 400 classes and the mean), a 16-frame 224 x 224
  clip (``x``, B x 3 x 16 x 224 x 224: the fewest frames its 2 x 7 x 7 pool takes); 8,320,048 parameters
  (torchvision's exactly), 17.98 GMACs, all in Conv3d: 1 x 3 x 3 windows 36%, 3 x 1 x 1 27%, the stem's 7 x 1 x 1
  16% (64 to 64 channels at 8 x 112 x 112) and 1 x 7 x 7 10.5%, 1 x 1 x 1 10%: the sets' first video net of
  separable dense 3D convs (r3d_18_ish's are 3 x 3 x 3; x3d_m_ish's wider windows are depthwise but its stem's).
* inception_v4_ish: Inception-v4 (Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of Residual
  Connections on Learning", AAAI 2017, as timm's inception_v4 builds it: a stem of three 3 x 3 convs and three
  mixed blocks to 35 x 35 x 384; 4 Inception-A, Reduction-A, 7 Inception-B of 1 x 7 / 7 x 1 pairs, Reduction-B, 3
  Inception-C whose 1 x 3 and 3 x 1 convs run side by side; conv-BN(eps 0.001)-ReLU throughout, unpadded where the
  paper draws them; average pooling and a 1000-class linear), input 299 x 299 (nn.Sequential's ``input``);
  42,679,816 parameters (timm's 42.68 M), 12.25 GMACs, all but 1.5 M in convs: 3 x 3 32%, 1 x 1 26%, 7 x 1 19%,
  1 x 7 19%, 1 x 3 and 3 x 1 2% each: 42% in non-square windows (the fourth set's inception_v3_ish: 30%).
* res2net50_ish: Res2Net-50 26w x 4s (Gao et al., "Res2Net: A New Multi-scale Backbone Architecture", TPAMI 2019,
  as timm's res2net50_26w_4s builds it: ResNet-50's stem and 3, 4, 6, 3 bottlenecks, each splitting its 1 x 1
  conv's output into 4 groups of 26, 52, 104 or 208 channels, three of them through a chain of 3 x 3 conv-BN-ReLU
  each fed the previous one's output (all four from the split in a stage's first block, which average-pools the
  fourth), concatenated into the 1 x 1 conv out), input 224 x 224 (``input``); 25,699,120 parameters (the paper's
  25.7 M), 4.26 GMACs (the paper's 4.2 G): 1 x 1 convs 76%, the narrow, serial 3 x 3 convs 21.5%, the stem 3%.
* swinv2_tiny: transformers Swinv2ForImageClassification at microsoft/swinv2-tiny-patch4-window8-256's config (Liu
  et al., "Swin Transformer V2: Scaling Up Capacity and Resolution", CVPR 2022: SwinV2-T: a 4 x 4 patch embedding
  to 96, stages of 2, 2, 6 and 2 blocks at 96 to 768 with 3 to 24 heads in shifted 8 x 8 windows, scaled cosine
  attention with a continuous position bias (a 2 -> 512 -> heads MLP on log-spaced relative coordinates),
  res-post-norm, patch merging by a linear and LayerNorm, a 1000-class head), pixel_values 256 x 256, eager
  attention (Swinv2 has no SDPA path); 28,347,154 parameters (the paper's 28 M), 5.94 GMACs (the paper's 5.9 G):
  linears 96%, the attention's bmm 4%, the patch embedding 0.3%. The position-bias MLPs run once per block whatever
  the batch: batch 64 counts 63.80 x batch 1's MACs. The second set's swin_tiny is Swin V1 (dot-product attention,
  a bias table, pre-norm) at 224.
* dinov3_vits16: transformers DINOv3ViTModel at facebook/dinov3-vits16-pretrain-lvd1689m's config (Simeoni et al.,
  "DINOv3", 2025: ViT-S/16: 12 pre-LayerNorm layers at 384, 6 heads, MLP 1536 with GELU, LayerScale; a class token
  and 4 register tokens beside the 196 patches, no position table but 2D axial rotary positions (theta 100) on the
  patch tokens; no key bias), pixel_values 224 x 224, SDPA attention; 21,596,544 parameters, 4.70 GMACs: linears
  91%, attention 8%, the patch embedding 1%. The fifth set's dinov2_small is a ViT-S/14 with a learned position table
  (257 tokens).
* xlnet_base: transformers XLNetModel at xlnet/xlnet-base-cased's config (Yang et al., "XLNet: Generalized
  Autoregressive Pretraining for Language Understanding", NeurIPS 2019: 12 post-LayerNorm layers at 768 of
  Transformer-XL's relative attention, 12 heads of 64, FFN 3072 with GELU, vocabulary 32,000; mem_len null as the
  checkpoint has it, use_mems_eval off so that no memory is returned), input_ids 128 tokens, bidirectional (no
  permutation mask); 116,718,336 parameters, 13.29 GMACs: the FFNs' linears 55%, the attention's einsums 45% (its
  q, k, v and output projections 27%; each layer projecting the 256 sinusoidal relative positions by its own
  weight, for every sequence, 14%; scores and values 5%), every attention projection an einsum over
  sequence-first tensors (128 x B x 768).
* nomic_embed_v15: transformers NomicBertModel at nomic-ai/nomic-embed-text-v1.5's config (Nussbaum et al., "Nomic
  Embed: Training a Reproducible Long Context Text Embedder", 2024: nomic-bert-2048: BERT-base's 12 layers at 768
  and 12 heads with rotary positions (base 1000) for the position table, a SwiGLU MLP of 3072, no biases in the
  linears, post-LayerNorm as in BERT; vocabulary 30,528), input_ids 128 tokens, SDPA attention; 136,731,648
  parameters (the model card's 137 M), 14.80 GMACs: linears 98%, attention 2%.
* xglm_564m: transformers XGLMForCausalLM at facebook/xglm-564M's config (Lin et al., "Few-shot Learning with
  Multilingual Generative Language Models", EMNLP 2022: a fairseq decoder of 24 pre-LayerNorm layers at 1024, 16
  heads of 64, FFN 4096 with GELU, biases everywhere, fixed sinusoidal positions, embeddings scaled by 32, a
  256,008-token vocabulary tied to the head), 128 tokens, no cache, eager attention (XGLM has no SDPA path);
  564,463,616 parameters, 73.02 GMACs: the layers' linears 53%, the 256,008-way head 46% (its fp32 logits alone are
  8.4 GB at batch 64), attention 1.1%.

All eight build and run at batch 1 on the CPU and count completely (static analysis at batch 1 and 64: "every op
counted"; 2.5 to 5 s at batch 1 on the 2-core development machine), batch 64 exactly 64 x batch 1's MACs for seven
(swinv2_tiny's 63.80 x above), in transformers 5.24 and in the GPU machine's 5.17 (the same parameters and counts but
for xlnet_base's 98,304 MACs more, 5.17 building its sinusoid table by an einsum). Seven export to ONNX by the
TorchScript exporter (opset 17, batch 2, dynamic batch) in 2 to 16 s each, into files ONNX Runtime's CPU provider
runs at batch 1 and 2 (and 3 for the transformers ones), within 4.8e-6 of torch (dinov3_vits16 the 4.8e-6 on outputs
up to 4.8; the conv nets' 5e-10 to 4e-8 on random-init logits up to 0.06). xglm_564m fails the
TorchScript exporter ("got multiple values for argument 'use_cache'") and exports by modelcost's fallback, the
torch.export one (opset 20), in 61 s: 4.8e-6 on logits up to 6.2. torch._dynamo.explain finds one graph and no break
in each of the eight. At batch 64 the largest peak activation modelcost counts is xglm_564m's 8.42 GB (fp32), then
s3d_ish's 6.58 GB; the rest stay under 1 GB.

Tried and left out: google/canine-s (CANINE, character-level), whose TorchScript export writes its final character
encoder's key transpose as perm (0, 3, 1, 2) for (0, 2, 3, 1), so ONNX Runtime fails on the file at every batch
("left operand cannot broadcast"); google/fnet-base, whose Fourier mixing (aten._fft_c2c) modelcost does not
count; Nystromformer, which transformers runs with full softmax attention wherever segment_means_seq_len equals
num_landmarks (64 and 64 in its default config), and with the Nystrom approximation only for inputs of exactly
segment_means_seq_len tokens otherwise.
"""

from __future__ import annotations

import torch
from torch import nn


def _conv3d(cin: int, cout: int, kernel: int | tuple[int, int, int], stride: int | tuple[int, int, int] = 1,
            padding: int | tuple[int, int, int] = 0) -> nn.Sequential:
    """torchvision's Conv3dNormActivation as S3D uses it: a 3D conv without bias, BatchNorm (eps 0.001), ReLU."""
    return nn.Sequential(nn.Conv3d(cin, cout, kernel, stride, padding, bias=False),
                         nn.BatchNorm3d(cout, eps=0.001, momentum=0.001), nn.ReLU(inplace=True))


def _sep3d(cin: int, cout: int, kernel: int, stride: int, padding: int) -> nn.Sequential:
    """S3D's TemporalSeparableConv: a 1 x k x k spatial conv, then a k x 1 x 1 temporal one (each conv-BN-ReLU)."""
    return nn.Sequential(_conv3d(cin, cout, (1, kernel, kernel), (1, stride, stride), (0, padding, padding)),
                         _conv3d(cout, cout, (kernel, 1, 1), (stride, 1, 1), (padding, 0, 0)))


class _SepInception3d(nn.Module):
    """S3D's SepInceptionBlock3D: GoogLeNet's four branches (1 x 1 x 1; 1 x 1 x 1 then a separable 3 x 3 x 3, twice
    over; a 3 x 3 x 3 max pool then 1 x 1 x 1), concatenated."""

    def __init__(self, cin: int, b0: int, b1_mid: int, b1: int, b2_mid: int, b2: int, b3: int) -> None:
        super().__init__()
        self.branch0 = _conv3d(cin, b0, 1)
        self.branch1 = nn.Sequential(_conv3d(cin, b1_mid, 1), _sep3d(b1_mid, b1, 3, 1, 1))
        self.branch2 = nn.Sequential(_conv3d(cin, b2_mid, 1), _sep3d(b2_mid, b2, 3, 1, 1))
        self.branch3 = nn.Sequential(nn.MaxPool3d(3, 1, 1), _conv3d(cin, b3, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)), 1)


class _S3D(nn.Module):
    """S3D as torchvision's s3d builds it (features, a 2 x 7 x 7 average pool, a 1 x 1 x 1 conv classifier, the
    mean over what is left of time and space)."""

    def __init__(self, num_classes: int = 400) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _sep3d(3, 64, 7, 2, 3), nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)), _conv3d(64, 64, 1),
            _sep3d(64, 192, 3, 1, 1), nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)),
            _SepInception3d(192, 64, 96, 128, 16, 32, 32), _SepInception3d(256, 128, 128, 192, 32, 96, 64),
            nn.MaxPool3d(3, 2, 1),
            _SepInception3d(480, 192, 96, 208, 16, 48, 64), _SepInception3d(512, 160, 112, 224, 24, 64, 64),
            _SepInception3d(512, 128, 128, 256, 24, 64, 64), _SepInception3d(512, 112, 144, 288, 32, 64, 64),
            _SepInception3d(528, 256, 160, 320, 32, 128, 128),
            nn.MaxPool3d(2, 2),
            _SepInception3d(832, 256, 160, 320, 32, 128, 128), _SepInception3d(832, 384, 192, 384, 48, 128, 128))
        self.avgpool = nn.AvgPool3d((2, 7, 7), 1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Conv3d(1024, num_classes, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(self.classifier(self.avgpool(self.features(x))), dim=(2, 3, 4))


def s3d_ish() -> nn.Module:
    # S3D (Xie et al., "Rethinking Spatiotemporal Feature Learning: Speed-Accuracy Trade-offs in Video
    # Classification", ECCV 2018; torchvision's s3d, Kinetics-400 head): GoogLeNet inflated to 3D with every k x k x k
    # conv split into a 1 x k x k spatial conv and a k x 1 x 1 temporal one: a separable 7 x 7 x 7 stem at stride 2
    # (time too) to 64, a 1 x 3 x 3 max pool, a 1 x 1 x 1 conv and a separable 3 x 3 x 3 to 192, a max pool; nine
    # separable Inception blocks (3b-3c, 4b-4f, 5b-5c) between 3 x 3 x 3 stride-2 and 2 x 2 x 2 max pools; a 2 x 7 x 7
    # average pool, a 1 x 1 x 1 conv to 400 classes and the mean. 16 frames are the fewest its 2 x 7 x 7 pool takes
    torch.manual_seed(0)
    return _S3D().eval()


def _conv_bn(cin: int, cout: int, kernel: int | tuple[int, int], stride: int = 1,
             padding: int | tuple[int, int] = 0) -> nn.Sequential:
    """Inception-v4's conv unit (timm's ConvNormAct there): a conv without bias, BatchNorm (eps 0.001), ReLU."""
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, padding, bias=False), nn.BatchNorm2d(cout, eps=0.001),
                         nn.ReLU(inplace=True))


def _row(cin: int, cout: int, k: int) -> nn.Sequential:
    """A 1 x k conv ("same" padding)."""
    return _conv_bn(cin, cout, (1, k), padding=(0, k // 2))


def _col(cin: int, cout: int, k: int) -> nn.Sequential:
    """A k x 1 conv ("same" padding)."""
    return _conv_bn(cin, cout, (k, 1), padding=(k // 2, 0))


class _Concat(nn.Module):
    """Branches run on the same input, their outputs concatenated along channels."""

    def __init__(self, *branches: nn.Module) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([branch(x) for branch in self.branches], 1)


def _pool_branch(cin: int, cout: int) -> nn.Sequential:
    """An Inception block's pooling branch: a 3 x 3 average pool (padding left out of the mean), a 1 x 1 conv."""
    return nn.Sequential(nn.AvgPool2d(3, 1, 1, count_include_pad=False), _conv_bn(cin, cout, 1))


def _inception_a() -> _Concat:
    """35 x 35 x 384: 1 x 1; 1 x 1 + 3 x 3; 1 x 1 + two 3 x 3; pool + 1 x 1 (96 each)."""
    return _Concat(_conv_bn(384, 96, 1), nn.Sequential(_conv_bn(384, 64, 1), _conv_bn(64, 96, 3, padding=1)),
                   nn.Sequential(_conv_bn(384, 64, 1), _conv_bn(64, 96, 3, padding=1), _conv_bn(96, 96, 3, padding=1)),
                   _pool_branch(384, 96))


def _inception_b() -> _Concat:
    """17 x 17 x 1024: 1 x 1 (384); 1 x 1 + 1 x 7 + 7 x 1 (256); 1 x 1 + 7 x 1 + 1 x 7 + 7 x 1 + 1 x 7 (256); pool +
    1 x 1 (128)."""
    return _Concat(_conv_bn(1024, 384, 1),
                   nn.Sequential(_conv_bn(1024, 192, 1), _row(192, 224, 7), _col(224, 256, 7)),
                   nn.Sequential(_conv_bn(1024, 192, 1), _col(192, 192, 7), _row(192, 224, 7), _col(224, 224, 7),
                                 _row(224, 256, 7)),
                   _pool_branch(1024, 128))


class _InceptionC(nn.Module):
    """8 x 8 x 1536: 1 x 1 (256); 1 x 1 to 384 then a 1 x 3 and a 3 x 1 side by side (256 each); 1 x 1 to 384, 3 x 1
    to 448, 1 x 3 to 512, then a 1 x 3 and a 3 x 1 side by side (256 each); pool + 1 x 1 (256)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = _conv_bn(1536, 256, 1)
        self.branch1_0 = _conv_bn(1536, 384, 1)
        self.branch1_1a = _row(384, 256, 3)
        self.branch1_1b = _col(384, 256, 3)
        self.branch2 = nn.Sequential(_conv_bn(1536, 384, 1), _col(384, 448, 3), _row(448, 512, 3))
        self.branch2_3a = _row(512, 256, 3)
        self.branch2_3b = _col(512, 256, 3)
        self.branch3 = _pool_branch(1536, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.branch1_0(x)
        x2 = self.branch2(x)
        return torch.cat((self.branch0(x), self.branch1_1a(x1), self.branch1_1b(x1), self.branch2_3a(x2),
                          self.branch2_3b(x2), self.branch3(x)), 1)


def inception_v4_ish() -> nn.Module:
    # Inception-v4 (Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of Residual Connections on
    # Learning", AAAI 2017; timm's inception_v4): a stem of three 3 x 3 convs (32, 32, 64; the first at stride 2)
    # and three mixed blocks (max pool beside a stride-2 conv; two branches of which one factorises a 7 x 7 into
    # 1 x 7 and 7 x 1; a stride-2 conv beside a max pool) to 35 x 35 x 384; 4 Inception-A, Reduction-A (to 17 x 17 x
    # 1024), 7 Inception-B (1 x 7 / 7 x 1), Reduction-B (its 1 x 7 / 7 x 1 branch; to 8 x 8 x 1536), 3 Inception-C
    # (1 x 3 / 3 x 1 side by side); global average pooling and a 1000-class linear. Unpadded convs and pools as
    # the paper draws them: 299 x 299 in
    torch.manual_seed(0)
    return nn.Sequential(
        _conv_bn(3, 32, 3, 2), _conv_bn(32, 32, 3), _conv_bn(32, 64, 3, padding=1),
        _Concat(nn.MaxPool2d(3, 2), _conv_bn(64, 96, 3, 2)),
        _Concat(nn.Sequential(_conv_bn(160, 64, 1), _conv_bn(64, 96, 3)),
                nn.Sequential(_conv_bn(160, 64, 1), _row(64, 64, 7), _col(64, 64, 7), _conv_bn(64, 96, 3))),
        _Concat(_conv_bn(192, 192, 3, 2), nn.MaxPool2d(3, 2)),
        *(_inception_a() for _ in range(4)),
        _Concat(_conv_bn(384, 384, 3, 2),
                nn.Sequential(_conv_bn(384, 192, 1), _conv_bn(192, 224, 3, padding=1), _conv_bn(224, 256, 3, 2)),
                nn.MaxPool2d(3, 2)),
        *(_inception_b() for _ in range(7)),
        _Concat(nn.Sequential(_conv_bn(1024, 192, 1), _conv_bn(192, 192, 3, 2)),
                nn.Sequential(_conv_bn(1024, 256, 1), _row(256, 256, 7), _col(256, 320, 7), _conv_bn(320, 320, 3, 2)),
                nn.MaxPool2d(3, 2)),
        *(_InceptionC() for _ in range(3)),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1536, 1000)).eval()


class _Bottle2neck(nn.Module):
    """Res2Net's bottleneck (timm's Bottle2neck): a 1 x 1 conv-BN-ReLU to ``scale`` groups of ``width`` channels;
    group i > 0 (plus the previous group's output, except in a stage's first block) through its own 3 x 3
    conv-BN-ReLU, the last group passed on (3 x 3 average-pooled at the block's stride in a stage's first block);
    concatenated, a 1 x 1 conv-BN, added to the shortcut (a strided 1 x 1 conv-BN in a stage's first block), ReLU."""

    def __init__(self, cin: int, planes: int, stride: int, base_width: int = 26, scale: int = 4) -> None:
        super().__init__()
        width = planes * base_width // 64
        cout = 4 * planes
        self.width = width
        self.is_first = stride > 1 or cin != cout
        self.conv1 = nn.Sequential(nn.Conv2d(cin, width * scale, 1, bias=False), nn.BatchNorm2d(width * scale),
                                   nn.ReLU(inplace=True))
        self.convs = nn.ModuleList(
            nn.Sequential(nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
            for _ in range(scale - 1))
        self.pool = nn.AvgPool2d(3, stride, 1) if self.is_first else None
        self.conv3 = nn.Sequential(nn.Conv2d(width * scale, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) \
            if self.is_first else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        splits = torch.split(self.conv1(x), self.width, 1)
        outs: list[torch.Tensor] = []
        y = splits[0]
        for i, conv in enumerate(self.convs):
            y = conv(splits[i] if i == 0 or self.is_first else y + splits[i])
            outs.append(y)
        outs.append(splits[-1] if self.pool is None else self.pool(splits[-1]))
        out = self.conv3(torch.cat(outs, 1))
        return torch.relu(out + (x if self.downsample is None else self.downsample(x)))


def res2net50_ish() -> nn.Module:
    # Res2Net-50 26w x 4s (Gao et al., "Res2Net: A New Multi-scale Backbone Architecture", TPAMI 2019; timm's
    # res2net50_26w_4s): ResNet-50's stem (7 x 7 stride-2 conv-BN-ReLU to 64, a 3 x 3 stride-2 max pool) and stages
    # of 3, 4, 6 and 3 bottlenecks at 256, 512, 1024 and 2048 out, each splitting its 1 x 1 conv's output into 4
    # groups of 26, 52, 104 and 208 channels, three of them through a hierarchy of 3 x 3 convs (stages 2-4 strided in
    # their first block); global average pooling and a 1000-class linear
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                               nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for planes, depth, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(depth):
            layers.append(_Bottle2neck(cin, planes, stride if i == 0 else 1))
            cin = 4 * planes
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)).eval()


def swinv2_tiny() -> nn.Module:
    from transformers import Swinv2Config, Swinv2ForImageClassification

    # microsoft/swinv2-tiny-patch4-window8-256's config (Liu et al., "Swin Transformer V2: Scaling Up Capacity and
    # Resolution", CVPR 2022: SwinV2-T): a 4 x 4 stride-4 patch embedding to 96 (64 x 64 tokens at 256 x 256), stages
    # of 2, 2, 6 and 2 blocks at 96, 192, 384 and 768 with 3, 6, 12 and 24 heads in 8 x 8 windows (shifted every other
    # block; the last stage's 8 x 8 map is one window), patch merging (2 x 2 concat, a linear to twice the width,
    # LayerNorm) between stages; scaled cosine attention (a learned, clamped logit scale per head) with a continuous
    # position bias (a 2 -> 512 -> heads MLP on log-spaced relative coordinates, 16 x sigmoid), LayerNorm after the
    # attention and the MLP (res-post-norm), MLP ratio 4, GELU; a final LayerNorm, average pooling and a 1000-class
    # head; eager attention (Swinv2 has no SDPA path)
    config = Swinv2Config(image_size=256, patch_size=4, num_channels=3, embed_dim=96, depths=[2, 2, 6, 2],
                          num_heads=[3, 6, 12, 24], window_size=8, pretrained_window_sizes=[0, 0, 0, 0], mlp_ratio=4.0,
                          qkv_bias=True, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.0,
                          hidden_act="gelu", use_absolute_embeddings=False, layer_norm_eps=1e-5, encoder_stride=32,
                          num_labels=1000)
    torch.manual_seed(0)
    return Swinv2ForImageClassification(config).eval()


def dinov3_vits16() -> nn.Module:
    from transformers import DINOv3ViTConfig, DINOv3ViTModel

    # facebook/dinov3-vits16-pretrain-lvd1689m's config (Simeoni et al., "DINOv3", 2025: ViT-S/16 distilled from the
    # 7B teacher): a 16 x 16 stride-16 patch embedding to 384 (196 patches at 224 x 224), a class token and 4 register
    # tokens (201 tokens), no position table but 2D axial rotary positions on the patch tokens (theta 100,
    # coordinates normalised to [-1, 1]); 12 pre-LayerNorm blocks of 6 heads (query and value biases, no key bias),
    # MLP 1536 with GELU, LayerScale on both branches; a final LayerNorm, the class token pooled; SDPA attention
    config = DINOv3ViTConfig(patch_size=16, hidden_size=384, intermediate_size=1536, num_hidden_layers=12,
                             num_attention_heads=6, hidden_act="gelu", layer_norm_eps=1e-5, rope_theta=100.0,
                             image_size=224, num_channels=3, query_bias=True, key_bias=False, value_bias=True,
                             proj_bias=True, mlp_bias=True, layerscale_value=1.0, drop_path_rate=0.0,
                             use_gated_mlp=False, num_register_tokens=4, pos_embed_rescale=2.0,
                             attn_implementation="sdpa")
    torch.manual_seed(0)
    return DINOv3ViTModel(config).eval()


def xlnet_base() -> nn.Module:
    from transformers import XLNetConfig, XLNetModel

    # xlnet/xlnet-base-cased's config (Yang et al., "XLNet: Generalized Autoregressive Pretraining for Language
    # Understanding", NeurIPS 2019): 12 post-LayerNorm layers at 768 of Transformer-XL's relative attention (12 heads
    # of 64; queries with a content bias against the keys and with a position bias against the 256 sinusoidal
    # relative positions a layer projects by its own r weight, shifted into place; per-layer biases, untie_r), FFN
    # 3072 with GELU; vocabulary 32,000; bidirectional attention (no permutation mask given), no memory (mem_len
    # null, as the checkpoint's config has it) and none returned (use_mems_eval off: by default the model hands back
    # every layer's input as "mems", 12 more outputs); every attention projection an einsum, the sequence dimension
    # first inside
    config = XLNetConfig(vocab_size=32000, d_model=768, n_layer=12, n_head=12, d_inner=3072, ff_activation="gelu",
                         untie_r=True, attn_type="bi", layer_norm_eps=1e-12, dropout=0.1, mem_len=None,
                         reuse_len=None, bi_data=False, clamp_len=-1, same_length=False, use_mems_eval=False)
    torch.manual_seed(0)
    return XLNetModel(config).eval()


def nomic_embed_v15() -> nn.Module:
    from transformers import NomicBertConfig, NomicBertModel

    # nomic-ai/nomic-embed-text-v1.5's config (Nussbaum et al., "Nomic Embed: Training a Reproducible Long Context
    # Text Embedder", 2024: nomic-bert-2048): BERT-base's shape (12 layers at 768, 12 heads of 64) with rotary
    # positions (base 1000, the whole head) in place of the position table, a SwiGLU MLP of 3072, no biases in the
    # attention and MLP linears, and BERT's post-LayerNorm (after each residual add, eps 1e-12); embeddings
    # LayerNorm-ed; BERT's vocabulary padded to 30,528, 2 token types; the sequence output (the embedding is its mean,
    # taken outside the model); SDPA attention
    config = NomicBertConfig(vocab_size=30528, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                             intermediate_size=3072, hidden_act="silu", hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0, max_position_embeddings=2048, type_vocab_size=2,
                             layer_norm_eps=1e-12, pad_token_id=0,
                             rope_parameters={"rope_type": "default", "rope_theta": 1000.0}, head_dim=64,
                             attn_implementation="sdpa")
    torch.manual_seed(0)
    return NomicBertModel(config).eval()


def xglm_564m() -> nn.Module:
    from transformers import XGLMConfig, XGLMForCausalLM

    # facebook/xglm-564M's config (Lin et al., "Few-shot Learning with Multilingual Generative Language Models",
    # EMNLP 2022): a fairseq decoder of 24 pre-LayerNorm layers at 1024 (16 heads of 64, FFN 4096 with GELU, biases
    # everywhere), fixed sinusoidal positions, token embeddings scaled by sqrt(1024), a final LayerNorm; the
    # 256,008-token multilingual vocabulary's embedding tied to the head; 128 tokens, no cache; eager attention (XGLM
    # has no SDPA path)
    config = XGLMConfig(vocab_size=256008, max_position_embeddings=2048, d_model=1024, ffn_dim=4096, num_layers=24,
                        attention_heads=16, activation_function="gelu", dropout=0.1, attention_dropout=0.1,
                        activation_dropout=0.0, layerdrop=0.0, scale_embedding=True, use_cache=False,
                        tie_word_embeddings=True)
    torch.manual_seed(0)
    return XGLMForCausalLM(config).eval()
