"""A sixteenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was measured:
none is a calibration net, and none is in the first fifteen sets (resnet50, mobilenet_v2, efficientnet_ish,
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
fnet_base, canine_s, openai_gpt, speecht5_hifigan; dpn68_ish, fasternet_t2_ish, inceptionnext_tiny_ish,
deit_small_distilled, clip_vit_b32_vision, nystromformer_512, moonshine_tiny_encoder, imagegpt_small). Each is a
factory ``NAME()`` with random weights (torch seeded with 0 first, so every machine builds the same ones) in eval mode
that ``modelcost`` loads as ``benchmarks/predict_models_fresh15.py:NAME``. The three conv nets are written here
(torchvision and timm, whose versions they follow, cannot be imported on the development machine); the other five
come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its values
written out below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are modelcost's
static count at batch 1.

* tresnet_m_ish: TResNet-M (Ridnik et al., "TResNet: High Performance GPU-Dedicated Architecture", WACV 2021, as
  timm's tresnet_m builds it: a space-to-depth stem (each 4 x 4 block of pixels folded into 48 channels, a
  view-permute-view) and a 3 x 3 conv-BN-LeakyReLU to 64; 3 and 4 basic blocks at 64 and 128, 11 and 3 bottlenecks
  at 256 and 512 (x 4), LeakyReLU(1e-3) inside the blocks and ReLU after the sum, squeeze-excitation in the first
  three stages; every strided conv anti-aliased (the conv at stride 1, then a fixed 3 x 3 blur of stride 2 after
  reflection padding); the strided shortcuts an average pool and a 1 x 1 conv-BN; pooling and a 1000-class linear),
  input 224 x 224 (nn.Sequential's ``input``); 31,389,032 parameters (timm's 31.39 M), 5.74 GMACs (timm's 5.7 G): the
  blocks' 3 x 3 convs 70.5%, their 1 x 1 convs 25.5%, the shortcuts' 1 x 1 convs 2.4%, the stem conv 1.5% (on 48
  channels at 56 x 56: the space-to-depth fold leaves no conv at full resolution), blur, squeeze-excitation and
  classifier under 0.1% together. The sets' first space-to-depth stem, first fixed-filter (blur) anti-aliasing and
  first LeakyReLU.
* hardnet68_ish: HarDNet-68 (Chao et al., "HarDNet: A Low Memory Traffic Network", ICCV 2019, as the authors' hardnet68
  (torch.hub's PingoLH/Pytorch-HarDNet; timm has none) builds it: 3 x 3 stride-2 conv-BN-ReLU6 to 32, 3 x 3 to 64, a
  3 x 3 stride-2 max pool; five harmonic dense blocks of 8, 16, 16, 16 and 4 layers (growth 14, 16, 20, 40 and 160,
  multiplier 1.7): layer k a 3 x 3 conv-BN-ReLU6 over the concatenation of layers k - 1, k - 2, k - 4, ... (k - 2^n
  while 2^n divides k), wider (x 1.7 a link beyond the first) the more it reads, the block's output the concatenation
  of its odd layers and its last; each block followed by a 1 x 1 conv-BN-ReLU6 transition to 128, 256, 320, 640 and
  1024 and, after blocks 1, 3 and 4, a 2 x 2 max pool; pooling and a 1000-class linear), input 224 x 224
  (nn.Sequential's ``input``); 17,565,348 parameters (the paper's 17.6 M), 4.25 GMACs (the paper's 4.3 G): the blocks'
  3 x 3 convs 87.1%, the transitions 7.2%, the stem 5.7%, the classifier 0.02%. Dense connectivity thinned to powers
  of two: 35 concatenations (30 layer inputs of 2 to 5 earlier maps, 5 block outputs) of uneven widths (14 to 1,072
  channels), no 1 x 1 bottleneck inside the blocks (densenet121_ish has one in every layer).
* mixnet_l_ish: MixNet-L (Tan and Le, "MixConv: Mixed Depthwise Convolutional Kernels", BMVC 2019, as timm's mixnet_l
  builds it: MixNet-M's blocks at 1.3 x the channels (the same code gives 5,014,382 parameters at 1.0 x, timm's 5.01 M
  mixnet_m): a 3 x 3 stride-2 conv-BN-ReLU stem to 32 and a depthwise-separable block; 15 inverted residual blocks
  (expansion 3 or 6) whose depthwise conv is a mixed one, its channels split equally between kernels of 3, 5, 7 and 9
  (1 to 4 of them) and concatenated back, and whose 1 x 1 expansion and projection are often split in two groups the
  same way (split, two convs, concatenation); ReLU in the first two stages, swish and squeeze-excitation after; a
  1 x 1 conv-BN-ReLU to 1536, pooling and a 1000-class linear), input 224 x 224 (nn.Sequential's ``input``); 7,329,252
  parameters (timm's 7.33 M), 0.555 GMACs (the paper's 565 M): 1 x 1 convs 82.0% (expansions 49.0%, projections
  29.4%, the head conv 3.6%), the depthwise convs 15.5% (3 x 3 2.9%, 5 x 5 4.0%, 7 x 7 4.4%, 9 x 9 4.1%), the stem
  2.0%, squeeze-excitation 0.34%, the classifier 0.28%. The sets' first 9 x 9 depthwise convs, and 41 split-conv-
  concatenate groups of 2 to 4 thin convs (inceptionnext_tiny_ish mixes kernels in one token mixer a block, once).
* siglip_base_vision: transformers SiglipVisionModel at google/siglip-base-patch16-224's vision config (Zhai et al.,
  "Sigmoid Loss for Language Image Pre-Training", ICCV 2023: a 16 x 16 patch conv to 768, 196 patches and no class
  token, learned positions; 12 pre-LayerNorm layers of 12 heads and MLP 3072 with GELU (tanh); a final LayerNorm and a
  multihead attention pooling head: one learned probe attends over the 196 tokens through nn.MultiheadAttention, then
  LayerNorm and an MLP, residual), pixel_values 224 x 224, SDPA attention (the head's own nn.MultiheadAttention);
  92,884,224 parameters (the vision half of SigLIP B/16's 203 M), 17.71 GMACs: linears 94.0% (MLPs 62.7%, attention
  projections 31.3%), attention 4.0%, the pooling head 1.3% (its key-value projection over the 196 tokens), the
  patch conv 0.65%. ViT-B/16's encoder (vit_b16, beit_base) closed by attention pooling instead of a class token.
* speech2text_small_encoder: the encoder of transformers Speech2TextModel at facebook/s2t-small-librispeech-asr's
  config (Wang et al., "fairseq S2T: Fast Speech-to-Text Modeling with fairseq", AACL 2020: 80 log-mel filterbank
  features every 10 ms; two kernel-5 stride-2 Conv1d layers, 80 to 1024 and 512 to 512, each followed by a GLU that
  halves the channels (250 frames for 10 s); scaled sinusoidal positions; 12 pre-LayerNorm layers at 256, 4 heads,
  FFN 2048 with ReLU; a final LayerNorm), input_features 1,000 frames x 80 (10 s), its own bmm attention (no SDPA
  path); 17,503,232 parameters (of the whole model's 29.54 M with its decoder), 4.85 GMACs: linears 81.1% (FFNs
  64.9%, attention projections 16.2%), the two Conv1d 11.0%, attention 7.9%. The sets' first GLU subsampler and the
  first speech encoder on filterbank frames (whisper_encoder_ish subsamples with GELU convs, ast_audioset patches
  the spectrogram, the wav2vec2 family and moonshine_tiny_encoder take raw audio); FFNs 8 x the width.
* granite4_350m: transformers GraniteMoeHybridForCausalLM at ibm-granite/granite-4.0-350m's shape (IBM, Granite 4.0
  Nano, 2025: the dense, attention-only member of the Granite 4.0 family: every layer an attention one, no experts;
  28 pre-RMSNorm layers at 1024, 16 query heads of 64 and 4 key-value heads (GQA), RoPE, a SwiGLU MLP of 2048 (the
  class's "shared" MLP); muP scalars on the embeddings, the attention scores, the residual branches and the logits
  (scalar multiplies, at the config's defaults here: their values change no shape and no op); vocabulary 100,352, the
  head tied to the embedding), input_ids 128 tokens, use_cache off, SDPA attention; 352,379,904 parameters (the
  model card's 350 M), 46.04 GMACs: the layers' linears 69.4% (MLPs 49.0%, attention projections 20.4%), the tied
  head 28.6%, attention 2.0%. GQA with 4 key-value heads at 16 heads (enable_gqa in SDPA), and the sets' first muP
  scaling; the logits' division by the logits scale is a second 51 MB copy at batch 1.
* lilt_roberta_base: transformers LiltModel at SCUT-DLVCLab/lilt-roberta-en-base's config (Wang et al., "LiLT: A Simple
  yet Effective Language-Independent Layout Transformer for Structured Document Understanding", ACL 2022: RoBERTa-base's
  text stream (12 post-LayerNorm layers at 768, 12 heads, FFN 3072 with GELU; vocabulary 50,265, 514 positions) beside
  a layout stream a quarter as wide (192, 12 heads of 16, FFN 768) over each token's box (embeddings of x0, y0, x1,
  y1, width and height, 1,024 each, through a linear); in every layer the two streams' attention scores are summed
  (BiACM) before each stream's own softmax), input_ids 128 tokens (without a bbox input every box is (0, 0, 0, 0),
  the same compute), its own matmul attention (no SDPA path); 130,755,008 parameters (RoBERTa-base's 124,645,632 and
  the layout stream's 6.1 M), 11.95 GMACs: the text stream's linears 91.0% (FFNs 60.7%), the layout stream's 5.8%,
  attention 3.2%. A second, narrow transformer run in lockstep with a BERT-base one and coupled to it in every layer.
* videomae_small: transformers VideoMAEForVideoClassification at MCG-NJU/videomae-small-finetuned-kinetics's config
  (Tong et al., "VideoMAE: Masked Autoencoders are Data-Efficient Learners for Self-Supervised Video Pre-Training",
  NeurIPS 2022: a 2 x 16 x 16 tubelet embedding (a Conv3d of stride (2, 16, 16)) of 16 frames at 224 x 224 to 384,
  8 x 14 x 14 = 1,568 tokens, fixed sinusoidal positions; 12 pre-LayerNorm ViT-S layers of 6 heads and MLP 1536
  (GELU), q and v biases only; mean pooling, a LayerNorm and a 400-class (Kinetics-400) linear), pixel_values 16 x 3 x
  224 x 224, SDPA attention; 22,033,936 parameters (the paper's 22 M), 56.88 GMACs (the paper's 57 G per view):
  linears 58.5% (MLPs 39.0%, attention projections 19.5%), attention 39.8%, the tubelet Conv3d 1.6%. The sets' first
  video transformer (r3d_18_ish, x3d_m_ish and s3d_ish are 3D conv nets) and their longest self-attention: 1,568
  tokens, attention 40% of the MACs.

All eight build and run at batch 1 on the CPU and count completely (static analysis at batch 1 and 64: "every op
counted"; 3.4 to 5.6 s at batch 1 on the 2-core development machine), batch 64 exactly 64 x batch 1's MACs and FLOPs
for all eight, in transformers 5.24. lilt_roberta_base reads one input value, transformers' check for a padding token
at the ends of input_ids (it only decides whether to warn), which modelcost answers from made-up values and notes;
nothing is counted from it. Seven export to ONNX by the TorchScript exporter (opset 17, dynamic batch): tresnet_m_ish,
hardnet68_ish, mixnet_l_ish, siglip_base_vision, speech2text_small_encoder, lilt_roberta_base and videomae_small; one
by modelcost's fallback, the torch.export one (opset 20): granite4_350m (the TorchScript exporter stops on
"conversion of scaled_dot_product_attention not implemented if enable_gqa is True"). Each file passes the exporter's
check (ONNX Runtime's CPU provider at batch 1) with cosine 1.0 to torch (max absolute error: the three conv nets
2.6e-8 or less, the transformers models 3.9e-6 or less but granite4_350m's 7.4e-5 on logits of about 1; max relative
error 0.0008 or less but granite4_350m's 0.017, on its logits nearest zero). Each bench run (export, check and 3 s of
ONNX Runtime) takes 15 to 70 s, granite4_350m's 194 s. torch._dynamo.explain finds one graph and no break in each of
the eight. At batch 64 the largest peak activation modelcost counts is granite4_350m's 6.58 GB (fp32: its
64 x 128 x 100,352 logits, 3.29 GB, and their scaled copy), then videomae_small's 1.39 GB and mixnet_l_ish's 1.23 GB;
the rest stay under 0.42 GB.

Tried and left out: google/long-t5-tglobal-base's encoder (transformers LongT5EncoderModel with transient-global
attention at 512 tokens: 109.6 M parameters, 48.02 GMACs, counted completely), because torch._dynamo fails on it
(its fake-tensor run of the torch.cat of the local and the global position biases, shapes (1, 1, 12, 128, 384) and
(1, 4, 12, 128, 32), raises "Sizes of tensors must match"), so torch.compile cannot run what was counted;
laion/clap-htsat-unfused's audio tower (ClapAudioModelWithProjection: counts completely, one graph), because HTS-AT's
encoder is Swin-T's (96 to 768 channels, 2, 2, 6 and 2 layers) on a folded spectrogram, close to swin_tiny;
EXAONE-4.0-1.2B and Hunyuan-0.5B (no published config at hand to copy the shape from); SKNet, SelecSLS, ReXNet,
MobileOne, GhostNetV2 and EfficientNet-lite (close to resnest50_ish, vovnet39_ish, the MobileNet family, repvgg_a0_ish
and mobilenet_v1, ghostnet_ish and efficientnet_ish); Llama-3.2-1B and Falcon3-1B (LlamaForCausalLM, as smollm_135m
and smollm2_360m); YOSO (close to nystromformer_512).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _SpaceToDepth(nn.Module):
    """timm's SpaceToDepth (block 4): every 4 x 4 patch of pixels folded into 16 x the channels."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        x = x.view(n, c, h // 4, 4, w // 4, 4).permute(0, 3, 5, 1, 2, 4).contiguous()
        return x.view(n, c * 16, h // 4, w // 4)


class _BlurPool(nn.Module):
    """timm's BlurPool2d (filter size 3, stride 2): reflection padding of 1, then a fixed [1, 2, 1] x [1, 2, 1] / 16
    depthwise conv of stride 2 (a buffer, not a parameter)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        coeffs = torch.tensor([1.0, 2.0, 1.0])
        blur = (coeffs[:, None] * coeffs[None, :]) / 16.0
        self.channels = channels
        self.register_buffer("filt", blur[None, None, :, :].repeat(channels, 1, 1, 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), self.filt, stride=2, groups=self.channels)


def _conv_bn_act(cin: int, cout: int, kernel: int, stride: int = 1, act: nn.Module | None = None) -> nn.Sequential:
    """timm's ConvNormAct as TResNet uses it: a conv without bias (padding kernel // 2), BN, the activation; a
    stride-2 one runs its conv at stride 1 and anti-aliases after the activation (BlurPool2d)."""
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, 1 if stride == 2 else stride, kernel // 2, bias=False),
                               nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act)
    if stride == 2:
        layers.append(_BlurPool(cout))
    return nn.Sequential(*layers)


class _SE(nn.Module):
    """timm's SEModule: mean pooling, a 1 x 1 conv (with bias) to rd channels, ReLU, a 1 x 1 conv back, sigmoid."""

    def __init__(self, channels: int, rd: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(channels, rd, 1)
        self.fc2 = nn.Conv2d(rd, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean((2, 3), keepdim=True)))))


