"""calendar.list_events: list the events on the local calendar.

A range the request names ("today", "tomorrow", "on Friday", "this week": the
whole week, Monday to Sunday; "next week", "this weekend", "in 3 days", "on 12
March") is read by ``semif_agent.skills.dates``. Otherwise which range the user
means (today, tomorrow, this week, everything upcoming) is a SemIf decision;
``none`` lists everything upcoming. Events are read from every ``.ics`` file
under ``config["calendar"]`` (VEVENT DTSTART/SUMMARY, all-day or timed; UTC
times are shown in local time). Read-only. ``request.meta["now"]`` or the
``[config] now`` setting (ISO) stands in for the clock.
"""

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction, current_time, read_range

RANGES = {
    "today": "Today: what is on the calendar today.",
    "tomorrow": "Tomorrow: the events of tomorrow.",
    "this_week": "This week: Monday through Sunday.",
    "upcoming": "Everything upcoming: all future events, whenever they are.",
}
SHOWN = 25


def read_events(folder):
    """``(start, all_day, summary, file)`` for every VEVENT of the ``.ics`` files in ``folder``."""
    events = []
    for path in sorted(folder.rglob("*.ics")):
        text = re.sub(r"\r?\n[ \t]", "", path.read_text(encoding="utf-8", errors="replace"))
        for block in re.findall(r"BEGIN:VEVENT(.*?)END:VEVENT", text, re.S):
            fields = dict(re.findall(r"^([A-Z-]+)(?:;[^:\r\n]*)?:(.*?)\r?$", block, re.M))
            start = parse_start(fields.get("DTSTART", ""))
            if start:
                summary = re.sub(r"\\([\\;,])", r"\1", fields.get("SUMMARY", "(untitled)")).replace("\\n", " ")
                events.append((start[0], start[1], summary, path.name))
    return sorted(events)


def parse_start(value):
    """``(local datetime, all_day)`` of a DTSTART value, or None if unreadable."""
    for fmt, all_day in (("%Y%m%dT%H%M%SZ", False), ("%Y%m%dT%H%M%S", False), ("%Y%m%d", True)):
        try:
            start = datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
        if value.strip().endswith("Z"):
            start = start.replace(tzinfo=UTC).astimezone().replace(tzinfo=None)
        return start, all_day
    return None


def window(name, now):
    """``(from, until, label)`` of a range name; the day's all-day events count as the day's."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = today - timedelta(days=today.weekday())
    start, end = {
        "today": (today, today + timedelta(days=1)),
        "tomorrow": (today + timedelta(days=1), today + timedelta(days=2)),
        "this_week": (monday, monday + timedelta(days=7)),
    }.get(name, (today, datetime.max))
    return start, end, name.replace("_", " ")


def predict(ctx, request):
    named = read_range(request.text, current_time(request, ctx.config))
    if named is not None:
        return Prediction(text=f"range is {named.label}", decisions=[])
    decision = DecisionRequest(
        state=f"{request.text} [current process: listing calendar events]",
        question="Which events should be listed?",
        options=[Option(name, about) for name, about in RANGES.items()]
        + [Option("none", "No particular range: list all upcoming events.")],
    )
    result = ctx.engine.call(decision)
    return Prediction(text=f"range is {result.selected}", decisions=[(decision, result)])


def act(ctx, request, prediction):
    name = prediction.text.removeprefix("range is ")
    now = current_time(request, ctx.config)
    named = read_range(request.text, now)
    if named is not None and name == named.label:
        start, end, label = named.start, named.end, named.label
    else:
        name = name if name in RANGES else "upcoming"
        start, end, label = window(name, now)
    folder = Path(ctx.config.get("calendar", "data/calendar"))
    events = [e for e in (read_events(folder) if folder.is_dir() else []) if start <= e[0] < end]
    if name == "upcoming":  # timed events already over are not upcoming
        events = [e for e in events if e[1] or e[0] >= now]
    if not events:
        return ActionResult(f"calendar.list_events: no events {label} in {folder}.", f"No events {label}.")
    lines = [
        f"- {s:%a %d %b}{' (all day)' if all_day else f' {s:%H:%M}'}: {summary}"
        for s, all_day, summary, _ in events[:SHOWN]
    ]
    more = f"\n(and {len(events) - SHOWN} more)" if len(events) > SHOWN else ""
    return ActionResult(
        action_log=f"calendar.list_events: listed {len(events)} event(s) {label} from "
        f"{len({e[3] for e in events})} file(s) in {folder}:\n" + "\n".join(lines) + more,
        new_state=f"{len(events)} event(s) {label}:\n" + "\n".join(lines) + more,
    )
