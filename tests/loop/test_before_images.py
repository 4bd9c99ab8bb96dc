"""The before-image store: a file is read again only when its stat key changed (an mtime set back still changes
its ctime, a rename its inode), a torn or damaged store never gives a wrong before-image, and it stays within its
budget."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from semif_agent.errors import UserError
from semif_agent.loop.before_images import BeforeImages, ImageStore
from semif_agent.loop.observe import Observation, diff, observe
from semif_agent.loop.undo import keep_before_images, undo_record, undo_run
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.load(create_workspace(tmp_path / "ws"))
    workspace.make_write_dirs()
    drafts = workspace.root / "data" / "drafts"
    for index in range(20):
        (drafts / f"d{index:02d}.txt").write_bytes(f"draft {index:02d}\n".encode() * 10)
    settle()
    return workspace


def settle() -> None:
    """Let the files' last change age past the store's settling window, so their keys are trusted."""
    time.sleep(0.1)


def snapshot(ws: Workspace, since: Observation | None = None) -> Observation:
    return observe(ws.write_roots, base=ws.root, texts=since is not None, since=since)


def kept(ws: Workspace, **limits: int) -> tuple[Observation, BeforeImages]:
    before = snapshot(ws)
    images = ImageStore.of(ws).keep(before, **limits)
    images.release()
    return before, images


def act_and_undo(ws: Workspace, before: Observation, images: BeforeImages, act) -> None:
    """``act()`` as a run would, its undo record kept from ``images``, then the run undone."""
    act()
    after = snapshot(ws, since=before)
    changes = diff(before, after, before_shas=images.shas, before_text=images.text_of)
    assert not changes.empty
    assert keep_before_images(ws, "run-1", before, after, changes, images) is not None
    undo_run(ws, "run-1")


def test_a_file_is_read_once_then_taken_from_the_store_until_it_changes(ws: Workspace) -> None:
    drafts = ws.root / "data" / "drafts"
    _, first = kept(ws)
    assert first.read == len(first.shas) >= 20
    before, again = kept(ws)
    assert again.read == 0 and again.shas == first.shas
    assert again.bytes_of("data/drafts/d03.txt") == (drafts / "d03.txt").read_bytes()
    (drafts / "d03.txt").write_bytes(b"longer than it was before\n" * 10)
    _, third = kept(ws)
    assert third.read == 1 and third.bytes_of("data/drafts/d03.txt") == (drafts / "d03.txt").read_bytes()


@pytest.mark.parametrize("how", ["written in place", "renamed over"])
def test_same_size_and_mtime_set_back_is_read_again_and_undone_byte_for_byte(ws: Workspace, how: str) -> None:
    """Changed between runs with the same size and its mtime set back: the ctime (and, renamed over, the inode)
    differ, so the store reads it again and the run's undo puts back the new bytes, not the stale copy."""
    draft = ws.root / "data" / "drafts" / "d05.txt"
    kept(ws)
    old = os.stat(draft)
    edited = draft.read_bytes().replace(b"draft", b"DRAFT")
    if how == "written in place":
        draft.write_bytes(edited)
    else:
        (draft.parent / "d05.new").write_bytes(edited)
        os.replace(draft.parent / "d05.new", draft)
    os.utime(draft, ns=(old.st_atime_ns, old.st_mtime_ns))
    now = os.stat(draft)
    assert (now.st_size, now.st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    settle()
    before, images = kept(ws)
    assert images.read == 1 and images.bytes_of("data/drafts/d05.txt") == edited
    act_and_undo(ws, before, images, draft.unlink)
    assert draft.read_bytes() == edited


def test_a_run_that_rewrites_a_file_and_sets_its_mtime_back_is_seen_and_undone(ws: Workspace) -> None:
    draft = ws.root / "data" / "drafts" / "d06.txt"
    original = draft.read_bytes()
    before, images = kept(ws)

    def sneaky() -> None:
        draft.write_bytes(original.upper())
        os.utime(draft, ns=(before.files["data/drafts/d06.txt"].mtime_ns,) * 2)

    act_and_undo(ws, before, images, sneaky)
    assert draft.read_bytes() == original


def test_a_permission_change_alone_is_no_modification(ws: Workspace) -> None:
    draft = ws.root / "data" / "drafts" / "d07.txt"
    before, images = kept(ws)
    draft.chmod(0o600)
    after = snapshot(ws, since=before)
    assert diff(before, after, before_shas=images.shas).empty
    assert diff(before, after).modified == ["data/drafts/d07.txt"]  # its bytes unknown: counted as changed


@pytest.mark.parametrize("tear", ["cut in half", "not json", "another version"])
def test_a_torn_index_falls_back_on_reading_every_file(ws: Workspace, tear: str) -> None:
    store = ImageStore.of(ws)
    _, first = kept(ws)
    text = store.index_path.read_text(encoding="utf-8")
    torn = {
        "cut in half": text[: len(text) // 2],
        "not json": "\x00" * 40,
        "another version": json.dumps({**json.loads(text), "version": 99}),
    }[tear]
    store.index_path.write_text(torn, encoding="utf-8")
    before, images = kept(ws)
    assert images.read == len(first.shas) and images.shas == first.shas
    draft = ws.root / "data" / "drafts" / "d01.txt"
    original = draft.read_bytes()
    act_and_undo(ws, before, images, lambda: draft.write_bytes(b"overwritten"))
    assert draft.read_bytes() == original
    assert [p.name for p in store.folder.iterdir() if p.name.startswith("pack-")] == [images.pack.name]


def test_a_pack_cut_short_reads_again_what_lay_past_its_end(ws: Workspace) -> None:
    _, first = kept(ws)
    with open(first.pack, "r+b") as handle:
        handle.truncate(os.path.getsize(first.pack) // 2)
    _, images = kept(ws)
    assert 0 < images.read < len(first.shas)
    for name in images.shas:
        assert images.bytes_of(name) == (ws.root / name).read_bytes()


def test_damaged_bytes_are_never_a_before_image(ws: Workspace) -> None:
    """Bytes changed in the pack itself: the run cannot be undone for that file (named), nothing is touched, and
    the next run reads the file again."""
    draft = ws.root / "data" / "drafts" / "d02.txt"
    before, images = kept(ws)
    offset, size = images.offsets[images.shas["data/drafts/d02.txt"]]
    with open(images.pack, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"X" * size)
    draft.write_bytes(b"changed by the run")
    after = snapshot(ws, since=before)
    changes = diff(before, after, before_shas=images.shas, before_text=images.text_of)
    assert changes.modified == ["data/drafts/d02.txt"] and "data/drafts/d02.txt" not in changes.diffs
    keep_before_images(ws, "run-1", before, after, changes, images)
    record = undo_record(ws, "run-1")
    assert record is not None and record["files"][0]["not_kept"] == "its kept copy was damaged"
    with pytest.raises(UserError, match="data/drafts/d02.txt was not kept"):
        undo_run(ws, "run-1")
    assert draft.read_bytes() == b"changed by the run"
    _, later = kept(ws)
    assert later.read == 1 and later.bytes_of("data/drafts/d02.txt") == b"changed by the run"


def test_undo_refuses_a_kept_copy_changed_since_and_touches_nothing(ws: Workspace) -> None:
    drafts = ws.root / "data" / "drafts"
    before, images = kept(ws)
    (drafts / "d04.txt").write_bytes(b"the run's")
    (drafts / "d08.txt").unlink()
    after = snapshot(ws, since=before)
    changes = diff(before, after, before_shas=images.shas)
    folder = keep_before_images(ws, "run-1", before, after, changes, images)
    assert folder is not None
    (folder / "1.before").write_bytes(b"tampered")  # d08.txt's copy
    with pytest.raises(UserError, match="data/drafts/d08.txt has a kept copy that is missing or damaged"):
        undo_run(ws, "run-1")
    assert (drafts / "d04.txt").read_bytes() == b"the run's" and not (drafts / "d08.txt").exists()
    done = undo_run(ws, "run-1", force=True)  # puts back what it can, never the damaged copy
    assert done.skipped == {"data/drafts/d08.txt": "has a kept copy that is missing or damaged"}
    assert done.restored == ["data/drafts/d04.txt"] and not (drafts / "d08.txt").exists()


def test_the_store_stays_within_its_budget_and_forgets_files_that_are_gone(ws: Workspace) -> None:
    drafts = ws.root / "data" / "drafts"
    budget = 1_000
    store = ImageStore.of(ws)
    _, images = kept(ws, budget=budget)
    assert sum(images.offsets[sha][1] for sha in images.shas.values()) <= budget
    assert "the write dirs' files up to it passed 1000 bytes" in images.not_kept.values()
    assert "data/drafts/d00.txt" in images.shas
    for round_ in range(12):
        for index in range(4):
            (drafts / f"d{index:02d}.txt").write_bytes(f"round {round_:02d} draft {index}\n".encode() * 6)
        _, images = kept(ws, budget=budget)
        assert os.path.getsize(images.pack) <= budget
        assert images.bytes_of("data/drafts/d00.txt") == (drafts / "d00.txt").read_bytes()
        assert len([p for p in store.folder.iterdir() if p.name.startswith("pack-")]) == 1
    for path in drafts.iterdir():
        path.unlink()
    _, images = kept(ws, budget=budget)
    index = json.loads(store.index_path.read_text(encoding="utf-8"))
    assert not any("/data/drafts/" in path for path in index["files"])
    assert os.path.getsize(images.pack) <= budget


def test_a_run_inside_another_keeps_the_outer_runs_images(ws: Workspace) -> None:
    """A run started while another acts (same act lock) may compact the store: the outer run's images stay."""
    draft = ws.root / "data" / "drafts" / "d09.txt"
    original = draft.read_bytes()
    store = ImageStore.of(ws)
    before = snapshot(ws)
    outer = store.keep(before)
    draft.write_bytes(b"the inner run's file" * 40)
    inner = store.keep(snapshot(ws), budget=1_000)  # a small budget: the pack is copied anew
    assert inner.pack != outer.pack
    assert outer.bytes_of("data/drafts/d09.txt") == original
    inner.release()
    outer.release()
    _, last = kept(ws)
    assert [p.name for p in store.folder.iterdir() if p.name.startswith("pack-")] == [last.pack.name]
