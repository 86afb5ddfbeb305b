"""An eleventh fresh held-out set for benchmarks/predict_validate.py (issue 28), written (twenty-first session) before
any of it was measured: none is a calibration net, and none is in the first ten sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish, densenet121_ish,
unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish, shufflenet_v2_ish,
mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small; inception_v3_ish,
r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small, opt_125m; squeezenet1_1_ish,
ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base, gpt_neo_125m, clip_text; mnasnet1_0_ish,
repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12, mpnet_base, tiny_starcoder, codegen_350m;
xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset, funnel_small_base, ernie45_03b, lfm2_350m;
wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny, depth_anything_small, esm2_150m, bart_base, smollm2_360m;
googlenet_ish, sd_vae_decoder_ish, mobilenet_v1, bit_50, beit_base, squeezebert, bloom_560m, yolos_tiny;
darknet53_ish, fcn_resnet50_ish, swin2sr_x2, wav2vec2_conformer, mobilevitv2, detr_resnet50, marian_en_de,
qwen3_06b). Each is a factory ``NAME()`` with random weights in eval mode that ``modelcost`` loads as
``benchmarks/predict_models_fresh10.py:NAME``. The one conv net of another source is written here (VoVNet's own code
needs its detection framework, and neither timm nor torchvision can be imported on the development machine); the
other seven come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its
values written out below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are
modelcost's static count at batch 1.

* vovnet39_ish: VoVNet-39 (Lee et al., "An Energy and GPU-Computation Efficient Backbone Network for Real-Time
  Object Detection", 2019, Table 1: a stem of three 3 x 3 conv-BN-ReLU, 64 at stride 2, 64, 128 at stride 2; four
  stages of One-Shot-Aggregation modules, each five chained 3 x 3 conv-BN-ReLU at 128, 160, 192 and 224 whose
  input and five outputs are concatenated once and reduced by a 1 x 1 conv-BN-ReLU to 256, 512, 768 and 1024; 1, 1,
  2 and 2 modules; a 3 x 3 stride-2 max-pool (ceil_mode) opening each stage after the first; global average pooling
  and a 1000-class linear), input 224 x 224 (the forward's argument is nn.Sequential's ``input``); 22,600,296
  parameters, 7.07 GMACs, every one but the classifier's 1.0 M in convs: wide concatenations (up to 2,144
  channels) into 1 x 1 convs, not DenseNet's growing chain (the first set's densenet121_ish) nor ResNet's sums.
* cvt_13: transformers CvtForImageClassification at microsoft/cvt-13's config (Wu et al., "CvT: Introducing
  Convolutions to Vision Transformers", 2021: overlapping conv token embeddings, 7 x 7 stride 4 to 64 and 3 x 3
  stride 2 to 192 and to 384, then 1, 2 and 10 transformer blocks of 1, 3 and 6 heads whose q, k and v are
  depthwise 3 x 3 conv + BatchNorm projections of the token map (k and v at stride 2, a quarter of the tokens)
  before their linears; MLP ratio 4; a class token in the last stage only), pixel_values 224 x 224, eager
  attention (CvT's is its own einsum; no SDPA path); 19,997,480 parameters, 4.57 GMACs (the paper's 20 M and
  4.5 G): linears 83%, the attention's einsums 11%, convs 6%.
* focalnet_tiny: transformers FocalNetForImageClassification at microsoft/focalnet-tiny's config, FocalNet-T
  with the small receptive field (Yang et al., "Focal Modulation Networks", 2022; transformers publishes the SRF
  tiny as microsoft/focalnet-tiny, with no "-srf" in the name, and the LRF one as focalnet-tiny-lrf): a 4 x 4
  stride-4 patch embedding to 96, stages of 2, 2, 6 and 2 focal-modulation blocks at 96, 192, 384 and 768 (each a
  linear to q, context and 3 gates, two levels of depthwise convs, 3 x 3 and 5 x 5, with GELU, a global-average
  level, the gated sum through a 1 x 1 conv multiplied into q, a linear; MLP ratio 4), pixel_values 224 x 224;
  28,427,116 parameters, 4.40 GMACs (the paper's 28.4 M and 4.4 G): linears 87%, convs 13%, no attention at all.
* deeplabv3_mobilenet_v2: transformers MobileNetV2ForSemanticSegmentation at
  google/deeplabv3_mobilenet_v2_1.0_513's config (MobileNetV2 1.0, expansion 6, ReLU6, TensorFlow "SAME" padding,
  at output stride 8: the stages after stride 8 keep it, their depthwise convs dilated 2 and then 4; the head: a
  1 x 1 conv to 256 beside a globally pooled 1 x 1 conv to 256, concatenated, a 1 x 1 projection to 256 and a 1 x 1
  to 21 PASCAL VOC classes, logits at 1/8 of the input), pixel_values 512 x 512 (the checkpoint's image_size is
  513; 512 keeps the 64 x 64 logits even); 2,525,717 parameters, 10.24 GMACs, all of them in convs: depthwise and
  1 x 1 convs on 64 x 64 maps with up to 960 channels. transformers' forward still runs MobileNetV2's closing 1 x 1
  conv to 1280 (+ BatchNorm, ReLU6; 412,160 of the parameters) whose output the segmentation head never reads (it
  takes the last block's hidden state): 1.68 GMACs, 16% of the count, that eager PyTorch computes and modelcost
  counts, but the ONNX export drops as dead code (its graph has 55 convs, none to 1280), so ONNX Runtime runs
  8.56 GMACs of it (torch.compile may drop it too).
* swiftformer_xs: transformers SwiftFormerForImageClassification at MBZUAI/swiftformer-xs's config (Shaker et al.,
  "SwiftFormer: Efficient Additive Attention for Transformer-based Real-time Mobile Vision Applications", 2023: a
  stem of two 3 x 3 stride-2 conv-BN-ReLU, stages of 3, 3, 6 and 4 blocks at 48, 56, 112 and 220, conv encoders
  (depthwise 3 x 3, BatchNorm, a 1 x 1 MLP of ratio 4 with GELU, layer scale) and one SwiftFormer encoder last in
  each stage, whose additive attention scores each token by one learned vector, pools the normalised queries into
  one global query and multiplies it into the keys element-wise: no token-by-token matrix; classification and
  distillation heads averaged), pixel_values 224 x 224; 3,475,360 parameters, 0.60 GMACs (the paper's 3.5 M and
  0.6 G): convs 90%, linears 10%; the smallest forward of the set.
* convbert_small: transformers ConvBertModel at YituTech/conv-bert-small's config (Jiang et al., "ConvBERT:
  Improving BERT with Span-based Dynamic Convolution", 2020: embeddings of 128 projected to hidden 256, 12
  post-LayerNorm layers, each a mixed attention of head_ratio 2, two self-attention heads of 64 beside two
  span-based dynamic convolution heads, a depthwise-separable Conv1d over the tokens and a kernel of 9 generated per
  token by a linear, then an FFN of 1024 with GELU; vocabulary 30,522), input_ids 128 tokens, eager attention
  (ConvBERT has no SDPA path: q k^T and its softmax's product are bmm); 13,143,768 parameters, 1.22 GMACs (linears
  91%, the Conv1d 4.4%, the attention's bmm 4.3%). The bare model's output (the last hidden states) trips nothing.
* distilbert_base: transformers DistilBertModel at distilbert-base-uncased's config (Sanh et al. 2019: 6
  post-LayerNorm layers at 768, 12 heads, FFN 3072, GELU, learned positions, no token types, no pooler; vocabulary
  30,522), input_ids 128 tokens, SDPA attention; 66,362,880 parameters, 5.59 GMACs (linears 97%, attention 3%):
  BERT-base's layer at half its depth, the encoder the first set's bert_base has twelve of.
* mobilellm_125m: transformers LlamaForCausalLM at facebook/MobileLLM-125M's config (Liu et al., "MobileLLM:
  Optimizing Sub-billion Parameter Language Models for On-Device Use Cases", 2024: deep and thin, 30 layers at
  hidden 576, grouped-query attention of 9 query heads on 3 key/value heads of 64, SwiGLU MLP 1536, RMSNorm eps
  1e-5, rotary theta 1e4, no biases, vocabulary 32,000 with the embedding shared by the head: the checkpoint's own
  class says share_embedding, LlamaForCausalLM says tie_word_embeddings, as in the Llama conversions of it), 128
  tokens, no cache, SDPA attention; 124,635,456 parameters, 16.52 GMACs (the 32,000-way head 14% of them).

All eight build and run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64: "every op
counted"), with batch 64 exactly 64 x batch 1's MACs for all eight. All export to ONNX by modelcost's own path
(bench/export.py, dynamic batch) into files ONNX Runtime's CPU provider runs at batch 1 and 2, batch 2 within
3.4e-6 of torch (mobilellm_125m's 3.3e-6 on logits up to 2.4; convbert_small's 2.6e-6 on 4.4; distilbert_base's
2.3e-6 on 4.7; cvt_13's 1.3e-6 on 1.2; the others 3.9e-7 or less). deeplabv3_mobilenet_v2's outputs are about
2.6e-22 under transformers' random init (convs of std 0.02 and BatchNorm at unit running statistics shrink the
activations through MobileNetV2's seventeen blocks, as the tenth set's mobilevitv2's did to zero), so its export
was checked again with every conv and linear at PyTorch's default init: 3.7e-9 on outputs of 0.061 (swiftformer_xs,
whose outputs are 7e-4, the same way: 8.9e-8 on 0.18). Seven by the TorchScript exporter (opset 17) in 0.8 to 9.4 s
each on the 2-core development machine (one torch thread and one ORT thread; deeplabv3_mobilenet_v2 the 9.4 s),
one, mobilellm_125m, by the torch.export one (opset 20) in 82.4 s after the TorchScript exporter failed as on the
tenth set's qwen3_06b (aten::diff, in transformers' mask building, has no ONNX form at opset 17). At batch 64 the
largest peak activation modelcost counts is deeplabv3_mobilenet_v2's 3.23 GB (fp32: 960-channel 64 x 64 maps),
then cvt_13's 1.32 GB, vovnet39_ish's 1.23 GB and mobilellm_125m's 1.07 GB. Every transformers class here has been
in the library since 4.29 or earlier; this set was counted and exported under 5.24 only.
"""