class _TResBasic(nn.Module):
    """TResNet's BasicBlock: 3 x 3 conv-BN-LeakyReLU(1e-3) (anti-aliased when strided), 3 x 3 conv-BN,
    squeeze-excitation (rd max(planes / 4, 64)), the shortcut added, ReLU."""

    expansion = 1

    def __init__(self, cin: int, planes: int, stride: int, downsample: nn.Module | None, use_se: bool) -> None:
        super().__init__()
        self.downsample = downsample
        self.conv1 = _conv_bn_act(cin, planes, 3, stride, nn.LeakyReLU(1e-3))
        self.conv2 = _conv_bn_act(planes, planes, 3)
        self.se = _SE(planes, max(planes // 4, 64)) if use_se else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.conv2(self.conv1(x))
        if self.se is not None:
            out = self.se(out)
        return F.relu(out + shortcut)


class _TResBottleneck(nn.Module):
    """TResNet's Bottleneck: 1 x 1 and 3 x 3 conv-BN-LeakyReLU(1e-3) (the 3 x 3 anti-aliased when strided),
    squeeze-excitation on the bottleneck width (rd max(planes / 2, 64)), a 1 x 1 conv-BN to 4 x, the shortcut, ReLU."""

    expansion = 4

    def __init__(self, cin: int, planes: int, stride: int, downsample: nn.Module | None, use_se: bool) -> None:
        super().__init__()
        self.downsample = downsample
        self.conv1 = _conv_bn_act(cin, planes, 1, 1, nn.LeakyReLU(1e-3))
        self.conv2 = _conv_bn_act(planes, planes, 3, stride, nn.LeakyReLU(1e-3))
        self.se = _SE(planes, max(planes * 4 // 8, 64)) if use_se else None
        self.conv3 = _conv_bn_act(planes, planes * 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.conv2(self.conv1(x))
        if self.se is not None:
            out = self.se(out)
        return F.relu(self.conv3(out) + shortcut)


def tresnet_m_ish() -> nn.Module:
    # TResNet-M (Ridnik et al., "TResNet: High Performance GPU-Dedicated Architecture", WACV 2021; timm's tresnet_m):
    # a space-to-depth stem (4 x 4 blocks to 48 channels) and a 3 x 3 conv-BN-LeakyReLU to 64; 3 and 4 basic blocks
    # at 64 and 128, 11 and 3 bottlenecks at 256 (x 4) and 512 (x 4); squeeze-excitation in the first three stages;
    # strided convs anti-aliased (stride-1 conv, then a fixed 3 x 3 blur of stride 2); shortcuts of strided stages an
    # average pool and a 1 x 1 conv-BN; average pooling and a 1000-class linear
    torch.manual_seed(0)
    layers: list[nn.Module] = [_SpaceToDepth(), _conv_bn_act(48, 64, 3, 1, nn.LeakyReLU(0.01))]
    cin = 64
    for block, planes, depth, stride, use_se in ((_TResBasic, 64, 3, 1, True), (_TResBasic, 128, 4, 2, True),
                                                 (_TResBottleneck, 256, 11, 2, True),
                                                 (_TResBottleneck, 512, 3, 2, False)):
        cout = planes * block.expansion
        downsample = None
        if stride != 1 or cin != cout:
            pool = [nn.AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False)] if stride == 2 else []
            downsample = nn.Sequential(*pool, _conv_bn_act(cin, cout, 1))
        for i in range(depth):
            layers.append(block(cin, planes, stride if i == 0 else 1, downsample if i == 0 else None, use_se))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers).eval()


def _hard_link(layer: int, base_ch: int, growth: int, grmul: float) -> tuple[int, int, list[int]]:
    """HarDBlock.get_link: layer k reads every layer k - 2^n (n >= 0, k divisible by 2^n); its width is growth x
    grmul^(links - 1), rounded to even; its input width the sum of the widths it reads."""
    if layer == 0:
        return base_ch, 0, []
    out_ch: float = growth
    link = []
    for i in range(10):
        dv = 2 ** i
        if layer % dv == 0:
            link.append(layer - dv)
            if i > 0:
                out_ch *= grmul
    out = int(int(out_ch + 1) / 2) * 2
    return out, sum(_hard_link(k, base_ch, growth, grmul)[0] for k in link), link


def _hard_conv(cin: int, cout: int, kernel: int = 3, stride: int = 1) -> nn.Sequential:
    """HarDNet's ConvLayer: a conv without bias (padding kernel // 2), BN, ReLU6."""
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU6(inplace=True))


class _HarDBlock(nn.Module):
    """A harmonic dense block: layer k a 3 x 3 conv-BN-ReLU6 over the concatenation of layers k - 1, k - 2, k - 4,
    ... (those it links to); the output the concatenation of the odd layers and the last."""

    def __init__(self, cin: int, growth: int, grmul: float, n_layers: int) -> None:
        super().__init__()
        self.links: list[list[int]] = []
        layers = []
        self.out_channels = 0
        for i in range(n_layers):
            outch, inch, link = _hard_link(i + 1, cin, growth, grmul)
            self.links.append(link)
            layers.append(_hard_conv(inch, outch))
            if i % 2 == 0 or i == n_layers - 1:
                self.out_channels += outch
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [x]
        for link, layer in zip(self.links, self.layers):
            tin = [outs[i] for i in link]
            outs.append(layer(torch.cat(tin, 1) if len(tin) > 1 else tin[0]))
        t = len(outs)
        return torch.cat([outs[i] for i in range(t) if i == t - 1 or i % 2 == 1], 1)


def hardnet68_ish() -> nn.Module:
    # HarDNet-68 (Chao et al., "HarDNet: A Low Memory Traffic Network", ICCV 2019; the authors' hardnet68, as
    # torch.hub's PingoLH/Pytorch-HarDNet builds it): 3 x 3 stride-2 conv-BN-ReLU6 to 32, 3 x 3 to 64, a max pool;
    # five harmonic dense blocks of 8, 16, 16, 16 and 4 layers (growth 14, 16, 20, 40 and 160, multiplier 1.7), each
    # followed by a 1 x 1 conv-BN-ReLU6 transition to 128, 256, 320, 640 and 1024 and (after blocks 1, 3, 4) a 2 x 2
    # max pool; average pooling and a 1000-class linear
    torch.manual_seed(0)
    layers: list[nn.Module] = [_hard_conv(3, 32, 3, 2), _hard_conv(32, 64), nn.MaxPool2d(3, 2, 1)]
    ch = 64
    for growth, n_layers, width, down in zip((14, 16, 20, 40, 160), (8, 16, 16, 16, 4), (128, 256, 320, 640, 1024),
                                             (True, False, True, True, False)):
        block = _HarDBlock(ch, growth, 1.7, n_layers)
        layers += [block, _hard_conv(block.out_channels, width, 1)]
        ch = width
        if down:
            layers.append(nn.MaxPool2d(2, 2))
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, 1000)]
    return nn.Sequential(*layers).eval()


