"""``compare`` and ``quantize``: two models loaded once each, timed interleaved on the same backend, with a 95%
interval of the speedup; the report folder is checkpointed after every finished pair (``runs.report``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from modelcost.bench.base import PRECISIONS, BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.decisions import Comparison
from modelcost.core.text import utc_timestamp
from modelcost.core.types import CostReport, GpuSpec, RunReport
from modelcost.decide.compare import CompareOptions, Comparer, default_backends, model_side, onnx_op_counts
from modelcost.runs import gpu as this_machine
from modelcost.runs.model import LoadedModel, RunOptions, Shapes, load, options_for, static_or_note
from modelcost.runs.report import Checkpointer

OnMessage = Callable[[str], None]  # one line of what is being done now ("ort-cpu batch 8: interleaved timing")


def parse_side(spec: str) -> tuple[str, str]:
    """'model.onnx@fp16' -> ('model.onnx', 'fp16'); 'model.onnx' -> ('model.onnx', 'fp32')."""
    head, sep, tail = spec.rpartition("@")
    if sep and tail.lower() in PRECISIONS and head:
        return head, tail.lower()
    return spec, "fp32"


def side_name(source: str, precision: str, other: str) -> str:
    name = Path(source.split(":", 1)[1] if source.startswith(("zoo:", "torchvision:")) else source).name
    for suffix in (".onnx", ".pt2", ".pt", ".py"):
        name = name.removesuffix(suffix)
    return f"{name}@{precision}" if source == other else name


def run_comparison(base: BenchModel, cand: BenchModel, *, sources: tuple[str, str], precisions: tuple[str, str],
                   costs: tuple[CostReport | None, CostReport | None], opts: CompareOptions,
                   gpu: GpuSpec | None = None, out: str | Path | None = None, write: bool = True,
                   command: str = "compare", on_message: OnMessage | None = None,
                   run_notes: Sequence[str] = (), comparison_notes: Sequence[str] = (),
                   ) -> tuple[RunReport, Comparison, Path | None]:
    """Compare and write the report folder (``out``, default reports/<base>-vs-<cand>-<time>)."""
    from modelcost.bench.memory import device_info
    from modelcost.bench.plan import resolve_device
    from modelcost.core.errors import ModelcostError

    if opts.rounds < 2:
        raise ModelcostError("{rounds} must be at least 2 (a confidence interval needs two pairs of blocks)",
                             fields="rounds")
    if not opts.batch_sizes or any(int(b) < 1 for b in opts.batch_sizes):
        raise ModelcostError("batch sizes must be positive integers, e.g. {batch_sizes} 1,8", fields="batch_sizes")
    names = (side_name(sources[0], precisions[0], sources[1]), side_name(sources[1], precisions[1], sources[0]))
    sides = []
    for name, src, cost, prec, model in zip(names, sources, costs, precisions, (base, cand)):
        ops = onnx_op_counts(model.onnx_path) if model.kind == "onnx" and model.onnx_path else {}
        sides.append(model_side(name, src, cost, ops, prec))
    cmp = Comparison(base=sides[0], candidate=sides[1], notes=list(comparison_notes))
    device = resolve_device(opts.config.device)
    run = RunReport(cost=costs[0], gpu=gpu if device == "cuda" else None, device=device_info(device),
                    created=utc_timestamp(), command=command, notes=list(run_notes))
    for label, cost in zip(("base", "candidate"), costs):
        if cost is None:
            run.notes.append(f"no static analysis of the {label}: its storage and MACs are not shown")
    backends = list(opts.backends) if opts.backends else default_backends(base, cand, device)
    if not backends:
        raise ModelcostError(f"no backend runs both a {base.kind} and a {cand.kind} model on {device}; "
                             "see 'modelcost backends'")
    saver = Checkpointer(run, cmp, out, write)
    Comparer(base, cand, opts, run, cmp, run.gpu, costs, saver.checkpoint, on_message,
             roofline=this_machine.place_on_roofline).run_all(backends)
    return run, cmp, saver.final()


def compare(
    base: str, candidate: str, *, backends: Sequence[str] | None = None, batch_sizes: Sequence[int] | None = None,
    rounds: int = 10, runs_per_block: int | None = None, data: str | None = None, input_shapes: Shapes = None,
    trust_pickle: bool = False, config: BenchConfig | None = None, method: str = "t", out: str | None = None,
    write: bool = True, on_message: OnMessage | None = None, command: str = "compare", notes: Sequence[str] = (),
    options: RunOptions | None = None,
) -> tuple[Any, Any, Any]:
    """BASE vs CANDIDATE (each ``MODEL`` or ``MODEL@PRECISION``): static differences, interleaved timing with a
    95% CI of the speedup, accuracy on the same inputs (or ``data``). Returns (RunReport, Comparison, the
    report folder or None); the folder is ``out`` or reports/<base>-vs-<candidate>-<time>. Each model is
    loaded once. ``options`` (the ``RunOptions`` analyze / bench take) replaces backends, batch_sizes,
    input_shapes, trust_pickle and config."""
    from modelcost.loaders.base import check_source

    if options is not None:
        backends, batch_sizes, config = options.backends, options.batch_sizes, options.bench
        input_shapes, trust_pickle = options.input_shapes, options.trust_pickle
    (b_src, b_prec), (c_src, c_prec) = parse_side(base), parse_side(candidate)
    for src in (b_src, c_src):
        check_source(src)  # a typo in either is said at once, not after the other's analysis
    batches = list(batch_sizes or [1])
    config = config or BenchConfig()
    load_with = options_for(batches[0], input_shapes, trust_pickle, bench=config)
    static_notes: list[str] = []
    loaded: list[LoadedModel] = []
    try:
        for src in (b_src, c_src):
            loaded.append(load(src, load_with))
        costs = (static_or_note(loaded[0], static_notes), static_or_note(loaded[1], static_notes))
        opts = CompareOptions(backends=backends, batch_sizes=batches, rounds=rounds, runs_per_block=runs_per_block,
                              method=method, data=data, base_precision=b_prec, candidate_precision=c_prec,
                              config=config)
        gpu = this_machine.this_gpu(required=False)
        return run_comparison(loaded[0].bench_model(), loaded[1].bench_model(), sources=(b_src, c_src),
                              precisions=(b_prec, c_prec), costs=costs, opts=opts, gpu=gpu, out=out,
                              write=write, command=command, on_message=on_message, run_notes=static_notes,
                              comparison_notes=notes)
    finally:
        for m in loaded:
            m.close()


def quantize(
    model: str, *, int8: bool = True, fp16: bool = False, calib_data: str | None = None,
    out_dir: str | None = None, run_compare: bool = True, batch_size: int = 1,
    input_shapes: Shapes = None, **compare_kwargs: Any,
) -> list[tuple[Any, Any]]:
    """Make ``MODEL.int8.onnx`` (static Q/DQ) and/or ``MODEL.fp16.onnx`` beside the model (or in ``out_dir``),
    then compare each with the model. Returns [(Quantized, (RunReport, Comparison, folder) or None)]."""
    from modelcost.core.errors import ModelcostError
    from modelcost.decide.quantize import convert_fp16, quantize_int8
    from modelcost.loaders.base import source_kind
    from modelcost.runs.model import bench_model

    if source_kind(model) != "onnx":
        raise ModelcostError(f"quantize takes an ONNX file; {model} is not one (export it to ONNX first)")
    if not (int8 or fp16):
        raise ModelcostError("nothing to make: pass {int8} and/or {fp16}", fields=("int8", "fp16"))
    src = Path(model)
    where = Path(out_dir) if out_dir else src.parent
    outs = quantize_report_dirs(model, int8=int8, fp16=fp16, out=compare_kwargs.get("out"))
    made = []
    if int8:
        specs = bench_model(model, batch_size=batch_size, input_shapes=input_shapes).specs
        made.append(quantize_int8(src, where / f"{src.stem}.int8.onnx", specs_for=specs, calib_data=calib_data))
    if fp16:
        made.append(convert_fp16(src, where / f"{src.stem}.fp16.onnx"))
    out: list[tuple[Any, Any]] = []
    for i, q in enumerate(made):
        result = None
        if run_compare:
            notes = [f"candidate made by modelcost quantize: {'; '.join(q.notes)}"]
            notes += [f"INT8 calibration: {q.calibration}"] if q.calibration else []
            kwargs = dict(compare_kwargs)
            if outs:
                kwargs["out"] = str(outs[i])  # one folder per candidate under --out when there are two
            result = compare(model, str(q.path), input_shapes=input_shapes, notes=notes, **kwargs)
        out.append((q, result))
        if result is not None and not result[0].complete:
            break  # interrupted (Ctrl-C): do not start the next comparison
    return out


def quantize_report_dirs(model: str, *, int8: bool, fp16: bool, out: Any) -> list[Any]:
    """The report folders ``quantize`` writes its comparisons to, in the order it makes the candidates: ``out``
    itself for one candidate, ``out/MODEL.int8`` and ``out/MODEL.fp16`` for two; none without ``out``."""
    if not out:
        return []
    stems = [f"{Path(model).stem}.{p}" for p, asked in (("int8", int8), ("fp16", fp16)) if asked]
    return [Path(out) / stem for stem in stems] if len(stems) > 1 else [Path(out)] * len(stems)
