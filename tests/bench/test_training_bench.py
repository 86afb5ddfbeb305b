"""The measured training step (bench/training.py), the train command and the GPU checks."""

from __future__ import annotations

import json

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from modelcost import api
from modelcost.bench.base import BenchConfig
from modelcost.bench.training import StepSetup, measure_step, sweep
from modelcost.cli import app

# a budget of 0.5 s: enough steps for every assertion here (bert-tiny takes ~50 ms a step); none needs a settled median
QUICK = BenchConfig(warmup=2, warmup_max_s=0.2, min_time_s=0.05, min_iters=3, max_time_s=0.5)


def _mlp_setup(fail_at: int | None = None) -> StepSetup:
    def build(device: str) -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)

    def inputs(batch: int, device: str) -> tuple[torch.Tensor, ...]:
        if fail_at is not None and batch >= fail_at:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return (torch.randn(batch, 16, generator=torch.Generator().manual_seed(0)).to(device),)

    # forward 16 x 32 + 32 x 4 = 640 MACs per sample, backward weight 640 + input 128: 1408 MACs, 2816 FLOPs
    return StepSetup(build, inputs, optimizer="sgd", flops_per_step=lambda b: 2816 * b, peak_tflops=1.0)


def test_cpu_step_loop_measures_with_perf_counter() -> None:
    r = measure_step(_mlp_setup(), "fp32", 8, device="cpu", config=QUICK)
    assert r.status == "ok", r.reason
    assert r.samples >= 3 and r.step_time_ms > 0
    assert r.samples_per_second == pytest.approx(8 / r.step_time_ms * 1e3)
    assert r.achieved_tflops == pytest.approx(2816 * 8 / (r.step_time_ms * 1e-3) / 1e12)
    assert r.mfu == pytest.approx(r.achieved_tflops / 1.0)
    assert r.peak_memory_bytes is None  # not measured on the CPU: null, never 0
    assert "perf_counter" in r.timing and "no data loader" in r.timing


def test_sweep_stops_cleanly_at_out_of_memory() -> None:
    results = sweep(_mlp_setup(fail_at=4), "fp32", [1, 2, 4, 8], device="cpu", config=QUICK)
    assert [r.status for r in results] == ["ok", "ok", "oom"]  # batch 8 is not tried
    assert "out of memory at batch 4" in results[-1].reason


def test_amp_bf16_on_cpu_runs() -> None:
    r = measure_step(_mlp_setup(), "amp_bf16", 4, device="cpu", config=QUICK)
    assert r.status == "ok", r.reason


def test_api_train_on_cpu_tiny() -> None:
    report = api.train("zoo:bert-tiny", input_shapes=["input_ids=1x16"], batch_sizes=[1], device="cpu",
                       bench_config=QUICK, memory_bytes=2**30)
    (r,) = report.benchmarks
    assert r.status == "ok", r.reason
    assert r.tokens_per_second == pytest.approx(r.samples_per_second * 16)
    assert r.predicted_peak_bytes == report.memory.peak_bytes  # the same batch as the static count
    assert report.max_batch_size is not None and report.max_batch_size > 1


def test_cli_train_static_json(tmp_path) -> None:
    out = tmp_path / "t.json"
    result = CliRunner().invoke(app, ["train", "zoo:resnet18", "--static", "-s", "x=2x3x32x32", "--optimizer", "sgd",
                                      "--target-gpu", "H100 SXM", "--json", str(out)])
    assert result.exit_code == 0, result.output
    t = json.loads(out.read_text())["training"]
    for key in ("forward_macs", "backward_macs", "optimizer_flops", "flops_per_step", "macs_per_sample",
                "max_batch_size", "benchmarks"):
        assert key in t, key
    assert set(t["memory"]) >= {"weights_bytes", "gradients_bytes", "optimizer_state_bytes", "master_weights_bytes",
                                "activations_bytes", "peak_bytes"}
    assert t["optimizer_flops"] == 2 * 11_689_512  # SGD: 2 per trainable element of ResNet-18
    assert "largest batch" in result.output


