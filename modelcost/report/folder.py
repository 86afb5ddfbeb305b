"""The report folder: ``reports/<model>-<timestamp>/`` (or ``--out DIR``) with

    report.json       the versioned JSON report (report/json_report.py), plus ``recommendation`` /
                      ``comparison`` keys when the run has them
    report.md         Markdown, plots linked from plots/
    report.html       self-contained: plots embedded, no network needed to view it
    benchmarks.csv    one row per benchmarked config
    plots/*.png       the plots the data allows (throughput, latency, roofline, FLOPs/params, memory, speedup)
    <samples>.csv     the NVML samples of the timed runs, when the benchmark wrote them

Every file is written atomically (temporary file, then rename), JSON first. A run that was interrupted
(``RunReport.complete`` False) is still written, marked INCOMPLETE in every file.

The folder may be the user's (``--out DIR``): each file written is recorded in its ``.modelcost-manifest``
(``core.owned``), and a later run replaces only those. When a file modelcost did not write is where one of the
report's files would go, nothing is written and one line says which (``check_folder``; the CLI asks before it
measures anything).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from modelcost.core import owned
from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.errors import ModelcostError
from modelcost.core.text import utc_timestamp
from modelcost.core.types import BenchResult, RunReport
from modelcost.report.atomic import atomic_write_bytes, atomic_write_text
from modelcost.report.json_report import to_plain

DEFAULT_ROOT = Path("reports")
FILES = ("report.json", "benchmarks.csv", "report.md", "report.html")  # besides the plots and the samples copy


def report_files(samples_csv: str | Path | None = None) -> list[str]:
    """Every path (relative to the folder) ``write_report_folder`` may write."""
    from modelcost.report.plots import PLOT_KINDS, PLOT_NAMES

    plots = [f"plots/{name}.{kind}" for name in PLOT_NAMES for kind in PLOT_KINDS]
    return [*FILES, *plots, *([Path(samples_csv).name] if samples_csv is not None else [])]


def check_folder(folder: str | Path, files: list[str]) -> None:
    """Refuse to write into ``folder`` when something modelcost did not write is where one of ``files`` would go:
    it would be replaced. A file of an earlier run is replaced (the manifest records it)."""
    in_the_way = owned.foreign(folder, files)
    if in_the_way:
        were = "was" if len(in_the_way) == 1 else "were"
        raise ModelcostError(
            f"cannot write the report into {folder}: {', '.join(in_the_way)} there {were} not written by modelcost "
            f"and would be replaced (only files recorded in its {owned.MANIFEST} are; a report of a modelcost "
            "before issue 24 has none); move it or choose another --out")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:60] or "model"


def _stamp(created: str) -> str:
    try:
        t = datetime.fromisoformat(created)
    except ValueError:
        t = datetime.fromisoformat(utc_timestamp())
    return t.strftime("%Y%m%d-%H%M%S")


def default_dir(run: RunReport, comparison: Comparison | None = None, root: Path = DEFAULT_ROOT) -> Path:
    """``root/<model>-<timestamp>``, with ``-2``, ``-3`` ... when that folder already exists."""
    if comparison is not None:
        name = f"{comparison.base.name}-vs-{comparison.candidate.name}"
    else:
        name = run.cost.model.name if run.cost is not None else "run"
    base = Path(root) / f"{_slug(name)}-{_stamp(run.created)}"
    path, n = base, 2
    while path.exists():
        path, n = base.with_name(f"{base.name}-{n}"), n + 1
    return path


def _config(r: BenchResult, stat: str = "p50") -> dict[str, Any]:
    lat = getattr(r.latency_ms, stat) if r.latency_ms is not None else None
    return {"backend": r.backend, "precision": r.precision, "batch_size": r.batch_size, f"latency_ms_{stat}": lat,
            "throughput_ips": r.throughput_ips, "role": r.role or None}


def recommendation_to_dict(rec: Recommendation) -> dict[str, Any]:
    """Configs by name and figures, not whole benchmark records (those are in ``benchmarks``)."""
    stat = rec.latency_stat
    return {
        "objective": rec.objective, "latency_stat": stat, "constraints": dict(rec.constraints),
        "best": None if rec.best is None else _config(rec.best, stat), "reasons": list(rec.reasons),
        "failing": list(rec.failing), "pareto": [_config(r, stat) for r in rec.pareto],
        "feasible": [_config(r, stat) for r in rec.feasible], "considered": rec.considered,
        "checks": {label: to_plain(checks) for label, checks in rec.checks}, "skipped": list(rec.skipped),
        "unranked": list(rec.unranked),
        "tie": [_config(r, stat) for r in rec.tie], "tie_rule": rec.tie_rule,
    }


def comparison_to_dict(cmp: Comparison) -> dict[str, Any]:
    d = to_plain(cmp)
    d["accuracy"] = [{"backend": be, **to_plain(a)} for be, a in cmp.accuracy]
    return d


def _roofline_maker(run: RunReport) -> dict[str, tuple[str, Callable[[], bytes | None]]]:
    """The roofline plot of ``report/roofline_plot.py`` (the roofline work), when there is something to plot."""
    gpu = run.gpu
    if gpu is None or not any(r.roofline is not None for r in run.benchmarks):
        return {}
    if importlib.util.find_spec("modelcost.report.roofline_plot") is None:
        return {}

    def draw() -> bytes | None:
        import tempfile

        from modelcost.report.roofline_plot import plot_roofline

        with tempfile.TemporaryDirectory(prefix="modelcost-roofline-") as tmp:
            path = plot_roofline(gpu, run.benchmarks, Path(tmp) / "roofline.png")
            return Path(path).read_bytes() if path is not None and Path(path).is_file() else None

    return {"roofline": ("Roofline: each measured config against the GPU's roofs", draw)}


def write_report_json(run: RunReport, path: str | Path, *, recommendation: Recommendation | None = None,
                      comparison: Comparison | None = None, record_in: Path | None = None) -> Path:
    """The versioned JSON report (report/json_report.py) with the recommendation / comparison: the folder's
    report.json (recorded in the manifest of ``record_in``), and ``recommend --json``."""
    from modelcost.report.json_report import write_json

    sections: dict[str, Any] = {}
    if recommendation is not None:
        sections["recommendation"] = recommendation_to_dict(recommendation)
    if comparison is not None:
        sections["comparison"] = comparison_to_dict(comparison)
    return write_json(run, path, sections, record_in=record_in)


def write_report_folder(run: RunReport, out_dir: str | Path | None = None, samples_csv: str | Path | None = None,
                        *, recommendation: Recommendation | None = None, comparison: Comparison | None = None,
                        root: str | Path = DEFAULT_ROOT, plots: bool = True) -> Path:
    """Write every report file into ``out_dir`` (default ``root/<model>-<timestamp>``); returns the folder.
    ``plots=False`` skips drawing (a quick checkpoint while a long run goes on)."""
    from modelcost.report import csv_report
    from modelcost.report import plots as plotting
    from modelcost.report.html import render_html
    from modelcost.report.markdown import render_markdown

    # The report is of a copy: the caller's RunReport is not changed by writing it.
    missing = samples_csv is not None and not Path(samples_csv).is_file()
    run = dataclasses.replace(
        run, created=run.created or utc_timestamp(),
        complete=run.complete and (comparison is None or comparison.complete),
        notes=[*run.notes, *([f"NVML samples CSV {samples_csv} was not found; not copied"] if missing else [])])
    folder = Path(out_dir) if out_dir is not None else default_dir(run, comparison, Path(root))
    copy = samples_csv if samples_csv is not None and Path(samples_csv).is_file() else None
    if copy is not None and (folder / Path(copy).name).resolve() == Path(copy).resolve():
        copy = None  # the samples were written into the folder itself: nothing to copy
    check_folder(folder, report_files(copy))
    folder.mkdir(parents=True, exist_ok=True)
    write_report_json(run, folder / "report.json", recommendation=recommendation, comparison=comparison,
                      record_in=folder)
    atomic_write_text(folder / "benchmarks.csv", csv_report.render_csv(run), record_in=folder)
    if copy is not None:
        atomic_write_bytes(folder / Path(copy).name, Path(copy).read_bytes(), record_in=folder)
    order, images, notes = plotting.all_plots(run, comparison, extra=_roofline_maker(run)) if plots else ([], {}, [])
    files: dict[str, str] = {}
    for name, (kind, data) in images.items():
        files[name] = f"plots/{name}.{kind}"
        atomic_write_bytes(folder / files[name], data, record_in=folder)
    shown = dataclasses.replace(run, notes=[*run.notes, *notes])
    atomic_write_text(folder / "report.md", render_markdown(shown, order, recommendation, comparison, files),
                      record_in=folder)
    atomic_write_text(folder / "report.html", render_html(shown, images, order, recommendation, comparison),
                      record_in=folder)
    return folder
