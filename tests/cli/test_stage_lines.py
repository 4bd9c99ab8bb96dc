"""Long work tells a script's log what it is waiting for: one line per long stage when standard error is not a
terminal, where a terminal gets progress bars."""

from __future__ import annotations

import pytest

from semif_agent.cli._common import StageBars


def test_off_a_terminal_a_long_stage_gets_one_line_and_a_short_one_none(capsys: pytest.CaptureFixture[str]) -> None:
    with StageBars(min_total=50, only_on_terminal=True) as tell:
        for done in range(0, 951, 50):
            tell("embedding", done, 951)
        tell("fitting", 1, 12)
        tell("fitting", 12, 12)
        tell("placing", 0, 1200)
        tell("placing", 1200, 1200)
    assert capsys.readouterr().err.splitlines() == ["semif: embedding (951)...", "semif: placing (1,200)..."]


def test_below_min_total_nothing_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    with StageBars(min_total=5000, only_on_terminal=True) as tell:
        tell("indexing", 0, 951)
    assert capsys.readouterr().err == ""


def test_off_a_terminal_a_slow_stage_is_said_and_said_again_while_it_goes_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from semif_agent.cli import _common

    clock = [0.0]
    monkeypatch.setattr(_common.time, "monotonic", lambda: clock[0])
    with StageBars(only_on_terminal=True, slow=("tuning",)) as tell:
        for step in range(13):  # few steps, each 10 s: a line at the start, then one every 30 s
            tell("tuning", step, 12)
            clock[0] += 10.0
        tell("fitting", 1, 12)  # a short stage that is not slow: nothing
    assert capsys.readouterr().err.splitlines() == [
        "semif: tuning (12)...",
        "semif: tuning: 3 of 12",
        "semif: tuning: 6 of 12",
        "semif: tuning: 9 of 12",
    ]
