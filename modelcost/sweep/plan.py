"""A sweep plan (TOML) and the configs it expands to.

    [sweep]                      # defaults for every model (all optional)
    backends = ["ort-cuda", "tensorrt"]   # omitted: every backend of the device (CPU-only machine: CPU ones)
    precisions = ["fp32", "fp16"]         # omitted: each backend's own precisions
    batch_sizes = [1, 64]                 # omitted: [1]
    timeout_s = 900                       # one config's limit (its child process is killed after it)

    [timing]                     # BenchConfig fields: warmup, min_time_s, min_iters, max_time_s, ...
    min_time_s = 0.5

    [constraints]                # what "best config" means in `modelcost results` (decide/recommend.py)
    max_latency_ms = 10

    [[models]]                   # one table per model: any source `analyze` accepts
    source = "zoo:resnet50"
    name = "resnet50"            # optional; default from the source
    input_shapes = ["input=1x3x224x224"]   # optional, as --input-shape
    batch_sizes = [1, 8]         # optional: overrides [sweep] for this model (so do backends, precisions)

A config is one (model, backend, precision, batch size); a (backend, precision) pair the backend does not
offer is left out of the expansion when precisions come from [sweep], and kept (to be reported unavailable)
when the model names it itself.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError

_SWEEP_KEYS = {"backends", "precisions", "batch_sizes", "timeout_s"}
_MODEL_KEYS = {"source", "name", "input_shapes", "backends", "precisions", "batch_sizes", "trust_pickle"}
_CONSTRAINT_KEYS = {"max_latency_ms", "min_throughput_ips", "max_memory_gb", "max_accuracy_drop_pct", "latency_stat",
                    "objective"}


@dataclass(frozen=True)
class ModelEntry:
    source: str
    name: str
    input_shapes: tuple[str, ...] = ()
    backends: tuple[str, ...] | None = None
    precisions: tuple[str, ...] | None = None
    batch_sizes: tuple[int, ...] | None = None
    trust_pickle: bool = False


@dataclass
class Plan:
    models: list[ModelEntry]
    backends: tuple[str, ...] | None = None
    precisions: tuple[str, ...] | None = None
    batch_sizes: tuple[int, ...] = (1,)
    timeout_s: float = 900.0
    timing: dict[str, Any] = field(default_factory=dict)
    constraints: dict[str, Any] = field(default_factory=dict)
    text: str = ""  # the TOML as read (stored with the run)
    path: str = ""


@dataclass(frozen=True)
class Config:
    """One (model, backend, precision, batch size) to measure; ``model_hash`` identifies the model's content."""

    model_name: str
    source: str
    model_hash: str
    backend: str
    precision: str
    batch_size: int
    device: str  # "cuda" | "cpu": the backend's device
    input_shapes: tuple[str, ...] = ()
    trust_pickle: bool = False

    @property
    def key(self) -> str:
        """Stable identity of the config (not of where it ran): model content + shapes + backend/precision/batch."""
        ident = [self.model_hash, list(self.input_shapes), self.backend, self.precision, self.batch_size]
        return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:20]

    @property
    def label(self) -> str:
        return f"{self.model_name} {self.backend} {self.precision} b{self.batch_size}"

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["input_shapes"] = list(self.input_shapes)
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Config:
        return Config(**{**d, "input_shapes": tuple(d.get("input_shapes", ()))})


def _tuple(value: Any, what: str, kind: type) -> tuple[Any, ...] | None:
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, kind) and not isinstance(v, bool) for v in values):
        raise ModelcostError(f"plan: {what} must be a non-empty list of {kind.__name__}")
    if kind is int and any(v < 1 for v in values):
        raise ModelcostError(f"plan: {what} must be positive")
    return tuple(dict.fromkeys(values))


def _unknown(table: dict[str, Any], allowed: set[str], where: str) -> None:
    bad = sorted(set(table) - allowed)
    if bad:
        raise ModelcostError(f"plan: unknown key(s) {', '.join(bad)} in {where}; allowed: {', '.join(sorted(allowed))}")


