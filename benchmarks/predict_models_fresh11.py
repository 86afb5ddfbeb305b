"""A twelfth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (twenty-second session)
before any of it was measured: none is a calibration net, and none is in the first eleven sets (resnet50,
mobilenet_v2, efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small, opt_125m;
squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base, gpt_neo_125m,
clip_text; mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12, mpnet_base,
tiny_starcoder, codegen_350m; xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset,
funnel_small_base, ernie45_03b, lfm2_350m; wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny,
depth_anything_small, esm2_150m, bart_base, smollm2_360m; googlenet_ish, sd_vae_decoder_ish, mobilenet_v1, bit_50,
beit_base, squeezebert, bloom_560m, yolos_tiny; darknet53_ish, fcn_resnet50_ish, swin2sr_x2, wav2vec2_conformer,
mobilevitv2, detr_resnet50, marian_en_de, qwen3_06b; vovnet39_ish, cvt_13, focalnet_tiny, deeplabv3_mobilenet_v2,
swiftformer_xs, convbert_small, distilbert_base, mobilellm_125m). Each is a factory ``NAME()`` with random weights
(torch seeded with 0 first, so every machine builds the same ones) in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh11.py:NAME``. The two conv nets of other sources are written here (DLA's and
X3D's own code need their frameworks, and neither timm, torchvision nor pytorchvideo can be imported on the
development machine); the other six come from ``transformers`` itself (random weights from a config at the
published checkpoint's shape, its values written out below): the code users bring. Parameter counts are
sum(numel) of the built module; GMACs are modelcost's static count at batch 1.

* dla34_ish: DLA-34 (Yu et al., "Deep Layer Aggregation", CVPR 2018, as timm's dla34 builds it: a 7 x 7
  conv-BN-ReLU to 16 at stride 1, a 3 x 3 to 16, a 3 x 3 to 32 at stride 2; four Hierarchical Deep Aggregation
  trees of ResNet basic blocks at 64, 128, 256 and 512, of levels 1, 2, 2 and 1, each at stride 2 (a strided
  first conv beside a max-pooled, 1 x 1-projected shortcut), whose roots concatenate the blocks' outputs with the
  children handed down (the last three trees' own pooled inputs too: Iterative Deep Aggregation) into a 1 x 1
  conv-BN-ReLU, up to 1,280 channels in; global average pooling and a 1 x 1 conv as the 1000-class classifier),
  input 224 x 224 (nn.Sequential's ``input``); 15,742,104 parameters (timm's dla34 exactly: the official code's
  unused projections of level-2 trees are left out, as timm does), 3.06 GMACs, all in convs, the first two at
  full resolution.
* x3d_m_ish: X3D-M (Feichtenhofer, "X3D: Expanding Architectures for Efficient Video Recognition", CVPR 2020, as
  pytorchvideo's create_x3d builds it: a 1 x 3 x 3 stride-(1, 2, 2) conv to 24 and a depthwise 5 x 1 x 1 temporal
  conv; 3, 5, 11 and 7 residual bottlenecks at 24, 48, 96 and 192, each a 1 x 1 x 1 conv up 2.25x, a depthwise
  3 x 3 x 3 conv (spatially strided in a stage's first block), squeeze-excitation in every other block, Swish, a
  1 x 1 x 1 conv down; a 1 x 1 x 1 conv to 432, pooling, a 1 x 1 x 1 conv to 2048 and a 400-class linear), a
  16-frame 224 x 224 clip (``input``, B x 3 x 16 x 224 x 224); 3,794,322 parameters, 4.73 GMACs (the paper's
  3.76 M and 4.73 G), all but the classifier's 0.8 M in Conv3d: the blocks' 1 x 1 x 1 convs 80%, their depthwise
  3 x 3 x 3 ones 14% (the only depthwise 3D convs of the twelve sets; the fourth set's r3d_18_ish has dense ones).
* textnet_small: transformers TextNetModel at czczup/textnet-small's config (Chen et al., "FAST: Faster
  Arbitrarily-Shaped Text Detector with Minimalist Kernel Representation", 2021: TextNet-S, the NAS-searched
  backbone of FAST-S: a 3 x 3 stride-2 stem to 64, then 2, 8, 8 and 5 layers at 64, 128, 256 and 512, each a
  3 x 3, 3 x 1 or 1 x 3 conv-BN beside its vertical and horizontal branches (3 x 1 and 1 x 3 conv-BN, those the
  kernel has) and an identity BN where shapes allow, summed, ReLU: the training-time form of a re-parameterisable
  layer, which transformers runs unfused), pixel_values 640 x 640 (the checkpoint's image_size); 11,933,632
  parameters, 24.87 GMACs, all in convs: the main kernels 63%, the 3 x 1 and 1 x 3 branches 18% each. The output
  is the last stage's map (512 x 20 x 20) and its 2 x 2 average pool: FAST reads all four stages through
  TextNetBackbone (the same convs), whose TorchScript export fails in transformers 5.24 (its output-filtering
  wrapper meets the argument the exporter fills in: "got multiple values for argument 'output_hidden_states'").
* vitmatte_small: transformers VitMatteForImageMatting at hustvl/vitmatte-small-composition-1k's config (Yao et
  al., "ViTMatte: Boosting Image Matting with Pretrained Plain Vision Transformers", 2023: a ViTDet-S backbone of
  12 layers at 384, 6 heads, on the image and its trimap (4 channels) in 16 x 16 patches, 1,024 tokens at 512 x
  512, absolute positions interpolated from 224 and decomposed relative positions; 8 layers attend within 14 x 14
  windows (the 32 x 32 grid padded to 42 x 42: 9 windows), layers 2, 5, 8 and 11 globally and are followed by a
  residual bottleneck conv block; a detail-capture decoder: a conv stream of 3 x 3 stride-2 conv-BN-ReLU on the
  input (48, 96, 192) fused with the bilinearly upsampled features by conv-BN-ReLU pairs (256, 128, 64, 32) up to
  full size, a 3 x 3 + 1 x 1 conv head, a sigmoid alpha matte), pixel_values 4 x 512 x 512, eager attention
  (ViTDet has no SDPA path); 25,814,753 parameters, 59.74 GMACs: the backbone's linears 42%, its attention bmm 9%
  and convs 4%, the decoder's convs 44% (the fusion blocks' 40%, on maps up to 512 x 512): a ViT and a
  full-resolution conv decoder of nearly equal weight.
* pvt_tiny: transformers PvtForImageClassification at Xrenya/pvt-tiny-224's config (Wang et al., "Pyramid Vision
  Transformer", ICCV 2021: PVT-Tiny: non-overlapping patch embeddings, 4 x 4 stride 4 to 64, then 2 x 2 stride 2
  to 128, 320 and 512, each with learned positions; 2 blocks per stage of 1, 2, 5 and 8 heads whose keys and
  values come from the map shrunk by a kernel-R stride-R conv + LayerNorm, R = 8, 4, 2, 1; plain MLPs of ratio 8,
  8, 4, 4; a class token in the last stage), pixel_values 224 x 224, eager attention (no SDPA path); 13,229,288
  parameters, 1.93 GMACs (the paper's 13.2 M and 1.9 G): linears 86%, convs 10% (patch embeddings 5%, spatial
  reduction 5%), the attention's bmm 4%. The seventh set's pvt_v2_b0 is PVTv2: overlapping conv embeddings,
  depthwise convs in its MLPs, no position tables, half the width (0.57 G).
* mobilebert: transformers MobileBertModel at google/mobilebert-uncased's config (Sun et al., "MobileBERT: a
  Compact Task-Agnostic BERT for Resource-Limited Devices", ACL 2020: trigram embeddings of 128 lifted to 512; 24
  layers at 512 whose attention and FFNs run in a 128-wide bottleneck: 512 -> 128 linears for the input and for
  the shared query/key input, values from the 512-wide input, 4 heads of 32, 4 stacked FFNs of 512 with ReLU,
  NoNorm (an element-wise scale and shift) for LayerNorm, a linear back to 512; vocabulary 30,522), input_ids 128
  tokens, SDPA attention; 24,581,888 parameters (the paper's 25.3 M), 2.69 GMACs: linears 96% (the stacked FFNs
  alone 45%), attention 4%; nearly every GEMM 128 wide on one side or both.
* sew_d_tiny: transformers SEWDModel at asapp/sew-d-tiny-100k's config (Wu et al., "Performance-Efficiency
  Trade-offs in Unsupervised Pre-training for Speech Recognition", 2021: SEW-D, wav2vec 2.0 squeezed, with
  DeBERTa's attention: 13 conv feature layers of 64 to 512 channels (49 frames a second), a projection to 384, a
  grouped positional conv (kernel 31, 16 groups), average pooling by 2 to 24 tokens, 12 post-LayerNorm layers of
  disentangled attention (6 heads, 256 position buckets), FFN 1536, a linear upsampling back to 49 frames),
  input_values 16,000 samples (1 s); 24,115,072 parameters (the positional conv's weight norm folded into its
  weight, as for inference and as the third set's wav2vec2_base does: transformers recomputes it every forward,
  an op modelcost does not count), 2.79 GMACs at batch 1: linears 83%, convs 12%, the attention's bmm 4%. Every
  layer projects DeBERTa's 512 relative position embeddings by its query and key linears whatever the batch:
  1.81 GMACs, 65% of batch 1's count; batch 64 counts 64.5 G, 23.1 x batch 1's, not 64 x.
* nanochat_d20: transformers NanoChatForCausalLM at nanochat-students/nanochat-d20's config (Karpathy's nanochat,
  the d20 model of October 2025: 20 layers at 1280, 10 heads of 128 with no grouped KV, rotary theta 1e4, RMSNorm
  on q and k, a non-gated MLP of 5120 with ReLU squared, parameter-free RMSNorms, no biases, vocabulary 65,536
  with an untied head and a tanh softcap of 15), 128 tokens, no cache, SDPA attention; 560,988,160 parameters (the
  model card's count exactly), 61.91 GMACs: the layers' linears 81%, the 65,536-way head 17%, attention 1.4%;
  the only squared-ReLU MLP of the sets' decoders.

All eight build and run at batch 1 on the CPU and count completely (static analysis at batch 1 and 64: "every op
counted"), batch 64 exactly 64 x batch 1's MACs for seven (sew_d_tiny's 23.1 x above). Seven export to ONNX by the
TorchScript exporter (opset 17, batch 2, dynamic batch) in 1.2 to 24 s each on the 2-core development machine
(vitmatte_small the 24 s), into files ONNX Runtime's CPU provider runs at batch 1 and 2, batch 2 within 1.8e-6 of
torch (sew_d_tiny's 1.8e-6 on outputs up to 1.6, pvt_tiny's 1.6e-6 on 1.5, textnet_small's 6.9e-7 on 0.92, the
others 6e-8 or less). vitmatte_small's matte is 0.5 to within 1e-6 under random init (the head's convs of std 0.02
bring its input, up to 0.02, to logits of 3e-6), so its export was checked again with every conv and linear at
PyTorch's default init and the sigmoid fed 100 x the fused features instead of the head's logits: 3.6e-7 on outputs
up to 0.94. nanochat_d20 fails the TorchScript exporter (aten::diff, in transformers' mask building, as the tenth
set's qwen3_06b and the eleventh's mobilellm_125m did; in transformers 5.24 every causal LM tried fails it or keeps
a stray logits_to_keep input, which modelcost's export refuses) and exports by modelcost's fallback, the
torch.export one (opset 20), in 48.7 s: 4.7e-6 on logits up to 3.9. torch._dynamo.explain finds one graph and no
break in each of the eight, and torch.compile (eager backend) runs them. On an H100 (transformers 5.17, torch 2.11)
all eight ran at batch 64 in fp32 and fp16 with finite outputs (peak memory at most 20.8 GB, vitmatte_small's in
fp32; then textnet_small's 10.5 GB, x3d_m_ish's 7.5 GB and nanochat_d20's 6.7 GB) and compiled with inductor in fp16
at batch 1. At batch 64 the largest peak activation modelcost counts is vitmatte_small's 8.86 GB (fp32), then
x3d_m_ish's 6.78 GB, textnet_small's 6.71 GB and nanochat_d20's 4.30 GB.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils import parametrize


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, relu: bool = True) -> nn.Sequential:
    """DLA's conv unit: a conv without bias ("same" padding), BatchNorm, and ReLU unless ``relu`` is off."""
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


