"""Every command that has --json answers an error in JSON on standard output, with the exit code it has without."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from semif_agent.cli import main


def commands_with_json(group: click.Group = main, path: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from commands_with_json(command, (*path, name))
        if any("--json" in param.opts for param in command.params):
            yield (*path, name), command


JSON_COMMANDS = list(commands_with_json())


def test_the_commands_with_json_are_all_here() -> None:
    names = {" ".join(path) for path, _ in JSON_COMMANDS}
    assert {
        "run",
        "route",
        "log",
        "log show",
        "label",
        "eval",
        "train",
        "models",
        "tree",
        "skills list",
        "skills show",
        "skills new",
    } <= names


@pytest.mark.parametrize(("path", "command"), JSON_COMMANDS, ids=[" ".join(p) for p, _ in JSON_COMMANDS])
def test_an_error_is_json_on_stdout_with_the_same_exit_code(path, command, tmp_path: Path) -> None:
    if not any("-w" in param.opts for param in command.params):
        pytest.skip("no workspace to get wrong")
    arguments = [param for param in command.params if isinstance(param, click.Argument)]
    dataset = tmp_path / "requests.jsonl"
    dataset.write_text('{"text": "hello", "skill": null}\n')
    words = [
        str(dataset) if isinstance(param.type, click.Path) and param.type.exists else "email.compose"
        for param in arguments
        if param.required
    ]
    required = [
        opt
        for param in command.params
        if isinstance(param, click.Option) and param.required
        for opt in (param.opts[0], "some text")
    ]
    args = [*path, *words, *required, "-w", str(tmp_path / "missing")]  # the workspace, or another mistake
    plain = CliRunner().invoke(main, args)
    as_json = CliRunner().invoke(main, [*args, "--json"])
    assert plain.exit_code == as_json.exit_code == 1, (plain.output, as_json.output)
    assert as_json.stderr == "" and len(plain.stderr.strip().splitlines()) == 1
    assert plain.stderr.startswith("Error: ")
    assert json.loads(as_json.stdout) == {"error": plain.stderr.strip().removeprefix("Error: ")}


def test_a_usage_error_is_json_too_and_keeps_its_exit_code(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", str(tmp_path / "nothing.jsonl"), "--json"])
    assert result.exit_code == 2 and result.stderr == ""
    assert "nothing.jsonl" in json.loads(result.stdout)["error"]


def test_json_help_says_what_is_printed() -> None:
    for path, command in JSON_COMMANDS:
        [option] = [param for param in command.params if "--json" in param.opts]
        assert option.help.startswith(("Print one JSON object", "Print one JSON array", "Print JSON lines")), path
