"""Balanced, capacity-constrained clustering into a tree of the least depth the children limit allows.

With ``n`` skills, at most ``C`` children per category and ``T`` categories at
the top, a tree of ``d`` decisions (top category, ..., skill) holds at most
``T * C**(d-1)`` skills; the tree takes the least such ``d``. Every category
is then split the same way: a group of ``m`` skills that needs ``r`` more
decisions is cut into about ``m**(1/r)`` clusters (an even fan-out at every
level), none larger than what ``r - 1`` levels below it can hold, nor much
larger than its share. Clusters come from spherical k-means whose assignment
step is capacity-constrained: each point, most decided first, joins the
nearest centroid that still has room. A cluster of one skill is that skill,
directly in its parent category. Seeds are fixed: the same vectors give the
same tree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._shape import Node

if TYPE_CHECKING:
    import numpy as np

SEED = 1234
ITERATIONS = 25
RESTARTS = 3
BALANCE = 2.0  # no cluster holds more than twice its share of the group, unless the depth needs it


def decisions_needed(n: int, max_children: int, top_capacity: int) -> int:
    """The least number of decisions (top category ... skill) a tree of ``n`` skills needs."""
    depth = 2
    while top_capacity * max_children ** (depth - 1) < n:
        depth += 1
    return depth


def group(
    names: Sequence[str],
    vectors: np.ndarray,
    *,
    max_children: int,
    top_capacity: int,
    progress: Callable[[int, int], None] | None = None,
) -> Node:
    """The unnamed tree of ``names`` (rows of ``vectors``, unit vectors): top categories only at the root.

    ``progress(placed, total)`` hears how many skills have found their category.
    """
    builder = _Builder(names, vectors, max_children, progress)
    items = list(range(len(names)))
    depth = decisions_needed(len(items), max_children, top_capacity)
    while True:
        groups = builder.top_groups(items, depth, top_capacity)
        if groups is not None:
            return Node(children=[builder.category(g) for g in groups])
        depth += 1  # only with 2 children a category: an odd group cannot be split without a single-child category


def split(
    names: Sequence[str],
    vectors: np.ndarray,
    *,
    max_children: int,
    room: int,
    progress: Callable[[int, int], None] | None = None,
) -> Node:
    """``names`` cut into at most ``room`` children (categories of the least depth, and single skills)."""
    builder = _Builder(names, vectors, max_children, progress)
    items = list(range(len(names)))
    if len(items) <= room:
        return Node(skills=[names[i] for i in items])
    depth = 1
    while room * max_children**depth < len(items):
        depth += 1
    return builder.inner(items, depth + 1, limit=room)


class _Builder:
    def __init__(
        self, names: Sequence[str], vectors: np.ndarray, max_children: int, progress: Callable[[int, int], None] | None
    ):
        self.names = names
        self.vectors = vectors
        self.limit = max_children
        self.report = progress
        self.placed = 0

    def progress(self, skills: int) -> None:
        self.placed += skills
        if self.report is not None:
            self.report(self.placed, len(self.names))

    def top_groups(self, items: list[int], depth: int, top_capacity: int) -> list[list[int]] | None:
        """At most ``top_capacity`` groups of 2+ skills (1 only when there is one skill), or None if impossible."""
        hold = self.limit ** (depth - 1)
        n = len(items)
        k = _fan_out(n, depth, lowest=math.ceil(n / hold), highest=top_capacity)
        if k == 1 or n < 2:
            return [items]
        groups = self.clusters(items, k, hold)
        return _without_singletons(groups, self.vectors, hold)

    def category(self, items: list[int]) -> Node:
        """A category over ``items``, as shallow as the children limit allows."""
        if len(items) <= self.limit:
            self.progress(len(items))
            return Node(skills=[self.names[i] for i in items])
        depth = 1
        while self.limit**depth < len(items):
            depth += 1
        return self.inner(items, depth, limit=self.limit)

    def inner(self, items: list[int], depth: int, *, limit: int) -> Node:
        """A category of subcategories (and single skills) whose subtrees need ``depth - 1`` decisions at most."""
        hold = self.limit ** (depth - 1)
        k = _fan_out(len(items), depth, lowest=max(2, math.ceil(len(items) / hold)), highest=limit)
        node = Node()
        for members in self.clusters(items, k, hold):
            if len(members) == 1:
                node.skills.append(self.names[members[0]])
                self.progress(1)
            else:
                node.children.append(self.category(members))
        return node

    def clusters(self, items: list[int], k: int, hold: int) -> list[list[int]]:
        """``items`` cut into at most ``k`` non-empty clusters, none over ``hold`` (nor over ``BALANCE`` shares)."""
        m = len(items)
        cap = min(hold, max(math.ceil(m / k), math.ceil(BALANCE * m / k)))
        if k >= 2:
            cap = min(cap, m - 1)  # never one cluster holding everything
        labels = balanced_kmeans(self.vectors[items], k, cap)
        groups: dict[int, list[int]] = {}
        for item, label in zip(items, labels):
            groups.setdefault(int(label), []).append(item)
        return sorted(groups.values(), key=lambda g: g[0])


def _fan_out(m: int, depth: int, *, lowest: int, highest: int) -> int:
    """Clusters for ``m`` skills over ``depth`` levels: about ``m**(1/depth)``, within the bounds."""
    return max(1, min(highest, max(lowest, round(m ** (1 / depth)))))


def balanced_kmeans(points: np.ndarray, k: int, cap: int) -> Any:
    """Cluster labels for unit-vector rows: spherical k-means, no cluster over ``cap`` (``k * cap >= len``)."""
    import numpy as np

    m = len(points)
    k = min(k, m)
    if k <= 1:
        return np.zeros(m, dtype=int)
    rng = np.random.default_rng(SEED)
    best_labels, best_score = None, -math.inf
    for _ in range(RESTARTS if m * k <= 400_000 else 1):
        centres = _seed_centres(points, k, rng)
        labels = np.full(m, -1)
        for _ in range(ITERATIONS):
            sims = points @ centres.T
            new = _assign(sims, cap)
            if np.array_equal(new, labels):
                break
            labels = new
            for c in range(k):
                members = points[labels == c]
                if len(members):
                    mean = members.sum(axis=0)
                    norm = float(np.linalg.norm(mean))
                    centres[c] = mean / norm if norm > 0 else centres[c]
        score = float((points @ centres.T)[np.arange(m), labels].sum())
        if score > best_score + 1e-6:
            best_labels, best_score = labels, score
    return best_labels


def _seed_centres(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding on cosine distance."""
    import numpy as np

    m = len(points)
    chosen = [int(rng.integers(m))]
    closest = np.clip(1 - points @ points[chosen[0]], 0, None)
    for _ in range(1, k):
        total = float(closest.sum())
        pick = int(rng.choice(m, p=closest / total)) if total > 1e-9 else int(rng.integers(m))
        chosen.append(pick)
        closest = np.minimum(closest, np.clip(1 - points @ points[pick], 0, None))
    return points[chosen].copy()


