"""``modelcost cache``: where the cache folder is, what each part holds and how large; ``--clear`` empties it.
Wiring and printing only; the work is in ``modelcost.bench.cache``."""

from __future__ import annotations

from typing import Annotated

import typer

from modelcost.cli.app import app, user_errors

SHOWN = 10  # files left alone named one by one; the rest are counted


@app.command("cache")
@user_errors
def cache(
    clear: Annotated[bool, typer.Option("--clear", help="Remove everything modelcost cached (ONNX exports, fp16 / "
                                        "INT8 copies, TensorRT engines, measured GPU ceilings): only the files it "
                                        "recorded writing; every other file in the folder, at any depth, is left "
                                        "alone.")] = False,
) -> None:
    """Where modelcost keeps ONNX exports, fp16 / INT8 copies, TensorRT engines and measured GPU ceilings
    ($MODELCOST_CACHE_DIR, else $XDG_CACHE_HOME/modelcost, else ~/.cache/modelcost), and how large each is;
    files modelcost did not write are named and left alone."""
    from rich.markup import escape
    from rich.table import Table

    from modelcost.bench.cache import cache_usage, clear_cache
    from modelcost.core.units import binary_bytes
    from modelcost.report.console import stdout_console

    console = stdout_console(160, highlight=False)
    usage = clear_cache() if clear else cache_usage()
    where = escape(str(usage.directory))
    if not usage.entries:
        console.print(f"cache: {where} holds nothing modelcost wrote")
    elif clear:
        console.print(f"cache: removed {binary_bytes(usage.size_bytes)} in {usage.files} files from {where} "
                      f"({', '.join(e.name for e in usage.entries)})")
    else:
        table = Table(title=f"cache: {where}", title_justify="left")
        for col, justify in (("entry", "left"), ("holds", "left"), ("files", "right"), ("size", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for e in usage.entries:
            table.add_row(e.name, e.what, f"{e.files:,}", binary_bytes(e.size_bytes))
        table.add_row("total", "", f"{usage.files:,}", binary_bytes(usage.size_bytes))
        console.print(table)
        console.print("'modelcost cache --clear' empties it")
    if usage.not_removed:
        console.print(f"could not remove: {escape(_names(usage.not_removed))}")
    if usage.others:
        console.print(f"left alone (not written by modelcost): {escape(_names(usage.others))}")


def _names(paths: list[str]) -> str:
    more = len(paths) - SHOWN
    return ", ".join(paths[:SHOWN]) + (f" and {more:,} more" if more > 0 else "")
