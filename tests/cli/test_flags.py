"""One flag name per meaning: --model is the routing or agent model, --code-model the model that writes skills."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.llm import ScriptedProvider, override_provider
from semif_agent.starter import create_workspace

from ..forge.test_generator import COUNT, fenced


def visible_options(group: click.Group = main, path: tuple[str, ...] = ()):
    """(command path, option name) for every option a command's --help shows."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for opt in param.opts:
                    yield " ".join((*path, name)), opt
        if isinstance(command, click.Group):
            yield from visible_options(command, (*path, name))


def test_each_model_flag_means_one_thing_everywhere() -> None:
    shown = list(visible_options())
    assert {path for path, opt in shown if opt == "--model"} == {"run", "route", "chat"}
    assert {path for path, opt in shown if opt == "--code-model"} == {"run", "skills new", "skills review"}


def test_skills_new_takes_code_model_and_still_its_old_name_with_a_note(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    with override_provider(ScriptedProvider([fenced(COUNT)])):
        old = CliRunner().invoke(
            main,
            [
                "skills",
                "new",
                "todos.count",
                "--description",
                "Count the to-do tasks.",
                "--budget",
                "1",
                "--model",
                "openai/m",
                "-w",
                str(root),
            ],
        )
    assert old.exit_code == 0, old.output
    assert old.stderr.splitlines()[0] == "warning: --model is deprecated here; the code model is --code-model"
    assert "admitted todos.count" in old.stdout
    both = CliRunner().invoke(
        main,
        [
            "skills",
            "new",
            "todos.other",
            "--description",
            "x",
            "--model",
            "openai/a",
            "--code-model",
            "openai/b",
            "-w",
            str(root),
        ],
    )
    assert both.exit_code == 1 and "give the code model once: --code-model" in both.stderr


def test_a_missing_code_model_names_the_code_model_flag(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    for args in (
        ["skills", "new", "todos.count", "--description", "Count the to-do tasks."],
        ["skills", "review", "todos.add", "--regenerate"],
    ):
        result = CliRunner().invoke(main, [*args, "-w", str(root)])
        assert result.exit_code == 1, result.output
        [line] = result.stderr.strip().splitlines()
        assert "pass --code-model PROVIDER/MODEL" in line and " --model" not in line
