"""A misspelt table or key of semif.toml is one warning naming it; a plug-in's table is kept without a word."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.workspace import Workspace
from semif_agent.workspace.unread import SettingsWarning


def workspace(tmp_path: Path, settings: str) -> Path:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "data" / "categories.json").write_text(json.dumps({"version": 1, "categories": [], "skills": []}))
    (root / "semif.toml").write_text(settings, encoding="utf-8")
    return root


def warned(tmp_path: Path, settings: str) -> tuple[Workspace, list[str]]:
    root = workspace(tmp_path, settings)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = Workspace.load(root)
    lines = [str(w.message) for w in caught if issubclass(w.category, SettingsWarning)]
    prefix = f"{root / 'semif.toml'}: "
    assert all(line.startswith(prefix) and "\n" not in line for line in lines)
    return loaded, [line.removeprefix(prefix) for line in lines]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            "[routing]\nact_treshold = 0.5\n",
            "[routing] act_treshold is not a setting semif reads; did you mean act_threshold?",
        ),
        ("[skils]\ntimeout = 3\n", "[skils] is not a table semif reads; did you mean [skills]?"),
        ("[skills]\ntimout = 3\n", "[skills] timout is not a setting semif reads; did you mean timeout?"),
        ("[log]\nfsnyc = true\n", "[log] fsnyc is not a setting semif reads; did you mean fsync?"),
        ("[telemtry]\nenabled = true\n", "[telemtry] is not a table semif reads; did you mean [telemetry]?"),
        ("[engine]\ntreshold = 0.3\n", "[engine] treshold is not a setting semif reads; did you mean threshold?"),
        (
            "[mcp]\nreorder = true\n",
            "[mcp] reorder is not a setting semif reads (it reads burst, queue, rate, rerank, runs, sessions, working)",
        ),
    ],
)
def test_a_misspelt_name_is_one_warning_naming_the_file_and_the_table(
    tmp_path: Path, settings: str, expected: str
) -> None:
    _, lines = warned(tmp_path, settings)
    assert lines == [expected]


def test_the_misspelt_setting_is_not_taken_and_the_right_one_is(tmp_path: Path) -> None:
    loaded, lines = warned(tmp_path, "[routing]\nact_treshold = 0.5\n")
    assert loaded.settings.routing.act_threshold is None and len(lines) == 1
    loaded, lines = warned(tmp_path / "again", "[routing]\nact_threshold = 0.5\n")
    assert loaded.settings.routing.act_threshold == 0.5 and lines == []


def test_plugin_tables_and_keys_of_other_layers_load_without_a_word(tmp_path: Path) -> None:
    loaded, lines = warned(
        tmp_path,
        '[engine]\nname = "lexical"\ncache = false\nbase_url = "http://localhost:1"\n'
        '[paths]\ncontacts = "data/contacts.json"\nnote = "n"\n'
        '[config]\ncity = "Lyon"\n[provider]\nkind = "openai"\n'
        "[myplugin]\nlevel = 3\n[weather]\ncity = 1\n",
    )
    assert lines == []
    assert loaded.settings.table("myplugin") == {"level": 3}
    assert loaded.settings.table("engine")["cache"] is False


def test_the_command_line_says_each_warning_once_on_one_line(tmp_path: Path) -> None:
    root = workspace(tmp_path, "[skils]\ntimeout = 3\n[routing]\nact_treshold = 0.5\n")
    result = CliRunner().invoke(main, ["tree", "-w", str(root)])
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert said == [
        f"warning: {root / 'semif.toml'}: [skils] is not a table semif reads; did you mean [skills]?",
        f"warning: {root / 'semif.toml'}: [routing] act_treshold is not a setting semif reads; "
        "did you mean act_threshold?",
    ]
