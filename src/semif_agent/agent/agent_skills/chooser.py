"""The agent's view of the one chooser: a :class:`~semif_agent.tree.SkillTree` and the scorer ``semif run`` routes with.

Skill discovery ranks, lists and browses skills through a :class:`Chooser`;
deferred tools are ranked the same way (a one-category tree of the tools).
Nothing here scores texts itself: scores come from
:class:`semif_agent.routing.scoring.LeafScorer`, and trees from the
workspace or from :func:`semif_agent.tree.build.build_tree`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..._text import clip
from ...engine.base import embedding_function
from ...engine.lexical import LexicalEngine
from ...engine.registry import create_engine, local_available
from ...errors import EngineConfigError
from ...routing.scoring import LeafIndex, LeafScorer, top_indexes
from ...tree.build import LeafSpec, build_tree
from ...tree.manifests import Category, SkillManifest
from ...tree.tree import SkillTree
from .skill import Skill, describe_for_search

if TYPE_CHECKING:
    from ..._arrays import Indexes
    from ...engine.base import Engine

log = logging.getLogger("semif_agent.agent")

FLAT_CATEGORY = "all"


def scoring_engine(spec: Engine | str | None) -> Engine:
    """The engine for ``spec``: an engine as given, a name, or ``None`` (local when installed, else lexical)."""
    if spec is not None and not isinstance(spec, str):
        return spec
    name = spec or ("local" if local_available() else "lexical")
    try:
        engine = create_engine(name)
    except EngineConfigError as exc:
        if spec is not None and name != "local":
            raise
        log.warning("skills are ranked with the lexical engine: %s", exc)
        return LexicalEngine()
    if not callable(getattr(engine, "score", None)):
        raise EngineConfigError(f"engine {name!r} cannot score options; rank skills with local or lexical")
    return engine


class Chooser:
    """Ranking, categories and browsing over ``tree``, restricted to the ``names`` the agent has."""

    def __init__(
        self,
        tree: SkillTree,
        scorer: LeafScorer,
        names: Sequence[str],
        *,
        threshold: float | None = None,
        temperature: float | None = None,
    ) -> None:
        self.tree = tree
        self.scorer = scorer
        self.names = list(names)
        self._known = set(names)
        self.threshold = threshold if threshold is not None else scorer.default_threshold
        self.temperature = temperature or getattr(scorer.engine, "temperature", None)
        self._counts: dict[str, int] = {}
        self._mine: tuple[LeafIndex, Indexes | list[int]] | None = (
            None  # positions of the agent's skills in the scorer's index
        )

    @classmethod
    def for_skills(
        cls,
        skills: Sequence[Skill],
        engine: Engine,
        *,
        tree: SkillTree | None = None,
        scorer: LeafScorer | None = None,
        examples: str = "centroid",
        threshold: float | None = None,
        temperature: float | None = None,
    ) -> Chooser:
        """A chooser over ``tree`` when it holds every skill (a workspace's), else over a tree built from them.

        ``scorer`` (a :class:`LeafScorer` over ``tree``, e.g. the learned router's) ranks when given.
        """
        names = [s.name for s in skills]
        if tree is None or not set(names) <= set(tree.skills):
            tree, scorer = built_tree(skills, engine), None
        if scorer is None or scorer.tree is not tree:
            scorer = LeafScorer(tree, engine, examples=examples)
        return cls(tree, scorer, names, threshold=threshold, temperature=temperature)

    @classmethod
    def for_items(cls, items: Sequence[tuple[str, str]], engine: Engine) -> Chooser:
        """A chooser that only ranks ``(name, description)`` items (no categories to browse)."""
        tree = flat_tree(items)
        return cls(tree, LeafScorer(tree, engine, examples="off"), [name for name, _ in items])

    def threshold_for(self, text: str) -> float:
        """Where ``none`` starts for ``text``: the learned router's own ``none`` score, else the threshold."""
        none_score = getattr(self.scorer, "none_score", None)
        return float(none_score(text)) if callable(none_score) else self.threshold

    @property
    def engine_name(self) -> str:
        return str(getattr(self.scorer.engine, "name", "lexical"))

    @property
    def model(self) -> str | None:
        return getattr(self.scorer.engine, "model", None)

    def rank(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best of the agent's skills for ``query``, best first (ties keep the tree's order)."""
        if not self.names or k <= 0:
            return []
        if len(self._known) == len(self.scorer.names):  # the tree holds only the agent's skills: rank it whole
            return self.scorer.top(query, k)
        index = self.scorer.current()
        values = self.scorer.score_array(query, index)
        if self._mine is None or self._mine[0] is not index:
            positions = [i for i, name in enumerate(index.names) if name in self._known]
            self._mine = (index, index.numpy.asarray(positions, dtype=int) if index.numpy is not None else positions)
        mine = self._mine[1]
        subset = values[mine] if index.numpy is not None else [values[i] for i in mine]
        picked = top_indexes(subset, k, index.numpy)
        return [(index.names[int(mine[i])], float(subset[i])) for i in picked]

    def categories(self, parent: str) -> list[str]:
        """The categories under ``parent`` (``""``: the top) that hold some of the agent's skills."""
        return [c.name for c in self.tree.subcategories(parent) if self.count(c.name)]

    def has_category(self, name: str) -> bool:
        return name in self.tree.categories and bool(self.count(name))

    def description(self, category: str) -> str:
        return self.tree.categories[category].description

    def skills_in(self, category: str) -> list[str]:
        """The agent's skills directly in ``category``."""
        return [s.name for s in self.tree.children(category) if s.name in self._known]

    def count(self, category: str) -> int:
        if category not in self._counts:
            self._counts[category] = sum(1 for s in self.tree.leaves_under(category) if s.name in self._known)
        return self._counts[category]

    def category_line(self, name: str, limit: int = 180) -> str:
        return f"- {name} ({self.count(name)} skills): {clip(self.description(name), limit)}"


def built_tree(skills: Sequence[Skill], engine: Engine) -> SkillTree:
    """The tree of ``skills`` (categories of at most 15 children), embedded with ``engine``'s model when it has one."""
    flat = [LeafSpec(s.name, describe_for_search(s)) for s in skills]
    try:
        data = build_tree(flat, embed=embedding_function(engine))
    except Exception as exc:  # noqa: BLE001 - a flat tree still reaches every skill
        log.warning("the skill tree could not be built, listing skills flat: %s: %s", type(exc).__name__, exc)
        return flat_tree([(s.name, describe_for_search(s)) for s in skills])
    categories = {
        c["name"]: Category(c["name"], c.get("description", ""), c.get("parent", "")) for c in data["categories"]
    }
    leaves = {
        e["name"]: SkillManifest(name=e["name"], category=e["category"], description=e["description"])
        for e in data["skills"]
    }
    return SkillTree(categories, leaves)


def flat_tree(items: Sequence[tuple[str, str]]) -> SkillTree:
    """One category holding every item: enough to rank them."""
    category = Category(FLAT_CATEGORY, "Everything.")
    leaves = {name: SkillManifest(name=name, category=FLAT_CATEGORY, description=text) for name, text in items}
    return SkillTree({FLAT_CATEGORY: category}, leaves)
