"""The sweep: backends x precisions x batch sizes, one ``BenchResult`` per config.

Per (backend, precision) the model is prepared once, then each batch size gets a session: a first call
(``first_inference_ms``), the warm-up and timed loop (``bench.timing``) with the NVML sampler running, the
accuracy of the last outputs against the FP32 reference, and a shorter host-side end-to-end loop. An
out-of-memory ends that (backend, precision)'s sweep with status ``oom``, frees the memory and the sweep goes
on; any other failure becomes status ``failed`` with its reason. Results are appended to the caller's list as
they finish, so an interrupted run keeps what it measured. What runs is decided before, in bench/plan.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from modelcost.bench import compile_ahead, export_ahead, lifecycle, registry, screening_record, stability
from modelcost.bench.base import BenchConfig
from modelcost.bench.memory import cuda_uuid, device_info, free_device_memory, long_lived_frozen
from modelcost.bench.model import BenchModel
from modelcost.bench.plan import Plan, compile_ahead_order, make_plan, refuse_impossible_batches
from modelcost.bench.reference import Compared, Reference
from modelcost.bench.screening import (
    Rejects,
    after_screening,
    may_screen_out,
    screen_out_reason,
    screening_config,
    speed_rank,
)
from modelcost.bench.stats import block_medians, latency_stats
from modelcost.bench.timing import WallClock, measure_e2e
from modelcost.core.errors import ModelcostError
from modelcost.core.text import config_label, first_line
from modelcost.core.trace import trace
from modelcost.core.types import BenchResult, DeviceInfo


class Sweep:
    """Runs a plan; ``results`` grows as configs finish."""

    def __init__(self, model: BenchModel, plan: Plan, batch_sizes: Sequence[int], config: BenchConfig,
                 results: list[BenchResult], progress: Any = None, screen: bool = False,
                 rejects: Rejects | None = None) -> None:
        self.model, self.plan, self.batch_sizes, self.config = model, plan, list(batch_sizes), config
        self.results, self.progress = results, progress
        self.screen, self.rejects = screen, rejects  # bench.screening: short measurement first, full for contenders
        self.nvml = self.handle = None
        self.nvml_reason = ""
        if plan.device == "cuda" and plan.runnable:
            from modelcost.hardware.nvml_sampler import open_nvml

            self.nvml, got = open_nvml(cuda_uuid())
            if self.nvml is None:
                self.nvml_reason = got
            else:
                self.handle = got
        self.device_info: DeviceInfo = device_info(plan.device, self.nvml, self.handle)
        self.reference = Reference(model, plan.device, config)
        self.record: screening_record.ScreeningRecord | None = None  # opened in run(): it hashes the model
        trace("sweep set up (NVML, device info)")

    def run(self) -> None:
        with long_lived_frozen():
            self._run()

    def _run(self) -> None:
        self.results.extend(self.plan.skipped)
        if self.screen and self.config.reuse_earlier and self.plan.runnable:
            try:
                key = screening_record.record_key(self.model.content_hash(), self.device_info,
                                                  cuda_uuid() if self.plan.device == "cuda" else None, self.config)
                self.record = screening_record.ScreeningRecord.open(self.config.cache_dir, key)
            except Exception as exc:  # noqa: BLE001 - without a record every config is measured, as with --fresh
                trace(f"no record of earlier runs: {first_line(exc)}")
        if self.plan.runnable:  # before any config, so no config's memory figure includes the reference's
            self._advance("reference outputs (fp32)", 0)
            for batch in self.batch_sizes:
                self.reference.get(batch)
            trace(f"reference outputs for batches {self.batch_sizes}")
            self.model.release_device_copies()
        order = sorted(self.plan.runnable, key=speed_rank) if self.screen else list(self.plan.runnable)
        if self.model.compile_ahead is not None:
            order = compile_ahead_order(order)
        first = len(self.results)
        if self.config.background:
            self.model.export_ahead = export_ahead.start(self.model, order, self.plan.device, self.config.cache_dir)
        if self.model.export_ahead is not None:
            trace("ONNX export started in a background process")
        try:
            for backend, precision in order:
                self._sweep_one(backend, precision)
        finally:
            if self.model.export_ahead is not None:  # no ONNX config ran (or all failed before asking): stop it
                self.model.export_ahead.stop()
                self.model.export_ahead = None
            self._end_compile_ahead()
            if self.record is not None:
                self.record.save()
        if order != list(self.plan.runnable):  # report in plan order, whatever order they were measured in
            rank = {pair: i for i, pair in enumerate(self.plan.runnable)}
            mine = sorted(self.results[first:], key=lambda r: (rank.get((r.backend, r.precision), -1),
                                                                 self.batch_sizes.index(r.batch_size)
                                                                 if r.batch_size in self.batch_sizes else -1))
            self.results[first:] = mine

    def _advance(self, label: str, steps: int = 1) -> None:
        if self.progress is not None:
            self.progress(label, steps)

    def _end_compile_ahead(self, wait_s: float = 0.0) -> None:
        ahead, self.model.compile_ahead = self.model.compile_ahead, None
        if ahead is not None:
            ahead.stop(wait_s)
            trace("background torch.compile ended")

    def _inputs(self, batch: int) -> str:
        return repr([(s.name, tuple(s.shape), s.dtype) for s in self.model.specs(batch)])

    def _beaten_earlier(self, backend: str, precision: str, batch: int) -> BenchResult | None:
        """The row of this config if it needs no measurement in this run (the caller's pre-screen, or
        bench.screening_record against an earlier run's figures), else None."""
        pre = self.plan.prescreened.get((backend, precision, batch))
        if pre is not None:
            return dataclasses.replace(pre, device=self.device_info.name, notes=list(pre.notes),
                                       extra=dataclasses.replace(pre.extra))
        if self.record is None:
            return None
        earlier = self.record.earlier(backend, precision, batch, self._inputs(batch))
        if earlier is None:
            return None
        row = screening_record.beaten_earlier(backend, precision, batch, earlier, self.results,
                                              lambda r: may_screen_out(r, self.rejects))
        if row is not None:
            row.device = self.device_info.name
        return row

    def _sweep_one(self, backend: str, precision: str) -> None:
        entry = registry.info(backend)
        batches = list(self.batch_sizes)
        beaten = [self._beaten_earlier(backend, precision, batch) for batch in batches]
        if beaten and all(beaten):  # nothing of it to measure: not even prepared
            trace(f"{backend} {precision}: every batch pre-screened or beaten by more than "
                  f"{screening_record.REUSE_FACTOR:g}x against an earlier run's figures; not measured")
            for batch, row in zip(batches, beaten, strict=True):
                self.results.append(row)  # type: ignore[arg-type]
                self._advance(f"{backend} {precision} batch {batch}")
            return
        if entry.model_kinds != ("pytorch",):  # NVML (device-wide) memory figures: the child's GPU memory must be gone
            self._end_compile_ahead(wait_s=30.0)
        if entry.device == "cuda":
            free_device_memory()
        baseline = self._memory_used()
        with contextlib.ExitStack() as stack:
            try:
                runner = stack.enter_context(lifecycle.prepared(backend, self.model, precision, self.config))
                trace(f"{backend} {precision}: prepared")
            except Exception as exc:  # noqa: BLE001 - one backend's failure does not stop the others
                status, reason = lifecycle.failure(exc)
                self.results.append(BenchResult(backend, precision, 0, status, reason=reason,
                                                device=self.device_info.name))
                free_device_memory()
                self._advance(f"{backend} {precision}", len(batches))
                return
            for i, batch in enumerate(batches):
                # not beaten before it was prepared: this config's batches measured since may beat it now
                row = beaten[i] or self._beaten_earlier(backend, precision, batch)
                if row is not None:
                    trace(f"{backend} {precision} b{batch}: pre-screened or beaten against an earlier run's figures; "
                          "not measured")
                    self.results.append(row)
                    self._advance(f"{backend} {precision} batch {batch}")
                    continue
                self._advance(f"{backend} {precision} batch {batch}", 0)
                result = self._run_config(runner, backend, precision, batch, baseline)
                self.results.append(result)
                if self.record is not None:
                    self.record.add(result, self._inputs(batch))
                self._advance(f"{backend} {precision} batch {batch}")
                if result.status == "oom":
                    self._advance(f"{backend} {precision}", len(batches) - i - 1)
                    break

    def _memory_used(self) -> int | None:
        if self.nvml is None:
            return None
        from modelcost.hardware.nvml_sampler import memory_used_bytes

        return memory_used_bytes(self.nvml, self.handle)

    def _run_config(self, runner: Any, backend: str, precision: str, batch: int, baseline: int | None) -> BenchResult:
        result = BenchResult(backend, precision, batch, "ok", device=self.device_info.name)
        problem = self.model.batch_problem(batch)
        if problem is not None:
            result.status, result.reason = "failed", problem
            return result
        arrays, input_notes = self.model.host_inputs(batch)
        result.notes.extend(list(getattr(runner, "notes", [])) + input_notes)
        session = None
        ahead = self.model.compile_ahead
        if ahead is not None and registry.info(backend).compile:
            got = ahead.wait_for(precision, batch)
            trace(f"{backend} {precision} b{batch}: background compile "
                  f"{'ready' if got else 'not ready: compiling here'}")
        try:
            with lifecycle.session(runner, batch, arrays) as session:
                trace(f"{backend} {precision} b{batch}: session built ({getattr(session, 'build_s', 0.0):.1f} s)")
                result.build_s = runner.build_s + getattr(session, "build_s", 0.0)
                result.notes.extend(getattr(session, "notes", []))
                if self.screen:
                    result = self._screen_then_measure(session, result, arrays, baseline)
                else:
                    self._measure(session, result, arrays, baseline)
        except Exception as exc:  # noqa: BLE001
            status, reason = lifecycle.failure(exc)
            result.status = "failed" if status == "unavailable" else status
            result.reason = (f"out of memory at batch {batch}; larger batches of this backend were skipped"
                             if status == "oom" else reason)
            result.latency_ms = result.e2e_latency_ms = None
            result.throughput_ips = None
        result.extra.cpu_nodes = getattr(runner, "cpu_nodes", None)  # as the first run found them (ort-cuda)
        if result.status == "screened":  # its memory goes back before the next config, as a failed one's does
            free_device_memory()
        return result

    def _screen_then_measure(self, session: Any, result: BenchResult, arrays: list[Any],
                             baseline: int | None) -> BenchResult:
        """bench.screening: the short measurement; the full one only if the config can still matter."""
        blank = dataclasses.replace(result, notes=list(result.notes), extra=dataclasses.replace(result.extra))
        accuracy = self._measure(session, result, arrays, baseline, screening_config(self.config))
        seen = [r for r in self.results if r.latency_ms is not None and r.status in ("ok", "screened")]
        why = screen_out_reason(result, seen, rejects=self.rejects)
        trace(f"{config_label(result)}: screened, {'dropped' if why else 'kept'}")
        if why is not None:
            result.status, result.reason = "screened", why
            result.extra.measurement = "screening"
            return result
        full = blank
        self._measure(session, full, arrays, baseline, after_screening(self.config), accuracy, screened=result)
        trace(f"{config_label(full)}: full measurement done")
        full.extra.measurement = "full (after screening)"
        full.extra.screening_p50_ms = result.latency_ms.p50 if result.latency_ms else None
        return full

    def _measure(self, session: Any, result: BenchResult, arrays: list[Any], baseline: int | None,
                 config: BenchConfig | None = None, accuracy: Compared | None = None,
                 screened: BenchResult | None = None) -> Compared:
        """Time the session into ``result``; returns the accuracy it used. After a screening of the same session
        (``screened``, with its ``accuracy``): the warm-up's first window is compared with the screening's median,
        and the screening's accuracy is taken (the same outputs: the same graph on the same inputs), not computed
        again."""
        config = config or self.config
        torch = None
        if session.device == "cuda":
            import torch
        clock = lifecycle.session_clock(session)
        marks = [time.perf_counter()]  # for the trace line: where this measurement's wall time went
        result.first_inference_ms = clock.time_ms(session.run)
        sampler = self._sampler()
        summary: dict[str, Any] = {}

        def on_timed(starting: bool) -> None:
            if sampler is None:
                return
            if starting:
                sampler.start()
            else:
                summary["s"] = sampler.stop()

        load = stability.CpuLoad().start()
        exporting = self.model.export_ahead is not None and self.model.export_ahead.running()
        compiling = self.model.compile_ahead is not None and self.model.compile_ahead.running()
        marks.append(time.perf_counter())
        timed = lifecycle.time_session(session, config, on_timed,
                                       screened.latency_ms.p50 if screened is not None and screened.latency_ms
                                       else None, clock)
        m, cpu = timed.measurement, timed.pinned_cpu
        marks.append(time.perf_counter())
        if exporting:
            result.notes.append(export_ahead.NOTE)
        if compiling:
            result.notes.append(compile_ahead.NOTE)
        result.extra.pinned_cpu, result.extra.host_pace_us = cpu, timed.host_pace_us
        result.latency_ms = latency_stats(m.samples_ms)
        result.throughput_ips = result.batch_size / result.latency_ms.p50 * 1e3
        result.budget_hit = m.budget_hit
        result.timing = session.timing
        self._memory(session, result, summary.get("s"), baseline)  # before anything else allocates (accuracy, e2e)
        info = result.extra
        info.samples, info.warmup_iters, info.warmup_settled = len(m.samples_ms), m.warmup_iters, m.warmup_settled
        info.median_ci95_rel, info.stop_reason, info.timed_s = m.rel_ci, m.stop_reason, round(m.timed_s, 3)
        info.clock, info.block_medians_ms = clock.kind, block_medians(m.samples_ms)
        if m.budget_hit:
            result.notes.append(m.stop_reason)
        if not m.warmup_settled:
            limit = min(config.warmup_max_s, config.max_time_s)
            result.notes.append(f"warm-up did not settle within {limit:g} s ({m.warmup_iters} calls)")
        if accuracy is None:
            accuracy = self.reference.compare(session, result.batch_size)
        else:
            result.extra.accuracy_outputs = "this session's screening outputs (the same inputs)"
        result.accuracy = accuracy.stats
        if accuracy.note is not None:
            result.notes.append(accuracy.note)
        result.extra.accuracy_compared_on = accuracy.on or None
        marks.append(time.perf_counter())
        if config.e2e_min_iters > 0:
            sync = torch.cuda.synchronize if torch is not None else None
            e2e = measure_e2e(WallClock(sync), lambda: session.run_e2e(arrays), config)
            result.e2e_latency_ms = latency_stats(e2e)
            result.extra.e2e_timing = (
                "host wall time (perf_counter) from host inputs to host outputs: host->device input copies, the "
                "forward, device->host output copies, synchronised" if torch is not None else
                "host wall time (perf_counter) from fresh host inputs to outputs on the CPU")
        else:
            result.extra.e2e_timing = "not measured (a screening measurement has no end-to-end loop)"
        load.stop()
        result.unstable = stability.instability(result.latency_ms, result.e2e_latency_ms, load)
        result.extra.other_cpu_share, result.extra.load_avg_1m = load.other_share, load.load_avg_1m
        marks.append(time.perf_counter())
        self._power(result, summary.get("s"), len(m.samples_ms), sampler)
        marks.append(time.perf_counter())
        step = [f"{b - a:.2f}" for a, b in zip(marks, marks[1:])]
        trace(f"{config_label(result)}: first call {step[0]} s, warm-up {m.warmup_s:.2f} s ({m.warmup_iters} calls), "
              f"timed {m.timed_s:.2f} s ({len(m.samples_ms)}), loop total {step[1]} s, accuracy {step[2]} s, "
              f"e2e {step[3]} s, load check and power {step[4]} s")
        return accuracy

    def _sampler(self) -> Any:
        if self.nvml is None:
            return None
        from modelcost.hardware.nvml_sampler import NvmlSampler

        return NvmlSampler(self.nvml, self.handle, self.config.sample_interval_s)

    def _memory(self, session: Any, result: BenchResult, summary: Any, baseline: int | None) -> None:
        peak, basis = session.memory_peak_bytes()
        if basis == "nvml":
            if summary is not None and summary.memory_used_max_bytes is not None and baseline is not None:
                peak = max(0, summary.memory_used_max_bytes - baseline)
                basis = ("NVML device memory used: peak during the timed run minus before the backend was prepared "
                         "(arena, workspaces, weights, I/O buffers)")
            else:
                basis = ""
        result.gpu_memory_peak_bytes = peak
        result.extra.gpu_memory_basis = basis or None

    def _power(self, result: BenchResult, summary: Any, calls: int, sampler: Any) -> None:
        if summary is None:
            if self.nvml_reason:
                result.notes.append(self.nvml_reason)
            return
        result.power_w_mean = summary.power_w_mean
        result.gpu_util_mean = summary.gpu_util_mean
        result.sm_clock_mhz_mean = summary.sm_clock_mhz_mean
        result.throttle_reasons = summary.throttles
        if summary.energy_j is not None and calls:
            result.energy_j_per_inference = summary.energy_j / calls
            result.extra.energy_source = summary.energy_source
            result.extra.energy_j_per_item = summary.energy_j / calls / result.batch_size
        result.extra.mem_clock_mhz_mean = summary.mem_clock_mhz_mean
        result.extra.temperature_c_max = summary.temperature_c_max
        result.extra.nvml_samples = summary.samples
        if self.config.samples_csv is not None:
            from modelcost.hardware.nvml_sampler import append_csv

            append_csv(self.config.samples_csv, sampler.rows(result.backend, result.precision, result.batch_size))


def run_benchmarks(model: BenchModel, *, backends: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
                   batch_sizes: Sequence[int] = (1,), config: BenchConfig | None = None,
                   results: list[BenchResult] | None = None, progress: bool = False, screen: bool = False,
                   rejects: Rejects | None = None, exhaustive: bool = False, plan: Plan | None = None
                   ) -> tuple[list[BenchResult], DeviceInfo]:
    """Benchmark ``model``; returns (results, the device). Pass ``results`` to keep partial results on interrupt.
    ``screen``: the short measurement first and the full one only for contenders (``bench.screening``);
    ``exhaustive``: without ``backends`` / ``precisions``, every backend at every precision (``make_plan``).
    ``plan``: one made already (``pipeline.sweep_plan``), run as it is; backends, precisions and exhaustive are then
    the plan's."""
    config = config or BenchConfig()
    results = results if results is not None else []
    if not batch_sizes or any(int(b) < 1 for b in batch_sizes):
        raise ModelcostError("batch sizes must be positive integers, e.g. {batch_sizes} 1,8,32", fields="batch_sizes")
    if plan is None:
        plan = make_plan(model, backends, precisions, config, exhaustive)
    if plan.runnable:
        refuse_impossible_batches(model, batch_sizes)
    total = len(plan.runnable) * len(batch_sizes)
    if not progress or total == 0:
        sweep = Sweep(model, plan, batch_sizes, config, results, screen=screen, rejects=rejects)
        sweep.run()
        return results, sweep.device_info
    from modelcost.bench.progress import progress_bar

    with progress_bar(total) as advance:
        sweep = Sweep(model, plan, batch_sizes, config, results, advance, screen=screen, rejects=rejects)
        sweep.run()
    return results, sweep.device_info
