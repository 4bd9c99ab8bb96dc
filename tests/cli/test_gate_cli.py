"""``semif run`` through the act gate, as a process: an unsure write is handed back, ``--yes`` acts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.engine import local_available

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

UNSURE = "Jot down: ask the bakery about gluten-free bread"  # notes.add at about 20% on a fresh starter
# The workspaces here act at 50% (the starter measures a lower threshold, at which the note acts): an unsure write.
SET_THRESHOLD = "\n[routing]\nact_threshold = 0.5\n"


def init(semif, ws: Path) -> None:
    assert semif("init", str(ws)).returncode == 0
    with (ws / "semif.toml").open("a", encoding="utf-8") as toml:
        toml.write(SET_THRESHOLD)


def written(ws: Path) -> list[str]:
    return sorted(
        str(p.relative_to(ws))
        for d in ("drafts", "notes", "calendar", "todos")
        for p in (ws / "data" / d).rglob("*")
        if p.is_file()
    )


def runs(semif, ws: Path) -> list[dict]:
    out = semif("log", "-w", str(ws), "--json", "--limit", "0").stdout
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.slow
def test_an_unsure_write_is_handed_back_and_yes_acts(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    init(semif, ws)
    before = written(ws)
    held = semif("run", UNSURE, "-w", str(ws))
    assert held.returncode == 0, held.stderr
    assert "not sure: notes.add" in held.stdout and "run again with --skill NAME, or `semif label" in held.stdout
    assert written(ws) == before
    [run] = runs(semif, ws)
    assert run["outcome"] == "handed_back" and run["skill"] == "notes.add"
    unlogged = semif("run", UNSURE, "-w", str(ws), "--no-log")  # nothing logged: nothing to label
    assert "run again with --skill NAME" in unlogged.stdout and "semif label" not in unlogged.stdout
    assert len(runs(semif, ws)) == 1
    assert semif("log", "-w", str(ws), "--outcome", "handed_back", "--json").stdout.strip()

    acted = semif("run", UNSURE, "-w", str(ws), "--yes", "--json")
    assert acted.returncode == 0, acted.stderr
    result = json.loads(acted.stdout)
    assert result["handed_back"] is False and result["gate"]["rule"] == "unsure"
    assert written(ws) != before

    low = json.loads(semif("run", UNSURE, "-w", str(ws), "--act-threshold", "0.1", "--json").stdout)
    assert low["handed_back"] is False and low["gate"]["threshold"] == 0.1
    bad = semif("run", UNSURE, "-w", str(ws), "--act-threshold", "2")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "act_threshold" in bad.stderr


def test_a_question_writes_nothing_and_batch_entries_say_what_was_handed_back(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    init(semif, ws)
    before = written(ws)
    question = json.loads(semif("run", "Am I free on Friday afternoon?", "-w", str(ws), "--json").stdout)
    assert written(ws) == before and not any(question["changes"].values())
    assert question["gate"]["asks"] == "lookup"
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        json.dumps({"text": UNSURE}) + "\n" + json.dumps({"text": "Remind me to renew the passport"}) + "\n"
    )
    done = semif("run", "--batch", str(batch), "-w", str(ws), "--json")
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)["runs"]
    assert first["handed_back"] is True and first["outcome"] == "handed_back"
    assert first["candidates"][0]["skill"] == "notes.add" and 0 < first["candidates"][0]["probability"] < 0.5
    assert second["handed_back"] is False and second["candidates"] == []


@pytest.mark.slow
def test_batch_yes_acts_on_every_entry_and_the_summary_counts_what_was_handed_back(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    init(semif, ws)
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        json.dumps({"text": UNSURE}) + "\n" + json.dumps({"text": "Remind me to renew the passport"}) + "\n"
    )
    before = written(ws)
    held = semif("run", "--batch", str(batch), "-w", str(ws))
    assert held.returncode == 0, held.stderr
    assert "2 runs (1 handed back)," in held.stdout
    assert "handed_back" in held.stdout.splitlines()[0]
    notes = "data/notes/notes.sqlite3"
    assert notes not in before and written(ws) == sorted([*before, "data/todos/todos.json"])  # only the to-do

    acted = semif("run", "--batch", str(batch), "-w", str(ws), "--yes", "--json")
    assert acted.returncode == 0, acted.stderr
    report = json.loads(acted.stdout)
    assert report["handed_back"] == 0
    assert [r["handed_back"] for r in report["runs"]] == [False, False]
    assert report["runs"][0]["skill"] == "notes.add"
    assert notes in written(ws)

    plain = semif("run", "--batch", str(batch), "-w", str(ws), "--yes")
    assert plain.returncode == 0 and "2 runs," in plain.stdout and "handed back" not in plain.stdout

    low = json.loads(semif("run", "--batch", str(batch), "-w", str(ws), "--act-threshold", "0.1", "--json").stdout)
    assert low["handed_back"] == 0 and low["runs"][0]["handed_back"] is False


@pytest.mark.slow
def test_a_command_that_says_not_to_is_handed_back_and_nothing_is_written(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert semif("init", str(ws)).returncode == 0  # the starter as it comes: its own measured act threshold
    before = written(ws)
    todos = ws / "data" / "todos" / "todos.json"
    for request, extra in (
        ("Don't add buy milk to my todo list", ()),
        ("Do not email Alice about the quarterly report", ()),
        ("Never email Alice about the quarterly report", ("--yes",)),  # --yes never overrules a negation
        ("Please don't add buy milk to my todo list", ("--skill", "todos.add")),  # nor does naming the skill
    ):
        held = semif("run", request, "-w", str(ws), *extra)
        assert held.returncode == 0, held.stderr
        assert "says not to act" in held.stdout and "nothing was done" in held.stdout, request
        assert written(ws) == before and "milk" not in (todos.read_text() if todos.exists() else "")
    assert {run["outcome"] for run in runs(semif, ws)} == {"handed_back"}
    acted = semif("run", "Add 'don't forget the keys' to my todo list", "-w", str(ws))
    assert acted.returncode == 0, acted.stderr
    assert "don't forget the keys" in todos.read_text()


@pytest.mark.slow
def test_a_negation_through_adverbs_or_taken_back_later_is_handed_back_even_with_yes(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert semif("init", str(ws)).returncode == 0
    before = written(ws)
    todos = ws / "data" / "todos" / "todos.json"
    for request, extra in (
        ("Add buy milk to my todo list - definitely don't do it", ()),
        ("Add buy milk to my todo list, but you really shouldn't", ()),
        ("Add buy milk to my todo list. I'd really rather you didn't", ()),
        ("Add buy milk to my todo list. Actually I really don't want that", ()),
        ("Definitely don't add buy milk to my todo list", ("--yes",)),
        ("I told you twice: don't add buy milk to my todo list", ("--yes",)),
    ):
        held = semif("run", request, "-w", str(ws), *extra)
        assert held.returncode == 0, held.stderr
        assert "says not to act" in held.stdout and "nothing was done" in held.stdout, request
        assert written(ws) == before and "milk" not in (todos.read_text() if todos.exists() else "")
    assert {run["outcome"] for run in runs(semif, ws)} == {"handed_back"}
