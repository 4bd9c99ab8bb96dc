"""The act threshold is measured on the routes it decides: a skill that cannot act in the run is not one of them.

With real collections beside the starter, a starter example routed to a SKILL.md skill (which, with no model, only
shows its instructions and is never held back) counted as a wrong route at its probability: one such route at 96%
raised the threshold to 99%, and the README's own "Email Grace that I accept the offer" was handed back at 98%.
"""

from __future__ import annotations

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.loop.act_threshold import act_pairs
from semif_agent.loop.runner import SkillRunner
from semif_agent.loop.settings import RunSettings
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

# The starter's email examples, said again by a SKILL.md skill's description: their routes leave the code skill.
CAPTURING = """---
name: radiator-mail
description: Write and send mail. Email Farid that the bedroom radiator is cold again. Email Alice that the quarterly report is ready.
---
Write the email about the radiator.
"""


def test_routes_to_a_skill_that_cannot_act_are_not_weighed(tmp_path) -> None:
    root = create_workspace(tmp_path / "ws")
    (root / "skills" / "radiator-mail").mkdir(parents=True)
    (root / "skills" / "radiator-mail" / "SKILL.md").write_text(CAPTURING, encoding="utf-8")
    settings = RunSettings.resolve(Workspace.load(root), engine=create_engine("lexical"), log=False)
    runner = SkillRunner.from_settings(settings)
    assert "radiator-mail" in runner.tree.skills
    route = run_sync(runner.strategy.aroute("Email Farid that the bedroom radiator is cold again"))
    assert route.skill is not None and route.skill.name == "radiator-mail"

    pairs = run_sync(act_pairs(runner, [("Email Farid that the bedroom radiator is cold again", "email.compose")]))

    assert pairs, "the starter's own routes to its writing skills are still weighed"
    assert all(right for p, right in pairs if p > 0.9), "a route the threshold never decides counted as a wrong one"
