"""Updating a built tree in place: new and changed skills placed, removed ones dropped, the rest left as it was.

Skills are compared with the previous tree's leaves by name; a changed
description or examples makes a skill changed (taken out and placed again).
Each skill to place goes to the category whose own skills' centroid is
nearest to it (one with room, when one is nearly as near); a full category is
split into subcategories. Categories emptied by removals are dropped, and one
left with a single child hands it to its parent. Only the categories whose
children changed are named and described again (and a parent whose listed
child was renamed is described again); every other category keeps its name,
description and members. When the previous tree is unusable or breaks the
limits, or when more than :data:`REBUILD_SHARE` of the skills changed, the
tree is built afresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._checks import check_limits, check_skills, stage, taken_names
from ._clusters import split
from ._shape import MAX_CHILDREN, LeafSpec, Node, from_dict, to_dict
from ._vectors import Centres, Embed, Progress, default_embed, embed_skills
from ._whole import build_tree
from .naming import Namer

REBUILD_SHARE = 0.3
NEAR_ENOUGH = 0.05  # a category with room this much less similar than a full one still takes the skill


@dataclass(frozen=True)
class TreeUpdate:
    """What an update did: leaf ids added, removed and changed; categories touched; or a full rebuild."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    touched: tuple[str, ...]
    rebuilt: bool


def update_tree(
    previous: object,
    skills: Iterable[LeafSpec],
    *,
    max_children: int = MAX_CHILDREN,
    top_capacity: int | None = None,
    reserved: Iterable[str] = (),
    embed: Embed | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], TreeUpdate]:
    """``previous`` (a ``categories.json``-shaped dict) brought up to date with ``skills``."""
    skills = list(skills)
    top_capacity = check_limits(max_children, top_capacity)
    check_skills(skills)
    reserved = set(reserved)
    by_name = {s.name: s for s in skills}
    old = _old_leaves(previous)
    added = tuple(s.name for s in skills if s.name not in old)
    removed = tuple(sorted(name for name in old if name not in by_name))
    changed = tuple(s.name for s in skills if s.name in old and old[s.name] != (s.description, s.examples))
    root = from_dict(previous)
    forbidden = taken_names(reserved, by_name)
    share = (len(added) + len(removed) + len(changed)) / max(len(old), len(skills), 1)
    if root is None or share > REBUILD_SHARE or not _within_limits(root, max_children, top_capacity):
        return _rebuild(skills, added, removed, changed, max_children, top_capacity, reserved, embed, progress)
    embed = embed or default_embed()
    names = [s.name for s in skills]
    centres = Centres(names, embed_skills(skills, embed, progress))
    update = _Update(root, centres, max_children)
    update.take_out([*removed, *changed])
    place = [*changed, *added] + update.tidy()
    report = stage(progress, "grouping")
    for done, leaf in enumerate(place, start=1):
        update.place(leaf)
        if report is not None:
            report(done, len(place))
    touched = update.touched | {node for node, _, _ in root.walk() if node.name in forbidden}
    if not root.children or not _within_limits(root, max_children, top_capacity):
        return _rebuild(skills, added, removed, changed, max_children, top_capacity, reserved, embed, progress)
    renamed = _rename(root, touched, Namer(by_name, centres, forbidden, embed=embed), progress)
    result = TreeUpdate(added, removed, changed, tuple(sorted(renamed)), rebuilt=False)
    return to_dict(root, by_name), result


