"""One rule for skill names: what `semif tree build` writes, a workspace's manifests accept and load."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from semif_agent.catalog.names import category_name_problem, code_skill_name_problem
from semif_agent.catalog.spec import name_problems
from semif_agent.cli import main
from semif_agent.tree import SkillTree
from semif_agent.tree.build import load_flat_skills
from semif_agent.workspace import Workspace

from .build_helpers import CORPUS
from .test_build_sources import write_skill

HYPHENATED = {
    "word-counter": "Count the words, lines and characters of a text file.",
    "pdf-form-filler": "Fill in the fields of PDF forms.",
    "git-commit-helper": "Write git commit messages from a diff.",
    "csv-to-chart": "Turn a CSV table into a chart.",
}


def build(*args: str) -> None:
    result = CliRunner().invoke(main, ["tree", "build", *args])
    assert result.exit_code == 0, result.output


def test_a_built_tree_of_skill_md_skills_is_a_workspace_s_categories(make_workspace, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    for name, description in HYPHENATED.items():
        write_skill(catalog / name, name, description)
    workspace = make_workspace(skills={})
    build(str(catalog), "-o", str(workspace / "data" / "categories.json"))
    tree = SkillTree.for_workspace(Workspace.load(workspace))
    assert tree.problems == []
    assert set(tree.skills) == set(HYPHENATED)
    for name in HYPHENATED:  # each reachable by its own name, from its own SKILL.md
        skill = tree.get(name)
        assert skill.is_skill_md and skill.source_name == name
        assert skill.source == catalog / name / "SKILL.md"
        assert skill.category in tree.categories


def test_a_built_tree_of_hyphenated_code_skills_loads(make_workspace, tmp_path: Path) -> None:
    source = tmp_path / "skills.jsonl"
    source.write_text("".join(json.dumps({"name": n, "description": d}) + "\n" for n, d in HYPHENATED.items()))
    workspace = make_workspace(skills={})
    build(str(source), "-o", str(workspace / "data" / "categories.json"))
    tree = SkillTree.for_workspace(Workspace.load(workspace))
    assert tree.problems == [] and set(tree.skills) == set(HYPHENATED)
    counter = tree.get("word-counter")
    assert not counter.is_skill_md and counter.is_stub
    assert counter.body_path == workspace / "data" / "skills" / counter.category / "word-counter.py"


def test_a_code_skill_name_the_manifests_would_refuse_is_one_line_naming_a_valid_one(tmp_path: Path) -> None:
    source = tmp_path / "skills.jsonl"
    source.write_text('{"name": "count", "description": "Count."}\n{"name": "Text Summary", "description": "Sum."}\n')
    result = CliRunner().invoke(main, ["tree", "build", str(source)])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "skill 2 (entry 2): name 'Text Summary' may hold only lowercase" in result.stderr
    assert "'text_summary'" in result.stderr


def test_every_name_the_skill_md_format_allows_is_a_skill_and_category_name() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the corpus has two skills sharing a name: both are kept
        names = [skill.skill_name or skill.name for skill in load_flat_skills(CORPUS)]
    valid = [name for name in names if not name_problems(name) and name.isascii()]
    assert len(valid) > 20
    assert [n for n in valid if code_skill_name_problem(n) or category_name_problem(n)] == []
    assert code_skill_name_problem(f"docs.{valid[0]}") is None


@pytest.mark.parametrize("name", ["-a", "a-", "a--b", "a..b", ".a", "A", "a b", "a/b", "docs.-a"])
def test_names_that_are_not_words_joined_by_dots_are_refused(name: str) -> None:
    assert code_skill_name_problem(name) is not None


def test_a_category_is_one_word_and_never_none() -> None:
    assert category_name_problem("pdf-tools") is None and category_name_problem("pdf_tools") is None
    assert category_name_problem("pdf.tools") is not None and category_name_problem("none") is not None


def test_a_skill_md_name_that_cannot_be_a_leaf_id_is_reached_by_its_folder(make_workspace) -> None:
    workspace = make_workspace(skills={"notes.add": None})
    write_skill(workspace / "skills" / "pdf-tool", "PDF Tool", "Read the text of PDF files.")
    tree = SkillTree.for_workspace(Workspace.load(workspace))
    assert tree.problems == []
    skill = tree.get("pdf-tool")
    assert skill.is_skill_md and skill.source_name == "PDF Tool"
