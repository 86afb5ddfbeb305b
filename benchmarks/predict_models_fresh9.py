"""A tenth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (twentieth session) before
any of it was measured: none is a calibration net, and none is in the first nine sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small,
opt_125m; squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base,
gpt_neo_125m, clip_text; mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12,
mpnet_base, tiny_starcoder, codegen_350m; xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset,
funnel_small_base, ernie45_03b, lfm2_350m; wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny,
depth_anything_small, esm2_150m, bart_base, smollm2_360m; googlenet_ish, sd_vae_decoder_ish, mobilenet_v1, bit_50,
beit_base, squeezebert, bloom_560m, yolos_tiny). Each is a factory ``NAME()`` with random weights in eval mode that
``modelcost`` loads as ``benchmarks/predict_models_fresh9.py:NAME``. The two conv nets of other sources are written
here (Darknet's own framework is C, and torchvision cannot be imported on the development machine); the other six
come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its values
written out below; one, the Conformer, at a smaller size said below): the code users bring. Parameter counts are
sum(numel) of the built module; GMACs are modelcost's static count at batch 1.

* darknet53_ish: YOLOv3's Darknet-53 backbone as a classifier (Redmon & Farhadi 2018, Table 1: a 3 x 3 conv to 32,
  then five 3 x 3 stride-2 convs doubling the channels to 1024, each followed by 1, 2, 8, 8 and 4 residual blocks of
  a 1 x 1 to half the channels and a 3 x 3 back; BatchNorm + LeakyReLU 0.1 after every conv; global average
  pooling and a 1000-class linear), 256 x 256; 41,609,928 parameters (timm's darknet53: 41.6 M), 9.29 GMACs (the
  paper's 18.7 billion operations at 256 x 256, multiply and add counted apart): plain residual 3 x 3 / 1 x 1
  pairs at full width, not the third set's csp_darknet_ish's cross-stage partial split.
* fcn_resnet50_ish: torchvision's fcn_resnet50 without its auxiliary head (a ResNet-50 backbone with
  replace_stride_with_dilation [False, True, True]: layer3's and layer4's 3 x 3 convs at dilation 2 and 4, the
  first block of each at the previous dilation, output stride 8; FCNHead(2048, 21): a 3 x 3 conv to 512,
  BatchNorm, ReLU, a 1 x 1 conv to 21 classes; the logits upsampled bilinearly to the input), 320 x 320;
  32,957,013 parameters (torchvision's 35,322,218 with the aux head, less that head's FCNHead(1024, 21) of
  2,365,205), 54.05 GMACs (torchvision's "152.72 GFLOPS" at 520 x 520 with the aux head: these 54.05 x
  (520 / 320)^2 = 142.73 and the aux head's 9.99), all of them in convs: ResNet-50's layer4 run at 40 x 40
  instead of 10 x 10, dilated 3 x 3 convs on big maps.
* swin2sr_x2: transformers Swin2SRForImageSuperResolution at caidas/swin2SR-classical-sr-x2-64's config (a 3 x 3
  conv to 180 channels, six residual groups of 6 Swin v2 layers (6 heads of 30, window 8, MLP 360, scaled cosine
  attention with a continuous position bias from a 2 -> 512 -> 6 MLP on log-spaced coordinates, post-norm, shifted
  windows by roll), a 3 x 3 conv closing each group and one after them, then the pixel-shuffle upsampler: 3 x 3
  conv to 64, LeakyReLU, 3 x 3 conv to 256, pixel shuffle x2, 3 x 3 conv to RGB), pixel_values 64 x 64 (a
  128 x 128 output), eager attention (Swin2SR has no SDPA path: q k^T and the softmax's product are bmm);
  12,091,571 parameters, 52.02 GMACs: 4,096 tokens at width 180 through 36 layers (linears 73.5%, convs 19.9%,
  the windows' bmm 6.5%), the most MACs per parameter in the set.
* wav2vec2_conformer: transformers Wav2Vec2ConformerForCTC with facebook/wav2vec2-conformer-rope-large-960h-ft's
  architecture (a conv feature encoder of seven Conv1d with biases and LayerNorm, stable pre-LayerNorm, rotary
  positions, Swish, a 32-token CTC head) but wav2vec2-base's sizes: 12 layers at hidden 768, 12 heads, FFN 3072.
  No conformer of this size is published (the rope and rel-pos large ones are 24 layers at 1024, some 600 M
  parameters); the sizes are this set's choice, the structure is the checkpoint's. Each layer is a half-step FFN,
  self-attention, the Conformer conv module (LayerNorm, pointwise Conv1d to 1,536 + GLU, depthwise Conv1d k=31,
  BatchNorm, Swish, pointwise Conv1d) and a second half-step FFN. input_values 16,000 samples (1 s: 49 frames),
  SDPA attention; 172,667,424 parameters, 10.51 GMACs (feature encoder 23%, FFNs 53%, attention 14%, the conv
  modules 10%). transformers builds the encoder's positional conv (4,719,360 of those parameters; its weight norm
  folded here as in the second set's wav2vec2_base) but the Conformer's forward never calls it, in 5.17 as in 5.24:
  its positions are the rotary ones alone.
* mobilevitv2: transformers MobileViTV2ForImageClassification at apple/mobilevitv2-1.0-imagenet1k-256's config
  (MobileNetV2 inverted residuals of expansion 2 with Swish, then MobileViT v2 blocks of 2, 4 and 3 layers at 128,
  192 and 256 wide over 2 x 2 patches, unfolded and folded back; each a separable self-attention: one context
  score per token from a 1 x 1 conv, softmax over the tokens, a weighted sum, linear in the tokens, no token-pair
  matrix; GroupNorm of 1 group), pixel_values 256 x 256; 4,901,841 parameters, 1.81 GMACs (the paper's 4.9 M and
  1.8 G), every MAC a conv: the third set's mobilevit_small has softmax attention, this one none.
* detr_resnet50: transformers DetrForObjectDetection at facebook/detr-resnet-50's config with transformers' own
  ResNet-50 as the backbone (use_timm_backbone off: the checkpoint's timm ResNet-50 is the same network, and timm
  is not installed here; BatchNorm frozen into buffers, so its 106,240 values are not parameters), its stage-4 map
  (2048 x 16 x 16 at 512) projected to 256, sine positions, 6 encoder + 6 decoder post-norm layers (8 heads, FFN
  2048, ReLU), 100 object queries, a 92-way class head (91 + "no object") and a 3-layer box MLP, pixel_values
  512 x 512 (pixel_mask left out: the model takes all ones), SDPA attention (transformers' default for DETR, its
  ResNet backbone eager: asking for SDPA by name asks the backbone too, which refuses); 41,524,768 parameters
  (with the frozen BatchNorm's buffers 41,631,008: the published 41.6 M), 24.89 GMACs (the ResNet's convs 86%, a
  transformer over only 256 tokens).
* marian_en_de: transformers MarianMTModel at Helsinki-NLP/opus-mt-en-de's config (an encoder-decoder of 6 + 6
  post-LayerNorm layers at d_model 512, 8 heads, FFN 2048, Swish, fixed sinusoidal positions (two 512 x 512
  tables, kept by transformers as frozen parameters), embeddings scaled by sqrt(512), a vocabulary of 58,101
  shared by both embeddings and the head), input_ids 128 tokens, SDPA attention, no cache. Marian's forward, unlike
  BART's, refuses input_ids alone (a ValueError asking for a decoder input, in 5.17 and 5.24), so the factory
  wraps it to feed the decoder input_ids shifted right behind the start token 58100: what the eighth set's
  bart_base gets from BART's own default; the output is the model's (logits and the encoder's states);
  74,410,496 parameters, 9.75 GMACs (the 58,101-way head 39% of them).
* qwen3_06b: transformers Qwen3ForCausalLM at Qwen/Qwen3-0.6B's config (28 layers at hidden 1024, grouped-query
  attention of 16 query heads on 8 key/value heads of 128, so q is 2,048 wide, wider than the hidden; RMSNorm on
  each head's q and k; rotary theta 1e6; SwiGLU MLP 3072; no biases; vocabulary 151,936, tied head), 128 tokens, no
  cache, SDPA attention; 596,049,920 parameters (the published 0.6 B: 596 M), 78.17 GMACs (the head 25% of them).

All eight build and run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64: "every op
counted"), with batch 64 exactly 64 x batch 1's MACs for all but swin2sr_x2, whose continuous position bias MLP runs
once per layer whatever the batch (225 window offsets x (2 x 512 + 512 x 6) = 921,600 MACs x 36 layers = 33.2 M, so
batch 64 = 64 x batch 1 - 63 x 33.2 M, 0.06% less). All export to ONNX by modelcost's own path (bench/export.py,
opset 17, dynamic batch) into files ONNX Runtime's CPU provider runs at batch 1 and 2, batch 2 within 2.0e-5 of
torch (detr_resnet50's 2.0e-5 on outputs up to 3.4; wav2vec2_conformer's 1.0e-5 on 2.2; the others 4.2e-6 or less).
mobilevitv2's outputs are exactly 0 under transformers' random init (convs of std 0.02 and BatchNorm at unit running
statistics shrink the activations until they underflow to zero in the third MobileViT block, as the ninth set's
mobilenet_v1's do short of zero), so its export was checked again with every conv and linear at PyTorch's default
init: 2.8e-8 on outputs of 0.057. Six by the TorchScript exporter in 4.6 to 31.6 s each on the 2-core development
machine (one torch thread and one ORT thread; swin2sr_x2 the 31.6 s), two by the torch.export one after the
TorchScript exporter failed: mobilevitv2 in 16.4 s all told (the fold that puts MobileViT v2's patches back,
aten::col2im, has no ONNX form before opset 18) and qwen3_06b in 123.4 s, within the 150 s limit (aten::diff, in
transformers' mask building, has no ONNX form at opset 17). At batch 64 the largest peak activation modelcost counts
is qwen3_06b's 5.01 GB (fp32; its 64 x 128 x 151,936 logits are 4.98 GB of it), then marian_en_de's 3.82 GB and
detr_resnet50's 3.29 GB. Every class is in the GPU machine's transformers (5.17) as well as this one's (5.24).
Counted under 5.17, all six give the same parameters, and the same MACs at batch 1 and 64 but for the rotary tables
of wav2vec2_conformer and qwen3_06b, whose outer product of positions and frequencies 5.17 counts once per forward
(49 x 32 = 1,568 and 128 x 64 = 8,192 MACs, 1e-7 of either) and 5.24 not at all; qwen3_06b exports under 5.17 too
(torch.export, 144.3 s, the same differences to torch).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _conv_bn_leaky(cin: int, cout: int, kernel: int, stride: int = 1) -> nn.Sequential:
    """Darknet's convolutional layer: a conv without bias ("same" padding), BatchNorm, LeakyReLU 0.1."""
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.LeakyReLU(0.1))


