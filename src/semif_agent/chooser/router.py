"""``semif_agent.Router``: the chooser as one library face, ``find``, ``load``, ``run`` and ``report``.

It routes through what ``semif run`` routes with (the workspace's settings,
its learned router when trained: :class:`~semif_agent.loop.settings.RunSettings`),
runs skills through the skill loop (confined, logged, assessed), and logs
every ``find`` as a decision, so what a client does next teaches the router
(:mod:`._picks`). The ``semif mcp`` server is a thin face over it.

Each method is async (``afind``, ``aload``, ``arun``, ``areport``); the
plain ones are thin sync wrappers over them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._sync import run_sync
from .._text import clip
from ..catalog.descriptor import resource_files_at
from ..catalog.errors import SkillParseError, SkillPathError
from ..catalog.frontmatter import read_opened_skill_md, split_document
from ..catalog.paths import open_file_inside, open_skill_folder
from ..engine.base import Engine
from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from ..errors import InvalidArgumentError, UnknownSkillError
from ..loop.runner import SkillRunner
from ..loop.settings import RunSettings
from ..records import AnyRow, DecisionLog, DecisionRow, LabelRow, label_row, resolve_run_id
from ..routing.strategies import SHORTLIST_SIZE
from ..skills import check_text, new_request_id
from ..tree.manifests import SkillManifest
from ..tree.skill_md import skill_md_locations
from ..tree.tree import NONE_SKILL
from ..workspace import Workspace
from ._batch import EmbedBatcher
from ._picks import FIND_QUESTION, Find, Picks, pick_rows
from ._ranking import Ranked, rank, ranking_strategy
from ._rerank import rerank as rerank_shortlist
from ._rerank import rerank_configured
from .results import Candidate, LoadedSkill, RunOutcome, Shortlist

MAX_REQUEST_BYTES = 64 * 1024  # a request longer than this is refused (no skill needs a book to be chosen)
MAX_FILE_BYTES = 512 * 1024  # a skill's file read whole, at most
DESCRIPTION_CHARS = 160  # a shortlisted skill's description, on one line
DEFAULT_K = 5
MAX_MADE = 100_000  # finds and runs a router remembers the maker of (a report on an older one reads the log)


@dataclass(frozen=True)
class _Parts:
    """What every call of a moment uses together: the skill loop (its tree, strategy and log) and the strategy
    finds rank with (the runner's own where it scores every leaf, else one that does). Swapped whole."""

    runner: SkillRunner
    ranker: Any


class Router:
    """The workspace's skills, found, loaded, run and reported on (see the module docstring).

    ``workspace`` is a :class:`~semif_agent.workspace.Workspace` or its folder.
    ``source`` tags the rows it logs (``"mcp"`` for the server, ``"library"``
    by default); ``client`` names who calls (a label's ``by``), and each call
    may name its own, and its ``session`` (the server's connection): a pick
    teaches only about a find of the same client and session (:mod:`._picks`). ``settings`` are the workspace's unless given; ``engine``
    is built from them unless given. ``rerank`` has the engine re-rank each
    ``find``'s shortlist (None: as the workspace says, :mod:`._rerank`). The
    tree and model load on first use.
    """

    def __init__(
        self,
        workspace: Workspace | str | os.PathLike[str],
        *,
        source: str = "library",
        client: str = "library",
        settings: RunSettings | None = None,
        engine: str | Engine | None = None,
        rerank: bool | None = None,
    ) -> None:
        ws = workspace if isinstance(workspace, Workspace) else Workspace.load(workspace)
        self.settings = settings or RunSettings.resolve(ws, engine=engine)
        self._resolves = settings is None  # the settings are the workspace's: read again on reload (semif train)
        self._engine_given = engine
        self.workspace = self.settings.needs_workspace("a router")
        self.source = source
        self.client = client
        self.rerank = rerank
        self._engine = engine
        self._parts: _Parts | None = None
        self._building = threading.Lock()
        self._picks = Picks()
        self._made: OrderedDict[str, str] = OrderedDict()  # the ids of this router's finds and runs, by who made them
        self._scanner: ThreadPoolExecutor | None = None  # where a report on an id not made here reads the log
        self._batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EmbedBatcher] = weakref.WeakKeyDictionary()

    # -- the parts, built on first use ----------------------------------------

    @property
    def runner(self) -> SkillRunner:
        """The skill loop ``run`` goes through; its tree and strategy are ``find``'s."""
        return self._current().runner

    @property
    def skills(self) -> dict[str, SkillManifest]:
        """Every skill of the tree, by name."""
        return self.runner.tree.skills

    def refresh(self) -> None:
        """Read the skills from disk again on next use (a skill was added, edited or removed); the model stays."""
        self._parts = None

    def reload(self) -> int:
        """Read the skills (and the learned router) from disk again now, make ready all a find needs (the skills
        embedded, the act threshold measured), and switch to them in one step: a call under way goes on with the
        tree it started with, the next one sees the new tree whole. Returns the number of skills. Blocking: a server
        calls it in a thread, and goes on answering with the old tree meanwhile."""
        if self._resolves:  # what `semif train` switched (data/routing.json), read again
            options = self.settings.engine_options()
            self.settings = RunSettings.resolve(self.workspace, engine=self._engine_given)
            if self._engine_given is None and self.settings.engine_options() != options:
                self._engine = (
                    None  # another encoder switched in (semif train --encoder, semif encoder off): its engine
                )
        parts = self._build()
        run_sync(parts.runner.aact_threshold(), "Router.reload")
        scorer = getattr(parts.ranker, "scorer", None)
        if scorer is not None:  # the leaves' vectors, index and calibration, made before any find sees this tree
            scorer.calibration(scorer.current())
        self._parts = parts
        return len(parts.runner.tree.skills)

    def _current(self) -> _Parts:
        """The tree, runner and ranking strategy every call of the moment uses (built on first use)."""
        parts = self._parts
        if parts is None:
            with self._building:  # two threads asking at once build it once
                parts = self._parts
                if parts is None:
                    parts = self._parts = self._build()
        return parts

    def _build(self) -> _Parts:
        runner = SkillRunner.from_settings(self.settings, **({"engine": self._engine} if self._engine else {}))
        self._engine = runner.engine
        return _Parts(runner, ranking_strategy(runner.strategy, runner.tree, runner.engine))

    def skill(self, name: str, *, parts: _Parts | None = None) -> SkillManifest:
        """The skill ``name`` (its id, or its name as its SKILL.md writes it); an :class:`UnknownSkillError` naming
        it when the tree has none."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidArgumentError("a skill name must be non-empty text")
        found = (parts or self._current()).runner.tree.find(name.strip())
        if found is None:
            raise UnknownSkillError(f"no skill {name!r} in {self.workspace.root} (find_skills lists what fits)")
        return found

    # -- find -------------------------------------------------------------------

    def find(
        self,
        request: str,
        k: int = DEFAULT_K,
        *,
        client: str | None = None,
        rerank: bool | None = None,
        session: Hashable = None,
    ) -> Shortlist:
        return run_sync(self.afind(request, k, client=client, rerank=rerank, session=session), "Router.find")

    async def afind(
        self,
        request: str,
        k: int = DEFAULT_K,
        *,
        client: str | None = None,
        rerank: bool | None = None,
        session: Hashable = None,
    ) -> Shortlist:
        """The ``k`` skills most likely to serve ``request`` (1 to 15), best first, logged as one decision.

        ``rerank`` asks the workspace's engine to re-rank the 15 best (:mod:`._rerank`; None: as the router's
        ``rerank``, else as the workspace says), logged as a second decision of the same choice id.
        """
        text = checked_request(request)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= SHORTLIST_SIZE:
            raise InvalidArgumentError(f"k must be a whole number from 1 to {SHORTLIST_SIZE}, not {k!r}")
        await self._embedded(text)  # the request embedded with the other finds of the moment, off the event loop
        parts = self._current()
        runner, ranker = parts.runner, parts.ranker
        leaves = runner.tree.skills
        reranking = self._reranks(rerank, parts)
        ranked = rank(ranker, text, SHORTLIST_SIZE if reranking else k)
        choice_id = new_request_id()
        who = self._who(client)
        self._log_shortlist(parts, choice_id, 1, text, ranked, ranker.scorer.engine, who)
        self._remember(choice_id, who)
        steps = 1
        if reranking:
            descriptions = {name: leaves[name].description for name in ranked.names}
            answer = await rerank_shortlist(runner.engine, text, ranked, descriptions)
            if answer.result is not None:
                steps = 2
                runner.log.append(
                    DecisionRow.of(
                        run_id=choice_id,
                        step=steps,
                        kind="shortlist",
                        skill=None,
                        request=answer.request,
                        result=answer.result,
                        request_id=choice_id,
                        source=self.source,
                        client=who,
                    ).to_row()
                )
            ranked = answer.ranked.top(k)
        candidates = tuple(
            Candidate(
                name,
                p,
                clip(leaves[name].description, DESCRIPTION_CHARS),
                leaves[name].kind,
                copies,
                tuple(str(skill_folder(leaves[n])) for n in (name, *copies)) if copies else (),
            )
            for name, p, copies in zip(ranked.names, ranked.probabilities, ranked.copies or [()] * len(ranked.names))
        )
        # what a run would do: best is the run's own answer, when the run routes with the strategy that ranked (an
        # engine that scores); a model's chain would cost a call per find, and best is then the ranking's first
        verdict = await runner.adecide(text) if ranker is runner.strategy else None
        shown_as = {copy: c.name for c in candidates for copy in c.copies}
        shortlist = Shortlist(choice_id, text, candidates, ranked.none_probability, verdict, shown_as)
        options = [Option(c.name, leaves[c.name].description) for c in candidates]
        first = shortlist.best if shortlist.best != NONE_ID else None
        held_back = (verdict.rule, verdict.reason) if verdict is not None and verdict.handed_back else None
        self._picks.add(Find(choice_id, text, who, options, first, held_back, steps=steps, session=session))
        return shortlist

    async def _embedded(self, text: str) -> None:
        """Have ``text``'s vector in the embedder's cache: embedded in a thread, in one batch with the texts other
        finds of the moment ask for (:class:`EmbedBatcher`); at once when the ranking embeds nothing."""
        scorer = getattr(self._current().ranker, "scorer", None)
        if scorer is None or not getattr(scorer, "embedded", False):  # a ranking that embeds nothing (lexical)
            return
        embedder = scorer.embedder
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None or batcher.embed != embedder.embed:  # a batcher per loop and embedder
            batcher = self._batchers[loop] = EmbedBatcher(embedder.embed)
        await batcher.embedded(text)

    def _reranks(self, asked: bool | None, parts: _Parts) -> bool:
        if asked is None:
            asked = self.rerank
        return rerank_configured(self.workspace, parts.runner.engine) if asked is None else bool(asked)

    def _remember(self, made: str, who: str) -> None:
        """That ``who`` made the find or run ``made`` (the latest :data:`MAX_MADE` kept): what ``report`` checks first."""
        self._made[made] = who
        while len(self._made) > MAX_MADE:
            self._made.popitem(last=False)

    def _log_shortlist(
        self, parts: _Parts, choice_id: str, step: int, text: str, ranked: Ranked, scorer: Engine, who: str
    ) -> None:
        """The ranker's shortlist of ``text`` as a decision row: its skills and ``none``, their scores and probabilities."""
        leaves = parts.runner.tree.skills
        options = [Option(name, leaves[name].description) for name in ranked.names]
        probabilities = {**dict(zip(ranked.names, ranked.probabilities)), NONE_ID: ranked.none_probability}
        parts.runner.log.append(
            DecisionRow.of(
                run_id=choice_id,
                step=step,
                kind="shortlist",
                skill=None,
                request=DecisionRequest(text, FIND_QUESTION, [*options, NONE_SKILL]),
                result=DecisionResult(
                    ranked.best,
                    {**dict(zip(ranked.names, ranked.scores)), NONE_ID: ranked.none_score},
                    probabilities,
                    engine=scorer.name,
                    model=getattr(scorer, "model", None),
                ),
                request_id=choice_id,
                source=self.source,
                client=who,
            ).to_row()
        )

    # -- load and read ----------------------------------------------------------

    def load(
        self, name: str, *, choice_id: str | None = None, client: str | None = None, session: Hashable = None
    ) -> LoadedSkill:
        return run_sync(self.aload(name, choice_id=choice_id, client=client, session=session), "Router.load")

    async def aload(
        self, name: str, *, choice_id: str | None = None, client: str | None = None, session: Hashable = None
    ) -> LoadedSkill:
        """A SKILL.md skill's instructions and its files, or a code skill's manifest; a pick after a find."""
        leaf = self.skill(name)
        if leaf.is_skill_md:
            if leaf.source is None:
                raise UnknownSkillError(f"skill {leaf.name!r} names no SKILL.md")
            skill_md = leaf.source.name
            with self._skill_folder(leaf) as folder:
                opened = open_file_inside(folder, skill_md)
                if opened is None:
                    raise SkillParseError(f"cannot read {leaf.source}: not a regular file of its folder")
                text = read_opened_skill_md(opened, str(leaf.source))
                files = resource_files_at(os.dup(folder))
            instructions = split_document(text, path=str(leaf.source)).body.strip()
            found = LoadedSkill(
                leaf.name, leaf.kind, leaf.description, instructions, tuple(f for f in files if f != skill_md)
            )
        else:
            found = LoadedSkill(leaf.name, leaf.kind, leaf.description, manifest=leaf.to_dict())
        self._picked(leaf, self._who(client), session, choice_id=choice_id)
        return found

    def read_file(self, name: str, path: str) -> str:
        """A text file of the SKILL.md skill ``name``'s folder; a path that leaves it is refused, and so is a link at
        any component below the skills location the skill was found in (:meth:`_skill_folder`)."""
        leaf = self.skill(name)
        if not leaf.is_skill_md or leaf.source is None:
            raise InvalidArgumentError(f"{leaf.name} is a code skill: it has no folder to read (load it instead)")
        if not isinstance(path, str) or not path.strip():
            raise InvalidArgumentError("a file path must be non-empty text, relative to the skill's folder")
        with self._skill_folder(leaf) as folder:
            opened = open_file_inside(folder, path)
        if opened is None:
            raise SkillPathError(f"{path!r} is not a file of skill {leaf.name}")
        with os.fdopen(opened, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise InvalidArgumentError(f"{path} is over {MAX_FILE_BYTES // 1024} KiB: too large to read whole")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidArgumentError(f"{path} is not UTF-8 text") from None

    @contextlib.contextmanager
    def _skill_folder(self, leaf: SkillManifest) -> Iterator[int]:
        """A descriptor of the SKILL.md skill ``leaf``'s folder, opened from the skills location it was found in
        with no link followed below it: a folder swapped for a link since the tree saw it (to lead out of the
        workspace) is refused, at whatever moment the swap happens, as the scan never follows one either."""
        locations = [location.path for location in skill_md_locations(self.workspace)]
        try:
            folder = open_skill_folder(locations, leaf.source.parent if leaf.source is not None else "")
        except OSError:
            raise SkillPathError(f"the folder of skill {leaf.name} is gone or is now a link: not read") from None
        try:
            yield folder
        finally:
            os.close(folder)

    # -- run ------------------------------------------------------------------------

    def run(
        self,
        name: str,
        request: str,
        *,
        choice_id: str | None = None,
        client: str | None = None,
        session: Hashable = None,
    ) -> RunOutcome:
        return run_sync(self.arun(name, request, choice_id=choice_id, client=client, session=session), "Router.run")

    async def arun(
        self,
        name: str,
        request: str,
        *,
        choice_id: str | None = None,
        client: str | None = None,
        session: Hashable = None,
    ) -> RunOutcome:
        """Run skill ``name`` on ``request`` through the skill loop: a code skill's body confined, a SKILL.md
        skill's script where the workspace allows scripts (else its instructions come back to follow).

        The run is labelled as the client's pick (``source: "implicit"``): what its assessment says teaches
        training as the client's word, capped like every pick, never as the workspace's own.

        One answer per request: a run of the skill a find of the request names best and hands back (the request's
        own answer where the run routes with the strategy that ranks, else the find the run follows: its
        ``choice_id``, or the same request) hands back too, for the same reason; a run of another skill is the
        client's own choice, and acts unless the request says not to."""
        text = checked_request(request)
        parts = self._current()
        runner = parts.runner
        leaf = self.skill(name, parts=parts)
        who = self._who(client)
        found = self._picks.answered(who, session=session, choice_id=choice_id, request=text)
        held_back = found.held_back if found is not None and found.first == leaf.name else None
        if parts.ranker is runner.strategy:
            # the request's own answer, whatever find (or made-up choice id, or other caller) the run names: the skill
            # a find would name best and hand back is handed back when it is run
            await self._embedded(text)
            verdict = await runner.adecide(text)
            if verdict.handed_back and verdict.skill == leaf.name:
                held_back = (verdict.rule, verdict.reason)
        self._picked(leaf, who, session, choice_id=choice_id, request=text)
        result = await runner.arun(text, skill=leaf.name, held_back=held_back, client=who)
        if result.run_id:  # the run's skill is the client's pick, not a route: what it teaches is the client's
            self._remember(result.run_id, who)
            runner.log.append(
                LabelRow(run_id=result.run_id, by=who, skill=leaf.name, has_skill=True, source="implicit").to_row()
            )
        return RunOutcome(
            run_id=result.run_id,
            skill=result.skill,
            outcome=result.assessment.label,
            result=result.action.action_log,
            state=result.action.new_state,
            changes=result.changes.to_dict(),
            instructions=result.instructions,
            error=result.error,
            handed_back=result.handed_back,
            reason=result.gate.reason if result.gate is not None else result.route.reason,
        )

    # -- report ---------------------------------------------------------------------

    def report(
        self,
        id: str,
        outcome: str | None,
        *,
        skill: str | None = None,
        note: str | None = None,
        client: str | None = None,
    ) -> str:
        return run_sync(self.areport(id, outcome, skill=skill, note=note, client=client), "Router.report")

    async def areport(
        self,
        id: str,
        outcome: str | None,
        *,
        skill: str | None = None,
        note: str | None = None,
        client: str | None = None,
    ) -> str:
        """Label the run or find ``id`` (a prefix will do): its real ``outcome`` (success or failure), the ``skill``
        it should have gone to (``"none"``: no skill fits), a ``note``. Returns the full id labelled.

        A client reports only on its own finds and runs (those logged under its name): never on a run a person
        made, nor on another client's."""
        if not isinstance(id, str) or not id.strip():
            raise InvalidArgumentError("an id must be non-empty text: a run id or a find's choice id")
        log = self.runner.log
        who = self._who(client)
        given = id.strip()
        if self._made.get(given) == who:  # a find or run this router made for the caller: the log need not be read
            run_id = given
        else:  # read from the log, in the router's one scanning thread: a flood of them waits there, alone
            scanning = self._scanner = self._scanner or ThreadPoolExecutor(1, thread_name_prefix="semif-log-scan")
            run_id = await asyncio.get_running_loop().run_in_executor(scanning, _made_in_log, log, given, who)
        no_skill = skill == NONE_ID
        if skill is not None and not no_skill:
            skill = self.skill(skill).name
        row = label_row(
            run_id,
            by=who,
            skill=None if no_skill else skill,
            no_skill=no_skill,
            outcome=outcome,
            note=note,
            source="client",
        )
        log.append(row)
        return run_id

    # -- internals ------------------------------------------------------------------

    def _who(self, client: str | None) -> str:
        return client.strip() if isinstance(client, str) and client.strip() else self.client

    def _picked(
        self,
        leaf: SkillManifest,
        client: str,
        session: Hashable,
        *,
        choice_id: str | None,
        request: str | None = None,
    ) -> None:
        find = self._picks.follow(client, session=session, choice_id=choice_id, request=request)
        if find is None:
            return
        for row in pick_rows(find, leaf.name, leaf.description, client, self.source):
            self.runner.log.append(row)


def checked_request(request: object) -> str:
    """``request`` as text to route: non-empty, valid UTF-8, at most :data:`MAX_REQUEST_BYTES`."""
    check_text(request)
    assert isinstance(request, str)
    text = request.strip()
    if not text:
        raise InvalidArgumentError("the request is empty: say what is needed")
    size = len(text.encode("utf-8"))
    if size > MAX_REQUEST_BYTES:
        raise InvalidArgumentError(
            f"the request is {size // 1024} KiB; at most {MAX_REQUEST_BYTES // 1024} KiB is routed: say what is needed briefly"
        )
    return text


def skill_folder(leaf: SkillManifest) -> Path | None:
    """The folder of a SKILL.md skill (None for a code skill)."""
    return leaf.source.parent if leaf.is_skill_md and leaf.source is not None else None


def _made_in_log(log: DecisionLog, given: str, client: str) -> str:
    """The find or run ``given`` names (a prefix will do), when ``client`` made it: read from the rows of ``log`` that
    mention ``given`` alone (a scan of its bytes); else a one-line error."""
    rows = list(log.read(mentioning=given))
    run_id = resolve_run_id(given, dict.fromkeys(str(row.run_id) for row in rows), where=str(log.path))
    if not _made_by(rows, run_id, client):
        raise InvalidArgumentError(f"{run_id} is not a find or run of client {client!r}: a client reports on its own")
    return run_id


def _made_by(rows: list[AnyRow], run_id: str, client: str) -> bool:
    """Whether the find or run ``run_id`` is ``client``'s: one of its decisions was logged under the client's name,
    or the client's pick (an implicit label by it) is what made the run."""
    for row in rows:
        if row.run_id != run_id:
            continue
        if isinstance(row, LabelRow):
            if row.source == "implicit" and row.by == client:
                return True
        elif row.extra_field("client") == client:
            return True
    return False
