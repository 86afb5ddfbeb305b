"""Report blocks of a training analysis (see ``sections.py``): one builder for the Markdown / HTML report and
the terminal (``console_train.py`` renders these same tables with rich)."""

from __future__ import annotations

from modelcost.core.training import TrainingReport
from modelcost.core.units import binary_bytes, si
from modelcost.report.blocks import Block, Heading, Para, Table, caveat_blocks


def _macs(value: int) -> str:
    return f"{value:,} ({si(value)})"


def static_table(t: TrainingReport) -> Table:
    b = t.batch_size
    rows = [
        ["model / batch", f"{t.model}, batch {b}, {t.optimizer}, {t.precision}"],
        ["parameters", f"{t.trainable_params:,} trainable, {t.frozen_params:,} frozen"],
        ["forward MACs / FLOPs", f"{_macs(t.forward_macs)} / {si(t.forward_flops)}"],
        ["backward MACs (input grad)", _macs(t.backward_input_grad_macs)],
        ["backward MACs (weight grad)", _macs(t.backward_weight_grad_macs)],
        ["backward FLOPs", f"{t.backward_flops:,} ({si(t.backward_flops)})"],
        ["optimizer step FLOPs", f"{t.optimizer_flops:,} ({si(t.optimizer_flops)})"],
        ["MACs per step / per sample", f"{_macs(t.macs_per_step)} / {_macs(t.macs_per_sample)}"],
        ["FLOPs per step / per sample", f"{t.flops_per_step:,} ({si(t.flops_per_step)}) / {si(t.flops_per_sample)}"],
    ]
    if t.max_batch_size is not None:
        fits = f"{t.max_batch_size:,} on {t.max_batch_target} ({binary_bytes(t.max_batch_memory_bytes)})"
        rows.append(["largest batch that fits", fits])
    if t.uncounted_ops:
        rows.append(["uncounted ops", ", ".join(f"{k} x{v}" for k, v in sorted(t.uncounted_ops.items()))])
    return Table(["training step (static, meta)", "value"], rows)


def memory_table(t: TrainingReport) -> Table:
    m = t.memory
    rows = [["weights", binary_bytes(m.weights_bytes)], ["gradients", binary_bytes(m.gradients_bytes)],
            ["optimizer states", binary_bytes(m.optimizer_state_bytes)],
            ["fp32 master weights", binary_bytes(m.master_weights_bytes)],
            ["activations saved for backward", binary_bytes(m.activations_bytes)],
            ["inputs", binary_bytes(m.inputs_bytes)], ["outputs", binary_bytes(m.outputs_bytes)],
            [f"predicted peak (simulated step{', ' + m.peak_phase if m.peak_phase else ''})",
             binary_bytes(m.peak_bytes)],
            ["per extra sample (peak)", binary_bytes(m.activations_per_sample_bytes)]]
    if m.peak_upper_bound_bytes:
        rows.append(["upper bound (all activations and gradients at once)", binary_bytes(m.peak_upper_bound_bytes)])
    return Table([f"training memory at batch {t.batch_size}", "bytes"], rows, [False, True])


def _f(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def bench_table(t: TrainingReport) -> Table:
    rows = []
    for r in t.benchmarks:
        rows.append([r.precision, r.variant, str(r.batch_size), r.status, _f(r.step_time_ms, ".2f"),
                     _f(r.samples_per_second, ",.1f"), _f(r.tokens_per_second, ",.0f"),
                     _f(None if r.mfu is None else 100 * r.mfu, ".1f"), binary_bytes(r.peak_memory_bytes),
                     binary_bytes(r.predicted_peak_bytes), r.reason or ""])
    headers = ["precision", "variant", "batch", "status", "step ms (p50)", "samples/s", "tokens/s", "MFU %",
               "peak memory", "predicted peak", "reason"]
    return Table(headers, rows, [False, False, True, False, True, True, True, True, True, True, False])


def training_blocks(t: TrainingReport) -> list[Block]:
    blocks: list[Block] = [Heading("Training"), static_table(t), memory_table(t),
                           Para(f"Predicted peak: {t.memory.peak_basis}.")]
    if t.benchmarks:
        blocks.append(Heading("Measured training steps", 3))
        timings = sorted({r.timing for r in t.benchmarks if r.timing})
        blocks += [Para(text) for text in timings]
        blocks.append(bench_table(t))
    return blocks + caveat_blocks(t, notes="Training notes", problems="Training problems")
