"""The host's way into folders a child writes (:mod:`semif_agent._beneath`), with ``openat2`` and without it (one
name at a time): never through a link, never out of the held folder, temporary files never squatted."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from semif_agent import _beneath


@pytest.fixture(params=["openat2", "one name at a time"])
def root(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    if request.param == "one name at a time":
        monkeypatch.setattr(_beneath, "_openat2", False)
    folder = tmp_path / "child"
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "file").write_text("inside\n")
    (tmp_path / "secret").write_text("outside\n")
    (folder / "a" / "up").symlink_to(tmp_path, target_is_directory=True)
    (folder / "a" / "near").symlink_to("b", target_is_directory=True)
    (folder / "a" / "secret").symlink_to(tmp_path / "secret")
    os.mkfifo(folder / "a" / "pipe")
    fd = _beneath.open_root(folder)
    yield fd
    os.close(fd)


def test_a_file_below_is_opened(root: int) -> None:
    fd = _beneath.open_regular_at(root, "a/b/file")
    assert fd is not None
    with os.fdopen(fd, "rb") as handle:
        assert handle.read() == b"inside\n"


@pytest.mark.parametrize("path", ["a/up/secret", "a/secret", "a/near/file", "../secret", "a/../../secret"])
def test_no_link_is_followed_and_nothing_above_is_reached(root: int, path: str) -> None:
    with pytest.raises(OSError) as raised:
        os.close(_beneath.open_beneath(root, path))
    assert raised.value.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR)  # a link met where a folder must be
    assert _beneath.open_regular_at(root, path) is None


def test_an_absolute_path_is_refused(root: int, tmp_path: Path) -> None:
    with pytest.raises(OSError) as raised:
        _beneath.open_beneath(root, str(tmp_path / "secret"))
    assert raised.value.errno == errno.EXDEV


def test_a_fifo_is_no_regular_file_and_does_not_hang(root: int) -> None:
    assert _beneath.open_regular_at(root, "a/pipe") is None


def test_folders_are_made_one_at_a_time_and_never_through_a_link(root: int, tmp_path: Path) -> None:
    os.close(_beneath.open_folder_beneath(root, "a/new/deeper", make=True))
    assert (tmp_path / "child" / "a" / "new" / "deeper").is_dir()
    with pytest.raises(OSError):
        _beneath.open_folder_beneath(root, "a/up/made", make=True)
    assert not (tmp_path / "made").exists()


def test_a_file_is_replaced_whole_over_a_link_never_through_it(root: int, tmp_path: Path) -> None:
    folder = _beneath.open_folder_beneath(root, "a")
    try:
        _beneath.replace_at(folder, "secret", b"put back\n", 0o6755)
    finally:
        os.close(folder)
    assert (tmp_path / "secret").read_text() == "outside\n"
    written = tmp_path / "child" / "a" / "secret"
    assert not written.is_symlink() and written.read_text() == "put back\n"
    assert stat.S_IMODE(written.stat().st_mode) == 0o755
    assert [p.name for p in written.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_the_walk_never_enters_a_link_and_lists_folders_in_order(root: int) -> None:
    seen = [(folder.path, folder.folders, [e.name for e in folder.others]) for folder in _beneath.walk(root)]
    assert seen == [("", ["a"], []), ("a", ["b"], ["near", "pipe", "secret", "up"]), ("a/b", [], ["file"])]


def test_the_walk_stops_past_its_depth(root: int) -> None:
    with pytest.raises(_beneath.TreeTooLarge, match="deeper than 1 levels"):
        list(_beneath.walk(root, max_depth=1))


def test_emptying_removes_links_not_their_targets(root: int, tmp_path: Path) -> None:
    assert _beneath.remove_contents(root, max_depth=1)
    assert os.listdir(root) == [] and (tmp_path / "secret").read_text() == "outside\n"


def test_it_imports_only_the_standard_library():
    """The warm worker, the script launcher and so every call's child import it."""
    import ast
    import sys
    from pathlib import Path

    import semif_agent._beneath as beneath

    tree = ast.parse(Path(beneath.__file__).read_text(encoding="utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and not node.level}
    assert all(name.split(".")[0] in sys.stdlib_module_names for name in names), names
