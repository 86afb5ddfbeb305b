"""This machine's GPU from NVML (nvidia-ml-py) and the CUDA device properties, turned into a GpuSpec.

What each figure is:

* name, driver, compute capability, memory size, power limit (enforced, W): NVML.
* SM count and L2 size: ``torch.cuda.get_device_properties`` when torch sees a CUDA device (NVML has no SM
  count); otherwise NVML's CUDA-core count divided by the architecture's cores per SM.
* clocks: base = NVML's default applications SM clock; boost = NVML's customer boost maximum; max = NVML's
  maximum SM clock. Memory: NVML's maximum memory clock and bus width, bandwidth = clock x width x 2 / 8
  (on an H200 NVML reports a 6016-bit bus).
* peaks: for a GPU found in the table (by name), the datasheet's clocks with this device's SM count, so that
  the figures match the datasheet; for any other GPU, its architecture row (by compute capability) with its
  own SM count and NVML boost clock. The spec's ``notes`` say which.

pynvml and torch are imported only when a function here runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from modelcost.core.lazy import INSTALL_HINTS
from modelcost.core.types import GpuSpec
from modelcost.hardware.specs import (
    ARCHITECTURES,
    arch_for,
    bandwidth_gbps,
    find_sku,
    is_geforce_class,
    peaks,
)

# nvml.h nvmlClocksEventReason* bits, named as nvidia-smi names them.
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def throttle_names(mask: int) -> list[str]:
    return [name for bit, name in THROTTLE_REASONS.items() if mask & bit]


@dataclass
class NvmlFacts:
    """What NVML (and torch, where it helps) says about one device; every field may be missing."""

    name: str
    driver: str | None = None
    compute_capability: str | None = None
    sm_count: int | None = None
    cuda_cores: int | None = None
    base_clock_mhz: int | None = None
    boost_clock_mhz: int | None = None
    max_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None
    bus_width_bits: int | None = None
    memory_bytes: int | None = None
    power_limit_w: float | None = None
    l2_cache_bytes: int | None = None
    notes: list[str] = field(default_factory=list)


def nvml_or_none(fn: Any, *args: Any) -> Any:
    """An NVML query that may be unsupported on this board: None instead of an exception."""
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported and friends
        return None


def _nvml() -> Any | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # noqa: BLE001 - no library, no driver, no device
        return None


def no_gpu_reason() -> str:
    """Why there is no NVML GPU here, in a few words."""
    try:
        import pynvml
    except ImportError:
        return f"nvidia-ml-py is not installed ({INSTALL_HINTS['pynvml']})"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001
        return f"NVML did not start ({exc.__class__.__name__}: {exc}); no NVIDIA driver here?"
    try:
        count = pynvml.nvmlDeviceGetCount()
    finally:
        nvml_or_none(pynvml.nvmlShutdown)
    return "NVML sees no NVIDIA GPU" if count == 0 else f"GPU index out of range (NVML sees {count})"


def _torch_props(index: int) -> Any | None:
    try:
        import torch

        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            return None
        return torch.cuda.get_device_properties(index)
    except Exception:  # noqa: BLE001 - no torch / a CPU build is as good as no CUDA here
        return None


def _handle(nv: Any, index: int, props: Any | None) -> Any:
    """NVML handle of the device torch calls ``index`` (by UUID, so CUDA_VISIBLE_DEVICES is respected)."""
    uuid = getattr(props, "uuid", None) if props is not None else None
    if uuid is not None:
        text = str(uuid)
        for candidate in (text if text.startswith("GPU-") else f"GPU-{text}", text):
            handle = nvml_or_none(nv.nvmlDeviceGetHandleByUUID, candidate)
            if handle is not None:
                return handle
    return nv.nvmlDeviceGetHandleByIndex(index)


def read_nvml(index: int = 0) -> NvmlFacts | None:
    """NVML facts of GPU ``index`` (as torch numbers them when torch sees CUDA), or None without a GPU."""
    nv = _nvml()
    if nv is None:
        return None
    try:
        if nv.nvmlDeviceGetCount() <= index:
            return None
        props = _torch_props(index)
        h = _handle(nv, index, props)
        facts = NvmlFacts(name=str(nv.nvmlDeviceGetName(h)))
        facts.driver = nvml_or_none(nv.nvmlSystemGetDriverVersion)
        cc = nvml_or_none(nv.nvmlDeviceGetCudaComputeCapability, h)
        facts.compute_capability = f"{cc[0]}.{cc[1]}" if cc else None
        facts.cuda_cores = nvml_or_none(nv.nvmlDeviceGetNumGpuCores, h)
        facts.base_clock_mhz = nvml_or_none(nv.nvmlDeviceGetDefaultApplicationsClock, h, nv.NVML_CLOCK_SM)
        boost = nv.NVML_CLOCK_ID_CUSTOMER_BOOST_MAX
        facts.boost_clock_mhz = nvml_or_none(nv.nvmlDeviceGetClock, h, nv.NVML_CLOCK_SM, boost)
        facts.max_clock_mhz = nvml_or_none(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM)
        facts.memory_clock_mhz = nvml_or_none(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM)
        facts.bus_width_bits = nvml_or_none(nv.nvmlDeviceGetMemoryBusWidth, h)
        mem = nvml_or_none(nv.nvmlDeviceGetMemoryInfo, h)
        facts.memory_bytes = int(mem.total) if mem is not None else None
        limit_mw = nvml_or_none(nv.nvmlDeviceGetEnforcedPowerLimit, h)
        facts.power_limit_w = limit_mw / 1000 if limit_mw else None
        if props is not None:
            facts.sm_count = int(props.multi_processor_count)
            facts.l2_cache_bytes = int(getattr(props, "L2_cache_size", 0)) or None
            facts.compute_capability = facts.compute_capability or f"{props.major}.{props.minor}"
        return facts
    finally:
        nvml_or_none(nv.nvmlShutdown)


def spec_from_facts(facts: NvmlFacts) -> GpuSpec:
    """A GpuSpec from NVML facts: table clocks for a known SKU, the device's own clocks otherwise."""
    sku = find_sku(facts.name)
    arch = arch_for(facts.compute_capability, facts.name)
    notes = list(facts.notes)
    sm_count = facts.sm_count
    if sm_count is None and facts.cuda_cores and arch is not None:
        sm_count = facts.cuda_cores // arch.cuda_cores_per_sm
        notes.append(f"SM count = NVML CUDA cores {facts.cuda_cores} / {arch.cuda_cores_per_sm} per SM")
    if sm_count is None and sku is not None:
        sm_count = sku.sm_count
        notes.append(f"SM count from the table ({sku.name}); the device did not say")
    if sku is not None:
        boost, tensor, half = sku.boost_clock_mhz, sku.tensor_clock_mhz or sku.boost_clock_mhz, sku.half_rate_fp32_acc
        notes.append(f"matched table entry {sku.name!r}: peaks use its datasheet clocks (boost {boost} MHz for "
                     f"FP64/FP32, {tensor} MHz for tensor ops); {sku.source}")
        if sm_count != sku.sm_count:
            notes.append(f"this device has {sm_count} SMs, the table's {sku.name} {sku.sm_count}: peaks use {sm_count}")
    else:
        boost = facts.boost_clock_mhz or facts.max_clock_mhz or 0
        tensor, half = boost, is_geforce_class(facts.name)
        notes.append(f"not in the table: peaks use the {arch.name + ' ' + arch.chips if arch else 'unknown'} rates "
                     f"with this device's {sm_count} SMs and its NVML boost clock {boost} MHz")
    dense: dict[str, float] = {}
    sparse: dict[str, float] = {}
    if arch is not None and sm_count and boost:
        dense, sparse = peaks(arch, sm_count, boost, tensor, half)
    elif arch is None:
        notes.append(f"compute capability {facts.compute_capability} is not in the architecture table: no peaks")
    bandwidth = None
    if facts.memory_clock_mhz and facts.bus_width_bits:
        bandwidth = bandwidth_gbps(facts.memory_clock_mhz, facts.bus_width_bits)
        notes.append(f"bandwidth = NVML max memory clock {facts.memory_clock_mhz} MHz x {facts.bus_width_bits}-bit bus"
                     f" x 2 / 8 = {bandwidth:.0f} GB/s" + (f" (datasheet {sku.bandwidth_gbps:.0f})" if sku else ""))
    elif sku is not None:
        bandwidth = float(sku.bandwidth_gbps)
        notes.append("bandwidth from the table: NVML did not report memory clock and bus width")
    return GpuSpec(
        name=facts.name,
        architecture=f"{arch.name} {arch.chips}" if arch else "unknown",
        compute_capability=facts.compute_capability,
        sm_count=sm_count,
        cuda_cores_per_sm=arch.cuda_cores_per_sm if arch else None,
        tensor_cores_per_sm=arch.tensor_cores_per_sm if arch else None,
        base_clock_mhz=facts.base_clock_mhz,
        boost_clock_mhz=facts.boost_clock_mhz or (sku.boost_clock_mhz if sku else None),
        max_clock_mhz=facts.max_clock_mhz,
        tensor_clock_mhz=tensor or None,
        memory_bytes=facts.memory_bytes,
        bus_width_bits=facts.bus_width_bits,
        memory_clock_mhz=facts.memory_clock_mhz,
        bandwidth_gbps=bandwidth,
        power_limit_w=facts.power_limit_w,
        driver=facts.driver,
        peak_tflops=dense,
        sparse_peak_tflops=sparse,
        source="nvml",
        l2_cache_bytes=facts.l2_cache_bytes or (int(sku.l2_cache_mb * 2**20) if sku and sku.l2_cache_mb else None),
        notes=notes,
    )


def query_gpu(index: int = 0) -> GpuSpec | None:
    """This machine's GPU ``index`` as a GpuSpec, or None when there is none (``no_gpu_reason`` says why)."""
    facts = read_nvml(index)
    return None if facts is None else spec_from_facts(facts)


__all__ = ["ARCHITECTURES", "NvmlFacts", "no_gpu_reason", "query_gpu", "read_nvml", "spec_from_facts"]
