"""``train``: the static training analysis, then (unless static) the measured steps. What ``api.train_static``
/ ``api.train`` run; it joins loaders, analysis/training and bench/training.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.training import TRAIN_PRECISIONS, TrainConfig, TrainingReport

PEAK_KEY = {"fp32": "fp32", "tf32": "tf32", "amp_fp16": "fp16", "fp16": "fp16", "amp_bf16": "bf16", "bf16": "bf16"}


def check_precisions(precisions: Sequence[str]) -> list[str]:
    """The training precisions by their canonical names (amp-bf16 -> amp_bf16); an unknown one, or none at all,
    is refused in one line."""
    if not precisions:
        raise ModelcostError(f"no training precision given; choose from {', '.join(TRAIN_PRECISIONS)}")
    out = []
    for p in precisions:
        key = {"amp-bf16": "amp_bf16", "amp-fp16": "amp_fp16"}.get(p.strip().lower(), p.strip().lower())
        if key not in TRAIN_PRECISIONS:
            raise ModelcostError(f"unknown training precision {p!r}; choose from {', '.join(TRAIN_PRECISIONS)}")
        out.append(key)
    return out


def load(source: str, batch_size: int | None, input_shapes: Any, trust_pickle: bool,
         attn_implementation: str | None = None) -> Any:
    """The PyTorch model to train (the loaders' ``LoadedTorch``); an ONNX file is refused in one line."""
    from modelcost.loaders.base import source_kind
    from modelcost.loaders.torch_loader import load_torch
    from modelcost.runs.model import options_for

    if source_kind(source) == "onnx":
        raise ModelcostError(f"{source}: training needs a PyTorch model (zoo:, file.py:factory, "
                             "package.module:factory, .pt2 or TorchScript), not ONNX")
    options = options_for(batch_size, input_shapes, trust_pickle, attn_implementation=attn_implementation)
    return load_torch(source, options.load_options())


def memory_target(target_gpu: str | None, memory_bytes: int | None) -> tuple[int | None, str | None]:
    """(bytes, what) of the memory to fit the largest batch into: given bytes, a named GPU, or this GPU."""
    if memory_bytes is not None:
        return memory_bytes, "memory given"
    if target_gpu:
        from modelcost.hardware.specs import spec_from_table

        spec = spec_from_table(target_gpu)
        return spec.memory_bytes, spec.name
    from modelcost.runs.gpu import this_gpu

    gpu = this_gpu(required=False)
    return (gpu.memory_bytes, gpu.name) if gpu is not None and gpu.memory_bytes else (None, None)


def train_static(source: str, *, batch_size: int | None = None, input_shapes: Any = None, trust_pickle: bool = False,
                 config: TrainConfig | None = None, target_gpu: str | None = None,
                 memory_bytes: int | None = None, attn_implementation: str | None = None,
                 predict: bool = False) -> TrainingReport:
    """The static training analysis; ``predict``: also the step time predicted from the calibration of this GPU
    (and of ``target_gpu``) for both variants at the analysed batch."""
    from modelcost.analysis.training import analyze_training, fit_max_batch
    from modelcost.runs import predict as prediction

    config = config or TrainConfig()
    check_precisions([config.precision])
    found = prediction.calibrations() if predict else []  # before any work: none is one line, now
    loaded = load(source, batch_size, input_shapes, trust_pickle, attn_implementation)
    report = analyze_training(loaded, loaded.batch_size or 1, config)
    memory, what = memory_target(target_gpu, memory_bytes)
    if memory is not None:
        fit_max_batch(report, memory, what or "the target", config.memory_margin)
    else:
        report.notes.append("largest batch not computed: no GPU here and no --target-gpu / memory given")
    if predict:
        configs = [(config.precision, variant, report.batch_size) for variant in ("eager", "compile")]
        prediction.attach_train_predictions(report, loaded, {config.precision: report}, configs, target_gpu, found)
    return report


def train(source: str, *, batch_size: int | None = None, input_shapes: Any = None, trust_pickle: bool = False,
          config: TrainConfig | None = None, precisions: Sequence[str] = ("fp32",), batch_sizes: Sequence[int] = (),
          variants: Sequence[str] = ("eager",), device: str = "auto", bench_config: Any = None,
          target_gpu: str | None = None, memory_bytes: int | None = None, on_message: Any = None,
          attn_implementation: str | None = None, predict: bool = False) -> TrainingReport:
    """The static analysis at the first precision, then every (precision, variant) swept over the batch sizes
    (stopping at out-of-memory), each with its own predicted peak and the MFU against this GPU's spec peak;
    ``predict``: each measured step's predicted time beside it (runs/predict.attach_train_predictions)."""
    from modelcost.runs import predict as prediction
    import dataclasses

    from modelcost.bench.training import VARIANTS, sweep
    from modelcost.runs.gpu import this_gpu

    config = config or TrainConfig()
    precisions = check_precisions(precisions)
    found = prediction.calibrations() if predict else []  # before any work: none is one line, now
    device = _device(device)
    config = dataclasses.replace(config, kernels="cpu" if device == "cpu" else "cuda")  # the step it will measure
    for v in variants:
        if v not in VARIANTS:
            raise ModelcostError(f"unknown variant {v!r}; choose from {', '.join(VARIANTS)}")
    report = train_static(source, batch_size=batch_size, input_shapes=input_shapes, trust_pickle=trust_pickle,
                          config=dataclasses.replace(config, precision=precisions[0]), target_gpu=target_gpu,
                          memory_bytes=memory_bytes, attn_implementation=attn_implementation)
    if config.checkpointing:
        report.notes.append("the measured steps run without activation checkpointing (it is modelled statically)")
    loaded = load(source, batch_size, input_shapes, trust_pickle, attn_implementation)
    gpu = this_gpu(required=False) if device == "cuda" else None
    sizes = list(batch_sizes) or [report.batch_size]
    statics: dict[str, TrainingReport] = {}
    for precision in precisions:
        static = report if precision == report.precision else _static_at(loaded, report.batch_size, config, precision)
        statics[precision] = static
        setup = step_setup(loaded, static, gpu, precision)
        for variant in variants:
            if on_message is not None:
                on_message(f"{precision} {variant}: batch sizes {', '.join(map(str, sizes))}")
            results = sweep(setup, precision, sizes, device=device, variant=variant, config=bench_config)
            report.benchmarks += results
            if results and results[-1].status == "oom":
                ran = [r.batch_size for r in results if r.status == "ok"]
                report.notes.append(f"{precision} {variant}: out of memory at batch {results[-1].batch_size}; the "
                                    f"largest batch that ran: {max(ran) if ran else 'none'}")
    if predict:
        configs = [(r.precision, r.variant, r.batch_size) for r in report.benchmarks if r.status == "ok"]
        prediction.attach_train_predictions(report, loaded, statics, configs or [
            (p, v, b) for p in precisions for v in variants for b in sizes], target_gpu, found)
    return report


def _static_at(loaded: Any, batch: int, config: TrainConfig, precision: str) -> TrainingReport:
    import dataclasses

    from modelcost.analysis.training import analyze_training

    return analyze_training(loaded, batch, dataclasses.replace(config, precision=precision))


def step_setup(loaded: Any, static: TrainingReport, gpu: Any, precision: str) -> Any:
    """What bench needs: module factory, seeded inputs, FLOPs and predicted peak as functions of the batch."""
    from modelcost.analysis.training_memory import predicted_peak_at
    from modelcost.bench.training import StepSetup

    per_sample = (static.flops_per_step - static.optimizer_flops) / static.batch_size
    key = PEAK_KEY[precision]
    return StepSetup(
        build=lambda device: loaded.instantiate(device),
        make_inputs=lambda batch, device: loaded.bind(loaded.make_inputs(batch, device)),
        optimizer=static.optimizer,
        flops_per_step=lambda batch: int(per_sample * batch) + static.optimizer_flops,
        predicted_peak=lambda batch: predicted_peak_at(static.memory, batch),
        peak_tflops=gpu.peak_tflops.get(key) if gpu is not None else None,
        measured_tflops=gpu.measured_tflops.get(key) if gpu is not None else None,
        tokens_per_sample=static.tokens_per_sample,
    )


def _device(device: str) -> str:
    from modelcost.bench.memory import cuda_available

    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device == "cuda" and not cuda_available():
        raise ModelcostError("{device} cuda: no CUDA device here", fields="device")
    return device
