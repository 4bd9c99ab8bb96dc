"""What a skill does to the workspace: ``effects`` declared in a manifest or a SKILL.md, else read from its words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.starter import TEMPLATE_DIR
from semif_agent.tree import SkillTree
from semif_agent.tree.effects import infer_effects
from semif_agent.tree.manifests import parse_manifests
from semif_agent.workspace import Workspace

from .test_workspace_tree import skill


def manifests(**entry):
    data = {
        "categories": [{"name": "email"}],
        "skills": [{"name": "email.compose", "category": "email", "description": "Email someone.", **entry}],
        "none_examples": ["Book a flight to Rome"],
    }
    return parse_manifests(data, file="categories.json", bodies_dir=Path("bodies"))


@pytest.mark.parametrize("declared", ["read", "write"])
def test_a_manifest_declares_its_effects(declared: str) -> None:
    parsed = manifests(effects=declared)
    assert parsed.skills["email.compose"].effects == declared
    assert parsed.skills["email.compose"].to_dict()["effects"] == declared


def test_an_unknown_effect_skips_the_entry_and_says_why() -> None:
    parsed = manifests(effects="delete")
    assert "email.compose" not in parsed.skills
    assert "effects must be 'read' or 'write', not 'delete'" in str(parsed.problems[0])


def test_unsaid_effects_are_read_from_the_actions_and_doubt_writes() -> None:
    assert manifests(actions=["read the drafts and list them"]).skills["email.compose"].effects == "read"
    assert manifests(actions=["list the drafts", "write a summary file"]).skills["email.compose"].effects == "write"
    assert manifests().skills["email.compose"].effects == "write"  # "Email someone." names no way of reading
    assert infer_effects("Show what is on my calendar this week.") == "read"
    assert infer_effects("Handle invoices.") == "write"


def test_none_examples_are_the_none_options_examples() -> None:
    assert manifests().none_examples == ("Book a flight to Rome",)
    bad = parse_manifests({"categories": [], "skills": [], "none_examples": "x"}, file="c.json", bodies_dir=Path("b"))
    assert "'none_examples' must be a list of strings" in str(bad.problems[0])


def test_the_starter_declares_every_skills_effects() -> None:
    doc = json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text())
    assert {s["name"]: s["effects"] for s in doc["skills"]}["calendar.list_events"] == "read"
    assert all(s.get("effects") in ("read", "write") for s in doc["skills"])
    assert len(doc["none_examples"]) >= 20


def test_a_skill_md_declares_its_effects_in_metadata(make_workspace) -> None:
    root = make_workspace({"email.compose": None})
    skill(root / "skills", "show-plan", "Write a plan.", extra="metadata:\n  effects: read\n  category: email\n")
    skill(root / "skills", "draft-plan", "Write an implementation plan for a feature.")
    skill(root / "skills", "list-plans", "List and show the plans made so far.")
    skill(root / "skills", "show-and-tidy", "Show the plans.", extra="metadata:\n  effects: write\n")
    tree = SkillTree.for_workspace(Workspace.load(root))
    assert tree.skills["show-plan"].effects == "read"  # declared, beside the code skills of its category
    assert tree.skills["draft-plan"].effects == "write"  # placed by the builder, read from its words
    assert tree.skills["list-plans"].effects == "read"
    assert tree.skills["show-and-tidy"].effects == "write"  # placed by the builder, as declared
    again = SkillTree.for_workspace(Workspace.load(root))  # from the stored tree this time
    assert {n: s.effects for n, s in again.skills.items()} == {n: s.effects for n, s in tree.skills.items()}


def test_nouns_and_participles_in_a_bare_description_are_not_verbs() -> None:
    # the real sports-scores skill (pm-skills): "schedules" and "(live/final/scheduled)" are what it reads
    sports_scores = (
        "Get live scores, schedules, and standings for major leagues with zero API keys — ESPN's public JSON "
        "endpoints via curl, covering NFL, NBA, MLB, NHL, and world football. Use when asked what's the score, did "
        "my team win, today's games, or league standings right now. Produces the scores with game state "
        "(live/final/scheduled), the asked-team answer first, and the rerunnable command."
    )
    assert infer_effects(sports_scores) == "read"
    assert infer_effects("List, add, edit, complete, or delete Apple Reminders.") == "write"  # bare verbs still count
    assert infer_effects("Gets scores and schedules meetings.") == "write"  # inflected verbs: "schedules" is one
    assert infer_effects("Get the saved notes and update them.") == "write"
