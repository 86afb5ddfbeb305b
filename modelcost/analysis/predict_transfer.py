"""Which calibration predicts a GPU, moving one to a GPU that was never calibrated, and the predictions of one
run (``--predict``).

Transfer (after Habitat's wave scaling, USENIX ATC 2021: a kernel keeps its efficiency and moves with the roof
that bounds it) from a calibrated GPU S to a table GPU T:

* peaks: each precision's calibrated peak x T's / S's table peak (SMs x FLOPs per clock x clock); the GEMM,
  conv and attention efficiencies are fractions of the peak after wave quantization, so they are kept and
  the waves are counted over T's SMs; a GEMM grid point's time moves the same way: x S's / T's peak x S's / T's
  wave utilization of its 128 x 128 tiles (``moved_grid``);
* memory-bound kernels: the smallest kernel's time t0 is kept (launch latency), the rest of each calibrated
  time scales by S/T DRAM bandwidth, or, for sizes that fit S's L2, by S/T (SMs x clock); the curve of kernels
  whose data is in DRAM (``cold_curve``) and small-M GEMMs timed on weights in DRAM always by the bandwidth;
* launch, gap and graph-replay costs are kept (host- and driver-bound: the same software on a like host).

The nearest calibrated GPU: the smallest sum of |log ratio| of SMs, clock, bandwidth and L2, plus 1 for
another architecture.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from modelcost.analysis.predict import (
    DEFAULT_CONFIGS,
    predict,
    with_measurement,
)
from modelcost.analysis.predict_host import with_pooled_host
from modelcost.analysis.predict_table import ErrorEntry
from modelcost.analysis.roofline import ELEMENT_BYTES, cost_batch_size
from modelcost.core.calibration import (
    BACKEND_FAMILIES,
    Calibration,
    GemmPoint,
    GpuFingerprint,
    TimePoint,
    wave_utilization,
)
from modelcost.core.errors import ModelcostError
from modelcost.core.types import BenchResult, CostReport, GpuSpec, LatencyPrediction
from modelcost.hardware.specs import find_sku, spec_from_sku


def canonical_name(name: str) -> str:
    """The table's name of a GPU ("NVIDIA H100 80GB HBM3" -> "H100 SXM"), else the name as given."""
    sku = find_sku(name)
    return sku.name if sku is not None else name


def _table_figures(fp: GpuFingerprint) -> GpuFingerprint:
    """The datasheet figures of a calibrated GPU when the table knows it (ratios are taken table to table),
    else its own."""
    sku = find_sku(fp.name)
    if sku is None:
        return fp
    spec = spec_from_sku(sku)
    return GpuFingerprint(spec.name, int(spec.sm_count or fp.sm_count), float(spec.boost_clock_mhz or 0),
                          float(spec.bandwidth_gbps or 0), spec.l2_cache_bytes, spec.compute_capability,
                          dict(spec.peak_tflops))


def _ratio(a: float | None, b: float | None) -> float:
    return a / b if a and b else 1.0


def _table_spec(gpu: GpuSpec) -> GpuSpec:
    """The datasheet figures of a target GPU the table knows (NVML's figures of this machine differ by a hair:
    2619 MHz x 5120 bit = 3352.3 GB/s against the H100's 3350), else its own."""
    sku = find_sku(gpu.name)
    return spec_from_sku(sku) if sku is not None else gpu


def transfer(cal: Calibration, target: GpuSpec) -> Calibration:
    """``cal`` moved to ``target`` by the spec ratios, table to table (module doc); notes say from where and how."""
    src, target = _table_figures(cal.gpu), _table_spec(target)
    peak_ratio = {k: _ratio(target.peak_tflops.get(k), src.peak_tflops.get(k)) for k in cal.gpu.peak_tflops}
    peaks = {k: v * peak_ratio[k] for k, v in cal.gpu.peak_tflops.items() if target.peak_tflops.get(k)}
    bw = _ratio(target.bandwidth_gbps, src.bandwidth_gbps)
    on_chip = _ratio((target.sm_count or 0) * (target.boost_clock_mhz or 0), src.sm_count * src.boost_clock_mhz)
    l2 = src.l2_cache_bytes or 0

    def moved(points: list[TimePoint], dram: bool = False) -> list[TimePoint]:
        floor = points[0].time_us if points else 0.0
        return [TimePoint(p.size_bytes, floor + (p.time_us - floor) / (on_chip if p.size_bytes <= l2 and not dram
                                                                       else bw)) for p in points]

    curve = moved(cal.memory_curve)
    # a small-M GEMM reads its weight: DRAM-bound, or L2-resident when the weight fits (a calibration without
    # cold_curve replayed one weight, like the memory curve; one with it read a ring of copies from DRAM)
    cold = bool(cal.cold_curve)
    gemv = [dataclasses.replace(p, time_us=p.time_us / (on_chip if not cold and p.n * p.k *
                                                         ELEMENT_BYTES.get(p.precision, 4.0) <= l2 else bw))
            for p in cal.gemv]
    gpu = GpuFingerprint(canonical_name(target.name), int(target.sm_count or cal.gpu.sm_count),
                         float(target.boost_clock_mhz or 0), cal.gpu.bandwidth_gbps * bw, target.l2_cache_bytes,
                         target.compute_capability, peaks)
    note = (f"transferred from {canonical_name(cal.gpu.name)}: peaks x table ratio, DRAM-bound kernels x "
            f"{1 / bw:.3f} (bandwidth), L2-resident x {1 / on_chip:.3f} (SMs x clock), launch costs kept")
    return dataclasses.replace(cal, gpu=gpu, memory_curve=curve, gemv=gemv, notes=[*cal.notes, note],
                               strided_curve={e: moved(c) for e, c in cal.strided_curve.items()},
                               unvectorized_curve={e: moved(c) for e, c in cal.unvectorized_curve.items()},
                               cold_curve=moved(cal.cold_curve, dram=True),
                               gemm_grid=moved_grid(cal, target, peak_ratio))


