"""The training count (analysis/training.py): forward + backward + optimizer, by running the real autograd
graph on meta tensors; checked against hand derivations, against ``torch.utils.flop_counter.FlopCounterMode``
on real CPU runs, and the saved-activation bytes against a real CPU step."""

from __future__ import annotations

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from modelcost import api
from modelcost.analysis import training_memory as tm
from modelcost.analysis.training import count_step, train_module
from modelcost.core.errors import ModelcostError
from modelcost.core.training import TrainConfig
from modelcost.loaders.torch_loader import load_torch


def _meta_maker(loaded):
    return lambda b: tuple(torch.empty(s.shape, dtype=getattr(torch, s.dtype), device="meta")
                           for s in loaded.input_specs(b))


def _zoo(name: str, batch: int = 1, config: TrainConfig | None = None, shapes=None):
    loaded = load_torch(f"zoo:{name}", api.load_options(batch, shapes))
    return loaded, train_module(loaded.module, _meta_maker(loaded), batch, config or TrainConfig())


def _flop_counter_total(module: torch.nn.Module, inputs: tuple) -> int:
    """FlopCounterMode on a real CPU step, the same loss (sum of the floating outputs); attention forced onto
    the math path, because FlopCounterMode has no formula for the CPU flash kernel
    (``_scaled_dot_product_flash_attention_for_cpu``) and would count its products as zero."""
    from torch.utils._pytree import tree_flatten

    module.train()
    counter = FlopCounterMode(display=False)
    with counter, sdpa_kernel(SDPBackend.MATH):
        out = module(*inputs)
        floats = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
        sum(t.float().sum() for t in floats).backward()
    return counter.get_total_flops()


def test_resnet50_exact_macs_per_sample() -> None:
    _, r = _zoo("resnet50")
    # Forward: 4,089,184,256 MACs (tests/loaders/test_zoo.py derives it). Backward: every conv and the fc compute the
    # weight gradient (= their forward MACs: 4,089,184,256 in all) and the input gradient (the same again),
    # except the first conv, whose input (the image) needs no gradient: 64 x 112 x 112 outputs x 3 x 7 x 7
    # = 118,013,952 MACs are not run. Total 3 x 4,089,184,256 - 118,013,952 = 12,149,538,816 per sample.
    assert r.forward_macs == 4_089_184_256
    assert r.backward_weight_grad_macs == 4_089_184_256
    assert r.backward_input_grad_macs == 4_089_184_256 - 118_013_952
    assert r.macs_per_sample == 12_149_538_816
    assert r.uncounted_ops == {}


def test_resnet50_input_grad_adds_the_first_conv() -> None:
    _, r = _zoo("resnet50", config=TrainConfig(input_requires_grad=True))
    assert r.macs_per_sample == 3 * 4_089_184_256  # the first conv's input gradient now runs too


def test_mobilenet_v2_exact() -> None:
    _, r = _zoo("mobilenet_v2")
    # Forward 300,774,272 MACs (tests/loaders/test_zoo.py). The first conv (32 x 112 x 112 outputs x 3 x 3 x 3 =
    # 10,838,016 MACs) gets no input gradient; every other conv / the classifier both gradients.
    assert r.forward_macs == 300_774_272
    assert r.backward_weight_grad_macs == 300_774_272
    assert r.backward_input_grad_macs == 300_774_272 - 10_838_016
    assert r.uncounted_ops == {}


def test_mlp_hand_derived_with_a_frozen_layer() -> None:
    with torch.device("meta"):
        mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    r = train_module(mlp, lambda b: (torch.empty(b, 16, device="meta"),), 4, TrainConfig(optimizer="sgd"))
    # batch 4: forward 4 x 16 x 32 + 4 x 32 x 8 = 2048 + 1024 = 3072 MACs; weight gradients the same 3072;
    # input gradient only into the hidden layer (4 x 32 x 8 = 1024): the input needs none.
    assert (r.forward_macs, r.backward_weight_grad_macs, r.backward_input_grad_macs) == (3072, 3072, 1024)
    # SGD: 2 FLOPs per trainable element; 16 x 32 + 32 + 32 x 8 + 8 = 808 elements.
    assert r.trainable_params == 808 and r.optimizer_flops == 1616
    mlp[0].requires_grad_(False)
    r = train_module(mlp, lambda b: (torch.empty(b, 16, device="meta"),), 4, TrainConfig(optimizer="sgd"))
    # frozen first layer: no weight gradient for it (1024 left: the second layer's), and no input gradient at
    # all: nothing below the second layer needs one
    assert (r.backward_weight_grad_macs, r.backward_input_grad_macs) == (1024, 0)
    assert r.trainable_params == 32 * 8 + 8 and r.frozen_params == 16 * 32 + 32
    assert r.memory.gradients_bytes == 4 * 264 and r.memory.weights_bytes == 4 * 808


