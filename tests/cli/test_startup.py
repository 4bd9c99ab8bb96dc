"""``semif`` starts light: commands are imported only when they run, and ``--help`` still lists them all."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import semif_agent
import semif_agent.cli
from semif_agent.cli import COMMANDS, main
from semif_agent.cli._common import LazyCommand, SemifGroup

SRC = Path(semif_agent.__file__).resolve().parents[1]
# what no --help may pull in: the agent, the skill loop, model providers, generation, and their third-party deps
HEAVY = (
    "semif_agent.agent",
    "semif_agent.loop",
    "semif_agent.llm",
    "semif_agent.forge",
    "pydantic",
    "numpy",
    "onnxruntime",
)


def _entries(entries: tuple[LazyCommand, ...] = COMMANDS, path: tuple[str, ...] = ()):
    """(path, entry) for every command of the table, subcommands included."""
    for entry in entries:
        yield (*path, entry.name), entry
        yield from _entries(entry.subcommands, (*path, entry.name))


def _module(entry: LazyCommand) -> str:
    return entry.target.partition(":")[0]


def _python(code: str) -> tuple[str, set[str]]:
    """Run CODE in a new interpreter on this source tree: (its output, the modules it imported)."""
    code += "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def _semif_in_fresh_interpreter(*args: str) -> tuple[int, str, set[str]]:
    """Run ``semif ARGS`` in a new interpreter: (exit code, output, the modules it imported)."""
    out, modules = _python(
        "from semif_agent.cli import main\n"
        "try:\n"
        f"    main({list(args)!r}, prog_name='semif')\n"
        "except SystemExit as exc:\n"
        "    print(f'exit {exc.code or 0}')\n"
    )
    out, _, code = out.rstrip("\n").rpartition("exit ")
    return int(code), out, modules


def _loaded(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


def test_help_imports_no_command_module() -> None:
    code, out, modules = _semif_in_fresh_interpreter("--help")
    assert code == 0
    command_modules = {_module(entry) for _, entry in _entries()}
    assert command_modules & modules == set()
    heavy = (
        *HEAVY,
        "semif_agent.engine",
        "semif_agent.tree",
        "semif_agent.routing",
        "semif_agent.catalog",
        "asyncio",
        "yaml",
    )
    assert _loaded(modules, heavy) == set()
    assert "Usage: semif" in out


def test_help_lists_every_command_with_its_summary() -> None:
    _, out, _ = _semif_in_fresh_interpreter("--help")
    listed = dict(line.split(None, 1) for line in out.split("Commands:\n")[1].splitlines())
    assert sorted(listed) == sorted(entry.name for entry in COMMANDS)
    for entry in COMMANDS:
        shown = listed[entry.name].removesuffix("...").strip()
        assert entry.summary.startswith(shown) and shown


@pytest.mark.parametrize("path", [" ".join(path) for path, _ in _entries()])
def test_a_commands_help_imports_its_own_module_and_nothing_heavy(path: str) -> None:
    words = tuple(path.split())
    code, out, modules = _semif_in_fresh_interpreter(*words, "--help")
    assert code == 0
    assert out.startswith(f"Usage: semif {path} ")
    on_path = {_module(entry) for p, entry in _entries() if p == words[: len(p)]}
    assert on_path <= modules
    others = {_module(entry) for _, entry in _entries()} - on_path - {"semif_agent.cli.workspace_cmds"}
    assert others & modules == set()
    assert _loaded(modules, HEAVY) == set()


def test_help_is_the_same_as_with_every_command_imported() -> None:
    """Summaries from the table are shortened exactly as click shortens the commands' own docstrings."""
    helps = (["--help"], ["skills", "--help"], ["tree", "--help"])
    lazy = [_semif_in_fresh_interpreter(*args)[1] for args in helps]
    loaded, _ = _python(
        "import click\n"
        "from semif_agent.cli import main\n"
        "def load_all(group, ctx):\n"
        "    for name in group.list_commands(ctx):\n"
        "        command = group.get_command(ctx, name)\n"
        "        if hasattr(command, 'list_commands'):\n"
        "            load_all(command, ctx)\n"
        "load_all(main, click.Context(main))\n"
        f"for args in {[list(args) for args in helps]!r}:\n"
        "    try:\n"
        "        main(args, prog_name='semif')\n"
        "    except SystemExit:\n"
        "        print(end='\\f')\n"
    )
    assert loaded.split("\f")[:-1] == lazy
    assert all("Commands:" in help_text for help_text in lazy)


@pytest.mark.parametrize(("path", "entry"), list(_entries()), ids=[" ".join(path) for path, _ in _entries()])
def test_each_entry_matches_the_command_it_names(path: tuple[str, ...], entry: LazyCommand) -> None:
    command = entry.load()
    assert command.name == entry.name
    assert entry.summary == command.get_short_help_str(limit=10_000)
    if entry.subcommands:
        assert isinstance(command, SemifGroup)


def test_every_command_the_cli_defines_is_reachable_from_main() -> None:
    ctx = click.Context(main)

    def reachable(group: click.Group) -> set[int]:
        found = set()
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            found.add(id(command))
            if isinstance(command, click.Group):
                found |= reachable(command)
        return found

    seen = reachable(main)
    defined = []
    for info in pkgutil.iter_modules(semif_agent.cli.__path__, "semif_agent.cli."):
        module = importlib.import_module(info.name)
        defined += [
            f"{info.name}:{name}"
            for name, value in vars(module).items()
            if isinstance(value, click.Command) and value is not main and id(value) not in seen
        ]
    assert defined == []


def test_version_is_the_installed_distributions() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"semif, version {importlib.metadata.version('semif-agent')}\n")


@pytest.mark.parametrize("args", [["rnu"], ["skills", "valdate"], ["xyzzy"]])
def test_unknown_commands_get_clicks_usual_error(args: list[str]) -> None:
    *group_path, unknown = args
    group = main
    for name in group_path:
        group = group.get_command(click.Context(group), name)
    names = group.list_commands(click.Context(group))
    plain = click.Group("semif", commands={name: click.Command(name) for name in names})
    expected = CliRunner().invoke(plain, [unknown]).stderr.splitlines()[-1]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == expected
    assert f"No such command {unknown!r}" in expected


def test_a_command_whose_module_fails_to_import_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "semif_broken_cmd.py").write_text("import semif_dependency_not_installed\n", encoding="utf-8")
    (tmp_path / "semif_fine_cmd.py").write_text(
        "import click\n\n@click.command()\ndef fine():\n    click.echo('fine ran')\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    group = SemifGroup(
        "semif",
        lazy_commands=[
            LazyCommand("broken", "semif_broken_cmd:broken", "A command that needs a missing dependency."),
            LazyCommand("fine", "semif_fine_cmd:fine", "A command that works."),
        ],
    )

    listing = CliRunner().invoke(group, ["--help"])
    assert listing.exit_code == 0 and "broken" in listing.stdout and "A command that works." in listing.stdout

    result = CliRunner().invoke(group, ["broken", "--help"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: the 'broken' command cannot be loaded (semif_broken_cmd): "
        "ModuleNotFoundError: No module named 'semif_dependency_not_installed'"
    ]
    assert isinstance(result.exception, SystemExit)  # click's one-line exit, not a traceback

    other = CliRunner().invoke(group, ["fine"])
    assert (other.exit_code, other.stdout) == (0, "fine ran\n")
