"""Observations: what the data dirs hold before and after a skill acts, and the diffs of the text files it changed."""

from __future__ import annotations

import difflib
import hashlib
import itertools
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

from .._beneath import TreeTooLarge, open_regular_at, open_root, walk

MAX_FILES = 20_000
MAX_ENTRIES = 200_000  # names a snapshot lists in one write dir, at most (folders, links and special files too)
TEXT_KEPT = 64 * 1024  # a file larger than this is not read for its diff
TEXTS_KEPT = 1024 * 1024  # nor any more once one snapshot has read this much
IMAGE_KEPT = 1024 * 1024  # a file larger than this keeps no before-image (its change cannot be undone)
IMAGES_KEPT = 32 * 1024 * 1024  # nor any file once one snapshot has read this much
DIFF_LINES = 200  # a file's diff is cut after this many lines
_SET_ID = stat.S_ISUID | stat.S_ISGID


class StatKey(NamedTuple):
    """What says a file may have changed without reading it (as git's index does): a write changes the size or the
    ctime (which no one can set back), a file put in its place by a rename has another inode."""

    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int


class FileStat(NamedTuple):
    """A file's :class:`StatKey` and its permissions."""

    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int
    mode: int


def stat_key(status: os.stat_result | FileStat) -> StatKey:
    if isinstance(status, FileStat):
        return StatKey(*status[:4])
    return StatKey(status.st_size, status.st_mtime_ns, status.st_ino, status.st_ctime_ns)


@dataclass(frozen=True)
class Observation:
    """A snapshot of the write roots: relative path -> its :class:`FileStat`, and the small text files' contents.

    ``paths`` gives each file's absolute path (``roots`` its write dir: read
    it with :func:`open_observed`); ``hashes`` the sha256 of the files new or
    changed since the snapshot given as ``since`` (only those are read).
    """

    files: dict[str, FileStat] = field(default_factory=dict)
    truncated: bool = False
    texts: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    roots: dict[str, str] = field(default_factory=dict)  # file name -> the write dir it lies in
    refused: tuple[str, ...] = ()  # the write dirs whose walk stopped short (a tree past its caps), a line each


