"""The GPU table against NVIDIA's datasheets (within 2%), name matching, and the NVML -> GpuSpec rules.

Each datasheet test says where its figures come from. Where the search of public copies of the datasheet
found the figure, the comment says "datasheet"; figures written from memory say so.
"""

from __future__ import annotations

import pytest

from modelcost.core.errors import ModelcostError
from modelcost.hardware.nvml import NvmlFacts, spec_from_facts, throttle_names
from modelcost.hardware.specs import (
    ARCHITECTURES,
    SKUS,
    bandwidth_gbps,
    find_sku,
    normalise_name,
    peaks,
    spec_from_table,
)


def close(got: float, want: float, tol: float = 0.02) -> bool:
    return abs(got - want) <= tol * want


def check(
    name: str, figures: dict[str, float], bandwidth: float | None = None, sparse: dict[str, float] | None = None
) -> None:
    spec = spec_from_table(name)
    for key, want in figures.items():
        got = spec.peak_tflops[key]
        assert close(got, want), f"{name} {key}: {got:.2f} vs datasheet {want}"
    for key, want in (sparse or {}).items():
        assert close(spec.sparse_peak_tflops[key], want), f"{name} sparse {key}"
    if bandwidth is not None:
        assert close(spec.bandwidth_gbps, bandwidth)


def test_v100_sxm2() -> None:
    # NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2): FP64 7.8, FP32 15.7, Tensor (FP16) 125 TFLOPS,
    # 900 GB/s HBM2. Derivation: 80 SMs x 128 FLOP/clk x 1530 MHz = 15.67 TFLOPS; x 1024 (8 TCs x 64 FMA x 2)
    # = 125.3; FP64 80 x 64 x 1530 = 7.83. (Figures from memory; the 125 TFLOPS is on developer.nvidia.com
    # "Programming Tensor Cores in CUDA 9".) Volta has no 2:4 sparsity.
    check("V100 SXM2", {"fp64": 7.8, "fp32": 15.7, "fp16": 125.0}, bandwidth=900)
    assert spec_from_table("V100 SXM2").sparse_peak_tflops == {}


def test_t4() -> None:
    # NVIDIA T4 Tensor Core GPU datasheet: FP32 8.1 TFLOPS, mixed precision FP16/FP32 65 TFLOPS, INT8 130 TOPS,
    # INT4 260 TOPS, 320 GB/s GDDR6. 40 SMs x 1590 MHz: 40 x 128 x 1.59 = 8.14; x 1024 = 65.1; x 2048 = 130.3.
    check("T4", {"fp32": 8.1, "fp16": 65.0, "int8": 130.0, "int4": 260.0}, bandwidth=320)


def test_a100_sxm() -> None:
    # NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): FP64 9.7,
    # FP64 Tensor 19.5, FP32 19.5, TF32 156 | 312*, BF16/FP16 312 | 624*, INT8 624 | 1248* TOPS, 80GB SXM
    # 2039 GB/s. 108 SMs x 1410 MHz: TF32 108 x 1024 x 1.41 = 155.9; BF16 x 2048 = 311.9. (* sparse)
    check("A100 SXM", {"fp64": 9.7, "fp64_tensor": 19.5, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312,
                       "int8": 624}, bandwidth=2039, sparse={"tf32": 312, "bf16": 624, "int8": 1248})


def test_a10() -> None:
    # NVIDIA A10 Tensor Core GPU datasheet: FP32 31.2 TF, TF32 62.5 | 125*, BF16/FP16 125 | 250*,
    # INT8 250 | 500* TOPS, INT4 500 | 1000*, 600 GB/s. 72 SMs x 1695 MHz x 256 = 31.24 (from memory;
    # the 1695 MHz boost / 600 GB/s / 72 SMs are in public spec listings).
    check("A10", {"fp32": 31.2, "tf32": 62.5, "bf16": 125, "fp16": 125, "int8": 250, "int4": 500}, bandwidth=600)


def test_l4() -> None:
    # NVIDIA L4 Tensor Core GPU datasheet: FP32 30.3 TF, TF32 120* TF, FP16/BF16 242* TF, FP8 485* TF,
    # INT8 485* TOPS (* with sparsity; dense = half), 300 GB/s. 58 SMs x 2040 MHz: 58 x 256 x 2.04 = 30.29;
    # FP16 58 x 1024 x 2.04 = 121.2 = 242.3 sparse / 2.
    check("L4", {"fp32": 30.3, "tf32": 60, "fp16": 121, "bf16": 121, "fp8": 242.5, "int8": 242.5}, bandwidth=300,
          sparse={"bf16": 242, "fp8": 485, "int8": 485})


