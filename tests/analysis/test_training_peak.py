"""The simulated peak of a training step (analysis/training_peak.py, training_liveness.py): a hand derivation
for a tiny MLP, the same tracker on real CPU tensors against the meta simulation, the batch lines, and a 70B
model that stays on meta."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import torch

from modelcost import api
from modelcost.analysis import training_memory as tm
from modelcost.analysis.training_liveness import LiveBytes, rounded
from modelcost.analysis.training_peak import simulate_step
from modelcost.core.training import TrainConfig, TrainingMemory


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64))


def test_rounding_is_the_caching_allocators() -> None:
    assert [rounded(n) for n in (0, 1, 4, 512, 513, 4096)] == [0, 512, 512, 512, 1024, 4096]


@pytest.mark.parametrize(("optimizer", "states"), [("sgd", 0), ("momentum", 1), ("adamw", 2)])
def test_mlp_peak_hand_derived(optimizer: str, states: int) -> None:
    with torch.device("meta"):
        mlp = _mlp()
    r = simulate_step(mlp, [torch.empty(1024, 64, device="meta")], TrainConfig(optimizer=optimizer), optimizer)
    # Linear(64, 64) -> ReLU -> Linear(64, 64), batch 1024, fp32. Every size is booked rounded up to 512 B.
    # Parameters P: two weights 64 x 64 x 4 = 16,384 and two biases 256 -> 512: 33,792. An activation
    # A = 1024 x 64 x 4 = 262,144 (x, h, r, y and their gradients). Scalars (loss, its gradient) 4 -> 512.
    # Forward: h = addmm(x); r = relu(h) (h is freed: relu saves its output r, the second addmm its input r);
    # y = addmm(r); loss = 0 + y.sum() (two scalars; y and y.sum() are freed after the loss: sum saves nothing).
    # Its peak is at the loss: P + x, r, y + 2 scalars = 33,792 + 786,432 + 1,024 = 821,248.
    # Backward: ones_like(loss) (512, alive until backward returns); the second addmm's backward makes
    # dL/dr (A), dL/dW2 (16,384) and dL/db2 (512), then drops what it saved. ReLU's backward makes dL/dh (A)
    # while x, r (saved) and dL/dr are alive: P + 4A + 16,896 + 2 x 512 = 33,792 + 1,048,576 + 16,896 + 1,024
    # = 1,100,288, the peak. The first addmm then needs no input gradient (x needs none).
    # Optimizer states (momentum buffer; AdamW's two moments) exist from the warm-up: + states x P.
    assert r.forward_peak_bytes == 821_248 + states * 33_792
    assert r.backward_peak_bytes == r.peak_bytes == 1_100_288 + states * 33_792
    if optimizer == "adamw":
        # AdamW's step: P (weights) + P (gradients) + 2P (moments) + P (foreach sqrt of the second moment,
        # the one temporary) + x + the loss scalar = 5 x 33,792 + 262,144 + 512 = 431,616
        assert r.optimizer_peak_bytes == 431_616
    assert all(p.grad is None for p in mlp.parameters())  # left as found


def _bert_tiny_hf() -> torch.nn.Module:
    from transformers import BertConfig, BertModel

    # attention dropout off: the CPU's fused attention kernel has none (a GPU's has, and keeps no mask for it)
    return BertModel(BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                intermediate_size=128, max_position_embeddings=64, attention_probs_dropout_prob=0.0))


def _conv_net() -> torch.nn.Module:
    def block(c_in: int, c_out: int) -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c_out),
                                   torch.nn.ReLU(inplace=True), torch.nn.Conv2d(c_out, c_out, 3, padding=1),
                                   torch.nn.ReLU())

    return torch.nn.Sequential(block(3, 16), torch.nn.MaxPool2d(2), block(16, 32), torch.nn.AdaptiveAvgPool2d(1),
                               torch.nn.Flatten(), torch.nn.Dropout(0.2), torch.nn.Linear(32, 10))


def _encoder(norm_first: bool) -> Any:
    def build() -> torch.nn.Module:
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True, norm_first=norm_first)
        layer.self_attn.dropout = 0.0  # the CPU's fused attention has no dropout (as _bert_tiny_hf)
        return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    return build


def _gpt_tied() -> torch.nn.Module:
    from modelcost.loaders.zoo.transformer import GPT2, GPT2Config

    return GPT2(GPT2Config(vocab_size=2048, hidden=64, layers=2, heads=4, max_positions=64))


# encoder / encoder-pre: nn.MultiheadAttention attends inside F.multi_head_attention_forward, whose inner calls no
# torch-function mode saw (the mode is off while its handler runs): on meta its scaled_dot_product_attention took
# the math path and kept every head's (L x L) probabilities for backward, where the CPU (and a GPU) runs the fused
# kernel that keeps only the output and the row log-sum-exp. The simulated peak was 15.4% above the CPU
# allocator's (1,933,824 vs 1,675,776 B, test_simulated_peak_equals_the_cpu_allocators; 46% with 128 tokens and
# a 256-wide feed-forward: the probabilities grow as L^2) and its ops were not the CPU's. training_nested runs
# that function's body with the modes seeing inside.
# gpt-tied: its cause is with its allocator-level case (test_simulated_peak_equals_the_cpu_allocators).
CASES = {"bert-hf": (_bert_tiny_hf, lambda: torch.randint(0, 512, (4, 32))),
         "conv": (_conv_net, lambda: torch.randn(8, 3, 32, 32)),
         "encoder": (_encoder(False), lambda: torch.randn(4, 32, 64)),
         "encoder-pre": (_encoder(True), lambda: torch.randn(4, 32, 64)),
         "gpt-tied": (_gpt_tied, lambda: torch.randint(0, 2048, (4, 32)))}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize(("precision", "checkpointing"), [("fp32", False), ("amp_bf16", False), ("fp32", True)])
def test_meta_simulation_equals_the_real_cpu_step(name: str, precision: str, checkpointing: bool) -> None:
    build, make_input = CASES[name]
    torch.manual_seed(0)
    real = build()
    with torch.device("meta"):
        meta = build()
    x = make_input()
    config = TrainConfig(precision=precision, checkpointing=checkpointing, kernels="cpu")  # a CPU step, on meta
    on_meta = simulate_step(meta, [x.to("meta")], config, "adamw")
    on_cpu = simulate_step(real, [x], config, "adamw")
    assert not on_meta.problems and not on_cpu.problems
    # the same ops, and the same live bytes after each (the bar was 1-2%: they are equal), except one 512-byte
    # scalar: the step-counter increment torch.optim makes on the CPU, host memory beside a GPU's parameters
    assert on_meta.ops == on_cpu.ops
    assert max(abs(a - b) for a, b in zip(on_meta.timeline, on_cpu.timeline, strict=True)) <= 512
    assert on_meta.peak_bytes == on_cpu.peak_bytes


class _StepWindow(LiveBytes):
    """LiveBytes that marks its step in the profiler's trace and keeps the live bytes it starts from."""

    last: _StepWindow | None = None

    def __enter__(self) -> _StepWindow:
        _StepWindow.last = self
        self.start_bytes = self.current_bytes
        self.range = torch.autograd.profiler.record_function("modelcost.step").__enter__()  # before the mode
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.range.__exit__(None, None, None)