def moved_grid(cal: Calibration, target: GpuSpec, peak_ratio: dict[str, float]) -> list[GemmPoint]:
    """The GEMM grid's times on ``target``: a point keeps its efficiency after wave quantization, so its time
    goes x 1 / (T's over S's peak) x (S's / T's busy fraction of the SM slots over its output tiles)."""
    sms_s, sms_t = int(cal.gpu.sm_count or 1), int(target.sm_count or cal.gpu.sm_count or 1)
    out = []
    for p in cal.gemm_grid:
        tiles = math.ceil(p.m / cal.tile_m) * math.ceil(p.n / cal.tile_n)
        waves = wave_utilization(tiles, sms_s) / wave_utilization(tiles, sms_t)
        out.append(dataclasses.replace(p, time_us=p.time_us / peak_ratio.get(p.precision, 1.0) * waves))
    return out


def _distance(a: GpuFingerprint, b: GpuSpec) -> float:
    pairs = ((a.sm_count, b.sm_count), (a.boost_clock_mhz, b.boost_clock_mhz), (a.bandwidth_gbps, b.bandwidth_gbps),
             (a.l2_cache_bytes, b.l2_cache_bytes))
    d = sum(abs(math.log(x / y)) for x, y in pairs if x and y)
    return d + (1.0 if a.compute_capability != b.compute_capability else 0.0)


def calibration_for(gpu: GpuSpec, calibrations: Sequence[Calibration]) -> tuple[Calibration, str]:
    """(the calibration that predicts ``gpu``, the GPU it was measured on): its own when there is one, else the
    nearest one transferred to it; with the host price pooled over the stored calibrations of the GPU it was
    measured on, where that pool stands in (analysis/predict_host.py)."""
    if not calibrations:
        raise ModelcostError("no GPU calibration in the cache: run 'modelcost calibrate' on a GPU first "
                             "(this one, or one like it in 'modelcost gpu --list')")
    name = canonical_name(gpu.name)
    for cal in calibrations:
        if canonical_name(cal.gpu.name) == name:
            cal = with_pooled_host(cal, name)
            return dataclasses.replace(cal, gpu=dataclasses.replace(cal.gpu, name=name)), name
    nearest = min(calibrations, key=lambda c: _distance(c.gpu, gpu))
    source = canonical_name(nearest.gpu.name)
    return transfer(with_pooled_host(nearest, source), gpu), source


def _configs(results: Sequence[BenchResult], cost: CostReport) -> list[tuple[str, str, int]]:
    """The measured GPU configs that have a prediction model, else the default configs at the counted batch."""
    measured = [(r.backend, r.precision, r.batch_size) for r in results
                if r.status == "ok" and r.backend in BACKEND_FAMILIES]
    if measured:
        return list(dict.fromkeys(measured))
    return [(b, p, cost_batch_size(cost)) for b, p in DEFAULT_CONFIGS]


def predict_run(cost: CostReport, results: Sequence[BenchResult], gpus: Sequence[GpuSpec],
                calibrations: Sequence[Calibration],
                table: Sequence[ErrorEntry] | None = None) -> tuple[list[LatencyPrediction], list[str]]:
    """Predictions of the run's configs on each GPU (the measured one first: measurements are put beside its
    predictions), and a note per config that could not be predicted."""
    preds: list[LatencyPrediction] = []
    notes: list[str] = []
    for i, gpu in enumerate(gpus):
        cal, source = calibration_for(gpu, calibrations)
        for backend, precision, batch in _configs(results, cost):
            try:
                pred = predict(cost, cal, backend, precision, batch, calibrated_on=source, table=table)
            except ModelcostError as exc:
                notes.append(f"predict: {backend} {precision} batch {batch} on {cal.gpu.name}: {exc}")
                continue
            if pred.transferred:
                pred.notes.append(cal.notes[-1])
            preds.append(with_measurement(pred, results) if i == 0 and gpu.source == "nvml" else pred)
    return preds, notes
