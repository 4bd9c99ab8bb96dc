"""Host walks of a folder a child writes (the snapshot, the gate's copy, the clean-up of a call's private folder,
the run page) go from directory descriptors: a folder swapped for a link after it was listed is never entered,
a link on the way is never followed, and a tree past the caps is refused with a line, never a crash."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from semif_agent import _beneath
from semif_agent._files import copy_tree
from semif_agent.forge.gate import run_gate
from semif_agent.loop.observe import observe
from semif_agent.sandbox._call import empty_folder
from semif_agent.starter import create_workspace
from semif_agent.ui.run_view import _change
from semif_agent.workspace import Workspace

SECRET = "api_key = sk-not-for-skills\n"


class _SwapAfterListing:
    """``os.scandir`` that, once ``folder`` has been listed to its end, swaps its subfolder ``sub`` for a link to
    ``outside`` just before the next listing starts: what a thread a child left behind does between a walk's listing
    of a folder and its descent into a subfolder."""

    def __init__(self, folder: Path, outside: Path) -> None:
        self.folder, self.outside = folder, outside
        self.identity = (folder.stat().st_dev, folder.stat().st_ino)
        self.real = os.scandir
        self.armed = self.swapped = False

    def __call__(self, path: Any = ".") -> Any:
        if self.armed and not self.swapped:
            self.swapped = True
            os.rename(self.folder / "sub", self.folder / "sub.was")
            os.symlink(self.outside, self.folder / "sub")
        listing = self.real(path)
        if self.swapped or not self._is_folder(path):
            return listing
        return _Listing(listing, self._arm)

    def _is_folder(self, path: Any) -> bool:
        try:
            status = os.fstat(path) if isinstance(path, int) else os.stat(path)
        except OSError:
            return False
        return (status.st_dev, status.st_ino) == self.identity

    def _arm(self) -> None:
        self.armed = True


class _Listing:
    """A directory listing that calls ``then`` once it has been read to its end."""

    def __init__(self, listing: Any, then: Callable[[], None]) -> None:
        self.listing, self.then = listing, then

    def __iter__(self) -> Iterator[Any]:
        yield from self.listing
        self.then()

    def __next__(self) -> Any:
        try:
            return next(self.listing)
        except StopIteration:
            self.then()
            raise

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.listing.close()

    def close(self) -> None:
        self.listing.close()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


def _plant(folder: Path) -> None:
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "mine.txt").write_text("the child's\n")
    (folder / "top.txt").write_text("top\n")


@pytest.mark.parametrize("operation", ["snapshot", "gate copy", "private folder clean-up"])
def test_a_folder_swapped_for_a_link_mid_walk_is_never_entered(
    operation: str, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "child"
    _plant(folder)
    monkeypatch.setattr(os, "scandir", _SwapAfterListing(folder, outside))
    if operation == "snapshot":
        snap = observe((folder,), base=tmp_path, texts=True, since=observe(()))
        assert not any("secret" in name for name in snap.files) and SECRET not in "".join(snap.texts.values())
    elif operation == "gate copy":
        copy_tree(folder, tmp_path / "copy")
        assert not (tmp_path / "copy" / "sub" / "secret.txt").exists()
    else:
        empty_folder(str(folder))
    monkeypatch.undo()
    assert (outside / "secret.txt").read_text() == SECRET, "nothing outside is touched"


CHAIN_DEPTH = 1100


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[Path]:
    """A write dir holding a folder chain 1,100 deep (removed after: pytest's own clean-up recurses)."""
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    ws.make_write_dirs()
    drafts = ws.root / "data" / "drafts"
    fd = os.open(drafts, os.O_RDONLY)
    for _ in range(CHAIN_DEPTH):
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)
    yield drafts
    subprocess.run(["rm", "-rf", "--", str(tmp_path / "ws")], check=False)


def test_a_deep_chain_is_refused_by_the_snapshot_in_a_line_and_the_other_write_dirs_are_seen(chain: Path) -> None:
    (chain / "plain.txt").write_text("a draft\n")
    notes = chain.parent / "notes"
    (notes / "note.txt").write_text("a note\n")
    snap = observe((chain, notes), base=chain.parent.parent)
    assert snap.truncated and snap.refused == ("data/drafts holds folders nested deeper than 64 levels",)
    assert {"data/drafts/plain.txt", "data/notes/note.txt"} <= set(snap.files)


def test_a_deep_chain_stops_the_gate_with_its_reason(chain: Path) -> None:
    from semif_agent._sync import run_sync

    ws = Workspace.load(chain.parent.parent)
    report = run_sync(
        run_gate("", name="x.y", category="x", budget=1, samples=["go"], workspace=ws)  # never reaches the body
    )
    assert not report.ok and "deeper than" in report.error


def test_a_deep_chain_is_emptied_from_a_private_folder(chain: Path) -> None:
    assert empty_folder(str(chain)) and os.listdir(chain) == []


def test_a_tree_past_the_entry_cap_is_refused(tmp_path: Path) -> None:
    for index in range(30):
        (tmp_path / f"f{index}").write_text("x")
    root = _beneath.open_root(tmp_path)
    try:
        with pytest.raises(_beneath.TreeTooLarge, match="more than 20 files and folders"):
            list(_beneath.walk(root, max_entries=20))
        assert not _beneath.remove_contents(root, max_entries=20)  # gives up: the folder is reported not empty
    finally:
        os.close(root)


@pytest.mark.parametrize("planted", ["up", "drafts-up"])
def test_the_run_page_shows_nothing_through_a_link_even_one_into_the_workspace(tmp_path: Path, planted: str) -> None:
    ws = Workspace.load(create_workspace(tmp_path / "ws"))
    ws.make_write_dirs()
    (ws.root / "semif.toml").write_text((ws.root / "semif.toml").read_text() + "\n# " + SECRET)
    drafts = ws.root / "data" / "drafts"
    (drafts / planted).symlink_to("../.." if planted == "up" else ws.root, target_is_directory=True)
    view = _change(ws.root, "created", f"data/drafts/{planted}/semif.toml")
    assert view.diff is None and view.why.startswith("not shown")
