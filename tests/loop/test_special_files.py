"""Host-side walks of the write dirs (snapshot, diff, undo, the gate's copy, the run page) skip what is not a
regular file or a folder, and never read through a link: a FIFO, a link to a secret outside, a link loop and a
device node left in a write dir are neither read, listed, copied as data nor followed, and nothing hangs."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from semif_agent.forge.gate import _copy_workspace
from semif_agent.loop.before_images import ImageStore
from semif_agent.loop.observe import diff, observe
from semif_agent.loop.undo import keep_before_images, undo_run
from semif_agent.starter import create_workspace
from semif_agent.ui.run_view import _change
from semif_agent.workspace import Workspace

SECRET = "root:$6$not-for-skills\n"


def finishes(work: Callable[[], Any]) -> Any:
    """``work()``'s result; a failure (not a hang of the test run) when it has not returned after a minute."""
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)
    thread.start()
    thread.join(60)
    assert done, "it hung on a special file"
    return done[0]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.load(create_workspace(tmp_path / "ws"))
    workspace.make_write_dirs()
    secret = tmp_path / "shadow"
    secret.write_text(SECRET)
    drafts = workspace.root / "data" / "drafts"
    os.mkfifo(drafts / "pipe")
    (drafts / "secret").symlink_to(secret)
    (drafts / "loop").symlink_to(drafts / "loop")
    (drafts / "outside").symlink_to(tmp_path, target_is_directory=True)
    if os.geteuid() == 0:
        zero = os.stat("/dev/zero").st_rdev
        os.mknod(drafts / "zero", 0o666 | stat.S_IFCHR, zero)
    (drafts / "plain.txt").write_text("a draft\n")
    return workspace


SPECIAL = ("pipe", "secret", "loop", "outside", "zero")


def test_a_snapshot_lists_and_reads_only_regular_files(ws: Workspace) -> None:
    snap = finishes(lambda: observe(ws.write_roots, base=ws.root, texts=True))
    drafts = [name for name in snap.files if name.startswith("data/drafts/")]
    assert drafts == ["data/drafts/plain.txt"]
    store = ImageStore.of(ws)
    images = finishes(lambda: store.keep(snap))
    assert [name for name in images.shas if name.startswith("data/drafts/")] == ["data/drafts/plain.txt"]
    assert not any(SECRET.encode() in blob.read_bytes() for blob in store.folder.iterdir())
    assert SECRET not in "".join(snap.texts.values())


def test_diff_and_undo_skip_special_files_and_put_back_the_regular_one(ws: Workspace) -> None:
    drafts = ws.root / "data" / "drafts"
    before = observe(ws.write_roots, base=ws.root)
    images = ImageStore.of(ws).keep(before)
    (drafts / "plain.txt").write_text("changed\n")
    (drafts / "made.txt").write_text("new\n")
    os.mkfifo(drafts / "new-pipe")
    (drafts / "new-link").symlink_to(ws.root / "semif.toml")
    after = finishes(lambda: observe(ws.write_roots, base=ws.root, texts=True, since=before))
    changes = diff(before, after, before_shas=images.shas, before_text=images.text_of)
    assert changes.created == ["data/drafts/made.txt"] and changes.modified == ["data/drafts/plain.txt"]
    assert changes.diffs["data/drafts/plain.txt"][-2:] == ["-a draft", "+changed"]
    assert keep_before_images(ws, "run-1", before, after, changes, images) is not None
    done = finishes(lambda: undo_run(ws, "run-1"))
    assert done.removed == ["data/drafts/made.txt"] and done.restored == ["data/drafts/plain.txt"]
    assert (drafts / "plain.txt").read_text() == "a draft\n"
    assert (ws.root.parent / "shadow").read_text() == SECRET
    assert all(os.path.lexists(drafts / name) for name in ("pipe", "secret", "loop", "new-pipe", "new-link"))


def test_the_gates_copy_finishes_without_specials_and_keeps_only_links_that_stay_inside(
    ws: Workspace, tmp_path: Path
) -> None:
    drafts = ws.root / "data" / "drafts"
    (drafts / "inside").symlink_to("plain.txt")
    (drafts / "climbs").symlink_to("../../semif.toml")
    dest = tmp_path / "copy" / ws.root.name
    finishes(lambda: _copy_workspace(ws, dest))
    copied = dest / "data" / "drafts"
    assert (copied / "plain.txt").read_text() == "a draft\n"
    assert not os.path.lexists(copied / "pipe") and not os.path.lexists(copied / "zero")
    for link in ("secret", "loop", "outside", "climbs"):  # links out of their folder are left out, never read through
        assert not os.path.lexists(copied / link)
    assert os.readlink(copied / "inside") == "plain.txt"
    assert SECRET not in "".join(p.read_text() for p in copied.iterdir() if p.is_file() and not p.is_symlink())


@pytest.mark.parametrize("name", SPECIAL)
def test_the_run_page_shows_no_special_file(ws: Workspace, name: str) -> None:
    if name == "zero" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    view = finishes(lambda: _change(ws.root, "created", f"data/drafts/{name}"))
    assert view.diff is None and view.why.startswith("not shown")
    assert SECRET not in json.dumps(view.__dict__)


def test_the_run_page_still_shows_a_small_text_file(ws: Workspace) -> None:
    view = _change(ws.root, "created", "data/drafts/plain.txt")
    assert view.diff is not None and "+a draft" in view.diff