def test_l40s() -> None:
    # NVIDIA L40S GPU datasheet: FP32 91.6, TF32 183 | 366*, BF16/FP16 362.05 | 733*, FP8 733 | 1466*,
    # 864 GB/s. 142 SMs x 2520 MHz: 142 x 256 x 2.52 = 91.6; TF32 x 512 = 183.2; BF16 x 1024 = 366.4
    # (1.2% above the datasheet's 362.05, which matches 2490 MHz; its TF32 and FP8 figures match 2520 MHz).
    check("L40S", {"fp32": 91.6, "tf32": 183, "bf16": 362.05, "fp16": 362.05, "fp8": 733}, bandwidth=864,
          sparse={"tf32": 366, "fp8": 1466})


def test_rtx_4090_half_rate_fp32_accumulate() -> None:
    # NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4090: FP32 82.6; FP16 tensor 330.3 with FP16
    # accumulate, 165.2 with FP32 accumulate; FP8 660.6 (FP16 acc) / 330.3 (FP32 acc); TF32 82.6;
    # INT8 660.6 TOPS; 1008 GB/s. 128 SMs x 2520 MHz: 128 x 1024 x 2.52 = 330.3 at full rate, half = 165.2.
    check("RTX 4090", {"fp32": 82.6, "tf32": 82.6, "fp16": 165.2, "bf16": 165.2, "fp16_acc16": 330.3,
                       "fp8": 330.3, "fp8_acc16": 660.6, "int8": 660.6}, bandwidth=1008)


def test_h100_sxm_uses_1830_mhz_for_tensor_peaks() -> None:
    # NVIDIA H100 Tensor Core GPU datasheet / Hopper whitepaper (H100 SXM5): FP64 34 (33.5), FP64 tensor 67,
    # FP32 67, TF32 494.7 | 989.4*, BF16/FP16 989.4 | 1978.9*, FP8 1978.9 | 3957.8*, INT8 1978.9* TOPS,
    # 3.35 TB/s. 989.4 = 132 SMs x 4096 FLOP/clk x 1830 MHz (not the 1980 MHz max boost, which would give
    # 1070.5); FP32 66.9 = 132 x 256 x 1980 MHz.
    check("H100 SXM", {"fp64": 33.5, "fp64_tensor": 66.9, "fp32": 66.9, "tf32": 494.7, "bf16": 989.4,
                       "fp16": 989.4, "fp8": 1978.9, "int8": 1978.9}, bandwidth=3350,
          sparse={"bf16": 1978.9, "fp8": 3957.8})
    spec = spec_from_table("H100 SXM")
    assert spec.peak_tflops["bf16"] == pytest.approx(132 * 4096 * 1830e6 / 1e12)  # 989.43
    assert spec.tensor_clock_mhz == 1830 and spec.boost_clock_mhz == 1980


def test_h100_pcie() -> None:
    # NVIDIA H100 datasheet (PCIe): FP64 26, FP64 tensor 51, FP32 51, TF32 756*, BF16/FP16 1513*, FP8 3026*,
    # INT8 3026* TOPS (* sparse; dense half), 2 TB/s. 114 SMs: FP32 114 x 256 x 1755 MHz = 51.2;
    # BF16 114 x 4096 x 1620 MHz = 756.4.
    check("H100 PCIe", {"fp64": 26, "fp32": 51, "tf32": 378, "bf16": 756.5, "fp8": 1513, "int8": 1513},
          bandwidth=2000)


def test_h200() -> None:
    # NVIDIA H200 Tensor Core GPU datasheet (SXM): same compute as H100 SXM (FP8 3958* TFLOPS, BF16 1979*,
    # FP64 34, FP64 tensor 67), 141 GB HBM3e at 4.8 TB/s. The table keeps NVML's 6016-bit bus width, so its
    # memory clock is 4.8e12 x 8 / (6016 x 2) = 3191 MHz.
    check("H200", {"fp64": 33.5, "fp64_tensor": 66.9, "bf16": 989.4, "fp8": 1978.9}, bandwidth=4800,
          sparse={"fp8": 3958, "bf16": 1979})
    spec = spec_from_table("H200")
    assert spec.bus_width_bits == 6016
    assert bandwidth_gbps(spec.memory_clock_mhz, 6016) == pytest.approx(4800, rel=0.001)


def test_b200() -> None:
    # NVIDIA HGX B200 specifications (per GPU): FP4 18 | 9 PFLOPS (sparse | dense), FP8 9 | 4.5, INT8 9 | 4.5
    # POPS, FP16/BF16 4.5 | 2.25 PFLOPS, FP32 75 TFLOPS, FP64 / FP64 tensor 37 TFLOPS, 8 TB/s (HGX page lists
    # 7.7 TB/s for the 180 GB part; DGX B200 8 TB/s per GPU). 148 SMs; BF16 148 x 8192 x 1860 MHz = 2.255 PF.
    check("B200", {"fp4": 9000, "fp8": 4500, "int8": 4500, "bf16": 2250, "fp32": 75, "fp64": 37, "fp64_tensor": 37},
          bandwidth=8000, sparse={"fp4": 18000, "fp8": 9000})


