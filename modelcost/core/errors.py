"""The two exception types modelcost raises.

``ModelcostError`` is the user's problem, said in one actionable line: the CLI prints it in red and exits 1
without a traceback. ``InternalError`` is ours: it keeps its traceback.
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
