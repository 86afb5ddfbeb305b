"""Measured ceilings (``modelcost gpu --measure``): what this GPU really reaches, next to what it could.

* Matmul: one large square matmul per precision on random data (normal floats, uniform int8), FLOPs =
  2 x n^3 per call. fp32 runs with TF32 off, tf32 with it on (``torch.backends.cuda.matmul.fp32_precision``
  "ieee" / "tf32", or the older ``set_float32_matmul_precision``); fp16 / bf16 with ``torch.matmul``; int8
  with ``torch._int_mm`` (int32 accumulate); fp8 (e4m3, compute capability 8.9+) with ``torch._scaled_mm``
  into bf16.
* Copy: a device-to-device copy of a large buffer; bytes = 2 x buffer (every byte read once, written once).
* Timing: CUDA events around blocks of back-to-back calls after a warm-up; the figure is the median block.
* The NVML sampler (``hardware.nvml_sampler.sampling``) runs alongside each measurement and records the SM /
  memory clocks, power and throttle reasons seen, so a low figure can be told apart from a throttled GPU.

Results are cached as JSON per GPU name + driver version under ``$MODELCOST_CACHE_DIR`` (else
``$XDG_CACHE_HOME/modelcost``, else ``~/.cache/modelcost``) in ``ceilings/``; ``refresh=True`` measures again.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelcost.core.atomic import replace_atomically
from modelcost.core.errors import ModelcostError
from modelcost.hardware.tf32 import tf32_mode
from modelcost.core.lazy import require
from modelcost.core.text import first_line, utc_timestamp
from modelcost.core.types import CeilingMeasurement, GpuSpec

SCHEMA = "modelcost.ceilings/1"
MATMUL_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "int8", "fp8")
MATMUL_N = 8192  # 2 x 8192^3 = 1.10 TFLOP per call
COPY_BYTES = 1 << 30  # 1 GiB source + 1 GiB destination


def cache_dir(override: str | Path | None = None) -> Path:
    from modelcost.core.env import cache_root

    return Path(override) if override else cache_root() / "ceilings"


def cache_path(gpu: GpuSpec, directory: str | Path | None = None) -> Path:
    """ceilings/<gpu name>__<driver>.json, both reduced to [a-z0-9._-]."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", gpu.name.lower()).strip("-")
    driver = re.sub(r"[^a-z0-9._-]+", "-", (gpu.driver or "unknown-driver").lower()).strip("-")
    return cache_dir(directory) / f"{slug}__{driver}.json"


def load_cached(gpu: GpuSpec, directory: str | Path | None = None) -> list[CeilingMeasurement] | None:
    """The cached measurements of this GPU + driver, or None (no file, another schema, unreadable)."""
    path = cache_path(gpu, directory)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if doc.get("schema") != SCHEMA or doc.get("gpu") != gpu.name:
        return None
    names = {f.name for f in dataclasses.fields(CeilingMeasurement)}
    return [CeilingMeasurement(**{k: v for k, v in m.items() if k in names}) for m in doc.get("measurements", [])]


def apply_measurements(gpu: GpuSpec, measurements: list[CeilingMeasurement]) -> GpuSpec:
    """Put measurements into ``gpu``: measured_tflops by precision, measured_gbps, the details list."""
    gpu.measurements = list(measurements)
    gpu.measured_tflops = {m.precision: m.value for m in measurements if m.kind == "matmul" and m.value}
    copies = [m.value for m in measurements if m.kind == "copy" and m.value]
    gpu.measured_gbps = copies[0] if copies else None
    return gpu


def with_cached_ceilings(gpu: GpuSpec, directory: str | Path | None = None) -> GpuSpec:
    """``gpu`` with its cached measured ceilings filled in, when there are any (never measures)."""
    cached = load_cached(gpu, directory)
    return apply_measurements(gpu, cached) if cached else gpu


def _save(gpu: GpuSpec, measurements: list[CeilingMeasurement], directory: str | Path | None,
          meta: dict[str, Any]) -> Path:
    """Write the cache atomically (a temporary file beside it, then rename), so a crash leaves no half file."""
    doc = {"schema": SCHEMA, "gpu": gpu.name, "driver": gpu.driver, **meta,
           "measurements": [dataclasses.asdict(m) for m in measurements]}
    path = cache_path(gpu, directory)
    data = (json.dumps(doc, indent=2) + "\n").encode("utf-8")
    if directory is not None:  # a folder of the caller's: not the cache
        return replace_atomically(path, data)
    from modelcost.core import owned
    from modelcost.core.env import cache_root

    return owned.write(cache_root(), path, data)  # recorded, so 'modelcost cache --clear' removes it