def test_every_sku_has_a_source_and_consistent_rates() -> None:
    for sku in SKUS:
        spec = spec_from_table(sku.name)
        assert sku.source, sku.name
        # fp32 (CUDA cores) = SMs x 2 x cores/SM x boost clock, by definition of the table
        arch = ARCHITECTURES[sku.arch]
        fp32_tflops = sku.sm_count * 2 * arch.cuda_cores_per_sm * sku.boost_clock_mhz / 1e6
        assert spec.peak_tflops["fp32"] == pytest.approx(fp32_tflops)
        for key, value in spec.sparse_peak_tflops.items():
            assert value == pytest.approx(2 * spec.peak_tflops[key])  # 2:4 sparsity doubles dense
        assert "fp64" not in spec.sparse_peak_tflops


def test_half_rate_only_on_fp32_accumulate_keys() -> None:
    arch = ARCHITECTURES["ada"]
    full, _ = peaks(arch, 100, 2000)
    half, _ = peaks(arch, 100, 2000, half_rate_fp32_acc=True)
    for key in ("tf32", "fp16", "bf16", "fp8"):
        assert half[key] == pytest.approx(full[key] / 2)
    for key in ("fp32", "fp16_acc16", "fp8_acc16", "int8", "int4"):
        assert half[key] == full[key]


@pytest.mark.parametrize(("nvml_name", "sku"), [
    ("Tesla V100-SXM2-16GB", "V100 SXM2"), ("Tesla T4", "T4"), ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM"), ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"),
    ("NVIDIA A100 80GB PCIe", "A100 PCIe"), ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H200", "H200"), ("NVIDIA B200", "B200"), ("NVIDIA L40S", "L40S"), ("NVIDIA L40", "L40"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("NVIDIA A10", "A10"), ("h100", "H100 SXM"), ("H100 SXM", "H100 SXM"),
    ("a100", "A100 SXM"),
])
def test_names_match(nvml_name: str, sku: str) -> None:
    found = find_sku(nvml_name)
    assert found is not None and found.name == sku


@pytest.mark.parametrize("name", ["NVIDIA A10G", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB",
                                  "NVIDIA GB200", "NVIDIA GeForce RTX 4090 D", "Radeon"])
def test_other_names_do_not_match_a_near_neighbour(name: str) -> None:
    assert find_sku(name) is None


def test_normalise_and_unknown_name() -> None:
    assert normalise_name("NVIDIA A100-SXM4-80GB") == "a100 sxm4 80gb"
    with pytest.raises(ModelcostError, match="unknown GPU 'Z9000'"):
        spec_from_table("Z9000")


def test_bandwidth_formula() -> None:
    # H100 SXM as NVML reports it: 2619 MHz x 5120 bits x 2 / 8 = 3352.3 GB/s (datasheet 3.35 TB/s)
    assert bandwidth_gbps(2619, 5120) == pytest.approx(3352.32)


def test_nvml_facts_of_a_known_gpu_use_table_clocks_and_device_sms() -> None:
    facts = NvmlFacts(name="NVIDIA H100 80GB HBM3", driver="580.1", compute_capability="9.0", sm_count=132,
                      boost_clock_mhz=1980, max_clock_mhz=1980, memory_clock_mhz=2619, bus_width_bits=5120,
                      memory_bytes=85_000_000_000, power_limit_w=700.0)
    spec = spec_from_facts(facts)
    assert spec.source == "nvml" and spec.driver == "580.1"
    assert spec.peak_tflops["bf16"] == pytest.approx(989.43, rel=1e-4)  # table tensor clock 1830, not 1980
    assert spec.bandwidth_gbps == pytest.approx(3352.32)  # from NVML's clock and bus width
    assert any("H100 SXM" in n for n in spec.notes)


def test_nvml_h200_reports_6016_bits() -> None:
    # An H200's NVML memory bus width is 6016 bits; with a 3201 MHz max memory clock that is
    # 3201e6 x 6016 x 2 / 8 = 4.815 TB/s, the datasheet's 4.8 TB/s.
    spec = spec_from_facts(NvmlFacts(name="NVIDIA H200", compute_capability="9.0", sm_count=132,
                                     memory_clock_mhz=3201, bus_width_bits=6016))
    assert spec.bandwidth_gbps == pytest.approx(4814.6, rel=1e-3)