from __future__ import annotations

import torch
from torch import nn


def _conv_bn_relu(cin: int, cout: int, kernel: int, stride: int = 1) -> nn.Sequential:
    """VoVNet's conv unit: a conv without bias ("same" padding), BatchNorm, ReLU."""
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU())


class _OSA(nn.Module):
    """VoVNet's One-Shot Aggregation module: five 3 x 3 conv-BN-ReLU in a chain at the stage's conv width, the
    module's input and all five outputs concatenated once, then a 1 x 1 conv-BN-ReLU to the stage's output."""

    def __init__(self, cin: int, width: int, cout: int, layers: int = 5) -> None:
        super().__init__()
        self.layers = nn.ModuleList(_conv_bn_relu(cin if i == 0 else width, width, 3) for i in range(layers))
        self.concat = _conv_bn_relu(cin + layers * width, cout, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [x]
        for layer in self.layers:
            x = layer(x)
            outs.append(x)
        return self.concat(torch.cat(outs, dim=1))


def vovnet39_ish() -> nn.Module:
    # VoVNet-39 (Lee et al., "An Energy and GPU-Computation Efficient Backbone Network for Real-Time Object
    # Detection", CVPR-W 2019, Table 1): a stem of three 3 x 3 conv-BN-ReLU (64 stride 2, 64, 128 stride 2), then
    # four stages of OSA modules (5 x 3 x 3 convs at 128, 160, 192, 224; outputs 256, 512, 768, 1024; 1, 1, 2, 2
    # modules), a 3 x 3 stride-2 max-pool (ceil_mode) opening stages 3-5 (the paper's stages 3, 4 and 5: this
    # file's stages 2-4 of the OSA stages); global average pooling and a 1000-class linear
    layers: list[nn.Module] = [_conv_bn_relu(3, 64, 3, 2), _conv_bn_relu(64, 64, 3), _conv_bn_relu(64, 128, 3, 2)]
    cin = 128
    for stage, (width, cout, blocks) in enumerate(((128, 256, 1), (160, 512, 1), (192, 768, 2), (224, 1024, 2))):
        if stage > 0:
            layers.append(nn.MaxPool2d(3, 2, ceil_mode=True))
        for _ in range(blocks):
            layers.append(_OSA(cin, width, cout))
            cin = cout
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1024, 1000)]
    return nn.Sequential(*layers, *head).eval()


