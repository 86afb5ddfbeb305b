"""The two exception types modelcost raises.

``ModelcostError`` is the user's problem, said in one actionable line: the CLI prints it in red and exits 1
without a traceback. ``InternalError`` is ours: it keeps its traceback. ``is_out_of_memory`` is the one place
that tells an out-of-memory error from other failures (the bench's ``oom`` status, a sweep config's).
"""

from __future__ import annotations


class ModelcostError(Exception):
    """Bad input or a missing dependency; the message is one line that says what to do."""


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
