"""A request that says not to act, in everyday words around the command, is handed back, however the skill is
reached: routed, or named by the caller."""

from __future__ import annotations

import pytest

from semif_agent.engine import create_engine, local_available
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

needs_local = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

SAYS_NOT_TO_EMAIL = [
    "Don't forget to not email Bob about the invoice",
    "Remember not to email Bob",
    "Don't forget not to email Bob",
    "Make sure you don't email Bob",
    "Be sure not to email Bob about the invoice",
    "Please don't forget to never email Bob about the invoice",
    "I need you to not email Bob about the invoice",
    "Would you mind not emailing Bob about the invoice",  # the verb as a gerund after a lead-in
    "Do you mind not emailing Bob about the invoice",
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return create_workspace(tmp_path_factory.mktemp("negation") / "ws")


@pytest.fixture(scope="module")
def runner(workspace) -> SkillRunner:
    return SkillRunner(Workspace.load(workspace), engine=create_engine("local"))


def _drafts(workspace) -> set[str]:
    return {p.name for p in (workspace / "data" / "drafts").iterdir()}


@needs_local
@pytest.mark.parametrize("text", SAYS_NOT_TO_EMAIL)
@pytest.mark.parametrize("skill", [None, "email.compose"])
def test_a_request_that_says_not_to_email_writes_no_draft(
    runner: SkillRunner, workspace, text: str, skill: str | None
) -> None:
    before = _drafts(workspace)
    ran = runner.run(text, skill=skill)
    assert ran.handed_back, ran.gate and ran.gate.reason
    assert ran.gate is not None and ran.gate.rule == "negated", ran.gate.reason
    assert _drafts(workspace) == before


@needs_local
@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("Don't forget to email Bob about the invoice", "email.compose"),
        ("Remind me never to skip breakfast", "todos.add"),
        ("Don't let me forget to never call the plumber", "todos.add"),
    ],
)
def test_a_negation_in_what_to_do_or_remember_still_acts(runner: SkillRunner, text: str, skill: str) -> None:
    assert runner.decide(text).rule != "negated"
    ran = runner.run(text, skill=skill)
    assert (ran.skill, ran.handed_back) == (skill, False), ran.gate and ran.gate.reason
