"""A fifteenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was measured:
none is a calibration net, and none is in the first fourteen sets (resnet50, mobilenet_v2, efficientnet_ish,
convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish, densenet121_ish, unet_ish, mixer_b16,
whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish, shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny,
wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small; inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0,
mobilevit_small, smollm_135m, electra_small, opt_125m; squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small,
convnextv2_tiny, albert_base, gpt_neo_125m, clip_text; mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s,
poolformer_s12, mpnet_base, tiny_starcoder, codegen_350m; xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0,
ast_audioset, funnel_small_base, ernie45_03b, lfm2_350m; wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny,
depth_anything_small, esm2_150m, bart_base, smollm2_360m; googlenet_ish, sd_vae_decoder_ish, mobilenet_v1, bit_50,
beit_base, squeezebert, bloom_560m, yolos_tiny; darknet53_ish, fcn_resnet50_ish, swin2sr_x2, wav2vec2_conformer,
mobilevitv2, detr_resnet50, marian_en_de, qwen3_06b; vovnet39_ish, cvt_13, focalnet_tiny, deeplabv3_mobilenet_v2,
swiftformer_xs, convbert_small, distilbert_base, mobilellm_125m; dla34_ish, x3d_m_ish, textnet_small, vitmatte_small,
pvt_tiny, mobilebert, sew_d_tiny, nanochat_d20; s3d_ish, inception_v4_ish, res2net50_ish, swinv2_tiny, dinov3_vits16,
xlnet_base, nomic_embed_v15, xglm_564m; resnest50_ish, hrnet_w18_small_v2_ish, nfnet_f0_ish, groupvit_gcc_yfcc,
fnet_base, canine_s, openai_gpt, speecht5_hifigan). Each is a factory ``NAME()`` with random weights (torch seeded with
0 first, so every machine builds the same ones) in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh14.py:NAME``. The three conv nets are written here (torchvision and timm, whose
versions they follow, cannot be imported on the development machine); the other five come from ``transformers`` itself
(random weights from a config at the published checkpoint's shape, its values written out below): the code users bring.
Parameter counts are sum(numel) of the built module; GMACs are modelcost's static count at batch 1.

* dpn68_ish: DPN-68 (Chen et al., "Dual Path Networks", NeurIPS 2017, as timm's dpn68 builds it: a 3 x 3 stride-2
  conv-BN-ReLU stem to 10 channels and a max pool; 3, 4, 12 and 3 dual path blocks of pre-activated BN-ReLU-conv units
  (1 x 1, 3 x 3 in 32 groups, 1 x 1; bottleneck widths 128 to 1024) whose output is split: 64 to 512 channels added to a
  residual path (ResNet's), increments of 16, 32, 32 and 64 concatenated to a dense path (DenseNet's) that grows every
  block; each stage's first block projects its input into both paths (strided in stages 2-4); the two paths
  concatenated, BN-ReLU, pooling and a 1 x 1 conv classifier), input 224 x 224 (``x``); 12,611,602 parameters (timm's
  12.61 M), 2.33 GMACs (timm's 2.35 G): 1 x 1 convs 86% (the blocks' first 55%, their last 28.3%, the projections 2.9%),
  the grouped 3 x 3 convs 13.7%, the stem 0.15%. Every block but the first concatenates its input pair (the residual and
  the growing dense path, up to 832 channels) before its first conv, and every block extends the dense path by another
  concatenation.
* fasternet_t2_ish: FasterNet-T2 (Chen et al., "Run, Don't Walk: Chasing Higher FLOPS for Faster Neural Networks", CVPR
  2023, as timm's fasternet_t2 builds it: a 4 x 4 stride-4 conv-BN patch embedding to 96; 1, 2, 8 and 2 blocks at 96,
  192, 384 and 768, each a partial conv (a 3 x 3 conv over the first quarter of the channels, the other three quarters
  split off and concatenated back untouched) and a 1 x 1 conv to twice the width, BN, ReLU, a 1 x 1 conv back, residual;
  2 x 2 stride-2 conv-BN merging between stages; pooling, a 1 x 1 conv to 1280, ReLU and a 1000-class linear), input 224
  x 224 (nn.Sequential's ``input``); 14,982,888 parameters (the paper's 15.0 M), 1.90 GMACs (the paper's 1.91 G): 1 x 1
  convs 78.9%, the partial 3 x 3 convs 11.1%, the 2 x 2 merging convs 9.1%, the stem 0.8%, the head 0.1%. A split and a
  concatenation in each of the 13 blocks, as in shufflenet_v2_ish's channel split, but the untouched three quarters go
  straight on to the dense 1 x 1 convs.
* inceptionnext_tiny_ish: InceptionNeXt-T (Yu et al., "InceptionNeXt: When Inception Meets ConvNeXt", CVPR 2024, as
  timm's inception_next_tiny builds it: a 4 x 4 stride-4 conv-BN stem to 96; 3, 3, 9 and 3 MetaNeXt blocks at 96, 192,
  384 and 768, each an inception depthwise token mixer (three eighths of the channels through depthwise convs of 3 x 3,
  1 x 11 and 11 x 1, the other five eighths untouched, concatenated), BN, a conv MLP of ratio 4, 4, 4 and 3 (GELU,
  biases) and a layer scale; BN and a 2 x 2 stride-2 conv between stages; an MLP head: pooling, a linear to 2304, GELU,
  LayerNorm and a linear to 1000), input 224 x 224 (``input``); 28,055,680 parameters (timm's 28.06 M), 4.19 GMACs (the
  paper's 4.2 G): the conv MLPs' 1 x 1 convs 95.2%, the 2 x 2 downsampling convs 4.1%, the stem 0.3%, the depthwise
  convs 0.2% (the band ones about 0.1%), the head 0.1%. The sets' first band-shaped depthwise convs (inception_v3_ish's
  and inception_v4_ish's 1 x 7 and 7 x 1 convs are dense).
* deit_small_distilled: transformers DeiTForImageClassificationWithTeacher at
  facebook/deit-small-distilled-patch16-224's config (Touvron et al., "Training data-efficient image transformers &
  distillation through attention", ICML 2021: a 16 x 16 patch embedding to 384, a class and a distillation token with
  the 196 patches (198 tokens), 12 pre-LayerNorm layers of 6 heads and MLP 1536 (GELU); two 1000-class heads, on the
  class and the distillation token, averaged), pixel_values 224 x 224, SDPA attention; 22,436,432 parameters (timm's
  22.44 M), 4.62 GMACs: linears 90.9%, attention 7.8%, the patch embedding 1.25%. ViT-S's shape as a classifier with the
  extra distillation token and its second head (dinov2_small is a backbone).
* clip_vit_b32_vision: transformers CLIPVisionModelWithProjection at openai/clip-vit-base-patch32's vision config
  (Radford et al., "Learning Transferable Visual Models From Natural Language Supervision", ICML 2021: a 32 x 32
  stride-32 patch conv (no bias) to 768, 49 patches and a class token; a LayerNorm before the encoder, 12 pre-LayerNorm
  layers of 12 heads and MLP 3072 with quick GELU (x sigmoid(1.702 x)); the class token's LayerNorm and a linear
  projection without bias to the 512-wide joint space), pixel_values 224 x 224, SDPA attention; 87,849,216 parameters
  (the vision tower's 87.46 M and the 0.39 M projection), 4.41 GMACs: linears 96.3%, the patch conv 2.6%, attention
  1.05%. ViT-B's width over only 50 tokens (vit_b16 has 197): the fourth set's clip_text is CLIP's text tower.
* nystromformer_512: transformers NystromformerModel at uw-madison/nystromformer-512's config (Xiong et al.,
  "Nystromformer: A Nystrom-Based Algorithm for Approximating Self-Attention", AAAI 2021: BERT-base's shape, 12
  post-LayerNorm layers at 768, 12 heads, FFN 3072 with GELU (tanh); each softmax attention approximated through 64
  landmarks, the segment means of the queries and of the keys: softmax(Q K~^T) pinv(softmax(Q~ K~^T)) softmax(Q~ K^T) V,
  the pseudo-inverse by 6 Newton-Schulz iterations of 64 x 64 matmuls, plus a depthwise conv (65 x 1 along the sequence,
  one kernel a head) over the values; vocabulary 30,000, 510 positions, 2 token types), input_ids 128 tokens (two tokens
  a landmark), its own matmuls (no SDPA path); 108,500,112 parameters, 11.25 GMACs: linears 96.6% (the FFNs 64.4%, the
  attention projections 32.2%), the attention's bmm 2.7%, the value conv 0.7%. The sets' first approximate (low-rank)
  attention and first iterative matrix inverse.
* moonshine_tiny_encoder: the encoder of transformers MoonshineModel at UsefulSensors/moonshine-tiny's config (Jeffries
  et al., "Moonshine: Speech Recognition for Live Transcription and Voice Commands", 2024: raw 16 kHz audio in, no
  spectrogram: a kernel-127 stride-64 Conv1d to 288 without bias, tanh, GroupNorm with one group; a kernel-7 stride-3
  Conv1d to 576 and a kernel-3 stride-2 one back to 288, each with GELU (415 frames for 10 s); 6 pre-LayerNorm (no bias)
  layers of 8 heads with rotary embeddings on 90% of each 36-wide head, no attention biases, MLP 1152 with GELU; a final
  LayerNorm), input_values 160,000 samples (10 s), SDPA attention; 7,681,248 parameters (of the whole model's 27.09 M
  with its decoder), 4.34 GMACs: linears 57.2% (MLPs 38.1%, attention projections 19.0%), Conv1d 29.1% (the kernel-7
  conv 22.3%, the kernel-3 4.8%, the kernel-127 2.1%), attention 13.7%. The sets' first encoder on raw audio without
  wav2vec2's feature encoder (wav2vec2_base, wav2vec2_conformer and sew_d_tiny share it), and a narrow one: 288 channels
  over 415 frames.
* imagegpt_small: transformers ImageGPTForCausalImageModeling at openai/imagegpt-small's config (Chen et al.,
  "Generative Pretraining from Pixels", ICML 2020: a GPT-2-style decoder over pixels, each one of 512 color clusters (a
  9-bit palette) or the start token: 513 tokens, 1,024 learned positions (32 x 32 in raster order); 24 pre-norm layers
  at 512, 8 heads of 64, FFN 2048 with quick GELU, Conv1D linears with biases, and a LayerNorm without mean subtraction
  or bias (x / rms(x) x weight); an untied 513-way head without bias), input_ids 128 tokens (the first four rows of an
  image), use_cache off, its own matmul attention (no SDPA path); 76,682,240 parameters (the paper's 76 M), 10.10 GMACs:
  the layers' Conv1D linears 95.7%, attention 4.0%, the head 0.33%. A deep, narrow decoder (24 layers at 512) whose head
  is negligible (openai_gpt's 40,478-way head took 26% of its MACs); its 24 causal-mask buffers (1,024 x 1,024 booleans
  each) are 25.2 M buffer elements beside the parameters.

All eight build and run at batch 1 on the CPU and count completely (static analysis at batch 1 and 64: "every op
counted"; 2.3 to 5.8 s at batch 1 on the 2-core development machine), batch 64 exactly 64 x batch 1's MACs and FLOPs for
all eight, in transformers 5.24. Seven export to ONNX by the TorchScript exporter
(opset 17, dynamic batch): dpn68_ish, fasternet_t2_ish, inceptionnext_tiny_ish, deit_small_distilled,
clip_vit_b32_vision, nystromformer_512 and imagegpt_small (with use_cache off: with it on the TorchScript trace meets
the DynamicCache output and torch.export fails too); one by modelcost's fallback, the torch.export one (opset 20):
moonshine_tiny_encoder (the TorchScript exporter stops on "All tensors must have the same rank"). Each file passes the
exporter's check (ONNX Runtime's CPU provider at batch 1) with cosine 1.0 to torch (max absolute error: dpn68_ish and
fasternet_t2_ish 3e-8 or less, inceptionnext_tiny_ish 1.3e-6, the transformers models 1.2e-5 or less but
moonshine_tiny_encoder's 2.4e-5; max relative error 0.003 or less). Each bench run (export, check and 3 s of ONNX
Runtime) takes 8 to 24 s. torch._dynamo.explain finds one graph and no break in each of the eight. At batch 64 the
largest peak activation modelcost counts is inceptionnext_tiny_ish's 0.69 GB, then dpn68_ish's 0.45 GB and
nystromformer_512's 0.43 GB; the rest stay under 0.39 GB.

Tried and left out: facebook/encodec_24khz (transformers EncodecModel: SEANet conv encoder and decoder around a 2-layer
LSTM and a residual vector quantizer, the sets' first LSTM) does not count: its forward reads tensor values (.item(),
aten._local_scalar_dense) and fails on meta inputs ("input (W: 24000) is too small"), so modelcost counts nothing at 1 s
of audio; RT-DETR and the other deformable-attention detectors, because modelcost leaves aten.grid_sampler_2d uncounted;
Longformer-base (at 512 tokens its linears alone are about 44 GMACs) and BigBird-RoBERTa-base (it falls back to full
attention, BERT-base, at 128 tokens; block-sparse only above 704 tokens, far over 15 GMACs); ViTPose-B (an estimated 17
GMACs at 256 x 192); Mamba-130m and RWKV-4-169m (transformers loops in Python over the tokens where their kernels are
missing and fetches those kernels from the Hub where it can, so a GPU may not run what was counted); Data2Vec-vision,
Hubert, UniSpeech and WavLM, RoBERTa and Cerebras-GPT-111M (close variants of beit_base, wav2vec2_base, bert_base and
gpt2); Res2NeXt, SKNet and SE-ResNeXt (close to res2net50_ish, resnest50_ish and resnext50_ish).
"""

