"""On a real GPU (H100 / H200): the NVML spec, measured ceilings in under 60 s with sane fractions, the
roofline of a small benchmark, and per-layer CUDA kernel time mapped to modules. Skipped without CUDA."""

from __future__ import annotations

import time

import pytest

from tests.conftest import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda]


def test_nvml_spec_of_this_gpu() -> None:
    from modelcost import api
    from modelcost.hardware.specs import find_sku

    spec = api.gpu_spec(cached_ceilings=False)
    print("\n" + "\n".join(f"{k}: {v}" for k, v in vars(spec).items() if k not in ("measurements",)))
    assert spec.source == "nvml" and spec.driver and spec.sm_count and spec.sm_count > 0
    assert spec.compute_capability and spec.memory_bytes and spec.memory_bytes > 1e9
    assert spec.bus_width_bits and spec.memory_clock_mhz and spec.bandwidth_gbps
    assert spec.peak_tflops.get("fp32") and spec.peak_tflops.get("bf16")
    sku = find_sku(spec.name)
    if sku is not None:  # NVML's clock x bus width x 2 agrees with the datasheet bandwidth within 5%
        assert spec.bandwidth_gbps == pytest.approx(sku.bandwidth_gbps, rel=0.05)
        assert spec.sm_count == sku.sm_count
    if spec.name.startswith("NVIDIA H100 80GB HBM3") or spec.name == "NVIDIA H200":
        assert spec.peak_tflops["bf16"] == pytest.approx(989.4, rel=0.01)


def test_measure_ceilings_fast_and_sane(tmp_path) -> None:
    from modelcost import api

    spec = api.gpu_spec(cached_ceilings=False)
    t0 = time.perf_counter()
    spec = api.measure_ceilings(spec, refresh=True, cache_dir=str(tmp_path))
    elapsed = time.perf_counter() - t0
    for m in spec.measurements:
        print(f"\n{m.kind} {m.precision}: {m.value} {m.unit} = {m.fraction_of_spec} of {m.spec}; "
              f"SM {m.sm_clock_mhz_min}/{m.sm_clock_mhz_mean} MHz, {m.power_w_mean} W, {m.throttle_reasons}, {m.error}")
    print(f"elapsed {elapsed:.1f} s")
    assert elapsed < 60
    got = {m.precision or "copy": m for m in spec.measurements}
    for key in ("fp32", "tf32", "fp16", "bf16", "copy"):
        assert got[key].value, got[key].error
        assert 0.3 < got[key].fraction_of_spec <= 1.1, (key, got[key].fraction_of_spec)
    assert (tmp_path / api_cache_name(spec)).exists()
    again = api.measure_ceilings(api.gpu_spec(cached_ceilings=False), cache_dir=str(tmp_path))  # from the cache
    assert again.measured_tflops == spec.measured_tflops


def api_cache_name(spec: object) -> str:
    from modelcost.hardware.ceilings import cache_path

    return cache_path(spec).name


def test_roofline_of_a_small_benchmark() -> None:
    from modelcost import api
    from modelcost.bench.base import BenchConfig
    from modelcost.core.types import RunReport

    config = BenchConfig(device="cuda", min_time_s=0.2, max_time_s=3, min_iters=20, warmup_max_s=2)
    cost = api.analyze_static("zoo:resnet18", batch_size=8)
    results, device = api.run_benchmarks("zoo:resnet18", backends=["torch-eager", "torch-half"],
                                         precisions=["fp32", "bf16"], batch_sizes=[8], config=config)
    run = api.attach_roofline(RunReport(cost=cost, benchmarks=results, device=device))
    ok = [r for r in run.benchmarks if r.status == "ok"]
    assert ok and run.gpu is not None
    for r in ok:
        p = r.roofline
        assert p is not None, r
        print(f"\n{r.backend} {r.precision}: {p.achieved_tflops:.2f} TFLOP/s, MFU {p.mfu:.3f}, {p.bound}, "
              f"x{p.measured_over_bound:.1f} of {p.lower_bound_ms:.4f} ms")
        assert 0 < p.mfu < 1 and p.bound in ("compute", "memory", "overhead")
        assert p.lower_bound_ms < r.latency_ms.p50  # no measurement beats the lower bound
    api.attach_layer_profiles("zoo:resnet18", run, backends=("torch-eager",), runs=5, config=config)
    profiled = [r for r in run.benchmarks if r.layer_profile is not None]
    assert profiled and profiled[0].layer_profile.time_kind == "CUDA kernel time"
    rows = api.layer_roofline(cost, run.gpu, profiled[0].precision, 8, profiled[0].layer_profile)
    names = {row.name for row in rows}
    assert "conv1" in names and any(n.startswith("layer1.0") for n in names)
    assert sum(row.time_share or 0 for row in rows) == pytest.approx(1.0, rel=1e-6)


def test_profile_torch_cuda_kernel_time_is_below_wall() -> None:
    import torch

    from modelcost.bench.profile import profile_torch

    net = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda().eval()
    prof = profile_torch(net, (torch.randn(256, 1024, device="cuda"),), runs=5, warmup=2)
    names = {lt.name for lt in prof.layers}
    assert {"0", "1", "2"} <= names
    assert 0 < prof.total_ms <= prof.wall_ms
