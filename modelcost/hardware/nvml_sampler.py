"""The one NVML sampler: a background thread reading the GPU while a benchmark or a ceiling measurement runs.

Every ``interval_s`` (20 ms by default) it reads GPU and memory utilisation, SM and memory clocks, board power,
temperature, memory used and the active clock-throttle reasons. ``stop()`` returns a summary: means, the
throttle reasons seen, and the energy of the span — from the board's energy counter
(``nvmlDeviceGetTotalEnergyConsumption``, millijoules, Volta and newer) when it answers, else by integrating the
power samples over time (trapezoids), and the summary says which. NVML's power reading is itself an average
over up to a second on many boards, so for spans under a few seconds the energy counter is the better figure.

The CSV uses ``nvidia-smi --query-gpu`` field names, in these units: utilization.gpu / utilization.memory in %,
clocks.sm / clocks.mem in MHz, power.draw in W, temperature.gpu in degrees C, memory.used in MiB,
clocks_throttle_reasons.active as nvidia-smi's hex bitmask; timestamp as ``YYYY/MM/DD HH:MM:SS.mmm``.

``NvmlSampler(nvml, handle)`` with ``start()`` / ``stop()`` serves the benchmark runner, which keeps NVML open
for a whole sweep; ``with sampling(index) as s: ...`` then ``s.summary`` opens and shuts NVML around one
measurement (``modelcost gpu --measure``). Without NVML both record nothing.
"""

from __future__ import annotations

import csv
import datetime as _dt
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from modelcost.core.lazy import INSTALL_HINTS
from modelcost.hardware.nvml import THROTTLE_REASONS, nvml_or_none, throttle_names

IDLE = 0x1  # "gpu_idle": the GPU idled between launches; NVML sets it, but it is not a throttle

CSV_FIELDS = (
    "backend", "precision", "batch_size", "timestamp", "index", "utilization.gpu", "utilization.memory",
    "clocks.sm", "clocks.mem", "power.draw", "temperature.gpu", "memory.used", "clocks_throttle_reasons.active",
)

@dataclass
class Sample:
    t: float  # perf_counter seconds
    wall: float  # time.time()
    util_gpu: float | None
    util_mem: float | None
    sm_mhz: float | None
    mem_mhz: float | None
    power_w: float | None
    temp_c: float | None
    mem_used_bytes: int | None
    throttle: int | None


@dataclass
class SamplerSummary:
    samples: int = 0
    duration_s: float = 0.0
    gpu_util_mean: float | None = None
    mem_util_mean: float | None = None
    sm_clock_mhz_min: float | None = None
    sm_clock_mhz_mean: float | None = None
    mem_clock_mhz_mean: float | None = None
    power_w_mean: float | None = None
    temperature_c_max: float | None = None
    memory_used_max_bytes: int | None = None
    energy_j: float | None = None
    energy_source: str = ""  # "nvml energy counter" | "power integration" | ""
    throttle_reasons: list[str] = field(default_factory=list)  # every reason NVML set, gpu_idle included

    @property
    def throttles(self) -> list[str]:
        """The reasons that slowed the clocks: ``throttle_reasons`` without gpu_idle."""
        return [r for r in self.throttle_reasons if r != THROTTLE_REASONS[IDLE]]


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def open_nvml(uuid: str | None = None, index: int = 0) -> tuple[Any, Any] | tuple[None, str]:
    """(pynvml module, device handle) or (None, reason). ``uuid`` ("GPU-...") picks the device torch uses."""
    try:
        import pynvml
    except ImportError:
        return None, f"NVML unavailable ({INSTALL_HINTS['pynvml']})"
    try:
        pynvml.nvmlInit()
        if uuid:
            try:
                return pynvml, pynvml.nvmlDeviceGetHandleByUUID(uuid)
            except Exception:  # noqa: BLE001 - fall back to the index
                pass
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:  # noqa: BLE001 - no driver, no device
        return None, f"NVML unavailable ({exc.__class__.__name__}: {exc})"


def memory_used_bytes(nvml: Any, handle: Any) -> int | None:
    try:
        return int(nvml.nvmlDeviceGetMemoryInfo(handle).used)
    except Exception:  # noqa: BLE001
        return None


def _call(nvml: Any, name: str, *args: Any) -> Any:
    """``nvml.<name>(*args)``, or None when this NVML (or board) does not have or answer it."""
    fn = getattr(nvml, name, None)
    return None if fn is None else nvml_or_none(fn, *args)