from __future__ import annotations

import torch
from torch import nn


def _bn_act_conv(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> nn.Sequential:
    """timm's BnActConv2d (DPN's pre-activation unit): BN, ReLU, then a conv without bias (padding kernel // 2)."""
    return nn.Sequential(nn.BatchNorm2d(cin, eps=0.001), nn.ReLU(inplace=True),
                         nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False))


class _DualPathBlock(nn.Module):
    """timm's DualPathBlock (b=False): the input (a tensor, or the (residual, dense) pair concatenated) through
    pre-activated 1 x 1, grouped 3 x 3 (strided in a 'down' block) and 1 x 1 convs to num_1x1_c + inc channels; the
    first num_1x1_c are added to the residual path (ResNet's), the other inc are concatenated to the dense path
    (DenseNet's). A 'proj' or 'down' block first projects its input by a pre-activated 1 x 1 conv (stride 2 in
    'down') to num_1x1_c + 2 x inc, split into the two paths."""

    def __init__(self, cin: int, num_1x1_a: int, num_3x3_b: int, num_1x1_c: int, inc: int, groups: int,
                 block_type: str = "normal") -> None:
        super().__init__()
        self.num_1x1_c = num_1x1_c
        stride = 2 if block_type == "down" else 1
        self.proj = _bn_act_conv(cin, num_1x1_c + 2 * inc, 1, stride) if block_type != "normal" else None
        self.c1x1_a = _bn_act_conv(cin, num_1x1_a, 1)
        self.c3x3_b = _bn_act_conv(num_1x1_a, num_3x3_b, 3, stride, groups)
        self.c1x1_c = _bn_act_conv(num_3x3_b, num_1x1_c + inc, 1)

    def forward(self, x: tuple[torch.Tensor, torch.Tensor] | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x_in = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        if self.proj is None:
            assert isinstance(x, tuple)
            x_s1, x_s2 = x
        else:
            x_s = self.proj(x_in)
            x_s1, x_s2 = x_s[:, :self.num_1x1_c], x_s[:, self.num_1x1_c:]
        out = self.c1x1_c(self.c3x3_b(self.c1x1_a(x_in)))
        return x_s1 + out[:, :self.num_1x1_c], torch.cat([x_s2, out[:, self.num_1x1_c:]], dim=1)


class _DPN(nn.Module):
    """DPN-68 as timm's dpn68 builds it (small: a 3 x 3 stem to 10 channels, bw_factor 1, k_r 128, 32 groups)."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        k_r, groups, init = 128, 32, 10
        self.stem = nn.Sequential(nn.Conv2d(3, init, 3, 2, 1, bias=False), nn.BatchNorm2d(init, eps=0.001),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        blocks: list[nn.Module] = []
        cin = init
        for i, (depth, inc) in enumerate(zip((3, 4, 12, 3), (16, 32, 32, 64))):
            bw = 64 * 2 ** i  # 64, 128, 256, 512 (bw_factor 1)
            r = k_r * bw // 64  # 128, 256, 512, 1024
            blocks.append(_DualPathBlock(cin, r, r, bw, inc, groups, "proj" if i == 0 else "down"))
            cin = bw + 3 * inc
            for _ in range(2, depth + 1):
                blocks.append(_DualPathBlock(cin, r, r, bw, inc, groups, "normal"))
                cin += inc
        self.blocks = nn.Sequential(*blocks)
        self.bn_ac = nn.Sequential(nn.BatchNorm2d(cin, eps=0.001), nn.ReLU(inplace=True))  # timm's CatBnAct
        self.classifier = nn.Conv2d(cin, num_classes, 1)  # a 1 x 1 conv (with bias) after the pooling

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.bn_ac(torch.cat(self.blocks(self.stem(x)), dim=1))
        return torch.flatten(self.classifier(x.mean((2, 3), keepdim=True)), 1)


def dpn68_ish() -> nn.Module:
    # DPN-68 (Chen et al., "Dual Path Networks", NeurIPS 2017; timm's dpn68): a 3 x 3 stride-2 conv-BN-ReLU stem to 10
    # channels and a 3 x 3 stride-2 max pool; 3, 4, 12 and 3 dual path blocks (pre-activated BN-ReLU-conv: 1 x 1,
    # 3 x 3 in 32 groups, 1 x 1) with residual widths 64, 128, 256 and 512 and dense increments 16, 32, 32 and 64
    # (bottleneck widths 128 to 1024); each stage's first block projects its input (strided in stages 2-4); the two
    # paths concatenated, BN-ReLU, average pooling and a 1 x 1 conv classifier to 1000
    torch.manual_seed(0)
    return _DPN().eval()


class _PartialConvBlock(nn.Module):
    """FasterNet's MLPBlock (timm's fasternet Block, no layer scale): a partial conv (a 3 x 3 conv over the first
    quarter of the channels, the rest passed through, concatenated back) then a 1 x 1 conv to 2 x the width, BN,
    activation and a 1 x 1 conv back, added to the input."""

    def __init__(self, dim: int, act: type[nn.Module], n_div: int = 4, mlp_ratio: float = 2.0) -> None:
        super().__init__()
        self.dim_conv3 = dim // n_div
        self.partial_conv3 = nn.Conv2d(self.dim_conv3, self.dim_conv3, 3, 1, 1, bias=False)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Conv2d(dim, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act(),
                                 nn.Conv2d(hidden, dim, 1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2 = torch.split(x, [self.dim_conv3, x.shape[1] - self.dim_conv3], dim=1)
        return x + self.mlp(torch.cat((self.partial_conv3(x1), x2), 1))


def fasternet_t2_ish() -> nn.Module:
    # FasterNet-T2 (Chen et al., "Run, Don't Walk: Chasing Higher FLOPS for Faster Neural Networks", CVPR 2023;
    # timm's fasternet_t2): a 4 x 4 stride-4 conv-BN patch embedding to 96; 1, 2, 8 and 2 blocks at 96, 192, 384 and
    # 768 (a partial 3 x 3 conv over a quarter of the channels, then a 1 x 1 conv to 2 x, BN, ReLU, a 1 x 1 conv
    # back, residual), a 2 x 2 stride-2 conv-BN patch merging between stages; average pooling, a 1 x 1 conv to 1280,
    # ReLU and a 1000-class linear
    torch.manual_seed(0)
    dims, depths = (96, 192, 384, 768), (1, 2, 8, 2)
    layers: list[nn.Module] = [nn.Conv2d(3, dims[0], 4, 4, bias=False), nn.BatchNorm2d(dims[0])]
    for i, (dim, depth) in enumerate(zip(dims, depths)):
        if i > 0:
            layers += [nn.Conv2d(dims[i - 1], dim, 2, 2, bias=False), nn.BatchNorm2d(dim)]
        layers += [_PartialConvBlock(dim, nn.ReLU) for _ in range(depth)]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Conv2d(dims[-1], 1280, 1, bias=False), nn.ReLU(), nn.Flatten(),
               nn.Linear(1280, 1000)]
    return nn.Sequential(*layers).eval()


class _InceptionDWConv(nn.Module):
    """timm's InceptionDWConv2d: the channels split four ways (the last three an eighth each): the first passed
    through, the others through depthwise convs of 3 x 3, 1 x 11 and 11 x 1, concatenated back."""

    def __init__(self, dim: int, square: int = 3, band: int = 11, branch_ratio: float = 0.125) -> None:
        super().__init__()
        gc = int(dim * branch_ratio)
        self.dwconv_hw = nn.Conv2d(gc, gc, square, padding=square // 2, groups=gc)
        self.dwconv_w = nn.Conv2d(gc, gc, (1, band), padding=(0, band // 2), groups=gc)
        self.dwconv_h = nn.Conv2d(gc, gc, (band, 1), padding=(band // 2, 0), groups=gc)
        self.split_indexes = (dim - 3 * gc, gc, gc, gc)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_id, x_hw, x_w, x_h = torch.split(x, self.split_indexes, dim=1)
        return torch.cat((x_id, self.dwconv_hw(x_hw), self.dwconv_w(x_w), self.dwconv_h(x_h)), dim=1)


class _MetaNeXtBlock(nn.Module):
    """timm's MetaNeXtBlock: the inception depthwise token mixer, BN, a conv MLP (1 x 1 conv to mlp_ratio x, GELU,
    1 x 1 conv back, with biases), a layer scale (1e-6 at init), added to the input."""

    def __init__(self, dim: int, mlp_ratio: int) -> None:
        super().__init__()
        self.token_mixer = _InceptionDWConv(dim)
        self.norm = nn.BatchNorm2d(dim)
        self.mlp = nn.Sequential(nn.Conv2d(dim, mlp_ratio * dim, 1), nn.GELU(), nn.Conv2d(mlp_ratio * dim, dim, 1))
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(self.token_mixer(x))) * self.gamma.reshape(1, -1, 1, 1)


class _MlpHead(nn.Module):
    """timm's MlpClassifierHead: global average pooling, a linear to 3 x the width, GELU, LayerNorm (eps 1e-6) and a
    1000-class linear."""

    def __init__(self, dim: int, num_classes: int = 1000, mlp_ratio: int = 3) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.norm = nn.LayerNorm(mlp_ratio * dim, eps=1e-6)
        self.fc2 = nn.Linear(mlp_ratio * dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.norm(nn.functional.gelu(self.fc1(x.mean((2, 3))))))


def inceptionnext_tiny_ish() -> nn.Module:
    # InceptionNeXt-T (Yu et al., "InceptionNeXt: When Inception Meets ConvNeXt", CVPR 2024; timm's
    # inception_next_tiny): a 4 x 4 stride-4 conv-BN stem to 96; 3, 3, 9 and 3 MetaNeXt blocks at 96, 192, 384 and
    # 768 (an inception depthwise mixer: 3 x 3, 1 x 11 and 11 x 1 depthwise convs over an eighth of the channels
    # each, the rest untouched; BN; a conv MLP of ratio 4, 4, 4 and 3 with GELU; layer scale), a BN and 2 x 2
    # stride-2 conv before stages 2-4; an MLP head (pooling, linear to 2304, GELU, LayerNorm, linear to 1000)
    torch.manual_seed(0)
    dims, depths, ratios = (96, 192, 384, 768), (3, 3, 9, 3), (4, 4, 4, 3)
    layers: list[nn.Module] = [nn.Conv2d(3, dims[0], 4, 4), nn.BatchNorm2d(dims[0])]
    for i, (dim, depth, ratio) in enumerate(zip(dims, depths, ratios)):
        if i > 0:
            layers += [nn.BatchNorm2d(dims[i - 1]), nn.Conv2d(dims[i - 1], dim, 2, 2)]
        layers += [_MetaNeXtBlock(dim, ratio) for _ in range(depth)]
    return nn.Sequential(*layers, _MlpHead(dims[-1])).eval()


def deit_small_distilled() -> nn.Module:
    from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher

    # facebook/deit-small-distilled-patch16-224's config (Touvron et al., "Training data-efficient image transformers
    # & distillation through attention", ICML 2021): a 16 x 16 patch embedding to 384 (196 patches at 224 x 224),
    # a class and a distillation token (198 tokens), 12 pre-LayerNorm layers of 6 heads and MLP 1536 (GELU); two
    # 1000-class heads, on the class and on the distillation token, averaged
    config = DeiTConfig(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                        hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        layer_norm_eps=1e-12, image_size=224, patch_size=16, num_channels=3, qkv_bias=True,
                        encoder_stride=16, num_labels=1000)
    torch.manual_seed(0)
    return DeiTForImageClassificationWithTeacher(config).eval()


def clip_vit_b32_vision() -> nn.Module:
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    # openai/clip-vit-base-patch32's vision config (Radford et al., "Learning Transferable Visual Models From Natural
    # Language Supervision", ICML 2021): a 32 x 32 patch embedding (a stride-32 conv without bias) to 768, 49
    # patches and a class token at 224 x 224; a LayerNorm before the encoder ("pre_layrnorm"), 12 pre-LayerNorm
    # layers of 12 heads and MLP 3072 with quick GELU (x sigmoid(1.702 x)); the class token's LayerNorm and a linear
    # projection (no bias) to the 512-wide joint image-text space
    config = CLIPVisionConfig(hidden_size=768, intermediate_size=3072, projection_dim=512, num_hidden_layers=12,
                              num_attention_heads=12, num_channels=3, image_size=224, patch_size=32,
                              hidden_act="quick_gelu", layer_norm_eps=1e-5, attention_dropout=0.0)
    torch.manual_seed(0)
    return CLIPVisionModelWithProjection(config).eval()


def nystromformer_512() -> nn.Module:
    from transformers import NystromformerConfig, NystromformerModel

    # uw-madison/nystromformer-512's config (Xiong et al., "Nystromformer: A Nystrom-Based Algorithm for
    # Approximating Self-Attention", AAAI 2021): BERT-base's shape (12 post-LayerNorm layers at 768, 12 heads, FFN
    # 3072 with GELU (tanh)), each softmax attention approximated through 64 landmarks (segment means of the queries
    # and keys): softmax(Q K~^T) pinv(softmax(Q~ K~^T)) softmax(Q~ K^T) V, the pseudo-inverse by 6 Newton-Schulz
    # iterations, plus a depthwise conv (kernel 65 along the sequence) of the values; vocabulary 30,000, 510
    # positions, 2 token types
    config = NystromformerConfig(vocab_size=30000, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                 intermediate_size=3072, hidden_act="gelu_new", hidden_dropout_prob=0.1,
                                 attention_probs_dropout_prob=0.1, max_position_embeddings=510, type_vocab_size=2,
                                 segment_means_seq_len=64, num_landmarks=64, conv_kernel_size=65,
                                 inv_coeff_init_option=False, layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0,
                                 eos_token_id=2)
    torch.manual_seed(0)
    return NystromformerModel(config).eval()


def moonshine_tiny_encoder() -> nn.Module:
    from transformers import MoonshineConfig, MoonshineModel

    # UsefulSensors/moonshine-tiny's config (Jeffries et al., "Moonshine: Speech Recognition for Live Transcription
    # and Voice Commands", 2024), its encoder: raw 16 kHz audio in, no spectrogram: a kernel-127 stride-64 Conv1d to
    # 288 (no bias), tanh, GroupNorm(1); a kernel-7 stride-3 conv to 576 and a kernel-3 stride-2 conv back to 288,
    # each with GELU (41.6 frames a second); 6 pre-LayerNorm layers of 8 heads (rotary on 90% of each head's 36
    # dimensions, no attention biases) and MLP 1152 (GELU); a final LayerNorm
    config = MoonshineConfig(vocab_size=32768, hidden_size=288, intermediate_size=1152, encoder_num_hidden_layers=6,
                             decoder_num_hidden_layers=6, encoder_num_attention_heads=8,
                             decoder_num_attention_heads=8, encoder_num_key_value_heads=8,
                             decoder_num_key_value_heads=8, encoder_hidden_act="gelu", decoder_hidden_act="silu",
                             max_position_embeddings=512, attention_bias=False, attention_dropout=0.0,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "partial_rotary_factor": 0.9},
                             bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    torch.manual_seed(0)
    return MoonshineModel(config).get_encoder().eval()


def imagegpt_small() -> nn.Module:
    from transformers import ImageGPTConfig, ImageGPTForCausalImageModeling

    # openai/imagegpt-small's config (Chen et al., "Generative Pretraining from Pixels", ICML 2020): a GPT-2-style
    # decoder over pixels, each one of 512 color clusters (a 9-bit palette) plus a start token (513 tokens), 1,024
    # learned positions (a 32 x 32 image in raster order); 24 pre-norm layers at 512 (8 heads of 64, FFN 2048 with
    # quick GELU, Conv1D linears with biases), its LayerNorm without mean subtraction or bias (x / rms(x) x weight);
    # an untied 513-way head without bias. 128 tokens: the first four rows of pixels
    config = ImageGPTConfig(vocab_size=513, n_positions=1024, n_embd=512, n_layer=24, n_head=8,
                            activation_function="quick_gelu", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
                            layer_norm_epsilon=1e-5, tie_word_embeddings=False, use_cache=False)
    torch.manual_seed(0)
    return ImageGPTForCausalImageModeling(config).eval()