def cvt_13() -> nn.Module:
    from transformers import CvtConfig, CvtForImageClassification

    # microsoft/cvt-13's config (Wu et al., "CvT: Introducing Convolutions to Vision Transformers", ICCV 2021):
    # three stages of overlapping conv token embeddings (7 x 7 stride 4 to 64, 3 x 3 stride 2 to 192 and to 384,
    # each with LayerNorm) and 1, 2 and 10 transformer blocks of 1, 3 and 6 heads; each block's q, k and v are
    # depthwise 3 x 3 convs + BatchNorm on the token map ("dw_bn"; k and v at stride 2: a quarter of the tokens)
    # then linears; MLP ratio 4; a class token in the last stage only; a 1000-class head on it
    config = CvtConfig(num_channels=3, patch_sizes=[7, 3, 3], patch_stride=[4, 2, 2], patch_padding=[2, 1, 1],
                       embed_dim=[64, 192, 384], num_heads=[1, 3, 6], depth=[1, 2, 10], mlp_ratio=[4.0, 4.0, 4.0],
                       attention_drop_rate=[0.0, 0.0, 0.0], drop_rate=[0.0, 0.0, 0.0],
                       drop_path_rate=[0.0, 0.0, 0.1], qkv_bias=[True, True, True], cls_token=[False, False, True],
                       qkv_projection_method=["dw_bn", "dw_bn", "dw_bn"], kernel_qkv=[3, 3, 3],
                       padding_kv=[1, 1, 1], stride_kv=[2, 2, 2], padding_q=[1, 1, 1], stride_q=[1, 1, 1],
                       layer_norm_eps=1e-12, num_labels=1000)
    return CvtForImageClassification(config).eval()