class _Update:
    """The tree being changed, the categories whose children changed, and where each node hangs."""

    def __init__(self, root: Node, centres: Centres, max_children: int):
        self.root = root
        self.centres = centres
        self.limit = max_children
        self.touched: set[Node] = set()
        self.parents: dict[Node, Node] = {}
        self.home: dict[str, Node] = {}
        self._index(root)

    def _index(self, node: Node) -> None:
        for child in node.children:
            self.parents[child] = node
            self._index(child)
        for leaf in node.skills:
            self.home[leaf] = node

    def changed(self, node: Node) -> None:
        """``node``'s children changed: it is touched, and its centroid and its ancestors' are stale."""
        if node is not self.root:
            self.touched.add(node)
        current: Node | None = node
        while current is not None:
            self.centres.forget(current)
            current = self.parents.get(current)

    def take_out(self, leaves: Iterable[str]) -> None:
        for leaf in leaves:
            node = self.home.pop(leaf)
            node.skills.remove(leaf)
            self.changed(node)

    def tidy(self) -> list[str]:
        """Drop empty categories and lift the only child of a category into its parent.

        Returns the skills left alone in a top category, to be placed again.
        """
        loose: list[str] = []
        self._tidy(self.root, loose)
        if not self.root.children and loose:  # the only skill left: one category holds it
            self.root.children.append(Node(skills=loose[:1]))
            self._index(self.root)
            self.changed(self.root.children[0])
            return loose[1:]
        return loose

    def _tidy(self, node: Node, loose: list[str]) -> None:
        for child in list(node.children):
            self._tidy(child, loose)
            if child.size > 1:
                continue
            node.children.remove(child)
            self.touched.discard(child)
            if child.children:
                node.children.append(child.children[0])
                self.parents[child.children[0]] = node
            elif child.skills and node is self.root:
                loose.extend(child.skills)
            elif child.skills:
                node.skills.extend(child.skills)
                self.home[child.skills[0]] = node
            self.changed(node)

    def place(self, leaf: str) -> None:
        """Put ``leaf`` with the nearest skills: in a category with room, or by splitting a full one."""
        vector = self.centres(leaf)
        holders = [node for node, _, _ in self.root.walk() if node.skills]
        if not holders:
            holders = [node for node, _, _ in self.root.walk()]
        sims = sorted(((float(self.centres(node) @ vector), i) for i, node in enumerate(holders)), reverse=True)
        best = holders[sims[0][1]]
        roomy = next((holders[i] for sim, i in sims if holders[i].size < self.limit), None)
        if roomy is not None and (roomy is best or float(self.centres(roomy) @ vector) >= sims[0][0] - NEAR_ENOUGH):
            roomy.skills.append(leaf)
            self.home[leaf] = roomy
            self.changed(roomy)
            return
        self._split(best, leaf)

    def _split(self, node: Node, leaf: str) -> None:
        """Cut ``node``'s own skills and ``leaf`` into subcategories, within ``node``'s room."""
        items = [*node.skills, leaf]
        room = self.limit - len(node.children)
        vectors = self.centres.vectors[[self.centres.position[i] for i in items]]
        part = split(items, vectors, max_children=self.limit, room=room)
        node.skills = part.skills
        node.children.extend(part.children)
        self._index(node)
        for new, _, _ in part.walk():
            self.touched.add(new)
        self.changed(node)


def _rename(root: Node, touched: set[Node], namer: Namer, progress: Progress | None) -> set[str]:
    """Name and describe the touched categories, and describe again the parents that list a renamed one.

    Returns the names of every category named or described again.
    """
    parents = {node: parent or root for node, parent, _ in root.walk()}
    order = [node for node in parents if node in touched]
    before = {node: node.name for node in order}
    namer.in_use.update(node.name for node in parents if node not in touched)
    namer.name(order, parents, stage(progress, "naming"))
    listing = {parents[node] for node in order if before[node] and node.name != before[node]} - {root}
    for node in [*order, *(n for n in parents if n in listing and n not in touched)]:
        namer.describe(node, parents[node])
    return {node.name for node in order} | {node.name for node in listing}


def _old_leaves(previous: object) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The previous tree's leaves: description and examples by name."""
    entries = previous.get("skills") if isinstance(previous, dict) else None
    old: dict[str, tuple[str, tuple[str, ...]]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            examples = entry.get("examples") or []
            old[entry["name"]] = (
                str(entry.get("description", "")),
                tuple(examples) if isinstance(examples, list) else (),
            )
    return old


def _within_limits(root: Node, max_children: int, top_capacity: int) -> bool:
    if not 1 <= len(root.children) <= top_capacity or root.skills:
        return False
    total = len(root.leaves())
    return all(node.size <= max_children and (node.size >= 2 or total == 1) for node, _, _ in root.walk())


def _rebuild(
    skills: list[LeafSpec],
    added: tuple[str, ...],
    removed: tuple[str, ...],
    changed: tuple[str, ...],
    max_children: int,
    top_capacity: int,
    reserved: set[str],
    embed: Embed | None,
    progress: Progress | None,
) -> tuple[dict[str, Any], TreeUpdate]:
    built = build_tree(
        skills, max_children=max_children, top_capacity=top_capacity, reserved=reserved, embed=embed, progress=progress
    )
    touched = tuple(sorted(c["name"] for c in built["categories"]))
    return built, TreeUpdate(added, removed, changed, touched, rebuilt=True)