def test_cli_bad_precision_is_one_line() -> None:
    result = CliRunner().invoke(app, ["train", "zoo:bert-tiny", "--static", "--precisions", "fp7"])
    assert result.exit_code == 1
    assert "unknown training precision" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--precisions", ""], "--precisions '': no value given"),
    (["--precisions", ","], "--precisions ',': no value given"),
    (["--static", "--precisions", ","], "--precisions ',': no value given"),
    (["--variants", ","], "--variants ',': no value given"),
    (["--batch-sizes", "abc"], "--batch-sizes 'abc': expected positive integers"),
    (["--batch-sizes", ","], "--batch-sizes ',': no value given"),
    (["--batch-sizes", "auto"], "--batch-sizes auto: this command has no throughput-batch search"),
    # a batch of no samples was "measured" at 0 samples/s, and -4 predicted a peak of -1.15 MiB
    (["--batch-sizes", "0"], "--batch-sizes '0': a batch size is a number of samples, so it must be positive"),
    (["--batch-sizes", "8,-4"], "--batch-sizes '8,-4': a batch size is a number of samples"),
])
def test_cli_bad_lists_are_one_line_before_anything_runs(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["train", "zoo:bert-tiny", "-s", "input_ids=1x16", "--device", "cpu", *args])
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert "training step" not in result.output  # refused before the static count ran


def test_train_help_offers_no_auto_batch() -> None:
    result = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "--batch-sizes" in result.output
    assert "auto" not in result.output.split("--batch-sizes", 1)[1].split("--", 1)[0]


def test_api_train_without_precisions_is_one_error() -> None:
    from modelcost.core.errors import ModelcostError

    with pytest.raises(ModelcostError, match="no training precision given"):
        api.train("zoo:bert-tiny", input_shapes=["input_ids=1x16"], precisions=[], device="cpu")


@pytest.mark.gpu
@pytest.mark.xfail(strict=False, reason=(
    "known gap: the simulated peak has no cuDNN/cuBLAS workspaces; on an H100 (2026-11-23) ResNet-18 fp32 SGD b64 "
    "predicted 1.58 GB vs 2.14 GB measured (a transient conv workspace at the backward peak); ResNet-50 / BERT-base "
    "rows are within 7% (BENCHMARKS.md)"))
def test_gpu_resnet18_predicted_peak_close_to_measured() -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA")
    report = api.train("zoo:resnet18", batch_sizes=[64], precisions=["fp32"], device="cuda",
                       bench_config=BenchConfig(min_time_s=0.5, max_time_s=5.0))
    (r,) = report.benchmarks
    assert r.status == "ok", r.reason
    assert r.peak_memory_bytes is not None and r.mfu is not None
    assert r.predicted_peak_bytes == pytest.approx(r.peak_memory_bytes, rel=0.15)


