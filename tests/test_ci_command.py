"""CI runs exactly the test command the README gives (install, browser, ruff, pytest): one line, kept identical."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("pip install")]
    assert len(ci) == 1, ".ci/run should hold one 'pip install ... && pytest' command line"
    assert ci[0] in (ROOT / "README.md").read_text().splitlines()
    assert "python3 -m ruff check ." in ci[0] and "python3 -m pytest" in ci[0]
