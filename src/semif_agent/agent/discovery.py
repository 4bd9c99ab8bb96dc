"""How the model finds an on-demand skill, at any number of skills, without any skill hidden.

The reference listing puts every skill's name and description in the
prompt; popular clients cut that listing at a character budget and drop the
skills past it, silently. Here the listing has a token budget
(``prompt_budget``) and what it cannot list stays reachable:

- When every skill fits, the prompt lists them all (name and description),
  as the reference does.
- When they do not, the prompt says how many skills there are and lists,
  within the budget: a **shortlist** for the user's message (the top
  ``shortlist`` skills by the local scorer, picked before the turn), the
  **categories** of the skill tree (built with
  :func:`semif_agent.tree.build.build_tree`), then as many more skills
  as fit; it names the tools that reach the rest: ``browse_skills(category)``
  walks the tree and ``search_skills(query)`` ranks every skill with the
  SemIf engine (the local model blended with BM25; BM25 alone without it).

The names the model has been shown (listed, shortlisted, found by search or
browsing) are the ``activate_skill`` enum: the enum grows as the model
explores, and never costs more than what was shown. ``activate_skill``
itself accepts any of the agent's skills.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ._ranking import RankIndex, resolve_engine
from ._skill_tree import SkillTreeView, build_skill_tree
from .errors import AgentConfigError
from .skills import Skill, describe_for_search
from ._schema import model_schema
from .tools import AgentTool
from .usage import estimate_tokens

if TYPE_CHECKING:
    from .skill_registry import SkillRegistry

log = logging.getLogger("semif_agent.agent")

_CLOSING_TOKENS = 40  # kept for the lines that count what is not listed
BROWSE_SKILLS = "browse_skills"
SEARCH_SKILLS = "search_skills"

HEADER = ("## Skills\nA skill holds instructions (and sometimes tools) for one kind of task. When a request "
          "matches a skill's description, call activate_skill with its name before you act; its instructions "
          "then appear in this prompt.")


@dataclass(frozen=True)
class DiscoverySettings:
    """How skills are offered: the listing's token budget, the shortlist, search, the engine.

    ``engine`` is an engine, ``"local"``, ``"lexical"``, or ``None`` (local
    when installed, else lexical). ``description_chars`` clips descriptions
    once the listing no longer holds every skill whole.
    """

    prompt_budget: int = 2000
    shortlist: int = 5
    search_results: int = 8
    engine: Any = None
    description_chars: int = 200

    def __post_init__(self) -> None:
        for name in ("prompt_budget", "search_results", "description_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise AgentConfigError(f"{name} must be a whole number above 0, got {value!r}")
        if not isinstance(self.shortlist, int) or isinstance(self.shortlist, bool) or self.shortlist < 0:
            raise AgentConfigError(f"shortlist must be a whole number, 0 or more, got {self.shortlist!r}")


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
    index: RankIndex | None = None
    tree: SkillTreeView | None = None


class SkillDiscovery:
    """The discovery side of one agent's :class:`~.skill_registry.SkillRegistry`."""

    def __init__(self, registry: SkillRegistry, settings: DiscoverySettings | None = None) -> None:
        self._registry = registry
        self.settings = settings or DiscoverySettings()
        self._engine: Any = None
        self._built: _Built | None = None
        self.discovered: set[str] = set()  # names shown by search and browsing this session
        self.version = 0

    def configure(self, **changes: Any) -> None:
        """Change settings (see :class:`DiscoverySettings`)."""
        if "engine" in changes and changes["engine"] is not self.settings.engine:
            self._engine = None
        self.settings = replace(self.settings, **changes)
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
        intro = (f"{HEADER}\nYou have {total} skills; not all of them are listed here. Every skill can be found "
                 f"with {SEARCH_SKILLS}(query), or by browsing its category with {BROWSE_SKILLS}(category).")
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
        tree = self._tree(built)
        if tree.top and take(f"Categories ({BROWSE_SKILLS}(category) lists a category's skills):"):
            shown = 0
            for name in tree.top:
                if not take(tree.line(name)):
                    break
                shown += 1
            if shown < len(tree.top):
                parts.append(f"({len(tree.top) - shown} more categories: {BROWSE_SKILLS}() lists them all.)")
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
        return f"- {skill.name}: {_clip(skill.description, self.settings.description_chars)}"

    # -- the shortlist and search ------------------------------------------

    async def preselect(self, message: str) -> tuple[str, ...]:
        """The shortlist for ``message`` (empty when every skill is listed anyway, or it is turned off)."""
        built = self._state()
        if built.fits:
            return ()
        try:  # off the event loop: the first time, the skills are embedded and the tree is built
            return await asyncio.to_thread(self._preselect, built, message)
        except Exception as exc:  # noqa: BLE001 - no shortlist is better than no turn
            log.warning("the skill shortlist could not be made: %s: %s", type(exc).__name__, exc)
            return ()

    def _preselect(self, built: _Built, message: str) -> tuple[str, ...]:
        self._tree(built)
        if not self.settings.shortlist or not message.strip():
            return ()
        return tuple(name for name, _ in self._rank(message, self.settings.shortlist))

    def search(self, query: str, k: int | None = None) -> list[Skill]:
        """The on-demand skills that best match ``query``, best first (they count as shown)."""
        found = self.find(query, k)
        self._shown(s.name for s in found)
        return found

    def find(self, query: str, k: int | None = None) -> list[Skill]:
        """:meth:`search` without counting the skills as shown (safe off the event loop)."""
        ranked = self._rank(query, k or self.settings.search_results)
        return [skill for name, score in ranked if score > 0 and (skill := self._registry.get(name)) is not None]

    def _rank(self, query: str, k: int) -> list[tuple[str, float]]:
        built = self._state()
        if built.index is None:
            items = [(s.name, describe_for_search(s)) for s in built.skills]
            built.index = RankIndex(items, self._engine_now())
        return built.index.rank(query, k)

    # -- the tree ------------------------------------------------------------

    def browse(self, category: str = "") -> str:
        """A category's subcategories and skills (the top-level categories for ``""``); they count as shown."""
        built = self._state()
        if not built.skills:
            return "There are no skills to browse."
        tree = self._tree(built)
        category = category.strip()
        if not category:
            return "Categories:\n" + "\n".join(tree.line(name) for name in tree.top)
        node = tree.categories.get(category)
        if node is None:
            raise ValueError(f"no category {category!r}; the top-level categories are: {', '.join(tree.top)}")
        lines = [f"{category}: {node.description}"]
        if node.children:
            lines += ["Subcategories:", *(tree.line(name) for name in node.children)]
        if node.skills:
            by_name = {s.name: s for s in built.skills}
            lines += ["Skills:", *(self._entry(by_name[name]) for name in node.skills if name in by_name)]
            self._shown(node.skills)
        return "\n".join(lines)

    def _tree(self, built: _Built) -> SkillTreeView:
        if built.tree is None:
            built.tree = build_skill_tree(built.skills, self._engine_now())
        return built.tree

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
            AgentTool(name=BROWSE_SKILLS, fn=browse_skills, input_model=_BrowseInput, read_only=True,
                      description="List the skills and subcategories of a skill category (no category: the top-level categories).",
                      input_schema=model_schema(_BrowseInput)),
            AgentTool(name=SEARCH_SKILLS, fn=search_skills, input_model=_SearchInput, read_only=True,
                      description="Find skills by what they do: describe the task in a few words.",
                      input_schema=model_schema(_SearchInput)),
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

    def _engine_now(self) -> Any:
        if self._engine is None:
            self._engine = resolve_engine(self.settings.engine)
        return self._engine

    def _shown(self, names: Any) -> None:
        before = len(self.discovered)
        self.discovered.update(names)
        if len(self.discovered) != before:
            self.version += 1


class _BrowseInput(BaseModel):
    category: str = Field(default="", description="A category name from the skills listing or an earlier browse; empty for the top level.")


class _SearchInput(BaseModel):
    query: str = Field(description="What the skill should do, in a few words.")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
