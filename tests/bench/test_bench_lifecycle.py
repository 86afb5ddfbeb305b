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