def _time_blocks(torch: Any, step: Callable[[], Any], budget_s: float, blocks: int = 7) -> tuple[float, int]:
    """Median milliseconds per call over ``blocks`` timed blocks, and the number of timed calls.

    Warm-up: 3 calls, then one timed call sizes the blocks so that all of them take about ``budget_s``."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    end.synchronize()
    one_ms = max(start.elapsed_time(end), 1e-3)
    per_block = max(1, min(200, int(budget_s * 1e3 / blocks / one_ms)))
    times = []
    for _ in range(blocks):
        start.record()
        for _ in range(per_block):
            step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / per_block)
    return statistics.median(times), blocks * per_block


def _matmul_step(torch: Any, precision: str, n: int, device: Any) -> Callable[[], Any]:
    """A zero-argument callable doing one n x n x n matmul at ``precision`` on random data."""
    gen = torch.Generator(device=device).manual_seed(0)
    if precision in ("fp32", "tf32", "fp16", "bf16"):
        dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        a = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
        b = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
        out = torch.empty(n, n, device=device, dtype=dtype)
        return lambda: torch.matmul(a, b, out=out)
    if precision == "int8":
        a = torch.randint(-128, 128, (n, n), device=device, dtype=torch.int8, generator=gen)
        b = torch.randint(-128, 128, (n, n), device=device, dtype=torch.int8, generator=gen)
        return lambda: torch._int_mm(a, b)
    if precision == "fp8":
        a = torch.randn(n, n, device=device, generator=gen).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=device, generator=gen).to(torch.float8_e4m3fn).t()  # column-major
        one = torch.ones((), device=device, dtype=torch.float32)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    raise ValueError(precision)


def _device(torch: Any, index: int) -> Any:
    return torch.device("cuda", index)


def _sampled(index: int, fn: Callable[[], tuple[float, int]]) -> tuple[tuple[float, int], Any]:
    from modelcost.hardware.nvml_sampler import sampling

    with sampling(index) as sampler:
        result = fn()
    return result, sampler.summary


def _measure_matmul(torch: Any, gpu: GpuSpec, precision: str, index: int, budget_s: float,
                    n: int) -> CeilingMeasurement:
    spec = gpu.peak_tflops.get(precision)
    m = CeilingMeasurement(kind="matmul", precision=precision, value=None, unit="TFLOP/s", spec=spec,
                           shape=f"{n}x{n}x{n}")
    device = _device(torch, index)
    try:
        if precision == "fp8" and torch.cuda.get_device_capability(index) < (8, 9):
            raise ModelcostError("FP8 needs compute capability 8.9 or newer")
        step = _matmul_step(torch, precision, n, device)
        with tf32_mode(precision == "tf32"):
            (median_ms, iters), clocks = _sampled(index, lambda: _time_blocks(torch, step, budget_s))
        m.value = 2 * n**3 / (median_ms * 1e-3) / 1e12
        m.median_ms, m.iterations = median_ms, iters
        _put_clocks(m, clocks)
    except Exception as exc:  # noqa: BLE001 - one precision failing (no fp8 kernel, OOM) must not stop the rest
        m.error = first_line(exc)[:200]
    finally:
        torch.cuda.empty_cache()
    m.fraction_of_spec = m.value / spec if (m.value and spec) else None
    return m


def _measure_copy(torch: Any, gpu: GpuSpec, index: int, budget_s: float) -> CeilingMeasurement:
    free, _ = torch.cuda.mem_get_info(index)
    size = min(COPY_BYTES, int(free * 0.4)) // 4 * 4
    m = CeilingMeasurement(kind="copy", precision="", value=None, unit="GB/s", spec=gpu.bandwidth_gbps,
                           shape=f"{size / 2**30:.2f} GiB")
    try:
        buffers = [torch.randn(size // 4, device=_device(torch, index))]
        buffers.append(torch.empty_like(buffers[0]))

        def step() -> Any:
            return buffers[1].copy_(buffers[0])

        (median_ms, iters), clocks = _sampled(index, lambda: _time_blocks(torch, step, budget_s))
        m.value = 2 * size / (median_ms * 1e-3) / 1e9
        m.median_ms, m.iterations = median_ms, iters
        _put_clocks(m, clocks)
        buffers.clear()
    except Exception as exc:  # noqa: BLE001
        m.error = first_line(exc)[:200]
    finally:
        torch.cuda.empty_cache()
    m.fraction_of_spec = m.value / m.spec if (m.value and m.spec) else None
    return m


def _put_clocks(m: CeilingMeasurement, clocks: Any) -> None:
    """Copy what the NVML sampler saw (a ``hardware.nvml_sampler.SamplerSummary``) onto the measurement."""
    m.sm_clock_mhz_min = clocks.sm_clock_mhz_min
    m.sm_clock_mhz_mean = clocks.sm_clock_mhz_mean
    m.mem_clock_mhz_mean = clocks.mem_clock_mhz_mean
    m.power_w_mean = clocks.power_w_mean
    m.throttle_reasons = clocks.throttles


def measure_ceilings(
    gpu: GpuSpec,
    *,
    index: int = 0,
    refresh: bool = False,
    directory: str | Path | None = None,
    budget_s: float = 3.0,
    n: int = MATMUL_N,
    precisions: tuple[str, ...] = MATMUL_PRECISIONS,
    progress: Callable[[str], None] | None = None,
) -> GpuSpec:
    """Fill ``gpu`` with measured ceilings: from the cache unless ``refresh``, else measured and cached.

    ``budget_s`` is the timed time per measurement (plus warm-up); the whole run takes about
    (len(precisions) + 1) x (budget_s + ~1 s). Raises ModelcostError without a CUDA device."""
    if not refresh:
        cached = load_cached(gpu, directory)
        if cached:
            gpu.notes.append(f"measured ceilings from the cache: {cache_path(gpu, directory)}")
            return apply_measurements(gpu, cached)
    torch = require("torch")
    if not torch.cuda.is_available():
        raise ModelcostError("{measure} needs a CUDA GPU that torch can use (torch.cuda.is_available() is False)",
                             fields="measure")
    t0 = time.perf_counter()
    measurements = []
    for precision in precisions:
        if progress:
            progress(f"matmul {precision}")
        measurements.append(_measure_matmul(torch, gpu, precision, index, budget_s, n))
    if progress:
        progress("device-to-device copy")
    measurements.append(_measure_copy(torch, gpu, index, budget_s))
    meta = {"created": utc_timestamp(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "elapsed_s": round(time.perf_counter() - t0, 2)}
    path = _save(gpu, measurements, directory, meta)
    gpu.notes.append(f"measured ceilings cached in {path} ({meta['elapsed_s']} s)")
    return apply_measurements(gpu, measurements)
