"""Skills laid out as published packages ship them all load, at any depth, and every folder left out says why.

A workspace's ``skills/`` holds the layouts people install, each eight folders
deep: collections of collections, plugin folders (``plugins/*/skills/*``), a
skill nested inside another skill's folder, hidden collection folders
(``.system``, ``.curated``). Beside them are the folders that cannot load
(broken YAML, a SKILL.md that is a link or a folder, a link out of the
workspace). Every SKILL.md on disk is either loaded or named with its reason
in the load report, in ``semif skills validate`` and in ``semif tree --json``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.catalog_helpers import make_skill

from semif_agent.catalog import folder_search, list_skill_rows, loader
from semif_agent.catalog.loader import LINK_NOT_FOLLOWED, SKILL_MD_NAMES, is_skipped_folder, search_skill_folders
from semif_agent.cli.catalog_cmds import validate
from semif_agent.cli.tree_cmds import tree_json
from semif_agent.tree import SkillTree
from semif_agent.tree.skill_md import scan_skill_md
from semif_agent.workspace import Workspace

LAYOUTS = {
    "collections of collections": "vendors/anthropic/document-skills/office/spreadsheets/sheets/tables/xlsx",
    "a plugin folder": "marketplace/claude-plugins/repo/v2/plugins/pdf-tools/skills/pdf",
    "a trail of plugins": "trailofbits/plugins/audit/skills/static-analysis",
    "a skill nested in a skill": "trailofbits/plugins/audit/skills/static-analysis/lib/semgrep/rules",
    "hidden collection folders": "openai/skills/.system/.curated/tools/pinned/v1/gh-fix-ci",
    "a hidden plugin folder": "vendors/.claude/plugins/cache/official/docs/skills/writing-guide",
}
"""Skill folders below ``skills/``, as packages nest them (eight folders deep)."""

BROKEN_YAML = "broken/collection/a/b/c/d/e/bad-yaml"
LINKED_DOCUMENT = "linked/collection/a/b/c/d/e/thief"
FOLDER_DOCUMENT = "odd/collection/a/b/c/d/e/folder-document"
LINK_OUT = "links/collection/a/b/c/d/e/door"


@pytest.fixture
def packages(tmp_path: Path, make_workspace) -> Workspace:
    """A workspace whose ``skills/`` holds every layout, and one folder of each kind that cannot load."""
    root = make_workspace({"notes.add": None}, settings="[skills]\nuser_skills = false\n")
    skills = root / "skills"
    for relative in map(Path, LAYOUTS.values()):
        own_files = {"scripts/run.py": "print('hi')\n", "references/guide.md": "Read me.\n"}
        make_skill(skills / relative.parent, relative.name, files=own_files)
    make_skill(skills, BROKEN_YAML, "name: bad-yaml\ndescription: [not closed")
    secret = tmp_path / "secret.txt"
    secret.write_text("---\nname: stolen\ndescription: a private file\n---\n")
    (skills / LINKED_DOCUMENT).mkdir(parents=True)
    (skills / LINKED_DOCUMENT / "SKILL.md").symlink_to(secret)
    (skills / FOLDER_DOCUMENT / "SKILL.md").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    make_skill(elsewhere, "planted")
    (skills / LINK_OUT).parent.mkdir(parents=True)
    (skills / LINK_OUT).symlink_to(elsewhere, target_is_directory=True)
    return Workspace.load(root)


def skill_md_folders_on_disk(root: Path) -> set[str]:
    """Every folder below ``root`` holding an entry named SKILL.md, as a plain walk finds them (links not followed,
    version control and caches left aside)."""
    found = set()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if not is_skipped_folder(name)]
        if any(name in SKILL_MD_NAMES for name in [*files, *subfolders]):
            found.add(folder)
    return found


def test_every_layout_loads_at_depth_eight_and_each_folder_left_out_says_why(packages: Workspace) -> None:
    skills = packages.root / "skills"
    scan = scan_skill_md(packages)
    loaded = {str(found.folder) for found in scan.skills}
    assert loaded == {str(skills / relative) for relative in LAYOUTS.values()}
    left_out = {item.folder: item.reason for item in scan.skipped}
    assert left_out.keys() == {str(skills / path) for path in (BROKEN_YAML, LINKED_DOCUMENT, FOLDER_DOCUMENT, LINK_OUT)}
    assert "invalid YAML" in left_out[str(skills / BROKEN_YAML)]
    assert left_out[str(skills / LINKED_DOCUMENT)] == "SKILL.md is a link; not read"
    assert left_out[str(skills / FOLDER_DOCUMENT)] == "SKILL.md is not a regular file; not read"
    assert left_out[str(skills / LINK_OUT)] == LINK_NOT_FOLLOWED
    assert skill_md_folders_on_disk(skills) <= loaded | left_out.keys()  # nothing left out without a reason


def test_skills_validate_lists_every_skill_and_every_folder_left_out_with_why(packages: Workspace) -> None:
    skills = packages.root / "skills"
    result = CliRunner().invoke(validate, ["-w", str(packages.root), "--json"])
    assert result.exit_code == 1  # the folders left out do not load
    rows = {row["path"]: row for row in json.loads(result.stdout)}
    assert all(rows[str(skills / relative)]["ok"] for relative in LAYOUTS.values())
    failed = {path: row["errors"] for path, row in rows.items() if not row["ok"]}
    assert failed.keys() == {str(skills / path) for path in (BROKEN_YAML, LINKED_DOCUMENT, FOLDER_DOCUMENT, LINK_OUT)}
    assert failed[str(skills / LINK_OUT)] == [LINK_NOT_FOLLOWED]
    assert failed[str(skills / FOLDER_DOCUMENT)] == ["SKILL.md is not a regular file; not read"]
    assert {path for path, row in rows.items() if not row["loads"]} == failed.keys()
    said = CliRunner().invoke(validate, ["-w", str(packages.root)])
    assert said.stderr.endswith(f"{len(rows)} skills checked: {len(rows) - 4} load, 4 do not (FAIL)\n")


def test_tree_json_counts_what_loaded_and_what_was_left_out_by_reason(packages: Workspace) -> None:
    tree = SkillTree.for_workspace(packages)
    report = tree_json(tree)["report"]
    assert report["loaded"] == len(LAYOUTS)
    assert report["left_out"] == 4 == len(report["skipped"])
    assert report["left_out_by_reason"] == {
        "invalid YAML in frontmatter: did not find expected ',' or ']'": 1,  # its line number left aside
        "SKILL.md is a link; not read": 1,
        "SKILL.md is not a regular file; not read": 1,
        LINK_NOT_FOLLOWED: 1,
    }
    assert {str(leaf.source.parent) for leaf in tree.skills.values() if leaf.is_skill_md and leaf.source} == {
        str(packages.root / "skills" / relative) for relative in LAYOUTS.values()
    }


def chain(top: Path, depth: int) -> Path:
    """``top/d/d/.../d``, ``depth`` folders below ``top``, made; returns the deepest."""
    path = top.joinpath(*["d"] * depth)
    path.mkdir(parents=True)
    return path


def test_a_skill_200_folders_deep_loads_and_one_past_the_depth_bound_is_named_with_why(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_skill(chain(root / "deep", 199), "bottom")  # the skill folder is the 201st level
    past = chain(root / "too-deep", loader.MAX_DEPTH + 10)
    make_skill(past, "unreachable")
    search = search_skill_folders(root)
    assert [Path(relative).name for relative, _ in search.found] == ["bottom"]
    unsearched = root.joinpath("too-deep", *["d"] * loader.MAX_DEPTH)  # the first folder past the bound
    assert search.skipped == [(unsearched, f"nested deeper than {loader.MAX_DEPTH} folders; not searched")]


def test_a_folder_over_the_entry_bound_is_named_with_why_and_the_rest_load(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(folder_search, "MAX_ENTRIES", 40)
    root = tmp_path / "ws"
    (root / "skills").mkdir(parents=True)
    (root / "semif.toml").write_text("[skills]\nuser_skills = false\n")
    make_skill(root / "skills" / "pack", "fine")
    crowded = root / "skills" / "pack" / "fine" / "lib"  # inside a skill: the skill loads, its crowded folder is named
    for index in range(50):
        (crowded / f"entry-{index}").mkdir(parents=True)
    make_skill(crowded, "lost-in-the-crowd")
    scan = scan_skill_md(Workspace.load(root))
    assert [found.folder.name for found in scan.skills] == ["fine"]
    assert [(item.folder, item.reason) for item in scan.skipped] == [
        (str(crowded), "holds more than 40 entries; not searched")
    ]


def test_skills_list_shows_each_folder_left_out_with_why_and_counts_it(packages: Workspace) -> None:
    from semif_agent.cli import main

    skills = packages.root / "skills"
    listed = CliRunner().invoke(main, ["skills", "list", "-w", str(packages.root), "--json"])
    assert listed.exit_code == 0, listed.stderr
    rows = json.loads(listed.stdout)
    left_out = {row["path"]: row["warnings"] for row in rows if row["kind"] == "skill.md" and not row["id"]}
    assert left_out[str(skills / LINK_OUT)] == [LINK_NOT_FOLLOWED]
    assert left_out.keys() == {str(skills / path) for path in (BROKEN_YAML, LINKED_DOCUMENT, FOLDER_DOCUMENT, LINK_OUT)}
    said = CliRunner().invoke(main, ["skills", "list", "-w", str(packages.root)])
    assert f"(1 code, {len(LAYOUTS)} SKILL.md), 4 not loaded (skipped or shadowed)" in said.stderr


def test_a_folder_mounted_inside_itself_is_searched_once_and_the_loop_named(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_skill(root / "pack", "inside")
    loop = root / "pack" / "inside" / "lib" / "again"
    loop.mkdir(parents=True)
    mounted = subprocess.run(["mount", "--bind", str(root / "pack"), str(loop)], capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"a bind mount is not allowed here ({mounted.stderr.decode().strip()})")
    try:
        search = search_skill_folders(root)
    finally:
        subprocess.run(["umount", str(loop)], check=True)
    assert [relative for relative, _ in search.found] == ["pack/inside"]
    assert search.skipped == [(loop, "the same folder as one above it (a loop); not searched again")]


def test_a_skill_folder_listed_by_itself_brings_the_skills_nested_in_it(tmp_path: Path) -> None:
    outer = make_skill(tmp_path, "outer")
    make_skill(outer / "lib", "inner")
    rows = list_skill_rows(folders=[outer], include_user=False)
    assert sorted(row["name"] for row in rows if row["id"]) == ["inner", "outer"]


def test_a_skill_document_named_otherwise_is_named_with_why(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    misnamed = root / "pack" / "almost"
    misnamed.mkdir(parents=True)
    (misnamed / "Skill.md").write_text("---\nname: almost\ndescription: Nearly a skill.\n---\n")
    make_skill(root / "pack", "fine")
    search = search_skill_folders(root)
    if [relative for relative, _ in search.found] == ["pack/almost", "pack/fine"]:
        pytest.skip("this file system ignores case: Skill.md is read as SKILL.md")
    assert [relative for relative, _ in search.found] == ["pack/fine"]
    assert search.skipped == [(misnamed, "its skill document is named Skill.md; only SKILL.md or skill.md is read")]
