"""The neutral blocks a report is made of (``sections.py`` builds them; ``markdown.py``, ``html.py`` and
``console_blocks.py`` draw them), with the few helpers every section builder shares. Its own module so that the
section builders (``sections_*.py``) and the one builder that calls them (``sections.build``) do not import each
other. Sees only ``modelcost.core`` types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from modelcost.core.types import ComputeStats, RunReport


@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Para:
    text: str
    strong: bool = False


@dataclass
class Banner:
    """A warning line shown on top (the INCOMPLETE mark)."""

    text: str


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    numeric: list[bool] = field(default_factory=list)  # right-align these columns


@dataclass
class Notes:
    """Numbered notes under a table: ``items[i]`` is note [i+1], which the table's cells name. ``max_lines[i]``:
    the console cuts note i to this many lines (None or no entry: whole); the report files keep every note whole."""

    items: list[str]
    max_lines: list[int | None] = field(default_factory=list)


@dataclass
class Image:
    name: str  # plot name: plots/<name>.png in the folder, embedded in the HTML
    title: str


Block = Heading | Para | Banner | Bullets | Table | Notes | Image

INCOMPLETE = "INCOMPLETE"


def incomplete_text(run: RunReport) -> str:
    return (f"{INCOMPLETE}: the run was interrupted or a backend crashed; this report holds only what finished "
            "before it stopped (see the run notes). Configs that did not run are missing, not zero.")


UNTRACED = "the forward pass failed"  # how analysis.torch_counter starts the reason when it could not trace


def not_counted(compute: ComputeStats) -> str | None:
    """Why a model has no MAC / FLOP counts at all (its forward pass could not be traced), else None. Zeros then
    are not a result: every renderer says "not counted" with this reason instead."""
    if compute.complete:
        return None
    return next((r for r in compute.incomplete_reasons if r.startswith(UNTRACED)), None)


def caveat_blocks(report: Any, *, notes: str, problems: str) -> list[Block]:
    """A report's notes, the values its model asked on meta and its problems (a cost or a training report: both
    carry the three lists), each list under its heading when it has anything."""
    blocks: list[Block] = []
    if report.notes:
        blocks += [Heading(notes, 3), Bullets(list(report.notes))]
    if report.assumptions:
        blocks += [Heading("Values the model asked on meta", 3), Bullets([a.describe() for a in report.assumptions])]
    if report.problems:
        blocks += [Heading(problems, 3), Bullets(list(report.problems))]
    return blocks
