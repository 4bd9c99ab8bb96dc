"""Lenient loading and the shared registry: scans, precedence, refresh, registration from Python."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from support.catalog_helpers import corpus_skill_folders, make_skill

from semif_agent.catalog import (
    SkillCatalog,
    SkillCatalogWarning,
    SkillCollisionError,
    SkillDescriptor,
    SkillParseError,
    load_skill,
    user_skills_dir,
)
from semif_agent.catalog.loader import find_skill_folders
from semif_agent.catalog.validate import validate_paths


def scan(root: Path, **kwargs) -> SkillCatalog:
    registry = SkillCatalog()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkillCatalogWarning)
        registry.scan_custom(root, **kwargs)
    return registry


def test_scan_builds_descriptors_with_every_field(skills_root):
    make_skill(
        skills_root,
        "pdf",
        """
        name: pdf
        description: "  Read PDFs.  "
        license: MIT
        compatibility: needs poppler
        metadata:
          author: me
        allowed-tools: Bash(git commit:*) Read
        script: scripts/run.py
        hooks:
          pre_step: scripts/hook.py
        """,
        files={
            "scripts/run.py": "",
            "scripts/hook.py": "",
            "references/guide.md": "",
            ".hidden": "",
            "scripts/__pycache__/x.pyc": "",
        },
    )
    registry = SkillCatalog()
    assert registry.scan_custom(skills_root) == ["custom@pdf"]
    info = registry.get("custom@pdf")
    assert (info.name, info.namespace, info.description, info.source) == ("pdf", "custom", "Read PDFs.", "custom")
    assert info.root == (skills_root / "pdf").resolve()
    assert info.source_label == str(skills_root)
    assert info.script == "scripts/run.py" and dict(info.hooks) == {"pre_step": "scripts/hook.py"}
    assert (info.license, info.compatibility, dict(info.metadata)) == ("MIT", "needs poppler", {"author": "me"})
    assert info.allowed_tools == ("Bash(git commit:*)", "Read")
    assert info.warnings == ()
    assert info.resource_files() == ["references/guide.md", "scripts/hook.py", "scripts/run.py", "SKILL.md"]
    assert registry.find_by_name("pdf") == [info]
    assert registry.list_hooks("pre_step") == [info] and registry.list_hooks("post_step") == []
    assert registry.read_skill_doc("custom@pdf").startswith("---\nname: pdf")
    assert registry.read_skill_file("custom@pdf", "references/guide.md") == ""
    assert registry.read_skill_file("custom@pdf", "../../etc/passwd") == ""
    assert registry.read_skill_doc("custom@nope") == ""


def test_namespaces_of_env_and_custom_scans(skills_root):
    make_skill(skills_root, "tool")
    registry = SkillCatalog()
    registry.scan_custom(skills_root, namespace="team")
    registry.scan_env(skills_root, "weather")
    assert [item.skill_id for item in registry.list_all()] == ["env:weather@tool", "team@tool"]
    assert registry.get("env:weather@tool").source == "env"
    assert len(registry.find_by_name("tool")) == 2


def test_lenient_loading_warns_and_skips_with_reasons(skills_root):
    make_skill(skills_root, "mismatch", "name: other-name\ndescription: d")
    make_skill(skills_root, "long", f"name: {'x' * 70}\ndescription: d")
    make_skill(skills_root, "typed", "name: typed\ndescription: 42\nmetadata:\n  v: 1.0\nscript: ../../evil.py")
    make_skill(skills_root, "nodesc", "name: nodesc")
    (skills_root / "badyaml").mkdir()
    (skills_root / "badyaml" / "SKILL.md").write_text("---\nname: [x\n---\n")
    (skills_root / "nofront").mkdir()
    (skills_root / "nofront" / "SKILL.md").write_text("# just markdown\n")
    make_skill(skills_root, "fine")
    registry = SkillCatalog()
    with pytest.warns(SkillCatalogWarning) as caught:
        added = registry.scan_custom(skills_root)
    assert sorted(added) == ["custom@fine", "custom@other-name", "custom@typed", f"custom@{'x' * 70}"]
    assert any("must equal the folder name" in w for w in registry.get("custom@other-name").warnings)
    assert any("at most 64" in w for w in registry.get(f"custom@{'x' * 70}").warnings)
    typed = registry.get("custom@typed")
    assert typed.description == "42" and dict(typed.metadata) == {"v": "1.0"} and typed.script is None
    skipped = {issue.path.name: issue.message for issue in registry.issues if issue.kind == "skipped"}
    assert skipped.keys() == {"nodesc", "badyaml", "nofront"}
    assert "missing description" in skipped["nodesc"]
    assert "invalid YAML" in skipped["badyaml"] and "line " in skipped["badyaml"]
    assert "frontmatter" in skipped["nofront"]
    assert len(caught) == len(registry.issues)


def test_load_skill_never_raises_for_a_bad_folder(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    result = load_skill(folder, namespace="custom", source="custom", source_label="x")
    assert result.descriptor is None and result.skipped == "no SKILL.md"
    (folder / "SKILL.md").write_bytes(b"---\nname: \xff\n---\n")
    assert "UTF-8" in load_skill(folder, namespace="custom", source="custom", source_label="x").skipped


def test_lowercase_skill_md_and_symlinked_skill_folders(skills_root, tmp_path):
    lower = skills_root / "lower"
    lower.mkdir()
    (lower / "skill.md").write_text("---\nname: lower\ndescription: d\n---\n")
    elsewhere = make_skill(tmp_path / "elsewhere", "linked")
    (skills_root / "linked").symlink_to(elsewhere)  # a link out of the skills folder is not followed
    make_skill(skills_root / "node_modules", "x")  # a package folder is never searched for skills
    registry = scan(skills_root)
    assert registry.get("custom@lower").name == "lower"
    assert registry.get("custom@linked") is None
    assert [issue.path.name for issue in registry.issues if issue.kind == "skipped"] == ["linked"]
    assert len(registry) == 1


def test_conventional_locations_precedence_and_collision_warnings(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    make_skill(workspace / "skills", "shared", "name: shared\ndescription: from skills/")
    make_skill(workspace / ".agents" / "skills", "shared", "name: shared\ndescription: from .agents/skills/")
    make_skill(workspace / ".agents" / "skills", "agents-only")
    make_skill(user_skills_dir(), "shared", "name: shared\ndescription: from home")
    make_skill(user_skills_dir(), "mine")
    assert user_skills_dir() == home / ".agents" / "skills"
    registry = SkillCatalog()
    with pytest.warns(SkillCatalogWarning, match="shadowed") as caught:
        registry.scan_conventional(workspace)
    assert registry.get("custom@shared").description == "from skills/"
    assert registry.get("custom@shared").source == "workspace"
    assert registry.get("custom@mine").source == "user"
    assert registry.get("custom@agents-only") is not None
    shadowed = [issue for issue in registry.issues if issue.kind == "shadowed"]
    assert len(shadowed) == 2 and len(caught) == 2
    assert {issue.path for issue in shadowed} == {
        (workspace / ".agents" / "skills" / "shared").resolve(),
        (home / ".agents" / "skills" / "shared").resolve(),
    }
    with pytest.warns(SkillCatalogWarning, match="shadowed"):
        alone = SkillCatalog.for_workspace(workspace, include_user=False)
    assert alone.get("custom@mine") is None


def test_refresh_picks_up_edits_additions_removals_and_new_scripts(skills_root):
    make_skill(skills_root, "keep")
    edited = make_skill(skills_root, "edit", "name: edit\ndescription: old")
    gone = make_skill(skills_root, "gone")
    scripted = make_skill(skills_root, "scripted", "name: scripted\ndescription: d\nscript: run.py")
    registry = scan(skills_root)
    assert registry.get("custom@scripted").script is None
    before_keep = registry.get("custom@keep")
    (edited / "SKILL.md").write_text("---\nname: edit\ndescription: new text\n---\n")
    os.utime(edited / "SKILL.md", ns=(1, 1))
    for path in gone.iterdir():
        path.unlink()
    gone.rmdir()
    make_skill(skills_root, "added")
    (scripted / "run.py").write_text("print(1)")
    report = registry.refresh()
    assert report.added == ("custom@added",)
    assert report.removed == ("custom@gone",)
    assert set(report.changed) == {"custom@edit", "custom@scripted"}
    assert registry.get("custom@edit").description == "new text"
    assert registry.get("custom@scripted").script == "run.py"
    assert registry.get("custom@keep") is before_keep
    assert registry.refresh() == type(report)()


def test_python_registration(skills_root, tmp_path):
    make_skill(skills_root, "scanned")
    registry = scan(skills_root)
    inline = SkillDescriptor("python@inline", "inline", "python", "Made in code.", tmp_path, "python", "test", None, {})
    assert registry.register(inline, doc="# Inline doc") == "python@inline"
    assert registry.read_skill_doc("python@inline") == "# Inline doc"
    with pytest.raises(SkillCollisionError):
        registry.register(inline)
    override = SkillDescriptor(
        "custom@scanned", "scanned", "custom", "Overridden.", tmp_path, "python", "test", None, {}
    )
    with pytest.warns(SkillCatalogWarning, match="custom@scanned .* shadowed"):
        registry.register(override, replace=True)
    assert registry.get("custom@scanned").description == "Overridden."
    with pytest.warns(SkillCatalogWarning, match="shadowed"):
        registry.refresh()
    assert registry.get("custom@scanned").description == "Overridden."
    folder = make_skill(tmp_path / "loose", "loose")
    assert registry.register_folder(folder) == "custom@loose"
    (folder / "SKILL.md").write_text("---\nname: loose\ndescription: edited\n---\n")
    os.utime(folder / "SKILL.md", ns=(5, 5))
    with pytest.warns(SkillCatalogWarning, match="shadowed"):
        registry.refresh()
    assert registry.get("custom@loose").description == "edited"
    with pytest.raises(SkillParseError):
        registry.register_folder(tmp_path)
    assert registry.unregister("custom@scanned") and registry.get("custom@scanned").description != "Overridden."
    assert registry.unregister("python@inline") and "python@inline" not in registry
    assert not registry.unregister("custom@loose-nope")


def test_copy_is_independent(skills_root, tmp_path):
    make_skill(skills_root, "one")
    registry = scan(skills_root)
    other = registry.copy()
    make_skill(tmp_path / "more", "two")
    other.scan_custom(tmp_path / "more")
    assert "custom@two" in other and "custom@two" not in registry
    assert registry.get("custom@one") is other.get("custom@one")


def test_builtin_scan_runs_once(tmp_path):
    make_skill(tmp_path / "builtin", "core")
    registry = SkillCatalog()
    assert registry.scan_builtin(tmp_path / "builtin") == ["built-in@core"]
    assert registry.scan_builtin(tmp_path / "builtin") == []
    assert registry.get("built-in@core").source == "built-in"


def test_every_corpus_folder_loads_without_warnings(corpus):
    registry = SkillCatalog()
    for collection in sorted({folder.parent for folder in corpus_skill_folders(corpus)}):
        registry.scan_custom(collection, namespace=collection.name)
    assert len(registry) == len(corpus_skill_folders(corpus))
    assert registry.issues == []
    assert all(info.description and info.warnings == () for info in registry.list_all())


def test_nested_collections_and_skills_nested_in_skills_are_found_at_any_depth(tmp_path):
    root = tmp_path / "skills"
    make_skill(root, "top")
    make_skill(root / "collection-a", "deep", files={"lib/inner/SKILL.md": "---\nname: not-described\n---\n"})
    make_skill(root / "collection-a" / "more" / "levels", "deeper")
    make_skill(root / ".system", "builtin")  # a hidden collection folder, as Codex keeps its own skills
    make_skill(root / ".git", "secret")  # version control is never searched
    make_skill(root / "a" / "b" / "c" / "d", "five-down")
    (root / "empty").mkdir()
    (root / "loop").symlink_to(root, target_is_directory=True)  # a link back up is not followed again
    found = [relative for relative, _ in find_skill_folders(root)]
    # in precedence order: nearer the top first, then not hidden before hidden, then by path
    assert found == [
        "top",
        "collection-a/deep",
        ".system/builtin",
        "collection-a/deep/lib/inner",  # a SKILL.md inside another skill's folder is a skill of its own
        "collection-a/more/levels/deeper",
        "a/b/c/d/five-down",
    ]
    registry = SkillCatalog()
    with pytest.warns(SkillCatalogWarning, match="inner: skipped: missing description"):
        registry.scan_custom(root)
    assert sorted(d.name for d in registry.list_all()) == ["builtin", "deep", "deeper", "five-down", "top"]
    skipped = [(issue.path.name, issue.message) for issue in registry.issues if issue.kind == "skipped"]
    assert skipped == [("inner", "skipped: missing description")]
    reports = {r.path.name: r for r in validate_paths([root])}
    assert all(reports[name].ok for name in ("deep", "deeper", "top", "five-down"))
    assert not reports["inner"].ok
    assert not reports["empty"].ok  # a folder with no skill within reach is reported, not passed over
