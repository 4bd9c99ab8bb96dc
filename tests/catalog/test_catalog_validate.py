"""Strict validation: the specification's rules, every error reported, semif's script and hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.catalog_helpers import corpus_skill_folders, make_skill

from semif_agent.catalog import SkillsPathNotFound, validate_paths, validate_skill


def errors_of(root: Path, folder: str, frontmatter: str, files: dict[str, str] | None = None) -> list[str]:
    return list(validate_skill(make_skill(root, folder, frontmatter, files=files)).errors)


def test_a_minimal_skill_is_valid(skills_root):
    report = validate_skill(make_skill(skills_root, "pdf-tools"))
    assert report.ok and report.errors == () and report.name == "pdf-tools"


def test_all_optional_spec_fields_are_accepted(skills_root):
    frontmatter = """
        name: pdf-tools
        description: Work with PDFs.
        license: Apache-2.0
        compatibility: Requires poppler
        metadata:
          author: someone
          version: "1.0"
        allowed-tools: Bash(pdftotext:*) Read
    """
    assert errors_of(skills_root, "pdf-tools", frontmatter) == []


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("PDF-tools", "must be lowercase"),
        ("-pdf", "must not start or end with a hyphen"),
        ("pdf-", "must not start or end with a hyphen"),
        ("pdf--tools", "two hyphens in a row"),
        ("pdf_tools", "only contain letters, digits and hyphens"),
        ("a" * 65, "at most 64"),
    ],
)
def test_name_rules(skills_root, name, fragment):
    errors = errors_of(skills_root, name, f"name: {name}\ndescription: d")
    assert any(fragment in error for error in errors), errors


def test_name_must_equal_the_folder(skills_root):
    errors = errors_of(skills_root, "folder-name", "name: other-name\ndescription: d")
    assert errors == ["'name' 'other-name' must equal the folder name 'folder-name'"]


def test_unicode_lowercase_names_and_nfkc_folders_are_valid(skills_root):
    assert errors_of(skills_root, "навык", "name: навык\ndescription: d") == []
    assert errors_of(skills_root, "café", "name: cafe\u0301\ndescription: d") == []


@pytest.mark.parametrize(
    "extra, fragment",
    [
        ("description: ''", "'description' must not be empty"),
        ("description: " + "x" * 1025, "at most 1024"),
        ("description: 12", "'description' must be a string"),
        ("description: d\ncompatibility: ''", "'compatibility' must not be empty"),
        ("description: d\ncompatibility: " + "x" * 501, "at most 500"),
        ("description: d\nlicense: [MIT]", "'license' must be a string"),
        ("description: d\nmetadata: text", "'metadata' must be a mapping"),
        ("description: d\nmetadata:\n  version: 1.0", "'metadata.version' must be a string, not a number (quote it)"),
        ("description: d\nmetadata:\n  app:\n    tags: [a]", "not a mapping (write it as one string)"),
        ("description: d\nallowed-tools: [Read]", "'allowed-tools' must be a space-separated string"),
        ("description: d\nallowed-tools: Bash(git:*", "unbalanced parentheses"),
        ("description: d\nallowed-tools: Read Bash() Grep", "pattern 'Bash()' is not Tool, Tool(prefix:*) or Tool"),
        ("description: d\nallowed-tools: Read Bash(git:*)x", "pattern 'Bash(git:*)x' is not Tool"),
        ("description: d\nmodel: opus", "unknown field 'model'"),
    ],
)
def test_field_rules(skills_root, extra, fragment):
    errors = errors_of(skills_root, "tool", f"name: tool\n{extra}")
    assert any(fragment in error for error in errors), errors


def test_missing_required_fields(skills_root):
    errors = errors_of(skills_root, "tool", "license: MIT")
    assert "missing required field 'name'" in errors
    assert "missing required field 'description'" in errors


def test_every_error_of_a_skill_is_reported(skills_root):
    frontmatter = "name: Bad--Name\ncompatibility: ''\nmetadata:\n  n: 1\nextra: 1\nscript: ../x.py"
    errors = errors_of(skills_root, "bad-folder", frontmatter)
    for fragment in (
        "unknown field 'extra'",
        "lowercase",
        "two hyphens",
        "folder name",
        "'description'",
        "'compatibility' must not be empty",
        "'metadata.n'",
        "'script' '../x.py' is not inside the skill",
    ):
        assert any(fragment in error for error in errors), (fragment, errors)


def test_script_and_hooks_must_name_files_inside_the_skill(skills_root, tmp_path):
    (tmp_path / "outside.py").write_text("print('x')")
    skill = make_skill(
        skills_root,
        "hooked",
        """
        name: hooked
        description: d
        script: scripts/run.py
        hooks:
          pre_step: scripts/pre.py
          post_step: scripts/missing.py
          on-load: /etc/passwd
          "bad key!": scripts/pre.py
        """,
        files={"scripts/run.py": "print(1)", "scripts/pre.py": "print(2)"},
    )
    (skill / "scripts" / "link.py").symlink_to(tmp_path / "outside.py")
    errors = list(validate_skill(skill).errors)
    assert "'hooks.post_step' 'scripts/missing.py' is not a file of the skill" in errors
    assert "'hooks.on-load' '/etc/passwd' is not inside the skill" in errors
    assert any("'bad key!' is not a hook type" in error for error in errors)
    assert len(errors) == 3
    assert errors_of(skills_root, "linked", "name: linked\ndescription: d\nscript: ../hooked/scripts/link.py") != []
    linked = make_skill(skills_root, "linked2", "name: linked2\ndescription: d\nscript: link.py")
    (linked / "link.py").symlink_to(tmp_path / "outside.py")
    assert validate_skill(linked).errors == ("'script' 'link.py' is not inside the skill",)


def test_unreadable_documents_are_one_error(skills_root):
    skill = skills_root / "broken"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: broken\ndescription: [x\n---\n")
    report = validate_skill(skill)
    assert not report.ok and len(report.errors) == 1 and "invalid YAML" in report.errors[0]
    assert validate_skill(skills_root / "nope").errors == ("path does not exist",)
    empty = skills_root / "empty"
    empty.mkdir()
    assert validate_skill(empty).errors == ("missing required file SKILL.md",)


def test_paths_expand_to_skill_folders(skills_root):
    make_skill(skills_root, "one")
    make_skill(skills_root, "two")
    (skills_root / ".hidden").mkdir()
    (skills_root / "notes").mkdir()
    reports = validate_paths([skills_root, skills_root / "one" / "SKILL.md"])
    assert [report.path.name for report in reports] == ["notes", "one", "two", "one"]
    assert reports[0].errors == ("missing required file SKILL.md",) and all(r.ok for r in reports[1:])
    with pytest.raises(SkillsPathNotFound):
        validate_paths([skills_root / "notes"])
    with pytest.raises(SkillsPathNotFound):
        validate_paths([skills_root / "missing"])


def test_every_corpus_skill_is_valid(corpus):
    folders = corpus_skill_folders(corpus)
    assert len(folders) >= 20
    reports = validate_paths(folders)
    assert [report.path for report in reports if not report.ok] == []
