"""How the model finds an on-demand skill, at any number of skills, without any skill hidden.

The reference listing puts every skill's name and description in the
prompt; popular clients cut that listing at a character budget and drop the
skills past it, silently. Here the listing has a token budget
(``prompt_budget``) and what it cannot list stays reachable:

- When every skill fits, the prompt lists them all (name and description),
  as the reference does.
- When they do not, the prompt says how many skills there are and lists,
  within the budget: a **shortlist** for the user's message (the top
  ``shortlist`` skills, picked before the turn), the **categories** of the
  skill tree, then as many more skills as fit; it names the tools that
  reach the rest: ``browse_skills(category)`` walks the tree and
  ``search_skills(query)`` ranks every skill.

One chooser: the tree is a :class:`~semif_agent.tree.SkillTree` (the
workspace's own when the agent has one, ``settings.tree``; else one built
from the agent's skills by :func:`semif_agent.tree.build.build_tree`), and
every ranking (the shortlist, search) is the
:class:`~semif_agent.routing.scoring.LeafScorer` ``semif run``'s strategies
route with (the local model blended with BM25; BM25 alone without it); see
:mod:`.chooser`. With ``settings.log``, every shortlist offered and every
skill the model activates (or a turn ends without) is a row of the
decision log (:mod:`.choices`).

The names the model has been shown (listed, shortlisted, found by search or
browsing) are the ``activate_skill`` enum: the enum grows as the model
explores, and never costs more than what was shown. ``activate_skill``
itself accepts any of the agent's skills.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from ..._text import clip
from ...errors import InvalidArgumentError
from ...tree.tree import SkillTree
from .._schema import model_schema
from ..errors import AgentConfigError
from ..tools import AgentTool
from ..usage import estimate_tokens
from .choices import ChoiceLog, as_log
from .chooser import Chooser, scoring_engine
from .skill import Skill

if TYPE_CHECKING:
    from ...engine.base import Engine
    from ...records import DecisionLog
    from ...routing.scoring import LeafScorer


class SkillSource(Protocol):
    """What discovery reads of the skills it offers (a :class:`~.registry.SkillRegistry` has it)."""

    def get(self, name: str) -> Skill | None: ...

    def on_demand_skills(self) -> list[Skill]: ...


log = logging.getLogger("semif_agent.agent")

_CLOSING_TOKENS = 40  # kept for the lines that count what is not listed
BROWSE_SKILLS = "browse_skills"
SEARCH_SKILLS = "search_skills"

HEADER = (
    "## Skills\nA skill holds instructions (and sometimes tools) for one kind of task. When a request "
    "matches a skill's description, call activate_skill with its name before you act; its instructions "
    "then appear in this prompt."
)


@dataclass(frozen=True)
class DiscoverySettings:
    """How skills are offered: the listing's token budget, the shortlist, search, the engine, the tree, the log.

    ``engine`` is an engine, ``"local"``, ``"lexical"``, or ``None`` (local
    when installed, else lexical). ``description_chars`` clips descriptions
    once the listing no longer holds every skill whole. ``tree`` is a
    :class:`~semif_agent.tree.SkillTree` holding the agent's skills (a
    workspace's: browsing and ranking then use it as ``semif run`` does),
    ranked by ``scorer`` (``semif run``'s own, e.g. the learned router's), or
    else with ``examples`` folded in as ``semif run`` folds them, and
    ``threshold`` and ``temperature`` as its routing uses them. ``log`` (a
    :class:`~semif_agent.records.DecisionLog` or a path) records every
    shortlist and activation as a training row.
    """

    prompt_budget: int = 2000
    shortlist: int = 5
    search_results: int = 8
    engine: Engine | str | None = None
    description_chars: int = 200
    tree: SkillTree | None = None
    scorer: LeafScorer | None = None
    examples: str = "centroid"
    threshold: float | None = None
    temperature: float | None = None
    log: DecisionLog | str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        for name in ("prompt_budget", "search_results", "description_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise AgentConfigError(f"{name} must be a whole number above 0, got {value!r}")
        if not isinstance(self.shortlist, int) or isinstance(self.shortlist, bool) or self.shortlist < 0:
            raise AgentConfigError(f"shortlist must be a whole number, 0 or more, got {self.shortlist!r}")
        if self.tree is not None and not isinstance(self.tree, SkillTree):
            raise AgentConfigError(f"tree must be a SkillTree, got {type(self.tree).__name__}")


@dataclass(frozen=True)
class Listing:
    """What the prompt shows of the skills: its text, the names in it, and whether any was left out."""

    text: str
    offered: frozenset[str] = frozenset()
    overflow: bool = False
    listed: int = 0
    total: int = 0


@dataclass
class _Built:
    """What depends only on the registered skills (rebuilt when they change)."""

    key: tuple[str, ...]
    skills: list[Skill]
    full: list[str]
    fits: bool
    chooser: Chooser | None = None


class SkillDiscovery:
    """The discovery side of one agent's :class:`~.registry.SkillRegistry`."""

    def __init__(self, registry: SkillSource, settings: DiscoverySettings | None = None) -> None:
        self._registry = registry
        self.settings = settings or DiscoverySettings()
        self._engine: Engine | None = None
        self._built: _Built | None = None
        self.discovered: set[str] = set()  # names shown by search and browsing this session
        self.version = 0
        target = as_log(self.settings.log)
        self.choices: ChoiceLog | None = ChoiceLog(target) if target is not None else None

    def configure(self, **changes: Any) -> None:
        """Change settings (see :class:`DiscoverySettings`)."""
        if "engine" in changes and changes["engine"] is not self.settings.engine:
            self._engine = None
        self.settings = replace(self.settings, **changes)
        if "log" in changes:
            target = as_log(self.settings.log)
            self.choices = ChoiceLog(target) if target is not None else None
        self._built = None
        self.version += 1

    def forget(self) -> None:
        """Forget what search and browsing showed this session."""
        self.discovered.clear()
        self.version += 1

    # -- the listing ---------------------------------------------------------

    def listing(self, shortlist: Sequence[str] = ()) -> Listing:
        """The prompt's skill section for a turn, with ``shortlist`` first when not every skill fits."""
        built = self._state()
        total = len(built.skills)
        if not total:
            return Listing("")
        if built.fits:
            text = "\n".join([HEADER, *built.full])
            return Listing(text, frozenset(s.name for s in built.skills), False, total, total)
        return self._budgeted(built, shortlist)

    def _budgeted(self, built: _Built, shortlist: Sequence[str]) -> Listing:
        settings, total = self.settings, len(built.skills)
        by_name = {s.name: s for s in built.skills}
        room = settings.prompt_budget
        intro = (
            f"{HEADER}\nYou have {total} skills; not all of them are listed here. Every skill can be found "
            f"with {SEARCH_SKILLS}(query), or by browsing its category with {BROWSE_SKILLS}(category)."
        )
        parts, offered = [intro], set()
        room -= estimate_tokens(intro) + 1 + _CLOSING_TOKENS  # the closing lines always fit

        def take(line: str) -> bool:
            nonlocal room
            cost = estimate_tokens(line) + 1
            if cost > room:
                return False
            parts.append(line)
            room -= cost
            return True

        picks = [name for name in shortlist if name in by_name]
        if picks and take("Likely skills for this request:"):
            for name in picks:
                if take(self._entry(by_name[name])):
                    offered.add(name)
        chooser = self._chooser(built)
        top = chooser.categories("")
        if top and take(f"Categories ({BROWSE_SKILLS}(category) lists a category's skills):"):
            shown = 0
            for name in top:
                if not take(chooser.category_line(name)):
                    break
                shown += 1
            if shown < len(top):
                parts.append(f"({len(top) - shown} more categories: {BROWSE_SKILLS}() lists them all.)")
        rest = [s for s in built.skills if s.name not in offered]
        if rest and room > 40 and take("More skills:"):
            for skill in rest:
                if room < 30 or not take(self._entry(skill)):
                    break
                offered.add(skill.name)
        left = total - len(offered)
        parts.append(f"({left} skills are not listed here: find them with {SEARCH_SKILLS} or {BROWSE_SKILLS}.)")
        return Listing("\n".join(parts), frozenset(offered), True, len(offered), total)

    def _entry(self, skill: Skill) -> str:
        return f"- {skill.name}: {clip(skill.description, self.settings.description_chars)}"

    # -- the shortlist, search and the log ------------------------------------

    async def preselect(self, message: str, *, run_id: str = "", model: str | None = None) -> tuple[str, ...]:
        """The shortlist for ``message`` (empty when every skill is listed anyway, or it is turned off).

        With a decision log, turn ``run_id`` begins there and its ranking is
        kept for the activation rows; it is logged when the prompt offers a
        shortlist from it.
        """
        built = self._state()
        choices = self.choices
        if choices is not None and run_id:
            choices.begin(run_id, message, model)
        if built.fits and choices is None:
            return ()
        try:  # off the event loop: the first time, the skills are embedded and the tree is built
            ranked = await asyncio.to_thread(self._preselect, built, message)
        except Exception as exc:  # noqa: BLE001 - no shortlist is better than no turn
            log.warning("the skill shortlist could not be made: %s: %s", type(exc).__name__, exc)
            return ()
        offered = () if built.fits else tuple(name for name, _ in ranked[: self.settings.shortlist])
        if choices is not None and choices.run_id:
            choices.ranked = list(ranked)
            if offered:
                chooser = self._chooser(built)
                choices.shortlist(
                    ranked[: self.settings.shortlist],
                    self.descriptions(),
                    threshold=chooser.threshold_for(message),
                    engine=chooser.engine_name,
                    model=chooser.model,
                    temperature=chooser.temperature,
                )
        return offered

    def _preselect(self, built: _Built, message: str) -> list[tuple[str, float]]:
        chooser = self._chooser(built)
        wanted = self.settings.shortlist if self.choices is None else max(self.settings.shortlist, 15)
        return chooser.rank(message, wanted) if wanted and message.strip() else []

    def search(self, query: str, k: int | None = None) -> list[Skill]:
        """The on-demand skills that best match ``query``, best first (they count as shown)."""
        found = self.find(query, k)
        self._shown(s.name for s in found)
        return found

    def find(self, query: str, k: int | None = None) -> list[Skill]:
        """:meth:`search` without counting the skills as shown (safe off the event loop)."""
        ranked = self._chooser(self._state()).rank(query, k or self.settings.search_results)
        return [skill for name, score in ranked if score > 0 and (skill := self._registry.get(name)) is not None]

    def descriptions(self) -> dict[str, str]:
        """The on-demand skills' descriptions by name."""
        return {s.name: s.description for s in self._state().skills}

    def record_activation(self, name: str, shown: Iterable[str]) -> None:
        """The model activated ``name`` among the skills ``shown`` to it (a training row, with a log)."""
        if self.choices is not None:
            self.choices.activation(name, list(shown), self.descriptions())

    def record_turn(self, shown: Iterable[str], *, stopped_by: str, text: str) -> None:
        """The turn ended: a ``none`` row if nothing shown was activated, and the outcome row (with a log)."""
        if self.choices is not None:
            self.choices.finish(list(shown), self.descriptions(), stopped_by=stopped_by, text=text)

    # -- the tree ------------------------------------------------------------

    def browse(self, category: str = "") -> str:
        """A category's subcategories and skills (the top-level categories for ``""``); they count as shown."""
        built = self._state()
        if not built.skills:
            return "There are no skills to browse."
        chooser = self._chooser(built)
        category = category.strip()
        top = chooser.categories("")
        if not category:
            return "Categories:\n" + "\n".join(chooser.category_line(name) for name in top)
        if not chooser.has_category(category):
            raise InvalidArgumentError(f"no category {category!r}; the top-level categories are: {', '.join(top)}")
        lines = [f"{category}: {chooser.description(category)}"]
        subcategories = chooser.categories(category)
        if subcategories:
            lines += ["Subcategories:", *(chooser.category_line(name) for name in subcategories)]
        names = chooser.skills_in(category)
        if names:
            by_name = {s.name: s for s in built.skills}
            lines += ["Skills:", *(self._entry(by_name[name]) for name in names)]
            self._shown(names)
        return "\n".join(lines)

    def _chooser(self, built: _Built) -> Chooser:
        if built.chooser is None:
            settings = self.settings
            built.chooser = Chooser.for_skills(
                built.skills,
                self._engine_now(),
                tree=settings.tree,
                scorer=settings.scorer,
                examples=settings.examples,
                threshold=settings.threshold,
                temperature=settings.temperature,
            )
        return built.chooser

    # -- tools ---------------------------------------------------------------

    def tools(self) -> list[AgentTool]:
        """``browse_skills`` and ``search_skills`` (only needed when not every skill is listed)."""
        discovery = self

        async def browse_skills(category: str = "") -> str:
            return discovery.browse(category)

        async def search_skills(query: str) -> str:
            found = await asyncio.to_thread(discovery.find, query)  # ranking off the loop
            if not found:
                return "No skill matches; try other words, or browse_skills."
            discovery._shown(s.name for s in found)
            lines = [discovery._entry(s) for s in found]
            return "Skills that match (activate one with activate_skill):\n" + "\n".join(lines)

        return [
            AgentTool(
                name=BROWSE_SKILLS,
                fn=browse_skills,
                input_model=_BrowseInput,
                read_only=True,
                description="List the skills and subcategories of a skill category (no category: the top-level categories).",
                input_schema=model_schema(_BrowseInput),
            ),
            AgentTool(
                name=SEARCH_SKILLS,
                fn=search_skills,
                input_model=_SearchInput,
                read_only=True,
                description="Find skills by what they do: describe the task in a few words.",
                input_schema=model_schema(_SearchInput),
            ),
        ]

    # -- internals -------------------------------------------------------------

    def _state(self) -> _Built:
        skills = self._registry.on_demand_skills()
        key = tuple(s.name for s in skills)
        built = self._built
        if built is None or built.key != key:
            full = [f"- {s.name}: {' '.join(s.description.split())}" for s in skills]
            fits = estimate_tokens("\n".join([HEADER, *full])) <= self.settings.prompt_budget
            built = self._built = _Built(key, skills, full, fits)
        return built

    def _engine_now(self) -> Engine:
        if self._engine is None:
            self._engine = scoring_engine(self.settings.engine)
        return self._engine

    def _shown(self, names: Iterable[str]) -> None:
        before = len(self.discovered)
        self.discovered.update(names)
        if len(self.discovered) != before:
            self.version += 1


class _BrowseInput(BaseModel):
    category: str = Field(
        default="", description="A category name from the skills listing or an earlier browse; empty for the top level."
    )


class _SearchInput(BaseModel):
    query: str = Field(description="What the skill should do, in a few words.")
