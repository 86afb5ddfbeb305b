"""The finalists of analyze / bench / recommend measured again in fresh sessions, interleaved, within a budget
(issue 27): bench/finalists.py times them, runs/finalists.py chooses them and records the between-session
spread, which the pick then treats as noise. The clock and the sessions are injected: no test here depends on
how busy the machine is."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import torch

from modelcost import api
from modelcost.bench import finalists as bench_finalists
from modelcost.bench.base import BenchConfig
from modelcost.core.errors import ModelcostError
from modelcost.core.types import BenchResult, LatencyStats, RunReport
from modelcost.decide.recommend import run_pick
from modelcost.report.json_report import run_to_dict
from modelcost.report.sections_found import pick_line, repeats_line
from modelcost.runs import finalists
from modelcost.runs.model import RunOptions

pytestmark = pytest.mark.finalists  # the real repeats (tests/conftest.py stubs them elsewhere)

A, B, C = ("ort-cpu", "fp32", 1), ("torch-cpu", "fp32", 1), ("torch-cpu", "fp32", 8)


class FakeTime:
    """A clock that moves only when a fake session runs (``cost_s`` per session)."""

    def __init__(self, cost_s: float = 1.0) -> None:
        self.now, self.cost_s, self.order = 0.0, cost_s, []

    def clock(self) -> float:
        return self.now

    def measure(self, p50: Callable[[tuple], float] = lambda c: 1.0) -> bench_finalists.MeasureOne:
        def run(*config: object) -> float:
            self.order.append(config)
            self.now += self.cost_s
            return p50(config)
        return run


def test_each_round_visits_every_finalist_once_never_back_to_back() -> None:
    t = FakeTime()
    got = bench_finalists.repeat([A, B, C], 2, budget_s=100, measure=t.measure(), clock=t.clock)
    assert t.order == [A, B, C, A, B, C]
    assert got.p50s_ms == {A: [1.0, 1.0], B: [1.0, 1.0], C: [1.0, 1.0]} and got.stopped is None
    assert got.spent_s == 6.0  # 6 sessions of 1 s on the fake clock


def test_a_session_that_would_not_fit_the_budget_is_not_started() -> None:
    # 10 s a session, 35 s allowed: round 1 needs 0 + 3 x 10 = 30 <= 35 and runs; round 2 would end at 30 + 30 = 60
    # > 35: stopped, one session each
    t = FakeTime(cost_s=10.0)
    got = bench_finalists.repeat([A, B, C], 2, budget_s=35, measure=t.measure(),
                                 expected_s={A: 10.0, B: 10.0, C: 10.0}, clock=t.clock)
    assert [len(got.p50s_ms[c]) for c in (A, B, C)] == [1, 1, 1]
    assert got.stopped == "budget spent" and got.spent_s == 30.0


def test_only_whole_rounds_start_so_every_finalist_gets_as_many_sessions() -> None:
    # 10 s a session, 45 s allowed: round 1 (30 s) runs; round 2 needs 30 + 30 = 60 > 45 and does not start,
    # though A's second session alone (30 + 10 = 40) would fit
    t = FakeTime(cost_s=10.0)
    got = bench_finalists.repeat([A, B, C], 2, budget_s=45, measure=t.measure(), clock=t.clock)
    assert [len(got.p50s_ms[c]) for c in (A, B, C)] == [1, 1, 1] and got.stopped == "budget spent"


def test_ctrl_c_keeps_what_was_measured_and_a_failure_ends_only_that_config() -> None:
    t = FakeTime()
    inner = t.measure()

    def measure(*config: object) -> float:
        if config == B:
            raise RuntimeError("session lost\nsecond line")
        if len(t.order) == 3:  # A, C, A done: Ctrl-C in the fourth session (C's second)
            raise KeyboardInterrupt
        return inner(*config)

    got = bench_finalists.repeat([A, B, C], 2, budget_s=100, measure=measure, clock=t.clock)
    assert got.failed == {B: "failed: RuntimeError: session lost"} and got.stopped == "interrupted"
    assert got.p50s_ms == {A: [1.0, 1.0], B: [], C: [1.0]}


def res(backend: str, p50_ms: float, ci: float = 0.01, batch: int = 1) -> BenchResult:
    lat = LatencyStats(count=200, p50=p50_ms, p90=p50_ms, p95=p50_ms, p99=p50_ms * 1.05, mean=p50_ms, std=0.01,
                       min=p50_ms, max=p50_ms * 1.1)
    r = BenchResult(backend, "fp32", batch, "ok", latency_ms=lat, throughput_ips=batch / p50_ms * 1e3)
    r.extra.median_ci95_rel, r.extra.timed_s = ci, 1.0
    return r


def test_the_finalists_are_the_configs_within_the_noise_floor_of_the_best() -> None:
    # a 1000 ips, b 1/1.02 ms = 980 ips, c 500 ips; each +-5% at least (FLOOR_REL): a 950..1050, b 931..1029 overlap,
    # c 475..525 does not
    a, b, c = res("ort-cpu", 1.0), res("torch-cpu", 1.02), res("torch-cpu", 2.0, batch=1)
    c.precision = "fp16"
    chosen, why = finalists.choose([a, b, c], run_pick)
    assert why is None and chosen == [a, b]
    # b at 1/1.25 = 800 ips: 760..840 misses 950..1050: the pick is in no doubt
    assert finalists.choose([a, res("torch-cpu", 1.25)], run_pick) == ([], "no doubt")
    assert finalists.choose([a], run_pick) == ([], "one config")


def two_close_configs() -> RunReport:
    # a 1000 ips, b 960 ips, each +-1% within its session: 990..1010 vs 950.4..969.6, no tie on one session each
    report = RunReport()
    report.benchmarks = [res("ort-cpu", 1.0), res("torch-cpu", 1 / 0.96)]
    return report


def test_sessions_that_disagree_turn_a_sure_pick_into_a_tie() -> None:
    report = two_close_configs()
    before = run_pick(report.benchmarks)
    assert before is not None and before.tie == [] and "sure: ahead of" in pick_line(before)
    later = {A: [1.10, 0.95], B: [1.04, 1.045]}
    t = FakeTime()
    finalists.repeat_finalists(None, report, RunOptions(), sweep_s=10.0, clock=t.clock,
                               measure=t.measure(lambda c: later[c].pop(0)))
    a, b = report.benchmarks
    assert t.order == [A, B, A, B]  # interleaved
    assert a.extra.session_p50s_ms == [1.0, 1.10, 0.95]
    # a: ln p50 = 0, 0.09531, -0.05129; sd 0.07440 (2 df); t(0.975, 2) = 4.3027; 4.3027 x 0.07440 / sqrt(3) = 0.1848;
    # e^0.1848 - 1 = 0.2030 -> a 797..1203 ips now overlaps b
    assert a.extra.between_run_ci95_rel == pytest.approx(0.2030, abs=1e-4)
    assert b.extra.between_run_ci95_rel == pytest.approx(0.00608, abs=1e-4)  # b's sessions agree within 0.6%
    rec = report.finalist_repeats
    assert rec is not None and rec.finalists == ["ort-cpu fp32 b1", "torch-cpu fp32 b1"]
    assert rec.sessions_added == [2, 2] and rec.skipped is None and rec.budget_s == 5.0 and rec.spent_s == 4.0
    after = run_pick(report.benchmarks)
    assert after is not None and {id(r) for r in after.tie} == {id(a), id(b)}
    line = pick_line(after)
    assert "tied within the noise between sessions" in line
    assert "finalists measured again in fresh sessions, interleaved: ort-cpu fp32 b1, torch-cpu fp32 b1" in \
        repeats_line(rec)


def test_skips_are_a_typed_field_and_ctrl_c_is_raised_again() -> None:
    report = two_close_configs()
    off = RunOptions(bench=BenchConfig(finalist_repeats=0))
    finalists.repeat_finalists(None, report, off, sweep_s=10.0, measure=FakeTime().measure())
    assert report.finalist_repeats is not None and report.finalist_repeats.skipped == "off"
    none = RunOptions(bench=BenchConfig(finalist_share=0))
    finalists.repeat_finalists(None, report, none, sweep_s=10.0, measure=FakeTime().measure())
    assert report.finalist_repeats.skipped == "no budget" and "--finalist-share 0" in \
        repeats_line(report.finalist_repeats)

    def ctrl_c(*config: object) -> float:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        finalists.repeat_finalists(None, report, RunOptions(), sweep_s=10.0, measure=ctrl_c)
    assert report.finalist_repeats.skipped == "interrupted" and report.finalist_repeats.sessions_added == [0, 0]


def test_the_options_refuse_a_negative_value() -> None:
    with pytest.raises(ModelcostError, match="--finalist-repeats must be >= 0"):
        BenchConfig(finalist_repeats=-1)
    with pytest.raises(ModelcostError, match="--finalist-share must be >= 0"):
        BenchConfig(finalist_share=-0.5)


QUICK = dict(warmup=2, warmup_max_s=0.2, min_time_s=0.02, min_iters=10, max_time_s=1.0, e2e_min_iters=0)


def tiny() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())


def test_a_fresh_session_times_one_config_on_the_cpu() -> None:
    from modelcost.bench.model import from_module
    from modelcost.core.types import TensorSpec

    model = from_module(tiny().eval(), lambda b: [TensorSpec("x", (b, 8), "float32")])
    p50 = bench_finalists.fresh_session(model, BenchConfig(device="cpu", **QUICK))("torch-cpu", "fp32", 1)
    assert p50 > 0


def test_analyze_repeats_its_finalists_and_the_report_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every config is a finalist (a floor of +-1000%); each repeat reads 1.0 ms: nothing here is timed but the sweep
    monkeypatch.setattr(finalists, "FLOOR_REL", 10.0)
    monkeypatch.setattr(bench_finalists, "fresh_session", lambda model, config: lambda *c: 1.0)
    options = RunOptions(backends=("torch-cpu",), batch_sizes=(1, 2), example_inputs=torch.randn(1, 8),
                         bench=BenchConfig(device="cpu", finalist_share=10.0, **QUICK))
    stages: list[str] = []
    run = api.run(tiny(), options, on_stage=lambda stage, r: stages.append(stage))
    assert stages[:3] == ["static", "finalists", "benchmarks"]  # the CLI says the repeats start (cli/flow.py)
    rec = run.finalist_repeats
    assert rec is not None and rec.skipped is None and rec.sessions_added == [2, 2]
    doc = run_to_dict(run)
    assert doc["finalist_repeats"]["sessions_added"] == [2, 2]
    p50s = [r["extra"]["session_p50s_ms"] for r in doc["benchmarks"]]
    assert all(len(p) == 3 and p[1:] == [1.0, 1.0] for p in p50s)
    assert all(r["extra"]["between_run_ci95_rel"] is not None for r in doc["benchmarks"])
    json.dumps(doc)


def test_a_tentative_pick_is_never_called_sure() -> None:
    # Every config unstable (a busy machine): decide picks tentatively from what was measured (its caveats), and the
    # found block said "sure: ahead of ... beyond the timing noise (+0.1% IPS)" all the same
    a, b = res("ort-cpu", 1.0), res("torch-cpu", 1.001)
    a.unstable = b.unstable = ["a busy machine: other processes took 60% of the CPUs"]
    rec = run_pick([a, b])
    assert rec is not None and rec.caveats
    line = pick_line(rec)
    assert "sure" not in line and "tentative, not reliable: unstable timings (a busy machine" in line
