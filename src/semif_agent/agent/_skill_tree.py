"""The skill tree the model browses when an agent has more skills than its prompt lists.

Built with :func:`semif_agent.tree.build.build_tree` on the local model's
embeddings (categories of at most 16 children, each named and described by
the words that set its skills apart). Without the model, skills are grouped
by name instead (still at most 16 children a category), so every skill is
reachable either way.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..tree.build import MAX_CHILDREN, FlatSkill, build_tree, manifest_name
from .skills import Skill

log = logging.getLogger("semif_agent.agent")


@dataclass
class Category:
    """One category: its subcategories, the skills directly in it, and how many skills it holds in all."""

    name: str
    description: str
    parent: str = ""
    children: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    count: int = 0


@dataclass
class SkillTreeView:
    """Categories by name, and the top-level ones in order."""

    top: list[str]
    categories: dict[str, Category]

    def line(self, name: str, clip: int = 180) -> str:
        category = self.categories[name]
        return f"- {name} ({category.count} skills): {_clip(category.description, clip)}"


def build_skill_tree(skills: Sequence[Skill], engine: Any) -> SkillTreeView:
    """The tree of ``skills``: embedding clusters with the local engine, else name ranges."""
    embedder = getattr(engine, "embedder", None)
    if embedder is not None and len(skills) > 1:
        try:
            return _clustered(skills, embedder.embed)
        except Exception as exc:  # noqa: BLE001 - grouping by name still reaches every skill
            log.warning("the skill tree could not be clustered, grouping by name: %s: %s", type(exc).__name__, exc)
    return _by_name(skills)


def _clustered(skills: Sequence[Skill], embed: Any) -> SkillTreeView:
    try:
        names = [manifest_name(s.name) for s in skills]
        if len(set(names)) != len(names):
            raise UserError("names collide once normalised")
    except UserError:
        names = [f"skill_{i}" for i in range(len(skills))]
    back = dict(zip(names, (s.name for s in skills)))
    tree = build_tree([FlatSkill(n, s.description) for n, s in zip(names, skills)], embed=embed)
    categories: dict[str, Category] = {}
    top: list[str] = []
    for entry in tree["categories"]:
        parent = entry.get("parent", "")
        categories[entry["name"]] = Category(entry["name"], entry.get("description", ""), parent)
        if parent:
            categories[parent].children.append(entry["name"])
        else:
            top.append(entry["name"])
    for manifest in tree["skills"]:
        categories[manifest["category"]].skills.append(back[manifest["name"]])
    view = SkillTreeView(top, categories)
    for name in top:
        _count(view, name)
    return view


def _by_name(skills: Sequence[Skill]) -> SkillTreeView:
    ordered = sorted(skills, key=lambda s: s.name.casefold())
    view = SkillTreeView([], {})

    def group(items: list[Skill], parent: str) -> str:
        name = _unique(f"{_stem(items[0].name)}_to_{_stem(items[-1].name)}", view.categories)
        examples = "; ".join(_clip(s.description, 90) for s in items[:2])
        category = Category(name, f"{len(items)} skills named {items[0].name} to {items[-1].name}, e.g. {examples}", parent)
        view.categories[name] = category
        if len(items) <= MAX_CHILDREN:
            category.skills = [s.name for s in items]
        else:
            size = max(MAX_CHILDREN, math.ceil(len(items) / MAX_CHILDREN))
            category.children = [group(items[i : i + size], name) for i in range(0, len(items), size)]
        category.count = len(items)
        return name

    if len(ordered) <= MAX_CHILDREN:
        view.top = [group(ordered, "")] if ordered else []
    else:
        size = max(MAX_CHILDREN, math.ceil(len(ordered) / MAX_CHILDREN))
        view.top = [group(ordered[i : i + size], "") for i in range(0, len(ordered), size)]
    return view


def _count(view: SkillTreeView, name: str) -> int:
    category = view.categories[name]
    category.count = len(category.skills) + sum(_count(view, child) for child in category.children)
    return category.count


def _stem(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in name.casefold()).strip("_")
    return cleaned[:20] or "skill"


def _unique(name: str, taken: dict[str, Any]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
