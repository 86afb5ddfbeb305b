"""A ninth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (nineteenth session) before
any of it was measured: none is a calibration net, and none is in the first eight sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small,
opt_125m; squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base,
gpt_neo_125m, clip_text; mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12,
mpnet_base, tiny_starcoder, codegen_350m; xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset,
funnel_small_base, ernie45_03b, lfm2_350m; wide_resnet50_2, regnetx_032_ish, alexnet_ish, hiera_tiny,
depth_anything_small, esm2_150m, bart_base, smollm2_360m). Each is a factory ``NAME()`` with random weights in eval
mode that ``modelcost`` loads as ``benchmarks/predict_models_fresh8.py:NAME``. The two conv nets of other
libraries are written here (torchvision cannot be imported on the development machine and diffusers is not
installed); the other six come from ``transformers`` itself (random weights from a config at the published
checkpoint's shape, its values written out below): the code users bring. Parameter counts are sum(numel) of the
built module; GMACs are modelcost's static count at batch 1.

* googlenet_ish: torchvision's GoogLeNet (Inception v1 with BatchNorm after every conv, transform_input False, no
  auxiliary heads, as in eval: a 7 x 7 stride-2 stem, nine Inception modules of four branches (1 x 1; 1 x 1 ->
  3 x 3; 1 x 1 -> 3 x 3, torchvision's stand-in for the paper's 5 x 5; 3 x 3 max pool -> 1 x 1) concatenated,
  ceil-mode max pools), 224 x 224; 6,624,904 parameters, 1.50 GMACs (torchvision: 6,624,904 and "1.50 GFLOPS"):
  many narrow branches side by side, the v1 that the third set's inception_v3_ish grew from.
* sd_vae_decoder_ish: Stable Diffusion's VAE decoder (diffusers' AutoencoderKL of runwayml/stable-diffusion-v1-5:
  the 1 x 1 post_quant_conv on the 4-channel latent, a 3 x 3 conv_in to 512, a mid block of two ResNet blocks
  around one single-head self-attention over the pixels (512 wide), four up blocks of three ResNet blocks at 512,
  512, 256 and 128 channels, the first three ending in a nearest 2x upsample + 3 x 3 conv, GroupNorm 32 + SiLU
  throughout, a 3 x 3 conv_out to RGB), a 16 x 16 latent decoded to a 128 x 128 image; 49,490,199 parameters
  (diffusers' decoder 49,490,179 and the post_quant_conv's 20; with its encoder's 34,163,592 and quant_conv's 72,
  the published AutoencoderKL's 83,653,863), 77.57 GMACs: convs, almost all 3 x 3, at up to 512 channels and
  128 x 128 pixels do 99.6% of them, GroupNorm between them: the most MACs of any conv net in the sets.
* mobilenet_v1: transformers MobileNetV1ForImageClassification at google/mobilenet_v1_1.0_224's config (a 3 x 3
  stride-2 conv to 32, 13 depthwise-separable pairs with BatchNorm + ReLU6 widening to 1024, TensorFlow's "SAME"
  padding computed in the forward, a 1001-class head with TF's background class; no residuals, no
  squeeze-excitation), pixel_values 224 x 224; 4,233,001 parameters, 0.569 GMACs (the paper's 4.2 M and 569 M
  mult-adds).
* bit_50: transformers BitForImageClassification at google/bit-50's config (BiT-M R50x1: a ResNet-50 v2 of
  pre-activation bottlenecks 3-4-6-3 to 256-512-1024-2048 channels, every conv's weight standardized in the
  forward and every norm a GroupNorm of 32 groups), pixel_values 224 x 224; 25,549,352 parameters (timm's
  resnetv2_50x1_bit: 25.5 M), 4.09 GMACs (ResNet-50's: the standardization and GroupNorm add no MACs, only
  passes over the weights and activations).
* beit_base: transformers BeitForImageClassification at microsoft/beit-base-patch16-224's config (a ViT-B/16 of 12
  layers at hidden 768, 12 heads, MLP 3072, with no absolute positions but a learned relative position bias per
  layer, gathered from a table into a 197 x 197 bias per head and handed to the attention as its mask; layer
  scale 0.1 on both residual branches; mean pooling), pixel_values 224 x 224, SDPA attention; 86,530,984
  parameters, 17.56 GMACs (timm's beit_base_patch16_224: 86.53 M and 17.6 G).
* squeezebert: transformers SqueezeBertForSequenceClassification at squeezebert/squeezebert-uncased's config
  (BERT-base's shape, 12 post-LayerNorm layers at hidden 768, 12 heads, MLP 3072, with every position-wise linear
  a 1 x 1 Conv1d on a channels-first layout, those of q, k, v, MLP-in and MLP-out of 4 groups; vocabulary 30,528;
  a two-label classifier on the pooled first token), 128 tokens, eager attention (SqueezeBERT has no SDPA path);
  51,095,810 parameters, 3.70 GMACs (the paper's 51.1 M and 7.42 GFLOPs at 128 tokens).
* bloom_560m: transformers BloomForCausalLM at bigscience/bloom-560m's config (24 layers at hidden 1024, 16 heads
  of 64, ALiBi biases in place of position embeddings, a LayerNorm on the word embeddings, GELU MLP 4096, biases
  everywhere, a 250,880-token multilingual vocabulary: the embedding, tied to the head, is 46% of the weights,
  the head 45% of the MACs), 128 tokens, no cache, eager attention (BLOOM has no SDPA path: a baddbmm of the
  ALiBi bias); 559,214,592 parameters (the published 559 M), 72.34 GMACs.
* yolos_tiny: transformers YolosForObjectDetection at hustvl/yolos-tiny's config (a DeiT-tiny of 12 layers at
  hidden 192, 3 heads, MLP 768, over 16 x 16 patches plus a class token and 100 detection tokens; position
  embeddings learned at 800 x 1333 and resized bicubically to the input's patch grid in the forward; no mid-layer
  position embeddings; two 3-layer MLP heads on the detection tokens, 92 classes with "no object" and 4 box
  coordinates), pixel_values 512 x 512 (1,125 tokens), SDPA attention; 6,488,736 parameters (the published 6.5 M),
  11.97 GMACs, 49% of them in the attention's two products: a long sequence at a narrow width.

All eight build and run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64: "every op
counted", batch 64 exactly 64 x batch 1's MACs), and export to ONNX by modelcost's own path (bench/export.py, opset
17, dynamic batch) into files ONNX Runtime's CPU provider runs at batch 1 and 2 (batch 2 within 7.7e-6 of torch;
sd_vae_decoder_ish's 2.5e-5 is 9e-6 of its outputs' 2.7, after 77.6 GMACs of fp32 sums, and mobilenet_v1's
logits shrink to 7.5e-28 under transformers' random init (convs of std 0.02, BatchNorm at unit running
statistics in eval, no residuals), its 4.1e-34 5.4e-7 of that):
the seven others by the TorchScript exporter in 1.0 to 14.9 s each on the 2-core development machine (one torch
thread and one ORT thread; beit_base the 14.9 s), bloom_560m by the torch.export one in 128.2 s all told, within
the 150 s limit (the TorchScript exporter's file, after 60 s, took logits_to_keep as an input: the defaulted
argument of the forward, traced). At batch 64 the largest peak activation modelcost counts is bloom_560m's
8.25 GB (fp32; its 64 x 128 x 250,880 logits are 8.2 GB of it), then sd_vae_decoder_ish's 2.68 GB. Every class is
in the GPU machine's transformers (5.17) as well as this one's (5.24), and the two that ask for SDPA (BEiT, YOLOS)
declare it in both. Counted under 5.17, all six give the same parameters and MACs as under 5.24 at batch 1 and 64;
BLOOM's ALiBi (built from the key length in 5.24, from the cumulative sum of an all-ones mask in 5.17) costs no MACs
either way, and bloom_560m exports under 5.17 too (torch.export, 136.2 s, the same differences to torch);
YOLOS's mid-layer position embeddings, which 5.17 and 5.24 keep in different modules, are off in yolos-tiny's config.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class _ConvBnRelu(nn.Sequential):
    """torchvision GoogLeNet's BasicConv2d: a conv without bias, BatchNorm (eps 1e-3), ReLU."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1, padding: int = 0) -> None:
        super().__init__(nn.Conv2d(cin, cout, kernel, stride, padding, bias=False), nn.BatchNorm2d(cout, eps=0.001),
                         nn.ReLU())


