"""The typer command-line app: wiring and printing only; the work is in ``modelcost.api``."""

from modelcost.cli.app import app, main

__all__ = ["app", "main"]
