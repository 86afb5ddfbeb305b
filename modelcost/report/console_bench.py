"""The terminal table of benchmark results: one line per config (unavailable and screened ones too), each reason
for not measuring a config in a numbered note, then what the timings include. A thin renderer of
``sections_answer``'s blocks. Sees only ``modelcost.core`` types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.types import BenchResult, DeviceInfo


def print_benchmarks(results: Sequence[BenchResult], *, title: str = "benchmarks", device: DeviceInfo | None = None,
                     console: Any = None) -> None:
    from rich.console import Console

    from modelcost.report.console_blocks import print_blocks
    from modelcost.report.sections_answer import table_blocks, timing_blocks

    console = console or Console(emoji=False)
    rows = list(results)
    print_blocks(table_blocks(rows, title=title, device=device.name if device else None) + timing_blocks(rows),
                 console)
