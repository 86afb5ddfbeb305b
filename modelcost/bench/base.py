"""What every backend is and what one benchmark run is asked to do.

A *backend* (``torch-eager``, ``ort-cuda``, ``tensorrt``, ...) knows whether it can run here and how to turn a
model into a *runner* for one precision; a runner makes a *session* for one batch size. A session holds its
inputs on its device and runs one forward per ``run()`` call; the timing loop (``bench.timing``) wraps those
calls in CUDA events or ``perf_counter``. Nothing here imports torch, onnxruntime or tensorrt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from modelcost.bench.model import BenchModel

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "int8", "fp8")
COMPILE_MODES = ("default", "max-autotune")
# torch.compile's graphs across batch sizes: "per-batch" (the default: a static graph per batch size, what a fixed-batch
# deployment runs, faster than the shared one at large batches (BENCHMARKS.md, 'Sixth session')) or "shared" (batch 1
# its own graph, every larger batch one graph with a dynamic batch dimension: one compile fewer per extra batch size)
COMPILE_GRAPHS = ("shared", "per-batch")


def default_cache_dir() -> Path:
    """The ONNX export cache's root: ``modelcost.core.env.cache_root``."""
    from modelcost.core.env import cache_root

    return cache_root()


def option(help: str, *, flag: str | None = None, inverted: bool = False, **bounds: float) -> dict[str, Any]:
    """A BenchConfig field's command-line declaration (its field metadata), the one place a timing option is
    declared: ``help``; ``flag`` (default ``--field-name``, ``cli_option``); ``inverted``: the flag sets the field
    to False (--fresh clears reuse_earlier); ``bounds``: min / max. The CLI builds each option from it
    (cli/timing.py) and hands the values back as BenchConfig fields: a new timing option is this field and its
    use (docs/ARCHITECTURE.md)."""
    return {"option": {"help": help, "flag": flag, "inverted": inverted, "bounds": bounds}}


