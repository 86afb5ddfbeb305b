"""A sweep plan (TOML) and the configs it expands to.

    [sweep]                      # defaults for every model (all optional)
    backends = ["ort-cuda", "tensorrt"]   # omitted: every backend of the device (CPU-only machine: CPU ones)
    precisions = ["fp32", "fp16"]         # omitted: each backend's own precisions
    batch_sizes = [1, 64]                 # omitted: [1]
    timeout_s = 900                       # one config's limit, seconds, at most a day (its child is killed after it)

    [timing]                     # BenchConfig fields but device: warmup, min_time_s, min_iters, max_time_s, ...
    min_time_s = 0.5

    [constraints]                # what "best config" means in `modelcost results` (decide/recommend.py)
    max_latency_ms = 10          # also min_throughput_ips, max_memory_gb, max_accuracy_drop_pct, latency_stat,
                                 # objective ("throughput" or "latency")

    [[models]]                   # one table per model: any source `analyze` accepts
    source = "zoo:resnet50"      # a relative path (m.onnx, sub/f.py:make) is taken from the plan's folder
    name = "resnet50"            # optional; default from the source
    input_shapes = ["input=1x3x224x224"]   # optional, as --input-shape
    batch_sizes = [1, 8]         # optional: overrides [sweep] for this model (so do backends, precisions)
    trust_pickle = false         # optional: true (a TOML boolean, never a string) unpickles, as --trust-pickle

Every key is checked by its type when the plan is read (``plan_schema``: "no" is not false, 8 is not [8]), then
by the owner of its values (backend and precision names, BenchConfig's timing checks, recommend's constraints);
the first problem is one ModelcostError line naming the key as the plan writes it.

A config is one (model, backend, precision, batch size); a (backend, precision) pair the backend does not
offer is left out of the expansion when precisions come from [sweep], and kept (to be reported unavailable)
when the model names it itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError


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


def parse_plan(text: str, path: str = "") -> Plan:
    """The plan in ``text``, every key checked (``plan_schema``); ``path``: the plan's file, whose folder relative
    sources are taken from (none: they stay as written)."""
    from modelcost.sweep.plan_schema import validate

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelcostError(f"plan{' ' + path if path else ''}: not valid TOML ({exc})") from None
    doc = validate(raw)
    folder = Path(os.path.abspath(path)).parent if path else None
    models = [_model(m, i, folder) for i, m in enumerate(doc.models)]
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        shared = ", ".join(sorted({n for n in names if names.count(n) > 1}))
        raise ModelcostError(f"plan: two models share a name ({shared}); give them name = \"...\"")
    sweep = doc.sweep
    plan = Plan(models=models, backends=_unique(sweep.backends), precisions=_unique(sweep.precisions),
                batch_sizes=_unique(sweep.batch_sizes) or (1,), timeout_s=float(sweep.timeout_s),
                timing=doc.timing.model_dump(exclude_unset=True),
                constraints=doc.constraints.model_dump(exclude_unset=True), text=text, path=path)
    _check_values(plan)
    return plan


def _unique(values: list[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else tuple(dict.fromkeys(values))


def _model(m: Any, i: int, folder: Path | None) -> ModelEntry:
    from modelcost.loaders.base import rebase_source
    from modelcost.loaders.shapes import parse_input_shapes

    # one clear line now for a bad shape, not one per config
    parse_input_shapes(m.input_shapes, option=f"plan: [[models]] #{i + 1} input_shapes")
    src = m.source
    default_name = src.split(":", 1)[1] if src.startswith(("zoo:", "torchvision:")) else Path(src.split(":")[0]).stem
    return ModelEntry(source=rebase_source(src, folder) if folder else src, name=m.name or default_name,
                      input_shapes=_unique(m.input_shapes) or (), backends=_unique(m.backends),
                      precisions=_unique(m.precisions), batch_sizes=_unique(m.batch_sizes),
                      trust_pickle=m.trust_pickle)


def _check_values(plan: Plan) -> None:
    """What the types alone do not say, each by its owner's check: backend and precision names, [timing] by
    BenchConfig's (naming the plan's keys: a key not given is its default), [constraints] by recommend's."""
    import dataclasses

    from modelcost.bench.base import PRECISIONS, BenchConfig, timing_problem
    from modelcost.bench.registry import info
    from modelcost.decide.constraints import Constraints, check_constraints

    places = [("[sweep]", plan)] + [(f"[[models]] #{i + 1}", m) for i, m in enumerate(plan.models)]
    for where, entry in places:
        try:
            for n in entry.backends or ():
                info(n)
        except ModelcostError as exc:
            raise ModelcostError(f"plan: {where} backends: {exc}") from None
        bad = [p for p in entry.precisions or () if p not in PRECISIONS]
        if bad:
            raise ModelcostError(f"plan: {where} precisions: unknown precision(s) {', '.join(bad)}; use "
                                 f"{', '.join(PRECISIONS)}")
    defaults = {f.name: f.default for f in dataclasses.fields(BenchConfig) if f.default is not dataclasses.MISSING}
    problem = timing_problem({**defaults, **plan.timing},
                             name=lambda key: key if key in plan.timing else f"the default {key}")
    if problem:
        raise ModelcostError(f"plan: [timing] {problem}")
    given = dict(plan.constraints)
    objective = given.pop("objective", "throughput")
    try:
        check_constraints(Constraints(**given), objective)
    except ModelcostError as exc:
        raise ModelcostError(f"plan: [constraints] {exc}") from None


def load_plan(path: str | Path) -> Plan:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ModelcostError(f"cannot read the plan {p}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelcostError(f"plan {p}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                             "save it as UTF-8") from None
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
