"""Plain text from captured output: terminal colour codes and other control characters removed.

Exporters, compilers and runtimes colour their messages for a terminal (torch.onnx prints
``\\x1b[96mThis is step 1/3\\x1b[0m``); in a JSON, Markdown or HTML report those bytes show up as ``[96m``.
"""

from __future__ import annotations

import re

# CSI sequences (colours, cursor moves): ESC [ params intermediates final; OSC sequences (titles, links):
# ESC ] ... BEL or ESC \; other two-byte escapes (ESC followed by one char in @-_)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # keeps tab and newline


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences or control characters (tab and newline kept)."""
    if "\x1b" not in text and "\x9b" not in text and not _CONTROL.search(text):
        return text
    return _CONTROL.sub("", _ANSI.sub("", text))
