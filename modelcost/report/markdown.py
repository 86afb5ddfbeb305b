"""The Markdown report: the blocks of ``sections.build`` as GitHub-flavoured Markdown.

Plots are referenced as ``plots/<name>.png`` beside ``report.md`` (the folder writer puts them there).
"""

from __future__ import annotations

from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.text import strip_ansi
from modelcost.core.types import RunReport
from modelcost.report.sections import Banner, Block, Bullets, Heading, Image, Notes, Para, Table, build


def _esc(text: str) -> str:
    """Keep table cells and text literal: escape the characters Markdown would read as markup; terminal colour
    codes in captured text are dropped."""
    text = strip_ansi(text)
    for ch in ("\\", "|", "*", "_", "`", "<", ">"):
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", " ")


def render_blocks(blocks: list[Block], files: dict[str, str] | None = None) -> str:
    """``files``: plot name -> path relative to the report (default plots/<name>.png)."""
    files = files or {}
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {_esc(b.text)}")
        elif isinstance(b, Banner):
            out.append(f"> **{_esc(b.text)}**")
        elif isinstance(b, Para):
            out.append(f"**{_esc(b.text)}**" if b.strong else _esc(b.text))
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {_esc(i)}" for i in b.items))
        elif isinstance(b, Notes):
            out.append("\n".join(f"- [{i}] {_esc(n)}" for i, n in enumerate(b.items, 1)))
        elif isinstance(b, Table):
            out.append(_table(b))
        elif isinstance(b, Image):
            out.append(f"![{_esc(b.title)}]({files.get(b.name, f'plots/{b.name}.png')})")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _table(t: Table) -> str:
    numeric = t.numeric or [False] * len(t.headers)
    lines = ["| " + " | ".join(_esc(h) or " " for h in t.headers) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in t.rows]
    return "\n".join(lines)


def render_markdown(run: RunReport, plots: list[tuple[str, str]] | None = None,
                    recommendation: Recommendation | None = None, comparison: Comparison | None = None,
                    files: dict[str, str] | None = None) -> str:
    """The whole report. ``plots``: (name, title) of the drawn plots; ``files``: where each was saved."""
    return render_blocks(build(run, plots, recommendation, comparison), files)
