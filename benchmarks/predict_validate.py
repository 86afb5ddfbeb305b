"""Validate the latency predictor (issue 28) on held-out architectures: the committed script behind
modelcost/analysis/predict_errors.json, the table every prediction takes its expected error from.

For each model (8 architectures that calibration never used: benchmarks/predict_models.py and the zoo's resnet50,
mobilenet_v2, bert-base, gpt2; then eighteen more sets of 8, each written and committed before it was first
measured: --models fresh (benchmarks/predict_models_fresh.py, twelfth session), fresh2 (predict_models_fresh2.py,
thirteenth), fresh3 (predict_models_fresh3.py, fourteenth), fresh4 (predict_models_fresh4.py, fifteenth), fresh5
(predict_models_fresh5.py, sixteenth), fresh6 (predict_models_fresh6.py, seventeenth), fresh7
(predict_models_fresh7.py, eighteenth), fresh8 (predict_models_fresh8.py, nineteenth), fresh9
(predict_models_fresh9.py, twentieth), fresh10 (predict_models_fresh10.py, twenty-first), fresh11
(predict_models_fresh11.py, twenty-second), fresh12 (predict_models_fresh12.py, twenty-third), fresh13
(predict_models_fresh13.py, twenty-fourth), fresh14 (predict_models_fresh14.py, twenty-fifth), fresh15
(predict_models_fresh15.py, twenty-sixth), fresh16 (predict_models_fresh16.py, twenty-seventh), fresh17
(predict_models_fresh17.py, thirtieth) and fresh18 (predict_models_fresh18.py, thirty-first)) it runs
modelcost's own pipeline with --predict: the same benchmark a user gets (torch-eager fp32, torch-half fp16,
torch-compile-cudagraph fp16 + fp32, ort-cuda fp32 + fp16 when onnxruntime-gpu imports; batch 1 and 64), with each
measured config's prediction beside it. A model's cases are appended to <out>/cases.jsonl batch by batch as each
batch finishes (a model that fails is recorded with its error, and the others go on), and the tables are rewritten
after every model, so a run cut short keeps every batch it finished.

    # on the GPU (one device call is <= 10 min: stages by --models)
    python benchmarks/predict_validate.py --calibrate --out benchmarks/results/predict --models cnn
    python benchmarks/predict_validate.py --out benchmarks/results/predict --models transformers
    python benchmarks/predict_validate.py --out benchmarks/results/predict --write-table   # tables only
    # another GPU, from the first GPU's calibration (transfer): an empty cache holding only that file
    python benchmarks/predict_validate.py --calibration h100.json --cache-dir /tmp/mc-transfer --out ...
    # no GPU: the measured cases of an earlier run predicted again from other calibrations, each in turn
    python benchmarks/predict_validate.py --repredict .../cases.jsonl --calibration h100.json \
        [--calibration h200.json ...] --out DIR

--repredict CASES (CPU only; needs --calibration): every measured case of CASES is predicted again from each
calibration given, alone (no calibration of the cache is read), for the case's GPU (its "gpu", a table name) by
the --target-gpu path: the calibration itself when it is that GPU's, else transferred to it, and then
calibrated_on names the GPU the calibration was measured on; each row names its calibration ("calibration": its
"created"). One static analysis per (model, batch), at the batch the case measured (MODELS' source and input
spec), for all the calibrations; measured_ms is kept from the case and error_pct recomputed. Same-GPU cases
with the calibration they were measured under come back with their stored predictions (a check that the static
analysis and the predictor have not moved since).

Outputs: <out>/cases.jsonl (one line per prediction: model, GPU, calibrated_on, backend, precision, batch,
predicted, measured, error %, the calibration's features and the share outside it, the kernel model's own
prediction (model_ms) and the measured residual it was multiplied by (analysis/predict_residual.py, fitted by
benchmarks/predict_fit_residual.py); a note per config the run did not measure), <out>/predict_validation.json
and .md (per GPU x calibration x backend x precision x residual fit: cases, median / p90 / worst |error|, and
the 10 worst cases overall); --write-table merges the rows into modelcost/analysis/predict_errors.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODELS_FILE = "benchmarks/predict_models.py"
FRESH_FILE = "benchmarks/predict_models_fresh.py"
FRESH2_FILE = "benchmarks/predict_models_fresh2.py"
FRESH3_FILE = "benchmarks/predict_models_fresh3.py"
FRESH4_FILE = "benchmarks/predict_models_fresh4.py"
FRESH5_FILE = "benchmarks/predict_models_fresh5.py"
FRESH6_FILE = "benchmarks/predict_models_fresh6.py"
FRESH7_FILE = "benchmarks/predict_models_fresh7.py"
FRESH8_FILE = "benchmarks/predict_models_fresh8.py"
FRESH9_FILE = "benchmarks/predict_models_fresh9.py"
FRESH10_FILE = "benchmarks/predict_models_fresh10.py"
FRESH11_FILE = "benchmarks/predict_models_fresh11.py"
FRESH12_FILE = "benchmarks/predict_models_fresh12.py"
FRESH13_FILE = "benchmarks/predict_models_fresh13.py"
FRESH14_FILE = "benchmarks/predict_models_fresh14.py"
FRESH15_FILE = "benchmarks/predict_models_fresh15.py"
FRESH16_FILE = "benchmarks/predict_models_fresh16.py"
FRESH17_FILE = "benchmarks/predict_models_fresh17.py"
FRESH18_FILE = "benchmarks/predict_models_fresh18.py"
MODELS: dict[str, tuple[str, str]] = {  # name -> (source, input spec with B for the batch)
    "resnet50": ("zoo:resnet50", "x=Bx3x224x224"),
    "mobilenet_v2": ("zoo:mobilenet_v2", "x=Bx3x224x224"),
    "efficientnet_ish": (f"{MODELS_FILE}:efficientnet_ish", "input=Bx3x224x224"),
    "convnext_ish": (f"{MODELS_FILE}:convnext_ish", "input=Bx3x224x224"),
    "vit_b16": (f"{MODELS_FILE}:vit_b16", "x=Bx3x224x224"),
    "bert_base": ("zoo:bert-base", "input_ids=Bx128"),
    "gpt2": ("zoo:gpt2", "input_ids=Bx128"),
    "t5_encoder_ish": (f"{MODELS_FILE}:t5_encoder_ish", "input_ids=Bx128:int64"),
    # the fresh set (twelfth session): written and frozen before any of it was measured
    "resnext50_ish": (f"{FRESH_FILE}:resnext50_ish", "input=Bx3x224x224"),
    "vgg16_ish": (f"{FRESH_FILE}:vgg16_ish", "input=Bx3x224x224"),
    "densenet121_ish": (f"{FRESH_FILE}:densenet121_ish", "input=Bx3x224x224"),
    "unet_ish": (f"{FRESH_FILE}:unet_ish", "x=Bx3x224x224"),
    "mixer_b16": (f"{FRESH_FILE}:mixer_b16", "x=Bx3x224x224"),
    "whisper_encoder_ish": (f"{FRESH_FILE}:whisper_encoder_ish", "features=Bx80x3000"),
    "qwen2_05b": (f"{FRESH_FILE}:qwen2_05b", "input_ids=Bx128:int64"),
    "modernbert_base": (f"{FRESH_FILE}:modernbert_base", "input_ids=Bx128:int64"),
    # the third set (thirteenth session): written and frozen before any of it was measured
    "regnety_016_ish": (f"{FRESH2_FILE}:regnety_016_ish", "input=Bx3x224x224"),
    "shufflenet_v2_ish": (f"{FRESH2_FILE}:shufflenet_v2_ish", "input=Bx3x224x224"),
    "mobilenetv3_large_ish": (f"{FRESH2_FILE}:mobilenetv3_large_ish", "input=Bx3x224x224"),
    "swin_tiny": (f"{FRESH2_FILE}:swin_tiny", "pixel_values=Bx3x224x224"),
    "wav2vec2_base": (f"{FRESH2_FILE}:wav2vec2_base", "input_values=Bx16000"),
    "pythia_160m": (f"{FRESH2_FILE}:pythia_160m", "input_ids=Bx128:int64"),
    "gemma3_270m": (f"{FRESH2_FILE}:gemma3_270m", "input_ids=Bx128:int64"),
    "deberta_v3_small": (f"{FRESH2_FILE}:deberta_v3_small", "input_ids=Bx128:int64"),
    # the fourth set (fourteenth session): written and frozen before any of it was measured
    "inception_v3_ish": (f"{FRESH3_FILE}:inception_v3_ish", "input=Bx3x299x299"),
    "r3d_18_ish": (f"{FRESH3_FILE}:r3d_18_ish", "input=Bx3x16x112x112"),
    "csp_darknet_ish": (f"{FRESH3_FILE}:csp_darknet_ish", "x=Bx3x256x256"),
    "segformer_b0": (f"{FRESH3_FILE}:segformer_b0", "pixel_values=Bx3x512x512"),
    "mobilevit_small": (f"{FRESH3_FILE}:mobilevit_small", "pixel_values=Bx3x256x256"),
    "smollm_135m": (f"{FRESH3_FILE}:smollm_135m", "input_ids=Bx128:int64"),
    "electra_small": (f"{FRESH3_FILE}:electra_small", "input_ids=Bx128:int64"),
    "opt_125m": (f"{FRESH3_FILE}:opt_125m", "input_ids=Bx128:int64"),
    # the fifth set (fifteenth session): written and frozen before any of it was measured
    "squeezenet1_1_ish": (f"{FRESH4_FILE}:squeezenet1_1_ish", "input=Bx3x224x224"),
    "ghostnet_ish": (f"{FRESH4_FILE}:ghostnet_ish", "input=Bx3x224x224"),
    "edsr_baseline_ish": (f"{FRESH4_FILE}:edsr_baseline_ish", "x=Bx3x128x128"),
    "dinov2_small": (f"{FRESH4_FILE}:dinov2_small", "pixel_values=Bx3x224x224"),
    "convnextv2_tiny": (f"{FRESH4_FILE}:convnextv2_tiny", "pixel_values=Bx3x224x224"),
    "albert_base": (f"{FRESH4_FILE}:albert_base", "input_ids=Bx128:int64"),
    "gpt_neo_125m": (f"{FRESH4_FILE}:gpt_neo_125m", "input_ids=Bx128:int64"),
    "clip_text": (f"{FRESH4_FILE}:clip_text", "input_ids=Bx77:int64"),
    # the sixth set (sixteenth session): written and frozen before any of it was measured
    "mnasnet1_0_ish": (f"{FRESH5_FILE}:mnasnet1_0_ish", "input=Bx3x224x224"),
    "repvgg_a0_ish": (f"{FRESH5_FILE}:repvgg_a0_ish", "input=Bx3x224x224"),
    "efficientnetv2_s_ish": (f"{FRESH5_FILE}:efficientnetv2_s_ish", "input=Bx3x384x384"),
    "levit_128s": (f"{FRESH5_FILE}:levit_128s", "pixel_values=Bx3x224x224"),
    "poolformer_s12": (f"{FRESH5_FILE}:poolformer_s12", "pixel_values=Bx3x224x224"),
    "mpnet_base": (f"{FRESH5_FILE}:mpnet_base", "input_ids=Bx128:int64"),
    "tiny_starcoder": (f"{FRESH5_FILE}:tiny_starcoder", "input_ids=Bx128:int64"),
    "codegen_350m": (f"{FRESH5_FILE}:codegen_350m", "input_ids=Bx128:int64"),
    # the seventh set (seventeenth session): written and frozen before any of it was measured
    "xception_ish": (f"{FRESH6_FILE}:xception_ish", "input=Bx3x299x299"),
    "convmixer_768_32": (f"{FRESH6_FILE}:convmixer_768_32", "input=Bx3x224x224"),
    "resnet34_ish": (f"{FRESH6_FILE}:resnet34_ish", "input=Bx3x224x224"),
    "pvt_v2_b0": (f"{FRESH6_FILE}:pvt_v2_b0", "pixel_values=Bx3x224x224"),
    "ast_audioset": (f"{FRESH6_FILE}:ast_audioset", "input_values=Bx1024x128"),
    "funnel_small_base": (f"{FRESH6_FILE}:funnel_small_base", "input_ids=Bx128:int64"),
    "ernie45_03b": (f"{FRESH6_FILE}:ernie45_03b", "input_ids=Bx128:int64"),
    "lfm2_350m": (f"{FRESH6_FILE}:lfm2_350m", "input_ids=Bx128:int64"),
    # the eighth set (eighteenth session): written and frozen before any of it was measured
    "wide_resnet50_2": (f"{FRESH7_FILE}:wide_resnet50_2", "input=Bx3x224x224"),
    "regnetx_032_ish": (f"{FRESH7_FILE}:regnetx_032_ish", "input=Bx3x224x224"),
    "alexnet_ish": (f"{FRESH7_FILE}:alexnet_ish", "input=Bx3x224x224"),
    "hiera_tiny": (f"{FRESH7_FILE}:hiera_tiny", "pixel_values=Bx3x224x224"),
    "depth_anything_small": (f"{FRESH7_FILE}:depth_anything_small", "pixel_values=Bx3x518x518"),
    "esm2_150m": (f"{FRESH7_FILE}:esm2_150m", "input_ids=Bx128:int64"),
    "bart_base": (f"{FRESH7_FILE}:bart_base", "input_ids=Bx128:int64"),
    "smollm2_360m": (f"{FRESH7_FILE}:smollm2_360m", "input_ids=Bx128:int64"),
    # the ninth set (nineteenth session): written and frozen before any of it was measured
    "googlenet_ish": (f"{FRESH8_FILE}:googlenet_ish", "input=Bx3x224x224"),
    "sd_vae_decoder_ish": (f"{FRESH8_FILE}:sd_vae_decoder_ish", "input=Bx4x16x16"),
    "mobilenet_v1": (f"{FRESH8_FILE}:mobilenet_v1", "pixel_values=Bx3x224x224"),
    "bit_50": (f"{FRESH8_FILE}:bit_50", "pixel_values=Bx3x224x224"),
    "beit_base": (f"{FRESH8_FILE}:beit_base", "pixel_values=Bx3x224x224"),
    "squeezebert": (f"{FRESH8_FILE}:squeezebert", "input_ids=Bx128:int64"),
    "bloom_560m": (f"{FRESH8_FILE}:bloom_560m", "input_ids=Bx128:int64"),
    "yolos_tiny": (f"{FRESH8_FILE}:yolos_tiny", "pixel_values=Bx3x512x512"),
    # the tenth set (twentieth session): written and frozen before any of it was measured
    "darknet53_ish": (f"{FRESH9_FILE}:darknet53_ish", "input=Bx3x256x256"),
    "fcn_resnet50_ish": (f"{FRESH9_FILE}:fcn_resnet50_ish", "x=Bx3x320x320"),
    "swin2sr_x2": (f"{FRESH9_FILE}:swin2sr_x2", "pixel_values=Bx3x64x64"),
    "wav2vec2_conformer": (f"{FRESH9_FILE}:wav2vec2_conformer", "input_values=Bx16000"),
    "mobilevitv2": (f"{FRESH9_FILE}:mobilevitv2", "pixel_values=Bx3x256x256"),
    "detr_resnet50": (f"{FRESH9_FILE}:detr_resnet50", "pixel_values=Bx3x512x512"),
    "marian_en_de": (f"{FRESH9_FILE}:marian_en_de", "input_ids=Bx128:int64"),
    "qwen3_06b": (f"{FRESH9_FILE}:qwen3_06b", "input_ids=Bx128:int64"),
    # the eleventh set: written and frozen before any of it was measured
    "vovnet39_ish": (f"{FRESH10_FILE}:vovnet39_ish", "input=Bx3x224x224"),
    "cvt_13": (f"{FRESH10_FILE}:cvt_13", "pixel_values=Bx3x224x224"),
    "focalnet_tiny": (f"{FRESH10_FILE}:focalnet_tiny", "pixel_values=Bx3x224x224"),
    "deeplabv3_mobilenet_v2": (f"{FRESH10_FILE}:deeplabv3_mobilenet_v2", "pixel_values=Bx3x512x512"),
    "swiftformer_xs": (f"{FRESH10_FILE}:swiftformer_xs", "pixel_values=Bx3x224x224"),
    "convbert_small": (f"{FRESH10_FILE}:convbert_small", "input_ids=Bx128:int64"),
    "distilbert_base": (f"{FRESH10_FILE}:distilbert_base", "input_ids=Bx128:int64"),
    "mobilellm_125m": (f"{FRESH10_FILE}:mobilellm_125m", "input_ids=Bx128:int64"),
    # the twelfth set: written and frozen before any of it was measured
    "dla34_ish": (f"{FRESH11_FILE}:dla34_ish", "input=Bx3x224x224"),
    "x3d_m_ish": (f"{FRESH11_FILE}:x3d_m_ish", "input=Bx3x16x224x224"),
    "textnet_small": (f"{FRESH11_FILE}:textnet_small", "pixel_values=Bx3x640x640"),
    "vitmatte_small": (f"{FRESH11_FILE}:vitmatte_small", "pixel_values=Bx4x512x512"),
    "pvt_tiny": (f"{FRESH11_FILE}:pvt_tiny", "pixel_values=Bx3x224x224"),
    "mobilebert": (f"{FRESH11_FILE}:mobilebert", "input_ids=Bx128:int64"),
    "sew_d_tiny": (f"{FRESH11_FILE}:sew_d_tiny", "input_values=Bx16000"),
    "nanochat_d20": (f"{FRESH11_FILE}:nanochat_d20", "input_ids=Bx128:int64"),
    # the thirteenth set: written and frozen before any of it was measured
    "s3d_ish": (f"{FRESH12_FILE}:s3d_ish", "x=Bx3x16x224x224"),
    "inception_v4_ish": (f"{FRESH12_FILE}:inception_v4_ish", "input=Bx3x299x299"),
    "res2net50_ish": (f"{FRESH12_FILE}:res2net50_ish", "input=Bx3x224x224"),
    "swinv2_tiny": (f"{FRESH12_FILE}:swinv2_tiny", "pixel_values=Bx3x256x256"),
    "dinov3_vits16": (f"{FRESH12_FILE}:dinov3_vits16", "pixel_values=Bx3x224x224"),
    "xlnet_base": (f"{FRESH12_FILE}:xlnet_base", "input_ids=Bx128:int64"),
    "nomic_embed_v15": (f"{FRESH12_FILE}:nomic_embed_v15", "input_ids=Bx128:int64"),
    "xglm_564m": (f"{FRESH12_FILE}:xglm_564m", "input_ids=Bx128:int64"),
    # the fourteenth set: written and frozen before any of it was measured
    "resnest50_ish": (f"{FRESH13_FILE}:resnest50_ish", "input=Bx3x224x224"),
    "hrnet_w18_small_v2_ish": (f"{FRESH13_FILE}:hrnet_w18_small_v2_ish", "x=Bx3x224x224"),
    "nfnet_f0_ish": (f"{FRESH13_FILE}:nfnet_f0_ish", "input=Bx3x256x256"),
    "groupvit_gcc_yfcc": (f"{FRESH13_FILE}:groupvit_gcc_yfcc", "pixel_values=Bx3x224x224"),
    "fnet_base": (f"{FRESH13_FILE}:fnet_base", "input_ids=Bx128:int64"),
    "canine_s": (f"{FRESH13_FILE}:canine_s", "input_ids=Bx256:int64"),
    "openai_gpt": (f"{FRESH13_FILE}:openai_gpt", "input_ids=Bx128:int64"),
    "speecht5_hifigan": (f"{FRESH13_FILE}:speecht5_hifigan", "spectrogram=Bx100x80"),
    # the fifteenth set: written and frozen before any of it was measured
    "dpn68_ish": (f"{FRESH14_FILE}:dpn68_ish", "x=Bx3x224x224"),
    "fasternet_t2_ish": (f"{FRESH14_FILE}:fasternet_t2_ish", "input=Bx3x224x224"),
    "inceptionnext_tiny_ish": (f"{FRESH14_FILE}:inceptionnext_tiny_ish", "input=Bx3x224x224"),
    "deit_small_distilled": (f"{FRESH14_FILE}:deit_small_distilled", "pixel_values=Bx3x224x224"),
    "clip_vit_b32_vision": (f"{FRESH14_FILE}:clip_vit_b32_vision", "pixel_values=Bx3x224x224"),
    "nystromformer_512": (f"{FRESH14_FILE}:nystromformer_512", "input_ids=Bx128:int64"),
    "moonshine_tiny_encoder": (f"{FRESH14_FILE}:moonshine_tiny_encoder", "input_values=Bx160000"),
    "imagegpt_small": (f"{FRESH14_FILE}:imagegpt_small", "input_ids=Bx128:int64"),
    # the sixteenth set: written and frozen before any of it was measured
    "tresnet_m_ish": (f"{FRESH15_FILE}:tresnet_m_ish", "input=Bx3x224x224"),
    "hardnet68_ish": (f"{FRESH15_FILE}:hardnet68_ish", "input=Bx3x224x224"),
    "mixnet_l_ish": (f"{FRESH15_FILE}:mixnet_l_ish", "input=Bx3x224x224"),
    "siglip_base_vision": (f"{FRESH15_FILE}:siglip_base_vision", "pixel_values=Bx3x224x224"),
    "speech2text_small_encoder": (f"{FRESH15_FILE}:speech2text_small_encoder", "input_features=Bx1000x80"),
    "granite4_350m": (f"{FRESH15_FILE}:granite4_350m", "input_ids=Bx128:int64"),
    "lilt_roberta_base": (f"{FRESH15_FILE}:lilt_roberta_base", "input_ids=Bx128:int64"),
    "videomae_small": (f"{FRESH15_FILE}:videomae_small", "pixel_values=Bx16x3x224x224"),
    # the seventeenth set: written and frozen before any of it was measured
    "shufflenet_v1_g3_ish": (f"{FRESH16_FILE}:shufflenet_v1_g3_ish", "input=Bx3x224x224"),
    "replknet31b_ish": (f"{FRESH16_FILE}:replknet31b_ish", "x=Bx3x224x224"),
    "efficientvit_b1_ish": (f"{FRESH16_FILE}:efficientvit_b1_ish", "input=Bx3x224x224"),
    "mgp_str_base": (f"{FRESH16_FILE}:mgp_str_base", "pixel_values=Bx3x32x128"),
    "granite_speech_encoder": (f"{FRESH16_FILE}:granite_speech_encoder", "hidden_states=Bx300x160"),
    "bigbird_roberta_base": (f"{FRESH16_FILE}:bigbird_roberta_base", "input_ids=Bx1024:int64"),
    "perceiver_io_language": (f"{FRESH16_FILE}:perceiver_io_language", "inputs=Bx2048:int64"),
    "timesformer_base": (f"{FRESH16_FILE}:timesformer_base", "pixel_values=Bx8x3x224x224"),
    # the eighteenth set: written and frozen before any of it was measured
    "lcnet_100_ish": (f"{FRESH17_FILE}:lcnet_100_ish", "input=Bx3x224x224"),
    "mobileone_s1_ish": (f"{FRESH17_FILE}:mobileone_s1_ish", "input=Bx3x224x224"),
    "hgnet_v2_b4": (f"{FRESH17_FILE}:hgnet_v2_b4", "pixel_values=Bx3x224x224"),
    "rt_detr_r18": (f"{FRESH17_FILE}:rt_detr_r18", "pixel_values=Bx3x640x640"),
    "aimv2_large_vision": (f"{FRESH17_FILE}:aimv2_large_vision", "pixel_values=Bx3x224x224"),
    "roformer_chinese_base": (f"{FRESH17_FILE}:roformer_chinese_base", "input_ids=Bx128:int64"),
    "opt_350m": (f"{FRESH17_FILE}:opt_350m", "input_ids=Bx128:int64"),
    "wavlm_base_plus": (f"{FRESH17_FILE}:wavlm_base_plus", "input_values=Bx16000"),
    # the nineteenth set: written and frozen before any of it was measured
    "mobilenetv4_conv_small_ish": (f"{FRESH18_FILE}:mobilenetv4_conv_small_ish", "input=Bx3x224x224"),
    "edgenext_small_ish": (f"{FRESH18_FILE}:edgenext_small_ish", "input=Bx3x224x224"),
    "hubert_large": (f"{FRESH18_FILE}:hubert_large", "input_values=Bx16000"),
    "data2vec_audio_base": (f"{FRESH18_FILE}:data2vec_audio_base", "input_values=Bx16000"),
    "vitdet_base": (f"{FRESH18_FILE}:vitdet_base", "pixel_values=Bx3x448x448"),
    "upernet_convnext_tiny": (f"{FRESH18_FILE}:upernet_convnext_tiny", "pixel_values=Bx3x256x256"),
    "olmo2_1b": (f"{FRESH18_FILE}:olmo2_1b", "input_ids=Bx128:int64"),
    "umt5_small_encoder": (f"{FRESH18_FILE}:umt5_small_encoder", "input_ids=Bx128:int64"),
}
GROUPS = {"cnn": ["resnet50", "mobilenet_v2", "efficientnet_ish", "convnext_ish"],
          "transformers": ["vit_b16", "bert_base", "gpt2", "t5_encoder_ish"],
          "fresh": ["resnext50_ish", "vgg16_ish", "densenet121_ish", "unet_ish", "mixer_b16", "whisper_encoder_ish",
                    "qwen2_05b", "modernbert_base"],
          "fresh2": ["regnety_016_ish", "shufflenet_v2_ish", "mobilenetv3_large_ish", "swin_tiny", "wav2vec2_base",
                     "pythia_160m", "gemma3_270m", "deberta_v3_small"],
          "fresh3": ["inception_v3_ish", "r3d_18_ish", "csp_darknet_ish", "segformer_b0", "mobilevit_small",
                     "smollm_135m", "electra_small", "opt_125m"],
          "fresh4": ["squeezenet1_1_ish", "ghostnet_ish", "edsr_baseline_ish", "dinov2_small", "convnextv2_tiny",
                     "albert_base", "gpt_neo_125m", "clip_text"],
          "fresh5": ["mnasnet1_0_ish", "repvgg_a0_ish", "efficientnetv2_s_ish", "levit_128s", "poolformer_s12",
                     "mpnet_base", "tiny_starcoder", "codegen_350m"],
          "fresh6": ["xception_ish", "convmixer_768_32", "resnet34_ish", "pvt_v2_b0", "ast_audioset",
                     "funnel_small_base", "ernie45_03b", "lfm2_350m"],
          "fresh7": ["wide_resnet50_2", "regnetx_032_ish", "alexnet_ish", "hiera_tiny", "depth_anything_small",
                     "esm2_150m", "bart_base", "smollm2_360m"],
          "fresh8": ["googlenet_ish", "sd_vae_decoder_ish", "mobilenet_v1", "bit_50", "beit_base", "squeezebert",
                     "bloom_560m", "yolos_tiny"],
          "fresh9": ["darknet53_ish", "fcn_resnet50_ish", "swin2sr_x2", "wav2vec2_conformer", "mobilevitv2",
                     "detr_resnet50", "marian_en_de", "qwen3_06b"],
          "fresh10": ["vovnet39_ish", "cvt_13", "focalnet_tiny", "deeplabv3_mobilenet_v2", "swiftformer_xs",
                      "convbert_small", "distilbert_base", "mobilellm_125m"],
          "fresh11": ["dla34_ish", "x3d_m_ish", "textnet_small", "vitmatte_small", "pvt_tiny", "mobilebert",
                      "sew_d_tiny", "nanochat_d20"],
          "fresh12": ["s3d_ish", "inception_v4_ish", "res2net50_ish", "swinv2_tiny", "dinov3_vits16", "xlnet_base",
                      "nomic_embed_v15", "xglm_564m"],
          "fresh13": ["resnest50_ish", "hrnet_w18_small_v2_ish", "nfnet_f0_ish", "groupvit_gcc_yfcc", "fnet_base",
                      "canine_s", "openai_gpt", "speecht5_hifigan"],
          "fresh14": ["dpn68_ish", "fasternet_t2_ish", "inceptionnext_tiny_ish", "deit_small_distilled",
                      "clip_vit_b32_vision", "nystromformer_512", "moonshine_tiny_encoder", "imagegpt_small"],
          "fresh15": ["tresnet_m_ish", "hardnet68_ish", "mixnet_l_ish", "siglip_base_vision",
                      "speech2text_small_encoder", "granite4_350m", "lilt_roberta_base", "videomae_small"],
          "fresh16": ["shufflenet_v1_g3_ish", "replknet31b_ish", "efficientvit_b1_ish", "mgp_str_base",
                      "granite_speech_encoder", "bigbird_roberta_base", "perceiver_io_language", "timesformer_base"],
          "fresh17": ["lcnet_100_ish", "mobileone_s1_ish", "hgnet_v2_b4", "rt_detr_r18", "aimv2_large_vision",
                      "roformer_chinese_base", "opt_350m", "wavlm_base_plus"],
          "fresh18": ["mobilenetv4_conv_small_ish", "edgenext_small_ish", "hubert_large", "data2vec_audio_base",
                      "vitdet_base", "upernet_convnext_tiny", "olmo2_1b", "umt5_small_encoder"]}
CONFIGS = ("torch-eager:fp32", "torch-half:fp16", "torch-compile-cudagraph:fp16", "torch-compile-cudagraph:fp32",
           "ort-cuda:fp32", "ort-cuda:fp16")
TABLE = ROOT / "modelcost" / "analysis" / "predict_errors.json"


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "predict")
    p.add_argument("--models", default="all", help="all, cnn, transformers, or a comma list of " + ", ".join(MODELS))
    p.add_argument("--batches", default="1,64")
    p.add_argument("--configs", default=",".join(CONFIGS), help="backend:precision, comma separated")
    p.add_argument("--calibrate", action="store_true", help="calibrate this GPU first (into the cache)")
    p.add_argument("--calibration", type=Path, action="append", help="a calibration file to predict from (copied "
                   "into the cache); --repredict takes several (the flag again), each in turn")
    p.add_argument("--cache-dir", type=Path, help="MODELCOST_CACHE_DIR for this run (an empty one for transfer)")
    p.add_argument("--budget-s", type=float, default=450.0, help="stop starting models after this many seconds")
    p.add_argument("--write-table", action="store_true", help="merge the summary into " + str(TABLE.name))
    p.add_argument("--repredict", type=Path, metavar="CASES", help="no GPU: predict the measured cases of CASES "
                   "(a cases.jsonl) again from --calibration into --out")
    args = p.parse_args()
    for key in ("out", "cache_dir", "repredict"):  # main() works from the repository root
        if getattr(args, key) is not None:
            setattr(args, key, getattr(args, key).resolve())
    args.calibration = [path.resolve() for path in args.calibration or []]
    return args


def chosen_models(arg: str) -> list[str]:
    if arg == "all":
        return list(MODELS)
    names = [n for part in arg.split(",") for n in GROUPS.get(part.strip(), [part.strip()])]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {unknown}; known: {', '.join(MODELS)} or groups {', '.join(GROUPS)}")
    return names


def prepare_cache(args: argparse.Namespace, calibration_file: Path | None) -> None:
    """The cache this run predicts from (``--cache-dir``), with ``calibration_file`` (``--calibration FILE``) put in
    it or this GPU calibrated into it (``--calibrate``, also copied beside the results); shared by
    predict_validate_llm.py."""
    if args.cache_dir:
        os.environ["MODELCOST_CACHE_DIR"] = str(args.cache_dir)
    from modelcost.core import calibration

    if calibration_file:
        cal = calibration.load(calibration_file)
        calibration.save(cal)
        print(f"calibration of {cal.gpu.name} put in {calibration.folder()}", flush=True)
    if args.calibrate:
        from modelcost import api

        cal, path = api.calibrate(on_message=lambda what: print(f"  calibrate: {what}", flush=True))
        shutil.copy(path, args.out / f"calibration-{calibration.slug(cal.gpu.name)}.json")
        print(f"calibrated {cal.gpu.name} in {cal.elapsed_s:.0f} s -> {path}", flush=True)


def run_model(name: str, args: argparse.Namespace, record: Callable[[list[dict]], Any]) -> list[dict]:
    """The predictions of every measured config of one model (batch by batch: a shape per static analysis), each
    batch's rows handed to ``record`` as it finishes: a model cut short (the device call's timeout, a failure at
    its second batch) keeps its first batch's cases (the eighteenth set's RT-DETR, stopped by its timeout, kept
    nothing)."""
    from modelcost import api
    from modelcost.bench.base import BenchConfig

    source, spec = MODELS[name]
    backends = sorted({c.split(":")[0] for c in args.configs.split(",")})
    precisions = sorted({c.split(":")[1] for c in args.configs.split(",")})
    wanted = set(args.configs.split(","))
    config = BenchConfig(warmup=5, warmup_max_s=2.0, min_time_s=0.3, min_iters=20, max_time_s=3.0)
    rows = []
    for batch in [int(b) for b in args.batches.split(",")]:
        options = api.RunOptions(command="predict_validate", backends=tuple(backends), precisions=tuple(precisions),
                                 batch_sizes=(batch,), input_shapes=(spec.replace("B", str(batch), 1),),
                                 bench=config, predict=True, screen="off", batch_search="off")
        run = api.run(source, options)
        unstable = {(r.backend, r.precision, r.batch_size): list(r.unstable) for r in run.benchmarks}
        paces = {(r.backend, r.precision, r.batch_size): r.extra.host_pace_us for r in run.benchmarks}
        batch_rows = [case_row(name, pred, unstable.get((pred.backend, pred.precision, pred.batch_size), []),
                               conv_macs_pct(run.cost), paces.get((pred.backend, pred.precision, pred.batch_size)))
                      | measured_options(pred.backend, pred.precision)
                      for pred in run.predictions
                      if f"{pred.backend}:{pred.precision}" in wanted and pred.measured_ms is not None]
        batch_rows += [{"model": name, "batch": batch, "note": n} for n in run.notes if n.startswith("predict")]
        batch_rows += unmeasured(name, batch, wanted, run.benchmarks)
        batch_rows += unpredicted(name, batch, wanted, run.benchmarks, batch_rows)
        record(batch_rows)
        rows += batch_rows
    return rows


def unpredicted(name: str, batch: int, wanted: set[str], results: list, rows: list[dict]) -> list[dict]:
    """A note per wanted config the run measured and did not predict: the seventh set's Funnel measured eight
    configs on the GPU machine, none was predicted, and its cases said nothing of them."""
    cases = {f"{r['backend']}:{r['precision']}" for r in rows if r.get("batch") == batch and "backend" in r}
    return [{"model": name, "batch": batch, "note": f"{r.backend}:{r.precision} measured ({r.latency_ms.p50:.3f} ms), "
             "not predicted (the run's predict notes say why, where it gave one)"}
            for r in results if f"{r.backend}:{r.precision}" in wanted - cases and r.status == "ok"
            and r.latency_ms is not None and r.batch_size == batch]


def unmeasured(name: str, batch: int, wanted: set[str], results: list) -> list[dict]:
    """A note per wanted config the run did not measure, with its status and reason: a config that failed or was
    skipped is said, not silently missing from the cases (the fourth set's R3D-18 lost its fp16 torch configs)."""
    measured = {f"{r.backend}:{r.precision}" for r in results if r.status == "ok" and r.latency_ms is not None}
    why = {f"{r.backend}:{r.precision}": f"{r.status}: {r.reason or 'no reason given'}" for r in results}
    return [{"model": name, "batch": batch, "note": f"{config} not measured ({why.get(config, 'not run')})"}
            for config in sorted(wanted - measured)]


def conv_macs_pct(cost: Any) -> float | None:
    """The share of a count's MACs in conv layers, in percent (None without a count): the fit tells by it the cases
    whose fp32 torch convs ran cuDNN's heuristic plans before abe4b94 (predict_fit_residual --heuristic-plans)."""
    from modelcost.analysis.predict import layer_kind

    if cost is None or not cost.layers:
        return None
    total = sum(layer.macs for layer in cost.layers)
    return round(100.0 * sum(layer.macs for layer in cost.layers if layer_kind(layer) == "conv") / total, 1) \
        if total else 0.0


def measured_options(backend: str, precision: str) -> dict:
    """What a case's measurement ran with that the prediction does not show: an ort-cuda session's ``use_tf32``
    (bench.backends.ort.use_tf32). Until 1838ed7 every ort-cuda session that was not tf32 ran with it off, and
    ONNX Runtime's fp16 convs then left out their tensor-core kernels (FCN-ResNet-50 at batch 64: 205.5 ms, 37.4 ms
    with it on; BENCHMARKS.md): such a case measured a session modelcost no longer builds (``obsolete``)."""
    from modelcost.bench.backends.ort import use_tf32

    return {"ort_use_tf32": use_tf32(precision)} if backend == "ort-cuda" else {}


def obsolete(case: dict) -> bool:
    """An ort-cuda fp16 case measured with ``use_tf32`` off (no ``ort_use_tf32`` recorded: before 1838ed7): the
    tables leave it out (``measured_options``)."""
    return case.get("backend") == "ort-cuda" and case.get("precision") == "fp16" \
        and case.get("ort_use_tf32", "0") != "1"


def case_row(name: str, pred: Any, unstable: list[str] | None = None, conv_pct: float | None = None,
             host_pace_us: list[float] | None = None) -> dict:
    """One line of cases.jsonl: a LatencyPrediction with its measurement beside it, why the run called that
    measurement unstable (BenchResult.unstable; [] when it did not: the sixth set's MPNet read 269 ms in eager
    with "end-to-end p50 5.3 ms is below the latency p50 it contains", a timing bug, and the case did not say so),
    the model's share of MACs in convs (``conv_macs_pct``), the nodes the measurement ran on the CPU
    (LatencyPrediction.measured_cpu_nodes: ort-cuda without a CUDA kernel for them, FNet's DFTs; absent when
    none), and the host's pace before and after its timed loop (BenchResult.extra.host_pace_us, to set beside the
    calibration's ``host_processes``; absent when not recorded)."""
    return {"model": name, "gpu": pred.gpu, "calibrated_on": pred.calibrated_on, "backend": pred.backend,
            "precision": pred.precision, "batch": pred.batch_size, "predicted_ms": pred.latency_ms,
            "measured_ms": pred.measured_ms, "error_pct": pred.error_pct, "kernels": pred.kernels,
            "features": list(pred.calibration_features), "uncalibrated_pct": pred.uncalibrated_pct,
            "model_ms": pred.latency_ms / pred.residual_factor, "compute_ms": pred.compute_ms,
            "overhead_ms": pred.overhead_ms, "bound": pred.bound, "residual_factor": pred.residual_factor,
            "residual": pred.residual_fit, "unstable": list(unstable or []), "conv_macs_pct": conv_pct} \
        | ({"cpu_nodes": pred.measured_cpu_nodes} if pred.measured_cpu_nodes else {}) \
        | ({"host_pace_us": list(host_pace_us)} if host_pace_us else {})


def repredict_model(name: str, batch: int, cases: list[dict], calibrations: list) -> list[dict]:
    """``cases`` (one model at one batch) predicted again from each of ``calibrations`` in turn, each case for its
    own GPU (runs/predict.attach_predictions' path for --target-gpu), beside the measurement it stored; the
    model counted once. Each row names its calibration (``calibration``: when it was made)."""
    from modelcost import api
    from modelcost.analysis.predict import with_measurement
    from modelcost.analysis.predict_transfer import predict_run
    from modelcost.bench.stats import latency_stats
    from modelcost.core.measurement import MeasurementInfo
    from modelcost.core.types import BenchResult
    from modelcost.hardware.specs import spec_from_table

    source, spec = MODELS[name]
    cost = api.analyze_static(source, batch_size=batch, input_shapes=[spec.replace("B", str(batch), 1)])
    rows = []
    for cal in calibrations:
        for gpu in dict.fromkeys(c["gpu"] for c in cases):
            measured = [BenchResult(c["backend"], c["precision"], batch, "ok",
                                    latency_ms=latency_stats([c["measured_ms"]]),
                                    extra=MeasurementInfo(cpu_nodes=c.get("cpu_nodes")))
                        for c in cases if c["gpu"] == gpu]
            preds, notes = predict_run(cost, measured, [spec_from_table(gpu)], [cal])
            stored = {(c["backend"], c["precision"]): c for c in cases if c["gpu"] == gpu}  # what each case kept
            paced = {"calibration_pace_us": calibration_pace_us(cal)} if cal.host_processes else {}
            for p in preds:
                case = stored.get((p.backend, p.precision), {})
                rows.append(case_row(name, with_measurement(p, measured), case.get("unstable", []),
                                     conv_macs_pct(cost), case.get("host_pace_us"))
                            | {k: case[k] for k in ("ort_use_tf32",) if k in case}
                            | {"calibration": cal.created} | paced)
            rows += [{"model": name, "batch": batch, "note": n} for n in notes]
    return rows


def repredict(args: argparse.Namespace) -> dict:
    """--repredict: every measured case of ``args.repredict`` predicted again from each ``args.calibration`` file
    in turn (only those: no calibration of the cache is read), each model counted once."""
    from modelcost.core.calibration import load
    from modelcost.core.errors import ModelcostError

    cases_file = args.out / "cases.jsonl"
    if not args.calibration or args.calibrate:
        sys.exit("predict_validate: --repredict needs --calibration FILE (the calibration to predict from) and "
                 "runs no GPU, so no --calibrate")
    if not args.repredict.is_file():
        sys.exit(f"predict_validate: --repredict {args.repredict}: no such file")
    if cases_file.exists():
        sys.exit(f"predict_validate: {cases_file} exists; give --repredict an --out without a cases.jsonl")
    measured = measured_once(read_cases(args.repredict))
    unknown = sorted({str(c.get("model")) for c in measured} - set(MODELS))
    if unknown:
        sys.exit(f"predict_validate: {args.repredict} measured {', '.join(unknown)}, not in MODELS (known: "
                 f"{', '.join(MODELS)}), so its source and input spec are unknown")
    groups: dict[tuple[str, int], list[dict]] = {}
    for c in measured:
        groups.setdefault((c["model"], c["batch"]), []).append(c)
    with tempfile.TemporaryDirectory(prefix="mc-repredict-") as tmp:
        os.environ["MODELCOST_CACHE_DIR"] = str(args.cache_dir or tmp)
        try:
            calibrations = [load(path) for path in args.calibration]
            for (name, batch), cases in groups.items():
                rows = repredict_model(name, batch, cases, calibrations)
                print(f"{name} batch {batch}: {len(rows)} rows", flush=True)
                append_cases(cases_file, rows)
        except ModelcostError as exc:
            sys.exit(f"predict_validate: {exc}")
    return write_tables(args.out, read_cases(cases_file))


def calibration_pace_us(cal: Any) -> float:
    """The median pace of the processes a calibration priced the host in (``Calibration.host_processes``)."""
    return statistics.median(p.pace_us for p in cal.host_processes)


def pace_scaled_pct(case: dict) -> float | None:
    """A host-bound case's error had its host time been priced at the pace of the process that measured it: the
    issue time (``compute_ms`` + ``overhead_ms``) x the measurement's pace (the mean of before and after) over the
    calibration's (``calibration_pace_us``), never below the kernel time, x the residual. None for a device-bound
    case or one without both paces (measured or calibrated before they were kept)."""
    measured_pace, cal_pace = case.get("host_pace_us"), case.get("calibration_pace_us")
    if case.get("bound") != "host" or not measured_pace or not cal_pace or not case.get("measured_ms"):
        return None
    ratio = statistics.mean(measured_pace) / cal_pace
    issue_ms = case["compute_ms"] + case["overhead_ms"]
    scaled_ms = max(case["compute_ms"], issue_ms * ratio) * (case.get("residual_factor") or 1.0)
    return (scaled_ms - case["measured_ms"]) / case["measured_ms"] * 100


def pace_lines(cases: list[dict]) -> list[str]:
    """The tables' section on the host's pace: the host-bound cases' |error| as predicted and as priced at the
    measuring process's pace (``pace_scaled_pct``); none where no case has both paces."""
    pairs = [(abs(c["error_pct"]), abs(scaled)) for c in cases
             if c.get("error_pct") is not None and (scaled := pace_scaled_pct(c)) is not None]
    if not pairs:
        return []
    before, after = [b for b, _ in pairs], [a for _, a in pairs]
    return ["", "## Host-bound cases at the measuring process's pace", "",
            f"{len(pairs)} cases: median / p90 |error| {statistics.median(before):.1f}% / {p90(before):.1f}% as "
            f"predicted, {statistics.median(after):.1f}% / {p90(after):.1f}% with the host time x the measuring "
            "process's pace over the calibration's (bench.timing.host_pace_us)"]


def p90(values: list[float]) -> float:
    """The p90 the tables publish: the sorted values' entry at int(0.9 n) (the last one for n < 10)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


MIN_BOUND_ROW_CASES = 5  # a bound with fewer cases gets no row of its own: its predictions quote the row of all


def summarise(cases: list[dict]) -> dict:
    """Per GPU x calibration x backend x precision x calibration features x residual fit: cases, median / p90 /
    worst |error| %, and how many were predicted below the measurement (low_cases: a bias the |error| hides); the
    same per bound (host / device, analysis/predict.bound_of) where a group holds both bounds and a bound has
    ``MIN_BOUND_ROW_CASES`` cases (analysis/predict_table.py: a prediction quotes its bound's row); the 10 worst
    cases."""
    left_out = [c for c in cases if obsolete(c)]
    cases = [c for c in cases if not obsolete(c)]
    groups: dict[tuple, list[dict]] = {}
    for c in cases:
        if c.get("error_pct") is not None:
            key = (c["gpu"], c["calibrated_on"], c["backend"], c["precision"], tuple(c.get("features", ())),
                   c.get("residual", ""))
            groups.setdefault(key, []).append(c)
    entries = []
    for (gpu, cal, backend, precision, features, residual), rows in sorted(groups.items()):
        by_bound = {b: [r for r in rows if r.get("bound") == b] for b in sorted({r.get("bound") or "" for r in rows})}
        parts = [("", rows)] + [(b, part) for b, part in by_bound.items()
                                if b and len(by_bound) > 1 and len(part) >= MIN_BOUND_ROW_CASES]
        for bound, part in parts:
            errs = sorted(abs(r["error_pct"]) for r in part)
            entries.append({"gpu": gpu, "calibrated_on": cal, "backend": backend, "precision": precision,
                            "cases": len(errs), "median_pct": round(statistics.median(errs), 2),
                            "p90_pct": round(p90(errs), 2),
                            "worst_pct": round(errs[-1], 2), "features": list(features),
                            "low_cases": sum(r["error_pct"] < 0 for r in part), "residual": residual,
                            "bound": bound})
    every = sorted((abs(c["error_pct"]) for c in cases if c.get("error_pct") is not None))
    overall = {"cases": len(every), "low_cases": sum(c["error_pct"] < 0 for c in cases
                                                    if c.get("error_pct") is not None)}
    if every:
        overall |= {"median_pct": round(statistics.median(every), 2),
                    "p90_pct": round(p90(every), 2),
                    "worst_pct": round(every[-1], 2)}
    worst = sorted((c for c in cases if c.get("error_pct") is not None), key=lambda c: -abs(c["error_pct"]))[:10]
    failures = [c for c in cases if "error" in c or "note" in c]
    return {"schema": "modelcost.predict-errors/1", "produced_by": "benchmarks/predict_validate.py",
            "overall": overall, "entries": entries, "worst": worst, "failures": failures,
            "left_out": {"ort-cuda fp16 measured with use_tf32 off (obsolete)": len(left_out)},
            "left_out_keys": sorted({(c["gpu"], c["calibrated_on"], c["backend"], c["precision"]) for c in left_out})}


NO_CALIBRATION = "no GPU calibration"  # the words of runs/predict.calibrations()' refusal


def refuse_without_calibration(cases: list[dict]) -> None:
    """Exit with one line, writing no table, when any case failed for want of a calibration: such a table
    would publish the tracebacks of a run that predicted nothing (the first validation_all.md's notes)."""
    missing = sorted({c.get("model", "?") for c in cases if NO_CALIBRATION in c.get("error", "")})
    if missing:
        sys.exit(f"predict_validate: {', '.join(missing)} failed for want of a GPU calibration, so no table is "
                 "written: run 'modelcost calibrate' on the GPU (or pass --calibrate / --calibration FILE) first")


def check_calibrated() -> None:
    """One line before any model runs when the cache holds no calibration this modelcost reads."""
    from modelcost.core.calibration import folder, load_all

    if not load_all():
        sys.exit(f"predict_validate: {NO_CALIBRATION} of this schema in {folder()}: run 'modelcost calibrate' on "
                 "the GPU (or pass --calibrate / --calibration FILE) first")


def write_tables(out: Path, cases: list[dict]) -> dict:
    refuse_without_calibration(cases)
    summary = summarise(cases)
    (out / "predict_validation.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = ["# Latency predictor: validation on held-out models", "",
             f"overall: {summary['overall']}", "", f"left out: {summary['left_out']}", "",
             "| GPU | calibrated on | backend | precision | bound | cases | median % | p90 % | worst % |",
             "|---" * 9 + "|"]
    lines += [f"| {e['gpu']} | {e['calibrated_on']} | {e['backend']} | {e['precision']} | {e.get('bound') or 'all'} "
              f"| {e['cases']} | {e['median_pct']} | {e['p90_pct']} | {e['worst_pct']} |" for e in summary["entries"]]
    lines += ["", "## Worst cases", "",
              "| model | backend | precision | batch | predicted ms | measured ms | error % |", "|---" * 7 + "|"]
    lines += [f"| {c['model']} | {c['backend']} | {c['precision']} | {c['batch']} | {c['predicted_ms']:.3f} | "
              f"{c['measured_ms']:.3f} | {c['error_pct']:+.1f} |" for c in summary["worst"]]
    lines += pace_lines(cases)
    lines += ["", "## Failures and notes", ""] + [f"- {json.dumps(f)}" for f in summary["failures"]]
    (out / "predict_validation.md").write_text("\n".join(lines) + "\n")
    return summary


def read_cases(path: Path) -> list[dict]:
    """Every case recorded in ``path`` (JSON lines, gzipped where it ends in .gz; none when it is not there yet)."""
    if not path.exists():
        return []
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def measured_once(cases: list[dict]) -> list[dict]:
    """The measured cases of ``cases``, each measurement once: a re-predicted file (--repredict's own output) holds
    a case once per calibration it was predicted from, each with the same stored measurement, so re-predicting it
    again keeps the first; two measurements of one config (different figures) both stay."""
    once: dict[tuple, dict] = {}
    for c in cases:
        if c.get("measured_ms") is not None:
            once.setdefault((c["model"], c["gpu"], c["backend"], c["precision"], c["batch"], c["measured_ms"]), c)
    return list(once.values())


def append_cases(path: Path, rows: list[dict]) -> None:
    """Record ``rows`` as they finish (a crash later loses none); ``read_cases`` reads back every case recorded."""
    with path.open("a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)


def merge_table(summary: dict) -> None:
    """Replace the committed table's rows of the same GPU x calibration x backend x precision (every bound)."""
    try:
        doc = json.loads(TABLE.read_text())
    except (OSError, ValueError):
        doc = {"schema": "modelcost.predict-errors/1", "produced_by": "benchmarks/predict_validate.py", "entries": []}
    key = ("gpu", "calibrated_on", "backend", "precision")
    fresh = {tuple(e[k] for k in key) for e in summary["entries"]}
    # every row of a GPU x calibration x backend x precision the summary has, all bounds, is replaced: a bound
    # row of an older validation must not outlive the rows it was made with; so is the row of one whose cases
    # were all left out (``obsolete``): it was made of measurements modelcost no longer makes
    stale = fresh | {tuple(k) for k in summary.get("left_out_keys", [])}
    doc["entries"] = [e for e in doc["entries"] if tuple(e[k] for k in key) not in stale] + summary["entries"]
    TABLE.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"merged {len(summary['entries'])} rows into {TABLE}", flush=True)


def main() -> None:
    args = parse()
    args.out.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)  # the model sources are relative to the repository
    t0 = time.perf_counter()
    if args.repredict:
        print(f"repredicted: overall {repredict(args)['overall']}", flush=True)
        return
    if len(args.calibration) > 1:
        sys.exit("predict_validate: several --calibration files are for --repredict; a GPU run predicts from one")
    prepare_cache(args, args.calibration[0] if args.calibration else None)
    if args.models != "none":
        check_calibrated()
    cases_file = args.out / "cases.jsonl"
    for name in chosen_models(args.models) if args.models != "none" else []:
        if time.perf_counter() - t0 > args.budget_s:
            print(f"budget {args.budget_s:.0f} s spent: {name} and later models not run", flush=True)
            break
        t1 = time.perf_counter()
        try:
            rows = run_model(name, args, lambda batch_rows: append_cases(cases_file, batch_rows))
        except Exception as exc:  # noqa: BLE001 - a model that fails is recorded; the others go on
            rows = [{"model": name, "error": f"{type(exc).__name__}: {exc}"[:500],
                     "trace": traceback.format_exc()[-1500:]}]
            append_cases(cases_file, rows)
        summary = write_tables(args.out, read_cases(cases_file))
        print(f"{name}: {len(rows)} rows in {time.perf_counter() - t1:.0f} s; overall {summary['overall']}",
              flush=True)
    summary = write_tables(args.out, read_cases(cases_file))
    if args.write_table:
        merge_table(summary)


if __name__ == "__main__":
    main()
