"""Text helpers every layer shares (standard library only); and plain text from captured output: terminal
colour codes and other control characters removed.

Exporters, compilers and runtimes colour their messages for a terminal (torch.onnx prints
``\\x1b[96mThis is step 1/3\\x1b[0m``); in a JSON, Markdown or HTML report those bytes show up as ``[96m``.
"""

from __future__ import annotations

import re
from typing import Any


# a C++ source location and the template signature after it, as ONNX Runtime's CUDA errors carry them (twice in
# one line: "... Failed to initialize CUDNN Frontend: /onnxruntime_src/.../cudnn_fe_call.cc:117
# std::conditional_t<THRW, void, onnxruntime::common::Status> onnxruntime::CudaCall(ERRTYPE, ...) [with ERRTYPE =
# cudnn_frontend::error_object; ...] CUDNN_FE failure 8: HEURISTIC_QUERY_FAILED ..."): the cause is around it
_NATIVE_FRAME = re.compile(r"/\S+\.(?:cc|cpp|cu|h|hpp):\d+ [^\[\n]*?\[with [^\]\n]*\]\s*")


def first_line(exc: BaseException, limit: int | None = None, *, with_type: bool = True) -> str:
    """'ValueError: the first line of its message' (the class alone when the message is empty); a first line
    that only announces what follows (ends with ':', as torch's "backend='inductor' raised:") takes the next
    non-empty line after it; the message cut to ``limit`` characters when given; ``with_type=False``: the
    message's first line alone (still the class when the message is empty). Terminal colour codes are removed,
    and so are C++ source locations with their template signatures (``_NATIVE_FRAME``)."""
    text = _NATIVE_FRAME.sub("", strip_ansi(str(exc))).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0] if lines else ""
    if line.endswith(":") and len(lines) > 1:
        line = f"{line} {lines[1]}"
    if limit is not None:
        line = line[:limit]
    if not line:
        return exc.__class__.__name__
    return f"{exc.__class__.__name__}: {line}" if with_type else line


def utc_timestamp() -> str:
    """Now, ISO-8601 in UTC to the second: the ``created`` of every report."""
    import datetime as dt

    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def config_label(r: Any) -> str:
    """How a benchmarked config is named everywhere (``BenchResult``): 'ort-cuda fp16 b8', prefixed by the model
    in comparison runs ('base: ort-cuda fp32 b1')."""
    role = getattr(r, "role", "")
    return f"{role + ': ' if role else ''}{r.backend} {r.precision} b{r.batch_size}"


# CSI sequences (colours, cursor moves): ESC [ params intermediates final; OSC sequences (titles, links):
# ESC ] ... BEL or ESC \; other two-byte escapes (ESC followed by one char in @-_)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # keeps tab and newline


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences or control characters (tab and newline kept)."""
    if "\x1b" not in text and "\x9b" not in text and not _CONTROL.search(text):
        return text
    return _CONTROL.sub("", _ANSI.sub("", text))
