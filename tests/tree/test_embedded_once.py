"""A new tree's skills are embedded once: the builder embeds each skill as the router will score it.

The builder embedded "name: description" while the router embeds a description that already says its name's
words as it is: on a workspace of 1,600 real skills, the first request embedded most of them a second time.
"""

from __future__ import annotations

import pytest

from semif_agent.engine import local_available
from semif_agent.loop.settings import RunSettings
from semif_agent.routing.scoring import leaf_text
from semif_agent.tree import SkillTree
from semif_agent.workspace import Workspace

from .test_workspace_tree import skill

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")


def test_the_router_embeds_no_skill_the_tree_build_embedded(make_workspace) -> None:
    from semif_agent.engine.local import Embedder, LocalEngine, model_file

    root = make_workspace({"email.compose": None})
    skill(root / "skills", "debug-tests", "Debug failing tests step by step before changing code.")
    skill(root / "skills" / "pack", "write-plan", "Write a plan for a new feature, task by task.")
    skill(root / "skills", "review-code", "Look over a pull request and leave comments.")
    workspace = Workspace.load(root)
    embedder = Embedder(model_file())  # no cache on disk: every text the model runs is counted
    engine = LocalEngine(embedder)
    tree = SkillTree.for_workspace(workspace, embed=engine.embed)
    built = embedder.computed
    skill_md = {name for name, leaf in tree.skills.items() if leaf.is_skill_md}
    assert skill_md == {"debug-tests", "write-plan", "review-code"} and built >= len(skill_md)

    router_texts = [leaf_text(name, tree.skills[name].description) for name in sorted(skill_md)]
    embedder.embed(router_texts)  # what the router's leaf index embeds for them (the description, or name: description)

    assert embedder.computed == built, "the router's first request would embed SKILL.md skills a second time"
    index = RunSettings.resolve(workspace, engine=engine).build_strategy(tree, engine).scorer.current()
    assert skill_md <= set(index.names)


def test_copies_of_one_skill_in_several_collections_are_embedded_once(make_workspace) -> None:
    from semif_agent.engine.local import Embedder, LocalEngine, model_file

    root = make_workspace({"email.compose": None})
    for collection in ("superpowers", "ecc", "plugins"):
        skill(root / "skills" / collection, "debug-tests", "Debug failing tests step by step before changing code.")
    workspace = Workspace.load(root)
    embedder = Embedder(model_file())
    engine = LocalEngine(embedder)
    tree = SkillTree.for_workspace(workspace, embed=engine.embed)
    copies = sorted(name for name, leaf in tree.skills.items() if leaf.is_skill_md)
    assert len(copies) == 3 and len({leaf_text(name, tree.skills[name].description) for name in copies}) == 1
    before = embedder.computed
    embedder.embed([leaf_text(name, tree.skills[name].description) for name in copies])
    assert embedder.computed == before, "each copy's folder suffix made its text new to the model"