class NvmlSampler:
    """``start()`` / ``stop() -> SamplerSummary``; ``rows()`` gives the raw samples for the CSV."""

    def __init__(self, nvml: Any, handle: Any, interval_s: float = 0.02, index: int = 0) -> None:
        self._nvml, self._handle, self._interval, self._index = nvml, handle, interval_s, index
        self._samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._energy0: float | None = None
        self._t0 = 0.0

    def _read(self) -> Sample:
        n, h = self._nvml, self._handle
        util = _call(n, "nvmlDeviceGetUtilizationRates", h)
        power = _call(n, "nvmlDeviceGetPowerUsage", h)
        reasons_fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            n, "nvmlDeviceGetCurrentClocksThrottleReasons", None)
        return Sample(
            t=time.perf_counter(), wall=time.time(),
            util_gpu=None if util is None else float(util.gpu), util_mem=None if util is None else float(util.memory),
            sm_mhz=nvml_or_none(n.nvmlDeviceGetClockInfo, h, n.NVML_CLOCK_SM),
            mem_mhz=nvml_or_none(n.nvmlDeviceGetClockInfo, h, n.NVML_CLOCK_MEM),
            power_w=None if power is None else power / 1000.0,
            temp_c=_call(n, "nvmlDeviceGetTemperature", h, getattr(n, "NVML_TEMPERATURE_GPU", 0)),
            mem_used_bytes=memory_used_bytes(n, h),
            throttle=None if reasons_fn is None else nvml_or_none(reasons_fn, h),
        )

    def _energy_mj(self) -> float | None:
        return _call(self._nvml, "nvmlDeviceGetTotalEnergyConsumption", self._handle)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._samples.append(self._read())
            self._stop.wait(self._interval)

    def start(self) -> None:
        self._samples = []
        self._stop.clear()
        self._t0 = time.perf_counter()
        self._energy0 = self._energy_mj()
        self._thread = threading.Thread(target=self._loop, name="modelcost-nvml", daemon=True)
        self._thread.start()

    def stop(self) -> SamplerSummary:
        energy1 = self._energy_mj()
        t1 = time.perf_counter()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._samples.append(self._read())
        return summarize(self._samples, t1 - self._t0, self._energy0, energy1)

    def rows(self, backend: str, precision: str, batch_size: int) -> list[dict[str, Any]]:
        return [sample_row(s, backend, precision, batch_size, self._index) for s in self._samples]


def summarize(samples: list[Sample], duration_s: float, energy0_mj: float | None,
              energy1_mj: float | None) -> SamplerSummary:
    """Means over the samples; energy from the counter delta when both reads worked, else power integration."""
    out = SamplerSummary(samples=len(samples), duration_s=duration_s)
    if not samples:
        return out
    out.gpu_util_mean = _mean([s.util_gpu for s in samples])
    out.mem_util_mean = _mean([s.util_mem for s in samples])
    sms = [s.sm_mhz for s in samples if s.sm_mhz is not None]
    out.sm_clock_mhz_min = min(sms) if sms else None
    out.sm_clock_mhz_mean = _mean([s.sm_mhz for s in samples])
    out.mem_clock_mhz_mean = _mean([s.mem_mhz for s in samples])
    out.power_w_mean = _mean([s.power_w for s in samples])
    temps = [s.temp_c for s in samples if s.temp_c is not None]
    out.temperature_c_max = max(temps) if temps else None
    used = [s.mem_used_bytes for s in samples if s.mem_used_bytes is not None]
    out.memory_used_max_bytes = max(used) if used else None
    mask = 0
    for s in samples:
        mask |= s.throttle or 0
    out.throttle_reasons = throttle_names(mask)
    if energy0_mj is not None and energy1_mj is not None and energy1_mj >= energy0_mj:
        out.energy_j, out.energy_source = (energy1_mj - energy0_mj) / 1000.0, "nvml energy counter"
    else:
        pts = [(s.t, s.power_w) for s in samples if s.power_w is not None]
        if len(pts) >= 2:
            out.energy_j = sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in zip(pts, pts[1:]))
            out.energy_source = "power integration"
    return out


def sample_row(s: Sample, backend: str, precision: str, batch_size: int, index: int = 0) -> dict[str, Any]:
    stamp = _dt.datetime.fromtimestamp(s.wall).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]

    def fmt(v: float | None, digits: int = 2) -> str:
        return "" if v is None else f"{v:.{digits}f}"

    return {
        "backend": backend, "precision": precision, "batch_size": batch_size, "timestamp": stamp, "index": index,
        "utilization.gpu": fmt(s.util_gpu, 0), "utilization.memory": fmt(s.util_mem, 0),
        "clocks.sm": fmt(s.sm_mhz, 0), "clocks.mem": fmt(s.mem_mhz, 0), "power.draw": fmt(s.power_w),
        "temperature.gpu": fmt(s.temp_c, 0),
        "memory.used": "" if s.mem_used_bytes is None else str(s.mem_used_bytes // (1 << 20)),
        "clocks_throttle_reasons.active": "" if s.throttle is None else f"0x{s.throttle:016X}",
    }


def append_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append rows to ``path``, writing the header when the file is new or empty."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


class sampling:  # lower case: it reads as ``with sampling(index) as s``
    """Open NVML on GPU ``index`` (the device torch calls ``index``), sample while the block runs, shut NVML
    down; ``summary`` is then the SamplerSummary (empty without NVML)."""

    def __init__(self, index: int = 0, interval_s: float = 0.05) -> None:
        self.index, self.interval_s = index, interval_s
        self.summary = SamplerSummary()
        self._nv: Any = None
        self._sampler: NvmlSampler | None = None

    def __enter__(self) -> Self:
        from modelcost.hardware.nvml import _handle, _nvml, _torch_props

        self._nv = _nvml()
        if self._nv is not None:
            handle = nvml_or_none(_handle, self._nv, self.index, _torch_props(self.index))
            if handle is not None:
                self._sampler = NvmlSampler(self._nv, handle, self.interval_s, self.index)
                self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sampler is not None:
            self.summary = self._sampler.stop()
        if self._nv is not None:
            nvml_or_none(self._nv.nvmlShutdown)
