"""bench.lifecycle: the one out-of-memory / unavailable / failed path, availability, and the session's release."""

from __future__ import annotations

import pytest

from modelcost.bench import lifecycle
from modelcost.bench.base import OutOfMemory, Unavailable
from modelcost.bench.timing import WallClock, WarmUpRule, settle


def test_one_classification_of_a_failed_config() -> None:
    assert lifecycle.failure(OutOfMemory("arena full")) == ("oom", "OutOfMemory: arena full")
    assert lifecycle.failure(RuntimeError("CUDA out of memory. Tried to allocate 2 GiB"))[0] == "oom"
    assert lifecycle.failure(Unavailable("needs TensorRT 10")) == ("unavailable", "needs TensorRT 10")
    assert lifecycle.failure(ValueError("no kernel for op X")) == ("failed", "ValueError: no kernel for op X")


def test_availability_names_the_model_kind_a_backend_does_not_take() -> None:
    pytest.importorskip("torch")
    assert lifecycle.why_not("torch-cpu", ["pytorch", "onnx"], ["fp32"]) == "torch-cpu runs pytorch models only"
    assert lifecycle.why_not("torch-cpu", ["pytorch"], ["fp32"]) is None


class Session:
    closed = 0

    def close(self) -> None:
        Session.closed += 1


class Runner:
    def session(self, batch: int, arrays: list) -> Session:  # noqa: ARG002
        if batch > 4:
            raise OutOfMemory("batch too large")
        return Session()


def test_a_session_is_closed_and_the_memory_freed_when_it_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    freed: list[int] = []
    monkeypatch.setattr(lifecycle, "free_device_memory", lambda: freed.append(1))
    with lifecycle.session(Runner(), 1, []):
        pass
    assert Session.closed == 1 and not freed  # a good session: closed, nothing to free
    with pytest.raises(RuntimeError), lifecycle.session(Runner(), 1, []):
        raise RuntimeError("kernel failed")
    assert Session.closed == 2 and len(freed) == 1
    with pytest.raises(OutOfMemory), lifecycle.session(Runner(), 8, []):
        pass  # making it ran out of memory: freed, nothing to close
    assert Session.closed == 2 and len(freed) == 2


def test_a_generation_warm_up_is_the_one_rule_with_windows_of_one() -> None:
    # step medians 10, 5, 5.05: the third agrees with the second within 2% -> 3 calls, settled
    runs = iter([10.0, 5.0, 5.05, 5.0])
    got = settle(lambda: next(runs), WarmUpRule(window=1, tolerance=0.02, min_calls=1, max_calls=8))
    assert (got.calls, got.settled) == (3, True)


def test_the_wall_clock_takes_marks() -> None:
    clock = WallClock()
    for _ in range(3):
        clock.mark()
    assert len(clock.intervals_ms()) == 2 and clock.intervals_ms() == []  # read once, then cleared


def test_a_gpu_session_records_the_host_pace_around_its_timed_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned CPU's pace (timing.host_pace_us) is taken just before and just after the timed loop of a GPU
    session, so runs of one machine can be compared by it; a CPU session has none. (The pinning itself is
    timing.pinned_to_one_cpu's, tested there: here it is left out.)"""
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.timing import host_pace_us

    paces = iter([3100.0, 3450.5])
    monkeypatch.setattr(lifecycle, "host_pace_us", lambda: next(paces))
    config = BenchConfig(device="cpu", warmup=1, min_time_s=0.0, min_iters=3, max_time_s=0.05, pin_cpu=False)

    class GpuLike:
        device = "cuda"

        def run(self) -> None:
            return None

    timed = lifecycle.time_session(GpuLike(), config, clock=WallClock())
    assert timed.host_pace_us == [3100.0, 3450.5] and timed.pinned_cpu is None

    class OnCpu(GpuLike):
        device = "cpu"

    assert lifecycle.time_session(OnCpu(), config, clock=WallClock()).host_pace_us is None
    # the probe itself: a positive figure, in microseconds, rounded to 0.1
    pace = host_pace_us(rounds=2, n=1000)
    assert pace > 0 and round(pace, 1) == pace