def _assign(sims: np.ndarray, cap: int) -> np.ndarray:
    """Each point to its most similar centroid with room; the points with the most to lose choose first."""
    import numpy as np

    m, k = sims.shape
    best = sims.argmax(axis=1)
    if np.bincount(best, minlength=k).max() <= cap:
        return best
    ranked = np.argsort(-sims, axis=1, kind="stable")
    top2 = np.take_along_axis(sims, ranked[:, :2], axis=1)
    order = np.argsort(-(top2[:, 0] - top2[:, 1]), kind="stable")
    room = [cap] * k
    labels = np.empty(m, dtype=int)
    for i in order.tolist():
        for c in ranked[i].tolist():
            if room[c]:
                room[c] -= 1
                labels[i] = c
                break
    return labels


def _without_singletons(groups: list[list[int]], vectors: np.ndarray, hold: int) -> list[list[int]] | None:
    """Top-level groups of two skills or more: each lone skill joins the nearest group with room (None: impossible)."""
    import numpy as np

    groups = [list(g) for g in groups]
    while len(groups) > 1 and (lone := next((g for g in groups if len(g) == 1), None)) is not None:
        groups.remove(lone)
        point = vectors[lone[0]]
        nearest = sorted(groups, key=lambda g: -float(np.asarray(vectors[g].mean(axis=0)) @ point))
        target = next((g for g in nearest if len(g) < hold), None)
        if target is not None:
            target.append(lone[0])
            continue
        donor = next((g for g in nearest if len(g) >= 3), None)
        if donor is None:
            return None
        moved = max(donor, key=lambda i: float(vectors[i] @ point))
        donor.remove(moved)
        groups.append([lone[0], moved])
    return [sorted(g) for g in groups]
