"""What the catalog knows about one SKILL.md skill: :class:`SkillDescriptor`."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

MAX_RESOURCE_FILES = 500
"""``resource_files()`` lists at most this many files."""
MAX_RESOURCE_FOLDERS = 1000
"""``resource_files()`` opens at most this many folders."""
MAX_RESOURCE_DEPTH = 16
"""``resource_files()`` looks at most this many levels below the skill folder."""
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass(frozen=True)
class SkillDescriptor:
    """One registered skill. Immutable: a registry shares descriptors with every runtime.

    The first nine fields are the seed contract. The rest keep what the
    frontmatter says for the layers above (license, compatibility, metadata,
    allowed tools) and what loading noticed (``warnings``).

    Attributes:
        skill_id: ``namespace@name``, unique in a registry.
        name: Display name from the frontmatter.
        namespace: ``built-in``, ``custom``, ``env:<name>``, ...
        description: What the skill does and when to use it.
        root: The skill's folder (real path).
        source: Source category (``built-in``, ``custom``, ``env``, ``workspace``, ``user``, ``python``).
        source_label: Where it came from, for people (usually the scanned folder).
        script: Default script, relative to ``root``, or None.
        hooks: Lifecycle hook type -> script relative to ``root``.
        license: The ``license`` field, or None.
        compatibility: The ``compatibility`` field, or None.
        metadata: The ``metadata`` mapping (strings to strings).
        allowed_tools: The ``allowed-tools`` patterns, split.
        skill_md: The SKILL.md file, or None for a skill registered without one.
        warnings: Problems noticed while loading leniently.
    """

    skill_id: str
    name: str
    namespace: str
    description: str
    root: Path
    source: str
    source_label: str
    script: str | None = None
    hooks: Mapping[str, str] = field(default_factory=dict)
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    skill_md: Path | None = None
    warnings: tuple[str, ...] = ()

    def __hash__(self) -> int:
        return hash((self.skill_id, self.root))

    def resource_files(self) -> list[str]:
        """Files shipped under the skill folder, relative POSIX paths, sorted.

        Hidden files, ``__pycache__`` and compiled Python are left out, and so
        are symlinks that lead out of the skill. Read from disk on each call,
        folder by folder from descriptors that refuse links (a linked folder is
        never entered), at most :data:`MAX_RESOURCE_DEPTH` levels and
        :data:`MAX_RESOURCE_FOLDERS` folders down, iteratively: a hostile
        folder tree costs a bounded walk, never the stack.
        """
        base = os.path.realpath(self.root)
        try:
            root_fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return []
        return resource_files_at(root_fd, base)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view of every field."""
        return {
            "id": self.skill_id,
            "name": self.name,
            "namespace": self.namespace,
            "description": self.description,
            "root": str(self.root),
            "source": self.source,
            "source_label": self.source_label,
            "script": self.script,
            "hooks": dict(self.hooks),
            "license": self.license,
            "compatibility": self.compatibility,
            "metadata": dict(self.metadata),
            "allowed_tools": list(self.allowed_tools),
            "skill_md": str(self.skill_md) if self.skill_md else None,
            "warnings": list(self.warnings),
        }


def _inside(path: str, base: str) -> bool:
    """Whether ``path`` (a link) leads to a place inside the folder ``base`` (a real path)."""
    return os.path.realpath(path).startswith(base + os.sep)


class SkillRegistryLike(Protocol):
    """What a runtime needs from a registry (:class:`~.registry.SkillCatalog` has it)."""

    def get(self, skill_id: str) -> SkillDescriptor | None: ...
    def find_by_name(self, name: str) -> list[SkillDescriptor]: ...
    def list_hooks(self, hook_type: str) -> list[SkillDescriptor]: ...
    def read_skill_doc(self, skill_id: str) -> str: ...
    def skill_file_text(self, skill_id: str, relative_path: str) -> str: ...


def resource_files_at(root_fd: int, base: str | None = None) -> list[str]:
    """:meth:`SkillDescriptor.resource_files` of the skill folder open as ``root_fd`` (closed after): a link is
    listed only when ``base``, the folder's real path, is given and it leads inside it; without it, never."""
    found: list[str] = []
    stack: list[tuple[int, str, int]] = [(root_fd, "", 0)]
    opened = 1
    try:
        while stack and len(found) < MAX_RESOURCE_FILES:
            fd, relative, depth = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    names = sorted(entry.name for entry in entries)
            except OSError:
                names = []
            subfolders: list[tuple[int, str]] = []
            for name in names:
                if name.startswith(".") or len(found) >= MAX_RESOURCE_FILES:
                    continue
                path = f"{relative}/{name}" if relative else name
                try:
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                except OSError:
                    continue
                if stat.S_ISDIR(mode):
                    if name == "__pycache__" or depth >= MAX_RESOURCE_DEPTH or opened >= MAX_RESOURCE_FOLDERS:
                        continue
                    try:
                        subfolders.append((os.open(name, _FOLDER_FLAGS, dir_fd=fd), path))
                    except OSError:
                        continue
                    opened += 1
                elif name.endswith((".pyc", ".pyo")):
                    continue
                elif stat.S_ISREG(mode) or (
                    base is not None and stat.S_ISLNK(mode) and _inside(os.path.join(base, path), base)
                ):
                    found.append(path)
            os.close(fd)
            stack.extend((child, path, depth + 1) for child, path in reversed(subfolders))
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return sorted(found, key=str.casefold)
