"""What NVIDIA GPUs can do on paper: a per-architecture table of dense FLOPs per clock per SM, and known SKUs.

peak FLOP/s = SMs x FLOPs/clock/SM x clock. Two clocks, as NVIDIA's datasheets use them:

* ``boost_clock_mhz`` for the FP64, FP64-tensor and FP32 (CUDA-core) figures;
* ``tensor_clock_mhz`` for the low-precision tensor figures (TF32, FP16, BF16, FP8, INT8, INT4, FP4).
  They differ on Hopper and Blackwell: H100 SXM's 989.4 TFLOPS dense BF16 is 132 SMs x 4096 x 1830 MHz,
  while its 66.9 TFLOPS FP32 is 132 x 256 x 1980 MHz (the maximum boost). Elsewhere both are the boost clock.

Precision keys (``PRECISION_LABELS`` says each in words): fp64, fp64_tensor, fp32 (CUDA cores, TF32 off),
tf32, fp16 / bf16 (tensor, FP32 accumulate), fp16_acc16 (tensor, FP16 accumulate), fp8 (FP32 accumulate),
fp8_acc16, int8, int4 (tera-ops), fp4. All peaks are dense; ``sparse_peak_tflops`` holds the 2:4
structured-sparsity figures (2x dense, tensor ops from Ampere on, FP64 excluded).

GeForce-class parts (and the L40) run FP32-accumulate tensor math at half rate: TF32, FP16/BF16 with FP32
accumulate and FP8 with FP32 accumulate halve; FP16-accumulate, INT8 and INT4 keep the full rate
(RTX 4090: 165.2 TFLOPS FP16/FP32-acc vs 330.3 FP16/FP16-acc, Ada whitepaper). ``Sku.half_rate_fp32_acc``
marks them; an unknown GPU whose name says "GeForce" is assumed to be one.

Memory bandwidth = memory clock x bus width x 2 (double data rate) / 8 bits. The table stores each SKU's
datasheet bandwidth and bus width; its memory clock is derived from them, so it is the clock NVML's
"max memory clock" would have to report for the formula to give the datasheet figure. For a real GPU
``modelcost.hardware.nvml`` uses what NVML reports (an H200 reports a 6016-bit bus).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from modelcost.core.errors import ModelcostError
from modelcost.core.types import GpuSpec

PRECISION_LABELS: dict[str, str] = {
    "fp64": "FP64 (CUDA cores)",
    "fp64_tensor": "FP64 tensor",
    "fp32": "FP32 (CUDA cores, TF32 off)",
    "tf32": "TF32 tensor",
    "fp16": "FP16 tensor, FP32 accumulate",
    "bf16": "BF16 tensor, FP32 accumulate",
    "fp16_acc16": "FP16 tensor, FP16 accumulate",
    "fp8": "FP8 tensor, FP32 accumulate",
    "fp8_acc16": "FP8 tensor, FP16 accumulate",
    "int8": "INT8 tensor (TOPS)",
    "int4": "INT4 tensor (TOPS)",
    "fp4": "FP4 tensor",
}
PRECISION_ORDER = tuple(PRECISION_LABELS)

# Run at the boost clock; everything else at the tensor clock.
HIGH_PRECISION_KEYS = frozenset({"fp64", "fp64_tensor", "fp32"})
# Halved on GeForce-class parts (FP32 accumulate in the tensor cores).
FP32_ACC_KEYS = frozenset({"tf32", "fp16", "bf16", "fp8"})
# 2:4 structured sparsity doubles these (Ampere and later).
SPARSE_KEYS = frozenset({"tf32", "fp16", "bf16", "fp16_acc16", "fp8", "fp8_acc16", "int8", "int4", "fp4"})


@dataclass(frozen=True)
class Architecture:
    """Dense FLOPs per clock per SM of one GPU architecture, at full (datacenter) rate."""

    key: str
    name: str
    chips: str
    compute_capabilities: tuple[str, ...]
    cuda_cores_per_sm: int
    tensor_cores_per_sm: int
    flops_per_clk_per_sm: dict[str, int]
    sparsity: bool  # 2:4 structured sparsity in the tensor cores


def _arch(key: str, name: str, chips: str, ccs: tuple[str, ...], cores: int, tcs: int, sparsity: bool,
          **rates: int) -> Architecture:
    return Architecture(key, name, chips, ccs, cores, tcs, dict(rates), sparsity)


# FP32: 2 FLOPs (one FMA) per CUDA core per clock. Tensor rates: FMAs per tensor core per clock x 2 x tensor
# cores per SM, from the architecture whitepapers (Volta: 64 FP16 FMA/TC/clk x 8 TCs = 1024 FLOPs;
# Ampere GA100: 256 FP16 FMA/TC/clk x 4 = 2048; Hopper: 512 x 4 = 4096; Blackwell B200: 8192).
ARCHITECTURES: dict[str, Architecture] = {
    a.key: a
    for a in (
        _arch("volta", "Volta", "GV100", ("7.0", "7.2"), 64, 8, False,
              fp64=64, fp32=128, fp16=1024, fp16_acc16=1024),
        _arch("turing", "Turing", "TU10x", ("7.5",), 64, 8, False,
              fp64=4, fp32=128, fp16=1024, fp16_acc16=1024, int8=2048, int4=4096),
        _arch("ampere-ga100", "Ampere", "GA100", ("8.0",), 64, 4, True,
              fp64=64, fp64_tensor=128, fp32=128, tf32=1024, fp16=2048, bf16=2048, fp16_acc16=2048,
              int8=4096, int4=8192),
        _arch("ampere-ga10x", "Ampere", "GA10x", ("8.6", "8.7"), 128, 4, True,
              fp64=4, fp32=256, tf32=512, fp16=1024, bf16=1024, fp16_acc16=1024, int8=2048, int4=4096),
        _arch("ada", "Ada Lovelace", "AD10x", ("8.9",), 128, 4, True,
              fp64=4, fp32=256, tf32=512, fp16=1024, bf16=1024, fp16_acc16=1024, fp8=2048, fp8_acc16=2048,
              int8=2048, int4=4096),
        _arch("hopper", "Hopper", "GH100", ("9.0",), 128, 4, True,
              fp64=128, fp64_tensor=256, fp32=256, tf32=2048, fp16=4096, bf16=4096, fp16_acc16=4096,
              fp8=8192, fp8_acc16=8192, int8=8192),
        _arch("blackwell-gb100", "Blackwell", "GB100", ("10.0", "10.3"), 128, 4, True,
              fp64=128, fp64_tensor=128, fp32=256, tf32=4096, fp16=8192, bf16=8192, fp16_acc16=8192,
              fp8=16384, fp8_acc16=16384, int8=16384, fp4=32768),
        _arch("blackwell-gb20x", "Blackwell", "GB20x", ("12.0", "12.1"), 128, 4, True,
              fp64=4, fp32=256, tf32=512, fp16=1024, bf16=1024, fp16_acc16=1024, fp8=2048, fp8_acc16=2048,
              int8=2048, fp4=4096),
    )
}


@dataclass(frozen=True)
class Sku:
    """A known GPU: SM count, the datasheet's clocks, memory, and where the figures come from."""

    name: str
    arch: str  # key of ARCHITECTURES
    sm_count: int
    boost_clock_mhz: int
    bandwidth_gbps: float  # datasheet
    bus_width_bits: int
    memory_gb: float
    tensor_clock_mhz: int | None = None  # None: the boost clock
    base_clock_mhz: int | None = None
    l2_cache_mb: float | None = None
    power_w: float | None = None
    half_rate_fp32_acc: bool = False  # GeForce-class: FP32-accumulate tensor math at half rate
    aliases: tuple[str, ...] = ()  # regular expressions over the normalised name (see normalise_name)
    link: str | None = None  # the GPU-to-GPU link that joins any number of them in a server (see LINKS)
    link_gbps: float | None = None  # its datasheet bandwidth per GPU, both directions together (GB/s)
    source: str = ""  # the datasheet the figures come from
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def memory_clock_mhz(self) -> float:
        """The clock that makes clock x bus width x 2 / 8 equal the datasheet bandwidth."""
        return self.bandwidth_gbps * 1e3 * 8 / (self.bus_width_bits * 2)


