"""The stored tree keeps what each SKILL.md body says to find the skill by, so a new process need not read them all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from semif_agent.engine.lexical import LexicalEngine
from semif_agent.routing.scoring import LeafScorer
from semif_agent.tree import SkillTree, skill_md_evidence
from semif_agent.tree.skill_md_evidence import BodyEvidence, remember_evidence
from semif_agent.tree.workspace_tree import tree_file
from semif_agent.workspace import Workspace

from .test_workspace_tree import CountingEmbed, skill

RESTORE_BODY = "## When to use\n- Nobody has ever tried a restore of our Mongo replica set\n- Backups are untested\n"
REQUEST = "has anyone tried a mongo replica restore"


def forget_bodies() -> None:
    """What a new process knows of the bodies: nothing."""
    skill_md_evidence._told.clear()
    skill_md_evidence._evidence.cache_clear()


@pytest.fixture(autouse=True)
def new_process() -> Iterator[None]:
    forget_bodies()
    yield
    forget_bodies()


@pytest.fixture
def workspace(make_workspace) -> Workspace:
    root = make_workspace({"email.compose": None})
    skill(root / "skills", "db-backups", "Check database backups and their schedule.", body=RESTORE_BODY)
    skill(root / "skills", "debug-tests", "Find why a test fails, step by step, before changing code.")
    skill(root / "skills", "write-plan", "Write an implementation plan for a feature.")
    return Workspace.load(root)


def shortlist(workspace: Workspace) -> list[tuple[str, float]]:
    tree = SkillTree.for_workspace(workspace, embed=CountingEmbed())
    return LeafScorer(tree, LexicalEngine()).find(REQUEST, 3)


def stored_entry(workspace: Workspace, name: str) -> dict:
    [entry] = [e for e in json.loads(tree_file(workspace).read_text())["skills"] if e["name"] == name]
    return entry


def no_body_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path) -> None:
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(skill_md_evidence, "read_document", refuse)


def test_a_new_process_finds_by_the_stored_evidence_without_reading_a_body(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = shortlist(workspace)
    assert fresh[0][0] == "db-backups"  # found by its body's "when to use" items, which its description lacks
    assert stored_entry(workspace, "db-backups")["seen"]["evidence"]["uses"][0].startswith("Nobody has ever tried")
    forget_bodies()
    no_body_read(monkeypatch)
    assert shortlist(workspace) == fresh


def test_an_edited_body_is_read_again_and_stored_anew(workspace: Workspace) -> None:
    shortlist(workspace)
    forget_bodies()
    skill(workspace.root / "skills", "db-backups", "Check database backups and their schedule.", body="## Setup\n")
    assert shortlist(workspace)[0][0] != "db-backups"  # what it said before is not served
    evidence = stored_entry(workspace, "db-backups")["seen"]["evidence"]
    assert evidence["uses"] == [] and evidence["headings"] == ["Setup"]


@pytest.mark.parametrize(
    "damage",
    [
        {"uses": "Nobody", "headings": []},
        {"uses": ["x" * 5_000], "headings": []},
        {"uses": [3], "headings": []},
        {"signature": "new"},
        None,
    ],
)
def test_stored_evidence_of_the_wrong_shape_is_read_again_from_the_file(workspace: Workspace, damage) -> None:
    fresh = shortlist(workspace)
    stored = json.loads(tree_file(workspace).read_text())
    [entry] = [e for e in stored["skills"] if e["name"] == "db-backups"]
    entry["seen"]["evidence"] = None if damage is None else entry["seen"]["evidence"] | damage
    tree_file(workspace).write_text(json.dumps(stored), encoding="utf-8")
    forget_bodies()
    assert shortlist(workspace) == fresh
    assert stored_entry(workspace, "db-backups")["seen"]["evidence"]["uses"][1] == "Backups are untested"


def test_stored_evidence_of_another_version_of_the_file_is_not_served(workspace: Workspace) -> None:
    skill_md = workspace.root / "skills" / "db-backups" / "SKILL.md"
    info = skill_md.stat()
    remember_evidence(skill_md, (info.st_size + 1, info.st_mtime_ns), BodyEvidence(("Bake a cake",)))
    assert skill_md_evidence.skill_md_evidence(skill_md).uses[1] == "Backups are untested"
    remember_evidence(skill_md, (info.st_size, info.st_mtime_ns), BodyEvidence(("Bake a cake",)))
    assert skill_md_evidence.skill_md_evidence(skill_md).uses == ("Bake a cake",)  # the version it was told of
