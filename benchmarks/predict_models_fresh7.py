"""An eighth fresh held-out set for benchmarks/predict_validate.py (issue 28), written (eighteenth session) before
any of it was measured: none is a calibration net, and none is in the first seven sets (resnet50, mobilenet_v2,
efficientnet_ish, convnext_ish, vit_b16, bert_base, gpt2, t5_encoder_ish; resnext50_ish, vgg16_ish,
densenet121_ish, unet_ish, mixer_b16, whisper_encoder_ish, qwen2_05b, modernbert_base; regnety_016_ish,
shufflenet_v2_ish, mobilenetv3_large_ish, swin_tiny, wav2vec2_base, pythia_160m, gemma3_270m, deberta_v3_small;
inception_v3_ish, r3d_18_ish, csp_darknet_ish, segformer_b0, mobilevit_small, smollm_135m, electra_small,
opt_125m; squeezenet1_1_ish, ghostnet_ish, edsr_baseline_ish, dinov2_small, convnextv2_tiny, albert_base,
gpt_neo_125m, clip_text; mnasnet1_0_ish, repvgg_a0_ish, efficientnetv2_s_ish, levit_128s, poolformer_s12,
mpnet_base, tiny_starcoder, codegen_350m; xception_ish, convmixer_768_32, resnet34_ish, pvt_v2_b0, ast_audioset,
funnel_small_base, ernie45_03b, lfm2_350m). Each is a factory ``NAME()`` with random weights in eval mode that
``modelcost`` loads as ``benchmarks/predict_models_fresh7.py:NAME``. The three CNNs are written here; the other
five come from ``transformers`` itself (random weights from a config at the published checkpoint's shape, its values
written out below): the code users bring. Parameter counts are sum(numel) of the built module; GMACs are
modelcost's static count at batch 1.

* wide_resnet50_2: torchvision's Wide ResNet-50-2 (ResNet-50's bottlenecks 3-4-6-3 with twice the inner width,
  128-256-512-1024, outputs 256-512-1024-2048, the stride on the 3 x 3 conv), 224 x 224; 68,883,240 parameters,
  11.40 GMACs (torchvision: 68,883,240 and "11.40 GFLOPS"): the widest convs of the eight sets' ResNets.
* regnetx_032_ish: torchvision's RegNetX-3.2GF (Radosavovic et al., CVPR 2020: w_0 88, w_a 26.31, w_m 2.25, depth
  25, group width 48, bottleneck ratio 1, so stages of 2-6-15-2 X blocks at widths 96-192-432-1008 with grouped
  3 x 3 convs of 2, 4, 9 and 21 groups; no squeeze-excitation, unlike the third set's RegNetY-1.6GF), 224 x 224;
  15,296,552 parameters, 3.18 GMACs (torchvision: 15,296,552 and "3.18 GFLOPS").
* alexnet_ish: torchvision's AlexNet (five convs from an 11 x 11 stride-4 one, three max pools, a 6 x 6 average
  pool, linears 9216 -> 4096 -> 4096 -> 1000), 224 x 224; 61,100,840 parameters, 0.714 GMACs (torchvision:
  61,100,840 and "0.71 GFLOPS"): 96% of the weights in three linears that do 8% of the MACs, so weight reads,
  not arithmetic, at batch 1.
* hiera_tiny: transformers HieraForImageClassification at facebook/hiera-tiny-224-hf's config (a 7 x 7 stride-4
  patch embedding to 96, stages of 1-2-7-2 blocks at widths 96-192-384-768 with 1, 2, 4 and 8 heads, three 2 x 2
  query max pools between stages (56 -> 7 tokens a side), mask-unit attention within 8 x 8 windows in the first
  two stages and global attention after, MLP ratio 4; no convs past the stem), pixel_values 224 x 224, eager
  attention (Hiera has no SDPA path); 27,910,216 parameters, 4.90 GMACs (the paper's and timm's 27.9 M and 4.9 G).
* depth_anything_small: transformers DepthAnythingForDepthEstimation at LiheYoung/depth-anything-small-hf's config
  (a DINOv2-small backbone, 12 layers at hidden 384 with 6 heads, over 37 x 37 = 1,369 patches of 14 plus the class
  token at 518 x 518; its layers 9-12 reassembled into 48-96-192-384 channels at 4x, 2x, 1x and 0.5x the patch grid
  and fused at 64 channels by residual conv units and bilinear upsampling into a 518 x 518 depth map: dense
  prediction, half the work in convs at high resolution), pixel_values 518 x 518, the backbone's attention SDPA
  (the DPT head has none, and DepthAnything itself declares no SDPA path); 24,785,089 parameters (the published
  24.8 M), 57.63 GMACs.
* esm2_150m: transformers EsmForMaskedLM at facebook/esm2_t30_150M_UR50D's config (a protein language model: a
  pre-LayerNorm encoder of 30 layers at hidden 640, 20 heads of 32, GELU MLP 2560, rotary positions, token
  dropout's rescaling of the embeddings, a 33-token vocabulary and masked-LM head: deep and narrow), 128 tokens,
  SDPA attention; 148,140,154 parameters (the published "150M"), 19.56 GMACs.
* bart_base: transformers BartForConditionalGeneration at facebook/bart-base's config (an encoder-decoder of 6 + 6
  post-LayerNorm layers at d_model 768, 12 heads, GELU MLP 3072, learned positions; the decoder's causal
  self-attention and cross-attention over the encoder's 128 states, its input the input_ids shifted right (BART's
  own default), a 50,265-token head shared with both embeddings: the first whole seq2seq model of the sets),
  128 tokens, no cache, SDPA attention; 139,420,416 parameters (the published 140 M), 18.08 GMACs.
* smollm2_360m: transformers LlamaForCausalLM at HuggingFaceTB/SmolLM2-360M's config (32 layers at hidden 960,
  grouped-query attention of 15 query heads on 5 key/value heads of 64, rotary theta 1e5, SwiGLU MLP 2560, no
  biases, vocabulary 49,152, tied head: the Llama code of the fourth set's smollm_135m at 2.7 x its parameters,
  and the deepest LM of the sets), 128 tokens, no cache, SDPA attention; 361,821,120 parameters (the published
  362 M), 47.31 GMACs.

All eight build and run at batch 1 on the CPU, count completely (static analysis at batch 1 and 64: "every op
counted", batch 64 exactly 64 x batch 1's MACs), and export to ONNX by modelcost's own path (bench/export.py, opset
17, dynamic batch) into files ONNX Runtime's CPU provider runs at batch 1 and 2 (batch 2 within 5.3e-6 of torch;
depth_anything_small's random-weight depth map peaks at 1.9e-4, and its 2.5e-9 is 1.3e-5 of that): the seven
non-decoders by the TorchScript exporter in 2.1 to 22.4 s each on the 2-core development machine (one torch thread
and one ORT thread; bart_base the 22.4 s), smollm2_360m by the torch.export one (the TorchScript exporter refused
the aten::diff of transformers' mask code, as for the seventh set's two LMs) in 116.1 s, within the 150 s limit. At
batch 64 the largest peak activation modelcost counts is depth_anything_small's 4.4 GB (fp32). Every class is in the
GPU machine's transformers (5.17) as well as this one's (5.24), and the four that ask for SDPA (DINOv2 in Depth
Anything, ESM, BART, Llama) declare it in both. Counted under 5.17, hiera_tiny, depth_anything_small and bart_base
give the same MACs as under 5.24 at batch 1 and 64; esm2_150m and smollm2_360m give 2,048 and 4,096 MACs more at
either batch, their rotary embedding's inverse frequencies times the positions (one small product a forward, of
batch 1's position ids, so 5.17's batch 64 is not quite 64 x its batch 1): 5.17 writes it as a matmul, 5.24 as an
elementwise product. The seventh set's ERNIE-4.5 shows the same.
"""

