"""The first shared step of every command: a model loaded once, and its static analysis or a note saying why not.

``RunOptions`` is frozen and shared by analyze / bench / recommend / compare; ``load`` takes a path / zoo name /
``file.py:factory``, an ``nn.Module`` (with ``options.example_inputs``) or an ``onnx.ModelProto``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.bench.base import BenchConfig
from modelcost.bench.model import BenchModel
from modelcost.core.errors import ModelcostError
from modelcost.core.types import CostReport
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.shapes import parse_input_specs

Shapes = Iterable[str] | dict[str, tuple[int, ...]] | None


@dataclass(frozen=True)
class RunOptions:
    """What one run does. ``batch_size`` binds the static analysis' batch; ``batch_sizes`` is the benchmark
    sweep (default: ``[batch_size or 1]``)."""

    command: str = ""  # written into the report ("analyze --backends torch-cpu ...")
    batch_size: int | None = None
    batch_sizes: tuple[int, ...] | None = None
    input_shapes: tuple[str, ...] | dict[str, tuple[int, ...]] | None = None  # "x=1x3x224x224" or name -> shape
    trust_pickle: bool = False
    attn_implementation: str | None = None  # a transformers model's attention (loaders/attention.py)
    example_inputs: Any = None  # with an nn.Module source: a tensor, a tuple of tensors or a dict name -> tensor
    static_only: bool = False
    static_required: bool = True  # False: a failed static analysis becomes a note (bench, recommend)
    backends: tuple[str, ...] | None = None  # None: every backend of the device
    precisions: tuple[str, ...] | None = None  # None: each backend's own
    bench: BenchConfig = field(default_factory=BenchConfig)
    target_gpu: str | None = None
    profile_layers: bool = False
    profile_runs: int = 10
    live_bar: bool = False  # the benchmark runner's live progress bar on stderr
    # Issue 9. batch_search: "gpu" (default without --batch-sizes: on a GPU, batch 1 and the batch at which
    # throughput saturates, bench/batch_search.py), "on" (--batch-sizes auto: on any device) or "off".
    batch_search: str = "off"
    # screen: "gpu" (screen when the plan runs on a GPU), "on" or "off" (--no-screen: every config gets the full
    # measurement); bench/screening.py. ``rejects``: a constraint check for screening (recommend).
    screen: str = "gpu"
    rejects: Any = None
    # The pick the finalists are chosen for (runs/finalists.py): results -> decide's Recommendation or None;
    # None: ``decide.recommend.run_pick`` (analyze, bench); recommend passes its constraints and objective
    pick: Any = None
    # Without backends / precisions: False = the registry's default sweep (bench/registry.py), True = every
    # backend at every precision, each measured in full (no screening): --exhaustive
    exhaustive: bool = False
    predict: bool = False  # --predict: predicted latencies from the calibration (run.predictions; issue 28)
    # recommend --predict: (decide.constraints.Constraints, objective); every candidate is predicted first and only
    # those that may still win are measured (runs/predict.prescreen_plan, decide/prescreen.py). None: off.
    prescreen: tuple[Any, str] | None = None

    def load_options(self) -> LoadOptions:
        """``input_shapes``: 'NAME=1x3x224x224' or 'NAME=1x128:int64' strings, or a {name: shape} dict. The
        batch dimension is bound to ``batch_size``, else to the first of ``batch_sizes`` (the static analysis is
        reported at that size; the benchmarks rebind it per size)."""
        shapes = self.input_shapes
        if isinstance(shapes, dict):
            parsed, dtypes = dict(shapes), {}
        else:
            parsed, dtypes = parse_input_specs(shapes)
        batch = self.batch_size or (self.batch_sizes[0] if self.batch_sizes else None)
        return LoadOptions(batch_size=batch, input_shapes=parsed, input_dtypes=dtypes, trust_pickle=self.trust_pickle,
                           attn_implementation=self.attn_implementation)

    def sweep(self) -> list[int]:
        return list(self.batch_sizes or [self.batch_size or 1])


def options_for(batch_size: int | None = None, input_shapes: Shapes = None, trust_pickle: bool = False,
                **kw: Any) -> RunOptions:
    """``RunOptions`` from the library's keyword arguments (``input_shapes``: strings or a {name: shape} dict)."""
    shapes = input_shapes if isinstance(input_shapes, dict) or input_shapes is None else tuple(input_shapes)
    return RunOptions(batch_size=batch_size, input_shapes=shapes, trust_pickle=trust_pickle, **kw)


def load_options(batch_size: int | None = None, input_shapes: Shapes = None, trust_pickle: bool = False) -> Any:
    """The loaders' ``LoadOptions`` for a batch size / input shapes (``NAME=1x3x224x224`` strings or a dict)."""
    return options_for(batch_size, input_shapes, trust_pickle).load_options()


