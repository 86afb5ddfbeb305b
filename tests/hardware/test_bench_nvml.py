"""The NVML sampler with a fake NVML: summaries, energy (counter vs power integration), throttle names, CSV."""

from __future__ import annotations

import csv
import time
from types import SimpleNamespace

import pytest

from modelcost.hardware.nvml_sampler import (
    CSV_FIELDS,
    NvmlSampler,
    Sample,
    append_csv,
    sample_row,
    summarize,
    throttle_names,
)


def _sample(t: float, power: float, throttle: int = 0, used: int = 1 << 30) -> Sample:
    return Sample(t=t, wall=1_700_000_000.0 + t, util_gpu=90.0, util_mem=40.0, sm_mhz=1980.0, mem_mhz=2619.0,
                  power_w=power, temp_c=60.0 + t, mem_used_bytes=used, throttle=throttle)


def test_energy_from_the_counter_when_it_answers() -> None:
    s = summarize([_sample(0.0, 100.0), _sample(1.0, 300.0)], 1.0, energy0_mj=5_000.0, energy1_mj=255_000.0)
    # counter delta 250,000 mJ = 250 J; means: power (100 + 300) / 2 = 200 W
    assert s.energy_j == pytest.approx(250.0) and s.energy_source == "nvml energy counter"
    assert s.power_w_mean == 200.0 and s.gpu_util_mean == 90.0 and s.temperature_c_max == 61.0


def test_energy_by_trapezoids_without_the_counter() -> None:
    pts = [_sample(0.0, 100.0), _sample(0.5, 200.0), _sample(1.5, 200.0)]
    s = summarize(pts, 1.5, energy0_mj=None, energy1_mj=None)
    # 0.5 s x (100 + 200) / 2 = 75 J, then 1.0 s x 200 W = 200 J -> 275 J
    assert s.energy_j == pytest.approx(275.0) and s.energy_source == "power integration"


def test_throttle_reasons_are_named_like_nvidia_smi() -> None:
    assert throttle_names(0x4 | 0x40) == ["sw_power_cap", "hw_thermal_slowdown"]
    s = summarize([_sample(0.0, 1.0, 0x1), _sample(1.0, 1.0, 0x4)], 1.0, None, None)
    assert s.throttle_reasons == ["gpu_idle", "sw_power_cap"]


def test_csv_rows_use_nvidia_smi_field_names(tmp_path) -> None:  # noqa: ANN001
    row = sample_row(_sample(0.25, 312.456, 0x4), "ort-cuda", "fp16", 8)
    assert row["power.draw"] == "312.46" and row["clocks.sm"] == "1980" and row["memory.used"] == "1024"
    assert row["clocks_throttle_reasons.active"] == "0x0000000000000004"
    assert row["timestamp"].count("/") == 2 and row["timestamp"].count(":") == 2
    path = tmp_path / "s.csv"
    append_csv(path, [row])
    append_csv(path, [row])  # second call appends without a second header
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 2 and tuple(rows[0]) == CSV_FIELDS and rows[1]["backend"] == "ort-cuda"


class FakeNvml:
    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def __init__(self) -> None:
        self.energy = 0.0
        self.reads = 0  # samples read (one utilization call each)

    def nvmlDeviceGetUtilizationRates(self, h):  # noqa: ANN001, ANN201, N802
        self.reads += 1
        return SimpleNamespace(gpu=75, memory=30)

    def nvmlDeviceGetClockInfo(self, h, which):  # noqa: ANN001, ANN201, N802
        return 1755 if which == 1 else 2619

    def nvmlDeviceGetPowerUsage(self, h):  # noqa: ANN001, ANN201, N802
        return 350_000  # mW

    def nvmlDeviceGetTemperature(self, h, which):  # noqa: ANN001, ANN201, N802
        return 55

    def nvmlDeviceGetMemoryInfo(self, h):  # noqa: ANN001, ANN201, N802
        return SimpleNamespace(used=2 << 30)

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):  # noqa: ANN001, ANN201, N802
        return 0x4

    def nvmlDeviceGetTotalEnergyConsumption(self, h):  # noqa: ANN001, ANN201, N802
        self.energy += 1000.0  # each read 1 J later
        return self.energy


def test_sampler_thread_with_a_fake_nvml() -> None:
    fake = FakeNvml()
    sampler = NvmlSampler(fake, handle=object(), interval_s=0.005)
    sampler.start()
    deadline = time.monotonic() + 30  # the thread's 2 reads, however long a loaded machine makes it wait
    while fake.reads < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    s = sampler.stop()  # + its own read: 3
    assert s.samples >= 3 and s.power_w_mean == 350.0 and s.sm_clock_mhz_mean == 1755.0
    assert s.energy_j == pytest.approx(1.0) and s.throttle_reasons == ["sw_power_cap"]
    assert s.memory_used_max_bytes == 2 << 30
    assert sampler.rows("b", "fp32", 1)[0]["utilization.gpu"] == "75"
