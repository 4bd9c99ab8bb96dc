"""Noticing a skill edited on disk: the watch's signature changes, and only the SKILL.md that changed is read again."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent.catalog.frontmatter import SkillDocument
from semif_agent.mcp_server._watch import BUSY_SHARE, SkillWatch, pause_after
from semif_agent.tree import SkillTree, skill_md
from semif_agent.tree._vectors import word_vectors
from semif_agent.workspace import Workspace


def write_skill(root: Path, name: str, description: str) -> Path:
    folder = root / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo it.\n", encoding="utf-8")
    return path


def skill_mds_read(monkeypatch) -> list[str]:
    """The folders whose SKILL.md is parsed from now on, in order (the list grows as they are)."""
    read: list[str] = []
    parse = skill_md.parse_skill_md

    def counting(path: Path) -> tuple[SkillDocument, dict[str, object]]:
        read.append(path.parent.name)
        return parse(path)

    monkeypatch.setattr(skill_md, "parse_skill_md", counting)
    return read


def test_an_edit_is_noticed_and_only_the_edited_skill_md_is_read_again(make_workspace, monkeypatch) -> None:
    root = make_workspace({"email.compose": None})
    write_skill(root, "plan-trip", "Plan a trip.")
    write_skill(root, "file-taxes", "Prepare a tax return from receipts.")
    watch = SkillWatch(Workspace.load(root))
    assert not watch.changed()  # the first look only remembers
    read = skill_mds_read(monkeypatch)
    assert not watch.changed() and read == []
    write_skill(root, "plan-trip", "Plan a trip by train, with the tickets booked.")
    assert watch.changed() and read == ["plan-trip"]
    assert {found.description for found in watch.known.values()} == {
        "Plan a trip by train, with the tickets booked.",
        "Prepare a tax return from receipts.",
    }
    assert not watch.changed()


@pytest.mark.parametrize("change", ["remove", "add"])
def test_a_skill_removed_or_added_is_noticed(make_workspace, change: str) -> None:
    root = make_workspace({"email.compose": None})
    kept = write_skill(root, "plan-trip", "Plan a trip.")
    watch = SkillWatch(Workspace.load(root))
    watch.changed()
    if change == "remove":
        kept.unlink()
    else:
        write_skill(root, "file-taxes", "Prepare a tax return from receipts.")
    assert watch.changed()


def test_a_router_switched_by_training_is_noticed(make_workspace) -> None:
    root = make_workspace({"email.compose": None})
    watch = SkillWatch(Workspace.load(root))
    watch.changed()
    (root / "data" / "router.json").write_text("{}", encoding="utf-8")  # what semif train writes when it switches
    assert watch.changed()
    assert not watch.changed()


def test_the_watch_waits_longer_between_looks_that_take_long() -> None:
    assert pause_after(0.002, every=1.0) == 1.0  # a few skills: looked at every second
    assert pause_after(0.5, every=1.0) == pytest.approx(4.5)  # ten thousand: at most a tenth of the time looking
    assert pause_after(0.5, every=1.0) + 0.5 >= 0.5 / BUSY_SHARE


def test_the_first_look_parses_only_what_changed_since_the_tree_was_stored(make_workspace, monkeypatch) -> None:
    root = make_workspace({"email.compose": None})
    write_skill(root, "plan-trip", "Plan a trip.")
    write_skill(root, "file-taxes", "Prepare a tax return from receipts.")
    SkillTree.for_workspace(Workspace.load(root), embed=word_vectors)
    write_skill(root, "plan-trip", "Plan a trip by train, with the tickets booked.")
    read = skill_mds_read(monkeypatch)
    watch = SkillWatch(Workspace.load(root))
    assert not watch.changed() and read == ["plan-trip"]
    assert {found.description for found in watch.known.values()} == {
        "Plan a trip by train, with the tickets booked.",
        "Prepare a tax return from receipts.",
    }
