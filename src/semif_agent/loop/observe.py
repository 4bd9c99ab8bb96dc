"""Observations: what the data dirs hold before and after a skill acts, and the diffs of the text files it changed."""

from __future__ import annotations

import difflib
import itertools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .._files import open_regular

MAX_FILES = 20_000
TEXT_KEPT = 64 * 1024  # a file larger than this is not read for its diff
TEXTS_KEPT = 1024 * 1024  # nor any more once one snapshot has read this much
IMAGE_KEPT = 1024 * 1024  # a file larger than this keeps no before-image (its change cannot be undone)
IMAGES_KEPT = 32 * 1024 * 1024  # nor any file once one snapshot has read this much
DIFF_LINES = 200  # a file's diff is cut after this many lines


@dataclass(frozen=True)
class Observation:
    """A snapshot of the write roots: relative path -> (size, mtime_ns), and the small text files' contents.

    ``paths`` gives each file's absolute path; ``images`` the bytes of the
    files small enough to keep (taken with ``images=True``, before a run acts,
    so that what it changes can be put back).
    """

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    truncated: bool = False
    texts: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    images: dict[str, bytes] = field(default_factory=dict)


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
    images: bool = False,
) -> Observation:
    """Snapshot every file under ``roots`` (bounded), except the paths in ``ignore``.

    Files are named relative to ``base`` (the workspace) when they lie in it,
    else relative to their root's parent folder. With ``texts``, the contents
    of small UTF-8 files are kept too (bounded), for :func:`diff`; with
    ``since`` (an earlier snapshot), only those of files new or changed since.
    With ``images``, the bytes of every regular file up to :data:`IMAGE_KEPT`
    are kept too, until :data:`IMAGES_KEPT` have been read.
    """
    files: dict[str, tuple[int, int]] = {}
    contents: dict[str, str] = {}
    paths: dict[str, str] = {}
    kept: dict[str, bytes] = {}
    budget = TEXTS_KEPT if texts else 0
    image_budget = IMAGES_KEPT if images else 0
    skip = {os.path.realpath(p) for p in ignore}
    top = os.path.realpath(base) if base is not None else None
    for root in roots:
        base_dir = os.path.realpath(root)
        inside = top is not None and (base_dir + os.sep).startswith(top + os.sep)
        names_from = top if inside else os.path.dirname(base_dir)
        for folder, dirs, names in os.walk(base_dir):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                full = os.path.join(folder, name)
                if full in skip:
                    continue
                try:
                    status = os.lstat(full)
                except OSError:
                    continue
                if not stat.S_ISREG(status.st_mode):  # a link, FIFO, socket or device node: never read, not listed
                    continue
                name = os.path.relpath(full, names_from)
                files[name], paths[name] = (status.st_size, status.st_mtime_ns), full
                unchanged = since is not None and since.files.get(name) == files[name]
                image = _bytes_of(full, IMAGE_KEPT) if status.st_size <= min(IMAGE_KEPT, image_budget) else None
                if image is not None:
                    kept[name] = image
                    image_budget -= len(image)
                if 0 < status.st_size <= min(TEXT_KEPT, budget) and not unchanged:
                    text = _text_of(image if image is not None else _bytes_of(full, TEXT_KEPT))
                    if text is not None:
                        contents[name] = text
                        budget -= status.st_size
                if len(files) >= MAX_FILES:
                    return Observation(files, truncated=True, texts=contents, paths=paths, images=kept)
    return Observation(files, texts=contents, paths=paths, images=kept)


def _bytes_of(path: str, limit: int) -> bytes | None:
    """``path``'s bytes when it is a regular file of at most ``limit`` bytes (never through a link), else None."""
    handle = open_regular(path)
    if handle is None:
        return None
    try:
        with handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def _text_of(data: bytes | None) -> str | None:
    """``data`` decoded when it is UTF-8, else None."""
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def diff(before: Observation, after: Observation) -> Changes:
    """What changed between two snapshots; text files both snapshots could read (or a new one) get a diff."""
    created = sorted(set(after.files) - set(before.files))
    modified = sorted(p for p in set(before.files) & set(after.files) if before.files[p] != after.files[p])
    diffs = {}
    for path in [*created, *modified]:
        new = after.texts.get(path)
        old = "" if path in created else before.texts.get(path)
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
    return Changes(created, modified, sorted(set(before.files) - set(after.files)), diffs)
