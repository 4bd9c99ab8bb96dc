"""Every command finds its workspace the same way: -w, else $SEMIF_WORKSPACE, else the current folder, else your own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NO_WORKSPACE = "no workspace: run semif init DIR"


def test_with_no_workspace_anywhere_every_command_says_what_to_do(semif, tmp_path: Path, user_home: Path) -> None:
    for args in (
        ("log",),
        ("log", "show", "x"),
        ("tree",),
        ("skills", "list"),
        ("label", "x", "--none"),
        ("route", "Email Alice"),
        ("train",),
        ("skills", "validate"),
    ):
        done = semif(*args)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr.startswith(f"Error: {NO_WORKSPACE}"), (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (user_home / "semif-workspace").exists()  # only semif run (and chat) make one


@pytest.mark.slow
def test_after_the_first_run_every_command_uses_your_own_workspace_and_says_so(semif, user_home: Path) -> None:
    own = user_home / "semif-workspace"
    first = semif("run", "Add buy milk to my todo list", "--engine", "lexical")
    assert first.returncode == 0, first.stderr
    assert f"semif: made your workspace at {own}" in first.stderr
    note = f"semif: workspace {own} (your own; -w DIR for another)"
    listed = semif("log")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.splitlines() == [note]
    assert '"Add buy milk to my todo list"  -> todos.add' in listed.stdout
    for args in (("tree",), ("skills", "list"), ("route", "Add eggs to my todo list", "--engine", "lexical")):
        done = semif(*args)
        assert done.returncode == 0, (args, done.stderr)
        assert done.stderr.splitlines()[0] == note, args
        assert "todos.add" in done.stdout
    again = semif("run", "Add eggs to my todo list", "--engine", "lexical")
    assert again.returncode == 0 and again.stderr.splitlines() == [note]


def test_the_variable_beats_the_current_folder_and_w_beats_both(semif, tmp_path: Path) -> None:
    for name in ("named", "here", "given"):
        assert semif("init", name).returncode == 0
    named, here, given = (tmp_path / name for name in ("named", "here", "given"))
    semif("run", "Add buy milk to my todo list", "-w", str(named), "--engine", "lexical")
    env = {"SEMIF_WORKSPACE": str(named)}

    from_variable = semif("log", "--json", cwd=here, env=env)
    assert from_variable.returncode == 0, from_variable.stderr
    assert from_variable.stderr.splitlines() == [f"semif: workspace {named.resolve()} (from $SEMIF_WORKSPACE)"]
    assert [json.loads(line)["request"] for line in from_variable.stdout.splitlines()] == [
        "Add buy milk to my todo list"
    ]

    from_folder = semif("log", cwd=here)
    assert (from_folder.returncode, from_folder.stderr) == (0, "")
    assert "no runs logged yet" in from_folder.stdout

    from_flag = semif("log", "-w", str(given), cwd=here, env=env)
    assert (from_flag.returncode, from_flag.stderr) == (0, "")
    assert "no runs logged yet" in from_flag.stdout and str(given.resolve()) in from_flag.stdout

    missing = semif("tree", env={"SEMIF_WORKSPACE": str(tmp_path / "nowhere")})
    assert missing.returncode == 1
    assert missing.stderr.startswith("Error: $SEMIF_WORKSPACE: ") and "no such workspace directory" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_init_on_a_workspace_names_the_force_flag(semif) -> None:
    assert semif("init", "ws").returncode == 0
    again = semif("init", "ws")
    assert again.returncode == 1 and "use --force to add the missing starter files" in again.stderr
    assert semif("init", "ws", "--force").returncode == 0


def test_init_makes_the_skills_folder_and_says_where_skills_go(semif, tmp_path: Path) -> None:
    for name, flags in (("starter", ()), ("empty", ("--empty",))):
        made = semif("init", name, *flags, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        skills = (tmp_path / name / "skills").resolve()
        assert skills.is_dir() and not any(skills.iterdir())
        assert f"Add skills: copy SKILL.md folders or collections of them into {skills}\n" in made.stdout
    (tmp_path / "starter" / "skills").rmdir()
    (tmp_path / "starter" / "skills").write_text("a file of the user's")
    assert semif("init", "starter", "--force", cwd=tmp_path).returncode == 0  # left alone, not an error
    assert (tmp_path / "starter" / "skills").read_text() == "a file of the user's"
