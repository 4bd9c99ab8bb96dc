"""The skill tree: categories -> leaves, built from a workspace's manifests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..engine.decisions import NONE_ID, Option
from ..errors import UnknownSkillError
from .manifests import Category, Manifests, SkillManifest, load_manifests

NONE_CATEGORY = Option(NONE_ID, "None of these: the request fits no category.")
NONE_SKILL = Option(NONE_ID, "None of these skills fits the request.")


@dataclass
class SkillTree:
    """Categories and their code skills. ``problems`` lists the manifest entries skipped."""

    categories: dict[str, Category] = field(default_factory=dict)
    skills: dict[str, SkillManifest] = field(default_factory=dict)
    problems: list = field(default_factory=list)
    source: Path | None = None

    @classmethod
    def load(cls, categories_path: Path, bodies_dir: Path) -> SkillTree:
        manifests: Manifests = load_manifests(categories_path, bodies_dir)
        return cls(manifests.categories, manifests.skills, manifests.problems, categories_path)

    def children(self, category: str) -> list[SkillManifest]:
        return [s for s in self.skills.values() if s.category == category]

    def get(self, name: str) -> SkillManifest:
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self.skills)) or "none"
            raise UnknownSkillError(f"no skill named {name!r} (known: {known})")
        return skill

    def category_options(self) -> list[Option]:
        """One option per non-empty category, described by itself and what it holds, plus ``none``."""
        options = []
        for category in self.categories.values():
            leaves = self.children(category.name)
            if leaves:
                options.append(Option(category.name, category_summary(category, leaves)))
        return options + [NONE_CATEGORY]

    def skill_options(self, category: str) -> list[Option]:
        return [Option(s.name, s.description) for s in self.children(category)] + [NONE_SKILL]


def category_summary(category: Category, leaves: list[SkillManifest]) -> str:
    """A category's description followed by the names of its leaves, in words."""
    names = ", ".join(s.leaf.replace("_", " ") for s in leaves)
    description = category.description.rstrip(".")
    return f"{description} ({names})." if description else f"{names}."
