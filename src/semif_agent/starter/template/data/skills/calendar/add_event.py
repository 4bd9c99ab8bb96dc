"""calendar.add_event: put an event on the local calendar as an iCalendar (.ics) file.

Date and time are read with the standard library: today, tonight, tomorrow,
weekdays ("friday", "next tuesday"), 2025-03-14, "March 14", "14th of March",
"3pm", "15:30", "noon"; the title is what is left. When more than one start
fits (a bare "at 7"; "friday" said on a Friday), a SemIf decision picks one;
``none`` means ask the user. Events last an hour; a date alone makes an
all-day event. One file per event goes to ``config["calendar"]``;
``request.meta["now"]`` (ISO) stands in for the clock.
"""

import re
from datetime import date, datetime, timedelta, timezone

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction

DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
DATES = [r"\b(\d{4})-(\d{2})-(\d{2})\b", rf"\b{MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b",
         rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MON}", r"\b(today|tonight|day after tomorrow|tomorrow)\b",
         r"\b(next\s+)?(" + "|".join(DAYS) + r")\b"]
TIMES = [r"\b(noon|midday)\b", r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\b\.?", r"\b(\d{1,2}):(\d{2})\b",
         r"\bat\s+(\d{1,2})()(?![\d:])"]  # (an empty group: no minutes)
LEAD = (r"^\s*(please\s+)?(can you\s+)?(add|schedule|put|book|create|set up|plan|make)?\s*((an?|the)\s+)?"
        r"((new\s+)?(event|entry)\s*)?((called|named)\s+|:\s*)?")
PLACE = r"\b(to|on|in|into) (my|the) (calendar|agenda|schedule)\b"
LINKS = r"(\b(on|at|for|by|from|this|next|coming|the)\s+)*$"


def clock(request):
    return datetime.fromisoformat(request.meta.get("now") or datetime.now().isoformat())


def first_match(patterns, text):
    """``(index, match)`` of the first of ``patterns`` found in ``text``, else ``(None, None)``."""
    return next(((i, m) for i, p in enumerate(patterns) if (m := re.search(p, text, re.I))), (None, None))


def read_days(kind, m, now):
    """The day(s) a date match can mean (two for "friday" said on a Friday)."""
    if kind == 0:
        return [date(int(m[1]), int(m[2]), int(m[3]))]
    if kind in (1, 2):
        month, day = (m[1], m[2]) if kind == 1 else (m[2], m[1])
        found = date(now.year, MONTHS.index(month[:3].lower()) + 1, int(day))
        return [found if found >= now.date() else found.replace(year=now.year + 1)]
    if kind == 3:
        return [now.date() + timedelta({"today": 0, "tonight": 0, "tomorrow": 1}.get(m[1].lower(), 2))]
    ahead = (DAYS.index(m[2].lower()) - now.weekday()) % 7
    return [now.date() + timedelta(ahead or 7)] if ahead or m[1] else [now.date(), now.date() + timedelta(7)]


def read_hours(kind, t, text):
    """The hour(s) a time can mean: "at 7" is 07:00 or 19:00, the likelier first."""
    hour = 12 if kind == 0 else int(t[1])
    if kind == 1:  # 3pm, 11 a.m.
        return [hour % 12 + (12 if t[3].lower() == "p" else 0)]
    if kind == 0 or not 1 <= hour <= 11 or t[0].startswith("0"):  # noon, 15:30, 09:15, at 12
        return [hour]
    hint = re.search(r"\b(morning|afternoon|evening|tonight)\b", text, re.I)
    if hint:
        return [hour if hint[1].lower() == "morning" else hour + 12]
    return [hour, hour + 12] if 7 <= hour <= 11 else [hour + 12, hour]


