"""`load_flat_skills` and `semif tree build`: folders of SKILL.md skills, tree files, JSON lines, the command."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.tree import SkillTree
from semif_agent.tree.build import load_flat_skills

from .build_helpers import catalog, check_tree, depth


def write_skill(folder: Path, name: str, description: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo it.\n", encoding="utf-8")
    return folder / "SKILL.md"


def collections(root: Path) -> Path:
    """Two collections, nested differently, that both hold a 'pdf' skill; and one broken skill."""
    write_skill(root / "alpha" / "pdf", "pdf", "Fill in PDF forms and extract their tables.")
    write_skill(root / "alpha" / "git-helper", "git-helper", "Commit, branch and rebase with git.")
    write_skill(root / "vendor" / "beta" / "skills" / "pdf", "pdf", "Merge and split PDF files.")
    write_skill(root / "vendor" / "beta" / "skills" / "notes", "Meeting Notes", "Summarise a meeting into notes.")
    (root / "alpha" / "broken").mkdir()
    (root / "alpha" / "broken" / "SKILL.md").write_text("no frontmatter here\n", encoding="utf-8")
    return root


def test_skills_that_share_a_name_are_both_kept_and_the_broken_one_is_skipped(tmp_path: Path) -> None:
    root = collections(tmp_path / "skills")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        skills = load_flat_skills(root)
    by_id = {s.name: s for s in skills}
    assert set(by_id) == {"pdf", "pdf~skills", "git-helper", "meeting-notes"}
    assert by_id["pdf"].path == str(root / "alpha" / "pdf" / "SKILL.md")
    assert by_id["pdf~skills"].skill_name == "pdf" and by_id["pdf~skills"].description == "Merge and split PDF files."
    assert by_id["meeting-notes"].skill_name == "Meeting Notes"  # a name with a space: loaded normalised
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert any(
        str(root / "alpha" / "pdf") in m and str(root / "vendor" / "beta" / "skills" / "pdf") in m for m in messages
    )
    assert any(str(root / "alpha" / "broken") in m and "skipped" in m for m in messages)
    assert load_flat_skills(root / "alpha" / "pdf")[0].name == "pdf"  # a single skill folder


def test_a_tree_file_keeps_its_skill_md_paths(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    tree = {
        "categories": [{"name": "docs"}],
        "skills": [
            {
                "name": "pdf",
                "kind": "skill_md",
                "category": "docs",
                "description": "PDF forms.",
                "path": "../skills/pdf/SKILL.md",
            },
            {"name": "notes.add", "category": "docs", "description": "Add a note.", "examples": ["note: milk"]},
        ],
    }
    (tmp_path / "data" / "tree.json").write_text(json.dumps(tree))
    pdf, notes = load_flat_skills(tmp_path / "data" / "tree.json")
    assert pdf.path == str(tmp_path / "skills" / "pdf" / "SKILL.md") and pdf.skill_name == "pdf"
    assert notes.path is None and notes.examples == ("note: milk",)


def test_cli_writes_relative_paths_and_reports_progress(tmp_path: Path) -> None:
    root = collections(tmp_path / "skills")
    out = tmp_path / "out" / "tree.json"
    result = CliRunner().invoke(main, ["tree", "build", str(root), "-o", str(out)])
    assert result.exit_code == 0, result.output
    built = json.loads(out.read_text())
    assert {s["path"] for s in built["skills"]} >= {
        "../skills/alpha/pdf/SKILL.md",
        "../skills/vendor/beta/skills/pdf/SKILL.md",
    }
    tree = SkillTree.load(out, tmp_path)
    assert (
        tree.problems == []
        and tree.get("pdf~skills").source == root / "vendor" / "beta" / "skills" / "pdf" / "SKILL.md"
    )
    lines = result.stderr.splitlines()
    assert sum(line.startswith("warning: ") for line in lines) == 2, result.stderr
    for stage in ("embedding", "grouping", "naming"):
        assert any(line.startswith(stage) for line in lines), result.stderr
    categories = len(built["categories"])
    assert lines[-1] == (
        f"wrote {out}: {categories} {'category' if categories == 1 else 'categories'}, 4 skills, "
        f"depth {depth(built)} (decisions from the top to the deepest skill)"
    )


def test_cli_prints_json_with_absolute_paths(tmp_path: Path) -> None:
    source = tmp_path / "skills.jsonl"
    source.write_text("".join(json.dumps({"name": s.name, "description": s.description}) + "\n" for s in catalog(40)))
    result = CliRunner().invoke(main, ["tree", "build", str(source), "--max-children", "8"])
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    check_tree(built, catalog(40), limit=8)
    assert result.stderr.splitlines()[-1].startswith(f"built {len(built['categories'])} categories, 40 skills, depth 2")
    root = collections(tmp_path / "md")
    result = CliRunner().invoke(main, ["tree", "build", str(root)])
    assert all(Path(s["path"]).is_absolute() for s in json.loads(result.stdout)["skills"])


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "x"}\n')
    result = CliRunner().invoke(main, ["tree", "build", str(bad)])
    assert result.exit_code == 1 and result.stderr.strip().endswith("needs a string 'name' and 'description'")
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(main, ["tree", "build", str(bad), "-o", str(tmp_path / "file" / "tree.json")])
    assert result.exit_code == 1 and "cannot write there" in result.stderr and len(result.stderr.splitlines()) == 1
