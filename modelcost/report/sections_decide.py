"""Report blocks for a recommendation and for a BASE vs CANDIDATE comparison (see ``sections.py``)."""

from __future__ import annotations

from modelcost.core.decisions import Comparison, ModelSide, Recommendation
from modelcost.core.text import config_label
from modelcost.core.units import binary_bytes, number, si
from modelcost.report.blocks import Block, Bullets, Heading, Para, Table
from modelcost.report.sections_bench import accuracy_text

_CONSTRAINT_WORDS = {
    "max_latency_ms": "max latency (ms)", "min_throughput_ips": "min throughput (IPS)",
    "max_memory_gb": "max GPU memory (GB)", "max_accuracy_drop_pct": "max accuracy drop (%)",
}


def recommendation_blocks(rec: Recommendation) -> list[Block]:
    blocks: list[Block] = [Heading("Recommendation")]
    given = [f"{_CONSTRAINT_WORDS.get(k, k)}: {number(v)}" for k, v in rec.constraints.items()]
    blocks.append(Para(f"Objective: best {rec.objective}; latency figure: {rec.latency_stat}; constraints: "
                       + (", ".join(given) if given else "none")))
    if rec.best is not None:
        unsure = f" (tentative, not reliable: {'; '.join(rec.caveats)})" if rec.caveats else ""
        blocks.append(Para(f"Recommended: {config_label(rec.best)}{unsure}", strong=True))
    else:
        blocks.append(Para("Nothing meets the constraints.", strong=True))
    blocks.append(Bullets(list(rec.reasons)))
    if rec.pareto:
        rows = []
        for r in rec.pareto:
            lat = getattr(r.latency_ms, rec.latency_stat) if r.latency_ms else None
            mark = "yes" if r in rec.feasible else "no"
            rows.append([config_label(r), "-" if lat is None else f"{lat:.3f}", number(r.throughput_ips or 0),
                         mark, accuracy_text(r)])
        blocks += [Heading("Latency vs throughput: Pareto front", 3),
                   Para(f"Measured configs that no other config beats on both {rec.latency_stat} latency and "
                        "throughput, fastest first."),
                   Table(["config", f"{rec.latency_stat} ms", "IPS", "meets constraints", "accuracy"], rows,
                         [False, True, True, False, False])]
    if rec.unranked:
        blocks += [Heading("Not ranked (too few samples)", 3), Bullets(list(rec.unranked))]
    unstable = [line for line in rec.skipped if "unstable timings" in line]
    if unstable:  # the configs that were not measured are listed once, under Benchmarks
        blocks += [Heading("Not decided on (unstable timings)", 3), Bullets(unstable)]
    return blocks


def _side_row(label: str, s: ModelSide) -> list[str]:
    macs = ", ".join(f"{k}: {si(v)}" for k, v in sorted(s.macs_by_dtype.items(), key=lambda kv: -kv[1])) or "-"
    store = ", ".join(f"{k}: {binary_bytes(v)}" for k, v in sorted(s.storage_by_dtype.items(), key=lambda kv: -kv[1]))
    ge = "" if s.compute_complete else "≥"  # an incomplete count is a lower bound, never shown as a result
    return [label, s.name, s.precision or "-", binary_bytes(s.file_size_bytes), binary_bytes(s.storage_bytes),
            store or "-", "-" if s.params is None else f"{s.params:,}", "-" if s.macs is None else f"{ge}{s.macs:,}",
            macs]


def comparison_blocks(cmp: Comparison) -> list[Block]:
    b, c = cmp.base, cmp.candidate
    blocks: list[Block] = [Heading("Comparison"), Heading("Static differences", 3)]
    rows = [_side_row("base", b), _side_row("candidate", c)]
    blocks.append(Table(["", "model", "precision", "file size", "weights", "weights by dtype", "params", "MACs",
                         "MACs by dtype"], rows, [False, False, False, True, True, False, True, True, False]))
    if b.storage_bytes and c.storage_bytes is not None:
        ratio = c.storage_bytes / b.storage_bytes
        blocks.append(Para(f"Candidate weights take {ratio * 100:.1f}% of the base's "
                           f"({binary_bytes(c.storage_bytes)} vs {binary_bytes(b.storage_bytes)})."))
    ops = sorted(set(b.op_counts) | set(c.op_counts))
    diff = [[o, str(b.op_counts.get(o, 0)), str(c.op_counts.get(o, 0))] for o in ops
            if b.op_counts.get(o, 0) != c.op_counts.get(o, 0)]
    if diff:
        blocks += [Para("Ops whose count differs:"), Table(["op", "base", "candidate"], diff, [False, True, True])]
    blocks += speed_blocks(cmp)
    if cmp.accuracy:
        rows = [[be, f"{a.cosine:.6f}", number(a.max_abs_err, 3), number(a.max_rel_err, 3),
                 "-" if a.top1_agreement is None else f"{a.top1_agreement * 100:.2f}%"] for be, a in cmp.accuracy]
        blocks += [Heading("Accuracy: candidate vs base on the same inputs", 3), Para(f"Inputs: {cmp.data}"),
                   Table(["backend", "cosine", "max abs err", "max rel err", "top-1 agreement"], rows,
                         [False, True, True, True, True])]
    if cmp.skipped:
        blocks += [Heading("Not measured", 3), Bullets(list(cmp.skipped))]
    if cmp.notes:
        blocks += [Heading("Comparison notes", 3), Bullets(list(cmp.notes))]
    return blocks


def speed_blocks(cmp: Comparison) -> list[Block]:
    if not cmp.speed:
        return []
    blocks: list[Block] = [Heading("Speed: interleaved runs", 3)]
    first = cmp.speed[0]
    blocks.append(Para(
        f"Base and candidate ran in alternating blocks (A B, B A, ...) of {first.runs_per_block} runs on the same "
        f"backend and batch size; each block gives its median latency. Interval: {first.method}. "
        "'Faster by X%' means the base takes X% longer (X% more throughput); 'slower by Y%' means the "
        "candidate takes Y% longer."))
    rows = [[s.backend, str(s.batch_size), f"{s.base_precision} -> {s.candidate_precision}", str(s.blocks),
             f"{s.base_ms:.4f}", f"{s.candidate_ms:.4f}", f"{s.ratio:.3f}x", s.verdict] for s in cmp.speed]
    blocks.append(Table(["backend", "batch", "precision", "block pairs", "base ms", "candidate ms", "speedup",
                         "verdict"], rows, [False, True, False, True, True, True, True, False]))
    hints = [f"{s.backend} b{s.batch_size}: {h}" for s in cmp.speed for h in s.hints]
    if hints:
        blocks += [Heading("Why the speedup is absent or small (from what was measured)", 3), Bullets(hints)]
    return blocks
