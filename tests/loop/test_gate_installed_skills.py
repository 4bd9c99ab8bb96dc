"""The act gate on real SKILL.md skills installed beside the starter, with no model: what a new user sees.

The skills are copies of nine real SKILL.md files (``tests/fixtures/skills-home``): openhue dims lights, findmy
finds an AirTag, telephony phones someone. Without a model a SKILL.md skill only shows its instructions, so the
gate weighs it as a skill that changes nothing in this run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from semif_agent.engine import create_engine
from semif_agent.loop import SkillRunner
from semif_agent.loop.settings import RunSettings
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

HOME_SKILLS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-home"


def workspace(root: Path, *, empty: bool = False, installed: bool = True) -> Workspace:
    create_workspace(root, empty=empty)
    if installed:
        for package in ("openclaw", "hermes-agent", "skillforge"):
            shutil.copytree(HOME_SKILLS / package, root / "skills" / package)
    return Workspace.load(root)


@pytest.fixture(scope="module")
def engine():
    return create_engine("local", {})


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, engine) -> SkillRunner:
    """The starter with the nine real skills copied into skills/<package>/."""
    return SkillRunner(workspace(tmp_path_factory.mktemp("installed") / "ws"), engine=engine)


def test_a_none_example_an_installed_skill_serves_no_longer_hands_its_requests_back(
    installed: SkillRunner, tmp_path: Path, engine
) -> None:
    # the starter's none examples say "Dim the bedroom lights" and "Phone my mother" are for no skill: the user
    # installed openhue and telephony for them
    for text, skill in (("Dim the lights in the bedroom", "openhue"), ("Phone my mother", "telephony")):
        verdict = installed.decide(text)
        assert (verdict.skill, verdict.acts, verdict.rule) == (skill, True, "cannot act"), verdict.reason
    # a none example the route sends to a skill of the starter still counts against it
    taxi = installed.decide("Call a taxi to take me to the airport")
    assert (taxi.acts, taxi.rule) == (False, "out-of-scope")
    # the starter alone hands them back, as its none examples are there for
    starter = SkillRunner(workspace(tmp_path / "starter", installed=False), engine=engine)
    for text in ("Dim the lights in the bedroom", "Phone my mother", "Call a taxi to take me to the airport"):
        assert starter.decide(text).handed_back, text


def test_a_lookup_is_not_handed_back_from_a_skill_that_only_shows_its_instructions(installed: SkillRunner) -> None:
    airtag = installed.decide("where is my AirTag?")
    assert airtag.gate is not None and airtag.gate.effects == "write"  # "Track Apple devices": doubt counts as writing
    assert (airtag.skill, airtag.acts, airtag.rule) == ("findmy", True, "cannot act"), airtag.reason
    # a lookup routed to a code skill that writes is still handed back
    code = installed.decide("Check everything is fine")
    assert code.skill == "todos.complete" and (code.acts, code.rule) == (False, "lookup-writes")


def test_an_unsure_skill_md_route_is_handed_back_with_its_candidates(tmp_path: Path, engine) -> None:
    # an empty workspace with the nine skills, and an act threshold of 100%: a skill is shown from 50%
    settings = RunSettings.resolve(workspace(tmp_path / "ws", empty=True), engine=engine, act_threshold=1.0)
    runner = SkillRunner(settings, engine=engine)
    vague = runner.decide("Something for the party")  # openhue at about 43%
    assert vague.gate is not None and vague.gate.skill == "openhue"
    assert (vague.acts, vague.rule) == (False, "unsure"), vague.reason
    assert "below the bar to show a skill 50%" in vague.reason
    assert len(vague.gate.candidates) > 1 and "not sure: openhue" in vague.gate.summary()
    sure = runner.decide("Dim the lights in the bedroom")  # openhue at about 94%
    assert (sure.skill, sure.acts, sure.rule) == ("openhue", True, "cannot act")
