"""Write one benchmark's section of BENCHMARKS.md, leaving the other sections alone."""

from __future__ import annotations

import re
from pathlib import Path


def write_section(bench_md: Path, heading: str, text: str) -> None:
    """Replace the section that starts with ``heading`` (up to the next '## ' heading) by ``text``, or append it."""
    old = bench_md.read_text() if bench_md.exists() else "# Benchmarks\n\n"
    pattern = re.compile(re.escape(heading) + r".*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text + "\n"
    bench_md.write_text(new)
