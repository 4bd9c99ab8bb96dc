"""Leaf ids for SKILL.md skills: each skill keeps its own name, and two that share one stay apart.

Names come normalised (:func:`~semif_agent.catalog.names.skill_md_leaf_id`).
When several skill folders give the same name, the first one (in the precedence order the caller gives: for a
workspace, the skill that held the id before, see :mod:`.workspace_tree`) keeps it as its id, and each later
one gets the name followed by ``~`` and the folder that holds it
(``brainstorming~superpowers``; the folder above that too, if needed, and a
short hash of its path as a last resort). Ids depend only on the folders, so
they stay the same from one load to the next, and every collision is
reported with both folders named.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..catalog.names import normalized_skill_name
from ..engine.local import DISAMBIGUATION
from .skill_md_report import Renamed

SEPARATOR = DISAMBIGUATION  # what the model leaves out of a leaf's name when it embeds it


def distinct_ids(
    skills: Sequence[tuple[str, str | os.PathLike[str]]],
    *,
    taken: Iterable[str] = (),
    held: Mapping[str, str | os.PathLike[str]] | None = None,
) -> tuple[list[str], list[Renamed]]:
    """Ids for ``(name, skill folder)`` pairs given in precedence order, and each collision once.

    ``taken`` holds ids already used elsewhere (code skills, categories), and
    ``held`` ids kept for a skill folder that is not among ``skills`` (one
    that could not be loaded this time): a skill whose name is taken or held
    gets a distinct id the same way.
    """
    used = set(taken)
    holders: dict[str, Path] = {leaf_id: Path(folder) for leaf_id, folder in (held or {}).items()}
    used.update(holders)
    ids: list[str] = []
    collisions: list[Renamed] = []
    for name, folder in skills:
        folder = Path(folder)
        if name not in used:
            used.add(name)
            holders[name] = folder
            ids.append(name)
            continue
        leaf_id = _disambiguated(name, folder, holders.get(name), used)
        used.add(leaf_id)
        ids.append(leaf_id)
        first = holders.get(name)
        other = f"the skill in {first}" if first is not None else "a code skill or category"
        collisions.append(Renamed(str(folder), name, leaf_id, kept_by=other))
    return ids, collisions


def _disambiguated(name: str, folder: Path, first: Path | None, used: set[str]) -> str:
    """``name~<folder above>``, going up until it tells ``folder`` from ``first``'s (the name's holder)."""
    mine, theirs = _parents(folder), _parents(first) if first is not None else []
    for depth in range(1, min(len(mine), 3) + 1):
        if mine[:depth] == theirs[:depth]:
            continue  # the same folders above both: they would not tell them apart
        candidate = f"{name}{SEPARATOR}{'-'.join(reversed(mine[:depth]))}"
        if candidate not in used:
            return candidate
    digest = hashlib.sha1(os.path.realpath(folder).encode()).hexdigest()
    for width in range(6, len(digest) + 1, 2):
        candidate = f"{name}{SEPARATOR}{digest[:width]}"
        if candidate not in used:
            return candidate
    raise AssertionError("unreachable: a full sha1 cannot be taken by distinct folders")


def _parents(folder: Path) -> list[str]:
    """The names of the folders above ``folder``, nearest first, made fit for an id."""
    parts = (normalized_skill_name(part) for part in reversed(folder.parent.parts))
    return [part for part in parts if part]