def _allocator_peak(step: Any, monkeypatch: pytest.MonkeyPatch) -> int:
    """The peak of the CPU allocator over ``step()`` (a ``simulate_step`` on real tensors) from the profiler's
    memory events, every allocation rounded as LiveBytes books it: what the tracker starts from (weights,
    optimizer states, inputs) + the largest running sum of the step's own allocations and frees, those taken and
    returned inside a kernel included."""
    from torch.profiler import ProfilerActivity, profile

    from modelcost.analysis import training_peak

    monkeypatch.setattr(training_peak, "LiveBytes", _StepWindow)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = prof.profiler.kineto_results.events()
    window = next(e for e in events if e.name() == "modelcost.step")
    memory = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]"
                    and window.start_ns() <= e.start_ns() <= window.end_ns())
    running = peak = 0
    for _, nbytes in memory:
        running += rounded(nbytes) if nbytes > 0 else -rounded(-nbytes)
        peak = max(peak, running)
    return _StepWindow.last.start_bytes + peak


@pytest.mark.parametrize("name", ["bert-hf", "encoder", "gpt-tied"])
def test_simulated_peak_equals_the_cpu_allocators(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    build, make_input = CASES[name]
    torch.manual_seed(0)
    real = build()
    with torch.device("meta"):
        meta = build()
    for model in (real, meta):  # the CPU's dropout backward takes two temporaries (mask as float, times the
        for m in model.modules():  # scale) that a GPU's fused kernel does not: left out here
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
    x = make_input()
    on_meta = simulate_step(meta, [x.to("meta")], TrainConfig(kernels="cpu"), "adamw")
    allocator = _allocator_peak(lambda: simulate_step(real, [x], TrainConfig(), "adamw"), monkeypatch)
    # gpt-tied: the loss's gradient is the expand of a scalar (every stride 0) and reaches the tied head's backward,
    # two products (input and weight gradient); BLAS cannot read a stride-0 matrix, so each clones it inside its
    # kernel, 4 x 32 tokens x 2048 vocabulary x 4 B = 1,048,576 B that no dispatch mode sees. The allocator's peak
    # is the first of them: 4,518,400 B live after it + the clone = 5,566,976 B. The simulation, blind to it, had
    # its peak at the loss (5,009,920 B, 10.0% under); training_scratch books the clone while the product runs.
    assert on_meta.peak_bytes == allocator


def test_products_copy_what_blas_cannot_read() -> None:
    from modelcost.analysis.training_scratch import operand_copies_bytes

    grad = torch.ones((), device="meta").expand(128, 2048)  # sum()'s gradient: every stride 0
    w = torch.empty(2048, 64, device="meta")
    assert operand_copies_bytes("mm", (grad, w)) == [128 * 2048 * 4]  # 1,048,576: cloned contiguous
    assert operand_copies_bytes("mm", (grad.t().contiguous().t(), w)) == []  # column-major: read in place
    assert operand_copies_bytes("addmm", (torch.empty(64, device="meta"), grad, w)) == [1_048_576]
    batched = torch.empty(8, 16, device="meta").expand(4, 8, 16)  # batch stride 0 is fine for bmm
    assert operand_copies_bytes("bmm", (batched, batched.transpose(1, 2))) == []
    assert operand_copies_bytes("bmm", (torch.ones((), device="meta").expand(4, 8, 16), batched.mT)) == [4 * 8 * 16 * 4]
    assert operand_copies_bytes("mm", (torch.eye(3).to_sparse(), torch.ones(3, 3))) == []  # no strides to test
    live = LiveBytes("meta")
    with live:
        out = grad.mm(w)  # 128 x 64 x 4 = 32,768 B kept; the 1 MiB clone only while the product runs
    assert live.current_bytes == 32_768 and live.timeline == [32_768 + 1_048_576] == [live.peak_bytes]
    del out


def test_modes_see_inside_multi_head_attention() -> None:
    from modelcost.analysis.training_attention import FusedAttention
    from modelcost.analysis.training_autocast import MetaAutocast
    from modelcost.analysis.training_dropout import FusedDropout

    with torch.device("meta"):
        mha = torch.nn.MultiheadAttention(16, 2, dropout=0.1, batch_first=True)
    x = torch.empty(2, 8, 16, device="meta")
    ops = LiveBytes("meta")
    with FusedAttention(), FusedDropout(), ops:
        mha(x, x, x, need_weights=False)
    assert "_scaled_dot_product_efficient_attention" in ops.ops and "_softmax" not in ops.ops  # fused (CUDA's, fp32)
    amp = MetaAutocast(torch.bfloat16)
    with FusedDropout(), amp, ops:
        out, weights = mha(x, x, x)  # need_weights: the explicit product, softmax and dropout
        assert amp.cache  # the in-projection's bf16 weight, cached for the rest of the forward
    assert "native_dropout" in ops.ops  # the GPU's dropout kernel (1-byte mask), not the composite one
    assert out.dtype == torch.bfloat16 and weights.dtype == torch.float32  # products low, softmax fp32 (CUDA's)


def test_checkpointing_lowers_the_simulated_peak() -> None:
    with torch.device("meta"):
        model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                                          torch.nn.Linear(1024, 256)) for _ in range(6)])
    x = torch.empty(8192, 256, device="meta")  # activations, not the weights, dominate
    plain = simulate_step(model, [x], TrainConfig(optimizer="sgd"), "sgd")
    ck = simulate_step(model, [x], TrainConfig(optimizer="sgd", checkpointing=True), "sgd")
    assert ck.peak_bytes < 0.5 * plain.peak_bytes
    assert len(ck.ops) > len(plain.ops)  # the blocks' forwards ran again in backward


