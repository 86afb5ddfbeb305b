"""Choose a deployment config (backend + precision + batch size) from measured benchmarks. Pure functions.

Definitions, used everywhere the recommendation is shown:
- latency: the ``latency_stat`` percentile of the measured latency (default p99: a latency limit is a tail
  limit); the Pareto front uses the same statistic.
- throughput: ``BenchResult.throughput_ips`` (batch / median latency).
- samples: a config is ranked only when its latency has enough samples for the median (throughput) and, where
  ``latency_stat`` is used (a ``max_latency_ms`` limit or the latency objective), for it too (``core/samples.py``:
  p50 >= 6, p90 >= 10, p95 >= 20, p99 >= 100); otherwise it is listed in ``unranked`` with its sample count, and
  takes no part in the checks, the ranking or the Pareto front. A throughput objective without a latency limit
  ranks on the median alone, so a batch-64 config with 55 samples is not dropped for a p99 nobody asked about.
- memory: ``gpu_memory_peak_bytes`` in GB of 10^9 bytes. Not measured (CPU backends) -> the memory
  constraint cannot be shown to hold, and the config fails it ("not measured").
- unstable timings (``BenchResult.unstable``: large spread or tail, a busy machine): such a config is neither
  recommended nor rejected; it is listed as skipped with its reasons.
- nothing to decide on (every config unstable, or none with the samples its statistics need): the pick is made
  all the same from what was measured (``_tentative``), with ``caveats`` that say how unsure it is (its flags,
  its sample counts), so a run always says what it would pick; nothing is picked only when nothing was measured
  or no config meets the constraints even on those figures.
- accuracy drop: see decide/constraints.py, which checks the limits.
- ties within the measurement noise, and the rules that break them: see decide/ties.py.
"""

from __future__ import annotations

from modelcost.bench import registry
from modelcost.core.decisions import ConstraintCheck, Recommendation
from modelcost.core.text import config_label
from modelcost.core.samples import too_few_reason
from modelcost.core.types import BenchResult
from modelcost.core.units import number
from modelcost.decide.constraints import GB, Constraints, accuracy_drop_pct, check_config, check_constraints, latency_of
from modelcost.decide.ties import break_tie, objective_interval

label = config_label  # 'ort-cuda fp16 b8': how a config is named in every recommendation text


def pareto_front(results: list[BenchResult], stat: str = "p50") -> list[BenchResult]:
    """Measured configs that no other config beats on both lower latency and higher throughput; by latency."""
    pts = [r for r in results if r.status == "ok" and latency_of(r, stat) is not None and r.throughput_ips]
    front = []
    for p in pts:
        lp, tp = latency_of(p, stat), p.throughput_ips
        dominated = any(
            latency_of(q, stat) <= lp and q.throughput_ips >= tp  # type: ignore[operator]
            and (latency_of(q, stat) < lp or q.throughput_ips > tp)  # type: ignore[operator]
            for q in pts if q is not p
        )
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda r: (latency_of(r, stat), -(r.throughput_ips or 0)))


def _score(r: BenchResult, objective: str, stat: str) -> tuple[float, float]:
    """Sort key, best first: throughput (higher) then latency (lower), or the other way round."""
    lat = latency_of(r, stat) or float("inf")
    thr = r.throughput_ips or 0.0
    return (-thr, lat) if objective == "throughput" else (lat, -thr)


def not_measured_lines(results: list[BenchResult]) -> list[str]:
    """One line per failed / out-of-memory config, then the grouped ones (report.sections_bench.grouped_not_measured:
    unavailable backends one line per reason, the configs a re-run left out one line)."""
    from modelcost.report.sections_bench import grouped_not_measured

    singles, grouped = grouped_not_measured(results)
    return [f"{label(r)}: {r.status}" + (f" ({r.reason})" if r.reason else "") for r in singles] + grouped