def focalnet_tiny() -> nn.Module:
    from transformers import FocalNetConfig, FocalNetForImageClassification

    # microsoft/focalnet-tiny's config (Yang et al., "Focal Modulation Networks", NeurIPS 2022; the
    # small-receptive-field tiny, FocalNet-T (SRF): transformers publishes no "-srf" name, its focalnet-tiny is
    # this one, focalnet-tiny-lrf the other): a 4 x 4 stride-4 patch embedding to 96, four stages of 2, 2, 6 and 2
    # focal-modulation blocks at 96, 192, 384 and 768 (2 x 2 stride-2 conv downsampling between them), each
    # block a LayerNorm, a linear to q, context and 3 gates, 2 focal levels of depthwise convs (3 x 3, 5 x 5) +
    # GELU, a global-average level, the gated sum through a 1 x 1 conv modulating q, a linear; MLP ratio 4; no
    # self-attention at all; a 1000-class head
    config = FocalNetConfig(image_size=224, patch_size=4, num_channels=3, embed_dim=96, use_conv_embed=False,
                            hidden_sizes=[192, 384, 768, 768], depths=[2, 2, 6, 2], focal_levels=[2, 2, 2, 2],
                            focal_windows=[3, 3, 3, 3], hidden_act="gelu", mlp_ratio=4.0, hidden_dropout_prob=0.0,
                            drop_path_rate=0.1, use_layerscale=False, layerscale_value=1e-4,
                            use_post_layernorm=False, use_post_layernorm_in_modulation=False,
                            normalize_modulator=False, layer_norm_eps=1e-5, encoder_stride=32, num_labels=1000)
    return FocalNetForImageClassification(config).eval()


def deeplabv3_mobilenet_v2() -> nn.Module:
    from transformers import MobileNetV2Config, MobileNetV2ForSemanticSegmentation

    # google/deeplabv3_mobilenet_v2_1.0_513's config (Sandler et al. 2018's MobileNetV2 with Chen et al. 2018's
    # DeepLabV3 head): MobileNetV2 1.0 (expansion 6, ReLU6, TensorFlow "SAME" padding) at output stride 8 (the
    # stages after stride 8 dilated instead of strided); its closing 1 x 1 conv to 1280 still runs but nothing
    # reads it (the head takes the last block's output); the head a 1 x 1 conv to 256 beside a global-pooled
    # 1 x 1 conv to 256, concatenated and projected by a 1 x 1 to 256, then a 1 x 1 to 21 PASCAL VOC classes:
    # logits at 1/8 of the input
    config = MobileNetV2Config(num_channels=3, image_size=513, depth_multiplier=1.0, depth_divisible_by=8,
                               min_depth=8, expand_ratio=6.0, output_stride=8, first_layer_is_expansion=True,
                               finegrained_output=True, hidden_act="relu6", tf_padding=True,
                               classifier_dropout_prob=0.8, layer_norm_eps=1e-3, semantic_loss_ignore_index=255,
                               num_labels=21)
    return MobileNetV2ForSemanticSegmentation(config).eval()


