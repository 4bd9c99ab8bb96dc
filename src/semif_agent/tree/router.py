"""Navigation: a chain of SemIf decisions from the root of the tree to a leaf."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.base import Engine, decide
from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult
from .manifests import SkillManifest
from .tree import SkillTree

CATEGORY_QUESTION = "Which category of skills fits this request?"
SKILL_QUESTION = "Which skill of the {category} category should handle this request?"


@dataclass(frozen=True)
class RoutedDecision:
    """One step of a route: what was asked, what the engine answered, and at which level."""

    level: str  # "category" | "skill"
    request: DecisionRequest
    result: DecisionResult


@dataclass
class Route:
    """Where a request landed: a leaf, or ``None`` when nothing fits (and why)."""

    skill: SkillManifest | None
    decisions: list[RoutedDecision] = field(default_factory=list)
    reason: str = ""


class Router:
    """Walks ``tree`` with ``engine``: pick a category, then a skill in it; ``none`` ends the walk."""

    def __init__(self, tree: SkillTree, engine: Engine) -> None:
        self.tree = tree
        self.engine = engine

    async def aroute(self, text: str) -> Route:
        route = Route(skill=None)
        categories = self.tree.category_options()
        if len(categories) == 1:  # only `none`
            route.reason = "the skill tree has no skills"
            return route
        asked = DecisionRequest(state=text, question=CATEGORY_QUESTION, options=categories)
        answer = await decide(self.engine, asked)
        route.decisions.append(RoutedDecision("category", asked, answer))
        if answer.selected == NONE_ID:
            route.reason = "no category fits the request"
            return route
        category = answer.selected
        asked = DecisionRequest(
            state=text,
            question=SKILL_QUESTION.format(category=category),
            options=self.tree.skill_options(category),
        )
        answer = await decide(self.engine, asked)
        route.decisions.append(RoutedDecision("skill", asked, answer))
        if answer.selected == NONE_ID:
            route.reason = f"no skill of the {category!r} category fits the request"
            return route
        route.skill = self.tree.skills[answer.selected]
        return route
