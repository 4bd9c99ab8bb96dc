"""Navigation: a chain of SemIf decisions from the root of the tree to a leaf."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.base import Engine, check_engine, decide
from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult
from ..errors import check_type
from .manifests import SkillManifest
from .tree import SkillTree

CATEGORY_QUESTION = "Which category of skills fits this request?"
SKILL_QUESTION = "Which skill of the {category} category should handle this request?"
MAX_DEPTH = 16


@dataclass(frozen=True)
class RoutedDecision:
    """One step of a route: what was asked, what the engine answered, and at which level."""

    level: str  # "category" | "skill"
    request: DecisionRequest
    result: DecisionResult
    # True: each option's probability is the route's, that the route ends under it (one softmax over every leaf and
    # ``none``, summed over the option's leaves), so the chosen skill's is the route's however deep the tree is.
    # False: the engine's own, given that the walk reached this decision; the route's is then the product of the
    # probabilities chosen on the way (:func:`route_prefix`).
    whole: bool = False


@dataclass
class Route:
    """Where a request landed: a leaf, or ``None`` when nothing fits (and why)."""

    skill: SkillManifest | None
    decisions: list[RoutedDecision] = field(default_factory=list)
    reason: str = ""


def route_prefix(decisions: list[RoutedDecision]) -> float | None:
    """The probability that a route reaches its last decision, which multiplies that decision's probabilities to
    give the route's: 1 when the last decision's probabilities are the route's already (:attr:`RoutedDecision.whole`),
    else the product of the probabilities chosen before it, back to the nearest decision that holds the route's
    (that one's included). None when a decision on the way has no probability for its choice."""
    prefix = 1.0
    for step in reversed(decisions[:-1] if decisions and not decisions[-1].whole else []):
        chosen = step.result.probabilities.get(step.result.selected) if step.result.probabilities else None
        if chosen is None:
            return None
        prefix *= chosen
        if step.whole:
            break
    return prefix


def question_at(category: str) -> str:
    return SKILL_QUESTION.format(category=category) if category else CATEGORY_QUESTION


class TreeWalker:
    """The tree's decision walker: at each level pick a subcategory or a skill; ``none`` ends the walk."""

    name = "chain"

    def __init__(self, tree: SkillTree, engine: Engine) -> None:
        check_type("the tree", tree, SkillTree)
        check_engine(engine)
        self.tree = tree
        self.engine = engine

    async def aroute(self, text: str, *, start: str = "") -> Route:
        """Walk from ``start`` (default: the top) to a leaf or ``none``."""
        route = Route(skill=None)
        node = start
        for _ in range(MAX_DEPTH):
            options = self.tree.options_at(node)
            if len(options) == 1:  # only `none`
                route.reason = "the skill tree has no skills" if not node else f"the {node!r} category is empty"
                return route
            asked = DecisionRequest(state=text, question=question_at(node), options=options)
            answer = await decide(self.engine, asked)
            level = (
                "category"
                if answer.selected in self.tree.categories or (answer.selected == NONE_ID and not node)
                else "skill"
            )
            route.decisions.append(RoutedDecision(level, asked, answer))
            if answer.selected == NONE_ID:
                route.reason = (
                    f"no skill of the {node!r} category fits the request" if node else "no category fits the request"
                )
                return route
            if answer.selected in self.tree.skills:
                route.skill = self.tree.skills[answer.selected]
                return route
            node = answer.selected
        route.reason = "the tree is deeper than the router follows"
        return route
