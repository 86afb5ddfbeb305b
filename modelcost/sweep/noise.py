"""The noise between runs, read from the results database: each config's figure over its runs (the median of the
per-run p50s, ``decide/noise.summarize``), its spread, the share of configs whose figure repeats within 2% / 5%
(``results --noise``), and the stored noise baseline (``results --noise --save-noise``, table ``noise_baseline``)
that ``--compare`` pools with the repeats of the runs it compares. The statistics are ``decide/noise.py``'s.

Which rows are runs of the same thing: rows of one config identity (model name, backend, precision, batch size,
GPU type: ``identity``) that also share the config's content (``config_key``: model hash, input shapes) and the
library versions (``versions_key``). Each such group gives a spread over its runs; the groups of one identity pool
(``decide/noise.pool``). Rows flagged unstable count like the others (the spread is what they are evidence of).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelcost.decide.noise import NO_SPREAD, Spread, Summary, pool, spread, summarize

IDENTITY = ("model_name", "backend", "precision", "batch_size", "device_name")
WITHIN = (0.02, 0.05)  # the shares results --noise reports: figures that repeat within 2% and within 5%

Identity = tuple[Any, ...]


def identity(row: dict[str, Any]) -> Identity:
    """What a config is matched by across runs and code versions: model name, backend, precision, batch, GPU type."""
    return tuple(row[c] if c != "device_name" else (row[c] or "?") for c in IDENTITY)


def identity_label(ident: Identity) -> str:
    return f"{ident[0]} {ident[1]} {ident[2]} b{ident[3]}"


def measured(row: dict[str, Any]) -> bool:
    return row["status"] == "ok" and (row.get("latency_p50_ms") or 0) > 0


@dataclass
class ConfigNoise:
    """One config identity's runs: its figure (median over runs), the pooled spread, and its flags."""

    ident: Identity
    summary: Summary
    spread: Spread  # pooled over the groups of identical content and versions
    run_ids: list[int] = field(default_factory=list)
    unstable_runs: int = 0

    @property
    def label(self) -> str:
        return identity_label(self.ident)


def config_noise(rows: Sequence[dict[str, Any]]) -> list[ConfigNoise]:
    """Per config identity with a measured row: its figure over runs and its between-run spread (module docstring)."""
    by_ident: dict[Identity, dict[tuple[str, str | None], list[dict[str, Any]]]] = {}
    for r in rows:
        if measured(r):
            by_ident.setdefault(identity(r), {}).setdefault((r["config_key"], r.get("versions_key")), []).append(r)
    out = []
    for ident, groups in by_ident.items():
        every = [r for g in groups.values() for r in g]
        sp = pool(spread([r["latency_p50_ms"] for r in g]) for g in groups.values())
        out.append(ConfigNoise(ident, summarize([r["latency_p50_ms"] for r in every]), sp,
                               sorted({r["run_id"] for r in every}), sum(bool(r.get("unstable")) for r in every)))
    return out


@dataclass
class NoiseReport:
    configs: list[ConfigNoise]

    @property
    def repeated(self) -> list[ConfigNoise]:
        """Configs measured at least twice: the ones a spread says anything about."""
        return [c for c in self.configs if c.summary.runs >= 2]

    def share_within(self, rel: float) -> float | None:
        rep = self.repeated
        return None if not rep else sum(c.summary.repeats_within(rel) for c in rep) / len(rep)


def noise_report(rows: Sequence[dict[str, Any]]) -> NoiseReport:
    return NoiseReport(config_noise(rows))


def baseline_rows(report: NoiseReport) -> list[dict[str, Any]]:
    """What ``--save-noise`` stores: one row per repeated config identity (``db.NOISE_COLUMNS``)."""
    return [{**dict(zip(IDENTITY, c.ident, strict=True)), "sd_log": c.spread.sd_log, "df": c.spread.df,
             "runs": c.run_ids} for c in report.repeated if c.spread.known]


def stored_baseline(db: Any, leave_out: Collection[int] = ()) -> dict[Identity, Spread]:
    """The database's noise baseline by config identity (empty when none was stored). ``leave_out``: the runs a
    comparison judges. A baseline measured on any of them is worked out again from its other runs (none left: no
    baseline for that config), so a pair of runs is never judged by its own noise: with one stored baseline over
    every A/A run, each pair is judged by the noise of the others."""
    out, gone = {}, set(leave_out)
    worked_out: dict[tuple[int, ...], dict[Identity, Spread]] = {}  # the runs kept -> the spreads they give
    for r in db.noise():
        ident = tuple(r[c] for c in IDENTITY)
        runs = {int(x) for x in r["runs"]}
        sp = Spread(float(r["sd_log"]), int(r["df"]))
        if runs & gone:
            keep = tuple(sorted(runs - gone))
            if keep not in worked_out:  # one read of those runs for every identity that shares them
                rows = db.results(f"WHERE run_id IN ({', '.join('?' * len(keep))})", keep) if keep else []
                worked_out[keep] = {c.ident: c.spread for c in config_noise(rows)}
            sp = worked_out[keep].get(ident, NO_SPREAD)
        if sp.known:
            out[ident] = sp
    return out


def figure_of(rows: Sequence[dict[str, Any]]) -> Summary | None:
    """A config's figure over the measured rows given (one identity), or None when none is measured."""
    p50s = [r["latency_p50_ms"] for r in rows if measured(r)]
    return summarize(p50s) if p50s else None