def _make_divisible(v: float, divisor: int = 8) -> int:
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _split(channels: int, groups: int) -> list[int]:
    """timm's _split_channels: equal parts, the remainder to the first."""
    split = [channels // groups] * groups
    split[0] += channels - sum(split)
    return split


class _MixedConv(nn.Module):
    """timm's MixedConv2d: the channels split into len(kernels) parts, each through its own conv (no bias; depthwise
    or dense, padding k // 2), concatenated back. With kernels (1, 1) it is a 1 x 1 conv in two groups."""

    def __init__(self, cin: int, cout: int, kernels: tuple[int, ...], stride: int = 1, depthwise: bool = False) -> None:
        super().__init__()
        self.in_splits = _split(cin, len(kernels))
        self.convs = nn.ModuleList(nn.Conv2d(i, o, k, stride, k // 2, groups=i if depthwise else 1, bias=False)
                                   for k, i, o in zip(kernels, self.in_splits, _split(cout, len(kernels))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if len(self.convs) == 1:
            return self.convs[0](x)
        return torch.cat([c(t) for c, t in zip(self.convs, torch.split(x, self.in_splits, 1))], 1)


class _MixBlock(nn.Module):
    """timm's InvertedResidual with mixed convs: the expansion (1 x 1, in one or two groups), BN, activation; the
    mixed depthwise conv (kernels 3 to 9 over equal channel splits), BN, activation; squeeze-excitation (rd
    round(in x se), the block's activation); the projection (one or two groups), BN; the input added when the shape
    allows."""

    def __init__(self, cin: int, cout: int, kernels: tuple[int, ...], stride: int, exp: int, exp_groups: int,
                 pw_groups: int, se: float, act: type[nn.Module]) -> None:
        super().__init__()
        mid = _make_divisible(cin * exp)
        self.skip = stride == 1 and cin == cout
        self.conv_pw = _MixedConv(cin, mid, (1,) * exp_groups)
        self.bn1 = nn.Sequential(nn.BatchNorm2d(mid), act())
        self.conv_dw = _MixedConv(mid, mid, kernels, stride, depthwise=True)
        self.bn2 = nn.Sequential(nn.BatchNorm2d(mid), act())
        if se:
            rd = round(mid * se / exp)
            self.se: nn.Module | None = nn.Sequential(nn.Conv2d(mid, rd, 1), act(), nn.Conv2d(rd, mid, 1),
                                                      nn.Sigmoid())
        else:
            self.se = None
        self.conv_pwl = _MixedConv(mid, cout, (1,) * pw_groups)
        self.bn3 = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.bn2(self.conv_dw(self.bn1(self.conv_pw(x))))
        if self.se is not None:
            out = out * self.se(out.mean((2, 3), keepdim=True))
        out = self.bn3(self.conv_pwl(out))
        return out + x if self.skip else out


class _DSBlock(nn.Module):
    """timm's DepthwiseSeparableConv: 3 x 3 depthwise conv, BN, ReLU, 1 x 1 conv, BN, the input added."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(cin, cin, 3, 1, 1, groups=cin, bias=False)
        self.bn1 = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU())
        self.conv_pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.bn2(self.conv_pw(self.bn1(self.conv_dw(x))))
        return out + x if self.skip else out


def _mixnet(multiplier: float) -> nn.Module:
    def ch(c: int) -> int:
        return _make_divisible(c * multiplier)

    # timm's _gen_mixnet_m arch_def: (repeats, kernels, stride, expansion, out, exp groups, pw groups, se, swish)
    stages = [[(1, (3, 5, 7), 2, 6, 32, 2, 2, 0.0, False), (1, (3,), 1, 3, 32, 2, 2, 0.0, False)],
              [(1, (3, 5, 7, 9), 2, 6, 40, 1, 1, 0.5, True), (3, (3, 5), 1, 6, 40, 2, 2, 0.5, True)],
              [(1, (3, 5, 7), 2, 6, 80, 1, 1, 0.25, True), (3, (3, 5, 7, 9), 1, 6, 80, 2, 2, 0.25, True)],
              [(1, (3,), 1, 6, 120, 1, 1, 0.5, True), (3, (3, 5, 7, 9), 1, 3, 120, 2, 2, 0.5, True)],
              [(1, (3, 5, 7, 9), 2, 6, 200, 1, 1, 0.5, True), (3, (3, 5, 7, 9), 1, 6, 200, 1, 2, 0.5, True)]]
    stem = ch(24)
    layers: list[nn.Module] = [nn.Conv2d(3, stem, 3, 2, 1, bias=False), nn.BatchNorm2d(stem), nn.ReLU(),
                               # stage 0: a depthwise-separable block (3 x 3 depthwise, BN, ReLU, 1 x 1, BN), residual
                               _DSBlock(stem, ch(24))]
    cin = ch(24)
    for stage in stages:
        for repeats, kernels, stride, exp, out, eg, pg, se, swish in stage:
            for i in range(repeats):
                layers.append(_MixBlock(cin, ch(out), kernels, stride if i == 0 else 1, exp, eg, pg, se,
                                        nn.SiLU if swish else nn.ReLU))
                cin = ch(out)
    layers += [nn.Conv2d(cin, 1536, 1, bias=False), nn.BatchNorm2d(1536), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
               nn.Flatten(), nn.Linear(1536, 1000)]
    return nn.Sequential(*layers)


def mixnet_l_ish() -> nn.Module:
    # MixNet-L (Tan and Le, "MixConv: Mixed Depthwise Convolutional Kernels", BMVC 2019; timm's mixnet_l: MixNet-M's
    # blocks at 1.3 x the channels): a 3 x 3 stride-2 conv-BN-ReLU stem to 32, a depthwise-separable block, 15
    # inverted residual blocks whose depthwise conv mixes kernels of 3 to 9 over equal channel splits and whose
    # 1 x 1 convs are often split in two groups (ReLU in the first stages, swish and squeeze-excitation after), a
    # 1 x 1 conv-BN-ReLU to 1536, pooling and a 1000-class linear
    torch.manual_seed(0)
    return _mixnet(1.3).eval()


def siglip_base_vision() -> nn.Module:
    from transformers import SiglipVisionConfig, SiglipVisionModel

    # google/siglip-base-patch16-224's vision config (Zhai et al., "Sigmoid Loss for Language Image Pre-Training",
    # ICCV 2023): a 16 x 16 patch conv to 768 (196 patches at 224 x 224, no class token), learned positions, 12
    # pre-LayerNorm layers of 12 heads and MLP 3072 with GELU (tanh); a final LayerNorm and a multihead attention
    # pooling head (one learned probe attending over the 196 tokens, LayerNorm and an MLP, residual)
    config = SiglipVisionConfig(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                                num_channels=3, image_size=224, patch_size=16, hidden_act="gelu_pytorch_tanh",
                                layer_norm_eps=1e-6, attention_dropout=0.0, vision_use_head=True)
    torch.manual_seed(0)
    return SiglipVisionModel(config).eval()


def speech2text_small_encoder() -> nn.Module:
    from transformers import Speech2TextConfig, Speech2TextModel

    # facebook/s2t-small-librispeech-asr's config (Wang et al., "fairseq S2T: Fast Speech-to-Text Modeling with
    # fairseq", AACL 2020), its encoder: 80 log-mel filterbank features a 10 ms frame; two kernel-5 stride-2 Conv1d
    # layers (80 to 1024, then 512 to 512), each followed by a GLU over the channels (4 x fewer frames); scaled
    # sinusoidal positions; 12 pre-LayerNorm layers at 256, 4 heads, FFN 2048 with ReLU; a final LayerNorm
    config = Speech2TextConfig(vocab_size=10000, d_model=256, encoder_layers=12, encoder_ffn_dim=2048,
                               encoder_attention_heads=4, decoder_layers=6, decoder_ffn_dim=2048,
                               decoder_attention_heads=4, activation_function="relu", dropout=0.1,
                               attention_dropout=0.1, activation_dropout=0.1, scale_embedding=True,
                               max_source_positions=6000, max_target_positions=1024, num_conv_layers=2,
                               conv_kernel_sizes=[5, 5], conv_channels=1024, input_feat_per_channel=80,
                               input_channels=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                               decoder_start_token_id=2)
    torch.manual_seed(0)
    return Speech2TextModel(config).get_encoder().eval()


def granite4_350m() -> nn.Module:
    from transformers import GraniteMoeHybridConfig, GraniteMoeHybridForCausalLM

    # ibm-granite/granite-4.0-350m's shape (IBM, "Granite 4.0 Nano", 2025: the dense, attention-only member of the
    # Granite 4.0 family, GraniteMoeHybridForCausalLM with every layer an attention one and no experts): 28
    # pre-RMSNorm layers at 1024, 16 query heads of 64 and 4 key-value heads (GQA), RoPE, a SwiGLU MLP of 2048 (the
    # "shared" MLP), the muP scalars (embedding, attention, residual and logits multipliers: scalar multiplies, at
    # the config's defaults here, whatever their trained values); vocabulary 100,352, the head tied to the embedding
    config = GraniteMoeHybridConfig(vocab_size=100352, hidden_size=1024, intermediate_size=2048,
                                    shared_intermediate_size=2048, num_hidden_layers=28, num_attention_heads=16,
                                    num_key_value_heads=4, hidden_act="silu", max_position_embeddings=32768,
                                    rms_norm_eps=1e-5, tie_word_embeddings=True, attention_bias=False,
                                    num_local_experts=0, position_embedding_type="rope",
                                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                                    layer_types=["attention"] * 28, use_cache=False, pad_token_id=100256,
                                    bos_token_id=100257, eos_token_id=100257)
    torch.manual_seed(0)
    return GraniteMoeHybridForCausalLM(config).eval()


def lilt_roberta_base() -> nn.Module:
    from transformers import LiltConfig, LiltModel

    # SCUT-DLVCLab/lilt-roberta-en-base's config (Wang et al., "LiLT: A Simple yet Effective Language-Independent
    # Layout Transformer for Structured Document Understanding", ACL 2022): RoBERTa-base's text stream (12
    # post-LayerNorm layers at 768, 12 heads, FFN 3072 with GELU; vocabulary 50,265, 514 positions) beside a layout
    # stream a quarter as wide (192, the same 12 heads, FFN 768) over the tokens' boxes (2D position embeddings of
    # x0, y0, x1, y1, width and height, 1,024 each); in every layer the two streams' attention scores are summed
    # (BiACM) before each stream's own softmax. Without a bbox input every box is (0, 0, 0, 0)
    config = LiltConfig(vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                        intermediate_size=3072, hidden_act="gelu", hidden_dropout_prob=0.1,
                        attention_probs_dropout_prob=0.1, max_position_embeddings=514, type_vocab_size=1,
                        layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2, channel_shrink_ratio=4,
                        max_2d_position_embeddings=1024)
    torch.manual_seed(0)
    return LiltModel(config).eval()


def videomae_small() -> nn.Module:
    from transformers import VideoMAEConfig, VideoMAEForVideoClassification

    # MCG-NJU/videomae-small-finetuned-kinetics's config (Tong et al., "VideoMAE: Masked Autoencoders are
    # Data-Efficient Learners for Self-Supervised Video Pre-Training", NeurIPS 2022): a 2 x 16 x 16 tubelet
    # embedding (a Conv3d) of 16 frames at 224 x 224 to 384 (8 x 14 x 14 = 1,568 tokens), fixed sinusoidal
    # positions, 12 pre-LayerNorm ViT-S layers of 6 heads and MLP 1536 (GELU), q and v biases only; mean pooling, a
    # LayerNorm and a 400-class (Kinetics-400) linear
    config = VideoMAEConfig(image_size=224, patch_size=16, num_channels=3, num_frames=16, tubelet_size=2,
                            hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                            hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                            layer_norm_eps=1e-12, qv_bias=True, use_mean_pooling=True, num_labels=400)
    torch.manual_seed(0)
    return VideoMAEForVideoClassification(config).eval()
