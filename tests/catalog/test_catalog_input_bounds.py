"""SKILL.md text and skills folders are untrusted: their size, nesting and links are bounded when they are read."""

from __future__ import annotations

import contextlib
import inspect
import sys
import time
import warnings
from pathlib import Path

import pytest
from support.catalog_helpers import make_skill

from semif_agent.catalog import SkillCatalog, SkillCatalogWarning, folder_search, load_skill
from semif_agent.catalog.frontmatter import MAX_FRONTMATTER_BYTES, MAX_SKILL_MD_BYTES
from semif_agent.catalog.loader import find_skill_folders, search_skill_folders
from semif_agent.catalog.runtime import AgentSkillRuntime
from semif_agent.catalog.validate import validate_skill


def alias_bomb(levels: int) -> str:
    """A few hundred bytes of YAML whose aliases expand ninefold per level ("billion laughs")."""
    lines = ["name: bomb", "description: Deploys things.", f"a0: &a0 [{','.join(['xxxxxxxx'] * 9)}]"]
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{','.join([f'*a{level - 1}'] * 9)}]")
    lines.append(f"metadata: {{payload: *a{levels}}}")
    return "\n".join(lines)


def load(folder: Path):
    return load_skill(folder, namespace="custom", source="custom", source_label="x")


def scanned(root: Path) -> SkillCatalog:
    catalog = SkillCatalog()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkillCatalogWarning)
        catalog.scan_custom(root)
    return catalog


@pytest.mark.parametrize("levels", [6, 7])
def test_a_yaml_alias_bomb_is_refused_at_once_with_a_reason(tmp_path: Path, levels: int) -> None:
    folder = make_skill(tmp_path, "bomb", alias_bomb(levels))
    assert (folder / "SKILL.md").stat().st_size < 600
    started = time.monotonic()
    result = load(folder)
    assert result.descriptor is None
    assert "aliases" in result.skipped and "refused" in result.skipped
    assert time.monotonic() - started < 5  # the unbounded expansion took tens of seconds and gigabytes


def test_recursive_aliases_and_deep_nesting_are_refused(tmp_path: Path) -> None:
    recursive = make_skill(tmp_path, "recursive", "name: recursive\ndescription: d\nloop: &loop [*loop]")
    assert "recursive YAML alias" in load(recursive).skipped
    chained = "\n".join(f"c{i}: &c{i} {'[' * 20}{f'*c{i - 1}' if i else 'x'}{']' * 20}" for i in range(10))
    deep = make_skill(tmp_path, "deep", f"name: deep\ndescription: d\n{chained}")
    assert "nests deeper" in load(deep).skipped  # each anchor is shallow; the expanded document is 200 deep


def test_aliases_within_the_caps_still_load(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "shared", "name: shared\ndescription: &d Shares one text.\nmetadata: {about: *d}")
    info = load(folder).descriptor
    assert info is not None and info.metadata == {"about": "Shares one text."}


def test_oversized_skill_md_and_frontmatter_are_refused(tmp_path: Path) -> None:
    big_front = make_skill(tmp_path, "big-front", "name: big-front\ndescription: " + "x" * MAX_FRONTMATTER_BYTES)
    assert "frontmatter is" in load(big_front).skipped
    big_file = make_skill(tmp_path, "big-file", body="y" * MAX_SKILL_MD_BYTES)
    assert "over" in load(big_file).skipped and "not read" in load(big_file).skipped


def test_a_link_out_of_the_skills_folder_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_skill(root, "own")
    elsewhere = tmp_path / "elsewhere"
    make_skill(elsewhere / "a" / "b", "planted")  # a few levels below the link's target
    make_skill(elsewhere, "direct")
    (root / "door").symlink_to(elsewhere, target_is_directory=True)
    (root / "direct").symlink_to(elsewhere / "direct", target_is_directory=True)
    make_skill(root / "inner", "real")
    (root / "alias").symlink_to(root / "inner", target_is_directory=True)  # inside: its target is found in place
    search = search_skill_folders(root)
    assert [relative for relative, _ in search.found] == ["own", "inner/real"]  # the top level first
    assert sorted((path.name, why) for path, why in search.skipped) == [
        ("direct", "a link out of the skills folder; not followed (list a folder kept elsewhere in [skills] folders)"),
        ("door", "a link out of the skills folder; not followed (list a folder kept elsewhere in [skills] folders)"),
    ]
    catalog = scanned(root)
    assert sorted(info.name for info in catalog.list_all()) == ["own", "real"]
    assert sorted(issue.path.name for issue in catalog.issues if issue.kind == "skipped") == ["direct", "door"]


def test_a_skill_md_that_is_a_link_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("---\nname: stolen\ndescription: the first line of a private file\n---\n")
    folder = tmp_path / "skills" / "thief"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(secret)
    search = search_skill_folders(tmp_path / "skills")
    assert search.found == [] and [why for _, why in search.skipped] == ["SKILL.md is a link; not read"]
    result = load(folder)
    assert result.descriptor is None  # even when named directly, the link is not read
    assert validate_skill(folder).errors == ("SKILL.md is a link; not read",)
    assert scanned(tmp_path / "skills").list_all() == []


