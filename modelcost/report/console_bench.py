"""The terminal table of benchmark results: one table per model, then what was not measured and why, then what
the timings include. Sees only ``modelcost.core`` types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.samples import footnote, marked
from modelcost.core.text import config_label
from modelcost.core.types import BenchResult, DeviceInfo
from modelcost.core.units import binary_bytes, number

_PRECISION_ORDER = {"fp32": 0, "tf32": 1, "bf16": 2, "fp16": 3, "int8": 4, "fp8": 5}


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ips(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def _accuracy(r: BenchResult) -> str:
    a = r.accuracy
    if a is None:
        return "-"
    if a.max_abs_err == 0.0:
        return "exact"
    parts = [f"abs {number(a.max_abs_err, 2)}", f"cos {a.cosine:.6f}"]
    if a.top1_agreement is not None:
        parts.append(f"top1 {a.top1_agreement * 100:.1f}%")
    return " ".join(parts)


def timing_lines(results: Sequence[BenchResult]) -> list[str]:
    """One line per distinct ``timing`` text, naming the backends it applies to."""
    seen: dict[str, list[str]] = {}
    for r in results:
        if r.status == "ok" and r.timing:
            names = seen.setdefault(r.timing, [])
            if r.backend not in names:
                names.append(r.backend)
    return [f"{', '.join(names)}: {text}" for text, names in seen.items()]


def bench_table(results: Sequence[BenchResult], title: str = "benchmarks") -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title, style="table.title"), title_justify="left", show_lines=False)  # no markup, emoji
    for col, justify in (("backend", "left"), ("precision", "left"), ("batch", "right"), ("n", "right"),
                         ("p50 ms", "right"), ("p99 ms", "right"), ("IPS", "right"), ("e2e p50 ms", "right"),
                         ("memory", "right"), ("power W", "right"), ("accuracy vs fp32", "left"), ("status", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    ordered = sorted(results, key=lambda r: (r.backend, _PRECISION_ORDER.get(r.precision, 9), r.batch_size))
    for r in ordered:
        status = Text(r.status) if r.status == "ok" else Text.assemble((r.status, "red"), f": {r.reason or ''}")
        if r.status == "ok" and r.budget_hit:
            status = Text.assemble("ok ", ("(budget hit)", "yellow"))
        if r.status == "ok" and r.unstable:
            status = Text.assemble(("unstable", "bold yellow"), (" (budget hit)" if r.budget_hit else "", "yellow"))
        lat = r.latency_ms
        table.add_row(
            r.backend, r.precision, str(r.batch_size), str(lat.count) if lat else "-",
            marked(lat, "p50") if lat else "-", marked(lat, "p99") if lat else "-",
            _ips(r.throughput_ips), _num(r.e2e_latency_ms.p50 if r.e2e_latency_ms else None),
            binary_bytes(r.gpu_memory_peak_bytes) if r.gpu_memory_peak_bytes is not None else "-",
            _num(r.power_w_mean, 0), _accuracy(r), status,
        )
    return table


def print_benchmarks(results: Sequence[BenchResult], *, title: str = "benchmarks", device: DeviceInfo | None = None,
                     console: Any = None) -> None:
    """Measured configs (and failed / out-of-memory ones) in one table; unavailable ones listed with their
    reason; then what the timings include."""
    from rich.console import Console
    from rich.markup import escape

    console = console or Console(emoji=False)
    measured = [r for r in results if r.status != "unavailable"]
    unavailable = [r for r in results if r.status == "unavailable"]
    if device is not None:
        title = f"{title} on {device.name}"
    if measured:
        console.print(bench_table(measured, title))
    elif results:
        console.print(f"[bold]{escape(title)}[/]: nothing was measured", emoji=False)
    if unavailable:
        by_backend: dict[tuple[str, str], list[str]] = {}
        for r in unavailable:
            by_backend.setdefault((r.backend, r.reason or ""), []).append(r.precision)
        console.print("[bold]not measured[/]:")
        for (backend, reason), precisions in by_backend.items():
            console.print(f"  {backend} ({', '.join(precisions)}): unavailable — {escape(reason)}", highlight=False,
                          emoji=False)
    lines = timing_lines(results)
    if lines:
        console.print("[bold]what the timings include[/] (p50/p99/IPS; IPS = batch / p50):")
        for line in lines:
            console.print(f"  {escape(line)}", highlight=False, emoji=False)
        console.print("  e2e: host wall time from host inputs to host outputs "
                      "(on a GPU: host<->device copies included)", highlight=False)
    unstable = [r for r in results if r.status == "ok" and r.unstable]
    if unstable:
        console.print("[bold yellow]unstable timings[/] (too noisy to decide on; re-run on a quiet machine):")
        for r in unstable:
            console.print(f"  {config_label(r)}: {escape('; '.join(r.unstable))}",
                          highlight=False, emoji=False)
    note = footnote([r.latency_ms for r in measured if r.latency_ms is not None], ("p50", "p99"))
    if note:
        console.print(escape(note), highlight=False)
    if any(r.budget_hit for r in results):
        console.print("[yellow]budget hit[/]: the time budget (--max-time-s) ended the run before the median was "
                      "known to +-1%", highlight=False)
