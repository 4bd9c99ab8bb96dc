"""calendar.add_event writes valid iCalendar files; calendar.list_events reads them back by range.

The clock is request.meta["now"]: Wednesday 12 March 2025, 10:00 (see conftest).
"""

from __future__ import annotations

import re


def ics_files(ws):
    return sorted((ws.data_dir / "calendar").glob("*.ics"))


def parse_ics(path):
    """Check the file is well-formed iCalendar and return its single VEVENT's properties."""
    raw = path.read_bytes()
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b""), "CRLF line endings only"
    lines = raw.decode("utf-8").split("\r\n")[:-1]
    assert all(len(line.encode("utf-8")) <= 75 for line in lines)
    unfolded = []
    for line in lines:
        if line.startswith(" "):
            unfolded[-1] += line[1:]
        else:
            unfolded.append(line)
    assert unfolded[0] == "BEGIN:VCALENDAR" and unfolded[-1] == "END:VCALENDAR"
    assert "VERSION:2.0" in unfolded and any(line.startswith("PRODID:") for line in unfolded)
    begin, end = unfolded.index("BEGIN:VEVENT"), unfolded.index("END:VEVENT")
    props = {}
    for line in unfolded[begin + 1 : end]:
        key, _, value = line.partition(":")
        props[key] = value
    assert props["UID"] and re.fullmatch(r"\d{8}T\d{6}Z", props["DTSTAMP"])
    return props


def test_add_event_writes_a_valid_ics_file(ws, run):
    done = run("calendar.add_event", "Schedule a dentist appointment tomorrow at 3pm")
    assert done.engine.calls == [], "nothing ambiguous, nothing to ask"
    [path] = ics_files(ws)
    props = parse_ics(path)
    assert props["DTSTART"] == "20250313T150000" and props["DTEND"] == "20250313T160000"
    assert props["SUMMARY"] == "Dentist appointment"
    assert props["UID"] == f"{done.request.id}@semif-agent"
    assert str(path) in done.result.action_log
    assert done.result.new_state == "Event 'Dentist appointment' added: Thursday 13 March 2025 15:00-16:00."


def test_add_event_reads_the_common_ways_of_saying_when(ws, run):
    cases = {
        "Put lunch with Bob on my calendar for Friday at noon": ("DTSTART", "20250314T120000", "Lunch with Bob"),
        "Book a call with Farid next Tuesday at 10:30am": ("DTSTART", "20250318T103000", "Call with Farid"),
        "Board meeting on 2025-04-02 at 15:30": ("DTSTART", "20250402T153000", "Board meeting"),
        "Haircut on the 14th of April at 11am": ("DTSTART", "20250414T110000", "Haircut"),
        "dinner with Emma tonight at 8": ("DTSTART", "20250312T200000", "Dinner with Emma"),
        "Add the team offsite on March 20": ("DTSTART;VALUE=DATE", "20250320", "Team offsite"),
    }
    for text, (key, start, summary) in cases.items():
        run("calendar.add_event", text)
        [path] = ics_files(ws)
        props = parse_ics(path)
        assert props.get(key) == start, (text, props)
        assert props["SUMMARY"] == summary, (text, props)
        if text.startswith("Board"):
            assert props["DTEND"] == "20250402T163000"
        if key.endswith("VALUE=DATE"):
            assert props["DTEND;VALUE=DATE"] == "20250321"
        path.unlink()


def test_an_ambiguous_time_is_a_decision(ws, run):
    done = run("calendar.add_event", "coffee with Grace tomorrow at 4", ["2025-03-13T16:00"])
    assert done.engine.calls[0].option_ids == ["2025-03-13T16:00", "2025-03-13T04:00", "none"]
    assert done.engine.calls[0].options[0].description == "Thursday 13 March 2025, 4:00 pm, in the afternoon"
    assert parse_ics(ics_files(ws)[0])["DTSTART"] == "20250313T160000"


def test_none_hands_the_request_back(ws, run):
    done = run("calendar.add_event", "coffee with Grace tomorrow at 4", ["none"])
    assert done.result.new_state == "coffee with Grace tomorrow at 4"
    assert "unclear" in done.result.action_log
    assert not list((ws.data_dir / "calendar").iterdir())


def test_no_date_or_time_hands_the_request_back(ws, run):
    done = run("calendar.add_event", "add an event for the product launch")
    assert done.engine.calls == []
    assert done.result.new_state == "add an event for the product launch"
    assert not list((ws.data_dir / "calendar").iterdir())