class _Inception(nn.Module):
    """An Inception v1 module as torchvision builds it: a 1 x 1 branch, a 1 x 1 -> 3 x 3 branch, a second
    1 x 1 -> 3 x 3 branch (the paper's 5 x 5, written as 3 x 3 in torchvision and kept for its weights), and a
    3 x 3 stride-1 max pool -> 1 x 1 branch, concatenated along the channels."""

    def __init__(self, cin: int, c1: int, c3r: int, c3: int, c5r: int, c5: int, pool: int) -> None:
        super().__init__()
        self.b1 = _ConvBnRelu(cin, c1, 1)
        self.b2 = nn.Sequential(_ConvBnRelu(cin, c3r, 1), _ConvBnRelu(c3r, c3, 3, padding=1))
        self.b3 = nn.Sequential(_ConvBnRelu(cin, c5r, 1), _ConvBnRelu(c5r, c5, 3, padding=1))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, 1, ceil_mode=True), _ConvBnRelu(cin, pool, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


def googlenet_ish() -> nn.Module:
    # torchvision's googlenet (Szegedy et al., CVPR 2015, with BatchNorm after every conv; transform_input False,
    # no auxiliary heads, as in eval): a 7 x 7 stride-2 stem of 64, a max pool, 1 x 1 to 64 and 3 x 3 to 192, a
    # max pool, then nine Inception modules (3a-3b, a max pool, 4a-4e, a 2 x 2 max pool, 5a-5b; max pools with
    # ceil_mode), average pooling, dropout 0.2 (nothing in eval) and a 1000-class linear
    stem = [_ConvBnRelu(3, 64, 7, 2, 3), nn.MaxPool2d(3, 2, ceil_mode=True), _ConvBnRelu(64, 64, 1),
            _ConvBnRelu(64, 192, 3, padding=1), nn.MaxPool2d(3, 2, ceil_mode=True)]
    body = [_Inception(192, 64, 96, 128, 16, 32, 32), _Inception(256, 128, 128, 192, 32, 96, 64),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            _Inception(480, 192, 96, 208, 16, 48, 64), _Inception(512, 160, 112, 224, 24, 64, 64),
            _Inception(512, 128, 128, 256, 24, 64, 64), _Inception(512, 112, 144, 288, 32, 64, 64),
            _Inception(528, 256, 160, 320, 32, 128, 128), nn.MaxPool2d(2, 2, ceil_mode=True),
            _Inception(832, 256, 160, 320, 32, 128, 128), _Inception(832, 384, 192, 384, 48, 128, 128)]
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(1024, 1000)]
    return nn.Sequential(*stem, *body, *head).eval()


