"""The terminal renderer of report blocks (``sections.py``): the third thin renderer beside ``markdown.py`` and
``html.py``. It decides how a block looks in a terminal, never what it says."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from modelcost.report.sections import Banner, Block, Bullets, Heading, Image, Notes, Para, Table

INDENT = "  "


def print_blocks(blocks: list[Block], console: Any) -> None:
    """Print every block; a heading after the first opens with a blank line. Text is printed as written (no
    markup, no emoji codes, no highlighting), so a path or a reason with brackets stays literal."""
    for i, b in enumerate(blocks):
        if isinstance(b, Heading):
            if i:
                console.print()
            console.print(Text(b.text, style="bold"))
        elif isinstance(b, Banner):
            console.print(Text(b.text, style="bold red"))
        elif isinstance(b, Para):
            console.print(Text(b.text, style="bold" if b.strong else ""))
        elif isinstance(b, Bullets):
            for item in b.items:
                _hanging(console, f"{INDENT}- ", item, None)
        elif isinstance(b, Notes):
            for n, item in enumerate(b.items, 1):
                _hanging(console, f"{INDENT}[{n}] ", item, b.max_lines[n - 1] if n <= len(b.max_lines) else None)
        elif isinstance(b, Table):
            console.print(rich_table(b))
        elif isinstance(b, Image):
            continue  # plots live in the report folder


def _hanging(console: Any, head: str, text: str, max_lines: int | None) -> None:
    """``head`` then ``text`` wrapped under itself (a hanging indent), cut to ``max_lines`` lines with '…'."""
    width = max(20, console.width - len(head))
    lines = [line.plain.rstrip() for line in Text(text).wrap(console, width)] or [""]
    if max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    for k, line in enumerate(lines):
        console.print(Text((head if k == 0 else " " * len(head)) + line), soft_wrap=True)


def rich_table(t: Table) -> Any:
    """A compact rich table: no frame, the header underlined, one space between columns; numeric columns
    right-aligned, and they and the first column (which names the row) never wrapped."""
    from rich.table import Table as RichTable

    table = RichTable(box=None, pad_edge=False, collapse_padding=True, header_style="bold underline")
    numeric = t.numeric or [False] * len(t.headers)
    for i, (header, num) in enumerate(zip(t.headers, numeric + [False] * (len(t.headers) - len(numeric)))):
        table.add_column(header, justify="right" if num else "left", no_wrap=num or i == 0)
    for row in t.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table