@dataclass
class LoadedModel:
    """A model loaded once: the loader's object (``LoadedTorch`` / ``LoadedOnnx``), its static analysis and its
    benchmark view, each made on first use and kept."""

    source: str  # as the user named it (a label for a model object)
    kind: str  # "pytorch" | "onnx"
    loaded: Any
    name: str
    seed: int = 0
    reloadable: bool = False  # loaded from a path or name, so another process can load it again
    _cost: CostReport | None = None
    _bench: BenchModel | None = None
    _cleanup: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def cost(self) -> CostReport:
        if self._cost is None:
            if self.kind == "onnx":
                from modelcost.analysis.onnx_counter import analyze_onnx

                self._cost = analyze_onnx(self.loaded)
            else:
                from modelcost.analysis.torch_counter import analyze_torch

                self._cost = analyze_torch(self.loaded)
        return self._cost

    def bench_model(self) -> BenchModel:
        if self._bench is None:
            from modelcost.bench.model import from_loaded_torch, from_onnx_path

            if self.kind == "onnx":
                from modelcost.loaders.onnx_loader import bind_inputs

                loaded = self.loaded
                self._bench = from_onnx_path(loaded.path, lambda b: bind_inputs(loaded, b), name=self.name,
                                             source=self.source, seed=self.seed)
            else:
                self._bench = from_loaded_torch(self.loaded, name=self.name, source=self.source, seed=self.seed)
        return self._bench

    def close(self) -> None:
        if self._bench is not None:
            self._bench.close()
        for fn in self._cleanup:
            fn()
        self._cleanup.clear()


def load(source: Any, options: RunOptions | None = None) -> LoadedModel:
    """Load ``source`` once: a model path or name (``model.onnx``, ``file.py:factory``, ``zoo:NAME``, ``.pt2``,
    TorchScript), an ``nn.Module`` (inputs from ``options.example_inputs`` or ``options.input_shapes``) or an
    ``onnx.ModelProto``."""
    from modelcost.loaders import objects
    from modelcost.loaders.base import check_source

    options = options or RunOptions()
    seed = options.bench.seed
    load_opts = options.load_options()
    if isinstance(source, str):
        if check_source(source) == "onnx":  # a typo (zoo:nope) is said before torch is imported
            from modelcost.loaders.onnx_loader import load_onnx

            return LoadedModel(source, "onnx", load_onnx(source, load_opts), Path(source).stem, seed)
        from modelcost.loaders.torch_loader import load_torch

        return LoadedModel(source, "pytorch", load_torch(source, load_opts), _torch_name(source), seed, reloadable=True)
    if objects.is_onnx_proto(source):
        loaded, cleanup = objects.load_onnx_proto(source, load_opts)
        model = LoadedModel(loaded.source, "onnx", loaded, loaded.path.stem, seed)
        model._cleanup.append(cleanup)
        return model
    if objects.is_torch_module(source):
        loaded = objects.load_module(source, options.example_inputs, load_opts)
        return LoadedModel(loaded.source, "pytorch", loaded, loaded.name, seed)
    raise ModelcostError(f"cannot analyze a {type(source).__name__}: give a model path or name, an nn.Module "
                         "(with example inputs) or an onnx.ModelProto")


def _torch_name(source: str) -> str:
    if source.startswith(("zoo:", "torchvision:")):
        return source.split(":", 1)[1]
    return Path(source.split(":")[0]).stem


def static_or_note(model: LoadedModel, notes: list[str], required: bool = False) -> CostReport | None:
    """The static analysis of ``model``; when it fails, raise (``required``) or add a note and return None (a
    benchmark, comparison or recommendation runs without it)."""
    try:
        return model.cost()
    except ModelcostError as exc:
        if required:
            raise
        notes.append(f"static analysis of {model.source} failed: {exc}")
        return None


def analyze_static(source: Any, *, batch_size: int | None = None, input_shapes: Shapes = None,
                   trust_pickle: bool = False, example_inputs: Any = None) -> CostReport:
    """Count parameters, storage, MACs/FLOPs and memory of ``source`` without running it or reading weights.
    ``source``: a model path or name, an ``nn.Module`` (inputs: ``example_inputs`` or ``input_shapes``) or an
    ``onnx.ModelProto``."""
    model = load(source, options_for(batch_size, input_shapes, trust_pickle, example_inputs=example_inputs))
    try:
        return model.cost()
    finally:
        model.close()


def bench_model(source: Any, *, batch_size: int | None = None, input_shapes: Shapes = None,
                trust_pickle: bool = False, seed: int = 0, example_inputs: Any = None) -> BenchModel:
    """Load ``source`` for benchmarking: an ONNX file runs on the ONNX Runtime / TensorRT backends, a PyTorch
    model (instantiated with seeded random weights) on every backend (exported to ONNX when one asks)."""
    options = options_for(batch_size, input_shapes, trust_pickle, example_inputs=example_inputs,
                          bench=BenchConfig(seed=seed))
    model = load(source, options)
    if model._cleanup:  # a ModelProto's temporary file lives as long as the process
        import atexit

        for fn in model._cleanup:
            atexit.register(fn)
    return model.bench_model()