@pytest.mark.gpu
@pytest.mark.parametrize("fixture", ["train_encoder", "train_gpt_tied"])
@pytest.mark.parametrize("precision", ["fp32", "amp_bf16"])
def test_gpu_transformer_predicted_peak_within_5pct(fixture: str, precision: str) -> None:
    """Issue 25: on an H100 the predicted peak of nn.TransformerEncoder was 10.7-19.5% above a real step (the
    attention inside nn.MultiheadAttention ran unseen, as its math path) and a GPT with a tied head 9.3% below (the
    copy BLAS makes of the loss's stride-0 gradient). Both equal a CPU step now (test_training_peak.py). On a GPU
    the encoder was then 15% below: CUDA's attention kernels (memory-efficient for fp32) and the two cuBLAS
    workspaces (64 MiB on Hopper) were not simulated; with both it is within 5%."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA")
    source = f"{Path(__file__).parents[1] / 'fixtures' / fixture}.py:make_model"
    report = api.train(source, batch_sizes=[16], precisions=[precision], device="cuda",
                       bench_config=BenchConfig(min_time_s=0.2, min_iters=5, max_time_s=3.0, warmup=2))
    (r,) = report.benchmarks
    assert r.status == "ok", r.reason
    print(f"{fixture} {precision}: predicted {r.predicted_peak_bytes:,} B, measured {r.peak_memory_bytes:,} B "
          f"({r.predicted_peak_bytes / r.peak_memory_bytes - 1:+.1%})")
    assert r.predicted_peak_bytes == pytest.approx(r.peak_memory_bytes, rel=0.05)


def _reads_values(tmp_path, condition: str) -> str:
    src = tmp_path / "m.py"
    src.write_text("import torch\n\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   "        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                   f"        if {condition}:\n            return self.fc(x)\n        return x\n\n\n"
                   "def make():\n    return M()\n")
    return f"{src}:make"


def test_cli_model_that_reads_an_input_value_is_counted(tmp_path) -> None:
    # the data oracle answers x.sum().item() from the example input's values (analysis/data_oracle.py)
    result = CliRunner().invoke(app, ["train", _reads_values(tmp_path, "x.sum().item() > -1e9"), "--static",
                                      "-s", "x=2x4"])
    assert result.exit_code == 0, result.output
    assert "assumed:" in result.output and "input x" in result.output


def test_cli_model_that_reads_values_fails_in_one_line(tmp_path) -> None:
    # values of a tensor larger than the oracle shadows (data_oracle.LIMIT_ELEMENTS = 2^22): 2^20 + 1 rows of 4
    model = _reads_values(tmp_path, "len(torch.nonzero(self.fc(x))) > 0")
    result = CliRunner().invoke(app, ["train", model, "--static", "-s", "x=1048577x4"])
    assert result.exit_code == 1
    assert "the training step failed on meta inputs" in result.output and "Traceback" not in result.output
    assert "aten.nonzero at" in result.output


@pytest.mark.gpu
def test_gpu_predicted_max_batch_runs_under_a_memory_cap() -> None:
    """The largest batch predicted for a 4 GiB card runs on this GPU capped to 4 GiB."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA")
    from modelcost.runs import train as training_run
    from modelcost.analysis.training import analyze_training
    from modelcost.analysis.training_memory import max_batch
    from modelcost.bench.training import measure_step
    from modelcost.core.training import TrainConfig

    loaded = training_run.load("zoo:resnet18", 8, None, False)
    static = analyze_training(loaded, 8, TrainConfig(precision="amp_bf16"))
    cap = 4 * 2**30
    best = max_batch(static.memory, cap, 0.10)
    setup = training_run.step_setup(loaded, static, None, "amp_bf16")
    r = measure_step(setup, "amp_bf16", best, device="cuda", memory_cap_bytes=cap,
                     config=BenchConfig(min_time_s=0.0, min_iters=3, max_time_s=3.0, warmup=2))
    assert r.status == "ok", r.reason
    assert r.peak_memory_bytes <= cap


def test_a_step_collects_with_the_long_lived_heap_frozen(monkeypatch) -> None:
    """The collection that ends each step (bench/training.py's _release) scans only what the step made, not
    torch and the model (0.2 s a collection with them in sight); everything is thawed after."""
    import gc

    seen: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: (seen.append(gc.get_freeze_count()), collect(*a))[1])
    assert measure_step(_mlp_setup(), "fp32", 2, device="cpu", config=QUICK).status == "ok"
    assert seen and min(seen) > 0
    assert gc.get_freeze_count() == 0


def test_an_out_of_memory_error_without_a_message_is_still_reported() -> None:
    # the reason took the message's first line by hand (str(exc).splitlines()[0]), which raised IndexError on an
    # empty message inside the handler; core.text.first_line gives the class's name then
    from modelcost.bench.training import failure_of

    class OutOfMemoryError(RuntimeError):  # told by name, as torch's is
        pass

    assert failure_of(OutOfMemoryError(""), 8) == ("oom", "out of memory at batch 8: OutOfMemoryError")
    assert failure_of(OutOfMemoryError("CUDA out of memory.\nTried to allocate"), 8) == (
        "oom", "out of memory at batch 8: CUDA out of memory.")
