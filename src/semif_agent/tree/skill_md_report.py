"""What loading a workspace's SKILL.md skills had to say: renamed skills, collisions, folders skipped.

Real collections break the Agent Skills standard often (names with spaces or
capitals, two skills with one name, frontmatter that does not parse). Each
problem is kept here, once, with the folder it concerns; the report is
stored with the tree (``data/tree.json``), so a command says one line when
it changes (:meth:`SkillMdReport.summary`) and ``semif skills validate``
lists it whole, instead of every command printing every problem. The
first :data:`~semif_agent.catalog.left_out.MAX_NAMED` folders left out are
named, the others counted by reason (``more_skipped``), so a skills folder of
a hundred thousand links or broken skills keeps the report small.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._text import plural
from ..catalog.left_out import LeftOut, counts_from, more_lines

LINE_PREFIX = re.compile(r"^line \d+: ")
"""Where in its SKILL.md a parse error is (left aside when reasons are counted)."""


@dataclass(frozen=True)
class Renamed:
    """A skill loaded under another id than its name: normalised, or kept apart from a skill sharing it."""

    folder: str
    name: str
    leaf_id: str
    kept_by: str = ""  # the folder (or "a code skill or category") holding the name, for a collision

    @property
    def collision(self) -> bool:
        """True when the id differs because another skill holds the name."""
        return bool(self.kept_by)

    def __str__(self) -> str:
        if self.collision:
            return f"{self.folder}: shares the name {self.name!r} with {self.kept_by}; loaded as {self.leaf_id!r}"
        return f"{self.folder}: name {self.name!r} loaded as {self.leaf_id!r}"


@dataclass(frozen=True)
class Skipped:
    """A folder whose SKILL.md could not be loaded, and why."""

    folder: str
    reason: str

    def __str__(self) -> str:
        return f"{self.folder}: skipped: {self.reason}"


@dataclass(frozen=True)
class SkillMdReport:
    """The problems of one load of a workspace's SKILL.md skills, each once."""

    renamed: tuple[Renamed, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    more_skipped: Mapping[str, int] = field(default_factory=dict)  # left out past the named ones: how many, by reason
    changed: bool = field(default=False, compare=False)  # differs from the report stored with the tree

    @classmethod
    def bounded(
        cls, renamed: tuple[Renamed, ...], skipped: Iterable[Skipped], more_skipped: Mapping[str, int]
    ) -> SkillMdReport:
        """A report naming the first folders of ``skipped`` left out, and counting the others (and ``more_skipped``,
        those a search counted already) by reason."""
        left_out: LeftOut[Skipped] = LeftOut()
        for item in skipped:
            left_out.add(item, item.reason)
        left_out.count(more_skipped)
        return cls(renamed, tuple(left_out.named), dict(left_out.more))

    def __bool__(self) -> bool:
        return bool(self.renamed or self.skipped or self.more_skipped)

    @property
    def left_out(self) -> int:
        """How many folders were left out: those named and those counted."""
        return len(self.skipped) + sum(self.more_skipped.values())

    @property
    def collisions(self) -> tuple[Renamed, ...]:
        """The renamed skills whose name another skill holds."""
        return tuple(item for item in self.renamed if item.collision)

    def lines(self) -> list[str]:
        """One line per problem: skipped folders (then one per reason for those not named), then renamed skills,
        in load order."""
        return [*map(str, self.skipped), *more_lines(self.more_skipped), *map(str, self.renamed)]

    def renamed_by_folder(self) -> dict[str, list[str]]:
        """What each renamed skill's folder was loaded as, worded as :meth:`lines` without the folder."""
        found: dict[str, list[str]] = {}
        for item in self.renamed:
            found.setdefault(item.folder, []).append(str(item).removeprefix(f"{item.folder}: "))
        return found

    def left_out_by_folder(self) -> dict[str, list[str]]:
        """Why each folder left out (a skill that did not load, or a folder not searched) was, by folder."""
        found: dict[str, list[str]] = {}
        for item in self.skipped:
            found.setdefault(item.folder, []).append(item.reason)
        return found

    def left_out_counts(self) -> dict[str, int]:
        """How many folders were left out for each reason (a parse error's line number left aside), most first."""
        counts = Counter(LINE_PREFIX.sub("", item.reason) for item in self.skipped)
        for why, number in self.more_skipped.items():
            counts[LINE_PREFIX.sub("", why)] += number
        return dict(counts.most_common())

    def summary(self) -> str:
        """``12 skills renamed, 3 collisions, 2 skipped; see `semif skills validate```; empty when all is well."""
        collisions = len(self.collisions)
        parts = [
            _count(len(self.renamed) - collisions, "skill renamed", "skills renamed"),
            _count(collisions, "collision", "collisions"),
            _count(self.left_out, "folder skipped", "folders skipped"),
        ]
        said = ", ".join(part for part in parts if part)
        return f"SKILL.md skills: {said}; see `semif skills validate`" if said else ""

    def to_json(self) -> dict[str, object]:
        """The stored form."""
        return {
            "renamed": [
                {"folder": r.folder, "name": r.name, "id": r.leaf_id, **({"kept_by": r.kept_by} if r.kept_by else {})}
                for r in self.renamed
            ],
            "skipped": [{"folder": s.folder, "reason": s.reason} for s in self.skipped],
            **({"more_skipped": dict(self.more_skipped)} if self.more_skipped else {}),
        }

    @classmethod
    def from_json(cls, data: object) -> SkillMdReport:
        """A stored report; anything unreadable reads as an empty one."""
        if not isinstance(data, Mapping):
            return cls()
        renamed = tuple(
            Renamed(str(r["folder"]), str(r["name"]), str(r["id"]), str(r.get("kept_by") or ""))
            for r in _entries(data.get("renamed"), ("folder", "name", "id"))
        )
        skipped = tuple(
            Skipped(str(s["folder"]), str(s["reason"])) for s in _entries(data.get("skipped"), ("folder", "reason"))
        )
        return cls(renamed, skipped, counts_from(data.get("more_skipped")))


def _entries(value: object, keys: tuple[str, ...]) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [entry for entry in value if isinstance(entry, Mapping) and all(key in entry for key in keys)]


def _count(number: int, one: str, many: str) -> str:
    return plural(number, one, many) if number else ""