def recommend(results: list[BenchResult], constraints: Constraints | None = None,
              objective: str = "throughput") -> Recommendation:
    """The measured config that meets every constraint with the best ``objective``, with reasons; the Pareto
    front; and, when nothing fits, which constraint fails and by how much."""
    c = constraints or Constraints()
    check_constraints(c, objective)
    ok = [r for r in results if r.status == "ok" and r.latency_ms is not None]
    measured = [r for r in ok if not r.unstable]  # noisy timings decide nothing, either way
    ranked, rec_unranked = _enough_samples(measured, c.latency_stat if uses_latency_stat(c, objective) else "p50")
    rec = Recommendation(objective=objective, latency_stat=c.latency_stat, constraints=c.as_dict(),
                         pareto=pareto_front(ranked, c.latency_stat), considered=len(measured), unranked=rec_unranked)
    rec.skipped = not_measured_lines([r for r in results if r not in ok])
    rec.skipped += [f"{label(r)}: unstable timings, not decided on ({'; '.join(r.unstable)}); re-run it on a quiet "
                    "machine" for r in ok if r.unstable]
    if not measured:
        if ok:
            rec.reasons.append(f"all {len(ok)} measured configs had unstable timings (listed as skipped), so "
                               "nothing is recommended or rejected; re-run on a quiet machine")
            rec.failing.append("no config with stable timings")
            return _tentative(rec, ok, c)
        rec.reasons.append("no config was measured successfully, so there is nothing to recommend")
        rec.failing.append("no measured config")
        return rec
    if not ranked:
        rec.reasons.append(f"none of the {len(measured)} measured configs has enough timed samples to be ranked on "
                           f"{c.latency_stat}; a longer --max-time-s or a larger --min-iters gives more")
        rec.failing.append("too few samples: " + "; ".join(rec_unranked))
        rec.reasons += rec.failing
        return _tentative(rec, ok, c)
    measured = ranked
    for r in measured:
        rec.checks.append((label(r), check_config(r, c)))
    rec.feasible = sorted((r for r, (_, ch) in zip(measured, rec.checks) if all(x.ok for x in ch)),
                          key=lambda r: _score(r, objective, c.latency_stat))
    if rec.feasible:
        rec.tie, rec.tie_rule = break_tie(rec.feasible, objective, c.latency_stat)
        if rec.tie:
            rec.feasible.remove(rec.tie[0])
            rec.feasible.insert(0, rec.tie[0])
        rec.best = rec.feasible[0]
        rec.reasons = _why_best(rec, c)
    else:
        rec.failing = _why_nothing(rec.checks, c)
        rec.reasons = [f"none of the {len(measured)} measured configs meets every constraint"] + rec.failing
    return rec


def run_pick(results: list[BenchResult]) -> Recommendation | None:
    """What an analyze / bench run would deploy: ``recommend`` with no constraints (best throughput, p99), or None
    when nothing was measured. The console's found block and the report folder both show this one pick."""
    return recommend(results) if any(r.status == "ok" for r in results) else None


def uses_latency_stat(c: Constraints, objective: str) -> bool:
    """Whether ``latency_stat`` decides anything: a latency limit, or the latency objective (the throughput
    objective ranks on the median alone)."""
    return objective == "latency" or c.max_latency_ms is not None


def _tentative(rec: Recommendation, ok: list[BenchResult], c: Constraints) -> Recommendation:
    """Nothing could be decided on (every config unstable, or too few samples): pick from what was measured all the
    same, on the same constraints and objective, and say how unsure the pick is (``rec.caveats``). ``rec`` keeps
    its reasons and failing lines below the pick; nothing is picked when no config meets the constraints."""
    checks = [(r, check_config(r, c)) for r in ok]
    fits = sorted((r for r, ch in checks if all(x.ok for x in ch)), key=lambda r: _score(r, rec.objective,
                                                                                        rec.latency_stat))
    if not fits:
        return rec
    best = fits[0]
    rec.best, rec.feasible = best, fits
    rec.caveats = _caveats(best, c.latency_stat if uses_latency_stat(c, rec.objective) else "p50")
    head = (f"tentative pick: {label(best)}" + (" (unstable)" if best.unstable else "")
            + f", the best {rec.objective} of the {len(fits)} config{'s' if len(fits) != 1 else ''} measured that "
            "meet every constraint, ranked on figures that are not reliable: " + "; ".join(rec.caveats))
    rec.reasons.insert(0, head)
    rec.failing = []
    return rec


def _caveats(r: BenchResult, stat: str) -> list[str]:
    """How unsure a tentative pick is, in words: its stability flags and its too-small sample counts."""
    out = [f"unstable timings ({'; '.join(r.unstable)})"] if r.unstable else []
    out += [w for w in dict.fromkeys(too_few_reason(r.latency_ms, s) for s in ("p50", stat)) if w]
    return out or ["the other configs could not be ranked"]


def _enough_samples(measured: list[BenchResult], stat: str) -> tuple[list[BenchResult], list[str]]:
    """(configs with enough samples for the median and ``stat``, 'label: why not' for the others)."""
    ranked, unranked = [], []
    for r in measured:
        why = [w for w in dict.fromkeys(too_few_reason(r.latency_ms, s) for s in ("p50", stat)) if w]
        if why:
            unranked.append(f"{label(r)}: not ranked, {'; '.join(why)}")
        else:
            ranked.append(r)
    return ranked, unranked



def _tie_reason(rec: Recommendation) -> list[str]:
    if not rec.tie:
        return []
    stat = rec.latency_stat
    unit = "ips" if rec.objective == "throughput" else "ms"

    def show(r: BenchResult) -> str:
        iv = objective_interval(r, rec.objective, stat)
        value = r.throughput_ips if rec.objective == "throughput" else latency_of(r, stat)
        return f"{label(r)} {number(value)} {unit} (95% CI {number(iv[0])}-{number(iv[1])})" if iv else label(r)

    lines = ["tie within measurement noise: " + "; ".join(show(r) for r in rec.tie)]
    lines.append(f"decided by {rec.tie_rule}: " + "; ".join(_tie_detail(r) for r in rec.tie))
    return lines


