"""`build_tree`: every skill placed once, within the limits, at the least depth, under names a person reads."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine
from semif_agent.errors import UserError
from semif_agent.routing import create_strategy
from semif_agent.tree import SkillTree
from semif_agent.tree._vectors import word_vectors
from semif_agent.tree.build import LeafSpec, build_tree, load_flat_skills, manifest_name

from .build_helpers import CORPUS, DOMAINS, catalog, check_tree, depth, least_depth

# words that say nothing about a purpose; none may be a category name's word
VAGUE = {
    "the",
    "and",
    "for",
    "with",
    "use",
    "when",
    "skill",
    "skills",
    "must",
    "always",
    "not",
    "something",
    "especially",
    "systematically",
    "producing",
    "list",
    "make",
    "using",
    "before",
    "after",
}


@pytest.mark.parametrize(
    ("n", "limit", "top"),
    [
        (1, 15, None),
        (2, 15, None),
        (3, 15, None),
        (16, 15, None),
        (225, 15, None),
        (226, 15, None),
        (300, 5, None),
        (60, 15, 1),
        (500, 15, 3),
        (9, 2, None),
        (31, 2, 1),
    ],
)
@pytest.mark.slow
def test_limits_hold_at_the_least_depth(n: int, limit: int, top: int | None) -> None:
    skills = catalog(n)
    built = build_tree(skills, max_children=limit, top_capacity=top, embed=word_vectors)
    check_tree(built, skills, limit=limit, top=top)
    assert depth(built) == least_depth(n, limit, top or limit)


@pytest.mark.slow
def test_ten_thousand_skills_are_four_decisions_from_the_top() -> None:
    skills = catalog(10_000)
    stages: dict[str, tuple[int, int]] = {}
    built = build_tree(
        skills, embed=word_vectors, progress=lambda stage, done, total: stages.update({stage: (done, total)})
    )
    check_tree(built, skills)
    assert depth(built) == 4
    assert stages["embedding"] == (10_000, 10_000) and stages["grouping"] == (10_000, 10_000)
    assert stages["naming"][0] == stages["naming"][1] == len(built["categories"])


def test_the_same_skills_give_the_same_tree() -> None:
    assert build_tree(catalog(120), embed=word_vectors) == build_tree(catalog(120), embed=word_vectors)


def test_skills_of_one_domain_share_a_category_named_for_it() -> None:
    built = build_tree(catalog(49), embed=word_vectors)  # seven domains of seven skills: seven categories
    by_category: dict[str, set[str]] = {}
    for skill in built["skills"]:
        by_category.setdefault(skill["category"], set()).add(skill["name"].split("_")[0])
    assert sorted(by_category.values()) == sorted({domain} for domain in DOMAINS)
    for category in built["categories"]:
        (domain,) = by_category[category["name"]]
        assert category["name"].split("_")[0] == domain
        assert category["description"].startswith(f"Skills for {domain}")


def test_reserved_names_and_leaf_ids_are_never_category_names() -> None:
    skills = catalog(70) + [LeafSpec("music", "Play music in the music app.")]
    built = build_tree(skills, embed=word_vectors, reserved=("travel", "money"))
    check_tree(built, skills, reserved=("travel", "money"))


def test_skill_md_skills_keep_their_paths_and_names() -> None:
    skills = [
        LeafSpec("brainstorming", "Turn ideas into designs.", path="/s/a/SKILL.md", skill_name="brainstorming"),
        LeafSpec("brainstorming~b", "Brainstorm ideas.", path="/s/b/SKILL.md", skill_name="brainstorming"),
        LeafSpec("notes_add", "Add a note.", examples=("note that milk is out",)),
    ]
    entries = {s["name"]: s for s in build_tree(skills, embed=word_vectors)["skills"]}
    assert entries["brainstorming"]["kind"] == "skill_md" and entries["brainstorming"]["path"] == "/s/a/SKILL.md"
    assert "skill_name" not in entries["brainstorming"]
    assert entries["brainstorming~b"]["skill_name"] == "brainstorming"
    assert "kind" not in entries["notes_add"] and entries["notes_add"]["examples"] == ["note that milk is out"]


def test_bad_input_is_a_clear_error() -> None:
    # names are kept as given: "a-b" and "a_b" are two skills, a repeated name is an error naming both entries
    assert len(build_tree([LeafSpec("a-b", "x"), LeafSpec("a_b", "y")], embed=word_vectors)["skills"]) == 2
    with pytest.raises(UserError, match=r"skill 2 \(entry 2\): name 'A B' may hold .* \(as a valid one: 'a_b'\)"):
        build_tree([LeafSpec("a-b", "x"), LeafSpec("A B", "y")], embed=word_vectors)
    with pytest.raises(UserError, match=r"skill 1 \(/x/a b/SKILL.md\): name 'a b' must be 1-200 characters"):
        build_tree([LeafSpec("a b", "x", path="/x/a b/SKILL.md")], embed=word_vectors)
    with pytest.raises(UserError, match=r"duplicate skill names: 'pdf' \(/x/pdf/SKILL.md, /y/pdf/SKILL.md\)"):
        build_tree([LeafSpec("pdf", "x", path="/x/pdf/SKILL.md"), LeafSpec("pdf", "y", path="/y/pdf/SKILL.md")])
    with pytest.raises(UserError, match=r"'a' \(entry 1, entry 3\)"):
        build_tree([LeafSpec("a", "x"), LeafSpec("b", "y"), LeafSpec("a", "z")])
    with pytest.raises(UserError, match="no skills"):
        build_tree([])
    with pytest.raises(UserError, match="at least 2 children"):
        build_tree(catalog(3), max_children=1)
    with pytest.raises(UserError, match="at least 1 category"):
        build_tree(catalog(3), top_capacity=0)
    assert manifest_name("Brainstorming-Ideas v2") == "brainstorming_ideas_v2"


def test_without_the_model_skills_are_grouped_by_words_with_one_warning(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SEMIF_MODEL_PATH", str(tmp_path / "missing.onnx"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = build_tree(catalog(60))
    assert [str(w.message) for w in caught if "grouped by their words" in str(w.message)] != []
    assert len(caught) == 1
    check_tree(built, catalog(60))


def test_real_skills_get_real_names_and_debugging_sits_with_testing() -> None:
    skills = load_flat_skills(CORPUS)
    built = build_tree(skills)
    check_tree(built, skills)
    for category in built["categories"]:
        words = category["name"].split("_")
        assert 1 <= len(words) <= 3 and not set(words) & VAGUE, category["name"]
        assert re.fullmatch(r"Skills for [^:]+: .+\.", category["description"]), category["description"]
    home = {s["name"]: s["category"] for s in built["skills"]}
    siblings = {name for name, category in home.items() if category == home["systematic-debugging"]}
    assert siblings & {"test-driven-development", "verification-before-completion"}
    assert not any(name.startswith("notion-") for name in siblings)
    assert home["notion-knowledge-capture"] == home["notion-meeting-intelligence"]


@pytest.mark.slow
def test_a_built_tree_routes_with_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(build_tree(catalog(100))))
    tree = SkillTree.load(path, tmp_path)
    assert tree.problems == [] and len(tree.skills) == 100
    assert all(len(tree.options_at(c)) <= 16 for c in ["", *tree.categories])
    route = run_sync(
        create_strategy("chain", tree, create_engine("local", {"threshold": 0.1})).aroute(
            "book a flight to Oslo for my trip"
        )
    )
    assert route.skill is not None and route.skill.name.startswith("travel")
