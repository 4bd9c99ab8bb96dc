"""notes.add and notes.search: a real SQLite database, full-text search and its LIKE fallback."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def rows(ws):
    db = sqlite3.connect(ws.data_dir / "notes" / "notes.sqlite3")
    try:
        return db.execute("SELECT id, notebook, body FROM notes ORDER BY id").fetchall()
    finally:
        db.close()


def test_add_saves_the_note_in_the_chosen_notebook(ws, run):
    done = run("notes.add", "Jot down that the garage door code is 4471", ["personal"])
    assert done.engine.calls[0].option_ids == ["work", "personal", "ideas", "reading", "none"]
    assert rows(ws) == [(1, "personal", "the garage door code is 4471")]
    assert "saved note #1 in notebook 'personal'" in done.result.action_log
    assert str(ws.data_dir / "notes" / "notes.sqlite3") in done.result.action_log
    assert done.result.new_state == "Note #1 saved in personal: the garage door code is 4471"


def test_add_with_none_files_it_under_general(ws, run):
    run("notes.add", "Make a note: Sam is allergic to peanuts", ["none"])
    assert rows(ws) == [(1, "general", "Sam is allergic to peanuts")]


def test_add_without_text_hands_the_request_back(ws, run):
    done = run("notes.add", "take a note")
    assert done.engine.calls == []
    assert done.result.new_state == "take a note"
    assert not (ws.data_dir / "notes" / "notes.sqlite3").exists()


def test_search_finds_the_note_with_full_text_search(ws, run):
    run("notes.add", "Note that the wifi password at the cabin is pinecone42", ["personal"])
    run("notes.add", "Remember the kickoff slides are in the shared drive", ["work"])
    done = run("notes.search", "What was the wifi password I saved in my notes?", ["personal"])
    assert "full-text search" in done.result.action_log
    assert "1 note(s) match 'wifi password'" in done.result.new_state
    assert "#1 [personal] the wifi password at the cabin is pinecone42" in done.result.new_state
    assert "kickoff" not in done.result.new_state


def test_search_ranks_the_chosen_notebook_first(ws, run):
    run("notes.add", "note: the cabin key is with Emma", ["personal"])
    run("notes.add", "note: book the cabin for the team offsite", ["work"])
    done = run("notes.search", "search my notes for the cabin", ["work"])
    state = done.result.new_state
    assert state.index("[work]") < state.index("[personal]")


def test_search_falls_back_to_like_without_the_index(ws, run):
    run("notes.add", "Remember that the plumber is called Luis", ["none"])
    db = sqlite3.connect(ws.data_dir / "notes" / "notes.sqlite3")
    db.execute("DROP TABLE notes_fts")
    db.commit()
    db.close()
    done = run("notes.search", "do I have any notes mentioning Luis?", ["none"])
    assert "keyword scan" in done.result.action_log
    assert "the plumber is called Luis" in done.result.new_state


def test_add_indexes_notes_saved_before_the_index_existed(ws, run):
    path = ws.data_dir / "notes" / "notes.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, notebook TEXT, body TEXT, created TEXT)")
    db.execute("INSERT INTO notes (notebook, body, created) VALUES ('reading', 'read Piranesi next', '2025-01-01')")
    db.commit()
    db.close()
    run("notes.add", "jot down: the book club meets on Thursdays", ["reading"])
    done = run("notes.search", "look up Piranesi", ["reading"])
    assert "full-text search" in done.result.action_log and "read Piranesi next" in done.result.new_state


def test_search_without_matches_or_words(ws, run):
    done = run("notes.search", "search my notes for the passport", ["none"])
    assert done.result.new_state == "No notes saved yet."
    run("notes.add", "note: garage code 4471", ["none"])
    done = run("notes.search", "search my notes for the passport", ["none"])
    assert done.result.new_state == "No notes match 'passport'."
    done = run("notes.search", "search my notes")
    assert done.engine.calls == [] and done.result.new_state == "search my notes"


def semif(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "semif_agent", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_search_passes_the_checker_and_runs_from_any_directory(tmp_path: Path):
    """The database is opened by its path, which the write guard accepts wherever the command is started."""
    made = semif("init", "ws", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    ws = tmp_path / "ws"
    checked = semif("skills", "check", "notes.search", "-w", str(ws), cwd=tmp_path)
    assert checked.returncode == 0 and "notes.search: passes the contract" in checked.stdout, checked.stdout
    saved = semif(
        "run",
        "Note that the garage door code is 4512",
        "-w",
        str(ws),
        "--skill",
        "notes.add",
        "--engine",
        "lexical",
        "--json",
        cwd=tmp_path,
    )
    assert json.loads(saved.stdout)["error"] is None, saved.stdout
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    found = semif(
        "run",
        "Search my notes for the garage code",
        "-w",
        str(ws),
        "--skill",
        "notes.search",
        "--engine",
        "lexical",
        "--json",
        cwd=elsewhere,
    )
    result = json.loads(found.stdout)
    assert result["error"] is None, result["action_log"]
    assert "the garage door code is 4512" in result["new_state"]
    assert result["changes"] == {"created": [], "modified": [], "deleted": []}
