"""semif_agent.skills.dates: days, times and ranges as people say them, read against a given "now"."""

from __future__ import annotations

from datetime import datetime

import pytest

from semif_agent.errors import UserError
from semif_agent.skills import Request, current_time, read_range, read_when

MONDAY = datetime(2025, 3, 10, 9, 0)  # Monday 10 March 2025, 9:00
FRIDAY = datetime(2025, 3, 14, 9, 0)
SUNDAY = datetime(2025, 3, 16, 9, 0)


def day(text: str, now: datetime = MONDAY) -> list[str]:
    return [f"{s:%Y-%m-%d}" for s in read_when(text, now).starts]


def start(text: str, now: datetime = MONDAY) -> list[str]:
    return [f"{s:%Y-%m-%d %H:%M}" for s in read_when(text, now).starts]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("on Friday", ["2025-03-14"]),
        ("this Friday", ["2025-03-14"]),
        ("Tuesday", ["2025-03-11"]),
        ("next Tuesday", ["2025-03-18"]),  # the Tuesday of next week, not tomorrow
        ("next Monday", ["2025-03-17"]),
        ("next Sunday", ["2025-03-23"]),
        ("on Monday", ["2025-03-10", "2025-03-17"]),  # today or a week on: a decision
        ("today", ["2025-03-10"]),
        ("tonight", ["2025-03-10"]),
        ("tomorrow", ["2025-03-11"]),
        ("the day after tomorrow", ["2025-03-12"]),
        ("in 3 days", ["2025-03-13"]),
        ("in two weeks", ["2025-03-24"]),
        ("in a week", ["2025-03-17"]),
        ("on 12 March", ["2025-03-12"]),
        ("on the 14th of March", ["2025-03-14"]),
        ("March 20th", ["2025-03-20"]),
        ("on 2 March", ["2026-03-02"]),  # already past this year: next year's
        ("2025-04-02", ["2025-04-02"]),
    ],
)
def test_days(text: str, days: list[str]) -> None:
    assert day(text) == days
    assert read_when(text, MONDAY).all_day


def test_next_is_the_following_week_whatever_the_day() -> None:
    assert day("next Friday", FRIDAY) == ["2025-03-21"]
    assert day("next Tuesday", FRIDAY) == ["2025-03-18"]
    assert day("next Monday", SUNDAY) == ["2025-03-17"], "on a Sunday, next week starts tomorrow"
    assert day("Friday", FRIDAY) == ["2025-03-14", "2025-03-21"]


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("tomorrow at 10:30", ["2025-03-11 10:30"]),
        ("3pm", ["2025-03-10 15:00"]),
        ("at 8am", ["2025-03-11 08:00"]),  # already past today: tomorrow's
        ("next Tuesday at 10:30", ["2025-03-18 10:30"]),
        ("on Friday at noon", ["2025-03-14 12:00"]),
        ("on 12 March at 7pm", ["2025-03-12 19:00"]),
        ("in 3 days at 11 a.m.", ["2025-03-13 11:00"]),
        ("tomorrow at 15:30", ["2025-03-11 15:30"]),
        ("tomorrow at midnight", ["2025-03-11 00:00"]),
        ("tomorrow at 4", ["2025-03-11 16:00", "2025-03-11 04:00"]),  # the likelier first
        ("tomorrow at 9", ["2025-03-11 09:00", "2025-03-11 21:00"]),
        ("tomorrow morning at 9", ["2025-03-11 09:00"]),
        ("tonight at 8", ["2025-03-10 20:00"]),
    ],
)
def test_times(text: str, starts: list[str]) -> None:
    when = read_when(text, MONDAY)
    assert start(text) == starts and not when.all_day


def test_what_is_left_once_the_date_and_time_are_cut() -> None:
    assert read_when("Lunch with Bob on Friday at noon", MONDAY).rest == "Lunch with Bob"
    assert read_when("Haircut in 3 days at 11am", MONDAY).rest == "Haircut"
    assert read_when("Call Grace next Tuesday at 10:30 about the offer", MONDAY).rest == "Call Grace about the offer"
    nothing = read_when("Dinner with Emma", MONDAY)
    assert nothing.starts == [] and nothing.rest == "Dinner with Emma"


def test_impossible_dates_and_times_are_not_read() -> None:
    assert read_when("on 30 February", MONDAY).starts == []
    assert read_when("tomorrow at 25:00", MONDAY).all_day


@pytest.mark.parametrize(
    ("text", "first", "last", "label"),
    [
        ("What's on this week?", "2025-03-10", "2025-03-16", "this week"),
        ("What do I have next week?", "2025-03-17", "2025-03-23", "next week"),
        ("anything this weekend?", "2025-03-15", "2025-03-16", "this weekend"),
        ("next weekend", "2025-03-22", "2025-03-23", "next weekend"),
        ("this month", "2025-03-01", "2025-03-31", "this month"),
        ("next month", "2025-04-01", "2025-04-30", "next month"),
        ("today", "2025-03-10", "2025-03-10", "today"),
        ("What's on tomorrow?", "2025-03-11", "2025-03-11", "tomorrow"),
        ("Am I free on Thursday?", "2025-03-13", "2025-03-13", "on Thursday 13 March"),
        ("next Tuesday", "2025-03-18", "2025-03-18", "on Tuesday 18 March"),
    ],
)
def test_ranges(text: str, first: str, last: str, label: str) -> None:
    span = read_range(text, MONDAY)
    assert (f"{span.start:%Y-%m-%d}", f"{span.end:%Y-%m-%d}", span.label) == (first, _after(last), label)
    assert span.start in span and span.end not in span


def _after(day: str) -> str:
    return f"{datetime.fromordinal(datetime.fromisoformat(day).toordinal() + 1):%Y-%m-%d}"


def test_no_range_named() -> None:
    assert read_range("What's coming up?", MONDAY) is None
    assert read_range("Which meetings do I have?", MONDAY) is None


def test_current_time_comes_from_the_request_then_the_settings_then_the_clock() -> None:
    pinned = {"now": "2025-03-10T09:00:00"}
    assert current_time(Request("x", meta={"now": "2025-01-02T03:04:05"}), pinned) == datetime(2025, 1, 2, 3, 4, 5)
    assert current_time(Request("x"), pinned) == MONDAY
    before = datetime.now()
    assert before <= current_time(Request("x"), {}) <= datetime.now()
    with pytest.raises(UserError, match=r"\[config\] now setting: 'soon' is not an ISO date and time"):
        current_time(Request("x"), {"now": "soon"})