def parse(text, now):
    """``(candidate starts, all_day, title)`` read from ``text``."""
    kind, m = first_match(DATES, text)
    try:
        days, rest = (read_days(kind, m, now), cut(text, m)) if m else ([], text)
    except ValueError:  # no such day, like February 30
        return [], True, title(text)
    kind, t = first_match(TIMES, rest)
    minute = int(t[2] or 0) if t and kind > 0 else 0
    if t is None or (kind > 0 and (int(t[1]) > 23 or minute > 59)):
        return days, True, title(rest)
    hours, rest = read_hours(kind, t, text), cut(rest, t)
    if not days:  # a time alone: its next occurrence
        today = [now.replace(hour=h, minute=minute, second=0, microsecond=0) for h in hours]
        return [s if s > now else s + timedelta(1) for s in today], False, title(rest)
    starts = [datetime(d.year, d.month, d.day, h, minute) for d in days for h in hours]
    return [s for s in starts if s >= now] or starts, False, title(rest)


def cut(text, match):
    """``text`` without ``match`` and the linking words before it ("on", "at", "next"...)."""
    return re.sub(LINKS, "", text[: match.start()], flags=re.I) + " " + text[match.end():]


def title(rest):
    """What is left of the request once the date and time are cut out, tidied."""
    rest = re.sub(PLACE, " ", re.sub(LEAD, "", rest, count=1, flags=re.I), flags=re.I)
    rest = re.sub(r"\s+", " ", re.sub(LINKS, "", rest.strip(" .,;:!?-"), flags=re.I)).strip(" .,;:!?-")
    return rest[:1].upper() + rest[1:] if rest else "Event"


def spoken(start, all_day):
    """A start as people say it: "Thursday 13 March 2025, 4:30 pm, in the afternoon"."""
    h, day = start.hour, f"{start:%A %d %B %Y}"
    parts = [(5, "at night"), (12, "in the morning"), (17, "in the afternoon"), (22, "in the evening"),
             (24, "at night")]
    part = next(name for end, name in parts if h < end)
    return day if all_day else f"{day}, {h % 12 or 12}:{start:%M} {'am' if h < 12 else 'pm'}, {part}"


def predict(ctx, request):
    starts, all_day, name = parse(request.text, clock(request))
    fmt = "%Y-%m-%d" if all_day else "%Y-%m-%dT%H:%M"
    if len(starts) < 2:
        return Prediction(text=f"start is {starts[0].strftime(fmt) if starts else 'unknown'}", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: adding the calendar event {name!r}]",
        question="When does the event start?",
        options=[Option(s.strftime(fmt), spoken(s, all_day)) for s in starts]
        + [Option("none", "None of these: the time is unclear, ask the user.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"start is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    start = prediction.text.removeprefix("start is ")
    _, all_day, name = parse(request.text, clock(request))
    if start in ("unknown", "none"):
        why = "found no date or time in the request" if start == "unknown" else "the start time is unclear"
        return ActionResult(f"calendar.add_event: did not add {name!r}: {why}.", request.text)
    begin = datetime.fromisoformat(start)
    end = begin + (timedelta(days=1) if all_day else timedelta(hours=1))
    fmt, value = ("%Y%m%d", ";VALUE=DATE") if all_day else ("%Y%m%dT%H%M%S", "")
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//semif-agent//starter calendar//EN", "BEGIN:VEVENT",
             f"UID:{request.id}@semif-agent", f"DTSTAMP:{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}",
             f"DTSTART{value}:{begin:{fmt}}", f"DTEND{value}:{end:{fmt}}",
             f"SUMMARY:{escape(name)}", "END:VEVENT", "END:VCALENDAR"]
    target = ctx.data_path("calendar", f"{begin:%Y%m%d}-{request.id}.ics")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(("\r\n".join(fold(line) for line in lines) + "\r\n").encode("utf-8"))
    when = f"{begin:%A %d %B %Y}" + (" (all day)" if all_day else f" {begin:%H:%M}-{end:%H:%M}")
    return ActionResult(f"calendar.add_event: wrote event {name!r} on {when} to {target}.",
                        f"Event {name!r} added: {when}.")


def escape(value):
    """An iCalendar TEXT value (RFC 5545, 3.3.11)."""
    return value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def fold(line):
    """``line`` folded into lines of at most 75 octets (RFC 5545, 3.1)."""
    parts = [""]
    for char in line:
        if len((parts[-1] + char).encode("utf-8")) > 75:
            parts.append(" ")
        parts[-1] += char
    return "\r\n".join(parts)
