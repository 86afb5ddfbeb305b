"""Options that ``analyze`` and ``bench`` share, and the steps both take after benchmarking."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Optional

import typer

from modelcost.core.errors import ModelcostError
from modelcost.core.types import RunReport

ModelArg = Annotated[str, typer.Argument(help="model.onnx, path/to/file.py:factory, package.module:factory, "
                                              "model.pt2, TorchScript .pt, or zoo:NAME.")]
BatchSize = Annotated[Optional[int], typer.Option(
    "--batch-size", "-b", min=1, help="Bind the batch (first symbolic) dimension of every input.")]
InputShape = Annotated[Optional[list[str]], typer.Option(
    "--input-shape", "-s", help="NAME=1x3x224x224: the shape of one input (repeatable).")]
TrustPickle = Annotated[bool, typer.Option(
    "--trust-pickle", help="Allow loading a pickled PyTorch module. Unpickling runs code: only for files you trust.")]
JsonPath = Annotated[Optional[Path], typer.Option("--json", help="Write the versioned JSON report (docs/REPORT_SCHEMA.md) here.")]
Backends = Annotated[Optional[str], typer.Option(
    help="Comma list of backends (see 'modelcost backends'); default: every backend of the device.")]
Precisions = Annotated[Optional[str], typer.Option(help="Comma list: fp32,tf32,fp16,bf16,int8,fp8; default: each backend's own.")]
BatchSizes = Annotated[Optional[str], typer.Option("--batch-sizes", help="Sweep these batch sizes, e.g. 1,8,32,128.")]
MinTime = Annotated[float, typer.Option(min=0, help="Time each config at least this long (seconds).")]
MinIters = Annotated[int, typer.Option(min=1, help="Time each config at least this many calls.")]
MaxTime = Annotated[float, typer.Option(min=0.001, help="Time budget per config: stop even if the median is not yet known to +-1%.")]
Warmup = Annotated[int, typer.Option(min=1, help="Calls per warm-up window (warm-up runs until two windows agree within 2%).")]
CompileMode = Annotated[str, typer.Option(help="torch.compile mode: default or max-autotune.")]
SamplesCsv = Annotated[Optional[Path], typer.Option(help="Write the NVML samples of every timed run here (nvidia-smi field names).")]
Device = Annotated[str, typer.Option(help="cuda, cpu or auto (cuda when there is one).")]
TargetGpu = Annotated[Optional[str], typer.Option(
    "--target-gpu", help="Also estimate the lower-bound latency on this GPU (see 'modelcost gpu --list').")]
RooflinePlot = Annotated[Optional[Path], typer.Option("--roofline-plot", help="Write the roofline plot (.png or .svg).")]
ProfileLayers = Annotated[bool, typer.Option(
    "--profile-layers", help="Measure per-layer time (eager PyTorch / ONNX Runtime fp32): where the time goes vs where the FLOPs are.")]
Report = Annotated[bool, typer.Option(
    "--report", help="Write the report folder reports/<model>-<time>/ (JSON, Markdown, HTML with plots, CSV).")]
OutDir = Annotated[Optional[Path], typer.Option("--out", help="Write the report folder here (implies --report).")]


def new_run(command: str) -> RunReport:
    args = " ".join(sys.argv[2:])
    return RunReport(command=f"{command} {args}".strip(), created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))


def check_writable(files: tuple[Path | None, ...] = (), folders: tuple[Path | None, ...] = ()) -> None:
    """Refuse an output path that cannot be written before anything is measured, so no result is lost to it.
    A file path must not be a folder; an existing file is replaced (atomically, when the run writes it), so it
    must itself be writable and its folder must be writable (the new file is renamed over it). A folder path
    must not be a file and must be writable, or the nearest existing folder above it must be."""
    for path, want_folder in [(p, False) for p in files] + [(p, True) for p in folders]:
        if path is None:
            continue
        if path.exists() and path.is_dir() != want_folder:
            kind = "a file" if want_folder else "a folder"
            raise ModelcostError(f"cannot write {path}: it is {kind}; choose another path")
        if path.exists() and not want_folder and not os.access(path, os.W_OK):
            raise ModelcostError(f"cannot write {path}: the file is read-only; choose another path")
        probe = path if want_folder and path.exists() else path.parent
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
            raise ModelcostError(f"cannot write {path}: {probe} is not a writable folder; choose another path")


def wrote(label: str, path: Path | str, existed: bool, detail: str = "") -> str:
    """The line that says where an output went, and that it replaced the file of an earlier run."""
    notes = [n for n in (detail, "replaced the previous file" if existed else "") if n]
    return f"{label}: {path}" + (f" ({'; '.join(notes)})" if notes else "")


@contextlib.contextmanager
def staged_samples(final: Path | None) -> Iterator[Path | None]:
    """NVML samples are appended while the run goes on. They go to a staged file of the same name in a hidden
    folder beside ``final`` (header written first), which ``publish_samples`` renames over ``final`` when the run
    ends: a re-run replaces the last run's samples instead of appending to them, and a run that fails before its
    outputs are written leaves the old file as it was. The staging folder is removed on the way out."""
    if final is None:
        yield None
        return
    import csv
    import shutil
    import tempfile

    from modelcost.bench.nvml_sampler import CSV_FIELDS

    final.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=final.parent))
    staged = folder / final.name
    try:
        with staged.open("w", newline="", encoding="utf-8") as fh:
            csv.DictWriter(fh, fieldnames=CSV_FIELDS).writeheader()
        yield staged
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def publish_samples(staged: Path | None, final: Path | None) -> str | None:
    """Rename the staged samples over ``final``; the line to print (None when there is nothing to publish)."""
    if staged is None or final is None or not staged.exists():
        return None
    with staged.open(encoding="utf-8") as fh:
        rows = max(0, sum(1 for _ in fh) - 1)
    existed = final.exists()
    os.replace(staged, final)
    what = f"{rows:,} rows" if rows else "header only: no GPU was sampled"
    return wrote("NVML samples", final, existed, what)


def write_outputs(run: RunReport, *, json_path: Path | None, report: bool, out_dir: Path | None,
                  samples_csv: Path | None = None, staged_csv: Path | None = None) -> None:
    """The samples CSV, the JSON report and the report folder, each written atomically; also for an
    interrupted run. Each line says where an output went and whether it replaced an earlier run's file."""
    line = publish_samples(staged_csv, samples_csv)
    if json_path is not None:
        from modelcost.report.json_report import write_json

        existed = json_path.exists()
        write_json(run, json_path)
        typer.echo(wrote("JSON report", json_path, existed))
    if report or out_dir is not None:
        from modelcost import api

        folder = api.write_report(run, str(out_dir) if out_dir else None,
                                  str(samples_csv) if line and samples_csv else None)
        typer.echo(f"report folder: {folder}")
    if line:
        typer.echo(line)


def exit_status(run: RunReport) -> None:
    """130 for an interrupted run (its report is written first); 1 when nothing at all could be measured."""
    if not run.complete:
        raise typer.Exit(130)
    if run.benchmarks and not any(r.status == "ok" for r in run.benchmarks):
        raise ModelcostError("no configuration could be measured (the reasons are listed above)")
