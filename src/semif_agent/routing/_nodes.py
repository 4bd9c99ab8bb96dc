"""What each decision of a tree offers, and where its options' scores come from.

A leaf-aware strategy scores every leaf once per request, then derives the
score of each option it offers: a skill's own score, a category's best leaf's,
``none`` the threshold. A :class:`NodeTable` holds, for one node of one version
of the tree, the options offered there and the leaf indexes behind each of
them, laid end to end, so that with numpy an option's score is one
``np.maximum.reduceat`` over the gathered leaf scores, not a walk over leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..engine.decisions import NONE_ID, Option
from ..tree.tree import SkillTree

NO_LEAF_SCORE = -1.0  # a category with no leaves (never offered by the tree, kept for safety)


class NodeTable:
    """The options offered at ``node`` and, for each, the leaves whose best score it takes."""

    def __init__(
        self, tree: SkillTree, node: str, position: Mapping[str, int], numpy: ModuleType | None = None
    ) -> None:
        self.node = node
        self.options: tuple[Option, ...] = tuple(tree.options_at(node))
        self.ids: tuple[str, ...] = tuple(o.id for o in self.options)
        self._np = numpy
        groups: list[list[int]] = []
        self._slots: list[int] = []  # option index of each group
        self._fixed: dict[int, float] = {}  # option index -> a score that needs no leaf
        for slot, option in enumerate(self.options):
            if option.id == NONE_ID:
                continue
            if option.id in position:
                leaves = [position[option.id]]
            else:
                leaves = [position[s.name] for s in tree.leaves_under(option.id) if s.name in position]
            if not leaves:
                self._fixed[slot] = NO_LEAF_SCORE
                continue
            groups.append(leaves)
            self._slots.append(slot)
        self._none = self.ids.index(NONE_ID) if NONE_ID in self.ids else None
        if numpy is not None:
            flat = [i for leaves in groups for i in leaves]
            starts, at = [], 0
            for leaves in groups:
                starts.append(at)
                at += len(leaves)
            self._flat = numpy.array(flat, dtype=numpy.intp)
            self._starts = numpy.array(starts, dtype=numpy.intp)
        else:
            self._groups = groups

    def masses(self, leaf_probabilities: Any, none_probability: float) -> list[float]:
        """Each option's probability, in the options' order: the sum of its leaves' (``none``: its own)."""
        out = [0.0] * len(self.options)
        if self._slots:
            if self._np is not None:
                total = self._np.add.reduceat(leaf_probabilities[self._flat], self._starts).tolist()
            else:
                total = [sum(leaf_probabilities[i] for i in leaves) for leaves in self._groups]
            for slot, value in zip(self._slots, total):
                out[slot] = value
        if self._none is not None:
            out[self._none] = none_probability
        return out

    def scores(self, leaf_scores: Any, none_score: float) -> list[float]:
        """Each option's score, in the options' order, from the scores of every leaf."""
        out = [NO_LEAF_SCORE] * len(self.options)
        if self._slots:
            if self._np is not None:
                best = self._np.maximum.reduceat(leaf_scores[self._flat], self._starts).tolist()
            else:
                best = [max(leaf_scores[i] for i in leaves) for leaves in self._groups]
            for slot, value in zip(self._slots, best):
                out[slot] = value
        for slot, value in self._fixed.items():
            out[slot] = value
        if self._none is not None:
            out[self._none] = none_score
        return out
