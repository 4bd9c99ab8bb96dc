"""Taking a run back: the before-images a run keeps of what it changes, and ``semif undo`` putting them back.

Before a run acts (under the act lock, :mod:`.act_lock`), every file of the
write dirs up to :data:`~.observe.IMAGE_KEPT` (1 MiB) has a copy in the
workspace's :class:`~.before_images.ImageStore` (read again only when its stat
changed). Afterwards, for each file the run changed, the host (never the
skill) writes into the workspace's records, ``data/undo/<run id>/``:

- ``undo.json``: each changed file, what happened to it (created, modified,
  deleted), the sha256 of what the run left (to see later whether it changed
  since) and where its before-image is;
- ``<n>.before``: the bytes of each file it modified or deleted, as they were
  (taken from the store, checked against their sha256).

A run keeps at most :data:`RUN_KEPT` (8 MiB) of before-images; a file larger
than 1 MiB, or past that cap, is listed with why it was not kept, and such
a run cannot be undone. Only the newest :data:`RUNS_KEPT` runs' images are
kept.

:func:`undo_run` checks every file first: one that is no longer as the run
left it (changed or gone since, or there again for one it deleted), was not
kept, or whose kept bytes no longer hash to what the run recorded blocks
the undo: all of them are named and nothing is touched. With ``force`` the
blocked files are left as they are now (never overwritten nor removed: a
person's later edit or deletion stands) and the rest is undone. Then it
removes what the run created and writes back what it modified or deleted,
byte for byte, with their permission bits (never set-user-ID).

:func:`undo_logged_run` logs the undo with its reason: ``route`` (the
request should not have gone to the run's skill, a routing failure) or
``result`` (the skill was right, only its change was unwanted, which teaches
nothing about the route; the reason when none is given).

A skill could have planted links anywhere in its write dirs, so every file is
reached from its write dir's descriptor and never through a link
(:mod:`semif_agent._beneath`); a file is written back as a new file of a
random name made with ``O_EXCL`` beside it, its mode set on its descriptor,
then renamed over it: a link at its name is replaced, never written through.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from .._beneath import lexists_beneath, open_folder_beneath, open_root, replace_at
from .._files import open_regular_beneath
from ..errors import UserError
from .act_lock import ActLock
from .before_images import STORE_DIR, UNDO_DIR, BeforeImages
from .observe import Changes, Observation, open_observed, sha256_of_handle

if TYPE_CHECKING:
    from .._json import JsonObject, JsonValue
    from ..records import DecisionLog, RunRecord, UndoRow
    from ..workspace import Workspace

MANIFEST = "undo.json"
DONE = "undone.json"
RUN_KEPT = 8 * 1024 * 1024
RUNS_KEPT = 200
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")


class UndoEntry(TypedDict, total=False):
    """One file of an undo record as a run writes it: its path and change; the file's real path when a write dir
    outside the workspace holds it; the sha256 the run left it with; and either where its before-image is kept (with
    the image's sha256 and the file's mode) or why none was (``not_kept``). Read back, an entry is a
    :data:`~semif_agent._json.JsonObject`: a record on disk may be damaged, so each key is read with a check."""

    path: str
    change: str
    file: str
    after_sha256: str | None
    not_kept: str
    before: str
    before_sha256: str
    mode: int


def undo_dir(workspace: Workspace, run_id: str) -> Path:
    """Where ``run_id``'s before-images are kept (its id, or a hash of an id that is no safe folder name)."""
    name = run_id if _SAFE_NAME.fullmatch(run_id) else hashlib.sha256(run_id.encode()).hexdigest()[:32]
    return Path(workspace.data_dir) / UNDO_DIR / name


