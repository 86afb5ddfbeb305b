"""``modelcost recommend``, ``modelcost compare`` and ``modelcost quantize``: wiring and printing only; the work
is in ``modelcost.api`` / ``modelcost.decide``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from modelcost.cli import options as o
from modelcost.cli.app import app, user_errors
from modelcost.cli.timing import timing_options
from modelcost.cli.options import publish_samples, wrote
from modelcost.cli.runner import Outputs, run_command
from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport
from modelcost.report.console import stderr_console
from modelcost.report.console_decide import decision_console, print_comparison, print_recommendation

OutOpt = Annotated[Optional[Path], typer.Option("--out", help=(
    "Write the report folder here (default reports/<model>-<time>). Only files modelcost wrote there are "
    "replaced; a file of yours at a report file's name is refused, never overwritten."))]
ReportOpt = Annotated[bool, typer.Option("--report", help=(
    "Write the report folder reports/<base>-vs-<candidate>-<time>/ (--out DIR writes it there; without either, none)."
))]
RoundsOpt = Annotated[int, typer.Option(min=2, help="Pairs of interleaved blocks (A B, B A, ...) per backend and "
                                                    "batch size.")]
RunsOpt = Annotated[Optional[int], typer.Option("--runs-per-block", min=1, help="Timed calls per block (default: "
                                                                               "about 0.2 s worth).")]
MethodOpt = Annotated[str, typer.Option(help="Confidence interval: t (on log-ratios of block medians) or "
                                             "bootstrap.")]
WarmupOpt = Annotated[float, typer.Option("--warmup-max-s", min=0.0, callback=o.finite,
                                          help="Longest warm-up per model, backend and "
                                                                         "batch size (s).")]




def _console() -> Any:
    return decision_console()


def _progress(message: str) -> None:
    stderr_console().print(f"[dim]… {escape(message)}[/]", markup=True)


def _batches(text: str | None, single: int | None = None) -> list[int] | None:
    from modelcost.cli.flow import parse_batch_sizes

    sizes = parse_batch_sizes(text)
    return sizes if sizes else ([single] if single else None)


def _config(device: str, warmup_max_s: float = 10.0, **kw: Any) -> Any:
    from modelcost.bench.base import BenchConfig

    return BenchConfig(device=device, warmup_max_s=warmup_max_s, **kw)


@app.command()
@user_errors
def compare(
    base: Annotated[str, typer.Argument(help="The base model; MODEL or MODEL@PRECISION (e.g. model.onnx@fp16).")],
    candidate: Annotated[str, typer.Argument(help="The candidate, e.g. model.int8.onnx; MODEL or MODEL@PRECISION.")],
    data: Annotated[Optional[Path], typer.Option("--data", help="Accuracy on these inputs: an .npz with one array "
                                                               "per model input, first axis = samples.")] = None,
    backends: o.Backends = None,
    batch_sizes: o.BatchList = None,
    rounds: RoundsOpt = 10,
    runs_per_block: RunsOpt = None,
    method: MethodOpt = "t",
    input_shape: o.InputShape = None,
    device: o.Device = "auto",
    warmup_max_s: WarmupOpt = 10.0,
    out: OutOpt = None,
    report: ReportOpt = False,
    trust_pickle: o.TrustPickle = False,
) -> None:
    """Is CANDIDATE really faster than BASE, and still accurate? Static differences, speed with a 95% confidence
    interval from interleaved runs, accuracy on the same inputs; a report folder with --report or --out."""
    from modelcost import api
    from modelcost.cli.flow import run_options

    if method not in ("t", "bootstrap"):
        raise ModelcostError(f"--method {method!r}: use t or bootstrap")
    outputs = Outputs(out=out, report=report)

    def work(run: RunReport, staged_csv: Path | None) -> tuple[Any, Any, Any]:
        options = run_options(run.command, backends=backends, batch_sizes=batch_sizes, tuple_shapes=input_shape,
                              trust_pickle=trust_pickle, bench=_config(device, warmup_max_s), takes_auto=False)
        return api.compare(base, candidate, rounds=rounds, runs_per_block=runs_per_block,
                           data=str(data) if data else None, method=method, out=str(out) if out else None,
                           write=outputs.wants_folder, on_message=_progress, command=run.command, options=options)

    def render(result: tuple[Any, Any, Any]) -> None:
        run, cmp, folder = result
        print_comparison(cmp, folder)
        if not run.complete:
            stderr_console().print("[yellow]interrupted[/]: the report holds what finished (marked INCOMPLETE)",
                                   markup=True)

    done = run_command("compare", outputs, work, render=render, write=_written_by_api,
                       complete=lambda result: result[0].complete)
    if not done.result[1].speed:
        raise ModelcostError("no backend could run both models (the reasons are listed above)")


def _written_by_api(run: RunReport, result: Any, staged_csv: Path | None) -> None:
    """compare and quantize: the api writes the report folder of each comparison as it ends."""


@app.command()
@user_errors
def quantize(
    model: Annotated[str, typer.Argument(help="An ONNX model (model.onnx).")],
    int8: Annotated[bool, typer.Option("--int8", help="Make MODEL.int8.onnx: ONNX Runtime static Q/DQ INT8.")] = False,
    fp16: Annotated[bool, typer.Option(
        "--fp16", help="Make MODEL.fp16.onnx: float16 weights and ops, float32 I/O.")] = False,
    calib_data: Annotated[Optional[Path], typer.Option("--calib-data", help=(
        "Calibrate INT8 on these inputs (.npz, one array per input, first axis = samples); "
        "default: generated data."))] = None,
    model_dir: Annotated[Optional[Path], typer.Option("--model-dir", help="Where to write the new models "
                                                                          "(default: beside MODEL).")] = None,
    no_compare: Annotated[bool, typer.Option("--no-compare", help="Only make the models.")] = False,
    data: Annotated[Optional[Path], typer.Option("--data", help="Accuracy on these inputs (.npz).")] = None,
    backends: o.Backends = None,
    batch_sizes: o.BatchList = None,
    rounds: RoundsOpt = 10,
    runs_per_block: RunsOpt = None,
    input_shape: o.InputShape = None,
    device: o.Device = "auto",
    warmup_max_s: WarmupOpt = 10.0,
    out: OutOpt = None,
    report: ReportOpt = False,
) -> None:
    """Make an INT8 (--int8) and/or FP16 (--fp16) copy of an ONNX model, then compare each with the model (a report
    folder per comparison with --report or --out)."""
    from modelcost import api
    from modelcost.bench.registry import parse_backends

    batches = _batches(batch_sizes) or [1]
    # a report folder per comparison: --out itself, or one per candidate under it
    folders = [] if no_compare else api.quantize_report_dirs(model, int8=int8, fp16=fp16, out=out)
    outputs = Outputs(out=out, report=report, report_dirs=folders, more_folders=(model_dir,))

    def work(run: RunReport, staged_csv: Path | None) -> list[Any]:
        return api.quantize(
            model, int8=int8, fp16=fp16, calib_data=str(calib_data) if calib_data else None,
            out_dir=str(model_dir) if model_dir else None, run_compare=not no_compare, batch_size=batches[0],
            input_shapes=input_shape, backends=parse_backends(backends), batch_sizes=batches, rounds=rounds,
            runs_per_block=runs_per_block, data=str(data) if data else None, config=_config(device, warmup_max_s),
            out=str(out) if out else None, write=outputs.wants_folder, on_message=_progress, command=run.command)

    def render(made: list[Any]) -> None:
        for q, result in made:
            _console().print(f"made {q.path} ({q.precision}); " + "; ".join(q.notes), markup=False)
            if q.calibration:
                _console().print(f"calibrated on {q.calibration}", markup=False)
            if result is not None:
                print_comparison(result[1], result[2])

    run_command("quantize", outputs, work, render=render, write=_written_by_api,
                complete=lambda made: all(result[0].complete for _, result in made if result is not None))


@app.command()
@user_errors
@timing_options(exclude=("min_iters",))  # recommend's own --min-iters: its default follows --latency-stat
def recommend(
    model: o.ModelArg,
    max_latency_ms: Annotated[Optional[float], typer.Option(min=0.0, callback=o.finite,
                                                            help="Latency limit in ms (checked on "
                                                                          "--latency-stat, default p99).")] = None,
    min_throughput: Annotated[Optional[float], typer.Option(min=0.0, callback=o.finite,
                                                            help="Throughput floor, inferences/s.")] = None,
    max_memory_gb: Annotated[Optional[float], typer.Option(min=0.0, callback=o.finite, help=(
        "Peak GPU memory limit, GB (1e9 bytes); configs without a measured peak fail it."))] = None,
    max_accuracy_drop: Annotated[Optional[float], typer.Option(min=0.0, callback=o.finite, help=(
        "Percent: 100 x (1 - top-1 agreement with FP32), or 100 x (1 - cosine)."))] = None,
    batch_size: Annotated[Optional[int], typer.Option(
        "--batch-size", "-b", min=1, help="Only this batch size.")] = None,
    batch_sizes: Annotated[Optional[str], typer.Option("--batch-sizes", help=(
        "Batch sizes to measure and choose from, or 'auto' (batch 1 and the batch at which throughput saturates; "
        "the default on a GPU, 1,8,32 on the CPU)."))] = None,
    screen: o.Screen = None,
    exhaustive: o.Exhaustive = False,
    latency_stat: Annotated[str, typer.Option(help="p50, p90, p95, p99 or mean.")] = "p99",
    objective: Annotated[str, typer.Option(
        help="throughput (highest IPS) or latency (lowest latency).")] = "throughput",
    backends: o.Backends = None,
    precisions: o.Precisions = None,
    input_shape: o.InputShape = None,
    device: o.Device = "auto",
    min_iters: Annotated[Optional[int], typer.Option(min=1, help="Time each config at least this many calls "
                                                     "(default: 50, or the samples --latency-stat needs to rank "
                                                     "on: p90 10, p95 20, p99 100).")] = None,
    samples_csv: o.SamplesCsv = None,
    report: Annotated[bool, typer.Option("--report", help="Write the report folder (reports/<model>-<time>).")] = False,
    out: OutOpt = None,
    json_path: o.JsonPath = None,
    trust_pickle: o.TrustPickle = False,
    predict: Annotated[bool, typer.Option("--predict", help=(
        "Predict every candidate first from this GPU's calibration ('modelcost calibrate') and measure only those "
        "that may still win within the predictor's validated error; the skipped ones are listed with their "
        "prediction. With the error unknown, everything is measured."))] = False,
    timing: dict[str, Any] | None = None,
) -> None:
    """Benchmark MODEL, then pick the backend + precision + batch size that meets the constraints best, say why,
    and show the latency-vs-throughput Pareto front. Exit code 1 when nothing meets the constraints."""
    import dataclasses

    from modelcost import api
    from modelcost.cli.flow import bench_config, run_options, screen_mode, wants_batch_search
    from modelcost.decide.constraints import Constraints

    auto = wants_batch_search(batch_sizes)
    only = None if auto else _batches(batch_sizes) if batch_sizes else ([batch_size] if batch_size else None)
    constraints = Constraints(max_latency_ms=max_latency_ms, min_throughput_ips=min_throughput,
                              max_memory_gb=max_memory_gb, max_accuracy_drop_pct=max_accuracy_drop,
                              batch_sizes=tuple(only) if only else None, latency_stat=latency_stat)
    from modelcost.core.samples import min_samples

    if min_iters is None:  # enough samples to rank on the latency statistic (core/samples.py)
        min_iters = max(50, min_samples(latency_stat))
    outputs = Outputs(json_path=json_path, out=out, samples_csv=samples_csv)

    def work(run: RunReport, staged_csv: Path | None) -> tuple[Any, Any]:
        options = run_options(run.command, backends=backends, precisions=precisions, tuple_shapes=input_shape,
                              trust_pickle=trust_pickle,
                              bench=bench_config(device, staged_csv, timing or {}, min_iters=min_iters),
                              screen=screen_mode(screen), exhaustive=exhaustive, live_bar=True,
                              batch_search="on" if auto else "off" if only else "gpu")
        # without --batch-sizes: api.recommend's default sweep (on a GPU the search: batch 1 + the saturating one)
        options = dataclasses.replace(options, batch_sizes=tuple(only) if only else None)
        _, rec, folder = api.recommend(model, constraints=constraints, objective=objective,
                                       out=str(out) if out else None, write=report or out is not None,
                                       command=run.command, options=options, run=run,
                                       predict=predict)
        return rec, folder

    def write(run: RunReport, result: tuple[Any, Any] | None, staged_csv: Path | None) -> None:
        if json_path is not None:
            from modelcost.report.folder import write_report_json

            existed = json_path.exists()
            write_report_json(run, json_path, recommendation=result[0] if result else None)
            typer.echo(wrote("JSON report (with the recommendation)", json_path, existed))
        samples_line = publish_samples(staged_csv, samples_csv)
        if samples_line:
            _console().print(samples_line, markup=False)

    done = run_command("recommend", outputs, work, render=lambda result: print_recommendation(*result), write=write)
    if done.result[0].best is None:
        raise typer.Exit(1)
