"""MODELCOST_TRACE=1 prints one stderr line per step; unset, nothing."""

from __future__ import annotations

import pytest

from modelcost.core.trace import trace


def test_trace_only_when_asked(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("MODELCOST_TRACE", raising=False)
    trace("model loaded")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("MODELCOST_TRACE", "1")
    trace("model loaded")
    err = capsys.readouterr().err
    assert err.startswith("[trace") and err.rstrip().endswith("s] model loaded")
    monkeypatch.setenv("MODELCOST_TRACE", "0")
    trace("x")
    assert capsys.readouterr().err == ""
