"""SKILL.md leaves keep their names; skills that share a name are kept apart under stable ids."""

from __future__ import annotations

from pathlib import Path

from semif_agent.tree.leaf_ids import distinct_ids


def test_first_keeps_the_name_later_ones_are_named_by_their_folder() -> None:
    skills = [
        ("brainstorming", Path("/a/superpowers/brainstorming")),
        ("brainstorming", Path("/b/my skills/brainstorming")),
        ("brainstorming", Path("/c/superpowers/brainstorming")),
        ("linear", Path("/a/openai/linear")),
    ]
    ids, collisions = distinct_ids(skills)
    warnings = [str(collision) for collision in collisions]
    assert ids == ["brainstorming", "brainstorming~my-skills", "brainstorming~c-superpowers", "linear"]
    assert len(warnings) == 2
    assert "/a/superpowers/brainstorming" in warnings[0] and "/b/my skills/brainstorming" in warnings[0]
    assert distinct_ids(skills) == (ids, collisions)  # the same folders give the same ids


def test_a_name_taken_by_a_code_skill_or_category_is_kept_apart() -> None:
    ids, collisions = distinct_ids([("email", Path("/x/skills/email"))], taken={"email"})
    assert ids == ["email~skills"]
    assert "code skill or category" in str(collisions[0])


def test_folders_with_the_same_parents_fall_back_to_a_hash() -> None:
    ids, _ = distinct_ids([("x", Path("/s/x")), ("x", Path("/s/x")), ("x", Path("/s/x"))])
    assert ids[0] == "x" and all(i.startswith("x~") for i in ids[1:]) and len(set(ids)) == 3
