"""The typer command-line app: wiring and printing only; the work is in ``modelcost.api``.

``main`` installs the SIGINT / SIGTERM handling (cli/signals.py) before anything heavy is imported, so an
interrupt during start-up is one line and exit 130 / 143, never a traceback. ``app`` is imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    from modelcost.cli import signals

    signals.install()
    try:
        from modelcost.cli.app import main as run
    except KeyboardInterrupt:
        import sys

        sys.stderr.write(f"error: interrupted ({signals.name()}) while starting; nothing was run\n")
        sys.exit(signals.exit_code())
    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from modelcost.cli.app import app

        return app
    raise AttributeError(f"module 'modelcost.cli' has no attribute {name!r}")
