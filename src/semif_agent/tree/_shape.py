"""A built tree in memory: skills, category nodes, and their ``categories.json`` form (both ways)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..catalog.names import CATEGORY_RE
from .manifests import SKILL_MD

MAX_CHILDREN = 15
"""Children of a category at most: with the ``none`` option, a decision shows at most 16 options."""


@dataclass(frozen=True)
class LeafSpec:
    """What building a tree needs of one leaf of a flat catalog: its id, what it does, and where it comes from.

    ``name`` is the leaf id, kept as given. ``path`` is the SKILL.md file of a
    SKILL.md skill (written as ``"path"`` with ``"kind": "skill_md"``), and
    ``skill_name`` the name written in that file when it differs from ``name``.
    """

    name: str
    description: str
    examples: tuple[str, ...] = ()
    path: str | None = None
    skill_name: str | None = None


@dataclass(eq=False)
class Node:
    """A category: its subcategories and the skills (leaf ids) directly in it. The root has no name."""

    name: str = ""
    description: str = ""
    children: list[Node] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)

    def leaves(self) -> list[str]:
        """Every leaf id in this category or below it."""
        out = list(self.skills)
        for child in self.children:
            out.extend(child.leaves())
        return out

    def walk(self) -> Iterator[tuple[Node, Node | None, int]]:
        """Every category below this node as ``(category, parent or None at the top, depth)``, parents first."""
        stack = [(child, None if not self.name else self, 1) for child in reversed(self.children)]
        while stack:
            node, parent, depth = stack.pop()
            yield node, parent, depth
            stack.extend((child, node, depth + 1) for child in reversed(node.children))

    @property
    def size(self) -> int:
        """Children shown by a decision here: subcategories and skills."""
        return len(self.children) + len(self.skills)


def manifest(skill: LeafSpec, category: str) -> dict[str, object]:
    """The ``skills`` entry of ``skill`` in ``category``."""
    entry: dict[str, object] = {"name": skill.name}
    if skill.path is not None:
        entry["kind"] = SKILL_MD
    entry["category"] = category
    entry["description"] = skill.description
    if skill.path is not None:
        entry["path"] = skill.path
        if skill.skill_name and skill.skill_name != skill.name:
            entry["skill_name"] = skill.skill_name
    if skill.examples:
        entry["examples"] = list(skill.examples)
    return entry


def to_dict(root: Node, skills: dict[str, LeafSpec]) -> dict[str, object]:
    """The ``categories.json`` form of the tree under ``root`` (categories parents first)."""
    categories: list[dict[str, str]] = []
    manifests: list[dict[str, object]] = []
    for node, parent, _ in root.walk():
        entry = {"name": node.name, "description": node.description}
        if parent is not None:
            entry["parent"] = parent.name
        categories.append(entry)
        manifests.extend(manifest(skills[leaf], node.name) for leaf in node.skills)
    return {"version": 1, "categories": categories, "skills": manifests}


def from_dict(data: object) -> Node | None:
    """The tree a ``categories.json``-shaped dict holds, or None when it is not a usable tree."""
    if not isinstance(data, dict):
        return None
    categories, skills = data.get("categories"), data.get("skills")
    if not isinstance(categories, list) or not isinstance(skills, list) or not categories or not skills:
        return None
    nodes: dict[str, Node] = {}
    parents: dict[str, str] = {}
    for entry in categories:
        if not isinstance(entry, dict):
            return None
        name, parent = entry.get("name"), entry.get("parent", "")
        if not isinstance(name, str) or not CATEGORY_RE.fullmatch(name) or name in nodes or not isinstance(parent, str):
            return None
        nodes[name] = Node(name, str(entry.get("description", "")))
        parents[name] = parent
    root = Node()
    for name, parent in parents.items():
        if parent and parent not in nodes:
            return None
        (nodes[parent] if parent else root).children.append(nodes[name])
    seen: set[str] = set()
    for entry in skills:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or entry.get("category") not in nodes:
            return None
        if entry["name"] in seen:
            return None
        seen.add(entry["name"])
        nodes[entry["category"]].skills.append(entry["name"])
    reachable = sum(1 for _ in root.walk())
    return root if reachable == len(nodes) else None  # a cycle of parents leaves some unreachable


def depth(root: Node) -> int:
    """Decisions from the top down to the deepest skill."""
    return max((d + 1 for node, _, d in root.walk() if node.skills), default=0)
