"""A predicted latency (--predict, analysis/predict.py): its own module, so that ``core.types`` and
``core.training`` both import it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LatencyPrediction:
    """A latency predicted from the static counts and a GPU's calibration (--predict, analysis/predict.py),
    with the error the validation table publishes for it, and the measurement of the same config if there is
    one."""

    gpu: str  # the GPU predicted for
    backend: str
    precision: str
    batch_size: int
    latency_ms: float  # (compute_ms + overhead_ms) x residual_factor
    compute_ms: float  # the kernel model's layer time (each layer: max of compute and memory time)
    overhead_ms: float  # the kernel model's launches / graph replay / gaps between kernels
    kernels: int  # kernels one forward becomes under this backend's fusion
    calibrated_on: str  # the GPU whose calibration was used
    transferred: bool = False  # True: calibrated_on is another GPU, scaled by the spec ratios
    expected_error_pct: float | None = None  # median |pred - meas| / meas of the validation; None: unknown
    expected_error_p90_pct: float | None = None
    error_basis: str = ""  # where the expected error comes from, or "error unknown: ..."
    expected_low_pct: float | None = None  # % of the validation's cases predicted below their measurement
    calibration_features: list[str] = field(default_factory=list)  # the calibration's optional mechanisms
    # % of the layers' kernel time whose efficiency came from a shape class, attention key length or head size the
    # calibration did not measure (the nearest measured one stood in): the expected error does not cover it.
    # None: not judged (generation and training predictions)
    uncalibrated_pct: float | None = None
    # "host": the kernel model has the host issue the forward slower than its kernels run; "device": the rest
    # (analysis/predict.bound_of; "" where not judged: generation, training). Its residual is fitted per bound.
    bound: str = ""
    # the backend's measured residual (analysis/predict_residual.py): how much slower held-out models ran than the
    # kernel model predicted, by the median; 1.0 and "" where none applies (generation, training)
    residual_factor: float = 1.0
    residual_fit: str = ""  # the id of the residual's fit (its validation rows name it)
    # the host's price per aten call was pooled over this many stored calibrations of calibrated_on's GPU kind
    # (analysis/predict_host.py); 0: the calibration's own price
    host_pooled_from: int = 0
    measured_ms: float | None = None  # the run's median latency of the same config, when it was measured
    error_pct: float | None = None  # (predicted - measured) / measured x 100, when measured
    # the nodes the measurement ran on the CPU, by op type (BenchResult.extra.cpu_nodes: ort-cuda without a CUDA
    # kernel for them): the measured figure holds CPU time that no prediction prices; None: none
    measured_cpu_nodes: dict[str, int] | None = None
    # how much a measurement of the same configs moved from one machine of this GPU kind to another, for this
    # prediction's bound (median and p90 of |second / first - 1| x 100, benchmarks/measure_repeat.py): no prediction
    # can be held closer than its measurement repeats. None: not measured for this GPU and bound
    measured_repeat_pct: float | None = None
    measured_repeat_p90_pct: float | None = None
    notes: list[str] = field(default_factory=list)
