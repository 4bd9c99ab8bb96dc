"""calendar.add_event: put an event on the local calendar as an iCalendar (.ics) file.

Date and time are read by ``semif_agent.skills.dates``: today, tonight, tomorrow,
weekdays ("friday", "next tuesday": the Tuesday of next week), "in 3 days",
2025-03-14, "March 14", "14th of March", "3pm", "15:30", "noon"; the title is
what is left. When more than one start
fits (a bare "at 7"; "friday" said on a Friday), a SemIf decision picks one;
``none`` means ask the user. Events last an hour; a date alone makes an
all-day event. One file per event goes to ``config["calendar"]``;
``request.meta["now"]`` or the ``[config] now`` setting (ISO) stands in for
the clock.
"""

import re
from datetime import UTC, datetime, timedelta

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction, current_time, read_when

LEAD = (
    r"^\s*(please\s+)?(can you\s+)?((add|schedule|put|book|create|set up|plan|make)\b)?\s*((an?|the)\s+)?"
    r"((new\s+)?(event|entry)\s*)?((called|named)\s+|:\s*)?"
)
PLACE = r"\b(to|on|in|into|for) (my|the) (calendar|agenda|schedule)\b"
LINKS = r"(\b(on|at|for|by|from|this|next|coming|the)\s+)*$"


def parse(text, now):
    """``(candidate starts, all_day, title)`` read from ``text``."""
    when = read_when(text, now)
    return when.starts, when.all_day, title(when.rest)


def title(rest):
    """What is left of the request once the date and time are cut out, tidied."""
    rest = re.sub(PLACE, " ", re.sub(LEAD, "", rest, count=1, flags=re.I), flags=re.I)
    rest = re.sub(r"\s+", " ", re.sub(LINKS, "", rest.strip(" .,;:!?-"), flags=re.I)).strip(" .,;:!?-")
    return rest[:1].upper() + rest[1:] if rest else "Event"


def spoken(start, all_day):
    """A start as people say it: "Thursday 13 March 2025, 4:30 pm, in the afternoon"."""
    h, day = start.hour, f"{start:%A %d %B %Y}"
    parts = [
        (5, "at night"),
        (12, "in the morning"),
        (17, "in the afternoon"),
        (22, "in the evening"),
        (24, "at night"),
    ]
    part = next(name for end, name in parts if h < end)
    return day if all_day else f"{day}, {h % 12 or 12}:{start:%M} {'am' if h < 12 else 'pm'}, {part}"


def predict(ctx, request):
    starts, all_day, name = parse(request.text, current_time(request, ctx.config))
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
    _, all_day, name = parse(request.text, current_time(request, ctx.config))
    if start in ("unknown", "none"):
        why = "found no date or time in the request" if start == "unknown" else "the start time is unclear"
        return ActionResult(f"calendar.add_event: did not add {name!r}: {why}.", request.text)
    begin = datetime.fromisoformat(start)
    end = begin + (timedelta(days=1) if all_day else timedelta(hours=1))
    fmt, value = ("%Y%m%d", ";VALUE=DATE") if all_day else ("%Y%m%dT%H%M%S", "")
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//semif-agent//starter calendar//EN",
        "BEGIN:VEVENT",
        f"UID:{request.id}@semif-agent",
        f"DTSTAMP:{datetime.now(UTC):%Y%m%dT%H%M%SZ}",
        f"DTSTART{value}:{begin:{fmt}}",
        f"DTEND{value}:{end:{fmt}}",
        f"SUMMARY:{escape(name)}",
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    target = ctx.data_path("calendar", f"{begin:%Y%m%d}-{request.id}.ics")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(("\r\n".join(fold(line) for line in lines) + "\r\n").encode("utf-8"))
    when = f"{begin:%A %d %B %Y}" + (" (all day)" if all_day else f" {begin:%H:%M}-{end:%H:%M}")
    return ActionResult(
        f"calendar.add_event: wrote event {name!r} on {when} to {target}.", f"Event {name!r} added: {when}."
    )


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
