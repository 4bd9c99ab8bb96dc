"""A run's settings are resolved once: the command line over semif.toml over tuned routing over the defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.engine import ScriptedEngine, create_engine
from semif_agent.engine.base import Embeds, embedding_function
from semif_agent.errors import UserError
from semif_agent.loop import SkillRunner
from semif_agent.loop.settings import RunSettings
from semif_agent.routing.strategies import BestLeaf
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return create_workspace(tmp_path / "ws")


def with_settings(root: Path, **tables: str) -> Workspace:
    """The workspace at ``root`` with each of ``tables``' lines added to that table of its semif.toml."""
    settings_file = root / "semif.toml"
    text = settings_file.read_text(encoding="utf-8")
    for table, lines in tables.items():
        header = f"[{table}]\n"
        text = text.replace(header, header + lines + "\n") if header in text else text + "\n" + header + lines + "\n"
    settings_file.write_text(text, encoding="utf-8")
    return Workspace.load(root)


def test_semif_toml_gives_what_the_command_line_leaves_out(root: Path) -> None:
    ws = with_settings(root, routing='strategy = "beam"\nthreshold = 0.4', skills="timeout = 30\nallow_scripts = true")
    settings = RunSettings.resolve(ws, engine="lexical")
    assert (settings.engine, settings.strategy, settings.threshold) == ("lexical", "beam", 0.4)
    assert (settings.timeout, settings.allow_scripts, settings.log) == (30.0, True, True)
    given = RunSettings.resolve(
        ws, engine="lexical", strategy="shortlist", threshold=0.2, timeout=5, allow_scripts=False, log=False
    )
    assert (given.strategy, given.threshold, given.timeout, given.allow_scripts, given.log) == (
        "shortlist",
        0.2,
        5.0,
        False,
        False,
    )


def test_semif_toml_wins_over_the_tuned_routing_which_applies_to_its_own_engine_only(root: Path) -> None:
    (root / "data" / "routing.json").write_text(
        json.dumps({"strategy": "best_leaf", "threshold": 0.25, "temperature": 0.05, "engine": "lexical"})
    )
    ws = Workspace.load(root)
    tuned = RunSettings.resolve(ws, engine="lexical")
    assert (tuned.strategy, tuned.threshold, tuned.temperature) == ("best_leaf", 0.25, 0.05)
    assert RunSettings.resolve(ws, engine="scripted:x.json").strategy is None  # tuned on another engine
    ws = with_settings(root, routing="threshold = 0.5")
    assert RunSettings.resolve(ws, engine="lexical").threshold == 0.5


def test_a_model_on_the_command_line_means_the_llm_engine_with_that_model(root: Path) -> None:
    settings = RunSettings.resolve(Workspace.load(root), model="openai/gpt-4o-mini")
    assert settings.engine == "llm" and settings.engine_table["model"] == "openai/gpt-4o-mini"
    assert settings.model_note is None and settings.model_configured


def test_an_llm_engine_without_a_model_gets_the_default_model_and_says_which(root: Path) -> None:
    settings = RunSettings.resolve(Workspace.load(root), engine="llm")
    assert settings.engine_table["model"] in settings.model_note
    assert settings.model_note.startswith("model ") and "--model to choose another" in settings.model_note


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"threshold": "high"}, "threshold must be a number, not 'high'"),
        ({"temperature": 0}, "temperature must be a positive number, not 0"),
        ({"timeout": -1}, "timeout must be a positive number of seconds, not -1"),
        ({"strategy": "magic"}, "strategy must be one of chain, "),
        ({"engine": "nosuch"}, "unknown engine 'nosuch' (known: "),
        ({"judge": "nosuch"}, "unknown engine 'nosuch' (known: "),
    ],
)
def test_a_bad_value_is_one_clear_line(root: Path, given: dict, message: str) -> None:
    with pytest.raises(UserError) as caught:
        RunSettings.resolve(Workspace.load(root), **given)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_strategy_in_semif_toml_names_the_file(root: Path) -> None:
    ws = with_settings(root, routing='strategy = "magic"')
    with pytest.raises(UserError, match=r"semif\.toml: \[routing\] strategy must be one of chain, .*not 'magic'"):
        RunSettings.resolve(ws, engine="lexical")