@dataclass(frozen=True)
class BenchConfig:
    """How long and how carefully to measure. Times are per (backend, precision, batch) config.

    Warm-up runs windows of ``warmup`` iterations until the medians of two successive windows differ by less
    than ``warmup_settle`` (2%) and, on CUDA, ``warmup_min_cuda_s`` has passed, bounded by ``warmup_max_s`` (and
    by ``max_time_s``). The timed run goes on until at least ``min_time_s`` and ``min_iters`` are reached AND the
    95% confidence interval of the median is within
    ``target_rel_ci`` (+-1%) of it; ``max_time_s`` is the budget that stops it regardless (the result then says
    ``budget_hit``)."""

    device: str = "auto"  # "auto" | "cuda" | "cpu": which backends run by default
    warmup: int = field(default=10, metadata=option(  # iterations per warm-up window (and the minimum warm-up)
        "Calls per warm-up window (warm-up runs until two windows agree within 2%).", min=1))
    warmup_settle: float = 0.02
    warmup_max_s: float = 5.0
    # On CUDA, warm up for at least this long: an idle GPU's clocks take a fraction of a second to ramp, and a
    # launch-bound model (batch 1) can settle at the slow clock within two short windows (BENCHMARKS.md, 'Figures
    # that used to live in docstrings').
    warmup_min_cuda_s: float = 1.0
    pin_cpu: bool = True  # GPU configs: time with the process pinned to one CPU (bench.timing.pinned_to_one_cpu)
    min_time_s: float = field(default=1.0, metadata=option("Time each config at least this long (seconds).", min=0))
    min_iters: int = field(default=50, metadata=option("Time each config at least this many calls.", min=1))
    max_time_s: float = field(default=20.0, metadata=option(
        "Time budget per config: stop even if the median is not yet known to +-1%.", min=0.001))
    target_rel_ci: float = 0.01
    e2e_min_iters: int = 10  # host-side end-to-end latency: a shorter loop of the same kind (0: none)
    e2e_min_time_s: float = 0.3  # ... of at least this long (it is a secondary figure: no CI rule)
    e2e_max_s: float = 2.0
    compile_mode: str = field(default="default", metadata=option("torch.compile mode: default or max-autotune."))
    compile_graphs: str = field(default="per-batch", metadata=option(  # COMPILE_GRAPHS
        "torch.compile's graphs across batch sizes: per-batch (the default: a static graph per batch size, what a "
        "fixed-batch deployment runs) or shared (batch 1 its own, every larger batch one graph with a dynamic batch "
        "dimension: one compile fewer per extra batch size, a few percent slower at large batches)."))
    # Cold-cache work in helper processes beside the GPU measurements (bench.compile_ahead, bench.export_ahead);
    # False (--no-background): nothing else of modelcost's runs while a config is timed
    background: bool = field(default=True, metadata=option(
        "On a cold cache, compile torch.compile's graphs and export to ONNX in helper processes while other configs "
        "are measured (off the timing CPU; rows timed beside them say so). --no-background: nothing else of "
        "modelcost's runs while a config is timed, and a cold run takes longer.", flag="--background/--no-background"))
    # A screening run may leave out a config that an earlier run's figures show hopelessly slow
    # (bench.screening_record); False (--fresh): every config is measured in this run
    reuse_earlier: bool = field(default=True, metadata=option(
        "Measure every config in this run. Without it a screening run leaves out a config that a config measured "
        "now beats by more than 2x on latency and throughput against that config's own figures of an earlier run "
        "(same model, GPU, software and settings, within 7 days); the row says so and quotes them.",
        flag="--fresh", inverted=True))
    # The finalists of an analyze / bench / recommend run (runs/finalists.py): the configs the pick is in doubt
    # between are measured again in fresh sessions, interleaved, for the noise between sessions
    finalist_repeats: int = field(default=2, metadata=option(
        "Sessions more for each finalist (the configs the pick is in doubt between), each in a fresh session, "
        "interleaved with the other finalists: the pick then treats differences inside the noise between sessions "
        "as ties. 0: no repeats.", min=0, max=10))
    finalist_share: float = field(default=0.5, metadata=option(
        "Time budget of the finalists' repeats, as a share of the time the sweep took (0.5: at most half as long "
        "again); repeats that would not fit are left out, and the report says so.", min=0, max=10))
    samples_csv: Path | None = None  # NVML samples of every timed run, nvidia-smi field names
    sample_interval_s: float = 0.02
    cache_dir: Path = field(default_factory=default_cache_dir)
    seed: int = 0

    def __post_init__(self) -> None:
        from modelcost.core.errors import ModelcostError

        problem = timing_problem(vars(self))
        if problem:
            raise ModelcostError(problem)


def cli_option(field_name: str) -> str:
    """The command line's option for a BenchConfig field: max_time_s -> --max-time-s."""
    return "--" + field_name.replace("_", "-")


def timing_problem(values: Mapping[str, Any], name: Callable[[str], str] = cli_option) -> str | None:
    """What is wrong with BenchConfig field ``values`` (every field given), or None: the one check of them. Each
    field is called ``name(field)``: the command line's option by default (a sweep plan says its [timing] key)."""
    device, mode, graphs = values["device"], values["compile_mode"], values["compile_graphs"]
    if device not in ("auto", "cuda", "cpu"):
        return f"{name('device')} {device!r}: use cuda, cpu or auto"
    if mode not in COMPILE_MODES:
        return f"{name('compile_mode')} {mode!r}: use one of {', '.join(COMPILE_MODES)}"
    if graphs not in COMPILE_GRAPHS:
        return f"{name('compile_graphs')} {graphs!r}: use one of {', '.join(COMPILE_GRAPHS)}"
    for key, low, strict in (("min_time_s", 0, False), ("max_time_s", 0, True), ("min_iters", 1, False),
                             ("warmup", 1, False), ("finalist_repeats", 0, False), ("finalist_share", 0, False)):
        if values[key] < low or (strict and values[key] == low):
            return f"{name(key)} must be {'>' if strict else '>='} {low}, not {values[key]}"
    if values["max_time_s"] < values["min_time_s"]:
        return f"{name('max_time_s')} {values['max_time_s']} is below {name('min_time_s')} {values['min_time_s']}"
    return None


class OutOfMemory(Exception):
    """A backend ran out of device memory (the sweep of that backend stops at this batch size)."""