class _VaeResnet(nn.Module):
    """diffusers' ResnetBlock2D as the VAE decoder uses it (no time embedding): GroupNorm(32, eps 1e-6) + SiLU +
    3 x 3 conv, twice, added to the input (through a 1 x 1 conv where the channels change)."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.GroupNorm(32, cin, eps=1e-6), nn.SiLU(), nn.Conv2d(cin, cout, 3, padding=1),
                                  nn.GroupNorm(32, cout, eps=1e-6), nn.SiLU(), nn.Conv2d(cout, cout, 3, padding=1))
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.skip(x) + self.body(x)


class _VaeAttention(nn.Module):
    """diffusers' Attention in the VAE's mid block: GroupNorm over the channels, then one head as wide as the
    channels over every pixel (q, k, v and out linears with bias), added to the input."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(32, channels, eps=1e-6)
        self.q, self.k, self.v, self.out = (nn.Linear(channels, channels) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        t = self.norm(x).reshape(b, c, h * w).transpose(1, 2)
        q, k, v = (proj(t).unsqueeze(1) for proj in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v).squeeze(1)
        return x + self.out(a).transpose(1, 2).reshape(b, c, h, w)


class _Upsample(nn.Module):
    """diffusers' Upsample2D with a conv: nearest 2x, then a 3 x 3 conv."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


def sd_vae_decoder_ish() -> nn.Module:
    # runwayml/stable-diffusion-v1-5's AutoencoderKL decoder (diffusers Decoder: block_out_channels 128-256-512-512,
    # layers_per_block 2, so 3 ResNet blocks per up block; GroupNorm 32, SiLU): the 1 x 1 post_quant_conv on the
    # 4-channel latent, a 3 x 3 conv_in to 512, a mid block of ResNet, one-head self-attention over the pixels,
    # ResNet, then up blocks at 512, 512, 256 and 128 channels, each of 3 ResNet blocks and the first three ending
    # in a nearest 2x upsample + 3 x 3 conv (16 -> 128 pixels a side), GroupNorm + SiLU and a 3 x 3 conv_out to RGB
    layers: list[nn.Module] = [nn.Conv2d(4, 4, 1), nn.Conv2d(4, 512, 3, padding=1), _VaeResnet(512, 512),
                               _VaeAttention(512), _VaeResnet(512, 512)]
    cin = 512
    for i, cout in enumerate((512, 512, 256, 128)):
        layers += [_VaeResnet(cin if j == 0 else cout, cout) for j in range(3)]
        layers += [_Upsample(cout)] if i < 3 else []
        cin = cout
    head = [nn.GroupNorm(32, 128, eps=1e-6), nn.SiLU(), nn.Conv2d(128, 3, 3, padding=1)]
    return nn.Sequential(*layers, *head).eval()


def mobilenet_v1() -> nn.Module:
    from transformers import MobileNetV1Config, MobileNetV1ForImageClassification

    # google/mobilenet_v1_1.0_224's config: a 3 x 3 stride-2 conv to 32, then 13 depthwise-separable pairs (3 x 3
    # depthwise + BatchNorm + ReLU6, 1 x 1 pointwise + BatchNorm + ReLU6) widening to 1024, TensorFlow's "SAME"
    # padding computed in the forward, average pooling, a 1001-class linear (TF's background class)
    config = MobileNetV1Config(num_channels=3, image_size=224, depth_multiplier=1.0, min_depth=8, hidden_act="relu6",
                               tf_padding=True, classifier_dropout_prob=0.999, layer_norm_eps=0.001, num_labels=1001)
    return MobileNetV1ForImageClassification(config).eval()


def bit_50() -> nn.Module:
    from transformers import BitConfig, BitForImageClassification

    # google/bit-50's config (BiT-M R50x1, Kolesnikov et al., ECCV 2020): a ResNet-50 v2, pre-activation
    # bottlenecks 3-4-6-3 to 256-512-1024-2048 channels, every conv weight-standardized in the forward and every
    # BatchNorm a GroupNorm of 32 groups; a 7 x 7 stride-2 stem of 64 and a max pool, a 1000-class head
    config = BitConfig(num_channels=3, embedding_size=64, hidden_sizes=[256, 512, 1024, 2048], depths=[3, 4, 6, 3],
                       layer_type="preactivation", hidden_act="relu", global_padding=None, num_groups=32,
                       drop_path_rate=0.0, embedding_dynamic_padding=False, output_stride=32, width_factor=1,
                       num_labels=1000)
    return BitForImageClassification(config).eval()


def beit_base() -> nn.Module:
    from transformers import BeitConfig, BeitForImageClassification

    # microsoft/beit-base-patch16-224's config: a ViT-B/16 (12 layers at hidden 768, 12 heads, MLP 3072, GELU)
    # with no absolute positions but a learned relative position bias per layer (a table of 732 entries x 12
    # heads gathered into a 197 x 197 bias added inside the attention), layer scale 0.1 on both residual
    # branches, and mean pooling of the patch tokens into a 1000-class head; SDPA attention, the bias its mask
    config = BeitConfig(vocab_size=8192, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                        intermediate_size=3072, hidden_act="gelu", hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12, image_size=224, patch_size=16,
                        num_channels=3, use_mask_token=False, use_absolute_position_embeddings=False,
                        use_relative_position_bias=True, use_shared_relative_position_bias=False,
                        layer_scale_init_value=0.1, drop_path_rate=0.0, use_mean_pooling=True, num_labels=1000,
                        attn_implementation="sdpa")
    return BeitForImageClassification(config).eval()


def squeezebert() -> nn.Module:
    from transformers import SqueezeBertConfig, SqueezeBertForSequenceClassification

    # squeezebert/squeezebert-uncased's config (Iandola et al. 2020): BERT-base's shape (12 layers at hidden 768,
    # 12 heads, MLP 3072, GELU, post-LayerNorm) with every position-wise linear a 1 x 1 Conv1d over the channels,
    # the q, k, v, MLP-in and MLP-out ones of 4 groups (the attention output's of 1); vocabulary 30,528; a
    # two-label classifier on the pooled first token; eager attention: SqueezeBERT has no SDPA path
    config = SqueezeBertConfig(vocab_size=30528, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                               intermediate_size=3072, hidden_act="gelu", hidden_dropout_prob=0.0,
                               attention_probs_dropout_prob=0.0, max_position_embeddings=512, type_vocab_size=2,
                               layer_norm_eps=1e-12, pad_token_id=0, embedding_size=768, q_groups=4, k_groups=4,
                               v_groups=4, post_attention_groups=1, intermediate_groups=4, output_groups=4,
                               num_labels=2, attn_implementation="eager")
    return SqueezeBertForSequenceClassification(config).eval()


def bloom_560m() -> nn.Module:
    from transformers import BloomConfig, BloomForCausalLM

    # bigscience/bloom-560m's config: 24 layers at hidden 1024, 16 heads of 64, ALiBi position biases (no position
    # embedding), a LayerNorm on the word embeddings, GELU MLP 4096, biases everywhere, vocabulary 250,880 (a
    # multilingual one: the head is 46% of the weights), tied head; eager attention: BLOOM has no SDPA path
    config = BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16, layer_norm_epsilon=1e-5,
                         bos_token_id=1, eos_token_id=2, pad_token_id=3, apply_residual_connection_post_layernorm=False,
                         hidden_dropout=0.0, attention_dropout=0.0, pretraining_tp=1, slow_but_exact=False,
                         tie_word_embeddings=True, use_cache=False, attn_implementation="eager")
    return BloomForCausalLM(config).eval()


def yolos_tiny() -> nn.Module:
    from transformers import YolosConfig, YolosForObjectDetection

    # hustvl/yolos-tiny's config (Fang et al., NeurIPS 2021): a DeiT-tiny (12 layers at hidden 192, 3 heads, MLP
    # 768) over 16 x 16 patches plus a class token and 100 detection tokens, position embeddings learned at
    # 800 x 1333 and resized bicubically to the input's patch grid in the forward (32 x 32 at 512: 1,125 tokens),
    # no mid-layer position embeddings; two 3-layer MLP heads on the detection tokens (92 classes with "no
    # object", 4 box coordinates); SDPA attention
    config = YolosConfig(hidden_size=192, num_hidden_layers=12, num_attention_heads=3, intermediate_size=768,
                         hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         layer_norm_eps=1e-12, image_size=[800, 1333], patch_size=16, num_channels=3, qkv_bias=True,
                         num_detection_tokens=100, use_mid_position_embeddings=False, auxiliary_loss=False,
                         num_labels=91, attn_implementation="sdpa")
    return YolosForObjectDetection(config).eval()
