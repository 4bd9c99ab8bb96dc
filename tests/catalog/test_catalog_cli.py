"""``semif skills validate|prompt`` and the listing helpers behind ``semif skills list|show``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from catalog_helpers import make_skill
from click.testing import CliRunner

from semif_agent.catalog import SkillNotFound, SkillsPathNotFound, build_registry, list_skill_rows, show_skill
from semif_agent.cli._common import SemifGroup
from semif_agent.cli.catalog_cmds import COMMANDS, prompt, validate


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
    assert code == 1
    assert "FAIL  " + str(skills_root / "bad") in out and "ok    " + str(skills_root / "good") in out
    assert out.count("      - ") == 4 and "2 skill(s) checked, 1 invalid" in err
    code, out, _ = run("validate", "--json", str(skills_root / "good"))
    assert code == 0 and json.loads(out) == [{"path": str(skills_root / "good"), "name": "good", "ok": True, "errors": []}]


def test_validate_a_workspace(workspace):
    code, out, _ = run("validate", "--json", "-w", str(workspace))
    assert code == 0
    checked = [Path(item["path"]).relative_to(workspace).as_posix() for item in json.loads(out)]
    assert checked == ["skills/alpha", ".agents/skills/alpha", ".agents/skills/beta"]
    code, out, _ = run("validate", cwd=workspace)
    assert code == 0 and out.count("ok  ") == 3


def test_user_mistakes_are_one_line(tmp_path):
    code, out, err = run("validate", str(tmp_path / "missing"))
    assert code == 1 and err.strip().count("\n") == 0 and "no such file or directory" in err
    code, _, err = run("validate", cwd=tmp_path)
    assert code == 1 and "not a workspace" in err and "Traceback" not in err
    (tmp_path / "semif.toml").write_text("")
    code, _, err = run("prompt", "-w", str(tmp_path))
    assert code == 1 and "no SKILL.md skills" in err
    broken = make_skill(tmp_path, "broken", "name: broken")
    code, _, err = run("prompt", str(broken))
    assert code == 1 and err.startswith("Error: Missing required field in frontmatter: description")


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
        "custom@alpha", "custom@beta"]
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