@dataclass(frozen=True)
class Changes:
    """The files a run created, modified and deleted; ``diffs``: unified diffs of the text files among them."""

    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    diffs: dict[str, list[str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.created or self.modified or self.deleted)

    def summary(self) -> str:
        if self.empty:
            return "no files changed"
        parts = []
        for verb, paths in (("created", self.created), ("modified", self.modified), ("deleted", self.deleted)):
            if paths:
                shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
                parts.append(f"{verb} {shown}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, list[str]]:
        return {"created": self.created, "modified": self.modified, "deleted": self.deleted}


def observe(
    roots: tuple[Path, ...],
    *,
    ignore: tuple[Path, ...] = (),
    base: Path | None = None,
    texts: bool = False,
    since: Observation | None = None,
) -> Observation:
    """Snapshot every file under ``roots`` (bounded), except the paths in ``ignore``; all of them, and ``base``,
    are taken as given, resolved already (a run resolves its paths once, :class:`~semif_agent.workspace.RunPaths`).

    Files are named relative to ``base`` (the workspace) when they lie in it,
    else relative to their root's parent folder. With ``texts``, the contents
    of small UTF-8 files are kept too (bounded), for :func:`diff`. With
    ``since`` (an earlier snapshot), only files new or changed since are read:
    each is hashed once (``hashes``), and its text kept when ``texts``.

    A file new or changed since ``since`` that has the set-uid or set-gid bit loses it (:func:`_take_set_id_off`).

    Each root is walked from its descriptor (:func:`~semif_agent._beneath.walk`:
    never through a link, without recursion); a tree past the walk's caps ends
    that write dir's walk there (``refused`` says why); the others are walked.
    """
    files: dict[str, FileStat] = {}
    contents: dict[str, str] = {}
    paths: dict[str, str] = {}
    hashes: dict[str, str] = {}
    roots_of: dict[str, str] = {}
    refused: list[str] = []
    budget = TEXTS_KEPT if texts else 0
    skip = {os.fspath(p) for p in ignore}
    top = os.fspath(base) if base is not None else None
    for root in roots:
        base_dir = os.fspath(root)
        names_from = os.path.dirname(base_dir)
        if top is not None and (base_dir + os.sep).startswith(top + os.sep):
            names_from = top
        cut = len(names_from.rstrip(os.sep)) + 1  # a file's name: its path past ``names_from`` and a separator
        try:
            root_fd = open_root(base_dir)
        except OSError:
            continue
        try:
            for folder in walk(root_fd, max_entries=MAX_ENTRIES):
                folder.folders[:] = [d for d in folder.folders if d != "__pycache__"]
                for entry in folder.others:
                    relative = f"{folder.path}/{entry.name}" if folder.path else entry.name
                    full = os.path.join(base_dir, relative)
                    if full in skip:
                        continue
                    try:
                        status = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(status.st_mode):  # a link, FIFO, socket or device node: never read, not listed
                        continue
                    name = full[cut:]
                    now = FileStat(
                        status.st_size,
                        status.st_mtime_ns,
                        status.st_ino,
                        status.st_ctime_ns,
                        stat.S_IMODE(status.st_mode),
                    )
                    files[name], paths[name], roots_of[name] = now, full, base_dir
                    if since is not None and since.files.get(name) == now:
                        continue
                    if since is not None and status.st_mode & _SET_ID:
                        _take_set_id_off(folder.fd, entry.name)
                    small = None
                    if 0 < status.st_size <= min(TEXT_KEPT, budget):
                        small = _bytes_of(folder.fd, entry.name, TEXT_KEPT)
                    if since is not None:
                        digest = (
                            hashlib.sha256(small).hexdigest()
                            if small is not None
                            else _sha256_at(folder.fd, entry.name)
                        )
                        if digest is not None:
                            hashes[name] = digest
                    text = _text_of(small)
                    if text is not None:
                        contents[name] = text
                        budget -= status.st_size
                    if len(files) >= MAX_FILES:
                        return _snapshot(files, contents, paths, hashes, roots_of, refused, truncated=True)
        except TreeTooLarge as exc:
            refused.append(f"{base_dir[cut:] or base_dir} holds {exc}")
        finally:
            os.close(root_fd)
    return _snapshot(files, contents, paths, hashes, roots_of, refused, truncated=bool(refused))


def _snapshot(
    files: dict[str, FileStat],
    texts: dict[str, str],
    paths: dict[str, str],
    hashes: dict[str, str],
    roots: dict[str, str],
    refused: list[str],
    *,
    truncated: bool,
) -> Observation:
    return Observation(files, truncated, texts, paths, hashes, roots, tuple(refused))


def open_observed(observation: Observation, name: str) -> BinaryIO | None:
    """The file ``name`` of ``observation`` opened for reading, from its write dir's descriptor (never through a link
    nor out of the write dir); None when it is no longer a regular file there."""
    with ObservedFiles(observation) as files:
        return files.open(name)


class ObservedFiles:
    """Opens the files of an observation as :func:`open_observed` does, each write dir opened once (for many files)."""

    def __init__(self, observation: Observation) -> None:
        self.observation = observation
        self._roots: dict[str, int | None] = {}  # write dir -> its descriptor (None: it could not be opened)

    def open(self, name: str) -> BinaryIO | None:
        root, full = self.observation.roots.get(name), self.observation.paths.get(name)
        if root is None or full is None or not full.startswith(root + os.sep):
            return None
        if root not in self._roots:
            try:
                self._roots[root] = open_root(root)
            except OSError:
                self._roots[root] = None
        root_fd = self._roots[root]
        fd = open_regular_at(root_fd, full[len(root) + 1 :]) if root_fd is not None else None
        return os.fdopen(fd, "rb") if fd is not None else None

    def __enter__(self) -> ObservedFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._roots.values():
            if fd is not None:
                os.close(fd)
        self._roots.clear()


def _take_set_id_off(dir_fd: int, name: str) -> None:
    """Take the set-uid and set-gid bits off the regular file ``name`` in ``dir_fd`` (never through a link).

    A second layer: a write dir is idmapped for the run, so what it makes there is root's on disk, and the
    sandbox's filter refuses setting either bit; a file a run made or changed with one is still never left
    a root program for the host's users.
    """
    fd = open_regular_at(dir_fd, name)
    if fd is None:
        return
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode) and mode & _SET_ID:
            os.fchmod(fd, stat.S_IMODE(mode) & ~_SET_ID)
    except OSError:
        pass
    finally:
        os.close(fd)


def _bytes_of(dir_fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of ``name`` in ``dir_fd`` when it is a regular file of at most ``limit`` bytes (never through a link)."""
    fd = open_regular_at(dir_fd, name)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def _sha256_at(dir_fd: int, name: str) -> str | None:
    fd = open_regular_at(dir_fd, name)
    return None if fd is None else sha256_of_handle(os.fdopen(fd, "rb"))


def sha256_of_handle(handle: BinaryIO | None) -> str | None:
    """The sha256 of what ``handle`` (closed after) reads to its end; None without a handle or on a read error."""
    if handle is None:
        return None
    digest = hashlib.sha256()
    try:
        with handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _text_of(data: bytes | None) -> str | None:
    """``data`` decoded when it is UTF-8, else None."""
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def diff(
    before: Observation,
    after: Observation,
    *,
    before_shas: Mapping[str, str] | None = None,
    before_text: Callable[[str], str | None] | None = None,
) -> Changes:
    """What changed between two snapshots (``after`` taken ``since=before``); text files both snapshots could read
    (or a new one) get a diff.

    A file whose size and mtime are the same but whose inode or ctime is not
    (rewritten with its mtime set back, or only its permissions or links
    changed) is modified when its bytes differ from ``before_shas`` (or when
    they are not known). ``before_text`` gives a file's text before when
    ``before`` did not keep it.
    """
    created = sorted(set(after.files) - set(before.files))
    modified = sorted(
        p
        for p in set(before.files) & set(after.files)
        if before.files[p] != after.files[p] and _modified(before.files[p], after.files[p], p, after, before_shas)
    )
    diffs = {}
    budget = TEXTS_KEPT
    for path in [*created, *modified]:
        new = after.texts.get(path)
        old = "" if path in created else before.texts.get(path)
        if old is None and new is not None and before_text is not None and budget > 0:
            old = before_text(path)
            budget -= len(old or "")
        if new is None or old is None:
            continue
        lines = difflib.unified_diff(
            old.splitlines(),
            new.splitlines(),
            "/dev/null" if path in created else f"a/{path}",
            f"b/{path}",
            lineterm="",
        )
        diffs[path] = list(itertools.islice(lines, DIFF_LINES))
    # a snapshot that stopped short cannot tell a file deleted from one it did not reach
    deleted = [] if after.truncated and not before.truncated else sorted(set(before.files) - set(after.files))
    return Changes(created, modified, deleted, diffs)


def _modified(
    old: FileStat, new: FileStat, path: str, after: Observation, before_shas: Mapping[str, str] | None
) -> bool:
    if (old.size, old.mtime_ns) != (new.size, new.mtime_ns):
        return True
    known = before_shas.get(path) if before_shas is not None else None
    return known is None or known != after.hashes.get(path)