def test_unknown_gpu_falls_back_to_its_architecture_row() -> None:
    # An H100 NVL is not in the table: Hopper rates, its own 132 SMs and NVML boost clock 1785 MHz:
    # BF16 = 132 x 4096 x 1785 MHz = 965.1 TFLOPS; FP32 = 132 x 256 x 1785 = 60.3.
    spec = spec_from_facts(NvmlFacts(name="NVIDIA H100 NVL", compute_capability="9.0", sm_count=132,
                                     boost_clock_mhz=1785, memory_clock_mhz=2619, bus_width_bits=6016))
    assert spec.architecture == "Hopper GH100"
    assert spec.peak_tflops["bf16"] == pytest.approx(132 * 4096 * 1785e6 / 1e12)
    assert spec.peak_tflops["fp32"] == pytest.approx(132 * 256 * 1785e6 / 1e12)


def test_unknown_geforce_gets_half_rate_and_sm_count_from_cores() -> None:
    # RTX 4090 D (cc 8.9): 14592 CUDA cores / 128 = 114 SMs; GeForce -> FP16 with FP32 acc at half rate:
    # 114 x 512 x 2520 MHz = 147.1 TFLOPS.
    spec = spec_from_facts(NvmlFacts(name="NVIDIA GeForce RTX 4090 D", compute_capability="8.9", cuda_cores=14592,
                                     boost_clock_mhz=2520))
    assert spec.sm_count == 114
    assert spec.peak_tflops["fp16"] == pytest.approx(114 * 512 * 2520e6 / 1e12)
    assert spec.bandwidth_gbps is None


def test_unknown_architecture_has_no_peaks_but_says_why() -> None:
    spec = spec_from_facts(NvmlFacts(name="Future GPU", compute_capability="42.0", sm_count=10, boost_clock_mhz=1000))
    assert spec.peak_tflops == {}
    assert any("not in the architecture table" in n for n in spec.notes)


def test_throttle_names() -> None:
    assert throttle_names(0x4 | 0x40) == ["sw_power_cap", "hw_thermal_slowdown"]


class FakeNvml:
    """Just enough of pynvml for read_nvml / NvmlSampler, answering like an H200 (values as NVML gives them)."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 1, 2, 3

    def __init__(self) -> None:
        self.inits = 0

    def nvmlInit(self) -> None:
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.inits -= 1

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, i: int) -> str:
        return f"h{i}"

    def nvmlDeviceGetName(self, h: str) -> str:
        return "NVIDIA H200"

    def nvmlSystemGetDriverVersion(self) -> str:
        return "570.86.15"

    def nvmlDeviceGetCudaComputeCapability(self, h: str) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetNumGpuCores(self, h: str) -> int:
        return 16896  # 132 SMs x 128

    def nvmlDeviceGetDefaultApplicationsClock(self, h: str, kind: int) -> int:
        return 1755

    def nvmlDeviceGetClock(self, h: str, kind: int, clock_id: int) -> int:
        raise RuntimeError("NVMLError_NotSupported")  # some boards do not report customer boost

    def nvmlDeviceGetMaxClockInfo(self, h: str, kind: int) -> int:
        return 1980 if kind == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetMemoryBusWidth(self, h: str) -> int:
        return 6016

    def nvmlDeviceGetMemoryInfo(self, h: str) -> object:
        return type("Mem", (), {"total": 150_754_820_096})()

    def nvmlDeviceGetEnforcedPowerLimit(self, h: str) -> int:
        return 700_000

    def nvmlDeviceGetClockInfo(self, h: str, kind: int) -> int:
        return 1980 if kind == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetPowerUsage(self, h: str) -> int:
        return 650_000

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: str) -> int:
        return 0x1 | 0x4  # idle (ignored) + software power cap


def test_read_nvml_and_sampler_with_a_fake_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import time as _time

    from modelcost.hardware import nvml

    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(nvml, "_torch_props", lambda index: None)  # no CUDA torch: SMs from the core count
    facts = nvml.read_nvml(0)
    assert facts is not None and fake.inits == 0  # shut down again
    assert (facts.name, facts.driver, facts.compute_capability) == ("NVIDIA H200", "570.86.15", "9.0")
    assert facts.boost_clock_mhz is None and facts.max_clock_mhz == 1980 and facts.power_limit_w == 700.0
    spec = nvml.spec_from_facts(facts)
    assert spec.sm_count == 132  # 16896 cores / 128
    assert spec.bandwidth_gbps == pytest.approx(3201e6 * 6016 * 2 / 8 / 1e9)  # 4814.4 GB/s
    assert spec.peak_tflops["bf16"] == pytest.approx(989.43, rel=1e-4)
    from modelcost.hardware.nvml_sampler import sampling

    with sampling(0, interval_s=0.005) as sampler:
        _time.sleep(0.05)
    summary = sampler.summary
    assert summary.sm_clock_mhz_mean == 1980 and summary.sm_clock_mhz_min == 1980 and summary.power_w_mean == 650
    assert summary.throttles == ["sw_power_cap"]
    assert fake.inits == 0
