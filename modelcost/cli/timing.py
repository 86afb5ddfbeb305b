"""The timing options, declared once: each is a BenchConfig field with ``bench.base.option(...)`` metadata.

``@timing_options()`` adds one typer option per such field to a command and hands the command ``timing``, a
dict of BenchConfig field values (converted here, once: --fresh becomes ``reuse_earlier=False``), which
``BenchConfig(**timing)`` takes. So a new timing option is two edits: its field (with the declaration) and its
use in bench/ (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any

import typer

from modelcost.cli.options import finite


def declared(config_class: type | None = None) -> list[dataclasses.Field]:
    """The BenchConfig fields that declare a command-line option, in the class's order."""
    if config_class is None:
        from modelcost.bench.base import BenchConfig

        config_class = BenchConfig
    return [f for f in dataclasses.fields(config_class) if "option" in f.metadata]


def _param(f: dataclasses.Field, default: Any) -> inspect.Parameter:
    from modelcost.bench.base import cli_option

    spec = f.metadata["option"]
    kind = type(f.default) if f.default is not dataclasses.MISSING else str
    flag = spec["flag"] or cli_option(f.name)
    extra: dict[str, Any] = dict(spec["bounds"])
    if kind is float:
        extra["callback"] = finite
    annotation = Annotated[kind, typer.Option(flag, help=spec["help"], **extra)]
    if spec["inverted"]:
        default = not default
    return inspect.Parameter(_name(f), inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _name(f: dataclasses.Field) -> str:
    """The command's parameter for a field: the flag's name (reuse_earlier is --fresh: ``fresh``)."""
    flag = f.metadata["option"]["flag"]
    return flag.split("/")[0].removeprefix("--").replace("-", "_") if flag else f.name


def timing_options(*, only: Iterable[str] | None = None, exclude: Iterable[str] = (),
                   defaults: dict[str, Any] | None = None, config_class: type | None = None,
                   ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the command takes the declared timing options (``only`` / ``exclude``: field names; its own
    ``defaults`` by field name) and receives their values as ``timing``: {BenchConfig field: value}."""
    fields = [f for f in declared(config_class) if (only is None or f.name in only) and f.name not in exclude]
    defaults = defaults or {}

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn, eval_str=True)
        own = [p for name, p in signature.parameters.items() if name != "timing"]
        params = {f.name: _param(f, defaults.get(f.name, f.default)) for f in fields}

        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> Any:
            timing = {}
            for f in fields:
                value = kwargs.pop(params[f.name].name, params[f.name].default)
                timing[f.name] = not value if f.metadata["option"]["inverted"] else value
            return fn(*args, timing=timing, **kwargs)

        command.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=own + list(params.values()))
        command.__annotations__ = {p.name: p.annotation for p in command.__signature__.parameters.values()}
        return command

    return wrap