def _tie_detail(r: BenchResult) -> str:
    drop = accuracy_drop_pct(r)
    acc = ("reference" if r.accuracy is None and r.precision == "fp32" else "accuracy not measured" if drop is None
           else f"accuracy drop {number(drop, 3)}%, max abs err {number(r.accuracy.max_abs_err, 3)}"
           if r.accuracy is not None else f"accuracy drop {number(drop, 3)}%")
    mem = (f"{r.gpu_memory_peak_bytes / GB:.2f} GB" if r.gpu_memory_peak_bytes is not None else "memory not measured")
    return f"{label(r)}: {acc}, {mem}, simplicity {registry.simplicity(r.backend)}"


def _why_best(rec: Recommendation, c: Constraints) -> list[str]:
    best = rec.best
    assert best is not None
    stat = c.latency_stat
    lat, thr = latency_of(best, stat), best.throughput_ips or 0.0
    n = len(rec.feasible)
    head = (f"{label(best)}: the highest throughput ({number(thr)} ips)" if rec.objective == "throughput"
            else f"{label(best)}: the lowest {stat} latency ({number(lat)} ms)")
    if rec.tie:
        head = (f"{label(best)}: among the highest throughput ({number(thr)} ips)" if rec.objective == "throughput"
                else f"{label(best)}: among the lowest {stat} latency ({number(lat)} ms)")
    unranked = f", {len(rec.unranked)} not ranked for too few samples" if rec.unranked else ""
    why = [head + f" of the {n} config{'s' if n != 1 else ''} that meet every constraint "
           f"({rec.considered} measured{unranked})"]
    why += _tie_reason(rec)
    if n > 1 and not rec.tie:
        nxt = rec.feasible[1]
        if rec.objective == "throughput":
            gain = (thr / nxt.throughput_ips - 1) * 100 if nxt.throughput_ips else float("inf")
            why.append(f"next best: {label(nxt)} at {number(nxt.throughput_ips)} ips "
                       f"({label(best)} has {gain:.1f}% more)")
        else:
            why.append(f"next best: {label(nxt)} at {number(latency_of(nxt, stat))} ms {stat}")
    checks = dict(rec.checks)[label(best)]
    why += [ch.detail for ch in checks]
    why.append(f"{stat} latency {number(lat)} ms; throughput {number(thr)} ips; "
               f"{'on' if best in rec.pareto else 'not on'} the latency-throughput Pareto front")
    if best.accuracy is not None:
        drop = accuracy_drop_pct(best)
        why.append(f"accuracy vs {best.accuracy.reference or 'the reference'}: drop {number(drop, 3)}% "
                   f"(cosine {best.accuracy.cosine:.6f}, max abs err {number(best.accuracy.max_abs_err, 3)})")
    return why


def _why_nothing(checks: list[tuple[str, list[ConstraintCheck]]], c: Constraints) -> list[str]:
    """Per constraint: the best any config reaches and how far from the limit it is; then the closest config."""
    out: list[str] = []
    by_name: dict[str, list[tuple[str, ConstraintCheck]]] = {}
    for lab, chs in checks:
        for ch in chs:
            by_name.setdefault(ch.name, []).append((lab, ch))
    for name, pairs in by_name.items():
        if any(ch.ok for _, ch in pairs):
            continue
        if name == "batch_size":
            seen = sorted({int(ch.value or 0) for _, ch in pairs})
            out.append(f"batch size: no config was measured at batch {','.join(map(str, c.batch_sizes or ()))} "
                       f"(measured: {','.join(map(str, seen))})")
            continue
        known = [(lab, ch) for lab, ch in pairs if ch.value is not None]
        if not known:
            out.append(f"{name}: not measured for any config ({pairs[0][1].detail})")
            continue
        lower_is_better = name != "min_throughput_ips"
        lab, ch = (min if lower_is_better else max)(known, key=lambda p: p[1].value)  # type: ignore[arg-type]
        out.append(f"{name} {number(ch.limit)} fails for every config; the best is {lab}: {ch.detail}")
    closest = min(checks, key=lambda p: (sum(not ch.ok for ch in p[1]), _total_excess(p[1])))
    failing = [ch.detail for ch in closest[1] if not ch.ok]
    out.append(f"closest: {closest[0]}, which fails " + "; ".join(failing))
    return out


def _total_excess(checks: list[ConstraintCheck]) -> float:
    """Sum of relative distances to the limits of the failing checks (unmeasured counts as far)."""
    total = 0.0
    for ch in checks:
        if ch.ok:
            continue
        if ch.value is None or not ch.limit:
            total += 10.0
        else:
            total += abs(ch.value - ch.limit) / abs(ch.limit)
    return total