class Unavailable(Exception):
    """This backend cannot run this model / precision here; the message is the plain reason."""


class Session(Protocol):
    """One (backend, precision, batch) ready to run. Inputs are already on the device."""

    device: str  # "cuda" | "cpu"
    timing: str  # what one ``run()`` covers, in words
    stream: Any  # torch.cuda.Stream the work is enqueued on (CUDA events are recorded there); None on CPU

    def run(self) -> None:
        """One forward on the resident inputs. On CUDA it may return before the GPU is done."""

    def outputs(self) -> list[np.ndarray]:
        """The outputs of the last ``run()``, copied to the host (float outputs as float32)."""

    def run_e2e(self, host_inputs: Sequence[np.ndarray]) -> None:
        """Host inputs -> device, forward, outputs -> host; returns when the host has them."""

    def memory_peak_bytes(self) -> tuple[int | None, str]:
        """Peak device memory of this config and how it was measured (None where it cannot be)."""

    def close(self) -> None:
        """Free what the session holds."""


class Runner(Protocol):
    """A backend's model prepared for one precision; makes a session per batch size."""

    build_s: float  # time spent preparing the model (shared by every batch size)
    notes: list[str]

    def session(self, batch_size: int, host_inputs: Sequence[np.ndarray]) -> Session: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class BackendInfo:
    """One registry entry: what the backend is, described by data (the runner reads these flags, not the name).
    The backend's module (``module``, whose ``make(entry)`` builds it) is imported only when it is chosen."""

    name: str
    device: str  # "cuda" | "cpu"
    precisions: tuple[str, ...]
    model_kinds: tuple[str, ...]  # "pytorch" and/or "onnx"
    description: str
    module: str  # modelcost.bench.backends.<module>
    # The model kinds ("pytorch" / "onnx") whose FP32 reference outputs this backend computes on its device
    # (bench.reference: every config's accuracy is compared with them); () = never the reference
    reference_for: tuple[str, ...] = ()
    cast: bool = False  # PyTorch: the model and inputs are cast to the precision (fp16 / bf16)
    compile: bool = False  # PyTorch: torch.compile (inductor)
    cudagraph: bool = False  # PyTorch: the forward is captured once and replayed as a CUDA graph
    autocast: bool = False  # PyTorch: fp32 weights under torch.autocast to the precision
    profile: str = ""  # the per-layer profiler that can attribute this backend's time: "torch", "onnx" or none
    # The precisions this backend runs in the default sweep (issue 9: an answer in a minute); () = only when asked
    # for (--backends / --precisions / --exhaustive). The registry says why each row is in or out.
    default: tuple[str, ...] = ()
    # How much machinery a deployment needs: 0 a plain eager model or ORT session, 1 CUDA-graph capture, 2 a compiler
    # or an engine build, 3 both. It breaks a recommendation's ties within measurement noise (decide.ties).
    simplicity: int = 2
    # Likely fastest first: the order a screening sweep measures configs in (bench.screening; only the order
    # depends on it, never a figure). Lower first.
    screen_rank: int = 100
    # (precision, rank): the batch-size search may probe with this backend at these precisions, the lowest rank
    # first of those that can run here (bench.batch_search): cheap to prepare at every batch (no compile, no build)
    probes: tuple[tuple[str, int], ...] = ()
    # What fp32 means on this backend, said in the name of the reference it computes ("TF32 off")
    reference_note: str = ""
    # Builds from the model's own precision: asked for fp32 with an int8 / fp16 model, it is asked for that
    # precision instead (a TensorRT engine of a Q/DQ model needs int8 to build; the interleaved A/B)
    model_precision: bool = False


class Backend(Protocol):
    name: str

    def unavailable_reason(self) -> str | None:
        """None when the backend can run here, else the plain reason (what to install, no CUDA device)."""

    def precision_reason(self, precision: str) -> str | None:
        """None when this precision can run here (e.g. FP8 needs compute capability 8.9+)."""

    def prepare(self, model: BenchModel, precision: str, config: BenchConfig) -> Runner: ...


ProgressHook = Callable[[str], None]
