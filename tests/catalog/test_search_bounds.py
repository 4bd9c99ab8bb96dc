"""A hostile skills folder cannot make the search for skills slow, its report large, a command crash, a skill go
missing without a reason, or a folder's name print lines of its own.

Each test builds the folder tree as an attacker would (bind mounts into each
other, hundreds of links out, a name that is not UTF-8, folders whose names
add up past the system's path limit, a line break in a name) and checks what
the person sees: the skills load, each folder left out is named or counted
with its reason, and every command still answers.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.catalog_helpers import make_skill

from semif_agent.catalog import folder_search, left_out
from semif_agent.catalog.loader import LINK_NOT_FOLLOWED, NOT_UTF8, PATH_TOO_LONG, search_skill_folders
from semif_agent.cli import main
from semif_agent.cli.tree_cmds import tree_json
from semif_agent.tree import SkillTree
from semif_agent.tree.workspace_tree import tree_file
from semif_agent.workspace import Workspace

MOUNTED_TWICE = "the same folder as one searched already (mounted twice); not searched again"


@contextmanager
def bind_mounts(pairs: list[tuple[Path, Path]]) -> Iterator[None]:
    """Each ``(source, target)`` bind-mounted with the mounts below it, in order; all unmounted afterwards (skips where mounting is refused)."""
    done: list[Path] = []
    try:
        for source, target in pairs:
            mounted = subprocess.run(["mount", "--rbind", str(source), str(target)], capture_output=True, check=False)
            if mounted.returncode != 0:
                pytest.skip(f"a bind mount is not allowed here ({mounted.stderr.decode().strip()})")
            done.append(target)
        yield
    finally:
        for target in reversed(done):
            subprocess.run(["umount", "-R", str(target)], check=True)


def entries_listed(monkeypatch) -> list[int]:
    """How many entries each folder the search lists holds, in the order listed."""
    counts: list[int] = []
    list_names = folder_search._entries

    def counting(fd: int) -> list[tuple[str, str]] | None:
        names = list_names(fd)
        counts.append(len(names) if names is not None else folder_search.MAX_ENTRIES + 1)
        return names

    monkeypatch.setattr(folder_search, "_entries", counting)
    return counts


def test_a_folder_mounted_in_many_places_is_searched_once_and_each_other_place_named(
    tmp_path: Path, monkeypatch
) -> None:
    # A tree of mounts, as an attacker builds it: "wide" holds many entries and is mounted under each of three
    # folders of "middle", which is mounted under each of three folders of the collection. No folder is its own
    # ancestor, so only searching each folder once keeps the work at one listing of each.
    store = tmp_path / "store"
    wide = store / "wide"
    make_skill(wide, "shared")
    for index in range(300):
        (wide / f"file-{index:03d}").touch()
    middle = store / "middle"
    places = [middle / f"m{index}" for index in range(3)]
    root = tmp_path / "skills"
    tops = [root / "collection" / f"t{index}" for index in range(3)]
    for folder in [*places, *tops]:
        folder.mkdir(parents=True)
    make_skill(root, "own")
    counts = entries_listed(monkeypatch)
    with bind_mounts([*((wide, place) for place in places), *((middle, top) for top in tops)]):
        search = search_skill_folders(root)
    assert [relative for relative, _ in search.found] == ["own", "collection/t0/m0/shared"]
    mounted_again = [root / "collection" / "t0" / "m1", root / "collection" / "t0" / "m2"]
    mounted_again += [root / "collection" / "t1", root / "collection" / "t2"]
    assert sorted(search.skipped) == sorted((folder, MOUNTED_TWICE) for folder in mounted_again)
    assert sum(count >= 300 for count in counts) == 1  # the wide folder is listed once, not nine times


def test_the_search_stops_after_listing_its_bound_of_entries_and_says_where(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(folder_search, "MAX_LISTED", 100)
    root = tmp_path / "skills"
    for crowded in ("a-crowded", "b-crowded"):
        (root / crowded).mkdir(parents=True)
        for index in range(60):
            (root / crowded / f"file-{index}").touch()
    make_skill(root / "c-pack", "after")
    make_skill(root / "d-pack", "after")
    monkeypatch.setattr(left_out, "MAX_NAMED", 1)
    for name in ("0-link", "1-link"):  # two links out: one is named, the other counted
        (root / name).symlink_to(tmp_path.parent, target_is_directory=True)
    search = search_skill_folders(root)
    assert search.found == []
    why = "not searched, nor 1 more folder after it: the search stops after listing 100 entries"  # d-pack
    assert search.skipped == [(root / "0-link", LINK_NOT_FOLLOWED), (root / "c-pack", why)]  # where it stopped: named
    assert search.more_skipped == {LINK_NOT_FOLLOWED: 1}


LINKS = 260
"""Links out of the skills folder in the test below: more than :data:`~semif_agent.catalog.left_out.MAX_NAMED`."""


@pytest.fixture
def linked_out(tmp_path: Path, make_workspace) -> Workspace:
    """A workspace whose ``skills/`` holds one skill and :data:`LINKS` links out of it, each with a long name."""
    root = make_workspace({"notes.add": None}, settings="[skills]\nuser_skills = false\n")
    collection = root / "skills" / "collection"
    make_skill(collection, "fine")
    outside = tmp_path / "outside"
    outside.mkdir()
    for index in range(LINKS):
        (collection / f"link-{index:04d}-{'x' * 200}").symlink_to(outside, target_is_directory=True)
    return Workspace.load(root)


def test_links_past_the_named_bound_are_counted_by_reason_in_the_search_the_stored_tree_and_tree_json(
    linked_out: Workspace,
) -> None:
    named = left_out.MAX_NAMED
    search = search_skill_folders(linked_out.root / "skills")
    assert [relative for relative, _ in search.found] == ["collection/fine"]
    assert len(search.skipped) == named and {why for _, why in search.skipped} == {LINK_NOT_FOLLOWED}
    assert search.more_skipped == {LINK_NOT_FOLLOWED: LINKS - named}
    tree = SkillTree.for_workspace(linked_out)
    stored = json.loads(tree_file(linked_out).read_text(encoding="utf-8"))["report"]
    assert len(stored["skipped"]) == named and stored["more_skipped"] == {LINK_NOT_FOLLOWED: LINKS - named}
    report = tree_json(tree)["report"]
    assert report["left_out"] == LINKS and report["left_out_by_reason"] == {LINK_NOT_FOLLOWED: LINKS}
    again = SkillTree.for_workspace(linked_out).skill_md_report  # read back from the stored tree, unchanged
    assert again.left_out == LINKS and not again.changed


def test_skills_validate_and_list_name_the_first_folders_left_out_and_count_the_rest(linked_out: Workspace) -> None:
    named = left_out.MAX_NAMED
    result = CliRunner().invoke(main, ["skills", "validate", "-w", str(linked_out.root), "--json"])
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert sum(row["path"].endswith("x" * 200) for row in rows) == named
    assert [row for row in rows if not row["path"]] == [
        {
            "path": "",
            "name": None,
            "ok": False,
            "loads": False,
            "errors": [LINK_NOT_FOLLOWED],
            "left_out": LINKS - named,
        }
    ]
    listed = CliRunner().invoke(main, ["skills", "list", "-w", str(linked_out.root)])
    assert f"({LINKS - named} more)" in listed.stdout and f"{LINKS} not loaded" in listed.stderr
    said = CliRunner().invoke(main, ["skills", "validate", "-w", str(linked_out.root)])
    assert f"FAIL  ({LINKS - named} more folders left out, not named: {LINK_NOT_FOLLOWED})" in said.stdout
    assert said.stderr.rstrip().endswith(f"; {LINKS - named} more folders left out, not named (FAIL)")


def test_a_folder_named_with_bytes_that_are_not_utf8_is_left_out_and_every_command_still_answers(
    make_workspace,
) -> None:
    root = make_workspace({"notes.add": None}, settings="[skills]\nuser_skills = false\n")
    make_skill(root / "skills", "fine")
    bad = os.path.join(os.fsencode(root / "skills"), b"bad\xffname")
    os.mkdir(bad)
    with open(os.path.join(bad, b"SKILL.md"), "w", encoding="utf-8") as document:
        document.write("---\ndescription: A fine helper for notes.\n---\nbody\n")
    shown = root / "skills" / "bad\\xffname"  # the byte written out, as text any encoding holds
    search = search_skill_folders(root / "skills")
    assert [relative for relative, _ in search.found] == ["fine"]
    assert search.skipped == [(shown, NOT_UTF8)]
    for args in (["tree", "--json"], ["skills", "list", "--json"], ["route", "Add a note: buy milk"]):
        result = CliRunner().invoke(main, [*args, "-w", str(root)])
        assert result.exit_code == 0, (args, result.stderr, result.exception)
    tree = json.loads(CliRunner().invoke(main, ["tree", "--json", "-w", str(root)]).stdout)
    assert tree["report"]["skipped"] == [{"folder": str(shown), "reason": NOT_UTF8}]
    assert tree_file(Workspace.load(root)).is_file()  # the tree is stored, not rebuilt by every command


def test_a_skill_below_a_path_longer_than_the_system_opens_is_named_with_why(make_workspace) -> None:
    root = make_workspace({"notes.add": None}, settings="[skills]\nuser_skills = false\n")
    make_skill(root / "skills", "fine")
    fd = os.open(root / "skills", os.O_RDONLY)
    names = [f"{index:02d}" + "d" * 248 for index in range(20)]  # 20 folders of 250 characters: over 4,096 bytes
    for name in names:
        os.mkdir(name, dir_fd=fd)
        deeper = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.mkdir("deep-skill", dir_fd=fd)
    written = os.open("deep-skill/SKILL.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(written, b"---\nname: deep-skill\ndescription: Water the garden plants.\n---\nbody\n")
    os.close(written)
    os.close(fd)
    deep = root.joinpath("skills", *names, "deep-skill")
    search = search_skill_folders(root / "skills")
    assert [relative for relative, _ in search.found] == ["fine"]
    assert search.skipped == [(deep, PATH_TOO_LONG)]
    report = tree_json(SkillTree.for_workspace(Workspace.load(root)))["report"]
    assert report["skipped"] == [{"folder": str(deep), "reason": PATH_TOO_LONG}] and report["left_out"] == 1


FORGED = "semif: all skills verified OK"


def test_a_line_break_in_a_folder_name_never_prints_a_line_of_its_own(make_workspace) -> None:
    root = make_workspace({"notes.add": None}, settings="[skills]\nuser_skills = false\n")
    make_skill(root / "skills", f"line\n{FORGED}", "name: [unclosed\ndescription: x")  # left out: broken YAML
    make_skill(root / "skills", f"ok-line\n{FORGED}", "description: A fine helper for notes.")  # loaded
    for args in (["skills", "list"], ["skills", "validate"]):
        result = CliRunner().invoke(main, [*args, "-w", str(root)])
        assert result.exit_code in (0, 1), (args, result.stderr)
        lines = result.stdout.splitlines()
        assert not [line for line in lines if line.startswith(FORGED)], (args, result.stdout)
        assert any(f"line\\n{FORGED}" in line for line in lines), (args, result.stdout)  # shown, escaped
