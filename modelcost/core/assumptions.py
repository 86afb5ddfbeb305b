"""What a count on the meta device assumed when the model asked a tensor's values (``analysis.data_oracle``).

Standard library only. A meta tensor has a shape and no values, so ``.item()``, ``bool(t)``, ``nonzero``, a
boolean mask index, ``.tolist()`` and the like have no answer there; the oracle answers them from a small
real-valued shadow of the tensors that came from the inputs (or from made-up values), and each answer that
depends on values is written down as one ``DataAssumption``. JSON: ``assumptions`` of the static report, of
``training`` and of ``llm`` (docs/REPORT_SCHEMA.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Where the values behind an answer came from (``DataAssumption.basis``):
FROM_INPUTS = "example_inputs"  # the example inputs' values (the seeded ones the benchmark feeds, or given tensors)
MADE_UP = "made_up"  # values the oracle made up: an input without values, or a tensor the model derived
# from its weights (which do not exist on meta); the made-up values are named in ``values_from``


@dataclass
class DataAssumption:
    """One place in the model's code that asked a value on meta, and how it was answered (all calls alike)."""

    op: str  # the aten op that needed values: "aten._local_scalar_dense" (.item(), bool(t)), "aten.nonzero", ...
    asked_at: str  # the model's line that asked: "transformers/masking_utils.py:292 (_ignore_causal_mask_sdpa)"
    basis: str  # FROM_INPUTS | MADE_UP
    values_from: list[str] = field(default_factory=list)  # "input attention_mask", "made up: aten.topk input"
    answer: str = ""  # the first call's answer: "True", "12", "shape (3, 1)"
    calls: int = 1  # how many times this line asked this op on this basis

    def describe(self) -> str:
        """One line for the console and the notes: what was asked, where, and what the answer rests on."""
        source = ", ".join(self.values_from) or "constants"
        times = f" ({self.calls} calls; first answer {self.answer})" if self.calls > 1 else f" (answer {self.answer})"
        basis = "the example inputs' values" if self.basis == FROM_INPUTS else "made-up values"
        return f"{self.op} at {self.asked_at}: answered from {basis} ({source}){times}"


def merge_assumptions(into: list[DataAssumption], more: list[DataAssumption]) -> None:
    """Add ``more`` to ``into``, one entry per (op, line, basis, sources): calls add up."""
    index = {(a.op, a.asked_at, a.basis, tuple(a.values_from)): a for a in into}
    for a in more:
        key = (a.op, a.asked_at, a.basis, tuple(a.values_from))
        if key in index:
            index[key].calls += a.calls
        else:
            copy = DataAssumption(a.op, a.asked_at, a.basis, list(a.values_from), a.answer, a.calls)
            into.append(copy)
            index[key] = copy