def _sku(name: str, arch: str, sms: int, boost: int, bw: float, bus: int, mem_gb: float, **kw: object) -> Sku:
    link, link_gbps = LINKS[_SKU_LINKS[name]] if name in _SKU_LINKS else (None, None)
    return Sku(name, arch, sms, boost, bw, bus, mem_gb, link=link, link_gbps=link_gbps, **kw)  # type: ignore[arg-type]


# GPU-to-GPU links (the datasheets' "interconnect" rows; bandwidth per GPU, both directions together, GB/s).
# SXM parts: NVLink through NVSwitch (V100 SXM2 300, A100 SXM 600, H100 / H200 SXM 900, B200 1,800: the V100,
# A100, H100, H200 and HGX B200 datasheets). PCIe cards: the PCIe slot (Gen3 x16 32, Gen4 x16 64, Gen5 x16
# 128); their optional NVLink bridges (A100 PCIe 600, H100 PCIe 600, A30 200, A40 / RTX 3090 112.5) join only
# pairs of cards, so they are not what tensor parallelism over more GPUs runs on.
LINKS: dict[str, tuple[str, float]] = {
    "nvlink2": ("NVLink 2 (NVSwitch)", 300.0),
    "nvlink3": ("NVLink 3 (NVSwitch)", 600.0),
    "nvlink4": ("NVLink 4 (NVSwitch)", 900.0),
    "nvlink5": ("NVLink 5 (NVSwitch)", 1800.0),
    "pcie3": ("PCIe Gen3 x16", 32.0),
    "pcie4": ("PCIe Gen4 x16", 64.0),
    "pcie5": ("PCIe Gen5 x16", 128.0),
}
_SKU_LINKS = {
    "V100 SXM2": "nvlink2", "V100 PCIe": "pcie3", "T4": "pcie3", "A100 SXM 40GB": "nvlink3", "A100 SXM": "nvlink3",
    "A100 PCIe 40GB": "pcie4", "A100 PCIe": "pcie4", "A30": "pcie4", "A10": "pcie4", "A40": "pcie4",
    "RTX 3090": "pcie4", "L4": "pcie4", "L40": "pcie4", "L40S": "pcie4", "RTX 4090": "pcie4", "RTX 6000 Ada": "pcie4",
    "H100 SXM": "nvlink4", "H100 PCIe": "pcie5", "H200": "nvlink4", "B200": "nvlink5", "RTX 5090": "pcie5",
}

