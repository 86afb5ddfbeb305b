"""Text helpers every layer shares (standard library only)."""

from __future__ import annotations

from typing import Any


def first_line(exc: BaseException, limit: int | None = None) -> str:
    """'ValueError: the first line of its message' (the class alone when the message is empty); the message
    cut to ``limit`` characters when given."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    if limit is not None:
        line = line[:limit]
    return f"{exc.__class__.__name__}: {line}" if line else exc.__class__.__name__


def utc_timestamp() -> str:
    """Now, ISO-8601 in UTC to the second: the ``created`` of every report."""
    import datetime as dt

    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def config_label(r: Any) -> str:
    """How a benchmarked config is named everywhere (``BenchResult``): 'ort-cuda fp16 b8', prefixed by the model
    in comparison runs ('base: ort-cuda fp32 b1')."""
    role = getattr(r, "role", "")
    return f"{role + ': ' if role else ''}{r.backend} {r.precision} b{r.batch_size}"
