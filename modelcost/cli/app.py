"""The ``modelcost`` typer app. Commands live in sibling modules and register themselves on ``app``."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from modelcost import __version__
from modelcost.core.errors import ModelcostError
from modelcost.core.text import first_line

app = typer.Typer(
    name="modelcost",
    help="What a model costs: exact params / storage / MACs / FLOPs, then measured latency and throughput "
    "across PyTorch, ONNX Runtime and TensorRT, against the GPU's roofline.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> None:
    """One red line on stderr; the caller exits 1."""
    from rich.markup import escape

    from modelcost.report.console import stderr_console

    stderr_console().print(f"[bold red]error:[/] {escape(message)}", markup=True)


def user_errors(fn: F) -> F:
    """Turn ModelcostError into one red line and exit code 1 (no traceback); other exceptions keep theirs. The
    line names the options the error is about by their flags (``cli.flags``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ModelcostError as exc:  # its fields spelled as flags (``cli.flags``, installed below)
            fail(first_line(exc, with_type=False))
            raise typer.Exit(1) from None
        except KeyboardInterrupt:  # Ctrl-C / SIGTERM where the command keeps nothing: one line, 130 / 143
            from modelcost.cli import signals

            fail(f"interrupted ({signals.name()})")
            raise typer.Exit(signals.exit_code()) from None
        finally:
            from modelcost.cli.flags import spell_for
            from modelcost.cli.options import release_out_locks

            release_out_locks()
            spell_for(None)  # the next command in this process (tests, a notebook) spells its own flags

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"modelcost {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """modelcost: what a model costs, counted exactly and measured honestly."""


def _register_commands() -> None:
    # Importing a command module registers its commands on ``app``.
    import importlib

    for name in ("analyze", "bench", "gpu", "decide", "llm", "sweep", "results", "train", "cache", "calibrate"):
        try:
            importlib.import_module(f"modelcost.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"modelcost.cli.{name}":
                raise


_register_commands()


def _spell_fields_as_flags() -> None:
    # A library error names the option it is about by its field; the CLI's words for it are its flags.
    from modelcost.cli.flags import spell_for

    spell_for(None)


_spell_fields_as_flags()


def main() -> None:
    """The ``modelcost`` command: SIGINT / SIGTERM handling first (cli/signals.py), then the app."""
    from modelcost.cli import signals

    signals.install()
    try:
        app()
    except KeyboardInterrupt:
        fail(f"interrupted ({signals.name()})")
        sys.exit(signals.exit_code())
    except SystemExit as exc:
        if signals.received() is not None:  # reports written: skip the seconds torch's teardown takes
            signals.exit_fast()
        if "torch" in sys.modules:  # every output is written: the same fast ending, with the command's code
            signals.exit_fast(_exit_code(exc.code))
        raise


def _exit_code(code: object) -> int:
    """The status ``sys.exit(code)`` would give: None -> 0, an int as is, anything else printed -> 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