def _model(d: Any, i: int) -> ModelEntry:
    if not isinstance(d, dict) or not isinstance(d.get("source"), str) or not d["source"]:
        raise ModelcostError(f"plan: [[models]] #{i + 1} needs source = \"...\" (any source `analyze` accepts)")
    _unknown(d, _MODEL_KEYS, f"[[models]] #{i + 1}")
    src = d["source"]
    from modelcost.loaders.shapes import parse_input_shapes

    parse_input_shapes(d.get("input_shapes"))  # one clear line now for a bad shape, not one per config
    default_name = src.split(":", 1)[1] if src.startswith(("zoo:", "torchvision:")) else Path(src.split(":")[0]).stem
    return ModelEntry(source=src, name=str(d.get("name") or default_name),
                      input_shapes=_tuple(d.get("input_shapes"), "input_shapes", str) or (),
                      backends=_tuple(d.get("backends"), "backends", str),
                      precisions=_tuple(d.get("precisions"), "precisions", str),
                      batch_sizes=_tuple(d.get("batch_sizes"), "batch_sizes", int),
                      trust_pickle=bool(d.get("trust_pickle", False)))


def parse_plan(text: str, path: str = "") -> Plan:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelcostError(f"plan {path or ''}: not valid TOML ({exc})") from None
    _unknown(doc, {"sweep", "timing", "constraints", "models"}, "the plan's top level")
    sweep, timing, constraints = doc.get("sweep", {}), doc.get("timing", {}), doc.get("constraints", {})
    _unknown(sweep, _SWEEP_KEYS, "[sweep]")
    _unknown(constraints, _CONSTRAINT_KEYS, "[constraints]")
    from modelcost.bench.base import BenchConfig

    fields = set(BenchConfig.__dataclass_fields__) - {"samples_csv", "cache_dir"}
    _unknown(timing, fields, "[timing]")
    models = [_model(m, i) for i, m in enumerate(doc.get("models", []))]
    if not models:
        raise ModelcostError("plan: no [[models]]; add at least one, e.g. [[models]] source = \"zoo:resnet50\"")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        shared = ", ".join(sorted({n for n in names if names.count(n) > 1}))
        raise ModelcostError(f"plan: two models share a name ({shared}); give them name = \"...\"")
    plan = Plan(models=models, backends=_tuple(sweep.get("backends"), "backends", str),
                precisions=_tuple(sweep.get("precisions"), "precisions", str),
                batch_sizes=_tuple(sweep.get("batch_sizes"), "batch_sizes", int) or (1,),
                timeout_s=float(sweep.get("timeout_s", 900.0)), timing=dict(timing), constraints=dict(constraints),
                text=text, path=path)
    BenchConfig(**plan.timing)  # refuse bad timing options now, not in every child
    _check_names(plan)
    return plan


def _check_names(plan: Plan) -> None:
    from modelcost.bench.base import PRECISIONS
    from modelcost.bench.registry import info

    for names in [plan.backends or ()] + [m.backends or () for m in plan.models]:
        for n in names:
            info(n)
    for names in [plan.precisions or ()] + [m.precisions or () for m in plan.models]:
        bad = [p for p in names if p not in PRECISIONS]
        if bad:
            raise ModelcostError(f"plan: unknown precision(s) {', '.join(bad)}; use {', '.join(PRECISIONS)}")


def load_plan(path: str | Path) -> Plan:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelcostError(f"cannot read the plan {p}: {exc.strerror or exc}") from None
    return parse_plan(text, str(p))


def expand(plan: Plan, device: str, model_hashes: dict[str, str]) -> list[Config]:
    """Every config of the plan, in plan order (model, backend, precision, batch). ``device``: the backends'
    device when the plan names none ("cuda" or "cpu"); ``model_hashes``: source -> content hash."""
    from modelcost.bench.registry import BACKENDS, default_backends

    out: list[Config] = []
    for m in plan.models:
        backends = m.backends or plan.backends or tuple(default_backends(device))
        explicit = m.precisions is not None
        for b in backends:
            entry = BACKENDS[b]
            wanted = m.precisions or plan.precisions or entry.precisions
            precisions = wanted if explicit else tuple(p for p in wanted if p in entry.precisions)
            for p in precisions:
                for bs in m.batch_sizes or plan.batch_sizes:
                    out.append(Config(m.name, m.source, model_hashes[m.source], b, p, bs, entry.device,
                                      m.input_shapes, m.trust_pickle))
    return out
