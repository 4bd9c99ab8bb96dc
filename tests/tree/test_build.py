"""`semif tree build`: every skill placed exactly once, no category over the limit, routable."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent._sync import run_sync
from semif_agent.cli import main
from semif_agent.engine import create_engine
from semif_agent.errors import UserError
from semif_agent.routing import create_strategy
from semif_agent.tree.build import FlatSkill, build_tree, manifest_name
from semif_agent.tree import SkillTree

DOMAINS = {
    "music": ["play a song", "pause the playlist", "skip the track", "like an album", "shuffle the radio"],
    "travel": ["book a flight", "find a hotel", "rent a car", "check in for the trip", "cancel the booking"],
    "money": ["pay an invoice", "transfer money", "check the bank balance", "split the bill", "track a budget"],
    "cooking": ["find a recipe", "plan the meals", "make a grocery list", "convert oven temperature", "time the pasta"],
    "health": ["log a workout", "count the steps", "track the sleep", "book a doctor visit", "refill a prescription"],
}


def catalog(n: int) -> list[FlatSkill]:
    rng = random.Random(7)
    skills = []
    for i in range(n):
        domain = list(DOMAINS)[i % len(DOMAINS)]
        action = rng.choice(DOMAINS[domain])
        skills.append(FlatSkill(f"{domain}-tool-{i}", f"{action.capitalize()} in the {domain} app, variant {i}."))
    return skills


def check_shape(built: dict, expected: int, limit: int) -> SkillTree:
    children = Counter(c["parent"] for c in built["categories"] if "parent" in c)
    children.update(s["category"] for s in built["skills"])
    assert max(children.values()) <= limit
    assert sorted(s["name"] for s in built["skills"]) == sorted(set(s["name"] for s in built["skills"]))
    assert len(built["skills"]) == expected
    names = {c["name"] for c in built["categories"]}
    assert all(s["category"] in names for s in built["skills"])
    assert all(c["description"] for c in built["categories"])
    tops = [c for c in built["categories"] if "parent" not in c]
    assert 1 <= len(tops) <= limit
    return tops


@pytest.mark.parametrize(("n", "limit"), [(10, 15), (300, 15), (300, 5)])
def test_every_skill_is_placed_once_and_no_category_is_over_the_limit(n: int, limit: int, tmp_path: Path) -> None:
    built = build_tree(catalog(n), max_children=limit)
    check_shape(built, n, limit)
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(built))
    tree = SkillTree.load(path, tmp_path)
    assert tree.problems == [] and len(tree.skills) == n
    assert all(len(tree.options_at(c)) - 1 <= limit for c in ["", *tree.categories])
    assert all(len(tree.options_at(c)) <= 16 for c in ["", *tree.categories])  # what a model decision may show


def test_categories_are_named_for_what_they_hold() -> None:
    built = build_tree(catalog(50))
    text = " ".join(c["name"] + " " + c["description"] for c in built["categories"])
    assert sum(domain in text for domain in DOMAINS) >= 4


def test_a_built_tree_routes_with_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(build_tree(catalog(100))))
    tree = SkillTree.load(path, tmp_path)
    route = run_sync(create_strategy("chain", tree, create_engine("local", {"threshold": 0.1})).aroute(
        "book a flight to Oslo for my trip"))
    assert route.skill is not None and route.skill.name.startswith("travel")
    assert len(route.decisions) >= 2


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="duplicate skill names: a_b"):
        build_tree([FlatSkill("a-b", "x"), FlatSkill("A B", "y")])
    with pytest.raises(UserError, match="no skills"):
        build_tree([])
    assert manifest_name("Brainstorming-Ideas v2") == "brainstorming_ideas_v2"


def test_cli_builds_from_json_lines(tmp_path: Path) -> None:
    source = tmp_path / "skills.jsonl"
    source.write_text("".join(json.dumps({"name": s.name, "description": s.description}) + "\n" for s in catalog(40)))
    out = tmp_path / "tree.json"
    result = CliRunner().invoke(main, ["tree", "build", str(source), "-o", str(out), "--max-children", "8"])
    assert result.exit_code == 0, result.output
    check_shape(json.loads(out.read_text()), 40, 8)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "x"}\n')
    result = CliRunner().invoke(main, ["tree", "build", str(bad)])
    assert result.exit_code == 1 and "needs a string 'name' and 'description'" in result.stderr
