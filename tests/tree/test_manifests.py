"""A bad manifest is reported with file and entry and skipped; the rest still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.errors import ManifestError, UnknownSkillError
from semif_agent.tree import SkillTree


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "categories.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_bad_entries_are_reported_and_skipped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "categories": [{"name": "email", "description": "Mail"}, {"name": "Bad Name"}, {"name": "email"}],
            "skills": [
                {"name": "email.compose", "category": "email", "description": "Write a draft", "cost_budget": 2},
                {"name": "Email.Send!", "category": "email", "description": "bad name"},
                {"name": "email.nocat", "description": "no category: its name places it"},
                {"name": "email.compose", "category": "email", "description": "duplicate leaf"},
                {"name": "weather.today", "category": "weather", "description": "unknown category"},
                {"name": "email.budget", "category": "email", "description": "x", "cost_budget": -1},
                {"name": "email.nodesc", "category": "email"},
                "not an object",
            ],
        },
    )
    tree = SkillTree.load(path, tmp_path / "skills")
    assert list(tree.skills) == ["email.compose", "email.nocat"]
    assert tree.skills["email.compose"].description == "Write a draft"
    assert tree.skills["email.nocat"].category == "email"
    messages = [str(p) for p in tree.problems]
    assert all(str(path) in m for m in messages)
    expected = [
        "'Bad Name'",
        "duplicate category",
        "'Email.Send!' may hold only lowercase",
        "duplicate leaf",
        "unknown category 'weather'",
        "cost_budget must be",
        "'description' is required",
        "skills[7]",
    ]
    for fragment in expected:
        assert any(fragment in m for m in messages), (fragment, messages)


def test_a_stub_needs_only_a_name_and_a_description(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "categories": [{"name": "email", "description": "Mail"}],
            "skills": [
                {"name": "email.archive", "description": "Archive a message"},
                {"name": "weather.today", "description": "Today's weather"},
                {"name": "translate", "description": "Translate a sentence"},
                {"name": "general", "description": "Named like the category it would go under"},
            ],
        },
    )
    tree = SkillTree.load(path, tmp_path / "skills")
    assert {name: s.category for name, s in tree.skills.items()} == {
        "email.archive": "email",
        "weather.today": "weather",
        "translate": "general",
    }
    assert tree.categories["email"].description == "Mail", "a listed category is kept as it is"
    assert tree.categories["weather"].description == "" and tree.categories["weather"].parent == ""
    assert tree.skills["weather.today"].is_stub and tree.skills["weather.today"].cost_budget == 5
    assert tree.skills["translate"].body_path == tmp_path / "skills" / "general" / "translate.py"
    assert [str(p) for p in tree.problems] == [f"{path}, entry 'general': name 'general' is taken (a category)"]


def test_learned_examples_follow_a_persons_and_never_replace_them(tmp_path: Path) -> None:
    learned = [
        {"text": "File the Acme invoice", "run": "r1", "by": "label"},
        {"text": "archive the newsletter", "run": "r2", "by": "judge"},  # a person's example already
    ]
    path = write(
        tmp_path,
        {
            "categories": [{"name": "email", "description": "Mail"}],
            "skills": [
                {
                    "name": "email.archive",
                    "description": "Archive a message",
                    "examples": ["Archive the newsletter"],
                    "learned_examples": learned,
                },
                {"name": "email.bad", "description": "x", "learned_examples": ["not an object"]},
            ],
        },
    )
    tree = SkillTree.load(path, tmp_path / "skills")
    skill = tree.skills["email.archive"]
    assert skill.examples == ("Archive the newsletter", "File the Acme invoice")
    assert skill.learned_examples == ("File the Acme invoice",)
    assert skill.to_dict()["examples"] == ["Archive the newsletter"]
    assert skill.to_dict()["learned_examples"] == ["File the Acme invoice"]
    assert ["'learned_examples' must be a list of objects" in str(p) for p in tree.problems] == [True]


def test_malformed_json_is_one_clear_error_with_its_position(tmp_path: Path) -> None:
    path = write(tmp_path, '{"categories": [\n  {"name": "email",}\n]}')
    with pytest.raises(ManifestError, match=r"categories.json: invalid JSON at line 2, column 20"):
        SkillTree.load(path, tmp_path)
    assert path.read_text().startswith('{"categories"'), "the file is left as it was"


def test_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="semif init"):
        SkillTree.load(tmp_path / "nope.json", tmp_path)


def test_bodies_live_under_category_folders_and_missing_ones_are_stubs(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "categories": [{"name": "email", "description": "Mail"}],
            "skills": [
                {"name": "email.compose", "category": "email", "description": "Draft"},
                {"name": "email.archive", "category": "email", "description": "Archive"},
            ],
        },
    )
    body = tmp_path / "skills" / "email" / "compose.py"
    body.parent.mkdir(parents=True)
    body.write_text("def predict(ctx, r): pass\ndef act(ctx, r, p): pass\n")
    tree = SkillTree.load(path, tmp_path / "skills")
    assert tree.get("email.compose").body_path == body and not tree.get("email.compose").is_stub
    assert tree.get("email.archive").is_stub
    assert [o.id for o in tree.category_options()] == ["email", "none"]
    assert "compose, archive" in tree.category_options()[0].description
    assert [o.id for o in tree.skill_options("email")] == ["email.compose", "email.archive", "none"]
    with pytest.raises(UnknownSkillError, match="no skill named 'email.send'"):
        tree.get("email.send")


def test_skill_md_leaves_keep_their_names_and_paths(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "categories": [{"name": "debugging", "description": "Finding bugs"}],
            "skills": [
                {
                    "name": "systematic-debugging",
                    "category": "debugging",
                    "description": "Debug step by step",
                    "kind": "skill_md",
                    "path": "skills/systematic-debugging/SKILL.md",
                },
                {
                    "name": "brainstorming~superpowers",
                    "category": "debugging",
                    "description": "Shape ideas",
                    "kind": "skill_md",
                    "path": "/elsewhere/superpowers/brainstorming/SKILL.md",
                    "skill_name": "brainstorming",
                },
                {
                    "name": "Has Space",
                    "category": "debugging",
                    "description": "x",
                    "kind": "skill_md",
                    "path": "a/SKILL.md",
                },
                {"name": "nopath", "category": "debugging", "description": "x", "kind": "skill_md"},
                {"name": "none", "category": "debugging", "description": "x", "kind": "skill_md", "path": "n/SKILL.md"},
                {
                    "name": "debugging",
                    "category": "debugging",
                    "description": "x",
                    "kind": "skill_md",
                    "path": "d/SKILL.md",
                },
                {"name": "odd", "category": "debugging", "description": "x", "kind": "plugin"},
            ],
        },
    )
    tree = SkillTree.load(path, tmp_path / "skills")
    assert list(tree.skills) == ["systematic-debugging", "brainstorming~superpowers"]
    leaf = tree.skills["systematic-debugging"]
    assert leaf.is_skill_md and not leaf.is_stub
    assert leaf.source == tmp_path / "skills" / "systematic-debugging" / "SKILL.md"
    assert leaf.source_name == "systematic-debugging"
    other = tree.skills["brainstorming~superpowers"]
    assert other.source_name == "brainstorming" and str(other.source) == "/elsewhere/superpowers/brainstorming/SKILL.md"
    assert other.to_dict()["skill_name"] == "brainstorming"
    messages = " | ".join(str(p) for p in tree.problems)
    for expected in (
        "without spaces or slashes",
        "'path' is required",
        "'none' is taken",
        "'debugging' is taken",
        "kind must be one of",
    ):
        assert expected in messages