_AMPERE_WP = "NVIDIA A100 Tensor Core GPU datasheet / Ampere architecture whitepaper"
_HOPPER_DS = "NVIDIA H100 Tensor Core GPU datasheet; Hopper architecture whitepaper (H100 SXM5 / PCIe tables)"
SKUS: tuple[Sku, ...] = (
    _sku("V100 SXM2", "volta", 80, 1530, 900, 4096, 32, l2_cache_mb=6, power_w=300,
         aliases=(r"v100.*sxm2", r"v100 sxm", r"^v100$"), source="NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2)"),
    _sku("V100 PCIe", "volta", 80, 1380, 900, 4096, 32, l2_cache_mb=6, power_w=250,
         aliases=(r"v100.*pcie",), source="NVIDIA Tesla V100 GPU Accelerator datasheet (PCIe)"),
    _sku("T4", "turing", 40, 1590, 320, 256, 16, base_clock_mhz=585, l2_cache_mb=4, power_w=70,
         aliases=(r"\bt4\b",), source="NVIDIA T4 Tensor Core GPU datasheet"),
    _sku("A100 SXM 40GB", "ampere-ga100", 108, 1410, 1555, 5120, 40, base_clock_mhz=1095, l2_cache_mb=40,
         power_w=400, aliases=(r"a100.*sxm4?.*40", r"a100 40gb(?!.*pcie)"), source=_AMPERE_WP),
    _sku("A100 SXM", "ampere-ga100", 108, 1410, 2039, 5120, 80, base_clock_mhz=1095, l2_cache_mb=40,
         power_w=400, aliases=(r"a100.*sxm", r"\ba100\b(?!.*pcie)"), source=_AMPERE_WP + " (80GB SXM)"),
    _sku("A100 PCIe 40GB", "ampere-ga100", 108, 1410, 1555, 5120, 40, l2_cache_mb=40, power_w=250,
         aliases=(r"a100.*pcie.*40", r"a100 40gb pcie"), source=_AMPERE_WP + " (40GB PCIe)"),
    _sku("A100 PCIe", "ampere-ga100", 108, 1410, 1935, 5120, 80, l2_cache_mb=40, power_w=300,
         aliases=(r"a100.*pcie",), source=_AMPERE_WP + " (80GB PCIe)"),
    _sku("A30", "ampere-ga100", 56, 1440, 933, 3072, 24, l2_cache_mb=24, power_w=165,
         aliases=(r"\ba30\b",), source="NVIDIA A30 Tensor Core GPU datasheet"),
    _sku("A10", "ampere-ga10x", 72, 1695, 600, 384, 24, base_clock_mhz=885, l2_cache_mb=6, power_w=150,
         aliases=(r"\ba10\b",), source="NVIDIA A10 Tensor Core GPU datasheet"),
    _sku("A40", "ampere-ga10x", 84, 1740, 696, 384, 48, l2_cache_mb=6, power_w=300,
         aliases=(r"\ba40\b",), source="NVIDIA A40 datasheet"),
    _sku("RTX 3090", "ampere-ga10x", 82, 1695, 936, 384, 24, l2_cache_mb=6, power_w=350, half_rate_fp32_acc=True,
         aliases=(r"rtx 3090\b(?! ti)",), source="NVIDIA Ampere GA102 GPU architecture whitepaper"),
    _sku("L4", "ada", 58, 2040, 300, 192, 24, base_clock_mhz=795, l2_cache_mb=48, power_w=72,
         aliases=(r"\bl4\b",), source="NVIDIA L4 Tensor Core GPU datasheet"),
    _sku("L40", "ada", 142, 2490, 864, 384, 48, l2_cache_mb=96, power_w=300, half_rate_fp32_acc=True,
         aliases=(r"\bl40\b(?!s)",), source="NVIDIA L40 GPU datasheet"),
    _sku("L40S", "ada", 142, 2520, 864, 384, 48, base_clock_mhz=1110, l2_cache_mb=96, power_w=350,
         aliases=(r"\bl40s\b",), source="NVIDIA L40S GPU datasheet"),
    _sku("RTX 4090", "ada", 128, 2520, 1008, 384, 24, base_clock_mhz=2235, l2_cache_mb=72, power_w=450,
         half_rate_fp32_acc=True, aliases=(r"rtx 4090\b(?! d)",),
         source="NVIDIA Ada GPU architecture whitepaper (GeForce RTX 4090)"),
    _sku("RTX 6000 Ada", "ada", 142, 2505, 960, 384, 48, l2_cache_mb=96, power_w=300,
         aliases=(r"rtx 6000 ada",), source="NVIDIA RTX 6000 Ada Generation datasheet"),
    _sku("H100 SXM", "hopper", 132, 1980, 3350, 5120, 80, tensor_clock_mhz=1830, l2_cache_mb=50, power_w=700,
         aliases=(r"h100.*sxm", r"h100 80gb hbm3", r"\bh100\b(?!.*(pcie|nvl))"), source=_HOPPER_DS),
    _sku("H100 PCIe", "hopper", 114, 1755, 2000, 5120, 80, tensor_clock_mhz=1620, l2_cache_mb=50, power_w=350,
         aliases=(r"h100.*pcie",), source=_HOPPER_DS),
    _sku("H200", "hopper", 132, 1980, 4800, 6016, 141, tensor_clock_mhz=1830, l2_cache_mb=50, power_w=700,
         aliases=(r"\bh200\b(?!.*nvl)", r"h200 sxm"),
         source="NVIDIA H200 Tensor Core GPU datasheet (SXM)",
         notes=("bus width 6016 bits, as NVML reports it on an H200 (6 HBM3e stacks x 1024 would be 6144)",)),
    _sku("B200", "blackwell-gb100", 148, 1980, 8000, 8192, 180, tensor_clock_mhz=1860, power_w=1000,
         aliases=(r"\bb200\b",), source="NVIDIA HGX B200 / DGX B200 datasheets (per GPU)",
         notes=(("NVIDIA does not publish B200 clocks: 1980 MHz reproduces the datasheet FP32 75 TFLOPS and "
                 "1860 MHz the dense BF16 2.25 PFLOPS (148 SMs)"),)),
    _sku("RTX 5090", "blackwell-gb20x", 170, 2407, 1792, 512, 32, l2_cache_mb=96, power_w=575,
         half_rate_fp32_acc=True, aliases=(r"rtx 5090\b",),
         source="NVIDIA RTX Blackwell GPU architecture whitepaper (GeForce RTX 5090)"),
)