def test_a_pathological_folder_is_refused_and_the_rest_load(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(folder_search, "MAX_ENTRIES", 50)
    root = tmp_path / "skills"
    make_skill(root, "fine")
    crowded = root / "crowded"
    crowded.mkdir()
    for index in range(60):
        (crowded / f"entry-{index}").mkdir()
    make_skill(crowded, "hidden-in-the-crowd")
    search = search_skill_folders(root)
    assert [relative for relative, _ in search.found] == ["fine"]
    assert search.skipped == [(crowded, "holds more than 50 entries; not searched")]
    catalog = scanned(root)
    assert [info.name for info in catalog.list_all()] == ["fine"]
    assert any(issue.path == crowded and "more than 50 entries" in issue.message for issue in catalog.issues)


CHAIN = 300
"""How deep the folder chains below go: deeper than the stack the walks are given (:func:`shallow_stack`), and
shallow enough for pytest to remove them afterwards."""


def folder_chain(top: Path, depth: int = CHAIN) -> None:
    """``top/d/d/.../d``, ``depth`` folders below ``top``."""
    path = top
    for _ in range(depth):
        path = path / "d"
    path.mkdir(parents=True)


@contextlib.contextmanager
def shallow_stack(frames: int = CHAIN // 2):
    """Python's recursion limit only ``frames`` above the current depth: a walk that recurses once per folder of a
    :data:`CHAIN` deep chain exhausts it, as a chain thousands deep exhausts the default one."""
    depth = len(inspect.stack(0))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def test_a_folder_chain_deeper_than_the_stack_or_too_wide_ends_the_search_with_a_reason(
    tmp_path: Path, monkeypatch
) -> None:
    root = tmp_path / "skills"
    make_skill(root, "fine")
    folder_chain(root / "chain")
    with shallow_stack():
        search = search_skill_folders(root, max_depth=2 * CHAIN)
    assert [relative for relative, _ in search.found] == ["fine"]
    monkeypatch.setattr(folder_search, "MAX_FOLDERS", 100)
    search = search_skill_folders(root, max_depth=2 * CHAIN)
    stopped_at = root.joinpath("chain", *["d"] * 99)  # the root, chain and 98 folders of it were opened
    why = "not searched, nor 1 more folder after it: the search stops after opening 100 folders"  # fine/
    assert search.skipped == [(stopped_at, why)]
    assert [relative for relative, _ in search.found] == ["fine"]
    assert [relative for relative, _ in find_skill_folders(root)] == ["fine"]


def test_a_skills_files_are_listed_without_following_links_however_deep_its_folders(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills", "lister", files={"references/guide.md": "read me"})
    outside = tmp_path / "outside"
    (outside / "private").mkdir(parents=True)
    (outside / "private" / "key.pem").write_text("secret")
    (folder / "assets").symlink_to(outside, target_is_directory=True)
    (folder / "escape.md").symlink_to(outside / "private" / "key.pem")
    folder_chain(folder / "chain")
    info = load(folder).descriptor
    assert info is not None
    with shallow_stack():
        assert info.resource_files() == ["references/guide.md", "SKILL.md"]


def test_a_skill_md_swapped_for_a_link_after_loading_is_not_read_through_it(tmp_path: Path) -> None:
    make_skill(tmp_path / "skills", "swapped")
    catalog = scanned(tmp_path / "skills")
    secret = tmp_path / "secret.txt"
    secret.write_text("the host's private text")
    skill_md = tmp_path / "skills" / "swapped" / "SKILL.md"
    skill_md.unlink()
    skill_md.symlink_to(secret)
    assert catalog.read_skill_doc("custom@swapped") == ""


def test_a_skill_folder_swapped_for_a_link_after_the_scan_is_not_read_through_it(tmp_path: Path) -> None:
    """The skill's folder, or a collection folder above it, replaced by a link out of the scanned folder after the
    scan: the catalog (and the runtime an agent reads skill files through) gives nothing, not the outside file."""
    folder = make_skill(tmp_path / "skills" / "collection", "swapped", files={"notes.md": "inside"})
    catalog = scanned(tmp_path / "skills")
    runtime = AgentSkillRuntime("reader", catalog)
    runtime.set_visible_skills(["custom@swapped"])
    assert catalog.read_skill_file("custom@swapped", "notes.md") == "inside"
    outside = tmp_path / "outside" / "swapped"
    outside.mkdir(parents=True)
    (outside / "notes.md").write_text("the host's private text")
    for swapped, target in ((folder, outside), (folder.parent, outside.parent)):
        aside = swapped.with_name("aside")
        swapped.rename(aside)
        swapped.symlink_to(target, target_is_directory=True)
        assert catalog.read_skill_file("custom@swapped", "notes.md") == ""
        assert runtime.read_skill_file("custom@swapped", "notes.md") == ""
        swapped.unlink()
        aside.rename(swapped)


@pytest.mark.parametrize(
    "value",
    ["2024-13-45", "9" * 5000, "!!bool maybe", "!!timestamp soon", "!!float abc", "!!int abc"],
    ids=["impossible-date", "huge-integer", "bad-bool", "bad-timestamp", "bad-float", "bad-int"],
)
def test_a_value_yaml_cannot_build_skips_its_skill_and_the_rest_load(tmp_path: Path, value: str) -> None:
    root = tmp_path / "skills"
    make_skill(root, "good")
    make_skill(root, "odd", f"name: odd\ndescription: Has an odd value.\nreleased: {value}")
    result = load(root / "odd")
    assert result.descriptor is None and "invalid value in frontmatter" in result.skipped
    catalog = scanned(root)
    assert [info.name for info in catalog.list_all()] == ["good"]
    assert [issue.path.name for issue in catalog.issues if issue.kind == "skipped"] == ["odd"]