class _DarkResidual(nn.Module):
    """Darknet-53's residual block: 1 x 1 to half the channels, 3 x 3 back, added to the input."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        half = channels // 2
        self.body = nn.Sequential(_conv_bn_leaky(channels, half, 1), _conv_bn_leaky(half, channels, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)


def darknet53_ish() -> nn.Module:
    # Darknet-53 (Redmon & Farhadi, "YOLOv3: An Incremental Improvement", 2018, Table 1; darknet53.cfg): a 3 x 3
    # conv to 32, then five stages each opening with a 3 x 3 stride-2 conv that doubles the channels (64, 128, 256,
    # 512, 1024) followed by 1, 2, 8, 8 and 4 residual blocks; every conv BatchNorm + LeakyReLU 0.1; global
    # average pooling and a 1000-class linear (the cfg's 1 x 1 conv with bias on the pooled vector)
    layers: list[nn.Module] = [_conv_bn_leaky(3, 32, 3)]
    cin = 32
    for cout, blocks in ((64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)):
        layers += [_conv_bn_leaky(cin, cout, 3, 2), *(_DarkResidual(cout) for _ in range(blocks))]
        cin = cout
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1024, 1000)]
    return nn.Sequential(*layers, *head).eval()


class _Bottleneck(nn.Module):
    """torchvision's ResNet Bottleneck (v1.5: the stride on the 3 x 3), with the 3 x 3's dilation as a parameter
    and a 1 x 1 conv + BatchNorm on the skip where the shape changes."""

    def __init__(self, cin: int, width: int, stride: int, dilation: int) -> None:
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(width), nn.ReLU(), nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.body(x) + self.skip(x))


class _Fcn(nn.Module):
    """torchvision's FCN: the backbone's last feature map through the head, upsampled bilinearly to the input."""

    def __init__(self, backbone: nn.Module, head: nn.Module) -> None:
        super().__init__()
        self.backbone, self.head = backbone, head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.head(self.backbone(x))
        return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)


def fcn_resnet50_ish() -> nn.Module:
    # torchvision's fcn_resnet50 (aux_loss off): a ResNet-50 backbone with replace_stride_with_dilation
    # [False, True, True] (layer3 and layer4 keep stride 1: their first blocks at the previous dilation, 1 and 2,
    # the rest at 2 and 4; output stride 8), cut after layer4 (no pooling, no fc); FCNHead(2048, 21): a 3 x 3
    # conv to 512 without bias, BatchNorm, ReLU, dropout 0.1 (nothing in eval), a 1 x 1 conv to 21 classes; the
    # logits upsampled bilinearly (align_corners False) to the input size; torchvision returns them as
    # {"out": ...}, this module as the tensor
    stem = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    blocks: list[nn.Module] = []
    cin, dilation = 64, 1
    for width, depth, stride, dilate in ((64, 3, 1, False), (128, 4, 2, False), (256, 6, 2, True),
                                         (512, 3, 2, True)):
        first_dilation = dilation
        if dilate:
            dilation, stride = dilation * stride, 1
        blocks += [_Bottleneck(cin, width, stride, first_dilation)]
        blocks += [_Bottleneck(width * 4, width, 1, dilation) for _ in range(depth - 1)]
        cin = width * 4
    head = nn.Sequential(nn.Conv2d(2048, 512, 3, padding=1, bias=False), nn.BatchNorm2d(512), nn.ReLU(),
                         nn.Dropout(0.1), nn.Conv2d(512, 21, 1))
    return _Fcn(nn.Sequential(*stem, *blocks), head).eval()


def swin2sr_x2() -> nn.Module:
    from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution

    # caidas/swin2SR-classical-sr-x2-64's config (Conde et al., 2022: SwinIR with Swin v2's attention): a 3 x 3
    # conv to 180 channels, six residual Swin v2 groups of 6 layers (6 heads of 30, window 8, MLP 2x, scaled
    # cosine attention with a log-spaced continuous position bias from a small MLP, post-norm), each closed by a
    # 3 x 3 conv, a 3 x 3 conv after them, then the pixel-shuffle upsampler (3 x 3 conv to 64, LeakyReLU, 3 x 3
    # conv to 4 x 64, pixel shuffle x2, 3 x 3 conv to RGB); eager attention: Swin2SR has no SDPA path
    config = Swin2SRConfig(image_size=64, patch_size=1, num_channels=3, embed_dim=180, depths=[6, 6, 6, 6, 6, 6],
                           num_heads=[6, 6, 6, 6, 6, 6], window_size=8, mlp_ratio=2.0, qkv_bias=True,
                           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.1,
                           hidden_act="gelu", use_absolute_embeddings=False, layer_norm_eps=1e-5, upscale=2,
                           img_range=1.0, resi_connection="1conv", upsampler="pixelshuffle")
    return Swin2SRForImageSuperResolution(config).eval()


def wav2vec2_conformer() -> nn.Module:
    from torch.nn.utils import parametrize
    from transformers import Wav2Vec2ConformerConfig, Wav2Vec2ConformerForCTC

    # facebook/wav2vec2-conformer-rope-large-960h-ft's architecture (a layer-normed conv feature encoder with
    # biases, stable (pre-) layer norm, rotary positions, Swish, depthwise kernel 31, a 32-token CTC head) at
    # wav2vec2-base's sizes: 12 layers at hidden 768, 12 heads, FFN 3072 (no conformer of this size is published;
    # the rope and rel-pos large ones are 24 layers at 1024, ~600 M parameters). Each Conformer layer: a half-step
    # FFN, self-attention, the conv module (LayerNorm, pointwise Conv1d to 2 x 768 + GLU, depthwise Conv1d k=31,
    # BatchNorm, Swish, pointwise Conv1d), a second half-step FFN, LayerNorm
    config = Wav2Vec2ConformerConfig(vocab_size=32, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                     intermediate_size=3072, hidden_act="swish", hidden_dropout=0.0,
                                     activation_dropout=0.0, attention_dropout=0.0, feat_proj_dropout=0.0,
                                     final_dropout=0.0, layerdrop=0.0, layer_norm_eps=1e-5, feat_extract_norm="layer",
                                     feat_extract_activation="gelu", conv_dim=(512,) * 7,
                                     conv_stride=(5, 2, 2, 2, 2, 2, 2), conv_kernel=(10, 3, 3, 3, 3, 2, 2),
                                     conv_bias=True, num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16,
                                     do_stable_layer_norm=True, mask_time_prob=0.0, mask_feature_prob=0.0,
                                     position_embeddings_type="rotary", rotary_embedding_base=10000,
                                     max_source_positions=5000, conv_depthwise_kernel_size=31,
                                     conformer_conv_dropout=0.0, attn_implementation="sdpa")
    model = Wav2Vec2ConformerForCTC(config).eval()
    # the positional conv is built but never called by the Conformer's forward; its weight norm folded anyway
    conv = model.wav2vec2_conformer.encoder.pos_conv_embed.conv
    if parametrize.is_parametrized(conv, "weight"):
        parametrize.remove_parametrizations(conv, "weight", leave_parametrized=True)
    return model


def mobilevitv2() -> nn.Module:
    from transformers import MobileViTV2Config, MobileViTV2ForImageClassification

    # apple/mobilevitv2-1.0-imagenet1k-256's config (Mehta & Rastegari, 2022): MobileNetV2 inverted residuals
    # (expansion 2, Swish) and three MobileViT v2 blocks of 2, 4 and 3 transformer layers at 128, 192 and 256
    # wide over 2 x 2 patches, each a separable self-attention (one context score per token, linear in the
    # tokens, no softmax over token pairs) with GroupNorm of 1 group; a 1000-class head
    config = MobileViTV2Config(num_channels=3, image_size=256, patch_size=2, expand_ratio=2.0, hidden_act="swish",
                               conv_kernel_size=3, output_stride=32, classifier_dropout_prob=0.1,
                               layer_norm_eps=1e-5, n_attn_blocks=[2, 4, 3], base_attn_unit_dims=[128, 192, 256],
                               width_multiplier=1.0, ffn_multiplier=2, attn_dropout=0.0, ffn_dropout=0.0,
                               num_labels=1000)
    return MobileViTV2ForImageClassification(config).eval()


def detr_resnet50() -> nn.Module:
    from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig

    # facebook/detr-resnet-50's config (Carion et al., ECCV 2020) with transformers' own ResNet-50 as the backbone
    # (the checkpoint's timm one is the same network; timm is not installed here): its stage-4 map (2048 x 16 x 16
    # at 512) with frozen BatchNorm, a 1 x 1 conv to 256, sine positions, 6 encoder + 6 decoder post-norm layers
    # (8 heads, FFN 2048, ReLU), 100 object queries, a 92-way class head (91 + "no object") and a 3-layer box MLP;
    # pixel_mask left out (the model takes all-ones); SDPA attention
    backbone = ResNetConfig(num_channels=3, embedding_size=64, hidden_sizes=[256, 512, 1024, 2048],
                            depths=[3, 4, 6, 3], layer_type="bottleneck", hidden_act="relu",
                            downsample_in_first_stage=False, out_features=["stage4"])
    config = DetrConfig(backbone_config=backbone, num_channels=3, num_queries=100, encoder_layers=6,
                        encoder_ffn_dim=2048, encoder_attention_heads=8, decoder_layers=6, decoder_ffn_dim=2048,
                        decoder_attention_heads=8, activation_function="relu", d_model=256, dropout=0.1,
                        attention_dropout=0.0, activation_dropout=0.0, auxiliary_loss=False,
                        position_embedding_type="sine", dilation=False, num_labels=91)
    return DetrForObjectDetection(config).eval()


class _ShiftedSeq2Seq(nn.Module):
    """An encoder-decoder fed input_ids alone, the decoder's input being input_ids shifted right behind the
    decoder start token: what BART's forward does by itself (the eighth set's bart_base) and Marian's refuses (a
    ValueError when no decoder input is given). Its output is the model's own (logits and the encoder's states)."""

    def __init__(self, model: nn.Module, decoder_start_token_id: int) -> None:
        super().__init__()
        self.model, self.decoder_start_token_id = model, decoder_start_token_id

    def forward(self, input_ids: torch.Tensor) -> object:
        start = torch.full_like(input_ids[:, :1], self.decoder_start_token_id)
        decoder_input_ids = torch.cat([start, input_ids[:, :-1]], dim=1)
        return self.model(input_ids=input_ids, decoder_input_ids=decoder_input_ids)


def marian_en_de() -> nn.Module:
    from transformers import MarianConfig, MarianMTModel

    # Helsinki-NLP/opus-mt-en-de's config: an encoder-decoder of 6 + 6 post-LayerNorm layers at d_model 512 (8
    # heads, FFN 2048, Swish), fixed sinusoidal positions, embeddings scaled by sqrt(512), vocabulary 58,101
    # shared by both embeddings and the head (plus a final_logits_bias buffer); no cache
    config = MarianConfig(vocab_size=58101, decoder_vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6,
                          encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                          decoder_ffn_dim=2048, activation_function="swish", max_position_embeddings=512,
                          dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, scale_embedding=True,
                          share_encoder_decoder_embeddings=True, pad_token_id=58100, eos_token_id=0,
                          decoder_start_token_id=58100, forced_eos_token_id=0, tie_word_embeddings=True,
                          use_cache=False, attn_implementation="sdpa")
    return _ShiftedSeq2Seq(MarianMTModel(config), 58100).eval()


def qwen3_06b() -> nn.Module:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    # Qwen/Qwen3-0.6B's config: 28 layers at hidden 1024, grouped-query attention of 16 query heads on 8 key/value
    # heads of 128 (so q is 2048 wide, wider than the hidden), RMSNorm on each head's q and k, rotary theta 1e6,
    # SwiGLU MLP 3072, no biases, vocabulary 151,936, tied head
    config = Qwen3Config(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                         num_attention_heads=16, num_key_value_heads=8, head_dim=128, hidden_act="silu",
                         max_position_embeddings=40960, rms_norm_eps=1e-6, tie_word_embeddings=True,
                         rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, attention_bias=False,
                         use_sliding_window=False, max_window_layers=28, bos_token_id=151643, eos_token_id=151645,
                         use_cache=False, attn_implementation="sdpa")
    return Qwen3ForCausalLM(config).eval()
