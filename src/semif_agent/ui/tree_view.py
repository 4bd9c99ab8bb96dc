"""The tree page: the workspace's categories and skills, searchable, each skill with its text and its record.

The tree is loaded as every command loads it (:meth:`SkillTree.for_workspace`)
and loaded again when its sources change (``categories.json``, the stored
``tree.json``, the SKILL.md folder).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .._files import open_regular
from ..errors import UnknownSkillError
from ..tree.manifests import Category, SkillManifest
from ..tree.tree import SkillTree, closest_names
from ..workspace import Workspace
from .index import LogIndex

BODY_MAX_BYTES = 200_000
SEARCH_SHOWN = 200


@dataclass
class CategoryView:
    """A category as the tree page shows it: its skills and its subcategories."""

    category: Category
    skills: list[SkillManifest] = field(default_factory=list)
    children: list[CategoryView] = field(default_factory=list)


@dataclass
class TreeView:
    roots: list[CategoryView]
    found: list[SkillManifest] | None  # the skills a search matched (None: no search)
    chosen: SkillManifest | None
    body: str | None
    body_name: str
    chosen_runs: Counter  # skill -> runs that went to it
    succeeded: Counter  # skill -> of those, runs that succeeded (a person's outcome beats the assessment)
    path: list[str]
    skills: int


class TreeCache:
    """The workspace's tree, loaded once and again when its sources change."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._tree: SkillTree | None = None
        self._signature: tuple | None = None
        self._lock = threading.Lock()

    def _sources(self) -> tuple:
        ws = self.workspace
        paths = (ws.categories_path, ws.data_dir / "tree.json", ws.skills_md_dir, ws.root / ".agents" / "skills")
        return tuple(path.stat().st_mtime_ns if path.exists() else None for path in paths)

    def get(self) -> SkillTree:
        with self._lock:
            signature = self._sources()
            if self._tree is None or signature != self._signature:
                self._tree = SkillTree.for_workspace(self.workspace)
                self._signature = self._sources()
            return self._tree

    def check_skill(self, name: str) -> None:
        """``name`` is a skill of the tree; else an error naming the closest ones."""
        skills = self.get().skills
        if name in skills:
            return
        close = closest_names(name, skills, limit=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownSkillError(f"no skill named {name!r} in this workspace's tree{hint}")

    def view(self, query: str, chosen: str, index: LogIndex) -> TreeView:
        tree = self.get()
        chosen_runs: Counter = Counter()
        succeeded: Counter = Counter()
        for _, record in index.records():
            if record.skill:
                chosen_runs[record.skill] += 1
                succeeded[record.skill] += record.true_outcome == "success"
        found = None
        if query:
            words = query.lower().split()
            found = [
                skill
                for skill in sorted(tree.skills.values(), key=lambda s: s.name)
                if all(word in _searchable(skill) for word in words)
            ][:SEARCH_SHOWN]
        skill = tree.skills.get(chosen) if chosen else None
        body, body_name = _body(skill) if skill else (None, "")
        return TreeView(
            _nodes(tree, ""),
            found,
            skill,
            body,
            body_name,
            chosen_runs,
            succeeded,
            tree.path_to(skill.name) if skill else [],
            len(tree.skills),
        )


def _searchable(skill: SkillManifest) -> str:
    return " ".join((skill.name, skill.description, *skill.examples)).lower()


def _nodes(tree: SkillTree, parent: str) -> list[CategoryView]:
    return [
        CategoryView(category, sorted(tree.children(category.name), key=lambda s: s.name), _nodes(tree, category.name))
        for category in sorted(tree.subcategories(parent), key=lambda c: c.name)
    ]


def _body(skill: SkillManifest) -> tuple[str | None, str]:
    """The skill's body (a code skill) or its SKILL.md, as text; None when there is none to show."""
    path: Path | None = skill.source if skill.is_skill_md else skill.body_path
    name = "SKILL.md" if skill.is_skill_md else "body"
    handle = open_regular(path) if path is not None else None  # never through a link, never a FIFO or device
    if path is None or handle is None:
        return None, name
    try:
        with handle:
            data = handle.read(BODY_MAX_BYTES)
    except OSError:
        return None, name
    return data.decode("utf-8", errors="replace"), f"{name} ({path.name})"
