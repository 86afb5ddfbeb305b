"""PyTorch and ONNX agree: a zoo model and its ONNX export give the same MACs (api.analyze_static on both).

Exported on CPU with torch.onnx.export: the TorchScript exporter (dynamo=False) first, the dynamo exporter when
that one cannot (llama-tiny: no TorchScript symbolic for aten::rms_norm at opset 17)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

from modelcost import api
from modelcost.analysis.torch_counter import analyze_module
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.torch_loader import load_torch
from modelcost.loaders.zoo.transformer import GPT2, GPT2Config

pytest.importorskip("onnx")


def export(model: torch.nn.Module, inputs: tuple, names: list[str], path: Path) -> str:
    """TorchScript exporter first, dynamo exporter as the fallback; returns which one wrote the file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(model, inputs, str(path), dynamo=False, opset_version=17, input_names=names)
            return "torchscript"
        except Exception:  # noqa: BLE001 - an op without a TorchScript symbolic: try the dynamo exporter
            pytest.importorskip("onnxscript")
            torch.onnx.export(model, inputs, str(path), dynamo=True, opset_version=18, input_names=names)
            return "dynamo"


@pytest.mark.parametrize(
    ("name", "shapes", "macs"),
    [
        # ResNet-18 at 64x64: every feature map is (64/224)^2 of the 224 one: conv1 32*32*64*147 = 9,633,792;
        # layer1 4 x 16*16*64*576 = 37,748,736; layers 2-4 each 8*8*128*576 + 3 * 8*8*128*1152 + 8*8*128*64
        # = 33,554,432 (the same at 4x4 / 2x2 with the channels doubling); fc 512,000
        ("resnet18", {"x": (1, 3, 64, 64)}, 9_633_792 + 37_748_736 + 3 * 33_554_432 + 512_000),
        # BERT-tiny at seq 32: per layer q, k, v, out 4 * 32*128*128 + attention 2 heads * 32*32*(64+64)
        # + FFN 2 * 32*128*512 = 6,553,600; x 2 + pooler 128*128
        ("bert-tiny", {"input_ids": (1, 32)}, 2 * 6_553_600 + 128 * 128),
        # Llama-tiny at seq 16 (GQA 4/2 heads of 32, SwiGLU, RMSNorm; dynamo exporter, ~15 s):
        # q, o 2 * 16*128*128 + k, v 2 * 16*128*64 + attention 4 heads * 16*16*(32+32) + MLP 3 * 16*128*344
        # = 524,288 + 262,144 + 65,536 + 2,113,536 = 2,965,504 per layer; x 2 + lm_head 16*128*1000
        pytest.param("llama-tiny", {"input_ids": (1, 16)}, 2 * 2_965_504 + 16 * 128 * 1000, marks=pytest.mark.slow),
    ],
)
def test_zoo_model_and_its_onnx_export_give_the_same_macs(tmp_path, name, shapes, macs):
    source = f"zoo:{name}"
    torch_report = api.analyze_static(source, input_shapes=shapes)
    loaded = load_torch(source, LoadOptions(input_shapes=shapes))
    path = tmp_path / f"{name}.onnx"
    exporter = export(loaded.instantiate("cpu"), loaded.make_inputs(), [s.name for s in loaded.inputs], path)
    onnx_report = api.analyze_static(str(path))
    assert torch_report.compute.macs == macs
    assert onnx_report.compute.macs == torch_report.compute.macs, exporter
    assert onnx_report.compute.uncounted_ops == {} and torch_report.compute.uncounted_ops == {}


def test_tied_gpt2_export_agrees(tmp_path):
    """GPT-2's chunk(3) exports as Slices whose bounds are computed from shapes; the ONNX side folds them."""
    config = GPT2Config(vocab_size=100, hidden=64, layers=2, heads=2, max_positions=32)
    torch.manual_seed(0)
    model = GPT2(config).eval()
    ids = torch.randint(1, 100, (1, 16))
    with torch.device("meta"):
        meta_model = GPT2(config).eval()
    ours = analyze_module(meta_model, [torch.empty(1, 16, dtype=torch.long, device="meta")])
    path = tmp_path / "gpt2.onnx"
    export(model, (ids,), ["input_ids"], path)
    theirs = api.analyze_static(str(path))
    # per layer c_attn 16*64*192 + attention 2 * 16*16*(32+32) + c_proj 16*64*64 + MLP 2 * 16*64*256; + lm_head
    per_layer = 16 * 64 * 192 + 2 * 16 * 16 * 64 + 16 * 64 * 64 + 2 * 16 * 64 * 256
    assert ours.compute.macs == 2 * per_layer + 16 * 64 * 100
    assert theirs.compute.macs == ours.compute.macs


class _Deform(torch.nn.Module):
    """A deformable-attention-style sampler: a 1 x 1 conv predicts offsets that warp a base grid, and the features
    are sampled there (RT-DETR's and Deformable DETR's sampling, a spatial transformer's warp)."""

    def __init__(self) -> None:
        super().__init__()
        self.offsets = torch.nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        grid = torch.tanh(self.offsets(x)).permute(0, 2, 3, 1)  # (N, H, W, 2) in [-1, 1]
        return torch.nn.functional.grid_sample(x, grid, mode="bilinear", align_corners=False)


def test_a_grid_sample_counts_alike_in_torch_and_its_export(tmp_path):
    # x 1 x 8 x 6 x 6: the conv 36 outputs x 2 channels x 8 = 576 MACs (+ 72 bias); tanh 72; the sample 8 x 36 =
    # 288 outputs x 9 FLOPs (bilinear: 3 lerps of 3) = 2,592 -> FLOPs 2 x 576 + 72 + 72 + 2,592 = 3,888
    torch.manual_seed(0)
    model = _Deform().eval()
    x = torch.randn(1, 8, 6, 6)
    ours = analyze_module(model, [x])
    path = tmp_path / "deform.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(path), dynamo=False, opset_version=17, input_names=["x"])
    theirs = api.analyze_static(str(path))
    assert (ours.compute.macs, ours.compute.flops, ours.compute.uncounted_ops) == (576, 3888, {})
    assert (theirs.compute.macs, theirs.compute.flops, theirs.compute.uncounted_ops) == (576, 3888, {})


def _swin() -> torch.nn.Module:
    from transformers import SwinConfig, SwinModel

    torch.manual_seed(0)
    # 2 stages at 30 x 30 pixels, patches of 2 (15 x 15 tokens), windows of 4: 15 is no multiple of 4, so each
    # stage pads its tokens to windows, by a length the export computes (Mod, Sub, Pad)
    config = SwinConfig(image_size=30, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=4)
    return SwinModel(config).eval()


def test_a_swin_export_with_computed_window_padding_counts_as_torch(tmp_path):
    """transformers' Swin pads its tokens to whole windows by a length its export computes (Mod -> Sub -> Pad):
    ONNX's inference cannot read computed pads, and the count stopped there (a scan of transformers exports,
    2026-11-27: swin 2.96 of 4.49 GMACs). Folded pads, reshape targets and resize sizes now give those shapes."""
    pytest.importorskip("transformers")
    model = _swin()
    x = torch.randn(1, 3, 30, 30)
    ours = analyze_module(model, {"pixel_values": x})
    path = tmp_path / "swin.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(path), dynamo=False, opset_version=17, input_names=["pixel_values"])
    theirs = api.analyze_static(str(path))
    assert ours.compute.complete and theirs.compute.complete, theirs.compute.incomplete_reasons
    assert theirs.compute.macs == ours.compute.macs
