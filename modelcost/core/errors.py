"""The two exception types modelcost raises.

``ModelcostError`` is the user's problem, said in one actionable line: the CLI prints it in red and exits 1
without a traceback. ``InternalError`` is ours: it keeps its traceback. ``is_out_of_memory`` is the one place
that tells an out-of-memory error from other failures (the bench's ``oom`` status, a sweep config's).
"""

from __future__ import annotations

from collections.abc import Callable


class ModelcostError(Exception):
    """Bad input or a missing dependency; the message is one line that says what to do.

    A message about an option the user set names its field, not its flag: ``fields`` are the RunOptions /
    BenchConfig / TrainConfig / api keyword names it is about, each written ``{name}`` in the message
    (``ModelcostError("{batch_sizes} '0': ...", fields="batch_sizes")``). How an option is spelled is not the
    library's business: ``str()`` spells each field with the spelling the front end installed
    (``spell_fields_with``: the CLI's flag table, ``cli.flags``), by default ``--name-with-dashes``."""

    def __init__(self, message: str = "", *args: object, fields: str | tuple[str, ...] = ()) -> None:
        super().__init__(message, *args)
        self.fields = (fields,) if isinstance(fields, str) else tuple(fields)

    @property
    def field(self) -> str | None:
        """The option the message is about first (None: no option)."""
        return self.fields[0] if self.fields else None

    def said(self, spell: Callable[[str], str]) -> str:
        """The message with each of its fields spelled by ``spell``."""
        text = super().__str__()
        for name in self.fields:
            text = text.replace("{" + name + "}", spell(name))
        return text

    def __str__(self) -> str:
        return self.said(_spelling[0]) if self.fields else super().__str__()

    def __reduce__(self) -> tuple[object, ...]:  # a sweep child's error keeps its fields across the pipe
        return (_rebuild, (type(self), self.args, self.fields))


def _rebuild(cls: type[ModelcostError], args: tuple[object, ...], fields: tuple[str, ...]) -> ModelcostError:
    exc = cls(*args)
    exc.fields = fields
    return exc


def dashed(name: str) -> str:
    """A field's default spelling in a message: batch_sizes -> --batch-sizes."""
    return "--" + name.replace("_", "-")


_spelling: list[Callable[[str], str]] = [dashed]


def spell_fields_with(spell: Callable[[str], str]) -> None:
    """How every ModelcostError spells the fields it names from now on (the CLI installs its flag table)."""
    _spelling[0] = spell


class MissingDependencyError(ModelcostError):
    """An optional package is not installed; the message names what to install."""


class UnboundDimensionError(ModelcostError):
    """A symbolic input dimension has no value: the message names the input, the dim and the option."""


class InternalError(Exception):
    """A bug in modelcost: keeps its traceback."""


class NotEnoughMemoryError(ModelcostError):
    """The work cannot fit in the memory there is (host or device), known before or while trying it."""


# How the libraries we run say "out of memory" when they have no exception type for it (lower case): torch's CPU
# allocator ("DefaultCPUAllocator: can't allocate memory"), CUDA / cuDNN / cuBLAS, ONNX Runtime's arenas
# ("Failed to allocate memory", "BFCArena"), C++ std::bad_alloc (ONNX Runtime, TensorRT).
_OOM_WORDS = ("out of memory", "can't allocate memory", "cannot allocate memory", "failed to allocate memory",
              "not enough memory", "alloc_failed", "bfcarena", "bad_alloc")


def is_out_of_memory_text(text: str) -> bool:
    """Whether an error message says the memory ran out (``_OOM_WORDS``)."""
    low = text.lower()
    return any(word in low for word in _OOM_WORDS)


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from (``raise ... from``, as the loaders wrap a factory's
    error), is an out-of-memory error: a MemoryError (numpy's ``_ArrayMemoryError`` too), a
    ``NotEnoughMemoryError``, a class named ``OutOfMemoryError`` (torch's, CUDA's; told by name so that this
    module needs no torch) or a message in ``_OOM_WORDS``. An exception merely raised while handling an OOM
    (``__context__``) is not one: its own cause may be anything."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, MemoryError | NotEnoughMemoryError):
            return True
        if any(cls.__name__ == "OutOfMemoryError" for cls in type(e).__mro__) or is_out_of_memory_text(str(e)):
            return True
        e = e.__cause__
    return False
