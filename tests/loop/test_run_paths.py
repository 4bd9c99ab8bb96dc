"""A run resolves the workspace's paths once, at its start, and never keeps them past it: a write dir whose link
is pointed elsewhere between runs is where the next run writes, and what it records; the undo records keep the
newest runs only."""

from __future__ import annotations

import json
import os
from pathlib import Path

from semif_agent.engine import create_engine
from semif_agent.loop import SkillRunner
from semif_agent.loop.before_images import STORE_DIR
from semif_agent.loop.undo import RUNS_KEPT, undo_dir
from semif_agent.starter import create_workspace
from semif_agent.workspace import RunPaths, Workspace


def linked_todos(tmp_path: Path) -> tuple[Workspace, Path]:
    """A workspace whose ``data/todos`` is a link to ``lists/first`` in it; the link's path."""
    root = create_workspace(tmp_path / "ws")
    link = root / "data" / "todos"
    link.rmdir()
    (root / "lists" / "first").mkdir(parents=True)
    link.symlink_to(root / "lists" / "first")
    return Workspace.load(root), link


def point(link: Path, target: Path) -> None:
    target.mkdir(exist_ok=True)
    link.unlink()
    link.symlink_to(target)


def test_a_run_sees_its_paths_as_they_were_when_it_first_asked(tmp_path: Path) -> None:
    ws, link = linked_todos(tmp_path)
    run = ws.at_run_start()
    assert isinstance(run, RunPaths)
    started = run.write_roots
    assert ws.root / "lists" / "first" in started
    assert run.skill_config()["todos"] == str(ws.root / "lists" / "first")
    point(link, ws.root / "lists" / "second")
    assert run.write_roots == started
    assert run.skill_config()["todos"] == str(ws.root / "lists" / "first")
    assert ws.at_run_start().skill_config()["todos"] == str(ws.root / "lists" / "second")
    assert ws.root / "lists" / "second" in ws.write_roots


def test_the_next_run_writes_and_records_where_the_link_points_now(tmp_path: Path) -> None:
    ws, link = linked_todos(tmp_path)
    runner = SkillRunner(ws, engine=create_engine("lexical"))
    first = runner.run("Add water the plants to my to-do list", skill="todos.add")
    assert first.error is None, first.error
    assert first.changes.created == ["lists/first/todos.json"]
    point(link, ws.root / "lists" / "second")
    second = runner.run("Add buy bread to my to-do list", skill="todos.add")
    assert second.error is None, second.error
    assert second.changes.created == ["lists/second/todos.json"]
    tasks = json.loads((ws.root / "lists" / "second" / "todos.json").read_text(encoding="utf-8"))
    assert [task["text"] for task in tasks] == ["buy bread"]
    assert len(json.loads((ws.root / "lists" / "first" / "todos.json").read_text(encoding="utf-8"))) == 1


def test_only_the_newest_runs_undo_records_are_kept(tmp_path: Path) -> None:
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    runner = SkillRunner(ws, engine=create_engine("lexical"))
    runner.run("Add water the plants to my to-do list", skill="todos.add")
    oldest = [undo_dir(ws, f"old-{n:03d}") for n in range(RUNS_KEPT)]
    for n, folder in enumerate(oldest):
        folder.mkdir(parents=True)
        os.utime(folder, ns=(n * 10**9, n * 10**9))
    newest = runner.run("Add buy bread to my to-do list", skill="todos.add")
    assert undo_dir(ws, newest.run_id).is_dir()
    records = [p for p in undo_dir(ws, "x").parent.iterdir() if p.is_dir() and p.name != STORE_DIR]
    assert len(records) == RUNS_KEPT
    assert not oldest[0].exists() and not oldest[1].exists() and oldest[2].exists()