def test_envelope_is_the_brute_force_maximum() -> None:
    rng = random.Random(0)
    for _ in range(200):
        lines = [(rng.randint(-500, 2000), rng.choice([0.0, 0.5, 1.0, rng.uniform(0, 20)])) for _ in range(30)]
        hull = tm.envelope(lines)
        assert len(hull) <= len(lines)
        for b in (1, 2, 3, 7, 50, 400, 10_000):
            assert max(a + s * b for a, s in hull) == max(a + s * b for a, s in lines)


@pytest.mark.parametrize("analysed", [1, 2])
def test_lines_predict_other_batches_exactly(analysed: int) -> None:
    from modelcost.analysis.training import analyze_training
    from modelcost.loaders.torch_loader import load_torch

    loaded = load_torch("zoo:bert-tiny", api.load_options(analysed, None))
    report = analyze_training(loaded, analysed, TrainConfig())
    m = report.memory
    assert not report.problems and m.peak_lines
    # at batch 1 the backward has one op fewer (no sum of the position embedding's gradient over the batch):
    # pair_ops pairs the rest, so the backward still gets a line per op
    assert "backward: other ops" not in " ".join(report.notes)
    for batch in (1, 3, 8, 32):
        inputs = [torch.empty(s.shape, dtype=getattr(torch, s.dtype), device="meta")
                  for s in loaded.input_specs(batch)]
        direct = simulate_step(loaded.module, inputs, TrainConfig(), "adamw").peak_bytes
        # each live total is affine in the batch; only the 512-byte rounding of a few storages is not
        assert tm.predicted_peak_at(m, batch) == pytest.approx(direct, rel=1e-3)