def swiftformer_xs() -> nn.Module:
    from transformers import SwiftFormerConfig, SwiftFormerForImageClassification

    # MBZUAI/swiftformer-xs's config (Shaker et al., "SwiftFormer: Efficient Additive Attention for
    # Transformer-based Real-time Mobile Vision Applications", ICCV 2023): a stem of two 3 x 3 stride-2 conv-BN-ReLU,
    # four stages at 48, 56, 112 and 220 of 3, 3, 6 and 4 blocks (3 x 3 stride-2 conv-BN downsampling between
    # them): conv encoders (depthwise 3 x 3, BatchNorm, 1 x 1 up 4x, GELU, 1 x 1 back, layer scale) and, last in
    # each stage, a SwiftFormer encoder whose efficient additive attention scores each token by one learned
    # vector, sums the normalised query by those scores into one global query and multiplies it into the keys
    # element-wise (no token-by-token matrix); MLP ratio 4; a BatchNorm and two 1000-class heads (classification
    # and distillation, averaged)
    config = SwiftFormerConfig(image_size=224, num_channels=3, depths=[3, 3, 6, 4], embed_dims=[48, 56, 112, 220],
                               mlp_ratio=4, downsamples=[True, True, True, True], hidden_act="gelu",
                               down_patch_size=3, down_stride=2, down_pad=1, drop_path_rate=0.0, drop_mlp_rate=0.0,
                               drop_conv_encoder_rate=0.0, use_layer_scale=True, layer_scale_init_value=1e-5,
                               batch_norm_eps=1e-5, num_labels=1000)
    return SwiftFormerForImageClassification(config).eval()


def convbert_small() -> nn.Module:
    from transformers import ConvBertConfig, ConvBertModel

    # YituTech/conv-bert-small's config (Jiang et al., "ConvBERT: Improving BERT with Span-based Dynamic
    # Convolution", NeurIPS 2020): embeddings of 128 projected to hidden 256, 12 layers; each layer's mixed
    # attention (head_ratio 2: 2 self-attention heads of 64 beside 2 span-based dynamic convolution heads, the
    # hidden halved between them) with a depthwise-separable Conv1d (kernel 9) over the tokens whose kernel is
    # generated per token by a linear, LayerNorm post-norm, FFN 1024 with GELU; vocabulary 30,522; eager attention
    # (ConvBERT has no SDPA path)
    config = ConvBertConfig(vocab_size=30522, hidden_size=256, num_hidden_layers=12, num_attention_heads=4,
                            intermediate_size=1024, hidden_act="gelu", hidden_dropout_prob=0.1,
                            attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=2,
                            layer_norm_eps=1e-12, pad_token_id=0, bos_token_id=0, eos_token_id=2, embedding_size=128,
                            head_ratio=2, conv_kernel_size=9, num_groups=1)
    return ConvBertModel(config).eval()


def distilbert_base() -> nn.Module:
    from transformers import DistilBertConfig, DistilBertModel

    # distilbert-base-uncased's config (Sanh et al., "DistilBERT, a distilled version of BERT", 2019): BERT-base's
    # width with half its depth: 6 post-LayerNorm layers at 768 (12 heads, FFN 3072, GELU), learned positions, no
    # token types, no pooler; vocabulary 30,522; SDPA attention
    config = DistilBertConfig(vocab_size=30522, max_position_embeddings=512, sinusoidal_pos_embds=False, n_layers=6,
                              n_heads=12, dim=768, hidden_dim=3072, dropout=0.1, attention_dropout=0.1,
                              activation="gelu", qa_dropout=0.1, seq_classif_dropout=0.2, pad_token_id=0,
                              attn_implementation="sdpa")
    return DistilBertModel(config).eval()


def mobilellm_125m() -> nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    # facebook/MobileLLM-125M's config (Liu et al., "MobileLLM: Optimizing Sub-billion Parameter Language Models
    # for On-Device Use Cases", ICML 2024), a Llama: deep and thin, 30 layers at hidden 576, grouped-query
    # attention of 9 query heads on 3 key/value heads of 64, SwiGLU MLP 1536, RMSNorm, rotary theta 1e4, no
    # biases, vocabulary 32,000 with the input embedding shared by the head (the checkpoint's own model class
    # says share_embedding; in LlamaForCausalLM that is tie_word_embeddings)
    config = LlamaConfig(vocab_size=32000, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                         num_attention_heads=9, num_key_value_heads=3, head_dim=64, hidden_act="silu",
                         max_position_embeddings=2048, rms_norm_eps=1e-5, tie_word_embeddings=True,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, attention_bias=False,
                         mlp_bias=False, bos_token_id=1, eos_token_id=2, use_cache=False, attn_implementation="sdpa")
    return LlamaForCausalLM(config).eval()
