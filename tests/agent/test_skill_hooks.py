"""SKILL.md lifecycle hooks fire inside an Agent: pre_step before each round's model call, post_step after its tools."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from semif_agent.agent import Agent, tool
from semif_agent.llm import ScriptedProvider
from semif_agent.sandbox._confine import landlock_abi

from ._support import calls, collect

JOURNAL = """\
import os, sys
with open("journal.txt", "a") as out:
    out.write(" ".join([os.environ["SKILL_HOOK"], *sys.argv[1:], os.environ["HOME"]]) + "\\n")
"""

ESCAPE = """\
import os
open(os.path.join(os.environ["SKILL_DIR"], "planted.txt"), "w").write("x")
"""


def journal_skill(root: Path, script: str = JOURNAL) -> Path:
    folder = root / "step-journal"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: step-journal\ndescription: Keeps a journal of the agent's steps.\n"
        "hooks:\n  pre_step: scripts/journal.py\n  post_step: scripts/journal.py\n---\n"
        "Nothing to do: the hooks keep the journal.\n"
    )
    (folder / "scripts" / "journal.py").write_text(script)
    return folder


@tool
def noop() -> str:
    """Does nothing."""
    return "done"


def run_turn(skills: Path, workspace: Path, *, allow_scripts: bool) -> list:
    provider = ScriptedProvider([calls(("noop", {})), "finished"])
    agent = (
        Agent(llm=provider)
        .with_tools([noop])
        .with_skills_directory(skills, allow_scripts=allow_scripts, workspace=workspace)
    )
    agent.skills.activate("step-journal")
    return collect(agent.stream("go"))


def test_hooks_of_an_active_skill_run_around_every_round_in_the_workspace(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    journal_skill(tmp_path / "skills")
    events = run_turn(tmp_path / "skills", workspace, allow_scripts=True)
    turn_id = events[-1].turn_id
    assert events[-1].diagnostics.stopped_by == "stop"
    lines = (workspace / "journal.txt").read_text().splitlines()
    assert lines == [
        f"{hook} --turn {turn_id} --round {index} {workspace}" for index in (0, 1) for hook in ("pre_step", "post_step")
    ]


def test_hooks_do_not_run_without_allow_scripts_nor_for_an_inactive_skill(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    journal_skill(tmp_path / "skills")
    run_turn(tmp_path / "skills", workspace, allow_scripts=False)
    assert not (workspace / "journal.txt").exists()
    agent = Agent(llm=ScriptedProvider(["hi"])).with_skills_directory(
        tmp_path / "skills", allow_scripts=True, workspace=workspace
    )
    collect(agent.stream("go"))  # registered, never activated
    assert not (workspace / "journal.txt").exists()


@pytest.mark.skipif(landlock_abi() < 1, reason="the kernel has no Landlock: file access is not confined")
def test_a_hook_is_confined_and_its_failure_does_not_stop_the_turn(tmp_path, caplog):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    folder = journal_skill(tmp_path / "skills", ESCAPE)
    with caplog.at_level(logging.WARNING, logger="semif_agent.agent"):
        events = run_turn(tmp_path / "skills", workspace, allow_scripts=True)
    assert events[-1].diagnostics.stopped_by == "stop" and events[-1].text == "finished"
    assert not (folder / "planted.txt").exists()
    assert "the pre_step hook of skill 'step-journal' failed" in caplog.text