def keep_before_images(
    workspace: Workspace, run_id: str, before: Observation, after: Observation, changes: Changes, images: BeforeImages
) -> Path | None:
    """Write ``run_id``'s undo record for ``changes`` (``images``: the before-images of ``before``, from the
    workspace's :class:`~.before_images.ImageStore`); None when nothing changed.

    A record that cannot be written (a full disk) leaves the run without one: it cannot be undone, and it stands.
    """
    if changes.empty:
        return None
    try:
        return _write_record(workspace, run_id, before, after, changes, images)
    except OSError:
        return None


def _write_record(
    workspace: Workspace, run_id: str, before: Observation, after: Observation, changes: Changes, images: BeforeImages
) -> Path:
    folder = undo_dir(workspace, run_id)
    shutil.rmtree(folder, ignore_errors=True)  # a run id used again: the latest run is the one to undo
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[UndoEntry] = []
    kept = 0
    for change, names in (("created", changes.created), ("modified", changes.modified), ("deleted", changes.deleted)):
        for name in names:
            full = after.paths.get(name) or before.paths.get(name, "")
            entry: UndoEntry = {"path": name, "change": change}
            if Path(workspace.root, name) != Path(full):  # a write dir outside the workspace
                entry["file"] = full
            if change != "deleted":
                entry["after_sha256"] = after.hashes.get(name) or sha256_of_handle(open_observed(after, name))
            if change != "created":
                status = before.files[name]
                sha = images.shas.get(name)
                if sha is None:
                    entry["not_kept"] = images.not_kept.get(name, "it could not be read before the run")
                elif kept + status.size > RUN_KEPT:
                    entry["not_kept"] = f"the run's before-images passed {RUN_KEPT // (1024 * 1024)} MiB"
                elif not _keep_image(images, sha, folder / f"{len(entries)}.before"):
                    entry["not_kept"] = "its kept copy was damaged"
                else:
                    kept += status.size
                    entry.update({"before": f"{len(entries)}.before", "before_sha256": sha, "mode": status.mode})
            entries.append(entry)
    (folder / MANIFEST).write_text(
        json.dumps({"run_id": run_id, "files": entries}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    _prune(folder.parent)
    return folder


def _keep_image(images: BeforeImages, sha: str, dest: Path) -> bool:
    """Write the bytes that hash to ``sha`` to ``dest`` once checked; False when the store's copy is damaged."""
    data = images.blob(sha)
    if data is None:
        return False
    dest.write_bytes(data)
    return True


def _prune(root: Path) -> None:
    """Keep only the newest :data:`RUNS_KEPT` runs' records."""
    try:
        with os.scandir(root) as entries:  # the folders' types come with the listing: no stat unless some must go
            folders = [entry for entry in entries if entry.is_dir() and entry.name != STORE_DIR]
        if len(folders) <= RUNS_KEPT:
            return
        folders.sort(key=lambda entry: entry.stat().st_mtime_ns)
    except OSError:
        return
    for stale in folders[: len(folders) - RUNS_KEPT]:
        shutil.rmtree(stale.path, ignore_errors=True)


@dataclass
class Undone:
    """What :func:`undo_run` did: the files removed (the run created them) and put back (it modified or deleted them),
    and those ``force`` left as they are now, with why (path -> why, a phrase that follows the path)."""

    run_id: str
    removed: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        return {"run_id": self.run_id, "removed": self.removed, "restored": self.restored, "skipped": self.skipped}


def undo_record(workspace: Workspace, run_id: str) -> JsonObject | None:
    """``run_id``'s undo record (``undo.json``), or None when it kept none."""
    try:
        record = json.loads((undo_dir(workspace, run_id) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("files"), list) else None


def was_undone(workspace: Workspace, run_id: str) -> bool:
    return (undo_dir(workspace, run_id) / DONE).exists()


@dataclass
class _Step:
    """One file of an undo record: the entry, its target, its kept bytes (for a file to write back), and why it
    cannot be put back as it was (None when it can)."""

    entry: JsonObject
    target: _Target
    image: bytes | None = None
    blocked: str | None = None

    @property
    def path(self) -> str:
        return str(self.entry.get("path"))


def _steps(workspace: Workspace, run_id: str, record: JsonObject) -> list[_Step]:
    """Each file of ``record``, checked (nothing is touched): what blocks it, else what to write back."""
    folder = undo_dir(workspace, run_id)
    files = record["files"]
    entries = [e for e in files if isinstance(e, dict)] if isinstance(files, list) else []
    steps = [_Step(e, _target(workspace, run_id, e)) for e in entries]
    for step in steps:
        step.blocked = _blocked(step.entry, step.target)
        if step.blocked is None and step.entry["change"] != "created":
            step.image = _image(folder, step.entry)
            if step.image is None:
                step.blocked = "has a kept copy that is missing or damaged"
    return steps


def blocked_files(workspace: Workspace, run_id: str) -> dict[str, str]:
    """The files of ``run_id``'s undo record that cannot be put back as they were, and why (nothing is touched)."""
    record = undo_record(workspace, run_id)
    if record is None:
        return {}
    try:
        return {step.path: step.blocked for step in _steps(workspace, run_id, record) if step.blocked}
    except UserError:  # a record naming a file outside the write dirs: the undo itself says so
        return {}


def _nothing_kept(run_id: str, changed_files: bool) -> UserError:
    """Why a run without an undo record cannot be undone."""
    if not changed_files:
        return UserError(f"run {run_id} changed no files: there is nothing to undo")
    return UserError(
        f"run {run_id} kept no before-images of what it changed (it ran before runs kept them, "
        f"or is older than the last {RUNS_KEPT} runs that changed files): it cannot be undone"
    )


def blocked_message(run_id: str, blocked: dict[str, str]) -> str:
    """One line naming every file that blocks ``run_id``'s undo and why, and what ``--force`` would do instead."""
    named = "; ".join(f"{path} {why}" for path, why in blocked.items())
    them = "it as it is" if len(blocked) == 1 else "them as they are"
    return f"cannot undo run {run_id}: {named}; nothing was changed (--force undoes the rest and leaves {them} now)"


def undo_run(workspace: Workspace, run_id: str, *, changed_files: bool = True, force: bool = False) -> Undone:
    """Put back what ``run_id`` changed; a :class:`UserError` naming the files when it cannot, with nothing touched.

    ``changed_files`` says whether the run's outcome lists changed files (to
    tell "changed nothing" from "kept no before-images"). A file is blocked
    when it is no longer as the run left it (changed or gone since, or, for
    one it deleted, there again) or its before-image was not kept: then,
    unless ``force``, nothing is touched. With ``force`` the other files are
    undone and the blocked ones are left as they are now (:attr:`Undone.skipped`):
    ``force`` never overwrites nor removes a file the run did not leave as it is.
    """
    with ActLock.of(workspace):  # no run acts while its files are put back
        if was_undone(workspace, run_id):
            raise UserError(f"run {run_id} was undone already")
        record = undo_record(workspace, run_id)
        if record is None:
            raise _nothing_kept(run_id, changed_files)
        steps = _steps(workspace, run_id, record)
        blocked = {step.path: step.blocked for step in steps if step.blocked}
        if blocked and not force:
            raise UserError(blocked_message(run_id, blocked))
        done = Undone(run_id, skipped=blocked)
        for step in steps:
            if step.blocked:
                continue
            if step.entry["change"] == "created":
                step.target.remove()
                done.removed.append(step.path)
            else:
                assert step.image is not None
                step.target.write(step.image, step.entry.get("mode"))
                done.restored.append(step.path)
        (undo_dir(workspace, run_id) / DONE).write_text(json.dumps(done.to_dict()) + "\n", encoding="utf-8")
        return done


@dataclass(frozen=True)
class _Target:
    """A file an undo record names, as its write dir (``root``, resolved by the host) and its path below it: every
    operation on it starts from the write dir's descriptor and never follows a link (:mod:`semif_agent._beneath`),
    so a link a skill planted on the way, or a name it squats, leads nowhere outside."""

    root: str
    relative: str

    def _folder(self, *, make: bool = False) -> int:
        root_fd = open_root(self.root)
        try:
            return open_folder_beneath(root_fd, os.path.dirname(self.relative), make=make)
        finally:
            os.close(root_fd)

    @property
    def name(self) -> str:
        return os.path.basename(self.relative)

    def sha256(self) -> str | None:
        """The sha256 of the file when it is a regular one (reached without a link), else None."""
        return sha256_of_handle(open_regular_beneath(self.root, self.relative))

    def exists(self) -> bool:
        return lexists_beneath(self.root, self.relative)

    def remove(self) -> None:
        folder = self._folder()
        try:
            os.unlink(self.name, dir_fd=folder)
        finally:
            os.close(folder)

    def write(self, data: bytes, mode: JsonValue) -> None:
        """Write ``data`` as the file, whole (:func:`~semif_agent._beneath.replace_at`), with the permission bits of
        ``mode`` when known; the folders missing on the way are made again."""
        folder = self._folder(make=True)
        try:
            replace_at(folder, self.name, data, mode if isinstance(mode, int) else None)
        finally:
            os.close(folder)


def _target(workspace: Workspace, run_id: str, entry: JsonObject) -> _Target:
    """The file an entry names (in the workspace unless it says where), refused unless it lies in a write dir (by its
    path as written: nothing on the way is resolved, so a link cannot move it into one)."""
    name = str(entry.get("path", ""))
    target = os.path.normpath(str(entry["file"]) if entry.get("file") else os.path.join(workspace.root, name))
    if entry.get("change") in ("created", "modified", "deleted"):
        for root in sorted((os.fspath(r) for r in workspace.write_roots), key=len, reverse=True):
            if target.startswith(root.rstrip(os.sep) + os.sep):
                return _Target(root, target[len(root.rstrip(os.sep)) + 1 :])
    raise UserError(f"cannot undo run {run_id}: its record names {name}, outside the write dirs; nothing was changed")


def _blocked(entry: JsonObject, target: _Target) -> str | None:
    """Why the file cannot be put back as it was (a phrase following its path), or None when it can: its copy was
    not kept, or it is no longer as the run left it."""
    if entry.get("not_kept"):
        return f"was not kept ({entry['not_kept']})"
    if entry.get("change") == "deleted":
        return "was deleted by the run and exists again" if target.exists() else None
    now = target.sha256()
    if now is not None and now == entry.get("after_sha256"):
        return None
    return "is gone since the run" if not target.exists() else "changed since the run"


def _image(folder: Path, entry: JsonObject) -> bytes | None:
    """The bytes an entry kept of its file before the run, checked against the sha256 the run recorded; None when
    they are missing or damaged."""
    try:
        data = (folder / str(entry.get("before"))).read_bytes()
    except OSError:
        return None
    wanted = entry.get("before_sha256")
    return None if wanted is not None and hashlib.sha256(data).hexdigest() != wanted else data


DEFAULT_REASON = "result"
"""The reason of an undo that gives none (a script's, a form's): only the result was unwanted, which teaches nothing
about the route, where a wrong ``route`` would teach the router a failure nobody said."""


def reason_said(reason: str | None, skill: str | None) -> str:
    """What an undo's reason means, in a sentence (``None``: an undo written before undos asked why)."""
    went = skill or "no skill"
    if reason == "result":
        return f"only the result was unwanted: the route to {went} was right (not a routing failure)"
    if reason is None:
        return f"counted as a failure of the route to {went} (an undo from before undos asked why)"
    return f"the route was wrong: the request should not have gone to {went} (a routing failure `semif train` learns)"


def files_said(removed: list[str], restored: list[str], skipped: dict[str, str]) -> str:
    """What an undo did to the files, in words: "removed a; put back b, c; left d as it is (it changed since the run)"."""
    said = [
        f"removed {', '.join(removed)}" if removed else "",
        f"put back {', '.join(restored)}" if restored else "",
        *(f"left {path} as it is (it {why})" for path, why in skipped.items()),
    ]
    return "; ".join(part for part in said if part) or "nothing left to undo"


def undo_said(undo: UndoRow) -> str:
    """A logged undo row in words: who, why, and what it did to the files (for ``semif log show``)."""
    return (
        f"by {undo.by}: {reason_said(undo.reason, undo.skill)}; {files_said(undo.removed, undo.restored, undo.skipped)}"
    )


def _logged_run(workspace: Workspace, log: DecisionLog, run_id: str) -> tuple[RunRecord, bool]:
    """The logged run ``run_id`` names and whether its outcome lists changed files; refused when undone already."""
    from ..records import OutcomeRow, UndoRow

    record = log.run(run_id)
    rows = [row for row in log.read() if row.run_id == record.run_id]
    if record.undone or any(isinstance(row, UndoRow) for row in rows) or was_undone(workspace, record.run_id):
        raise UserError(f"run {record.run_id} was undone already")
    outcome = next((row for row in reversed(rows) if isinstance(row, OutcomeRow)), None)
    changes = outcome.changes if outcome is not None else None
    return record, changes is not None and any(changes.values())


def check_undo(workspace: Workspace, log: DecisionLog, run_id: str, *, force: bool = False) -> RunRecord:
    """The logged run ``run_id`` names (its :class:`~semif_agent.records.RunRecord`), once checked that it can be
    undone (in part, with ``force``), touching nothing: the :class:`UserError` :func:`undo_logged_run` would give
    otherwise, before anyone is asked why."""
    record, changed_files = _logged_run(workspace, log, run_id)
    if undo_record(workspace, record.run_id) is None:
        raise _nothing_kept(record.run_id, changed_files)
    blocked = blocked_files(workspace, record.run_id)
    if blocked and not force:
        raise UserError(blocked_message(record.run_id, blocked))
    return record


def undo_logged_run(
    workspace: Workspace, log: DecisionLog, run_id: str, *, by: str, reason: str = DEFAULT_REASON, force: bool = False
) -> tuple[Undone, UndoRow]:
    """Undo the logged run ``run_id`` (its id or a unique prefix) and append its undo row to ``log``, saying why
    (``reason``, one of :data:`~semif_agent.records.rows.UNDO_REASONS`: only ``route`` is a routing failure).

    Refused (a :class:`UserError`) for an unknown run, a run undone already, or one that cannot be put back (with
    ``force``, only when nothing of the record can be read: see :func:`undo_run`).
    Returns what was done and the row written.
    """
    from ..records.rows import UNDO_REASONS, UndoRow

    if reason not in UNDO_REASONS:
        raise UserError(f"an undo's reason is {' or '.join(UNDO_REASONS)}, not {reason!r}")
    record, changed_files = _logged_run(workspace, log, run_id)
    done = undo_run(workspace, record.run_id, changed_files=changed_files, force=force)
    row = UndoRow(
        run_id=record.run_id,
        by=by,
        skill=record.skill,
        reason=reason,
        removed=done.removed,
        restored=done.restored,
        skipped=done.skipped,
    )
    log.append(row)
    return done, row


@dataclass(frozen=True)
class UndoState:
    """What the run page says of undoing a run: ``status`` is "" (it kept nothing to undo), "ready", "blocked"
    (``blocked``: the files that are no longer as the run left it, which ``--force`` leaves) or "undone"."""

    status: str
    blocked: dict[str, str] = field(default_factory=dict)


def undo_state(workspace: Workspace, run_id: str, *, undone: bool) -> UndoState:
    """Whether ``run_id`` can be undone now, as the run page shows it (its files are checked, nothing is touched)."""
    if undone or was_undone(workspace, run_id):
        return UndoState("undone")
    if undo_record(workspace, run_id) is None:
        return UndoState("")
    blocked = blocked_files(workspace, run_id)
    return UndoState("blocked", blocked) if blocked else UndoState("ready")