from __future__ import annotations

import torch
from torch import nn


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, relu: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                               nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


class _Bottleneck(nn.Module):
    """A residual bottleneck of torchvision's kind (the stride on the 3 x 3 conv, "ResNet v1.5"): 1 x 1 to
    ``width``, a 3 x 3 conv of ``groups`` groups, 1 x 1 to ``cout``, BatchNorm after each and ReLU after the first
    two and after the sum; a 1 x 1 strided conv + BatchNorm shortcut where the shape changes (else the identity).
    Wide ResNet's block (one group, twice the width) and RegNetX's X block (group width 48, bottleneck ratio 1)
    are both this."""

    def __init__(self, cin: int, width: int, cout: int, stride: int, groups: int = 1) -> None:
        super().__init__()
        self.body = nn.Sequential(_conv_bn(cin, width, 1, relu=True), _conv_bn(width, width, 3, stride, groups, True),
                                  _conv_bn(width, cout, 1))
        self.skip = _conv_bn(cin, cout, 1, stride) if cin != cout or stride != 1 else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


def wide_resnet50_2() -> nn.Module:
    # torchvision's wide_resnet50_2 (Zagoruyko and Komodakis's widening of ResNet-50's bottlenecks): a 7 x 7
    # stride-2 stem of 64 and a 3 x 3 stride-2 max pool, then bottlenecks 3-4-6-3 whose inner width is twice
    # ResNet-50's (128-256-512-1024) and whose outputs are 256-512-1024-2048; average pooling, a 1000-class linear
    layers: list[nn.Module] = [_conv_bn(3, 64, 7, 2, relu=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(_Bottleneck(cin, planes * 2, planes * 4, stride if i == 0 else 1))
            cin = planes * 4
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers, *head).eval()


def regnetx_032_ish() -> nn.Module:
    # torchvision's regnet_x_3_2gf (Radosavovic et al., CVPR 2020; w_0 88, w_a 26.31, w_m 2.25, depth 25, group
    # width 48, bottleneck ratio 1, quantised to stages of 2-6-15-2 X blocks at widths 96-192-432-1008): a 3 x 3
    # stride-2 stem of 32, each stage's first block stride 2, grouped 3 x 3 convs of 2, 4, 9 and 21 groups;
    # average pooling, a 1000-class linear
    layers: list[nn.Module] = [_conv_bn(3, 32, 3, 2, relu=True)]
    cin = 32
    for width, blocks in ((96, 2), (192, 6), (432, 15), (1008, 2)):
        for i in range(blocks):
            layers.append(_Bottleneck(cin, width, width, 2 if i == 0 else 1, groups=width // 48))
            cin = width
    head = [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1008, 1000)]
    return nn.Sequential(*layers, *head).eval()


def alexnet_ish() -> nn.Module:
    # torchvision's alexnet (Krizhevsky et al. 2012, the one-GPU variant of "One weird trick"): five convs (11 x 11
    # stride 4 to 64, 5 x 5 to 192, 3 x 3 to 384, 256, 256) with ReLU and three 3 x 3 stride-2 max pools, a 6 x 6
    # average pool, then three linears 9216 -> 4096 -> 4096 -> 1000 (dropout before the first two: nothing in
    # eval): 95% of the weights in the linears, which do 0.059 of the 0.71 GMACs
    features = [nn.Conv2d(3, 64, 11, 4, 2), nn.ReLU(), nn.MaxPool2d(3, 2), nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(),
                nn.MaxPool2d(3, 2), nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(), nn.Conv2d(384, 256, 3, padding=1),
                nn.ReLU(), nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2)]
    head = [nn.AdaptiveAvgPool2d(6), nn.Flatten(), nn.Dropout(0.5), nn.Linear(256 * 36, 4096), nn.ReLU(),
            nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1000)]
    return nn.Sequential(*features, *head).eval()


