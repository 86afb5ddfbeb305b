"""The FP32 reference outputs a sweep compares every config with, and the comparison itself (bench.accuracy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modelcost.bench import registry
from modelcost.bench.accuracy import compare
from modelcost.bench.base import BenchConfig
from modelcost.bench.memory import free_device_memory
from modelcost.bench.model import BenchModel
from modelcost.core.errors import ModelcostError
from modelcost.core.text import first_line
from modelcost.core.types import AccuracyStats
from modelcost.hardware.tf32 import no_cudnn_autotune


@dataclass(frozen=True)
class Compared:
    """One comparison: the figures, or the note saying why there are none; where it ran ("gpu" / "host")."""

    stats: AccuracyStats | None
    note: str | None = None
    on: str = ""


class Reference:
    """The FP32 reference outputs per batch size, computed once per batch size, untimed, by the backend whose
    registry row is the reference for the model's kind on the benchmark device (``registry.reference_backend``:
    torch eager FP32 (TF32 off) for PyTorch models, ONNX Runtime FP32 for ONNX models). cuDNN chooses its
    algorithms by heuristics here: autotuning them (``cudnn.benchmark``) costs seconds (BENCHMARKS.md, 'Figures that
    used to live in docstrings'), for outputs that are computed once; the eager fp32 config autotunes at its own first
    call, like every other config, because ``no_cudnn_autotune`` keys the plans found here apart from its (before
    it did, torch reused this heuristic plan for every fp32 torch config of the same shapes)."""

    def __init__(self, model: BenchModel, device: str, config: BenchConfig) -> None:
        self.model, self.device, self.config = model, device, config
        self.outputs: dict[int, list[Any] | str] = {}
        self._backend: str | None = None

    @property
    def backend(self) -> str:
        """The reference backend (chosen at first use: asking whether a backend runs here imports its module)."""
        if self._backend is None:
            name = registry.reference_backend(self.model.kind, self.device)
            if name is None:
                raise ModelcostError(f"no backend of the registry is the reference for {self.model.kind} models")
            self._backend = name
        return self._backend

    @property
    def name(self) -> str:
        return registry.reference_label(self.backend)

    def get(self, batch_size: int) -> list[Any] | str:
        """The outputs, or the reason there are none."""
        if batch_size not in self.outputs:
            try:
                self.outputs[batch_size] = self._compute(batch_size)
            except Exception as exc:  # noqa: BLE001 - accuracy is then left out, with the reason
                self.outputs[batch_size] = f"no reference outputs ({first_line(exc)})"
                free_device_memory()
        return self.outputs[batch_size]

    def _compute(self, batch_size: int) -> list[Any]:
        arrays, _ = self.model.host_inputs(batch_size)
        runner = registry.get_backend(self.backend).prepare(self.model, "fp32", self.config)
        with no_cudnn_autotune():
            session = runner.session(batch_size, arrays)
            try:
                session.run()
                return session.outputs()
            finally:
                session.close()
                if self.model.kind == "onnx":
                    runner.close()

    def compare(self, session: Any, batch_size: int) -> Compared:
        """The session's last outputs against the reference at ``batch_size``: on the GPU where a CUDA session can
        hand its outputs over there (``device_outputs``), else on the host."""
        ref = self.get(batch_size)
        if isinstance(ref, str):
            return Compared(None, ref)
        outputs, on = None, "host"
        if session.device == "cuda" and hasattr(session, "device_outputs"):
            try:  # compared on the GPU, where they are
                outputs, on = session.device_outputs(), "gpu"
            except Exception:  # noqa: BLE001 - e.g. an ONNX Runtime without DLPack: compared on the host
                outputs, on = None, "host"
        try:
            if outputs is None:
                outputs = session.outputs()
            return Compared(compare(outputs, ref, batch_size=batch_size, reference_name=self.name), on=on)
        except ValueError as exc:
            return Compared(None, f"accuracy not compared: {exc}")