def test_lstm_hand_derived() -> None:
    with torch.device("meta"):
        lstm = torch.nn.LSTM(8, 16, batch_first=True)
    r = train_module(lstm, lambda b: (torch.empty(b, 5, 8, device="meta"),), 2, TrainConfig())
    # T=5 steps, B=2, H=16, I=8; 4 gates. Forward: T x B x 4H x (I + H) = 5 x 2 x 64 x 24 = 15,360 MACs.
    # Weight gradients: the same 15,360 (dW_ih 5 x 2 x 64 x 8 + dW_hh 5 x 2 x 64 x 16).
    # Input gradients: x needs none; dh_{t-1} = W_hh^T dgates for t = 1..T-1 (h0 needs none):
    # 4 x 2 x 64 x 16 = 8,192.
    assert (r.forward_macs, r.backward_weight_grad_macs, r.backward_input_grad_macs) == (15_360, 15_360, 8_192)


@pytest.mark.parametrize("name", ["bert-tiny", "llama-tiny"])
def test_agrees_with_flop_counter_mode_on_a_real_cpu_step(name: str) -> None:
    loaded, r = _zoo(name, batch=2)
    real = loaded.instantiate("cpu")
    # FlopCounterMode counts 2 FLOPs per MAC of the products only (mm, addmm, bmm, conv, attention), which is
    # exactly 2 x our MACs: forward + backward of the real step.
    assert _flop_counter_total(real, loaded.make_inputs(2)) == 2 * r.macs_per_step


def test_llama_frozen_embedding() -> None:
    loaded = load_torch("zoo:llama-tiny", api.load_options(2))
    emb = next(m for m in loaded.module.modules() if isinstance(m, torch.nn.Embedding))
    emb.weight.requires_grad_(False)
    r = train_module(loaded.module, _meta_maker(loaded), 2, TrainConfig())
    _, full = _zoo("llama-tiny", batch=2)
    # the embedding has no MACs: freezing it removes no product, only its gradient, optimizer states and the
    # scatter-add of its backward (FLOPs, not MACs)
    assert r.macs_per_step == full.macs_per_step
    assert r.frozen_params == emb.weight.numel()
    assert full.memory.gradients_bytes - r.memory.gradients_bytes == 4 * emb.weight.numel()
    # backward FLOPs drop by at least the embedding's scatter-add (1 per grad element, 2 x 64 x 128), and also by
    # the elementwise work that only fed it (the first RMS norm's and the residual's input gradient)
    assert full.backward_flops - r.backward_flops > 2 * 64 * 128
    real = loaded.instantiate("cpu")
    next(m for m in real.modules() if isinstance(m, torch.nn.Embedding)).weight.requires_grad_(False)
    assert _flop_counter_total(real, loaded.make_inputs(2)) == 2 * r.macs_per_step
    emb.weight.requires_grad_(True)


@pytest.mark.parametrize("name", ["bert-tiny", "llama-tiny", "resnet18"])
def test_activation_bytes_match_a_real_cpu_step(name: str) -> None:
    shapes = ["x=2x3x64x64"] if name == "resnet18" else None
    loaded, r = _zoo(name, batch=2, shapes=shapes)
    real = loaded.instantiate("cpu")
    measured = count_step(real, loaded.make_inputs(2), TrainConfig())
    assert not measured.problems
    # within 5% (the bar); with the fused attention on both sides they are in fact equal
    assert r.memory.activations_bytes == pytest.approx(measured.activations_bytes, rel=0.05)


def test_memory_parts_adam_and_pure_bf16() -> None:
    with torch.device("meta"):
        mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    def make(b: int) -> tuple:
        return (torch.empty(b, 16, device="meta"),)

    adam = train_module(mlp, make, 4, TrainConfig(optimizer="adam"))
    # 808 trainable fp32 elements: weights 3,232 B, gradients 3,232 B, Adam's m and v 6,464 B
    m = adam.memory
    assert (m.weights_bytes, m.gradients_bytes, m.optimizer_state_bytes, m.master_weights_bytes) == (
        3232, 3232, 6464, 0)
    assert adam.optimizer_flops == 14 * 808
    bf16 = train_module(mlp, make, 4, TrainConfig(optimizer="adamw", precision="bf16", master_weights=True))
    # pure bf16 with fp32 masters: bf16 weights / gradients (1,616 B each), fp32 masters 3,232 B, fp32 states 6,464 B
    m = bf16.memory
    assert (m.weights_bytes, m.gradients_bytes, m.master_weights_bytes, m.optimizer_state_bytes) == (
        1616, 1616, 3232, 6464)
    assert bf16.optimizer_flops == 16 * 808
    assert next(mlp.parameters()).dtype == torch.float32  # the caller's module was not cast