def hiera_tiny() -> nn.Module:
    from transformers import HieraConfig, HieraForImageClassification

    # facebook/hiera-tiny-224-hf's config: a 7 x 7 stride-4 patch embedding to 96 (56 x 56 tokens), four stages of
    # 1-2-7-2 blocks at widths 96-192-384-768 with 1, 2, 4 and 8 heads, each later stage entered by a 2 x 2 max
    # pool of the queries (three pools: 56 -> 28 -> 14 -> 7 per side); the first two stages attend within 8 x 8
    # mask units only (a window that shrinks with the pools), the last two globally; tokens kept in Hiera's
    # unrolled order; MLP ratio 4; eager attention: Hiera has no SDPA path
    config = HieraConfig(embed_dim=96, image_size=[224, 224], patch_size=[7, 7], patch_stride=[4, 4],
                         patch_padding=[3, 3], mlp_ratio=4.0, depths=[1, 2, 7, 2], num_heads=[1, 2, 4, 8],
                         embed_dim_multiplier=2.0, num_query_pool=3, query_stride=[2, 2], masked_unit_size=[8, 8],
                         masked_unit_attention=[True, True, False, False], drop_path_rate=0.0, num_channels=3,
                         hidden_act="gelu", layer_norm_eps=1e-6, num_labels=1000, attn_implementation="eager")
    return HieraForImageClassification(config).eval()