class _DlaBasic(nn.Module):
    """DLA-34's block: ResNet's basic block (two 3 x 3 conv-BN, the first strided, ReLU) added to a shortcut the
    caller gives (the tree's projected, max-pooled input) or, without one, to its own input."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = _conv_bn(cin, cout, 3, stride)
        self.conv2 = _conv_bn(cout, cout, 3, relu=False)

    def forward(self, x: torch.Tensor, shortcut: torch.Tensor | None = None) -> torch.Tensor:
        return torch.relu(self.conv2(self.conv1(x)) + (x if shortcut is None else shortcut))


class _DlaTree(nn.Module):
    """DLA's Hierarchical Deep Aggregation tree (Yu et al. 2018; timm's DlaTree): at level 1 two blocks whose
    outputs, with the children handed down, are concatenated and merged by a root (1 x 1 conv-BN-ReLU); at level
    n two subtrees, the second taking the first's output as one more child. A level-root tree (Iterative Deep
    Aggregation) hands its own max-pooled input down as a child too."""

    def __init__(self, levels: int, cin: int, cout: int, stride: int = 1, level_root: bool = False,
                 root_dim: int = 0) -> None:
        super().__init__()
        root_dim = (root_dim or 2 * cout) + (cin if level_root else 0)
        self.downsample = nn.MaxPool2d(stride, stride) if stride > 1 else nn.Identity()
        self.project: nn.Module = nn.Identity()
        self.root: nn.Module | None = None
        self.tree1: nn.Module
        self.tree2: nn.Module
        if levels == 1:
            self.tree1 = _DlaBasic(cin, cout, stride)
            self.tree2 = _DlaBasic(cout, cout)
            if cin != cout:  # timm keeps it here only: the official code's level > 1 projections are never used
                self.project = _conv_bn(cin, cout, 1, relu=False)
            self.root = _conv_bn(root_dim, cout, 1)
        else:
            self.tree1 = _DlaTree(levels - 1, cin, cout, stride)
            self.tree2 = _DlaTree(levels - 1, cout, cout, root_dim=root_dim + cout)
        self.level_root = level_root

    def forward(self, x: torch.Tensor, shortcut: torch.Tensor | None = None,
                children: list[torch.Tensor] | None = None) -> torch.Tensor:
        children = [] if children is None else children
        bottom = self.downsample(x)
        if self.level_root:
            children.append(bottom)
        if self.root is not None:
            x1 = self.tree1(x, self.project(bottom))
            x2 = self.tree2(x1)
            return self.root(torch.cat([x2, x1, *children], dim=1))
        x1 = self.tree1(x)
        children.append(x1)
        return self.tree2(x1, None, children)


def dla34_ish() -> nn.Module:
    # DLA-34 (Yu et al., "Deep Layer Aggregation", CVPR 2018; timm's dla34): a 7 x 7 conv-BN-ReLU to 16 at stride
    # 1, a 3 x 3 to 16, a 3 x 3 to 32 at stride 2, then four aggregation trees of basic blocks at 64, 128, 256 and
    # 512 (levels 1, 2, 2, 1, each at stride 2 by a max-pooled shortcut and a strided first conv; the last three
    # level roots), global average pooling and a 1 x 1 conv as the 1000-class classifier
    torch.manual_seed(0)
    return nn.Sequential(
        _conv_bn(3, 16, 7), _conv_bn(16, 16, 3), _conv_bn(16, 32, 3, 2),
        _DlaTree(1, 32, 64, 2), _DlaTree(2, 64, 128, 2, level_root=True),
        _DlaTree(2, 128, 256, 2, level_root=True), _DlaTree(1, 256, 512, 2, level_root=True),
        nn.AdaptiveAvgPool2d(1), nn.Conv2d(512, 1000, 1), nn.Flatten()).eval()


def _conv3d_bn(cin: int, cout: int, kernel: tuple[int, int, int], stride: tuple[int, int, int] = (1, 1, 1),
               groups: int = 1) -> list[nn.Module]:
    """A 3D conv without bias ("same" padding) and its BatchNorm."""
    return [nn.Conv3d(cin, cout, kernel, stride, tuple(k // 2 for k in kernel), groups=groups, bias=False),
            nn.BatchNorm3d(cout)]


class _X3DBlock(nn.Module):
    """X3D's residual bottleneck (pytorchvideo's create_x3d_bottleneck_block in create_res_block): a 1 x 1 x 1
    conv-BN-ReLU up to the inner width, a depthwise 3 x 3 x 3 conv-BN (spatially strided in a stage's first
    block), squeeze-excitation (every other block), Swish, a 1 x 1 x 1 conv-BN down; added to the input (through a
    strided 1 x 1 x 1 conv-BN where the shape changes); ReLU."""

    def __init__(self, cin: int, inner: int, cout: int, stride: int, se: int) -> None:
        super().__init__()
        self.conv_a = nn.Sequential(*_conv3d_bn(cin, inner, (1, 1, 1)), nn.ReLU())
        self.conv_b = nn.Sequential(*_conv3d_bn(inner, inner, (3, 3, 3), (1, stride, stride), groups=inner))
        self.se = nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Conv3d(inner, se, 1), nn.ReLU(), nn.Conv3d(se, inner, 1),
                                nn.Sigmoid()) if se else None
        self.conv_c = nn.Sequential(*_conv3d_bn(inner, cout, (1, 1, 1)))
        self.branch1 = nn.Sequential(*_conv3d_bn(cin, cout, (1, 1, 1), (1, stride, stride))) \
            if cin != cout or stride > 1 else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv_b(self.conv_a(x))
        if self.se is not None:
            y = y * self.se(y)
        y = self.conv_c(y * torch.sigmoid(y))
        return torch.relu(y + (x if self.branch1 is None else self.branch1(x)))


def x3d_m_ish() -> nn.Module:
    # X3D-M (Feichtenhofer, "X3D: Expanding Architectures for Efficient Video Recognition", CVPR 2020;
    # pytorchvideo's create_x3d at width factor 2.0, depth factor 2.2, bottleneck factor 2.25, SE ratio 0.0625):
    # a stem of a 1 x 3 x 3 stride-(1, 2, 2) conv to 24 and a depthwise 5 x 1 x 1 temporal conv, BN, ReLU; four
    # stages of 3, 5, 11 and 7 blocks at 24, 48, 96 and 192 (inner widths 54, 108, 216, 432; SE squeezed to 8, 8,
    # 16, 32), each stage spatially strided by 2 in its first block; a head of a 1 x 1 x 1 conv-BN-ReLU to 432,
    # global average pooling, a 1 x 1 x 1 conv to 2048 (no bias), ReLU and a 400-class (Kinetics-400) linear
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Conv3d(3, 24, (1, 3, 3), (1, 2, 2), (0, 1, 1), bias=False),
                               *_conv3d_bn(24, 24, (5, 1, 1), groups=24), nn.ReLU()]
    cin = 24
    for cout, depth, se in ((24, 3, 8), (48, 5, 8), (96, 11, 16), (192, 7, 32)):
        for i in range(depth):
            layers.append(_X3DBlock(cin, int(2.25 * cout), cout, 2 if i == 0 else 1, se if i % 2 == 0 else 0))
            cin = cout
    head = [*_conv3d_bn(192, 432, (1, 1, 1)), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Conv3d(432, 2048, 1, bias=False),
            nn.ReLU(), nn.Flatten(), nn.Linear(2048, 400)]
    return nn.Sequential(*layers, *head).eval()


def textnet_small() -> nn.Module:
    from transformers import TextNetConfig, TextNetModel

    # czczup/textnet-small's config (Chen et al., "FAST: Faster Arbitrarily-Shaped Text Detector with Minimalist
    # Kernel Representation", 2021: TextNet-S, the NAS-searched backbone of FAST-S): a 3 x 3 stride-2 conv-BN-ReLU
    # stem to 64, then stages of 2, 8, 8 and 5 layers at 64, 128, 256 and 512 (each stage's first layer strided),
    # every layer a re-parameterisable conv as trained (transformers runs it unfused): a 3 x 3, 3 x 1 or 1 x 3 conv
    # + BN beside its vertical and horizontal 3 x 1 / 1 x 3 conv + BN branches (those the kernel has) and an
    # identity BN where the shape allows, summed, ReLU; the four stage outputs (1/4 to 1/32) are the output
    kernels = [[[3, 3], [3, 3]],
               [[3, 3], [1, 3], [3, 3], [3, 1], [3, 3], [3, 1], [1, 3], [3, 3]],
               [[3, 3], [3, 3], [1, 3], [3, 1], [3, 3], [1, 3], [3, 1], [3, 3]],
               [[3, 3], [3, 1], [1, 3], [1, 3], [3, 1]]]
    strides = [[1, 2], [2, 1, 1, 1, 1, 1, 1, 1], [2, 1, 1, 1, 1, 1, 1, 1], [2, 1, 1, 1, 1]]
    config = TextNetConfig(stem_kernel_size=3, stem_stride=2, stem_num_channels=3, stem_out_channels=64,
                           stem_act_func="relu", image_size=[640, 640], conv_layer_kernel_sizes=kernels,
                           conv_layer_strides=strides, hidden_sizes=[64, 64, 128, 256, 512], batch_norm_eps=1e-5)
    torch.manual_seed(0)
    return TextNetModel(config).eval()


def vitmatte_small() -> nn.Module:
    from transformers import VitDetConfig, VitMatteConfig, VitMatteForImageMatting

    # hustvl/vitmatte-small-composition-1k's config (Yao et al., "ViTMatte: Boosting Image Matting with Pretrained
    # Plain Vision Transformers", 2023): a ViTDet-S backbone on the image and its trimap (4 channels, 16 x 16
    # patches: 32 x 32 = 1,024 tokens at 512 x 512; 12 layers at 384, 6 heads, MLP ratio 4; absolute positions
    # interpolated from the 224 pretraining grid; decomposed relative positions in every layer), layers 0, 1, 3, 4,
    # 6, 7, 9 and 10 attending within 14 x 14 windows (the 32 x 32 grid padded to 42 x 42: 9 windows), the others
    # globally, each of those followed by a residual bottleneck conv block (1 x 1, 3 x 3, 1 x 1); a detail-capture
    # decoder: a conv stream of 3 x 3 stride-2 conv-BN-ReLU on the input (48, 96, 192 at 1/2, 1/4, 1/8) fused with
    # the bilinearly upsampled features by conv-BN-ReLU pairs (256, 128, 64, 32) up to full size, and a 3 x 3 conv
    # head to a sigmoid alpha matte; eager attention (VitDet has no SDPA path)
    backbone = VitDetConfig(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, mlp_ratio=4,
                            hidden_act="gelu", dropout_prob=0.0, layer_norm_eps=1e-6, image_size=512,
                            pretrain_image_size=224, patch_size=16, num_channels=4, qkv_bias=True, drop_path_rate=0.0,
                            window_block_indices=[0, 1, 3, 4, 6, 7, 9, 10], residual_block_indices=[2, 5, 8, 11],
                            use_absolute_position_embeddings=True, use_relative_position_embeddings=True,
                            window_size=14, out_features=["stage12"])
    config = VitMatteConfig(backbone_config=backbone, hidden_size=384, batch_norm_eps=1e-5,
                            convstream_hidden_sizes=[48, 96, 192], fusion_hidden_sizes=[256, 128, 64, 32])
    torch.manual_seed(0)
    return VitMatteForImageMatting(config).eval()


def pvt_tiny() -> nn.Module:
    from transformers import PvtConfig, PvtForImageClassification

    # Xrenya/pvt-tiny-224's config (Wang et al., "Pyramid Vision Transformer: A Versatile Backbone for Dense
    # Prediction without Convolutions", ICCV 2021: PVT-Tiny): non-overlapping patch embeddings (4 x 4 stride 4 to
    # 64, then 2 x 2 stride 2 to 128, 320 and 512, each with LayerNorm and learned positions), 2 blocks per stage
    # of 1, 2, 5 and 8 heads whose keys and values come from the token map shrunk by a kernel-R stride-R conv +
    # LayerNorm (R = 8, 4, 2, 1), plain MLPs of ratio 8, 8, 4, 4 with GELU; a class token in the last stage and a
    # 1000-class head on it; eager attention (PVT has no SDPA path)
    config = PvtConfig(image_size=224, num_channels=3, num_encoder_blocks=4, depths=[2, 2, 2, 2],
                       sequence_reduction_ratios=[8, 4, 2, 1], hidden_sizes=[64, 128, 320, 512],
                       patch_sizes=[4, 2, 2, 2], strides=[4, 2, 2, 2], num_attention_heads=[1, 2, 5, 8],
                       mlp_ratios=[8, 8, 4, 4], hidden_act="gelu", hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0, drop_path_rate=0.0, layer_norm_eps=1e-6, qkv_bias=True,
                       num_labels=1000)
    torch.manual_seed(0)
    return PvtForImageClassification(config).eval()


def mobilebert() -> nn.Module:
    from transformers import MobileBertConfig, MobileBertModel

    # google/mobilebert-uncased's config (Sun et al., "MobileBERT: a Compact Task-Agnostic BERT for
    # Resource-Limited Devices", ACL 2020): embeddings of 128 whose trigram (each token's beside its neighbours',
    # 384) a linear lifts to 512; 24 layers at 512 whose attention and FFNs run in a 128-wide bottleneck (linears
    # 512 -> 128 for the input and for the shared query/key input, values from the 512-wide input; 4 heads of
    # 32), 4 stacked FFNs of 512 with ReLU, NoNorm (an element-wise scale and shift) for LayerNorm, a linear back
    # to 512; vocabulary 30,522; the pooler without its dense (classifier_activation off: the first token); SDPA
    config = MobileBertConfig(vocab_size=30522, hidden_size=512, num_hidden_layers=24, num_attention_heads=4,
                              intermediate_size=512, hidden_act="relu", hidden_dropout_prob=0.0,
                              attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=2,
                              layer_norm_eps=1e-12, pad_token_id=0, embedding_size=128, trigram_input=True,
                              use_bottleneck=True, intra_bottleneck_size=128, use_bottleneck_attention=False,
                              key_query_shared_bottleneck=True, num_feedforward_networks=4,
                              normalization_type="no_norm", true_hidden_size=128, classifier_activation=False,
                              attn_implementation="sdpa")
    torch.manual_seed(0)
    return MobileBertModel(config).eval()


def sew_d_tiny() -> nn.Module:
    from transformers import SEWDConfig, SEWDModel

    # asapp/sew-d-tiny-100k's config (Wu et al., "Performance-Efficiency Trade-offs in Unsupervised Pre-training
    # for Speech Recognition", 2021: SEW-D, squeezed wav2vec 2.0 with DeBERTa's attention): 13 conv feature
    # layers (64 to 512 channels, strides 5, 2, 1, 2, 1, ...: 49 frames a second, GroupNorm on the first, GELU), a
    # projection to 384, a grouped positional conv (kernel 31, 16 groups), average pooling by 2 (24 tokens), 12
    # post-LayerNorm layers of DeBERTa's disentangled attention (6 heads; 256 position buckets, whose 512
    # relative embeddings every layer projects by its shared query and key linears), FFN 1536, and a linear
    # upsampling back to 49 frames; hidden_act and the LayerNorm eps are transformers' SEW-D defaults
    # (gelu_python, 1e-7): the copies of the config read here predate the checkpoint's last config commit
    # ("Update hidden_act and layer_norm_eps") and say gelu and 1e-5, the same exact GELU and a negligible eps
    config = SEWDConfig(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                        squeeze_factor=2, max_position_embeddings=512, position_buckets=256, share_att_key=True,
                        relative_attention=True, pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm",
                        hidden_act="gelu_python", hidden_dropout=0.1, activation_dropout=0.0, attention_dropout=0.1,
                        feat_proj_dropout=0.1, layer_norm_eps=1e-7, feature_layer_norm_eps=1e-5,
                        feat_extract_norm="group", feat_extract_activation="gelu",
                        conv_dim=[64, 128, 128, 128, 128, 256, 256, 256, 256, 512, 512, 512, 512],
                        conv_stride=[5, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1],
                        conv_kernel=[10, 3, 1, 3, 1, 3, 1, 3, 1, 2, 1, 2, 1], conv_bias=False,
                        num_conv_pos_embeddings=31, num_conv_pos_embedding_groups=16)
    torch.manual_seed(0)
    model = SEWDModel(config).eval()
    conv = model.encoder.pos_conv_embed.conv  # weight norm folded into the weight, as for inference
    if parametrize.is_parametrized(conv, "weight"):
        parametrize.remove_parametrizations(conv, "weight", leave_parametrized=True)
    return model


def nanochat_d20() -> nn.Module:
    from transformers import NanoChatConfig, NanoChatForCausalLM

    # nanochat-students/nanochat-d20's config (Karpathy's nanochat, the d20 "speedrun" model of October 2025,
    # 560,988,160 parameters per its model card): 20 layers at 1280 of 10 heads of 128 (no grouped KV), rotary
    # theta 1e4, RMSNorm on q and k, a non-gated MLP of 5120 with ReLU squared, parameter-free RMSNorms (one
    # right after the embedding too; eps 1e-6, transformers' default), no biases, vocabulary 65,536 with an
    # untied head and a tanh softcap of 15 on the logits; 128 tokens, no cache, SDPA attention
    config = NanoChatConfig(vocab_size=65536, hidden_size=1280, intermediate_size=5120, num_hidden_layers=20,
                            num_attention_heads=10, num_key_value_heads=10, max_position_embeddings=2048,
                            hidden_act="relu2", rms_norm_eps=1e-6, attention_bias=False,
                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                            final_logit_softcapping=15.0, tie_word_embeddings=False, use_cache=False,
                            attn_implementation="sdpa")
    torch.manual_seed(0)
    return NanoChatForCausalLM(config).eval()
