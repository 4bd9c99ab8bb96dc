"""A workspace of the old layout (skills wrote all of data/) is moved to the new one on load, or left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from semif_agent.errors import WorkspaceError
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ._support import SkillRunner

OLD_SETTINGS = """\
# my agent: keep this comment
[engine]
name = "lexical"   # fast enough for me

[paths]
data = "data"
drafts = "data/drafts"
contacts = "data/contacts.json"
notes_db = "data/notes.sqlite3"
calendar = "data/calendar"
todos = "data/todos.json"
files_root = "files"

[skills]
write_dirs = ["data"]
timeout = 60       # my own limit

[log]
enabled = true
path = "data/decisions.jsonl"
"""
NEW_DIRS = ["data/drafts", "data/notes", "data/calendar", "data/todos"]


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A workspace laid out as before: a note and a to-do saved, then their files moved to the old places."""
    root = create_workspace(tmp_path / "ws")
    run = SkillRunner(Workspace.load(root))
    run("notes.add", "note that the cabin wifi password is fjord-42", ["personal"])
    run("todos.add", "todo: water the plants", ["low"])
    data = root / "data"
    os.rename(data / "notes" / "notes.sqlite3", data / "notes.sqlite3")
    os.rename(data / "todos" / "todos.json", data / "todos.json")
    for folder in NEW_DIRS:
        (root / folder).rmdir()
    (root / "semif.toml").write_text(OLD_SETTINGS)
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"" for p in sorted(root.rglob("*"))}


def test_the_old_layout_is_moved_on_load_and_said_in_one_line(old: Path, capsys) -> None:
    ws = Workspace.load(old)
    notice = capsys.readouterr().err.strip().splitlines()
    assert len(notice) == 1 and notice[0].startswith(f"semif: moved the workspace {old} to the new layout")
    assert "data/notes.sqlite3 -> data/notes/notes.sqlite3" in notice[0]
    assert "data/todos.json -> data/todos/todos.json" in notice[0]
    assert ws.write_roots == tuple(old / d for d in NEW_DIRS)
    assert not (old / "data" / "notes.sqlite3").exists() and not (old / "data" / "todos.json").exists()
    text = (old / "semif.toml").read_text()
    assert "# my agent: keep this comment" in text and 'name = "lexical"   # fast enough for me' in text
    assert "timeout = 60       # my own limit" in text
    settings = tomllib.loads(text)
    assert settings["skills"]["write_dirs"] == NEW_DIRS
    assert "notes_db" not in settings["paths"]
    assert settings["paths"]["notes"] == "data/notes" and settings["paths"]["todos"] == "data/todos"
    assert settings["paths"]["contacts"] == "data/contacts.json"
    run = SkillRunner(ws)
    assert "fjord-42" in run("notes.search", "what is the cabin wifi password", ["none"]).result.new_state
    assert "water the plants" in run("todos.list", "my todos").result.new_state


def test_a_moved_workspace_loads_quietly_the_next_time(old: Path, capsys) -> None:
    Workspace.load(old)
    capsys.readouterr()
    before = tree(old)
    Workspace.load(old)
    assert capsys.readouterr().err == ""
    assert tree(old) == before


def test_old_files_without_write_dirs_are_moved_too(tmp_path: Path, capsys) -> None:
    root = create_workspace(tmp_path / "ws")
    (root / "semif.toml").write_text('[engine]\nname = "lexical"\n')
    (root / "data" / "todos.json").write_text("[]")
    ws = Workspace.load(root)
    assert (root / "data" / "todos" / "todos.json").read_text() == "[]"
    assert tomllib.loads((root / "semif.toml").read_text())["skills"]["write_dirs"] == NEW_DIRS
    assert ws.settings.engine.name == "lexical"
    assert "semif: moved the workspace" in capsys.readouterr().err


def test_a_clash_leaves_everything_as_it_was_and_says_why(old: Path) -> None:
    (old / "data" / "todos").mkdir()
    (old / "data" / "todos" / "todos.json").write_text("[]")
    before = tree(old)
    with pytest.raises(WorkspaceError) as caught:
        Workspace.load(old)
    assert str(caught.value) == (
        f"{old / 'semif.toml'}: cannot move this workspace to the new layout (both data/todos.json and "
        "data/todos/todos.json exist; keep one); nothing was changed"
    )
    assert tree(old) == before


def test_a_failure_half_way_puts_the_moved_files_back(old: Path, monkeypatch) -> None:
    before = tree(old)
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if str(dst).endswith("semif.toml"):
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(WorkspaceError, match=r"No space left on device: .*semif.toml\); nothing was changed"):
        Workspace.load(old)
    monkeypatch.setattr(os, "replace", real_replace)
    assert tree(old) == before


def test_settings_the_move_would_leave_invalid_are_not_moved(old: Path) -> None:
    (old / "semif.toml").write_text(OLD_SETTINGS.replace('write_dirs = ["data"]', 'write_dirs = ["data", "."]'))
    before = tree(old)
    with pytest.raises(WorkspaceError, match=r'would leave are not valid: .*write_dirs "\." holds the data dir'):
        Workspace.load(old)
    assert tree(old) == before


def test_notes_kept_outside_the_data_dir_are_not_moved(old: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "notes.sqlite3"
    os.rename(old / "data" / "notes.sqlite3", elsewhere)
    (old / "semif.toml").write_text(OLD_SETTINGS.replace('"data/notes.sqlite3"', f'"{elsewhere}"'))
    before = tree(old)
    with pytest.raises(WorkspaceError, match="notes_db points outside the data dir"):
        Workspace.load(old)
    assert tree(old) == before and elsewhere.is_file()


def test_write_dirs_data_in_a_workspace_of_the_current_layout_is_refused_in_one_line(tmp_path: Path) -> None:
    """The README's refusal, not a move: nothing of the old layout is there, so semif.toml is not rewritten."""
    root = create_workspace(tmp_path / "ws")
    settings = root / "semif.toml"
    text = settings.read_text().replace(
        'write_dirs = ["data/drafts", "data/notes", "data/calendar", "data/todos"]', 'write_dirs = ["data"]'
    )
    settings.write_text(text)
    before = tree(root)
    result = subprocess.run(
        [sys.executable, "-m", "semif_agent", "run", "Email Alice that the report is ready", "-w", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f'Error: {settings}: [skills] write_dirs "data" holds the data dir data, where the workspace keeps its '
        'records (manifests, skill bodies, logs): list only the folders skills write, such as "data/drafts"'
    ]
    assert tree(root) == before  # nothing moved, semif.toml as the user wrote it
