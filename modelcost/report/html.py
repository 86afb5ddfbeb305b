"""The self-contained HTML report: inline CSS, plots embedded as base64 PNG (or inline SVG), no script, no
network needed to view it."""

from __future__ import annotations

import base64
from html import escape as _html_escape

from modelcost.core.decisions import Comparison, Recommendation
from modelcost.core.text import strip_ansi
from modelcost.core.types import RunReport
from modelcost.report.sections import Banner, Block, Bullets, Heading, Image, Notes, Para, Table, build, report_title

_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #1b1f24; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0 1em; font-size: .88em; }
th, td { border: 1px solid #d0d7de; padding: .25em .6em; vertical-align: top; }
th { background: #f6f8fa; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fbfcfd; }
.banner { background: #fff1e5; border: 2px solid #d1242f; color: #82071e; padding: .8em 1em; font-weight: 600; }
.strong { font-weight: 700; font-size: 1.08em; }
figure { margin: 1em 0 2em; } figure img, figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #57606a; font-size: .9em; }
"""


def escape(text: str) -> str:
    """HTML-escaped, without terminal colour codes (captured exporter output carries them)."""
    return _html_escape(strip_ansi(text))


def _block(b: Block, images: dict[str, tuple[str, bytes]]) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level}>{escape(b.text)}</h{b.level}>"
    if isinstance(b, Banner):
        return f'<div class="banner" role="alert">{escape(b.text)}</div>'
    if isinstance(b, Para):
        return f'<p class="strong">{escape(b.text)}</p>' if b.strong else f"<p>{escape(b.text)}</p>"
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Notes):
        return "<ul>" + "".join(f"<li>[{i}] {escape(n)}</li>" for i, n in enumerate(b.items, 1)) + "</ul>"
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Image):
        return _figure(b, images.get(b.name))
    return ""


def _table(t: Table) -> str:
    numeric = t.numeric or [False] * len(t.headers)
    head = "".join(f"<th>{escape(h)}</th>" for h in t.headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{escape(c)}</td>' if n else f"<td>{escape(c)}</td>"
                         for c, n in zip(row, numeric + [False] * (len(row) - len(numeric)))) + "</tr>"
        for row in t.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(img: Image, data: tuple[str, bytes] | None) -> str:
    if data is None:
        return ""
    kind, payload = data
    if kind == "svg":
        svg = payload.decode("utf-8")
        svg = svg[svg.find("<svg"):] if "<svg" in svg else svg  # drop the XML prolog / doctype
        inner = f'<div class="plot" data-plot="{escape(img.name)}">{svg}</div>'
    else:
        b64 = base64.b64encode(payload).decode("ascii")
        inner = (f'<img class="plot" data-plot="{escape(img.name)}" alt="{escape(img.title)}" '
                 f'src="data:image/png;base64,{b64}">')
    return f"<figure>{inner}<figcaption>{escape(img.title)}</figcaption></figure>"


def render_html(run: RunReport, images: dict[str, tuple[str, bytes]] | None = None,
                plots: list[tuple[str, str]] | None = None, recommendation: Recommendation | None = None,
                comparison: Comparison | None = None) -> str:
    """The whole report as one HTML file. ``images``: plot name -> ("png" | "svg", bytes)."""
    title = report_title(run, comparison) + ("" if run.complete else " (INCOMPLETE)")
    return render_blocks_html(build(run, plots, recommendation, comparison), title, images)


def render_blocks_html(blocks: list[Block], title: str, images: dict[str, tuple[str, bytes]] | None = None) -> str:
    """Any list of report blocks as one self-contained HTML document (the sweep report uses it too)."""
    images = images or {}
    body = "\n".join(_block(b, images) for b in blocks)
    title = escape(title)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<link rel="icon" href="data:,">\n<title>{title}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
