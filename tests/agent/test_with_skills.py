"""One `with_skills` for every source of skills: a list of Skill, a folder of SKILL.md skills, one skill's folder,
a Workspace or its SkillRunner; the older builders give what it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent.agent import Agent, AgentConfigError, Skill
from semif_agent.engine import create_engine
from semif_agent.llm import ScriptedProvider
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ._skill_support import write_skill
from ._support import calls, collect
from .test_skill_hooks import JOURNAL, journal_skill, noop

SHEETS = Skill(name="sheets", description="Read spreadsheets.", activation="on_demand")
MAIL = Skill(name="mail", description="Send mail.")


def names(agent: Agent) -> list[str]:
    return [skill.name for skill in agent.skills.skills()]


def test_a_list_of_skills(tmp_path: Path) -> None:
    agent = Agent(llm=ScriptedProvider([])).with_skills([SHEETS, MAIL])
    assert names(agent) == ["sheets", "mail"]
    assert agent.skills.is_active("mail") and not agent.skills.is_active("sheets")
    assert names(Agent(llm=ScriptedProvider([])).with_skill(SHEETS)) == ["sheets"]


@pytest.mark.parametrize("as_text", [True, False])
def test_a_folder_of_skill_md_skills_as_text_or_path(tmp_path: Path, as_text: bool) -> None:
    write_skill(tmp_path / "skills", "guide")
    write_skill(tmp_path / "skills" / "nested", "helper")
    folder = str(tmp_path / "skills") if as_text else tmp_path / "skills"
    agent = Agent(llm=ScriptedProvider([])).with_skills(folder)
    assert sorted(names(agent)) == ["guide", "helper"]
    assert all(skill.activation == "on_demand" and skill.path is not None for skill in agent.skills.skills())
    directory = Agent(llm=ScriptedProvider([])).with_skills_directory(folder)
    assert names(directory) == names(agent)


def test_a_single_skill_folder(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "guide", "A guide to the guide.")
    agent = Agent(llm=ScriptedProvider([])).with_skills(folder)
    assert names(agent) == ["guide"] and agent.skills.get("guide").description == "A guide to the guide."
    strict = Agent(llm=ScriptedProvider([])).with_skill_from_path(folder)
    assert names(strict) == names(agent) and strict.skills.get("guide").activation == "on_demand"


def test_scripts_of_a_list_of_skills_run_in_the_workspace_given(tmp_path: Path) -> None:
    folder = journal_skill(tmp_path / "skills")
    work = tmp_path / "work"
    work.mkdir()
    provider = ScriptedProvider([calls(("noop", {})), "finished"])
    agent = Agent(llm=provider).with_tools([noop])
    agent.with_skills([Skill.from_path(folder)], allow_scripts=True, workspace=work)
    agent.skills.activate("step-journal")
    collect(agent.stream("go"))
    assert len((work / "journal.txt").read_text().splitlines()) == 4  # pre and post step, two rounds


JOURNAL_IN_DRAFTS = JOURNAL.replace('"journal.txt"', 'os.path.join("data", "drafts", "journal.txt")')
"""The journal hook for a semif workspace: there a script writes only the write dirs, never the records' folder."""


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = create_workspace(tmp_path / "ws")
    journal_skill(root / "skills", JOURNAL_IN_DRAFTS)
    return Workspace.load(root)


def test_a_workspace_gives_its_code_and_skill_md_skills_and_runs_scripts_in_it(workspace: Workspace) -> None:
    runner = SkillRunner(workspace, engine=create_engine("lexical", {}))
    provider = ScriptedProvider([calls(("noop", {})), "finished"])
    agent = Agent(llm=provider).with_tools([noop]).with_skills(runner, allow_scripts=True)
    skills = names(agent)
    assert "step-journal" in skills and "email.compose" in skills
    assert all(agent.skills.get(name).activation == "on_demand" for name in skills)
    assert agent.skills.scripts_allowed("step-journal")
    assert agent.skills.get("email.compose").tool_names == ("skill__email__compose",)
    agent.skills.activate("step-journal")
    collect(agent.stream("go"))
    assert (workspace.root / "data" / "drafts" / "journal.txt").is_file()  # the workspace was their folder

    same = Agent(llm=ScriptedProvider([])).with_workspace(runner)
    assert names(same) == skills and not same.skills.scripts_allowed("step-journal")


def test_a_workspace_itself_is_routed_by_its_own_runner(workspace: Workspace) -> None:
    agent = Agent(llm=ScriptedProvider([])).with_skills(workspace)
    runner = SkillRunner(workspace)
    assert sorted(names(agent)) == sorted(s.name for s in runner.tree.skills.values() if not s.is_stub)
    assert agent.skills.discovery.settings.tree is not None


def test_anything_else_is_refused_with_what_it_takes() -> None:
    with pytest.raises(AgentConfigError, match="a list of Skill, a folder of SKILL.md skills, a Workspace"):
        Agent(llm=ScriptedProvider([])).with_skills(3)  # type: ignore[arg-type]  # the wrong type is the point
    with pytest.raises(AgentConfigError, match="takes Skill values, got str"):
        Agent(llm=ScriptedProvider([])).with_skills(["sheets"])  # type: ignore[list-item]  # the wrong type is the point