def normalise_name(name: str) -> str:
    """'NVIDIA A100-SXM4-80GB' -> 'a100 sxm4 80gb': lower case, vendor words dropped, punctuation to spaces."""
    text = re.sub(r"[^a-z0-9]+", " ", name.lower())
    words = [w for w in text.split() if w not in {"nvidia", "tesla", "geforce", "quadro", "tensor", "core", "gpu"}]
    return " ".join(words)


def find_sku(name: str) -> Sku | None:
    """The SKU a user-given or NVML-reported name means, or None. Exact names win, then the aliases."""
    norm = normalise_name(name)
    for sku in SKUS:
        if normalise_name(sku.name) == norm:
            return sku
    for sku in SKUS:
        if any(re.search(pattern, norm) for pattern in sku.aliases):
            return sku
    return None


def arch_for(compute_capability: str | None = None, name: str | None = None) -> Architecture | None:
    """The architecture row for a compute capability ("9.0"), else the one a known SKU name implies."""
    if compute_capability:
        for arch in ARCHITECTURES.values():
            if compute_capability in arch.compute_capabilities:
                return arch
    if name:
        sku = find_sku(name)
        if sku is not None:
            return ARCHITECTURES[sku.arch]
    return None


def is_geforce_class(name: str) -> bool:
    """GeForce (and TITAN) parts run FP32-accumulate tensor math at half rate."""
    return bool(re.search(r"geforce|\brtx \d{4}\b|titan", name.lower()))


