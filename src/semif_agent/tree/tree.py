"""The skill tree: categories (possibly nested) -> leaves, built from a workspace's manifests."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import plural
from ..engine.decisions import NONE_ID, Option
from ..errors import UnknownSkillError
from .manifests import Category, Manifests, SkillManifest, load_manifests
from .skill_md_report import SkillMdReport

if TYPE_CHECKING:
    from ..workspace import Workspace

NONE_CATEGORY = Option(NONE_ID, "None of these: the request fits no category.")
NONE_SKILL = Option(NONE_ID, "None of these skills fits the request.")
SUMMARY_NAMES = 12


@dataclass
class SkillTree:
    """Categories and their leaves (code skills and SKILL.md skills).

    ``problems`` lists what loading skipped or had to report in the code
    skills' manifests; ``skill_md_report``, the SKILL.md skills renamed
    (names normalised, names shared by two skills) and the folders skipped.
    ``none_examples`` are requests no skill serves (``categories.json``'s
    ``none_examples``): what the ``none`` option stands for.
    """

    categories: dict[str, Category] = field(default_factory=dict)
    skills: dict[str, SkillManifest] = field(default_factory=dict)
    problems: list = field(default_factory=list)
    source: Path | None = None
    none_examples: tuple[str, ...] = ()
    skill_md_report: SkillMdReport = field(default_factory=SkillMdReport)
    _index: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _written: tuple[tuple[SkillManifest, ...], dict[str, SkillManifest | None]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def for_workspace(cls, workspace: Workspace, **options: Any) -> SkillTree:
        """A workspace's whole tree: code skills and SKILL.md skills (see :mod:`.workspace_tree`)."""
        from .workspace_tree import workspace_manifests

        manifests = workspace_manifests(workspace, **options)
        return cls(
            manifests.categories,
            manifests.skills,
            manifests.problems,
            workspace.categories_path,
            none_examples=manifests.none_examples,
            skill_md_report=manifests.skill_md_report,
        )

    @classmethod
    def load(cls, categories_path: Path, bodies_dir: Path) -> SkillTree:
        manifests: Manifests = load_manifests(categories_path, bodies_dir)
        return cls(manifests.categories, manifests.skills, manifests.problems, categories_path, manifests.none_examples)

    def _indexes(
        self,
    ) -> tuple[dict[str, list[SkillManifest]], dict[str, list[Category]], dict[str, list[SkillManifest]]]:
        """Skills and subcategories by parent, and leaves under each category: built once per tree shape.

        Routing asks for these at every level of every request; they are
        rebuilt only when skills or categories were added or removed.
        """
        shape = (len(self.skills), len(self.categories))
        if self._index is None or self._index[0] != shape:
            skills: dict[str, list[SkillManifest]] = {}
            for skill in self.skills.values():
                skills.setdefault(skill.category, []).append(skill)
            subs: dict[str, list[Category]] = {}
            for category in self.categories.values():
                subs.setdefault(category.parent, []).append(category)
            leaves: dict[str, list[SkillManifest]] = {}

            def collect(name: str) -> list[SkillManifest]:
                if name not in leaves:
                    leaves[name] = list(skills.get(name, []))
                    for sub in subs.get(name, []):
                        leaves[name].extend(collect(sub.name))
                return leaves[name]

            for name in self.categories:
                collect(name)
            self._index = (shape, skills, subs, leaves)
        return self._index[1], self._index[2], self._index[3]

    def children(self, category: str) -> list[SkillManifest]:
        """The skills directly in ``category``."""
        return list(self._indexes()[0].get(category, []))

    def subcategories(self, category: str) -> list[Category]:
        """The categories directly under ``category`` (``""``: the top level)."""
        return list(self._indexes()[1].get(category, []))

    def leaves_under(self, category: str) -> list[SkillManifest]:
        """Every skill in ``category`` or below it."""
        return list(self._indexes()[2].get(category, []))

    def path_to(self, skill: str) -> list[str]:
        """The categories from the top down to ``skill``'s own."""
        path: list[str] = []
        node = self.categories.get(self.get(skill).category)
        while node is not None:
            path.insert(0, node.name)
            node = self.categories.get(node.parent) if node.parent else None
        return path

    def find(self, name: str) -> SkillManifest | None:
        """The skill with id ``name``, or the one SKILL.md skill whose name as written is ``name`` (None: no such skill).

        The one resolver of a skill's name, for ``semif run --skill``, the Router's
        load, the MCP server's ``load_skill`` and the Agent. A client writes a skill's
        name as its SKILL.md does ("PDF Tools"), which the tree may have normalised
        (``pdf-tools``); an id always wins over a written name, and a skill named
        exactly its id holds it (:func:`.workspace_tree.workspace_manifests`), so
        two skills that normalise to one name are each reached by the name they
        write. A name written by two skills names neither.
        """
        skill = self.skills.get(name)
        if skill is not None:
            return skill
        key = tuple(self.skills.values())
        if self._written is None or self._written[0] != key:
            written: dict[str, SkillManifest | None] = {}
            for leaf in self.skills.values():
                if leaf.source_name and leaf.source_name != leaf.name:
                    written[leaf.source_name] = None if leaf.source_name in written else leaf
            self._written = (key, written)
        return self._written[1].get(name)

    def get(self, name: str) -> SkillManifest:
        """:meth:`find`'s skill; an :class:`UnknownSkillError` when there is none."""
        skill = self.find(name)
        if skill is None:
            raise UnknownSkillError(f"no skill named {name!r}{did_you_mean(name, self.skills)}")
        return skill

    def options_at(self, category: str = "") -> list[Option]:
        """What a decision at ``category`` offers: its non-empty subcategories, its skills, ``none``."""
        options = [
            Option(c.name, category_summary(c, leaves))
            for c in self.subcategories(category)
            if (leaves := self.leaves_under(c.name))
        ]
        options += [Option(s.name, s.description) for s in self.children(category)]
        return options + [NONE_CATEGORY if not category else NONE_SKILL]

    def category_options(self) -> list[Option]:
        """The top-level decision's options."""
        return self.options_at("")

    def skill_options(self, category: str) -> list[Option]:
        return self.options_at(category)


def category_summary(category: Category, leaves: list[SkillManifest]) -> str:
    """A category's description followed by the names of (some of) its leaves, in words."""
    names = ", ".join(s.leaf.replace("_", " ") for s in leaves[:SUMMARY_NAMES])
    description = category.description.rstrip(".")
    return f"{description} ({names})." if description else f"{names}."


def closest_names(name: str, names: Iterable[str], limit: int = 5) -> list[str]:
    """Up to ``limit`` of ``names`` nearest to ``name``, nearest first: those spelled alike (a typo, a missing
    letter), then those that hold it (``pdf`` for ``pdf-tools``), case aside."""
    by_key: dict[str, str] = {}
    for known in names:
        by_key.setdefault(known.casefold(), known)
    key = name.casefold()
    alike = difflib.get_close_matches(key, list(by_key), n=limit, cutoff=0.6)
    holding = sorted((known for known in by_key if key and key in known and known not in alike), key=len)
    return [by_key[known] for known in [*alike, *holding][:limit]]


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """``"; did you mean a, b?"`` naming the :func:`closest_names` to ``name``, or how many names there are to
    choose from when none is close (never the first few of a long list, which would tell nothing)."""
    names = list(names)
    close = closest_names(name, names)
    if close:
        return f"; did you mean {', '.join(close)}?"
    return (
        f"; no name among the {plural(len(names), 'skill')} is close (`semif skills list` lists them)" if names else ""
    )
