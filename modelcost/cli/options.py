"""The CLI's options, each declared once and shared by analyze / bench / recommend / compare / quantize."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator
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
    "--input-shape", "-s", help="NAME=1x3x224x224[:DTYPE]: the shape (and dtype, e.g. input_ids=1x128:int64) of one "
    "input (repeatable).")]
AttnImplementation = Annotated[Optional[str], typer.Option(
    "--attn-implementation", help="A transformers model's attention: eager or sdpa (counted on meta), or another "
    "transformers name for the benchmarks; default: the model's own, sdpa / eager where that cannot be counted.")]
TrustPickle = Annotated[bool, typer.Option(
    "--trust-pickle", help="Allow loading a pickled PyTorch module. Unpickling runs code: only for files you trust.")]
JsonPath = Annotated[Optional[Path], typer.Option(
    "--json", help="Write the versioned JSON report (docs/REPORT_SCHEMA.md) here.")]
Backends = Annotated[Optional[str], typer.Option(
    help="Comma list of backends (see 'modelcost backends'); default: the default sweep, one config per way of "
         "deploying (on the CPU every backend).")]
Precisions = Annotated[Optional[str], typer.Option(
    help="Comma list: fp32,tf32,fp16,bf16,int8,fp8; default: the default sweep's (with --backends: each backend's "
         "own).")]
Exhaustive = Annotated[bool, typer.Option("--exhaustive", help=(
    "Every backend at every precision, each measured in full (no screening), instead of the default sweep."))]
BatchSizes = Annotated[Optional[str], typer.Option("--batch-sizes", help=(
    "Sweep these batch sizes, e.g. 1,8,32,128 (the first also binds a symbolic batch dimension), or 'auto': batch 1 "
    "and the batch at which throughput saturates (the default on a GPU)."))]
BatchList = Annotated[Optional[str], typer.Option("--batch-sizes", help=(
    "Measure these batch sizes, e.g. 1,8,32 (positive integers; this command has no 'auto' batch search)."))]
Screen = Annotated[Optional[bool], typer.Option("--screen/--no-screen", help=(
    "Screen every config with a short measurement and give the full one only to contenders (default: on a GPU); "
    "--no-screen measures every config in full."))]
def finite(value: float | None) -> float | None:
    """Option callback: refuse NaN and infinity, which click's FloatRange lets through (NaN compares false with
    every bound, so ``min=0`` passes it) and which no setting of modelcost means."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


SamplesCsv = Annotated[Optional[Path], typer.Option(
    help="Write the NVML samples of every timed run here (nvidia-smi field names).")]
Device = Annotated[str, typer.Option(help="cuda, cpu or auto (cuda when there is one).")]
TargetGpu = Annotated[Optional[str], typer.Option(
    "--target-gpu", help="Also estimate the lower-bound latency on this GPU (see 'modelcost gpu --list').")]


def _plot_suffix(path: Path | None) -> Path | None:
    """The roofline plot is PNG or SVG by its suffix; anything else would be a PNG under a misleading name."""
    if path is not None and path.suffix.lower() not in (".png", ".svg"):
        raise typer.BadParameter(f"{path}: the plot is written as .png or .svg; name the file so")
    return path


RooflinePlot = Annotated[Optional[Path], typer.Option("--roofline-plot", callback=_plot_suffix,
                                                      help="Write the roofline plot (.png or .svg).")]
Predict = Annotated[bool, typer.Option(
    "--predict", help=("Also predict the latency per backend x precision x batch from the static counts and "
                       "this GPU's calibration ('modelcost calibrate'); with --target-gpu on that GPU too, "
                       "transferred from the nearest calibrated one. Each figure carries its validated error."))]
ProfileLayers = Annotated[bool, typer.Option(
    "--profile-layers", help=(
        "Measure per-layer time (eager PyTorch / ONNX Runtime fp32): where the time goes vs where the FLOPs are."))]
Report = Annotated[bool, typer.Option(
    "--report", help="Write the report folder reports/<model>-<time>/ (JSON, Markdown, HTML with plots, CSV).")]
AllowPartial = Annotated[bool, typer.Option(
    "--allow-partial", help="Exit 0 even when some ops could not be counted (the totals are then lower bounds, "
    "marked with ≥); without it such a partial result exits with code 3.")]
OutDir = Annotated[Optional[Path], typer.Option("--out", help=(
    "Write the report folder here (implies --report). Only files modelcost wrote there are replaced; a file of "
    "yours at a report file's name is refused, never overwritten."))]


