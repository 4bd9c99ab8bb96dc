"""Observations: what the data dirs hold before and after a skill acts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 20_000


@dataclass(frozen=True)
class Observation:
    """A snapshot of the write roots: relative path -> (size, mtime_ns)."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    truncated: bool = False


@dataclass(frozen=True)
class Changes:
    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

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


def observe(roots: tuple[Path, ...], *, ignore: tuple[Path, ...] = (), base: Path | None = None) -> Observation:
    """Snapshot every file under ``roots`` (bounded), except the paths in ``ignore``.

    Files are named relative to ``base`` (the workspace) when they lie in it,
    else relative to their root's parent folder.
    """
    files: dict[str, tuple[int, int]] = {}
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
                    stat = os.stat(full)
                except OSError:
                    continue
                files[os.path.relpath(full, names_from)] = (stat.st_size, stat.st_mtime_ns)
                if len(files) >= MAX_FILES:
                    return Observation(files, truncated=True)
    return Observation(files)


def diff(before: Observation, after: Observation) -> Changes:
    return Changes(
        created=sorted(set(after.files) - set(before.files)),
        modified=sorted(p for p in set(before.files) & set(after.files) if before.files[p] != after.files[p]),
        deleted=sorted(set(before.files) - set(after.files)),
    )