def peaks(arch: Architecture, sm_count: int, boost_clock_mhz: float, tensor_clock_mhz: float | None = None,
          half_rate_fp32_acc: bool = False) -> tuple[dict[str, float], dict[str, float]]:
    """Dense and 2:4-sparse peaks in TFLOP/s (TOP/s for int8/int4) by precision key.

    peak = SMs x FLOPs/clock/SM x clock; FP64/FP32 at the boost clock, tensor precisions at the tensor clock."""
    tensor_clock = tensor_clock_mhz or boost_clock_mhz
    dense: dict[str, float] = {}
    for key in PRECISION_ORDER:
        rate = arch.flops_per_clk_per_sm.get(key)
        if rate is None:
            continue
        if half_rate_fp32_acc and key in FP32_ACC_KEYS:
            rate //= 2
        clock = boost_clock_mhz if key in HIGH_PRECISION_KEYS else tensor_clock
        dense[key] = sm_count * rate * clock * 1e6 / 1e12
    sparse = {k: 2 * v for k, v in dense.items() if arch.sparsity and k in SPARSE_KEYS}
    return dense, sparse


def bandwidth_gbps(memory_clock_mhz: float, bus_width_bits: int) -> float:
    """GB/s (1e9 bytes) = memory clock x bus width x 2 (double data rate) / 8."""
    return memory_clock_mhz * 1e6 * bus_width_bits * 2 / 8 / 1e9


def spec_from_sku(sku: Sku) -> GpuSpec:
    arch = ARCHITECTURES[sku.arch]
    dense, sparse = peaks(arch, sku.sm_count, sku.boost_clock_mhz, sku.tensor_clock_mhz, sku.half_rate_fp32_acc)
    notes = [f"figures: {sku.source}"] + list(sku.notes)
    if sku.half_rate_fp32_acc:
        notes.append("GeForce-class rates: TF32, FP16/BF16 and FP8 with FP32 accumulate run at half rate")
    return GpuSpec(
        name=sku.name, architecture=f"{arch.name} {arch.chips}", compute_capability=arch.compute_capabilities[0],
        sm_count=sku.sm_count, cuda_cores_per_sm=arch.cuda_cores_per_sm, tensor_cores_per_sm=arch.tensor_cores_per_sm,
        base_clock_mhz=sku.base_clock_mhz, boost_clock_mhz=sku.boost_clock_mhz, max_clock_mhz=None,
        tensor_clock_mhz=sku.tensor_clock_mhz or sku.boost_clock_mhz,
        memory_bytes=int(sku.memory_gb * 1e9), bus_width_bits=sku.bus_width_bits,
        memory_clock_mhz=round(sku.memory_clock_mhz), bandwidth_gbps=float(sku.bandwidth_gbps),
        power_limit_w=sku.power_w, peak_tflops=dense, sparse_peak_tflops=sparse,
        source="table", l2_cache_bytes=int(sku.l2_cache_mb * 2**20) if sku.l2_cache_mb else None, notes=notes,
    )


def spec_from_table(name: str) -> GpuSpec:
    """The GpuSpec of a known GPU by name ("H100 SXM", "NVIDIA A100-SXM4-80GB", "l4")."""
    sku = find_sku(name)
    if sku is None:
        raise ModelcostError(f"unknown GPU {name!r}; known: {', '.join(s.name for s in SKUS)} (modelcost gpu --list)")
    return spec_from_sku(sku)


def known_specs() -> list[GpuSpec]:
    return [spec_from_sku(s) for s in SKUS]
