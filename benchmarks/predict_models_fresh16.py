"""A seventeenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written before any of it was
measured: none is a calibration net, and none is in the first sixteen sets (resnet50, mobilenet_v2, efficientnet_ish,
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
deit_small_distilled, clip_vit_b32_vision, nystromformer_512, moonshine_tiny_encoder, imagegpt_small; tresnet_m_ish,
hardnet68_ish, mixnet_l_ish, siglip_base_vision, speech2text_small_encoder, granite4_350m, lilt_roberta_base,
videomae_small). Each is a factory ``NAME()`` with random weights (torch seeded with 0 first, so every machine builds
the same ones) in eval mode that ``modelcost`` loads as ``benchmarks/predict_models_fresh16.py:NAME``. The three conv
nets are written here (torchvision and timm, whose versions they follow, cannot be imported on the development machine);
the other five come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its
values written out below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are
modelcost's static count at batch 1.

* shufflenet_v1_g3_ish: ShuffleNet V1 1.0x with 3 groups (Zhang et al., "ShuffleNet: An Extremely Efficient
  Convolutional Neural Network for Mobile Devices", CVPR 2018, as Megvii's ShuffleNet-Series ShuffleNetV1(group=3,
  model_size="1.0x") builds it: a 3 x 3 stride-2 conv-BN-ReLU to 24 and a max pool; 4, 8 and 4 shuffle units at 240,
  480 and 960: a 1 x 1 conv in 3 groups to a quarter of the width (one group in the first unit), BN-ReLU, the channel
  shuffle (a reshape-permute-reshape), a 3 x 3 depthwise conv-BN, a 1 x 1 conv in 3 groups, BN; the input added, or
  in each stage's first (strided) unit concatenated after a 3 x 3 average pool; a 7 x 7 average pool and a 1000-class
  linear without bias), input 224 x 224 (nn.Sequential's ``input``); 1,864,728 parameters (Megvii's 1.9 M),
  0.1375 GMACs (Megvii's 138 M FLOPs, the paper's 140 M, both multiply-adds): the grouped 1 x 1 convs 87.3% (those
  before the shuffle 46.5%, after it 40.8%), the stem conv 5.9%, the first unit's dense 1 x 1 conv 3.3%, the
  depthwise convs 2.8%, the classifier 0.7%. The sets' first grouped pointwise convs: 31 of them, 3 groups each, with
  the shuffle between (shufflenet_v2_ish shuffles dense 1 x 1 branches after a split), and the first shortcut
  concatenated from an average pool.
* replknet31b_ish: RepLKNet-31B (Ding et al., "Scaling Up Your Kernels to 31x31: Revisiting Large Kernel Design in
  CNNs", CVPR 2022, as the authors' create_RepLKNet31B builds it before re-parameterization, the form its released
  checkpoints hold: a stem of a 3 x 3 stride-2 conv, a 3 x 3 depthwise conv, a 1 x 1 conv and a 3 x 3 stride-2
  depthwise conv, each BN-ReLU, to 128; four stages of 2, 2, 18 and 2 pairs at 128, 256, 512 and 1024, each pair a
  RepLK block (BN, a 1 x 1 conv-BN-ReLU, a depthwise conv-BN of kernel 31, 29, 27 or 13 summed with a parallel 5 x 5
  depthwise conv-BN, ReLU, a 1 x 1 conv-BN, residual) and a ConvFFN (BN, a 1 x 1 conv-BN to 4 x, GELU, a 1 x 1
  conv-BN back, residual); transitions a 1 x 1 conv-BN-ReLU and a 3 x 3 stride-2 depthwise conv-BN-ReLU; BN, pooling
  and a 1000-class linear), input 224 x 224 (the forward's ``x``); 79,864,168 parameters (the paper's 79 M), 15.43
  GMACs (the paper's 15.3 G): the ConvFFNs' 1 x 1 convs 63.9%, the RepLK blocks' 1 x 1 convs 16.0%, the large
  depthwise kernels 15.8% (27 x 27 at 14 x 14 8.5%, 31 x 31 at 56 x 56 5.0%, 29 x 29 at 28 x 28 2.2%, 13 x 13 0.1%),
  the transitions' 1 x 1 convs 2.0%, the stem 1.7%, the 5 x 5 depthwise convs 0.5%, the rest under 0.03%. The sets'
  largest 2D kernels by far: 24 depthwise convs of 13 x 13 to 31 x 31 (alexnet_ish's dense 11 x 11 stem and
  mixnet_l_ish's 9 x 9 depthwise convs were the largest), each beside a 5 x 5 one on the same input.
* efficientvit_b1_ish: EfficientViT-B1 (Cai et al., "EfficientViT: Lightweight Multi-Scale Attention for
  High-Resolution Dense Prediction", ICCV 2023, as timm's efficientvit_b1 (MIT HAN Lab's model) builds it: a 3 x 3
  stride-2 conv-BN-hard-swish to 16 and a residual depthwise-separable block; MBConv stages (1 x 1 expansion x 4,
  3 x 3 depthwise, 1 x 1 projection, hard-swish) of 2 and 3 blocks at 32 and 64; at 128 and 256 a strided MBConv and
  3 and 4 EfficientViT blocks, each a residual LiteMLA (a 1 x 1 conv to q, k and v in heads of 16; a second scale of
  them by a 5 x 5 depthwise conv and a 1 x 1 conv in 3 x heads groups; ReLU linear attention per head,
  ReLU(q) (ReLU(k)^T [v, 1]) normalized by the last column, in fp32 whatever the model's dtype; a 1 x 1 conv-BN) and a
  residual MBConv; a 1 x 1 conv-BN-hard-swish to 1536, pooling, a linear to 1600, LayerNorm, hard-swish and a
  1000-class linear), input 224 x 224 (nn.Sequential's ``input``); 9,102,024 parameters (timm's 9.1 M), 0.519 GMACs
  (the paper's 0.52 G): the MBConvs' 1 x 1 convs 64.3%, LiteMLA's qkv convs 13.0% and projections 8.7%, the head conv
  3.7%, the 3 x 3 depthwise convs 2.9%, the aggregation's 5 x 5 depthwise convs 1.8% and grouped 1 x 1 convs 1.2%, the
  linear attention's matmuls 1.6%, the stem and its block 2.0%, the head's linears 0.8%. The sets' first ReLU
  (kernelized) linear attention (keys times values first, so linear in the 784 and 196 tokens; the matmuls upcast to
  fp32 and back), and multi-scale tokens aggregated by grouped convs.
* mgp_str_base: transformers MgpstrForSceneTextRecognition at alibaba-damo/mgp-str-base's config (Wang et al.,
  "Multi-Granularity Prediction for Scene Text Recognition", ECCV 2022: a ViT-B over 4 x 4 patches of a 32 x 128 word
  crop (256 patches and a class token, learned positions; 12 pre-LayerNorm layers at 768, 12 heads, MLP 3072 with
  GELU); three A^3 modules (LayerNorm; a 1 x 1 conv in 8 groups and a 1 x 1 conv to 27 attention maps over the 257
  tokens, softmax; the tokens through a second grouped 1 x 1 conv, the 27 weighted sums by einsum, LayerNorm) feeding
  a character head (38 classes), a BPE head (GPT-2's 50,257) and a WordPiece head (BERT's 30,522), 27 positions
  each), pixel_values 32 x 128, its own matmul attention (no SDPA path); 147,952,305 parameters (the paper's 148 M),
  24.88 GMACs: the MLPs 58.5%, attention projections 29.2%, attention 4.9%, the BPE and WordPiece heads 6.7%, the A^3
  modules 0.6%, the patch conv 0.04%. The sets' first scene-text recognizer: a wide, short input (32 x 128) cut into
  4 x 4 patches, and three heads of 27 positions over vocabularies up to 50,257.
* granite_speech_encoder: the speech encoder of transformers GraniteSpeechForConditionalGeneration
  (GraniteSpeechCTCEncoder) at ibm-granite/granite-speech-3.3-2b's encoder config (Saon et al., "Granite-speech:
  open-source speech-aware LLMs with strong English ASR capabilities", 2025: 80 log-mel bins every 10 ms, two frames
  stacked (160 features, 50 a second) through a linear to 1024; 16 Conformer blocks: a half-step FFN (4096, SiLU),
  block attention over 200-frame blocks (8 heads of 128; Shaw relative positions, an embedding of the clamped
  distance contracted with q by einsum, passed as SDPA's float mask, the model pinning SDPA to its math backend; the
  last, partial block padded and masked), a conv module (LayerNorm, a 1 x 1 Conv1d to 4096, GLU, a depthwise kernel
  15, BN, SiLU, a 1 x 1 Conv1d), a second half-step FFN, LayerNorm; after block 8 a 348-way CTC softmax projected back
  and added (self-conditioning)), hidden_states 300 frames x 160 (6 s: a full block and a half one); 440,168,796
  parameters (the config's 16 blocks of 27.5 M; the model card gives only the whole model's), 140.24 GMACs: the
  half-step FFNs 57.4%, the conv modules' 1 x 1 convs 21.5% (their depthwise convs 0.1%), attention projections
  17.9%, attention 1.9%, the relative-position einsum 0.9%, the CTC projections 0.15%. The sets' first block-local
  attention over audio and first self-conditioned CTC inside an encoder; 1 x 1 Conv1d beside the linears.
* bigbird_roberta_base: transformers BigBirdModel at google/bigbird-roberta-base's config (Zaheer et al., "Big Bird:
  Transformers for Longer Sequences", NeurIPS 2020: RoBERTa-base's shape, 12 post-LayerNorm layers at 768, 12 heads, FFN
  3072 with GELU (tanh), vocabulary 50,358, 4,096 positions, a pooler; block-sparse attention in blocks of 64 tokens,
  each query block attending to its 3 neighbouring key blocks, the 2 global (first and last) ones and 3 random ones (in
  eval transformers sets their indices to 0, the first block, rather than drawing them: the same gathers and MACs), the
  first and last query blocks to all), input_ids 1,024 tokens (16 blocks; at 704 or fewer transformers falls back to
  full attention), its own block-sparse attention (bmm and einsum over gathered blocks); 127,468,800 parameters (the
  model card's 128 M), 97.72 GMACs: the FFNs 59.3%, attention projections 29.7%, the block-sparse attention 11.0% (bmm
  9.1%, einsum 1.9%; full attention at 1,024 tokens would be 1.8 x that), the pooler under 0.01%. The sets' first
  block-sparse attention, and (with perceiver_io_language) their first text input longer than 256 tokens.
* perceiver_io_language: transformers PerceiverForMaskedLM at deepmind/language-perceiver's config (Jaegle et al.,
  "Perceiver IO: A General Architecture for Structured Inputs & Outputs", ICLR 2022: UTF-8 bytes (vocabulary 262)
  embedded at 768 with learned positions; a cross-attention from 256 learned latents of 1280 to the 2,048 inputs (8
  heads, q and k 256 wide, v 1280); 26 self-attention layers over the latents (8 heads, q and k 256, v 1280, MLP 1280
  with GELU); a decoder cross-attention from 2,048 position queries back to the latents and the logits against the
  byte embedding), inputs 2,048 bytes, its own matmul attention (no SDPA path); 201,108,230 parameters (the paper's
  201 M; the config class's defaults, q and k as wide as v, would build 269 M, so qk_channels=256 and
  v_channels=1280 are set as transformers' conversion of the checkpoint sets them), 60.47 GMACs: the latent layers
  83.7% (projections 43.3%, MLPs 36.1%, attention 4.3%), the decoder's cross-attention 8.1% (attention 0.9%), the
  encoder's 7.5% (attention 1.3%), the byte logits 0.7%. The sets' first latent bottleneck: 2,048 inputs and outputs
  read and written by cross-attention, and a 26-layer stack over 256 latents whatever the input length.
* timesformer_base: transformers TimesformerForVideoClassification at facebook/timesformer-base-finetuned-k400's config
  (Bertasius et al., "Is Space-Time Attention All You Need for Video Understanding?", ICML 2021: 8 frames at 224 x
  224, a 16 x 16 patch conv per frame to 768, 8 x 196 tokens and a class token, learned space and time embeddings; 12
  layers of divided space-time attention: a temporal attention over the 8 frames of each patch and a linear, then a
  spatial attention over each frame's 196 patches and the class token (repeated per frame, averaged back), 12 heads,
  then an MLP of 3072 with GELU; a LayerNorm and a 400-class (Kinetics-400) linear), pixel_values 8 x 3 x 224 x 224,
  its own matmul attention (no SDPA path); 121,566,352 parameters (the paper's 121.4 M), 195.83 GMACs (the paper's
  196 G a view): the MLPs 45.4%, the temporal attention's projections (qkv, out and the extra linear) 28.3%, the
  spatial attention's 22.8%, spatial attention 2.9%, temporal attention 0.1%, the patch conv 0.5%. The sets' first
  divided space-time attention: every layer attends twice over differently reshaped token sets (196 sequences of 8,
  then 8 of 197), and their largest model by MACs (ast_audioset's 130.5 G was).

All eight build and run at batch 1 on the CPU and count completely (static analysis at batch 1 and 64: "every op
counted"; 0.2 to 2.1 s at batch 1 on the 2-core development machine), batch 64 exactly 64 x batch 1's MACs and FLOPs for
all eight, in transformers 5.24 and torch 2.13. bigbird_roberta_base reads one input value, transformers' check for a
padding token in input_ids without an attention mask (it only decides whether to warn), which modelcost answers from
made-up values and notes; nothing is counted from it. Its random attention blocks are not drawn in eval (transformers'
numpy code returns indices of 0 from the shapes alone), so every run and every count gathers the same blocks. Seven
export to ONNX by the TorchScript exporter (opset 17, dynamic batch): shufflenet_v1_g3_ish, replknet31b_ish,
efficientvit_b1_ish, mgp_str_base, granite_speech_encoder, perceiver_io_language and timesformer_base; one by
modelcost's fallback, the torch.export one (opset 20): bigbird_roberta_base (the TorchScript exporter stops on
"BigBirdModel.forward() got multiple values for argument 'use_cache'"). Each file passes the exporter's check (ONNX
Runtime's CPU provider at batch 1) and agrees with torch at cosine 1.0 in a bench run with the ort-cpu backend (max
absolute error: the three conv nets 7.5e-7 or less, the transformers models 3.8e-6 or less; max relative error 0.00064
or less). Each bench run (export, check and 3 s of ONNX Runtime) takes 7 to 30 s for the conv nets, 39 to 135 s for the
others (bigbird_roberta_base's the longest, its torch.export fallback included). torch._dynamo.explain finds one graph
and no break in each of the eight (bigbird_roberta_base's numpy-built block indices enter the graph as constants). At
batch 64 the largest peak activation modelcost counts is bigbird_roberta_base's 5.61 GB, then timesformer_base's 3.45 GB
and perceiver_io_language's 2.82 GB; the rest stay under 0.93 GB (replknet31b_ish's).

Tried and left out: allenai/longformer-base-4096 (transformers LongformerModel, the sliding-window attention this set
wanted, at 1,024 tokens), because torch._dynamo breaks its graph on ``is_index_global_attn.flatten().any().item()``
(Tensor.item() with capture_scalar_outputs off: 4 graphs and 3 breaks on a 2-layer copy), so torch.compile would not run
one graph; Perceiver at PerceiverConfig's defaults (269 M parameters, q and k 1280 wide), which is not the released
checkpoint's shape (qk_channels 256 as above); granite_speech_encoder at 10 s (500 frames, 229.7 GMACs, counted
completely), cut to 6 s to keep its MACs near the sets' others; BioGPT and OPT-350m (24 x 1024 decoders of the fairseq
line, close to xglm_564m and opt_125m); DiffLlama-0.3B and Doge-320M (differential and dynamic-mask attention: no
published config at hand to copy the shape from, and DiffLlamaConfig's defaults, 16 layers at 2048, are not a 0.3 B
shape); nvidia/parakeet-ctc-0.6b and its FastConformer siblings (over this set's 0.5 B parameters); ViTPose-B (a ViT-B
backbone at 192 tokens, close to vit_b16); Florence-2's DaViT vision tower (its 768 x 768 input puts it, by estimate,
far over the sets' MACs and batch-64 activations); ResNet-50-D, EfficientNet-B3, ConvNeXt-Atto, RepGhostNet, Res2NeXt,
SKNet, MobileOne and GhostNetV2 (close to resnet50, efficientnet_ish, convnext_ish, ghostnet_ish, res2net50_ish,
resnest50_ish and repvgg_a0_ish); WavLM, UniSpeech-SAT and Data2Vec-Audio (close to wav2vec2_base).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _ShuffleV1Block(nn.Module):
    """ShuffleNet V1's unit (Megvii's ShuffleV1Block): a grouped 1 x 1 conv-BN-ReLU to a quarter of the output
    width (one group in the network's first unit), the channel shuffle, a 3 x 3 depthwise conv-BN (strided in a
    stage's first unit), a grouped 1 x 1 conv-BN; stride 1: the input added, ReLU; stride 2: concatenated after a
    3 x 3 average pool of the input (so the branch makes the output width less the input's), ReLU on the branch."""

    def __init__(self, cin: int, cout: int, group: int, first_group: bool, stride: int) -> None:
        super().__init__()
        mid = cout // 4
        self.stride, self.group = stride, group
        outputs = cout - cin if stride == 2 else cout
        self.branch_main_1 = nn.Sequential(
            nn.Conv2d(cin, mid, 1, 1, 0, groups=1 if first_group else group, bias=False), nn.BatchNorm2d(mid),
            nn.ReLU(inplace=True), nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid))
        self.branch_main_2 = nn.Sequential(nn.Conv2d(mid, outputs, 1, 1, 0, groups=group, bias=False),
                                           nn.BatchNorm2d(outputs))
        self.branch_proj = nn.AvgPool2d(3, 2, 1) if stride == 2 else None

    def channel_shuffle(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        x = x.reshape(n, c // self.group, self.group, h, w).permute(0, 2, 1, 3, 4)
        return x.reshape(n, c, h, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.branch_main_2(self.channel_shuffle(self.branch_main_1(x)))
        if self.branch_proj is None:
            return F.relu(out + x)
        return torch.cat((self.branch_proj(x), F.relu(out)), 1)


def shufflenet_v1_g3_ish() -> nn.Module:
    # ShuffleNet V1 1.0x, 3 groups (Zhang et al., "ShuffleNet: An Extremely Efficient Convolutional Neural Network
    # for Mobile Devices", CVPR 2018; Megvii's ShuffleNet-Series ShuffleNetV1(group=3, model_size="1.0x")): a 3 x 3
    # stride-2 conv-BN-ReLU to 24, a 3 x 3 stride-2 max pool; 4, 8 and 4 shuffle units at 240, 480 and 960 (each
    # stage's first strided); a 7 x 7 average pool and a 1000-class linear without bias
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Conv2d(3, 24, 3, 2, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU(inplace=True),
                               nn.MaxPool2d(3, 2, 1)]
    cin = 24
    for stage, (repeats, cout) in enumerate(zip((4, 8, 4), (240, 480, 960))):
        for i in range(repeats):
            layers.append(_ShuffleV1Block(cin, cout, 3, stage == 0 and i == 0, 2 if i == 0 else 1))
            cin = cout
    layers += [nn.AvgPool2d(7), nn.Flatten(), nn.Linear(cin, 1000, bias=False)]
    return nn.Sequential(*layers).eval()


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, relu: bool = False) -> nn.Sequential:
    """RepLKNet's conv_bn / conv_bn_relu: a conv without bias (padding kernel // 2), BN, ReLU when asked."""
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                               nn.BatchNorm2d(cout)]
    if relu:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class _ReparamLargeKernel(nn.Module):
    """RepLKNet's ReparamLargeKernelConv before re-parameterization (as the released checkpoints hold it): a
    large-kernel depthwise conv-BN and a parallel 5 x 5 depthwise conv-BN, summed."""

    def __init__(self, channels: int, kernel: int, small: int = 5) -> None:
        super().__init__()
        self.lkb_origin = _conv_bn(channels, channels, kernel, groups=channels)
        self.small_conv = _conv_bn(channels, channels, small, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lkb_origin(x) + self.small_conv(x)


class _RepLKBlock(nn.Module):
    """RepLKNet's RepLKBlock: BN, a 1 x 1 conv-BN-ReLU, the large-kernel depthwise conv, ReLU, a 1 x 1 conv-BN, the
    input added."""

    def __init__(self, channels: int, kernel: int) -> None:
        super().__init__()
        self.prelkb_bn = nn.BatchNorm2d(channels)
        self.pw1 = _conv_bn(channels, channels, 1, relu=True)
        self.large_kernel = _ReparamLargeKernel(channels, kernel)
        self.pw2 = _conv_bn(channels, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pw2(F.relu(self.large_kernel(self.pw1(self.prelkb_bn(x)))))


class _ConvFFN(nn.Module):
    """RepLKNet's ConvFFN: BN, a 1 x 1 conv-BN to 4 x, GELU, a 1 x 1 conv-BN back, the input added."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.preffn_bn = nn.BatchNorm2d(channels)
        self.pw1 = _conv_bn(channels, 4 * channels, 1)
        self.pw2 = _conv_bn(4 * channels, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pw2(F.gelu(self.pw1(self.preffn_bn(x))))


class _RepLKNet(nn.Module):
    def __init__(self, kernels: tuple[int, ...], layers: tuple[int, ...], channels: tuple[int, ...]) -> None:
        super().__init__()
        c0 = channels[0]
        self.stem = nn.Sequential(_conv_bn(3, c0, 3, 2, relu=True), _conv_bn(c0, c0, 3, 1, c0, relu=True),
                                  _conv_bn(c0, c0, 1, relu=True), _conv_bn(c0, c0, 3, 2, c0, relu=True))
        self.stages = nn.ModuleList()
        self.transitions = nn.ModuleList()
        for i, (kernel, depth, ch) in enumerate(zip(kernels, layers, channels)):
            blocks: list[nn.Module] = []
            for _ in range(depth):
                blocks += [_RepLKBlock(ch, kernel), _ConvFFN(ch)]
            self.stages.append(nn.Sequential(*blocks))
            if i < len(layers) - 1:
                nxt = channels[i + 1]
                self.transitions.append(nn.Sequential(_conv_bn(ch, nxt, 1, relu=True),
                                                      _conv_bn(nxt, nxt, 3, 2, nxt, relu=True)))
        self.norm = nn.BatchNorm2d(channels[-1])
        self.head = nn.Linear(channels[-1], 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i < len(self.transitions):
                x = self.transitions[i](x)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(self.norm(x), 1), 1))


def replknet31b_ish() -> nn.Module:
    # RepLKNet-31B (Ding et al., "Scaling Up Your Kernels to 31x31: Revisiting Large Kernel Design in CNNs", CVPR
    # 2022; the authors' create_RepLKNet31B, before re-parameterization): a stem of a 3 x 3 stride-2 conv, a 3 x 3
    # depthwise conv, a 1 x 1 conv and a 3 x 3 stride-2 depthwise conv (each BN-ReLU) to 128; four stages of 2, 2, 18
    # and 2 RepLK blocks (depthwise kernels 31, 29, 27 and 13 beside a 5 x 5 one) each followed by a ConvFFN, at 128,
    # 256, 512 and 1024; transitions a 1 x 1 conv and a 3 x 3 stride-2 depthwise conv; BN, pooling and a 1000-class
    # linear
    torch.manual_seed(0)
    return _RepLKNet((31, 29, 27, 13), (2, 2, 18, 2), (128, 256, 512, 1024)).eval()


class _ConvNormAct(nn.Sequential):
    """timm's ConvNormAct as EfficientViT builds it: a conv (padding kernel // 2), BN when asked, the activation."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, bias: bool = False,
                 norm: bool = True, act: bool = False) -> None:
        layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=bias)]
        if norm:
            layers.append(nn.BatchNorm2d(cout))
        if act:
            layers.append(nn.Hardswish())
        super().__init__(*layers)


class _MBConv(nn.Module):
    """EfficientViT's MBConv: a 1 x 1 expansion (x 4), a 3 x 3 depthwise conv, a 1 x 1 projection; hard-swish after
    the first two; BN after each, or (fewer_norm: the ViT stages) bias in the first two and BN only after the last."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int, fewer_norm: bool) -> None:
        super().__init__()
        mid = round(cin * expand)
        self.inverted_conv = _ConvNormAct(cin, mid, 1, bias=fewer_norm, norm=not fewer_norm, act=True)
        self.depth_conv = _ConvNormAct(mid, mid, 3, stride, mid, bias=fewer_norm, norm=not fewer_norm, act=True)
        self.point_conv = _ConvNormAct(mid, cout, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.point_conv(self.depth_conv(self.inverted_conv(x)))


class _DSConv(nn.Module):
    """EfficientViT's DSConv: a 3 x 3 depthwise conv-BN-hard-swish, a 1 x 1 conv-BN."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.depth_conv = _ConvNormAct(cin, cin, 3, 1, cin, act=True)
        self.point_conv = _ConvNormAct(cin, cout, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.point_conv(self.depth_conv(x))


class _Residual(nn.Module):
    def __init__(self, main: nn.Module, shortcut: bool) -> None:
        super().__init__()
        self.main, self.shortcut = main, shortcut

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x) + x if self.shortcut else self.main(x)


class _LiteMLA(nn.Module):
    """EfficientViT's lightweight multi-scale linear attention (timm's LiteMLA): a 1 x 1 conv to q, k and v (heads of
    16, no bias), a second scale of them aggregated by a 5 x 5 depthwise conv and a 1 x 1 conv in 3 x heads groups,
    both scales' heads concatenated; ReLU linear attention per head (ReLU(q) (ReLU(k)^T [v, 1]), the last column
    the normalizer, in fp32 whatever the model's dtype); a 1 x 1 conv-BN projection."""

    def __init__(self, channels: int, dim: int = 16, scales: tuple[int, ...] = (5,), eps: float = 1e-5) -> None:
        super().__init__()
        heads = channels // dim
        total = heads * dim
        self.dim, self.eps = dim, eps
        self.qkv = _ConvNormAct(channels, 3 * total, 1, norm=False)
        self.aggreg = nn.ModuleList(nn.Sequential(
            nn.Conv2d(3 * total, 3 * total, s, padding=s // 2, groups=3 * total, bias=False),
            nn.Conv2d(3 * total, 3 * total, 1, groups=3 * heads, bias=False)) for s in scales)
        self.proj = _ConvNormAct(total * (1 + len(scales)), channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, _, h, w = x.shape
        qkv = self.qkv(x)
        qkv = torch.cat([qkv] + [op(qkv) for op in self.aggreg], 1)
        q, k, v = qkv.reshape(b, -1, 3 * self.dim, h * w).transpose(-1, -2).chunk(3, dim=-1)
        q, k = F.relu(q), F.relu(k)
        v = F.pad(v, (0, 1), mode="constant", value=1.0)
        dtype = v.dtype
        kv = k.float().transpose(-1, -2) @ v.float()
        out = q.float() @ kv
        out = (out[..., :-1] / (out[..., -1:] + self.eps)).to(dtype)
        return self.proj(out.transpose(-1, -2).reshape(b, -1, h, w))


def efficientvit_b1_ish() -> nn.Module:
    # EfficientViT-B1 (Cai et al., "EfficientViT: Lightweight Multi-Scale Attention for High-Resolution Dense
    # Prediction", ICCV 2023; timm's efficientvit_b1 (r224), as MIT HAN Lab's code): a 3 x 3 stride-2 conv-BN-hard-swish
    # to 16 and a residual depthwise-separable block; MBConv stages (expansion 4) at 32 and 64 (2 and 3 blocks);
    # then at 128 and 256 a strided MBConv followed by 3 and 4 EfficientViT blocks (a residual LiteMLA, heads of 16,
    # and a residual MBConv); head a 1 x 1 conv-BN-hard-swish to 1536, pooling, a linear to 1600 (no bias),
    # LayerNorm, hard-swish and a 1000-class linear
    torch.manual_seed(0)
    widths, depths = (16, 32, 64, 128, 256), (1, 2, 3, 3, 4)
    layers: list[nn.Module] = [_ConvNormAct(3, widths[0], 3, 2, act=True)]
    layers += [_Residual(_DSConv(widths[0], widths[0]), True) for _ in range(depths[0])]
    cin = widths[0]
    for stage, (w, d) in enumerate(zip(widths[1:], depths[1:])):
        vit = stage >= 2
        layers.append(_Residual(_MBConv(cin, w, 2, 4, vit), False))
        cin = w
        for _ in range(d if vit else d - 1):
            if vit:
                layers.append(_Residual(_LiteMLA(w), True))
            layers.append(_Residual(_MBConv(w, w, 1, 4, vit), True))
    layers += [_ConvNormAct(cin, 1536, 1, act=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(1536, 1600, bias=False), nn.LayerNorm(1600), nn.Hardswish(), nn.Linear(1600, 1000)]
    return nn.Sequential(*layers).eval()


def bigbird_roberta_base() -> nn.Module:
    from transformers import BigBirdConfig, BigBirdModel

    # google/bigbird-roberta-base's config (Zaheer et al., "Big Bird: Transformers for Longer Sequences", NeurIPS
    # 2020): RoBERTa-base's shape (12 post-LayerNorm layers at 768, 12 heads, FFN 3072 with GELU (tanh); vocabulary
    # 50,358, 4,096 positions, a pooler) with block-sparse attention: blocks of 64 tokens, each query block attending
    # to its 3 neighbour blocks (sliding), 2 global blocks (the first and last) and 3 random ones (in eval their
    # indices are 0, not drawn); the first and last query blocks attend to everything
    config = BigBirdConfig(vocab_size=50358, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                           intermediate_size=3072, hidden_act="gelu_new", hidden_dropout_prob=0.1,
                           attention_probs_dropout_prob=0.1, max_position_embeddings=4096, type_vocab_size=2,
                           layer_norm_eps=1e-12, pad_token_id=0, bos_token_id=1, eos_token_id=2, sep_token_id=66,
                           attention_type="block_sparse", use_bias=True, rescale_embeddings=False, block_size=64,
                           num_random_blocks=3)
    torch.manual_seed(0)
    return BigBirdModel(config).eval()


def perceiver_io_language() -> nn.Module:
    from transformers import PerceiverConfig, PerceiverForMaskedLM

    # deepmind/language-perceiver's config (Jaegle et al., "Perceiver IO: A General Architecture for Structured Inputs
    # & Outputs", ICLR 2022; the byte-level masked language model): UTF-8 bytes (vocabulary 262) embedded at 768 with
    # learned positions (2,048); one cross-attention from 256 latents of 1280 to the 2,048 inputs (8 heads), 26
    # self-attention layers over the latents (8 heads, MLP 1280); a decoder cross-attention from 2,048 position
    # queries back to the latents, and the logits against the byte embedding
    config = PerceiverConfig(num_latents=256, d_latents=1280, d_model=768, num_blocks=1,
                             num_self_attends_per_block=26, num_self_attention_heads=8, num_cross_attention_heads=8,
                             qk_channels=256, v_channels=1280, cross_attention_shape_for_attention="kv",
                             self_attention_widening_factor=1, cross_attention_widening_factor=1, hidden_act="gelu",
                             attention_probs_dropout_prob=0.1, layer_norm_eps=1e-12, use_query_residual=True,
                             vocab_size=262, max_position_embeddings=2048)
    torch.manual_seed(0)
    return PerceiverForMaskedLM(config).eval()


def granite_speech_encoder() -> nn.Module:
    from transformers import GraniteSpeechEncoderConfig
    from transformers.models.granite_speech.modeling_granite_speech import GraniteSpeechCTCEncoder

    # ibm-granite/granite-speech-3.3-2b's speech encoder config (Saon et al., "Granite-speech: open-source
    # speech-aware LLMs with strong English ASR capabilities", 2025): 80 log-mel bins every 10 ms, two frames stacked
    # (160 features, 50 a second) through a linear to 1024; 16 Conformer blocks (half FFN of 4096 with SiLU; block
    # attention over 200-frame blocks, 8 heads of 128, Shaw relative positions (an embedding of the clamped distance,
    # einsum with q) as the scores' additive mask; a conv module (1 x 1 to 4096, GLU, depthwise kernel 15, BN, SiLU,
    # 1 x 1); half FFN; LayerNorm); after block 8 a 348-way CTC softmax projected back and added (self-conditioning)
    config = GraniteSpeechEncoderConfig(input_dim=160, num_layers=16, hidden_dim=1024, feedforward_mult=4,
                                        num_heads=8, dim_head=128, output_dim=348, context_size=200, max_pos_emb=512,
                                        dropout=0.1, conv_kernel_size=15, conv_expansion_factor=2)
    torch.manual_seed(0)
    return GraniteSpeechCTCEncoder(config).eval()


def timesformer_base() -> nn.Module:
    from transformers import TimesformerConfig, TimesformerForVideoClassification

    # facebook/timesformer-base-finetuned-k400's config (Bertasius et al., "Is Space-Time Attention All You Need for
    # Video Understanding?", ICML 2021): 8 frames at 224 x 224, a 16 x 16 patch conv per frame to 768 (8 x 196 tokens
    # and a class token), learned space and time embeddings; 12 layers of divided space-time attention (each layer a
    # temporal attention over the 8 frames of each patch, a linear, then a spatial attention over the 196 patches and
    # the class token of each frame; 12 heads; MLP 3072 with GELU); a LayerNorm and a 400-class (Kinetics-400) linear
    config = TimesformerConfig(image_size=224, patch_size=16, num_channels=3, num_frames=8, hidden_size=768,
                               num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                               hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                               layer_norm_eps=1e-6, qkv_bias=True, attention_type="divided_space_time",
                               drop_path_rate=0, num_labels=400)
    torch.manual_seed(0)
    return TimesformerForVideoClassification(config).eval()


def mgp_str_base() -> nn.Module:
    from transformers import MgpstrConfig, MgpstrForSceneTextRecognition

    # alibaba-damo/mgp-str-base's config (Wang et al., "Multi-Granularity Prediction for Scene Text Recognition",
    # ECCV 2022): a ViT-B over 4 x 4 patches of a 32 x 128 word crop (8 x 32 = 256 patches and a class token, learned
    # positions; 12 pre-LayerNorm layers at 768, 12 heads, MLP 3072 with GELU); three A^3 modules (adaptive
    # addressing and aggregation: LayerNorm, a 1 x 1 conv in 8 groups and a 1 x 1 conv to 27 attention maps over the
    # 257 tokens, softmax; the tokens through a second 1 x 1 conv in 8 groups, the 27 weighted sums (einsum),
    # LayerNorm) feeding a character head (38 classes), a BPE head (GPT-2's 50,257) and a WordPiece head (BERT's
    # 30,522), 27 positions each
    config = MgpstrConfig(image_size=[32, 128], patch_size=4, num_channels=3, max_token_length=27,
                          num_character_labels=38, num_bpe_labels=50257, num_wordpiece_labels=30522, hidden_size=768,
                          num_hidden_layers=12, num_attention_heads=12, mlp_ratio=4.0, qkv_bias=True, distilled=False,
                          layer_norm_eps=1e-5, drop_rate=0.0, attn_drop_rate=0.0, drop_path_rate=0.0)
    torch.manual_seed(0)
    return MgpstrForSceneTextRecognition(config).eval()
