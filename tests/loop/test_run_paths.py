"""A run resolves the workspace's paths once, at its start, and never keeps them past it: a write dir whose link
the user pointed elsewhere between runs is where the next run writes, and what it records, while one a skill could
have moved (a link put on its way, or moved, where skills write) is refused; the undo records keep the newest runs
only."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from semif_agent.engine import create_engine
from semif_agent.errors import WorkspaceError
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


def nested_write_dirs(tmp_path: Path) -> Workspace:
    """A workspace whose skills write ``out`` and ``out/sub``, its to-do list kept in ``out/sub`` (it loads)."""
    root = create_workspace(tmp_path / "ws")
    settings = root / "semif.toml"
    text = settings.read_text(encoding="utf-8")
    text = text.replace('"data/todos"]', '"out", "out/sub"]').replace('todos = "data/todos"', 'todos = "out/sub"')
    settings.write_text(text, encoding="utf-8")
    (root / "out" / "sub").mkdir(parents=True)
    return Workspace.load(root)


def test_a_write_dir_a_skill_turned_into_a_link_is_refused_at_the_next_run(tmp_path: Path) -> None:
    ws = nested_write_dirs(tmp_path)
    assert ws.root / "out" / "sub" in ws.write_roots
    runner = SkillRunner(ws, engine=create_engine("lexical"))
    outside = tmp_path / "outside"
    outside.mkdir()
    sub = ws.root / "out" / "sub"  # what a skill that may write "out" can do between two runs of the same runner
    sub.rmdir()
    sub.symlink_to(outside)
    result = runner.run("Add buy milk to my to-do list", skill="todos.add", yes=True)
    assert list(outside.iterdir()) == []
    assert result.error is not None
    assert '[skills] write_dirs "out/sub" became a link since the workspace was loaded' in result.error
    assert "\n" not in result.error
    assert result.assessment.label == "failure"


def test_a_script_gets_no_write_dir_a_skill_turned_into_a_link(tmp_path: Path) -> None:
    ws = nested_write_dirs(tmp_path)
    from semif_agent.catalog.execution import script_write_roots

    assert script_write_roots(ws.root) == ws.write_roots
    deep = tmp_path / "outside" / "deep"
    deep.mkdir(parents=True)
    settings = ws.settings_file.read_text(encoding="utf-8").replace('"out/sub"]', '"out/sub/deep"]')
    ws.settings_file.write_text(settings, encoding="utf-8")
    (ws.root / "out" / "sub" / "deep").mkdir()
    assert ws.root / "out" / "sub" / "deep" in script_write_roots(ws.root)
    shutil.rmtree(ws.root / "out" / "sub")
    (ws.root / "out" / "sub").symlink_to(tmp_path / "outside")
    with pytest.warns(RuntimeWarning, match='"out/sub/deep" became a link'):
        assert script_write_roots(ws.root) == ()


def test_a_users_link_where_skills_write_is_refused_once_it_leads_elsewhere(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    settings = root / "semif.toml"
    text = settings.read_text(encoding="utf-8")
    text = text.replace('"data/todos"]', '"out", "out/todos"]').replace('todos = "data/todos"', 'todos = "out/todos"')
    settings.write_text(text, encoding="utf-8")
    (root / "out").mkdir()
    link = root / "out" / "todos"  # the user's link, in a folder skills write
    link.symlink_to(root / "lists" / "first")
    (root / "lists" / "first").mkdir(parents=True)
    runner = SkillRunner(Workspace.load(root), engine=create_engine("lexical"))
    first = runner.run("Add water the plants to my to-do list", skill="todos.add", yes=True)
    assert first.error is None, first.error
    point(link, root / "docs")  # what a skill that may write "out" can do between two runs
    second = runner.run("Add buy bread to my to-do list", skill="todos.add", yes=True)
    assert list((root / "docs").iterdir()) == []
    assert second.error is not None
    assert f'"out/todos" leads to {root / "docs"} since the workspace was loaded' in second.error
    assert f"through {root / 'out'} where skills write" in second.error


def test_a_link_moved_where_skills_write_on_the_way_to_a_users_link_is_refused(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    settings = root / "semif.toml"
    text = settings.read_text(encoding="utf-8").replace('"data/todos"]', '"out", "data/todos"]')
    settings.write_text(text, encoding="utf-8")
    (root / "out" / "sub").mkdir(parents=True)
    (root / "data" / "todos").rmdir()
    (root / "data" / "todos").symlink_to(Path("..") / "out" / "sub")  # the user's link, into a folder skills write
    ws = Workspace.load(root)
    ws.at_run_start().check_write_dirs()
    (root / "docs").mkdir()
    (root / "out" / "sub").rmdir()
    (root / "out" / "sub").symlink_to(Path("..") / "docs")  # what a skill that may write "out" can do
    shown = f'"data/todos" leads to {re.escape(str(root / "docs"))} .* through {re.escape(str(root / "out"))} '
    with pytest.raises(WorkspaceError, match=shown):
        ws.at_run_start().check_write_dirs()