def test_pair_ops_skips_a_few_extra_ops() -> None:
    assert tm.pair_ops(["a", "b", "c"], ["a", "b", "c"]) == [(0, 0), (1, 1), (2, 2)]
    assert tm.pair_ops(["a", "b", "c"], ["a", "x", "b", "c"]) == [(0, 0), (1, 2), (2, 3)]
    assert tm.pair_ops(["a"] * 10, ["b"] * 10, max_skipped=4) is None


def test_max_batch_uses_every_line() -> None:
    # two lines: a flat optimizer step (10,000) and forward + backward (1,000 + 100 per sample): the peak at
    # batch B is max(10,000, 1,000 + 100 B). In 20,000 bytes: 1,000 + 100 B <= 20,000 -> B = 190.
    m = TrainingMemory(peak_lines=[(10_000, 0.0), (1_000, 100.0)])
    assert tm.max_batch(m, 20_000, 0.0) == 190
    assert tm.predicted_peak_at(m, 50) == 10_000 and tm.predicted_peak_at(m, 190) == 20_000
    assert tm.max_batch(m, 10_000, 0.0) == 90  # the optimizer step just fits; 1,000 + 100 x 90 = 10,000
    assert tm.max_batch(m, 9_999, 0.0) == 0  # the optimizer step alone does not fit: no batch does


