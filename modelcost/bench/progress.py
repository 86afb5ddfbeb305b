"""A rich progress bar on stderr while the benchmarks run (transient: it disappears when they are done)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress_bar(total: int) -> Iterator[Callable[[str, int], None]]:
    """Yields ``advance(label, steps)``: show ``label`` and move the bar ``steps`` configs on."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(file=sys.stderr, emoji=False)
    columns = (TextColumn("[bold]benchmarking[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("", total=total)

        def advance(label: str, steps: int = 1) -> None:
            progress.update(task, description=label, advance=steps)

        yield advance