def test_amp_bf16_saves_fewer_bytes_than_fp32() -> None:
    _, fp32 = _zoo("bert-tiny", batch=2)
    _, amp = _zoo("bert-tiny", batch=2, config=TrainConfig(precision="amp_bf16"))
    assert amp.macs_per_step == fp32.macs_per_step
    assert amp.memory.activations_bytes < fp32.memory.activations_bytes
    assert amp.memory.weights_bytes == fp32.memory.weights_bytes  # AMP keeps fp32 weights
    # the weight-gradient products are still found through the casts (ToCopyBackward) of the weights
    assert amp.backward_weight_grad_macs == fp32.backward_weight_grad_macs


def test_peak_and_max_batch_arithmetic() -> None:
    _, r = _zoo("resnet18", batch=2, shapes=["x=2x3x64x64"])
    m = r.memory
    # the envelope of the simulated step's lines reproduces the simulated peak at the analysed batch
    assert tm.predicted_peak_at(m, 2) == m.peak_bytes
    assert m.fixed_bytes + 2 * m.activations_per_sample_bytes == pytest.approx(m.peak_bytes, abs=1)
    cap = 4 * 2**30
    best = tm.max_batch(m, cap, 0.1)
    assert best > 2
    assert tm.predicted_peak_at(m, best) <= 0.9 * cap < tm.predicted_peak_at(m, best + 1)
    # batch 1 must fit, or nothing does
    assert tm.max_batch(m, tm.predicted_peak_at(m, 1) - 1, 0.0) == 0
    # the former prediction stays as an upper bound of the forward + backward part
    assert m.peak_upper_bound_bytes == tm.upper_bound(m) >= tm.step_bytes(m)


def test_unknown_optimizer_is_one_clear_error() -> None:
    with pytest.raises(ModelcostError, match="unknown optimizer"):
        api.train_static("zoo:bert-tiny", config=TrainConfig(optimizer="lion"))


def test_onnx_refused() -> None:
    with pytest.raises(ModelcostError, match="training needs a PyTorch model"):
        api.train_static("sample_models/resnet_tiny.onnx")


def test_checkpointing_hand_derived() -> None:
    with torch.device("meta"):
        blocks = [torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16))
                  for _ in range(3)]
        model = torch.nn.Sequential(*blocks)

    def make(b: int) -> tuple:
        return (torch.empty(b, 16, device="meta"),)

    plain = train_module(model, make, 4, TrainConfig(optimizer="sgd"))
    ck = train_module(model, make, 4, TrainConfig(optimizer="sgd", checkpointing=True))
    # batch 4, fp32. Saved by each block in the plain step: its ReLU output 4 x 64 x 4 B = 1,024 (the second
    # linear saves the same storage), and its input 4 x 16 x 4 B = 256 (saved by its first linear), except the
    # first block's input, the model input (counted as inputs). Plain: 1,024 + 1,280 + 1,280 = 3,584.
    assert plain.memory.activations_bytes == 3_584
    # Checkpointed: nothing outside the blocks + the inputs of blocks 2 and 3 (512) + the largest block's own
    # bytes, alive while it is recomputed (1,280) = 1,792.
    assert ck.memory.activations_bytes == 1_792
    # Recompute: every block's forward again: per block 2 x 4 x 16 x 64 + 4 x 64 (bias) + 4 x 64 (ReLU)
    # + 2 x 4 x 64 x 16 + 4 x 16 (bias) = 16,960; three blocks 50,880. Model FLOPs unchanged.
    assert ck.recompute_flops == 50_880 and ck.flops_per_step == plain.flops_per_step
    assert plain.recompute_flops == 0


@pytest.mark.parametrize("kind", ["pt2", "torchscript"])
def test_saved_models_train(tmp_path, kind: str) -> None:
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 6 * 6, 10))
    x = torch.randn(2, 3, 8, 8)
    path = tmp_path / ("m.pt2" if kind == "pt2" else "m.pt")
    if kind == "pt2":
        torch.export.save(torch.export.export(model, (x,)), str(path))
    else:
        torch.jit.save(torch.jit.trace(model, x), str(path))
    r = api.train_static(str(path), input_shapes=None if kind == "pt2" else ["input=2x3x8x8"],
                         config=TrainConfig(optimizer="sgd"))
    # per sample: conv 8 x 6 x 6 outputs x 3 x 3 x 3 = 7,776 MACs, linear 288 x 10 = 2,880; batch 2: 21,312.
    # Weight gradients the same; input gradient only the linear's (5,760): the conv's input is the model input.
    assert (r.forward_macs, r.backward_weight_grad_macs, r.backward_input_grad_macs) == (21_312, 21_312, 5_760)
    assert r.trainable_params == 8 * 27 + 8 + 2 * 8 + 2880 + 10