def test_liveness_tracker_frees_what_python_drops() -> None:
    live = LiveBytes("cpu")
    with live:
        a = torch.ones(1000)  # 4,000 -> 4,096
        b = a * 2
        assert live.current_bytes == 8_192
        del a
        assert live.current_bytes == 4_096
        view = b[:10]  # a view: the same storage, nothing new
        assert live.current_bytes == 4_096
        del b
        assert live.current_bytes == 4_096  # the view keeps the storage alive
        del view
    assert live.current_bytes == 0 and live.peak_bytes == 8_192


def test_llama_70b_layers_stay_on_meta() -> None:
    """Llama-70B's shapes with 2 of its 80 layers (8.9 GB of fp32 weights if they were built; the whole model took
    a minute of the suite and shows nothing more): the step is simulated on meta, in far less memory."""
    import resource

    fixture = Path(__file__).parents[1] / "fixtures" / "llama_70b_layers.py"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = api.train_static(f"{fixture}:build", input_shapes={"input_ids": (1, 256)},
                         config=TrainConfig(optimizer="adamw", precision="amp_bf16"))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    m = r.memory
    assert r.trainable_params == 2_235_604_992  # the fixture's docstring derives it
    # AdamW under AMP at batch 1: the optimizer step is the peak: fp32 weights W, gradients W, two moments 2W and
    # the foreach sqrt temporary W = 5W, + the (small) inputs and the loss
    assert m.peak_phase == "optimizer"
    assert m.peak_bytes == pytest.approx(5 * m.weights_bytes, rel=1e-3)
    assert grown_mb < 1024  # 45 GB described (5 W), no weight memory taken


def test_cuda_kernels_keep_what_the_gpu_keeps() -> None:
    """On meta the simulation runs the attention kernel the step's device runs. CUDA (an H100 / H200, torch 2.11:
    benchmarks/train_peak_gpu_diag.py) takes the memory-efficient kernel for fp32 and flash for bf16, where the CPU
    takes its own flash kernel. The memory-efficient kernel lays its output out (B, L, H, D), so multi-head
    attention's ``contiguous()`` copies it, and that copy is what out_proj saves: one (B, L, E) tensor a layer more,
    4 x 32 x 64 x 4 B = 32,768 B, plus the philox seed and offset it returns (two 8-byte tensors, 512 B each as the
    allocator books them): 2 layers x 33,792 = 67,584 B. Flash on CUDA keeps the CPU kernel's bytes plus the same
    two scalars: 2 x 1,024 = 2,048 B."""
    build = _encoder(False)
    with torch.device("meta"):
        model = build()
    x = torch.empty(4, 32, 64, device="meta")
    for precision, kernel, extra in (("fp32", "_scaled_dot_product_efficient_attention", 67_584),
                                     ("amp_bf16", "_scaled_dot_product_flash_attention", 2_048)):
        cpu = simulate_step(model, [x], TrainConfig(precision=precision, kernels="cpu"), "adamw")
        cuda = simulate_step(model, [x], TrainConfig(precision=precision, kernels="cuda"), "adamw")
        assert kernel in cuda.ops and "_scaled_dot_product_flash_attention_for_cpu" in cpu.ops
        assert cuda.peak_bytes - cpu.peak_bytes == extra


def test_cublas_workspaces_of_a_training_step() -> None:
    from modelcost.hardware.workspace import cublas_workspace_bytes, training_workspace_bytes

    # PyTorch's defaults: ":4096:8" on Hopper = 4,096 KiB x 8 = 32 MiB; ":4096:2:16:8" before = 8 MiB + 128 KiB
    assert cublas_workspace_bytes(9, {}) == 33_554_432
    assert cublas_workspace_bytes(8, {}) == 4096 * 1024 * 2 + 16 * 1024 * 8 == 8_519_680
    assert training_workspace_bytes(9, {}) == 2 * 33_554_432  # forward thread + autograd's backward thread
    assert cublas_workspace_bytes(9, {"CUBLAS_WORKSPACE_CONFIG": ":0:0"}) == 0
    assert cublas_workspace_bytes(9, {"CUBLAS_WORKSPACE_CONFIG": ":16:8"}) == 131_072
    assert cublas_workspace_bytes(9, {"CUBLAS_WORKSPACE_CONFIG": "lots"}) == 33_554_432  # PyTorch ignores it too
