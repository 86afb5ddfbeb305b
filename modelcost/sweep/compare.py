"""``modelcost results DB --compare A B``: a regression gate that knows the noise between runs.

Matching. Configs are matched by identity (``sweep/noise.identity``: model name, backend, precision, batch size,
GPU type), not by content hash: comparing across code or model versions is what a gate is for. A pair whose model
content (hash, input shapes) or library versions differ is compared all the same, with a note that says so.

Judging. Each side's figure is its per-run p50s (every repeat of the run, ``sweep --repeats``); the between-run
spread comes from both sides' repeats pooled with the stored noise baseline of the config
(``results --noise --save-noise``; a baseline measured on A or B themselves is worked out again without them:
``noise.stored_baseline``), and ``decide/noise.py`` gives each config one verdict: regression,
improvement, no change, or too noisy to judge, with false discoveries controlled over the configs judged
together. A config ``ok`` in A that has no figure in B (failed, out of memory, unavailable) is a regression too.

Left out, each with why: configs in only one run (a resume that skipped what an earlier run measured is named as
such), configs without a figure in A, or in neither. Nothing comparable is an error (``ModelcostError``), so a
gate never passes while comparing nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.decide.noise import NO_SPREAD, RESOLUTION_PCT, TOLERANCE_PCT, Judgement, Spread, contrast, decide
from modelcost.sweep.noise import Identity, figure_of, identity, identity_label, measured, stored_baseline


@dataclass
class Change:
    """One config in both runs: its figures (median over each run's repeats), the verdict and what to know."""

    label: str  # "resnet50 ort-cuda fp16 b64"
    gpu: str
    a_ms: float | None
    b_ms: float | None
    verdict: str  # decide.noise.VERDICTS, or "regression" for a config lost in B
    detail: str  # the verdict's figures or reason in words
    notes: list[str] = field(default_factory=list)  # content / versions changed, unstable runs
    judgement: Judgement | None = None
    runs: tuple[int, int] = (0, 0)

    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


@dataclass(frozen=True)
class LeftOut:
    label: str
    gpu: str
    why: str


@dataclass
class Comparison:
    a_id: int
    b_id: int
    changes: list[Change]
    left_out: list[LeftOut]
    tolerance_pct: float
    resolution_pct: float

    @property
    def regressions(self) -> int:
        return sum(c.regression for c in self.changes)

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.changes)


def compare_runs(db: Any, run_a: str, run_b: str, tolerance_pct: float = TOLERANCE_PCT,
                 resolution_pct: float = RESOLUTION_PCT) -> Comparison:
    """Run B vs run A (module docstring); refused when nothing is comparable."""
    a_id, b_id = db.resolve_run(run_a), db.resolve_run(run_b)
    if a_id == b_id:
        raise ModelcostError(f"{{compare}} {run_a} {run_b}: both name run {a_id}; compare two different runs",
                             fields="compare")
    runs = {r["run_id"]: r for r in db.runs()}
    cmp = compare_rows(db.results("WHERE run_id = ?", (a_id,)), db.results("WHERE run_id = ?", (b_id,)),
                       stored_baseline(db, leave_out=(a_id, b_id)), tolerance_pct, resolution_pct,
                       skipped=(_skipped(runs[a_id]), _skipped(runs[b_id])), ids=(a_id, b_id))
    if not cmp.changes:
        why = "; ".join(f"{o.label} ({o.gpu}): {o.why}" for o in cmp.left_out[:6]) or "neither run has rows"
        more = f" (and {len(cmp.left_out) - 6} more)" if len(cmp.left_out) > 6 else ""
        raise ModelcostError(f"{{compare}} {run_a} {run_b}: no config is comparable between run {a_id} and run {b_id}, "
                             f"so nothing was checked: {why}{more}", fields="compare")
    return cmp


def _skipped(run: dict[str, Any]) -> set[str]:
    return {s.get("config_key", "") for s in run.get("skipped_configs") or [] if isinstance(s, dict)}


