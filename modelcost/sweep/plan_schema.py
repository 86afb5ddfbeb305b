"""The sweep plan's keys and their types, as strict pydantic models: a string is never taken for a boolean or a
number ("no" is not false), an integer never for a boolean, and a list item is checked like the key. [timing] takes
BenchConfig's fields with BenchConfig's types and [constraints] Constraints' (decide/constraints.py), so a field
added there is a plan key at once; their values are then checked by those classes' own checks (plan.py).

``validate(doc)`` returns the checked ``PlanDoc`` or raises one ModelcostError line naming the plan key.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from modelcost.core.errors import ModelcostError

MAX_TIMEOUT_S = 86400.0  # one config's child process: a day is far beyond any model's load, build and timing
# each config runs on its backend's device; paths are local; a sweep repeats with --repeats, not by finalists
TIMING_LEFT_OUT = ("device", "samples_csv", "cache_dir", "finalist_repeats", "finalist_share")


class _Table(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


Names = Annotated[list[str], Field(min_length=1)]
BatchSizes = Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1)]


class SweepTable(_Table):
    backends: Names | None = None
    precisions: Names | None = None
    batch_sizes: BatchSizes | None = None
    timeout_s: float = Field(900.0, gt=0, le=MAX_TIMEOUT_S)


class ModelTable(_Table):
    source: str = Field(min_length=1)
    name: str | None = Field(None, min_length=1)
    input_shapes: list[str] = []
    backends: Names | None = None
    precisions: Names | None = None
    batch_sizes: BatchSizes | None = None
    trust_pickle: bool = False


def _table_of(cls: type, leave_out: tuple[str, ...], **extra: Any) -> type[_Table]:
    """A table whose keys are the dataclass ``cls``'s fields (but ``leave_out``) with their types; keys not given
    stay unset (``model_dump(exclude_unset=True)`` is what the plan wrote)."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: (hints[f.name], None) for f in dataclasses.fields(cls) if f.name not in leave_out}
    return create_model(f"{cls.__name__}Table", __base__=_Table, **fields, **extra)


def _timing_table() -> type[_Table]:
    from modelcost.bench.base import BenchConfig

    return _table_of(BenchConfig, TIMING_LEFT_OUT)


def _constraints_table() -> type[_Table]:
    from modelcost.decide.constraints import Constraints

    # batch_sizes: the plan's own [sweep] / [[models]] batch sizes say which are measured
    return _table_of(Constraints, ("batch_sizes",), objective=(str, None))


TimingTable = _timing_table()
ConstraintsTable = _constraints_table()


class PlanDoc(_Table):
    sweep: SweepTable = Field(default_factory=SweepTable)
    timing: TimingTable = Field(default_factory=TimingTable)  # type: ignore[valid-type]
    constraints: ConstraintsTable = Field(default_factory=ConstraintsTable)  # type: ignore[valid-type]
    models: list[ModelTable] = Field(min_length=1)


def validate(doc: dict[str, Any]) -> PlanDoc:
    try:
        return PlanDoc.model_validate(doc)
    except ValidationError as exc:
        raise ModelcostError(_one_line(exc.errors(), doc)) from None


# ---------------------------------------------------------------------------------------------------
# pydantic's errors -> one line in the plan's words

_TABLES = {"sweep": SweepTable, "models": ModelTable, "timing": TimingTable, "constraints": ConstraintsTable}
_EXPECTED = {"bool_type": "true or false", "int_type": "an integer", "float_type": "a number",
             "string_type": "a string", "list_type": "a list", "model_type": "a table", "dict_type": "a table"}
_NO_MODELS = "plan: no [[models]]; add at least one, e.g. [[models]] source = \"zoo:resnet50\""


def where(loc: tuple[Any, ...]) -> str:
    """('models', 1, 'trust_pickle') -> '[[models]] #2 trust_pickle'; ('sweep', 'batch_sizes', 0) ->
    '[sweep] batch_sizes item 1'; ('sweep',) -> 'sweep'."""
    if len(loc) == 1:
        return str(loc[0])
    head, rest = (f"[[models]] #{loc[1] + 1}", loc[2:]) if loc[0] == "models" else (f"[{loc[0]}]", loc[1:])
    return " ".join([head] + [f"item {p + 1}" if isinstance(p, int) else str(p) for p in rest])


def given(value: Any) -> str:
    """How a TOML value is named in a message: the string 'no', the integer 5, the boolean true, a list."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value:g}"
    return {list: "a list", dict: "a table"}.get(type(value), f"a {type(value).__name__}")


def _one_line(errors: list[Any], doc: dict[str, Any]) -> str:
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    if unknown:  # every unknown key of the first table that has one, with what that table takes
        parent = unknown[0]["loc"][:-1]
        bad = sorted(str(e["loc"][-1]) for e in unknown if e["loc"][:-1] == parent)
        table = PlanDoc if not parent else _TABLES[parent[0]]
        place = "the plan's top level" if not parent else where(parent) if len(parent) > 1 else f"[{parent[0]}]"
        return (f"plan: unknown key(s) {', '.join(bad)} in {place}; allowed: "
                f"{', '.join(sorted(table.model_fields))}")
    e = errors[0]
    loc, kind, value = tuple(e["loc"]), e["type"], e.get("input")
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    if loc == ("models",):
        if kind == "missing" or (kind == "too_short" and not value):
            return _NO_MODELS
        if isinstance(value, dict):
            return ("plan: models: expected [[models]] tables, one per model; [models] is a single table (write "
                    "[[models]] above each model's keys)")
        return f"plan: models: expected [[models]] tables, one per model, got {given(value)}"
    if loc[0] == "models" and loc[-1] == "source" and kind == "missing":
        return f"plan: {where(loc[:-1])} needs source = \"...\" (any source `analyze` accepts)"
    return f"plan: {where(loc)}: {_what(kind, value, e.get('ctx') or {}, e['msg'])}{more}"


def _what(kind: str, value: Any, ctx: dict[str, Any], msg: str) -> str:
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {given(value)}"
    bound = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", ">="), "less_than_equal": ("le", "<="),
             "less_than": ("lt", "<")}.get(kind)
    if bound:
        return f"must be {bound[1]} {ctx[bound[0]]:g}, got {given(value)}"
    if kind in ("too_short", "string_too_short"):
        return "must not be empty"
    if kind == "finite_number":
        return f"must be a finite number, got {value}"
    return msg