def depth_anything_small() -> nn.Module:
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config

    # LiheYoung/depth-anything-small-hf's config: a DINOv2-small backbone (12 layers, hidden 384, 6 heads, 14 x 14
    # patches: 37 x 37 = 1,369 tokens plus the class token at 518 x 518) whose layers 9-12 feed a DPT head
    # (reassembled to 48-96-192-384 channels at 4x, 2x, 1x and 0.5x the patch grid, fused at 64 channels by
    # residual conv units and bilinear upsampling, a conv head upsampled to the input's 518 x 518 depth map);
    # the backbone's attention SDPA, the head has none
    backbone = Dinov2Config(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, mlp_ratio=4,
                            image_size=518, patch_size=14, layerscale_value=1.0, use_swiglu_ffn=False,
                            out_features=["stage9", "stage10", "stage11", "stage12"], reshape_hidden_states=False,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.0,
                            attn_implementation="sdpa")
    config = DepthAnythingConfig(backbone_config=backbone, patch_size=14, reassemble_hidden_size=384,
                                 reassemble_factors=[4, 2, 1, 0.5], neck_hidden_sizes=[48, 96, 192, 384],
                                 fusion_hidden_size=64, head_in_index=-1, head_hidden_size=32,
                                 depth_estimation_type="relative")
    return DepthAnythingForDepthEstimation(config).eval()


def esm2_150m() -> nn.Module:
    from transformers import EsmConfig, EsmForMaskedLM

    # facebook/esm2_t30_150M_UR50D's config: a protein language model, a pre-LayerNorm BERT-like encoder of 30
    # layers at hidden 640 (20 heads of 32, MLP 2560, GELU) with rotary positions, a 33-token amino-acid
    # vocabulary, token dropout's rescaling of the embeddings (by the share of mask tokens), a masked-LM head
    config = EsmConfig(vocab_size=33, mask_token_id=32, pad_token_id=1, hidden_size=640, num_hidden_layers=30,
                       num_attention_heads=20, intermediate_size=2560, hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0, max_position_embeddings=1026, layer_norm_eps=1e-5,
                       position_embedding_type="rotary", token_dropout=True, emb_layer_norm_before=False,
                       attn_implementation="sdpa")
    return EsmForMaskedLM(config).eval()


def bart_base() -> nn.Module:
    from transformers import BartConfig, BartForConditionalGeneration

    # facebook/bart-base's config: an encoder-decoder of 6 + 6 post-LayerNorm layers at d_model 768 (12 heads,
    # MLP 3072, GELU), learned positions, the decoder's causal self-attention and cross-attention over the
    # encoder's 128 states; the decoder's input is input_ids shifted right (BART's own default when no
    # decoder_input_ids are given); vocabulary 50,265 shared by both embeddings and the head; no cache
    config = BartConfig(vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
                        decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
                        activation_function="gelu", max_position_embeddings=1024, dropout=0.0, attention_dropout=0.0,
                        activation_dropout=0.0, scale_embedding=False, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                        decoder_start_token_id=2, forced_eos_token_id=2, tie_word_embeddings=True, use_cache=False,
                        attn_implementation="sdpa")
    return BartForConditionalGeneration(config).eval()


def smollm2_360m() -> nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    # HuggingFaceTB/SmolLM2-360M's config: 32 layers at hidden 960, grouped-query attention of 15 query heads on 5
    # key/value heads of 64, rotary theta 1e5, SwiGLU MLP 2560, no biases, vocabulary 49,152, tied head
    config = LlamaConfig(vocab_size=49152, hidden_size=960, intermediate_size=2560, num_hidden_layers=32,
                         num_attention_heads=15, num_key_value_heads=5, hidden_act="silu", max_position_embeddings=8192,
                         rms_norm_eps=1e-5, bos_token_id=0, eos_token_id=0, tie_word_embeddings=True,
                         rope_parameters={"rope_type": "default", "rope_theta": 100000.0}, use_cache=False,
                         attn_implementation="sdpa")
    return LlamaForCausalLM(config).eval()