def compare_rows(rows_a: Sequence[dict[str, Any]], rows_b: Sequence[dict[str, Any]],
                 baseline: dict[Identity, Spread] | None = None, tolerance_pct: float = TOLERANCE_PCT,
                 resolution_pct: float = RESOLUTION_PCT, skipped: tuple[set[str], set[str]] = (set(), set()),
                 ids: tuple[int, int] = (0, 0)) -> Comparison:
    """The comparison of two runs' rows (every repeat of each); ``skipped``: the config keys each run's resume
    skipped."""
    side_a, side_b = _by_identity(rows_a), _by_identity(rows_b)
    changes, pending, left = [], [], []
    for ident in dict.fromkeys([*side_a, *side_b]):
        a, b = side_a.get(ident, []), side_b.get(ident, [])
        lab, gpu = identity_label(ident), ident[-1]
        why = _left_out_why(a, b, skipped)
        if why:
            left.append(LeftOut(lab, gpu, why))
            continue
        fa, fb = figure_of(a), figure_of(b)
        change = Change(lab, gpu, fa.p50_ms if fa else None, fb.p50_ms if fb else None, "", "", _notes(a, b),
                        runs=(fa.runs if fa else 0, fb.runs if fb else 0))
        if fb is None:  # ok in A (else left out), no figure in B
            statuses = sorted({r["status"] for r in b})
            reason = next((r["reason"] for r in b if r.get("reason")), None)
            change.verdict = "regression"
            change.detail = f"ok -> {'/'.join(statuses)}" + (f" ({reason[:160]})" if reason else "")
        else:
            pending.append((change, contrast([r["latency_p50_ms"] for r in a if measured(r)],
                                             [r["latency_p50_ms"] for r in b if measured(r)],
                                             (baseline or {}).get(ident, NO_SPREAD))))
        changes.append(change)
    for (change, _), j in zip(pending, decide([t for _, t in pending], tolerance_pct=tolerance_pct,
                                              resolution_pct=resolution_pct), strict=True):
        change.verdict, change.detail, change.judgement = j.verdict, j.why, j
    return Comparison(ids[0], ids[1], changes, left, tolerance_pct, resolution_pct)


def _by_identity(rows: Sequence[dict[str, Any]]) -> dict[Identity, list[dict[str, Any]]]:
    out: dict[Identity, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(identity(r), []).append(r)
    return out


def _left_out_why(a: list[dict[str, Any]], b: list[dict[str, Any]], skipped: tuple[set[str], set[str]]) -> str:
    """Why a config is not compared ('' when it is): in one run only, or no figure in A."""
    for mine, other, name, other_name, their_skips in ((a, b, "A", "B", skipped[1]), (b, a, "B", "A", skipped[0])):
        if mine and not other:
            if any(r["config_key"] in their_skips for r in mine):
                return (f"only in run {name}: run {other_name} skipped it as already measured by an earlier run "
                        f"(a resume re-measures only some configs); compare against the run that measured it, "
                        f"or sweep with --force")
            return f"only in run {name}: run {other_name} did not measure it"
    if not any(measured(r) for r in a):
        got_a = "/".join(sorted({r["status"] for r in a}))
        if any(measured(r) for r in b):
            return f"no figure in run A ({got_a}); run B measured it"
        return f"no figure in either run (A {got_a}, B {'/'.join(sorted({r['status'] for r in b}))})"
    return ""


def _notes(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    notes = []
    hashes = ({r["model_hash"] for r in a}, {r["model_hash"] for r in b})
    if hashes[0] != hashes[1]:
        notes.append(f"model content changed (hash {_short(hashes[0])} -> {_short(hashes[1])}): compared by name")
    shapes = ({str(r.get("input_shapes") or []) for r in a}, {str(r.get("input_shapes") or []) for r in b})
    if shapes[0] != shapes[1]:
        notes.append(f"input shapes changed ({', '.join(sorted(shapes[0]))} -> {', '.join(sorted(shapes[1]))})")
    changed = _version_changes(a, b)
    if changed:
        notes.append("library versions changed: " + ", ".join(changed))
    for name, rows in (("A", a), ("B", b)):
        flagged = [r for r in rows if r.get("unstable")]
        if flagged:
            notes.append(f"unstable in {len(flagged)} of {len(rows)} run(s) of {name} ({flagged[0]['unstable'][0]})")
    return notes


def _short(hashes: set[str]) -> str:
    return "/".join(sorted(h[:8] for h in hashes))


def _version_changes(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    va, vb = (rows[-1].get("versions") or {} for rows in (a, b))
    if not isinstance(va, dict) or not isinstance(vb, dict):
        return []
    return [f"{k} {va.get(k, '-')} -> {vb.get(k, '-')}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]