def test_an_unknown_engine_in_semif_toml_names_the_file_and_the_key(root: Path) -> None:
    ws = with_settings(root, engine='name = "locl"')
    with pytest.raises(UserError) as caught:
        RunSettings.resolve(ws)
    assert str(caught.value).startswith(f"{root / 'semif.toml'}: [engine] name: unknown engine 'locl' (known: ")
    with pytest.raises(UserError) as given:  # named on the command line: the file is not to blame
        RunSettings.resolve(ws, engine="locl")
    assert str(given.value).startswith("unknown engine 'locl' (known: ")
    assert RunSettings.resolve(ws, engine="lexical").engine == "lexical"  # another given: the file's is not used


def test_the_engine_takes_the_values_given_and_the_chains_own_cut(root: Path) -> None:
    ws = with_settings(root, engine="threshold = 0.9", routing='strategy = "chain"\ntemperature = 0.2')
    settings = RunSettings.resolve(ws, engine="lexical")
    assert settings.engine_options()["threshold"] == 0.9  # [engine] threshold stands: nothing was given
    assert settings.engine_options()["temperature"] == 0.2  # the chain's probabilities are the engine's
    given = RunSettings.resolve(ws, engine="lexical", threshold=0.1)
    assert given.build_engine().threshold == 0.1
    measured = given.measured("best_leaf")
    assert (measured.threshold, measured.temperature) == (0.1, None)  # the workspace's temperature is the chain's


def test_from_settings_runs_a_request_end_to_end_on_the_lexical_engine(root: Path) -> None:
    settings = RunSettings.resolve(Workspace.load(root), engine="lexical")
    assert settings.strategy is None  # the engine's default: it scores options, so the examples strategy
    runner = SkillRunner.from_settings(settings)
    assert runner.engine.name == "lexical" and runner.judge is runner.engine
    assert isinstance(runner.strategy, BestLeaf)
    result = runner.run("Email Alice that the quarterly report is ready")
    assert (result.skill, result.error, result.assessment.label) == ("email.compose", None, "success")
    assert result.changes.created, "a draft was written"
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in rows][0] == "route" and rows[-1]["kind"] == "outcome"
    assert rows[-1]["outcome"] == result.assessment.label


def test_with_logging_off_nothing_is_written(root: Path) -> None:
    settings = RunSettings.resolve(Workspace.load(root), engine="lexical", log=False)
    result = SkillRunner.from_settings(settings).run("Add milk to my todo list")
    assert result.rows and not (root / "data" / "decisions.jsonl").exists()


def test_a_runner_of_a_workspace_resolves_its_settings_as_from_settings_does(root: Path) -> None:
    ws = with_settings(root, engine='name = "lexical"', routing='strategy = "chain"', skills="timeout = 7")
    runner = SkillRunner(ws)
    assert runner.settings == RunSettings.resolve(ws)
    assert runner.strategy.name == "chain" and runner.body_timeout == 7.0
    scripted = SkillRunner(ws, engine=ScriptedEngine(["none"]), body_timeout=3, allow_scripts=True)
    assert (scripted.settings.engine, scripted.body_timeout, scripted.allow_scripts) == ("scripted", 3.0, True)
    with pytest.raises(UserError, match="give them to RunSettings.resolve"):
        SkillRunner(RunSettings.resolve(ws), body_timeout=3)


def test_only_an_engine_that_embeds_hands_its_embedding_to_the_tree() -> None:
    lexical = create_engine("lexical")
    assert not isinstance(lexical, Embeds) and embedding_function(lexical) is None
    local = create_engine("local")
    assert isinstance(local, Embeds)
    vectors = embedding_function(local)(["add milk to my list", "put milk on my todo list", "the weather in Lisbon"])
    assert vectors.shape == (3, 384)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
