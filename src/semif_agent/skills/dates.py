"""Dates, times and ranges as people say them, for skill bodies: standard library only.

Every reader takes ``now`` (a naive local :class:`~datetime.datetime`), so the
same words always mean the same day in a test. :func:`current_time` gives a
run's ``now``: ``request.meta["now"]``, else the workspace's ``[config] now``
setting (``ctx.config["now"]``, an ISO date and time that pins the clock), else
the clock.

Days: ``2025-03-14``, ``March 14``, ``14th of March``, ``12 March``, today,
tonight, tomorrow, the day after tomorrow, ``in 3 days``, ``in two weeks``,
weekday names. A weekday alone ("on Friday", "this Friday") is its next
occurrence (said on a Friday, today or a week on: both are offered); "next
Tuesday" is the Tuesday of next week (weeks run Monday to Sunday), so said
on a Monday it is eight days on, not tomorrow. Times: ``3pm``, ``11 a.m.``,
``15:30``, noon, midnight, and a bare "at 7" (07:00 or 19:00, the likelier
first; "in the morning" or "tonight" settles it). Ranges (:func:`read_range`):
all of the days above, and this week, next week, this weekend, next weekend,
this month, next month.

>>> from datetime import datetime
>>> monday = datetime(2025, 3, 10, 9, 0)
>>> read_when("Call Grace next Tuesday at 10:30", monday).starts
[datetime.datetime(2025, 3, 18, 10, 30)]
>>> read_range("What's on this week?", monday).label
'this week'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import UserError

__all__ = [
    "DAYS",
    "DayMatch",
    "TimeRange",
    "TimeMatch",
    "When",
    "current_time",
    "cut",
    "read_day",
    "read_range",
    "read_time",
    "read_when",
]

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
}
_COUNT = r"(\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_WEEKDAY = r"(?:(this|next|coming|this coming)\s+)?(" + "|".join(DAYS) + r")s?\b"
_DAY_PATTERNS = (
    ("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b"),
    ("month_day", rf"\b{_MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)"),
    ("day_month", rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}(?![a-z])"),
    ("relative", r"\b(today|tonight|(?:the\s+)?day after tomorrow|tomorrow)\b"),
    ("in", rf"\bin\s+{_COUNT}\s+(days?|weeks?)\b"),
    ("weekday", r"\b" + _WEEKDAY),
)
_TIME_PATTERNS = (
    ("named", r"\b(noon|midday|midnight)\b"),
    ("meridiem", r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?"),
    ("clock", r"\b(\d{1,2}):(\d{2})\b"),
    ("bare", r"\bat\s+(\d{1,2})()(?![\d:])"),  # (an empty group: no minutes)
)
_RANGES = r"\b(this|next|the coming)\s+(week|weekend|month)\b"
_LINKS = r"(\b(on|at|for|by|from|this|next|coming|the|of)\s+)*$"


@dataclass(frozen=True)
class DayMatch:
    """The day(s) some words name (two when they can mean either), and where the words are in the text."""

    days: tuple[date, ...]
    start: int
    end: int
    words: str


@dataclass(frozen=True)
class TimeMatch:
    """The hour(s) a time can mean, the likelier first, its minute, and where it is in the text."""

    hours: tuple[int, ...]
    minute: int
    start: int
    end: int
    words: str


@dataclass(frozen=True)
class When:
    """When something happens: the candidate ``starts`` (more than one when it is ambiguous), whether it is
    a whole day (no time said), and the ``rest`` of the text once the date and time are cut out."""

    starts: list[datetime]
    all_day: bool
    rest: str


@dataclass(frozen=True)
class TimeRange:
    """A range of time, ``start`` included and ``end`` excluded, with the words people would use for it."""

    start: datetime
    end: datetime
    label: str

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def current_time(request: Any = None, config: dict[str, Any] | None = None) -> datetime:
    """The run's "now": ``request.meta["now"]``, else ``config["now"]`` (the ``[config] now`` setting), else the clock.

    A value that is not an ISO date and time is refused with a :class:`~semif_agent.errors.UserError`.
    """
    meta = getattr(request, "meta", None) or {}
    for where, value in (
        ("the request's meta", meta.get("now")),
        ("the [config] now setting", (config or {}).get("now")),
    ):
        if value:
            try:
                moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
            except ValueError:
                raise UserError(f"{where}: {value!r} is not an ISO date and time, like 2025-03-10T09:00") from None
            return moment.astimezone().replace(tzinfo=None) if moment.tzinfo else moment
    return datetime.now()


def read_day(text: str, now: datetime) -> DayMatch | None:
    """The first day ``text`` names, read against ``now``; None if it names none (or no such day, like 30 February)."""
    for kind, pattern in _DAY_PATTERNS:
        for m in re.finditer(pattern, text, re.IGNORECASE):
            try:
                days = _days(kind, m, now)
            except ValueError:
                return None
            if days:
                return DayMatch(tuple(days), m.start(), m.end(), m[0])
    return None


def _days(kind: str, m: re.Match[str], now: datetime) -> list[date]:
    today = now.date()
    if kind == "iso":
        return [date(int(m[1]), int(m[2]), int(m[3]))]
    if kind in ("month_day", "day_month"):
        month, day = (m[1], m[2]) if kind == "month_day" else (m[2], m[1])
        found = date(now.year, _MONTHS.index(month[:3].lower()) + 1, int(day))
        return [found if found >= today else found.replace(year=now.year + 1)]
    if kind == "relative":
        word = m[1].lower()
        return [today + timedelta(2 if "after" in word else 1 if word == "tomorrow" else 0)]
    if kind == "in":
        count = _NUMBERS.get(m[1].lower()) or int(m[1])
        return [today + timedelta(count * (7 if m[2].lower().startswith("week") else 1))]
    which, day = (m[1] or "").lower(), DAYS.index(m[2].lower())
    if which == "next":  # the day of next week
        return [today - timedelta(today.weekday()) + timedelta(7 + day)]
    ahead = (day - today.weekday()) % 7
    return [today + timedelta(ahead)] if ahead else [today, today + timedelta(7)]


def read_time(text: str) -> TimeMatch | None:
    """The first time of day ``text`` names; None if none (or an impossible one, like 25:00)."""
    for kind, pattern in _TIME_PATTERNS:
        m = re.search(pattern, text, re.IGNORECASE)
        if m is None:
            continue
        if kind == "named":
            hours = (0,) if m[1].lower() == "midnight" else (12,)
            return TimeMatch(hours, 0, m.start(), m.end(), m[0])
        hour, minute = int(m[1]), int(m[2] or 0)
        if hour > 23 or minute > 59 or (kind == "meridiem" and not 1 <= hour <= 12):
            return None
        return TimeMatch(_hours(kind, m, hour, text), minute, m.start(), m.end(), m[0])
    return None


def _hours(kind: str, m: re.Match[str], hour: int, text: str) -> tuple[int, ...]:
    if kind == "meridiem":  # 3pm, 11 a.m.
        return (hour % 12 + (12 if m[3].lower() == "p" else 0),)
    if not 1 <= hour <= 11 or m[1].startswith("0"):  # 15:30, 09:15, at 12
        return (hour,)
    hint = re.search(r"\b(morning|afternoon|evening|tonight)\b", text, re.IGNORECASE)
    if hint:
        return (hour if hint[1].lower() == "morning" else hour + 12,)
    if kind == "clock" and 7 <= hour <= 11:  # "10:30" is read as said
        return (hour,)
    return (hour, hour + 12) if 7 <= hour <= 11 else (hour + 12, hour)


def read_when(text: str, now: datetime) -> When:
    """When ``text`` says something happens: a day, a time or both; a time alone is its next occurrence.

    ``starts`` is empty when no date or time is said. A day without a time is
    a whole day; the starts already past are dropped when later ones remain.
    """
    day = read_day(text, now)
    rest = cut(text, day) if day else text
    time = read_time(rest)
    if time is None:
        return When([datetime(d.year, d.month, d.day) for d in day.days] if day else [], True, rest)
    rest = cut(rest, time)
    if day is None:
        today = [now.replace(hour=h, minute=time.minute, second=0, microsecond=0) for h in time.hours]
        return When([s if s > now else s + timedelta(1) for s in today], False, rest)
    starts = [datetime(d.year, d.month, d.day, h, time.minute) for d in day.days for h in time.hours]
    return When([s for s in starts if s >= now] or starts, False, rest)


def read_range(text: str, now: datetime) -> TimeRange | None:
    """The stretch of time ``text`` asks about: a week, a weekend, a month, or one day; None if it names none."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    m = re.search(_RANGES, text, re.IGNORECASE)
    if m:
        which, unit = m[1].lower(), m[2].lower()
        ahead = which != "this"
        if unit == "month":
            first = midnight.replace(day=1)
            if ahead:
                first = (first + timedelta(32)).replace(day=1)
            return TimeRange(first, (first + timedelta(32)).replace(day=1), f"{'next' if ahead else 'this'} month")
        monday = midnight - timedelta(midnight.weekday()) + timedelta(7 if ahead else 0)
        if unit == "weekend":
            return TimeRange(monday + timedelta(5), monday + timedelta(7), f"{'next' if ahead else 'this'} weekend")
        return TimeRange(monday, monday + timedelta(7), f"{'next' if ahead else 'this'} week")
    day = read_day(text, now)
    if day is None:
        return None
    first = datetime(day.days[0].year, day.days[0].month, day.days[0].day)
    words = day.words.lower()
    label = words if words in ("today", "tonight", "tomorrow") else f"on {first:%A %d %B}"
    return TimeRange(first, first + timedelta(1), label)


def cut(text: str, match: DayMatch | TimeMatch) -> str:
    """``text`` without the words of ``match`` and the linking words before them ("on", "at", "next"...)."""
    before = re.sub(_LINKS, "", text[: match.start], flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", f"{before} {text[match.end :]}").strip()