def test_long_titles_are_escaped_and_folded(ws, run):
    text = "Schedule planning; budget, hiring and the roadmap with Alice, Bob, Carla and David for Q3 tomorrow at 9am"
    run("calendar.add_event", text)
    raw = ics_files(ws)[0].read_bytes()
    assert b"\r\n " in raw
    summary = parse_ics(ics_files(ws)[0])["SUMMARY"]
    assert summary.startswith("Planning\\; budget\\, hiring and the roadmap with Alice\\,")


def add(run, text, replies=()):
    run("calendar.add_event", text, replies)


def test_list_events_by_range(ws, run):
    add(run, "Standup today at 11am")
    add(run, "Dentist tomorrow at 3pm")
    add(run, "Lunch with Bob on Friday at noon")
    add(run, "Team offsite on 2025-04-02")
    add(run, "Old review on 2025-03-01 at 9am")
    today = run("calendar.list_events", "what's on my calendar today?")
    assert today.engine.calls == [], "a range the request names is read, not decided"
    assert today.result.new_state == "1 event(s) today:\n- Wed 12 Mar 11:00: Standup"
    tomorrow = run("calendar.list_events", "anything tomorrow?")
    assert tomorrow.result.new_state == "1 event(s) tomorrow:\n- Thu 13 Mar 15:00: Dentist"
    week = run("calendar.list_events", "my agenda", ["this_week"])
    assert week.engine.calls[0].option_ids == ["today", "tomorrow", "this_week", "upcoming", "none"]
    assert week.result.new_state.splitlines()[1:] == [
        "- Wed 12 Mar 11:00: Standup",
        "- Thu 13 Mar 15:00: Dentist",
        "- Fri 14 Mar 12:00: Lunch with Bob",
    ]
    upcoming = run("calendar.list_events", "what's coming up?", ["none"])
    assert upcoming.result.new_state.splitlines()[-1] == "- Wed 02 Apr (all day): Team offsite"
    assert "Old review" not in upcoming.result.new_state and "4 event(s) upcoming" in upcoming.result.action_log


def test_list_events_reads_foreign_ics_files(ws, run):
    folder = ws.data_dir / "calendar"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "import.ics").write_bytes(
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//y//EN\r\nBEGIN:VEVENT\r\nUID:1@x\r\n"
        b"DTSTAMP:20250301T000000Z\r\nDTSTART;TZID=Europe/Paris:20250313T090000\r\n"
        b"SUMMARY:Flight to Lisbon\\, gate B\r\n 12\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    done = run("calendar.list_events", "tomorrow's events")
    assert done.result.new_state == "1 event(s) tomorrow:\n- Thu 13 Mar 09:00: Flight to Lisbon, gate B12"


def test_list_events_with_an_empty_calendar(ws, run):
    done = run("calendar.list_events", "what's on today")
    assert done.result.new_state == "No events today."


def test_list_events_reads_the_range_the_request_names(ws, run):
    """Wednesday 12 March: "this week" is all of it, Monday to Sunday, past days included."""
    add(run, "Planning on 2025-03-10 at 9am")  # Monday, already past
    add(run, "Dentist tomorrow at 3pm")
    add(run, "Brunch on 2025-03-16 at 11am")  # Sunday
    add(run, "Team offsite on 2025-03-18")  # next Tuesday
    add(run, "Review on 2025-03-21 at 10am")  # next Friday
    cases = {
        "What's on my calendar this week?": ("3 event(s) this week", ["Planning", "Dentist", "Brunch"]),
        "What do I have next week?": ("2 event(s) next week", ["Team offsite", "Review"]),
        "anything this weekend?": ("1 event(s) this weekend", ["Brunch"]),
        "What's on next Friday?": ("1 event(s) on Friday 21 March", ["Review"]),
        "Am I free on Thursday?": ("1 event(s) on Thursday 13 March", ["Dentist"]),
        "What's on in 6 days?": ("1 event(s) on Tuesday 18 March", ["Team offsite"]),
        "what's on 16 March": ("1 event(s) on Sunday 16 March", ["Brunch"]),
    }
    for text, (head, titles) in cases.items():
        done = run("calendar.list_events", text)
        lines = done.result.new_state.splitlines()
        assert lines[0] == f"{head}:", (text, lines)
        assert [line.rsplit(": ", 1)[1] for line in lines[1:]] == titles, text


def test_the_clock_can_be_pinned_in_the_settings(ws, run):
    ws.settings.config.now = "2025-03-10T09:00:00"  # a Monday
    run("calendar.add_event", "Call with Grace next Tuesday at 10:30", meta={"now": None})
    [path] = ics_files(ws)
    assert parse_ics(path)["DTSTART"] == "20250318T103000", "the Tuesday of next week, not tomorrow"
