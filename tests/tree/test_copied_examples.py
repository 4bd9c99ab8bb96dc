"""A skill whose examples copy another skill's: the copies are left out of it, with a warning naming both skills."""

from __future__ import annotations

import json

from semif_agent.tree import SkillTree
from semif_agent.workspace import Workspace

from .test_workspace_tree import CountingEmbed, skill

OWN = ["Email Alice that the quarterly report is ready", "Send a message to Bob about the hosting invoice"]


def test_a_skill_md_copying_a_code_skills_examples_loses_the_copies_and_the_warning_names_both(make_workspace) -> None:
    root = make_workspace({"email.compose": None})
    categories = root / "data" / "categories.json"
    data = json.loads(categories.read_text())
    data["skills"][0]["examples"] = OWN
    categories.write_text(json.dumps(data))
    copies = ["  email ALICE that the quarterly report is ready ", "Send a message to Bob about the hosting invoice"]
    extra = "examples:\n" + "".join(f"  - {json.dumps(e)}\n" for e in [*copies, "Tell Dana by email that I agree"])
    skill(root / "skills", "mail-helper", "Email anyone.", extra=extra)
    for _ in range(2):  # built, then from the stored tree
        tree = SkillTree.for_workspace(Workspace.load(root), embed=CountingEmbed())
        assert tree.skills["email.compose"].examples == tuple(OWN)
        assert tree.skills["mail-helper"].examples == ("Tell Dana by email that I agree",)
        [warning] = [str(p) for p in tree.problems if "copies" in str(p)]
        assert "skill 'mail-helper' copies 2 examples of skill 'email.compose'" in warning
        assert "'email.compose' keeps them" in warning and "SKILL.md" in warning
