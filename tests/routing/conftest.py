"""A small tree file and dataset for routing tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TREE = {
    "categories": [
        {"name": "email", "description": "Email messages"},
        {"name": "calendar", "description": "Calendar and meetings"},
        {"name": "todos", "description": "To-do list"},
        {"name": "notes", "description": "Personal notes"},
    ],
    "skills": [
        {
            "name": "email.compose",
            "category": "email",
            "description": "Write an email draft to a contact",
            "examples": ["email Bob about the launch", "send a message to Alice"],
        },
        {"name": "email.list_drafts", "category": "email", "description": "List the email drafts written so far"},
        {
            "name": "calendar.add_event",
            "category": "calendar",
            "description": "Schedule a meeting or event at a date and time",
            "examples": ["book a dentist appointment on Friday at 3pm"],
        },
        {"name": "calendar.list_events", "category": "calendar", "description": "Show upcoming events on the calendar"},
        {"name": "todos.add", "category": "todos", "description": "Add a task to the to-do list"},
        {"name": "todos.complete", "category": "todos", "description": "Mark a to-do task as done"},
        {"name": "notes.add", "category": "notes", "description": "Save a personal note"},
        {"name": "notes.search", "category": "notes", "description": "Search saved notes by keyword"},
    ],
}
DATASET = [
    ("Write an email to Alice about the budget", "email.compose"),
    ("show me my email drafts", "email.list_drafts"),
    ("schedule a meeting with the design team on Monday at 10am", "calendar.add_event"),
    ("what events are coming up on my calendar", "calendar.list_events"),
    ("add buy milk to my to-do list", "todos.add"),
    ("mark the laundry task as done", "todos.complete"),
    ("save a note that the wifi password is on the fridge", "notes.add"),
    ("search my notes for the wifi password", "notes.search"),
    ("what is the capital of Mongolia", None),
    ("play some jazz music", None),
]


@pytest.fixture
def tree_file(tmp_path: Path) -> Path:
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(TREE))
    return path


@pytest.fixture
def dataset_file(tmp_path: Path) -> Path:
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps({"text": t, "skill": s}) + "\n" for t, s in DATASET))
    return path