def command_line(command: str) -> str:
    """The report's ``command``, the one format every command writes: the command and its arguments as typed
    after ``modelcost`` ("analyze model.onnx --static"). Called in-process (typer's CliRunner, ``app([...])``),
    the process's arguments are another program's: only the command name is written."""
    args = sys.argv[2:] if len(sys.argv) > 1 and sys.argv[1] == command else []
    return " ".join([command, *args])


def check_writable(files: tuple[Path | None, ...] = (), folders: tuple[Path | None, ...] = ()) -> None:
    """Refuse an output path that cannot be written before anything is measured, so no result is lost to it.
    A file path must not be a folder; an existing file is replaced (atomically, when the run writes it), so it
    must itself be writable and its folder must be writable (the new file is renamed over it). A folder path
    must not be a file and must be writable, or the nearest existing folder above it must be."""
    for path, want_folder in [(p, False) for p in files] + [(p, True) for p in folders]:
        if path is None:
            continue
        try:
            _check_writable(path, want_folder)
        except OSError as exc:  # a name too long for the file system, a component that is not a folder, ...
            reason = exc.strerror or str(exc)
            raise ModelcostError(f"cannot write {str(path)[:200]}: {reason}; choose another path") from None


def _check_writable(path: Path, want_folder: bool) -> None:
    """One output path of ``check_writable`` (OSError passes up: the caller words it)."""
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


def check_out(out: Path | None, samples_csv: Path | None = None, *, files: list[str] | None = None) -> None:
    """Refuse an --out folder where the report would replace a file modelcost did not write, before anything is
    measured (``report.folder.check_folder``). ``files``: what the command writes there (default: the report
    folder's files, with the copy of ``samples_csv``: ``report.folder.report_files``)."""
    if out is None:
        return
    from modelcost.report.folder import check_folder, report_files

    check_folder(out, report_files(samples_csv) if files is None else files)


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

    from modelcost.hardware.nvml_sampler import CSV_FIELDS

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


def lock_out(folder: Path | None) -> None:
    """Refuse a second run writing the same --out folder while this one lives: an exclusive ``flock`` on the
    folder itself (no lock file in it), held until the process ends. A folder made here and left empty (a run
    that failed before writing) is removed at exit."""
    if folder is None:
        return
    import os

    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise ModelcostError(f"cannot write {folder}: {exc.strerror}; choose another --out") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ModelcostError(f"{folder} is being written by another modelcost run; wait for it to finish or choose "
                             "another --out") from None
    _HELD.append(fd)
    if made:
        from modelcost.cli.signals import at_exit

        at_exit(lambda: _remove_if_empty(folder))


_HELD: list[int] = []  # descriptors of the locked --out folders (held until the command ends)


def release_out_locks() -> None:
    """Drop the --out locks when a command ends (the CLI's wrapper calls it): a process that runs several
    commands (tests through CliRunner, a notebook) can write the same folder again."""
    import os

    while _HELD:
        try:
            os.close(_HELD.pop())
        except OSError:
            pass


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()  # only succeeds when empty
    except OSError:
        pass


@contextlib.contextmanager
def interruptible(run: RunReport, write: Callable[[], None]) -> Iterator[None]:
    """Around a command's work (``cli.runner.run_command``): Ctrl-C or SIGTERM at any point (loading, counting,
    benchmarking) marks ``run`` incomplete, ``write``s what it holds and exits 130 / 143. If the main thread is
    stuck in native code, the signal watcher does the same from its thread (cli/signals.py)."""
    from modelcost.cli import signals

    def flush() -> None:
        mark_interrupted(run)
        write()

    signals.on_stuck(flush)
    try:
        yield
    except KeyboardInterrupt:
        signals.on_stuck(None)
        mark_interrupted(run)
        _stderr_line(f"[yellow]interrupted[/] ({signals.name()}): writing what was measured, marked incomplete")
        write()
        raise typer.Exit(signals.exit_code()) from None


def mark_interrupted(run: RunReport) -> None:
    """The run stopped on a signal: ``run.interrupted_by`` names it (the CLI knows which; the library said
    'the user (Ctrl-C)')."""
    from modelcost.cli import signals

    if run.interrupted_by != signals.name():
        run.mark_interrupted(signals.name())


def _stderr_line(markup: str) -> None:
    from modelcost.report.console import stderr_console

    stderr_console().print(markup)
