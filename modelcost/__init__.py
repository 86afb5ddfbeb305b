"""modelcost: what a model costs, counted exactly and measured honestly."""

__version__ = "0.1.0"
