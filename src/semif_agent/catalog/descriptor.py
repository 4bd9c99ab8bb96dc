"""What the catalog knows about one SKILL.md skill: :class:`SkillDescriptor`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

MAX_RESOURCE_FILES = 500
"""``resource_files()`` lists at most this many files."""


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
        are symlinks that lead out of the skill. Read from disk on each call.
        """
        if not self.root.is_dir():
            return []
        base = os.path.realpath(self.root)
        found: list[str] = []
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            for name in files:
                if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(folder, name)
                if os.path.islink(path) and not os.path.realpath(path).startswith(base + os.sep):
                    continue
                found.append(Path(os.path.relpath(path, base)).as_posix())
                if len(found) >= MAX_RESOURCE_FILES:
                    break
            if len(found) >= MAX_RESOURCE_FILES:
                break
        return sorted(found, key=str.casefold)

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


class SkillRegistryLike(Protocol):
    """What a runtime needs from a registry (:class:`~.registry.SkillCatalog` has it)."""

    def get(self, skill_id: str) -> SkillDescriptor | None: ...
    def find_by_name(self, name: str) -> list[SkillDescriptor]: ...
    def list_hooks(self, hook_type: str) -> list[SkillDescriptor]: ...
    def read_skill_doc(self, skill_id: str) -> str: ...
