"""`update_tree`: added, removed and changed skills touch only their categories; the limits always hold."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from semif_agent.tree._vectors import word_vectors
from semif_agent.tree.build import LeafSpec, build_tree, update_tree

from .build_helpers import DOMAINS, catalog, check_tree


def categories(built: dict) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Each category: its parent, description and the skills directly in it."""
    members: dict[str, list[str]] = {}
    for skill in built["skills"]:
        members.setdefault(skill["category"], []).append(skill["name"])
    return {
        c["name"]: (c.get("parent", ""), c["description"], tuple(sorted(members.get(c["name"], []))))
        for c in built["categories"]
    }


def home(built: dict, name: str) -> str:
    return next(s["category"] for s in built["skills"] if s["name"] == name)


@pytest.fixture(scope="module")
def base() -> tuple[list[LeafSpec], dict]:
    skills = catalog(200)
    return skills, build_tree(skills, embed=word_vectors)


def test_adding_a_skill_touches_only_its_category(base) -> None:
    skills, before = base
    added = LeafSpec("garden_hedge_trimmer", "Trim the hedge in the garden app, with the garden shears.")
    after, update = update_tree(before, [*skills, added], embed=word_vectors)
    check_tree(after, [*skills, added])
    assert (update.added, update.removed, update.changed, update.rebuilt) == (("garden_hedge_trimmer",), (), (), False)
    target = home(after, "garden_hedge_trimmer")
    assert update.touched == (target,)
    old, new = categories(before), categories(after)
    assert {name: old[name] for name in old if name != target} == {name: new[name] for name in new if name != target}
    neighbours = [s for s in new[target][2] if s != "garden_hedge_trimmer"]
    assert neighbours and all(s.startswith("garden_") for s in neighbours)


def test_removing_and_editing_touch_only_their_categories(base) -> None:
    skills, before = base
    removed, edited = skills[3], skills[10]
    changed = replace(edited, description=edited.description + " Also by voice.")
    kept = [changed if s is edited else s for s in skills if s is not removed]
    after, update = update_tree(before, kept, embed=word_vectors)
    check_tree(after, kept)
    assert (update.added, update.removed, update.changed, update.rebuilt) == (
        (),
        (removed.name,),
        (edited.name,),
        False,
    )
    old, new = categories(before), categories(after)
    untouched = set(old) - {home(before, removed.name), home(before, edited.name), home(after, edited.name)}
    assert untouched and all(old[name] == new[name] for name in untouched)
    assert set(update.touched) <= set(new) - untouched


def test_the_limits_hold_through_many_random_updates() -> None:
    rng = random.Random(3)
    skills = catalog(120)
    tree = build_tree(skills, max_children=6, embed=word_vectors)
    fresh = 1000
    for _ in range(25):
        for _ in range(rng.randint(1, 8)):
            action = rng.random()
            if action < 0.45:
                domain = rng.choice(list(DOMAINS))
                skills.append(
                    LeafSpec(f"{domain}_tool_{fresh}", f"{rng.choice(DOMAINS[domain]).capitalize()} in {domain}.")
                )
                fresh += 1
            elif action < 0.8 and len(skills) > 3:
                skills.pop(rng.randrange(len(skills)))
            else:
                i = rng.randrange(len(skills))
                skills[i] = replace(skills[i], description=skills[i].description + " Again.")
        tree, update = update_tree(tree, skills, max_children=6, embed=word_vectors)
        check_tree(tree, skills, limit=6)
        assert not update.rebuilt


def test_shrinking_to_one_skill_and_growing_again() -> None:
    skills = catalog(20)
    tree = build_tree(skills, max_children=4, embed=word_vectors)
    for keep in (14, 10, 6):  # a quarter or less removed each time
        tree, update = update_tree(tree, skills[:keep], max_children=4, embed=word_vectors)
        check_tree(tree, skills[:keep], limit=4)
    tree, _ = update_tree(build_tree(skills[:2], embed=word_vectors), skills[:1], embed=word_vectors)
    check_tree(tree, skills[:1])
    assert len(tree["categories"]) == 1


def test_a_category_named_like_a_new_skill_is_renamed(base) -> None:
    skills, before = base
    taken = before["categories"][0]["name"]
    added = LeafSpec(taken, "Water the roses in the garden app.")
    after, update = update_tree(before, [*skills, added], embed=word_vectors)
    check_tree(after, [*skills, added])
    assert taken not in {c["name"] for c in after["categories"]} and not update.rebuilt


def test_large_changes_and_unusable_trees_are_rebuilt(base) -> None:
    skills, before = base
    after, update = update_tree(before, skills[:100], embed=word_vectors)
    assert update.rebuilt and len(update.removed) == 100
    assert after == build_tree(skills[:100], embed=word_vectors)
    for previous in ({}, {"categories": "x"}, None, {"categories": [{"name": "a", "parent": "a"}], "skills": []}):
        after, update = update_tree(previous, skills[:30], embed=word_vectors)
        assert update.rebuilt and update.added == tuple(s.name for s in skills[:30])
        check_tree(after, skills[:30])
    narrower, update = update_tree(before, skills, max_children=5, embed=word_vectors)
    assert update.rebuilt and not update.added
    check_tree(narrower, skills, limit=5)
