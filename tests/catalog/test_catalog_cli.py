"""``semif skills validate|prompt`` and the listing helpers behind ``semif skills list|show``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.catalog_helpers import corpus_skill_folders, make_skill

from semif_agent.catalog import SkillNotFound, SkillsPathNotFound, build_registry, list_skill_rows, show_skill
from semif_agent.cli._common import SemifGroup
from semif_agent.cli.catalog_cmds import COMMANDS, prompt, validate
from semif_agent.compat.skills_ref import to_prompt


def run(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    group = SemifGroup("skills", commands={command.name: command for command in COMMANDS})
    runner = CliRunner()
    if cwd is None:
        result = runner.invoke(group, list(args))
    else:
        previous = os.getcwd()
        os.chdir(cwd)
        try:
            result = runner.invoke(group, list(args))
        finally:
            os.chdir(previous)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "semif.toml").write_text("")
    make_skill(root / "skills", "alpha", files={"notes.md": "n"})
    make_skill(root / ".agents" / "skills", "beta")
    make_skill(root / ".agents" / "skills", "alpha", "name: alpha\ndescription: shadowed copy")
    return root


def test_commands_are_exported():
    assert validate.name == "validate" and prompt.name == "prompt"


def test_validate_reports_every_error_and_exits_1(skills_root):
    make_skill(skills_root, "good")
    make_skill(skills_root, "bad", "name: Bad\nextra: 1")
    code, out, err = run("validate", str(skills_root))
    assert code == 1  # "bad" has no description: it does not load
    assert "FAIL  " + str(skills_root / "bad") in out and "ok    " + str(skills_root / "good") in out
    assert out.count("      - ") == 4 and err == "2 skills checked: 1 loads, 1 does not (FAIL)\n"
    code, out, _ = run("validate", "--json", str(skills_root / "good"))
    assert code == 0 and json.loads(out) == [
        {"path": str(skills_root / "good"), "name": "good", "ok": True, "loads": True, "errors": []}
    ]


def test_validate_a_workspace(workspace):
    code, out, _ = run("validate", "--json", "-w", str(workspace))
    assert code == 0
    checked = [Path(item["path"]).relative_to(workspace).as_posix() for item in json.loads(out)]
    assert checked == ["skills/alpha", ".agents/skills/alpha", ".agents/skills/beta"]
    code, out, _ = run("validate", cwd=workspace)
    assert code == 0 and out.count("ok  ") == 2 and out.count("note  ") == 1  # the second alpha is kept apart
    assert "shares the name 'alpha'" in out and "loaded as 'alpha~agents-skills'" in out


def test_user_mistakes_are_one_line(tmp_path):
    code, out, err = run("validate", str(tmp_path / "missing"))
    assert code == 1 and err.strip().count("\n") == 0 and "no such file or directory" in err
    code, _, err = run("validate", cwd=tmp_path)
    assert code == 1 and "no workspace: run semif init DIR" in err and "Traceback" not in err
    (tmp_path / "semif.toml").write_text("")
    code, _, err = run("prompt", "-w", str(tmp_path))
    assert code == 1 and "no SKILL.md skills" in err
    broken = make_skill(tmp_path, "broken", "name: broken")
    code, out, err = run("prompt", str(broken))
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"warning: skipped {broken}: Missing required field in frontmatter: description",
        "Error: no usable SKILL.md skill among 1 folder: nothing to list",
    ]


def test_prompt_expands_folders_and_workspaces(workspace, skills_root):
    make_skill(skills_root, "one")
    make_skill(skills_root, "two")
    code, out, _ = run("prompt", str(skills_root))
    assert code == 0 and out.count("<skill>") == 2 and out.endswith("</available_skills>\n")
    code, out, _ = run("prompt", "-w", str(workspace))
    assert out.count("<skill>") == 2
    assert str(workspace / "skills" / "alpha" / "SKILL.md") in out and ".agents/skills/alpha" not in out


def test_listing_rows_cover_workspace_user_and_folders(workspace, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    make_skill(home / ".agents" / "skills", "gamma")
    broken = tmp_path / "loose" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\n---\n")
    extra = make_skill(tmp_path / "loose", "delta")
    rows = list_skill_rows(workspace=workspace, folders=[extra, broken])
    loaded = {row["id"]: row for row in rows if row["id"]}
    assert list(loaded) == ["custom@alpha", "custom@beta", "custom@delta", "custom@gamma"]
    assert loaded["custom@alpha"]["source"] == "workspace" and loaded["custom@gamma"]["source"] == "user"
    assert loaded["custom@alpha"]["path"] == str((workspace / "skills" / "alpha").resolve())
    assert set(rows[0]) == {"id", "name", "description", "source", "path", "warnings"}
    problems = [row for row in rows if not row["id"]]
    assert {row["name"] for row in problems} == {"alpha", "broken"}
    assert any("missing description" in warning for row in problems for warning in row["warnings"])
    assert any("shadowed" in warning for row in problems for warning in row["warnings"])
    assert [row["id"] for row in list_skill_rows(workspace=workspace, include_user=False) if row["id"]] == [
        "custom@alpha",
        "custom@beta",
    ]
    with pytest.raises(SkillsPathNotFound):
        list_skill_rows(folders=[tmp_path / "nope"])


def test_show_gives_one_skills_details(workspace, skills_root):
    details = show_skill("alpha", workspace=workspace, include_user=False)
    assert details["id"] == "custom@alpha" and details["description"].startswith("The alpha skill")
    assert details["resources"] == ["notes.md", "SKILL.md"] and details["body"].startswith("# Instructions")
    make_skill(skills_root, "alpha", "name: alpha\ndescription: another")
    registry = build_registry(workspace=workspace, include_user=False)
    registry.scan_custom(skills_root, namespace="team")
    with pytest.raises(SkillNotFound, match="several skills"):
        show_skill("alpha", registry=registry)
    assert show_skill("team@alpha", registry=registry)["description"] == "another"
    with pytest.raises(SkillNotFound, match="no SKILL.md skill"):
        show_skill("zeta", folders=[skills_root])


@pytest.fixture
def mixed_collection(tmp_path: Path) -> tuple[Path, list[Path], list[Path]]:
    """A folder of collections of collections: good skills, and bad ones of every kind; returns (root, good, bad)."""
    root = tmp_path / "collection"
    good = [
        make_skill(root / "team-a", "one"),
        make_skill(root / "team-a" / "deeper", "two"),
        make_skill(root / "team-b", "three", 'name: three\ndescription: Use <three> & "more"'),
    ]
    bad = [
        make_skill(root / "team-a", "no-description", "name: no-description"),
        make_skill(root / "team-b", "broken-yaml", "name: broken-yaml\ndescription: [unclosed"),
        make_skill(root / "team-b", "no-frontmatter"),
    ]
    (bad[2] / "SKILL.md").write_text("# Just a heading\n", encoding="utf-8")
    not_utf8 = root / "team-a" / "latin-1"
    not_utf8.mkdir()
    (not_utf8 / "SKILL.md").write_bytes("---\nname: latin-1\ndescription: caf\u00e9\n---\n".encode("latin-1"))
    unreadable = root / "team-b" / "unreadable"
    (unreadable / "SKILL.md").mkdir(parents=True)  # the reference reads SKILL.md, which is a folder here
    (unreadable / "skill.md").write_text("---\nname: unreadable\ndescription: d\n---\n", encoding="utf-8")
    bad += [not_utf8, unreadable]
    return root, sorted(good), sorted(bad)


def test_prompt_leaves_out_bad_skills_with_one_warning_each(mixed_collection):
    root, good, bad = mixed_collection
    code, out, err = run("prompt", str(root))
    assert code == 0
    assert out == to_prompt(good) + "\n"
    assert out.count("<skill>") == len(good) and "&lt;three&gt; &amp; &quot;more&quot;" in out
    warnings = err.splitlines()
    assert len(warnings) == len(bad)
    for folder in bad:
        assert sum(line.startswith(f"warning: skipped {folder}: ") for line in warnings) == 1, (folder, warnings)
    code, out, err = run("prompt", *map(str, bad))
    assert code == 1 and out == "" and len(err.splitlines()) == len(bad) + 1
    assert err.splitlines()[-1].startswith("Error: no usable SKILL.md skill")


def test_prompt_output_for_the_good_skills_is_the_references(reference_python, mixed_collection):
    root, good, _ = mixed_collection
    cli = Path(reference_python).parent / "agentskills"
    reference = subprocess.run([str(cli), "to-prompt", *map(str, good)], capture_output=True, timeout=120)
    assert reference.returncode == 0, reference.stderr
    code, out, _ = run("prompt", str(root))
    assert code == 0 and out.encode("utf-8") == reference.stdout


def test_prompt_and_validate_take_a_folder_of_collections(corpus, tmp_path):
    folders = corpus_skill_folders(corpus)
    code, out, err = run("prompt", str(corpus))
    assert code == 0 and err == ""
    assert out == to_prompt(folders) + "\n" and out.count("<skill>") == len(folders)
    code, out, err = run("validate", str(corpus))
    assert code == 0
    assert out.splitlines() == [f"ok    {folder}" for folder in folders]
    assert err == f"{len(folders)} skills checked: {len(folders)} load, 0 do not (FAIL)\n"

    outer = tmp_path / "outer"
    shutil.copytree(corpus, outer / "vendor")
    bad = make_skill(outer / "local" / "team", "Bad-Name", "name: Bad-Name\ndescription: d")
    code, out, err = run("validate", str(outer))
    lines = out.splitlines()
    assert code == 0  # a name in capitals breaks the specification, but the skill loads
    assert err == (
        f"{len(folders) + 1} skills checked: {len(folders) + 1} load, 0 do not (FAIL); "
        "of those that load, 1 breaks the specification (spec)\n"
    )
    assert lines[:2] == [f"spec  {bad}", "      - 'name' 'Bad-Name' must be lowercase"]
    assert run("validate", "--strict", str(outer))[0] == 1
    assert sum(line.startswith("ok    ") for line in lines) == len(folders)


def test_prompt_in_a_workspace_keeps_nested_skills_that_share_a_folder_name(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "semif.toml").write_text("")
    make_skill(root / "skills" / "team-a", "report")
    make_skill(root / "skills" / "team-b", "report", "name: report\ndescription: The other report skill.")
    make_skill(root / ".agents" / "skills" / "team-a", "report", "name: report\ndescription: shadowed")
    code, out, err = run("prompt", "-w", str(root))
    assert code == 0 and out.count("<skill>") == 2 and "shadowed" not in out
    assert str(root / "skills" / "team-a" / "report" / "SKILL.md") in out
    assert str(root / "skills" / "team-b" / "report" / "SKILL.md") in out


def test_a_workspace_of_real_skills_says_how_many_load_and_fails_only_for_one_that_does_not(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "semif.toml").write_text("")
    skills = root / "skills"
    # frontmatter as published: extra keys and a nested metadata mapping break the specification, yet load
    make_skill(
        skills / "hermes" / "productivity",
        "ocr-and-documents",
        'name: ocr-and-documents\ndescription: "Extract text from PDFs/scans (pymupdf, marker-pdf)."\n'
        "version: 2.3.0\nauthor: Hermes Agent\nlicense: MIT\nplatforms: [linux, macos, windows]\n"
        "metadata:\n  hermes:\n    tags: [PDF, Documents, OCR]\n    related_skills: [powerpoint]",
    )
    make_skill(
        skills / "ecc",
        "kotlin-exposed-patterns",
        "name: kotlin-exposed-patterns\ndescription: JetBrains Exposed ORM patterns including DSL queries, DAO "
        "pattern, transactions and Flyway migrations.\norigin: ECC",
    )
    make_skill(skills / "ecc", "search-first")
    code, out, err = run("validate", "-w", str(root))
    assert code == 0  # everything loads: the remarks are the specification's, not failures
    marks = {Path(line[6:]).name: line[:6] for line in out.splitlines() if not line.startswith(" ")}
    assert marks == {"search-first": "ok    ", "kotlin-exposed-patterns": "spec  ", "ocr-and-documents": "spec  "}
    assert err == ("3 skills checked: 3 load, 0 do not (FAIL); of those that load, 2 break the specification (spec)\n")
    assert run("validate", "--strict", "-w", str(root))[0] == 1
    untranslated = skills / "ecc" / "docs" / "verification-loop"  # ecc-universal's zh-TW copy has no frontmatter
    untranslated.mkdir(parents=True)
    (untranslated / "SKILL.md").write_text("# 驗證循環技能\n\nClaude Code 工作階段的完整驗證系統。\n", encoding="utf-8")
    code, out, err = run("validate", "-w", str(root))
    assert code == 1 and f"FAIL  {untranslated}" in out and "no frontmatter" in out
    assert err == (
        "4 skills checked: 3 load, 1 does not (FAIL); of those that load, 2 break the specification (spec)\n"
    )
    rows = {Path(row["path"]).name: row for row in json.loads(run("validate", "--json", "-w", str(root))[1])}
    assert [rows[name]["loads"] for name in ("search-first", "ocr-and-documents", "verification-loop")] == [
        True,
        True,
        False,
    ]
