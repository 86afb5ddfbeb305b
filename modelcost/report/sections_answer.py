"""The console answer of a run that benchmarked: what it found (``sections_found.py``), then one line per config
that ran, each reason for not measuring one in full in a numbered note (configs that share a reason share the
note), the backends that cannot run here one line per reason, then what the timings include. Short enough for a
screen: every other figure is in the report folder and the JSON
(``sections_bench.py`` builds those), and the answer says so."""

from __future__ import annotations

from modelcost.core.decisions import Recommendation
from modelcost.core.samples import footnote, marked
from modelcost.core.types import BenchResult, RunReport
from modelcost.core.units import binary_bytes, number
from modelcost.report.blocks import Block, Bullets, Heading, Notes, Para, Table
from modelcost.report.sections_bench import grouped_not_measured
from modelcost.report.sections_found import found_blocks

_ORDER = {"ok": 0, "screened": 1, "failed": 2, "oom": 2}
# a note's lines on the console (the report files keep it whole): a screened row's figures are in the table,
# so its note takes one line; a failure's message may need two
NOTE_LINES = {"screened": 1}
MORE_LINES = 2
BUDGET_HIT = "the time budget (--max-time-s) ended the run before the median was known to +-1%"
ELSEWHERE = ("more figures (n, p90, e2e, power, energy, build time, roofline, per layer) and every note in full: "
             "--report, --json FILE")


def answer_blocks(run: RunReport, recommendation: Recommendation | None = None, *, title: str = "benchmarks",
                  counts: bool = True) -> list[Block]:
    """The found block, the benchmark table with its notes, what the timings include, and where the rest is."""
    blocks = found_blocks(run, recommendation, counts=counts)
    gpu = run.gpu.name if run.gpu is not None and any(r.roofline for r in run.benchmarks) else None
    blocks += table_blocks(run.benchmarks, title=title, device=run.device.name if run.device else None, mfu_on=gpu)
    blocks += timing_blocks(run.benchmarks)
    return blocks + [Para(ELSEWHERE)]


def _accuracy(r: BenchResult) -> str:
    a = r.accuracy
    if a is None:
        return "reference" if r.precision == "fp32" and r.status == "ok" else "-"
    if a.max_abs_err == 0.0:
        return "exact"
    return f"top-1 {a.top1_agreement * 100:.1f}%" if a.top1_agreement is not None else f"cos {a.cosine:.5f}"


def _status_note(r: BenchResult) -> str | None:
    """The note a row points to: why it was not measured in full, why its timings are noisy, or the budget."""
    if r.status != "ok":
        return r.reason or r.status
    if r.unstable:
        return "unstable timings, too noisy to decide on (re-run on a quiet machine): " + "; ".join(r.unstable)
    return BUDGET_HIT if r.budget_hit else None


def _ordered(results: list[BenchResult]) -> list[BenchResult]:
    """Measured rows first, each batch fastest first; then screened, then failed and out-of-memory."""
    def key(r: BenchResult) -> tuple[int, int, float]:
        p50 = r.latency_ms.p50 if r.latency_ms is not None else 0.0
        return (_ORDER.get(r.status, 2), r.batch_size if r.status in ("ok", "screened") else 0, p50)

    return sorted(results, key=key)


def table_blocks(results: list[BenchResult], *, title: str = "benchmarks", device: str | None = None,
                 mfu_on: str | None = None) -> list[Block]:
    """One row per config that ran (screened, failed and out-of-memory ones too), the notes the rows name, the
    configs that did not run a line per reason (``grouped_not_measured``), and the sample mark's note. The number of
    samples is left to the report (the mark says when there are too few). ``mfu_on``: the
    GPU the MFU column is measured against (None: no column)."""
    if not results:
        return []
    singles, grouped = grouped_not_measured(r for r in results if r.status != "ok")
    notes: list[str] = []
    lines: list[int | None] = []
    rows = []
    for r in _ordered([r for r in results if r.status == "ok"] + singles):
        why = _status_note(r)
        if why is not None and why not in notes:
            notes.append(why)
            lines.append(NOTE_LINES.get(r.status, MORE_LINES))
        label = ("budget hit" if r.status == "ok" and not r.unstable else
                 "unstable" if r.status == "ok" else r.status)
        status = f"{label} [{notes.index(why) + 1}]" if why is not None else "ok"
        lat = r.latency_ms
        row = [r.backend, r.precision, str(r.batch_size), marked(lat, "p50") if lat else "-",
               marked(lat, "p99") if lat else "-", number(r.throughput_ips)]
        if mfu_on is not None:
            row.append(f"{r.roofline.mfu * 100:.1f}%" if r.roofline is not None and lat is not None else "-")
        row += [binary_bytes(r.gpu_memory_peak_bytes, 1), _accuracy(r), status]
        rows.append(row)
    headers = ["backend", "prec", "batch", "p50 ms", "p99 ms", "IPS"] + (["MFU"] if mfu_on else [])
    headers += ["memory", "accuracy", "status"]
    numeric = [False, False] + [True] * (len(headers) - 4) + [False, False]
    where = f" on {device}" if device and not title.endswith(device) else ""
    blocks: list[Block] = [Heading(f"{title}{where}"), Table(headers, rows, numeric)]
    if notes:
        blocks.append(Notes(notes, lines))
    if grouped:  # a backend that cannot run here, or configs an earlier run's figures left out: a line per reason
        blocks += [Para("not measured:"), Bullets(grouped)]
    mark = footnote([r.latency_ms for r in results if r.latency_ms is not None], ("p50", "p99"))
    if mark:
        blocks.append(Para(mark))
    if mfu_on:
        blocks.append(Para(f"MFU: achieved FLOP/s over the {mfu_on}'s dense peak at the config's precision."))
    return blocks


def timing_lines(results: list[BenchResult]) -> list[str]:
    """One line per distinct ``timing`` text, naming the backends it applies to."""
    seen: dict[str, list[str]] = {}
    for r in results:
        if r.status == "ok" and r.timing:
            names = seen.setdefault(r.timing, [])
            if r.backend not in names:
                names.append(r.backend)
    return [f"{', '.join(names)}: {text}" for text, names in seen.items()]


def timing_blocks(results: list[BenchResult]) -> list[Block]:
    lines = timing_lines(results)
    if not lines:
        return []
    return [Para("what the timings include (ms per batch; IPS = batch / p50):"), Bullets(lines)]
