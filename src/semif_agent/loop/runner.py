"""The skill loop: route -> observe -> predict -> act -> observe -> assess, every decision logged."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._sync import run_sync
from ..contract.admitted import verify_body
from ..engine.base import Engine, check_engine, decide
from ..engine.decisions import DecisionRequest, DecisionResult
from ..errors import InvalidArgumentError, SemifError, SkillError, WorkspaceError, check_type
from ..records import ASSESS_KIND, ROUTE_KIND, DecisionLog, DecisionRow, OutcomeRow
from ..routing.pins import LogPins, is_pinned
from ..skills import ActionResult, Prediction, Request
from ..tree.manifests import SkillManifest
from ..tree.router import Route
from ..tree.tree import SkillTree
from ..workspace import Workspace
from .act_lock import ActLock
from .act_threshold import measured_act_threshold
from .assess import Assessment, assessment_request, needs_judge, settled, weigh
from .before_images import ImageStore
from .confined import run_confined
from .context import BudgetedEngine
from .evidence import gather_evidence, object_vocabulary, read_request, things_named
from .gate import (
    DEFAULT_ACT_THRESHOLD,
    NEGATED,
    OUT_OF_SCOPE,
    GateResult,
    Verdict,
    chosen_by_caller,
    gate_choice,
    gate_route,
    serves_none_example,
)
from .observe import Changes, Observation, diff, observe
from .settings import RunSettings
from .skill_md_run import SkillMdExecutor, SkillMdOutcome, SkillMdRun, show_instructions
from .tracing import PhaseMark, configure_tracing, trace_phase, traced_phase, traced_run
from .undo import keep_before_images

RunStepRow = DecisionRow | OutcomeRow
"""A row one run logs: one of its decisions, or its outcome (the last)."""

HANDED_BACK = "handed_back"  # the outcome of a run the act gate held back: nothing ran
OUTPUT_KEPT = 2000  # characters of a body's printed output kept in its outcome row
# The gate's rules that hold a route back because its skill does not do what the request says (its verb, what it
# acts on) or because it is unsure: the route of the request's plain reading may then take it to another skill.
MOVED_FROM = ("misfit", "off-object", "unsure")


@dataclass
class RunResult:
    """Everything one run did. ``rows`` are the rows it logged, in order: its decisions, then its outcome."""

    run_id: str
    request: Request
    route: Route
    action: ActionResult
    assessment: Assessment
    prediction: Prediction | None = None
    changes: Changes = field(default_factory=Changes)
    rows: list[RunStepRow] = field(default_factory=list)
    log_path: Path | None = None
    error: str | None = None
    instructions: str | None = None  # a SKILL.md skill's instructions, when they were handed back rather than followed
    gate: GateResult | None = None  # what the act gate read and decided (None: the route ended at none)

    @property
    def skill(self) -> str | None:
        return self.route.skill.name if self.route.skill else None

    @property
    def handed_back(self) -> bool:
        """Nothing acted on the request: the route ended at none, or the gate did not let the chosen skill act
        (unsure, a lookup to a skill that writes...)."""
        return self.route.skill is None or (self.gate is not None and self.gate.handed_back)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "request": {"id": self.request.id, "text": self.request.text},
            "skill": self.skill,
            "route_reason": self.route.reason,
            "prediction": self.prediction.text if self.prediction else None,
            "action_log": self.action.action_log,
            "new_state": self.action.new_state,
            "changes": self.changes.to_dict(),
            "assessment": self.assessment.to_dict(),
            "error": self.error,
            "instructions": self.instructions,
            "handed_back": self.handed_back,
            "gate": self.gate.to_dict() if self.gate is not None else None,
            "decisions": [row.to_row() for row in self.rows if isinstance(row, DecisionRow)],
            "log": str(self.log_path) if self.log_path else None,
        }


class SkillRunner:
    """Runs requests against a workspace's skill tree.

    ``engine`` answers routing and the skills' sub-decisions; ``judge`` answers
    the assessment; ``strategy`` walks ``tree``; decision rows are appended to
    ``log`` as they are made, so a crash mid-run keeps everything decided so far.
    Every part not given is built from the settings (:class:`.settings.RunSettings`):
    ``SkillRunner(workspace)`` resolves the workspace's, with ``body_timeout`` and
    ``allow_scripts`` given instead when passed; :meth:`from_settings` takes settings
    resolved already (the command line's over the workspace's).

    The tree holds the workspace's code skills and SKILL.md skills. A route
    that ends at a SKILL.md skill is followed by ``skill_md_executor`` (see
    :mod:`.skill_md_run`; default: show its instructions, or run its script
    when the settings allow scripts).

    ``act_lock`` (an async context manager; default: the workspace's
    :class:`.act_lock.ActLock`) is held from the snapshot of the write dirs
    before a skill acts to the one after: runs in several processes sharing
    one workspace act one at a time, so the changes each records are its own.
    What a run changes is kept to be undone (:mod:`.undo`).
    """

    def __init__(
        self,
        workspace: Workspace | RunSettings,
        *,
        engine: Engine | None = None,
        judge: Engine | None = None,
        tree: SkillTree | None = None,
        log: DecisionLog | None = None,
        skill_md_executor: SkillMdExecutor | None = None,
        on_row: Callable[[RunStepRow], None] | None = None,
        act_lock: contextlib.AbstractAsyncContextManager[Any] | None = None,
        body_timeout: float | None = None,
        allow_scripts: bool | None = None,
    ) -> None:
        for engine_given in (engine, judge):
            if engine_given is not None:
                check_engine(engine_given)
        if isinstance(workspace, RunSettings):
            if body_timeout is not None or allow_scripts is not None:
                raise InvalidArgumentError(
                    "body_timeout and allow_scripts are settings: give them to RunSettings.resolve"
                )
            settings = workspace
        else:
            check_type("workspace", workspace, Workspace)
            settings = RunSettings.resolve(workspace, engine=engine, timeout=body_timeout, allow_scripts=allow_scripts)
        self.settings = settings
        self.workspace = settings.needs_workspace("a runner")
        self.engine = engine or settings.build_engine()
        self.judge = judge or settings.build_judge(self.engine)
        self.tree = tree or settings.build_tree(self.engine)
        self.strategy = settings.build_strategy(self.tree, self.engine)
        self.log = log or settings.build_log()
        self.pins = LogPins(self.log)  # the requests people labelled route where their labels say
        self.body_timeout = settings.timeout
        self.allow_scripts = settings.allow_scripts
        self.warm_processes = settings.warm_processes
        self.skill_md_executor = skill_md_executor or show_instructions
        self.on_row = on_row
        self.act_lock = act_lock or ActLock.of(self.workspace)
        self._act_threshold: float | None = None
        self._none_routes: dict[str, Route] = {}  # the route of each none example rule 3 weighed (see _decide)
        # progress(stage, done, total) of long work a run may start (measuring the act threshold), e.g. a bar
        self.progress: Callable[[str, int, int], None] | None = None
        configure_tracing(self.workspace)

    @classmethod
    def from_settings(cls, settings: RunSettings, **parts: Any) -> SkillRunner:
        """The runner ``settings`` describe; ``parts`` (``engine``, ``tree``, ``log``... as :class:`SkillRunner`
        takes them, the settings aside) are used as they are, built already (a tree loaded with a progress bar...)."""
        check_type("settings", settings, RunSettings)
        return cls(settings, **parts)

    def run(
        self,
        text: str | Request,
        *,
        skill: str | None = None,
        yes: bool = False,
        proposed: bool = False,
        held_back: tuple[str, str] | None = None,
        client: str | None = None,
    ) -> RunResult:
        return run_sync(self.arun(text, skill=skill, yes=yes, proposed=proposed, held_back=held_back, client=client))

    @traced_run
    async def arun(
        self,
        text: str | Request,
        *,
        skill: str | None = None,
        yes: bool = False,
        proposed: bool = False,
        held_back: tuple[str, str] | None = None,
        client: str | None = None,
    ) -> RunResult:
        """Route ``text`` (or go straight to ``skill``), pass the act gate (:mod:`.gate`), run the leaf, assess it.

        A request the gate holds back is handed back, logged with the outcome ``handed_back``; ``yes`` acts anyway.
        A ``proposed`` skill (the Agent's model chose it) is not taken as named: the request is routed all the
        same, and the skill passes the gate as the route's end (:func:`.gate.gate_choice`). ``held_back`` (a
        rule and a reason) hands a named ``skill`` back: the caller was told so for this request (a find).
        """
        request = text if isinstance(text, Request) else Request(text)
        run = _Run(self, request, client=client)
        if skill is not None and not (proposed and not yes):
            chosen = self.tree.get(skill)
            route = Route(skill=chosen, reason="chosen by the caller")
            threshold = self.settings.act_threshold or DEFAULT_ACT_THRESHOLD
            run.gate = chosen_by_caller(chosen, request.text, threshold, held_back=None if yes else held_back)
        else:
            with traced_phase("route", run.rows) as phase:
                if skill is None:
                    verdict = await self.adecide(request.text, yes=yes)
                    route, run.gate = verdict.route, verdict.gate
                    for step in verdict.set_aside.decisions if verdict.set_aside is not None else ():
                        run.log(step.request, step.result, kind=ROUTE_KIND, level=step.level, set_aside=True)
                    read_as = {"read_as": run.gate.read_as} if run.gate is not None and run.gate.read_as else {}
                    for step in route.decisions:
                        run.log(step.request, step.result, kind=ROUTE_KIND, level=step.level, **read_as)
                else:
                    route = await self.strategy.aroute(request.text)
                    for step in route.decisions:
                        run.log(step.request, step.result, kind=ROUTE_KIND, level=step.level)
                    threshold = await self.aact_threshold()
                    route, run.gate = gate_choice(
                        route,
                        self.tree.get(skill),
                        request.text,
                        self.tree,
                        self.engine,
                        threshold=threshold,
                        can_act=self.can_act,
                    )
                phase.skill = route.skill.name if route.skill else None
        return await run.execute(route)

    def decide(self, text: str, *, yes: bool = False) -> Verdict:
        return run_sync(self.adecide(text, yes=yes))

    async def adecide(self, text: str, *, yes: bool = False) -> Verdict:
        """What a run of ``text`` would do, acting on nothing: the route, read by the act gate (:mod:`.gate`) at
        the threshold this runner acts at. ``semif run`` acts on it; ``semif route`` and ``find_skills`` show it.

        A request in everyday phrasing the route does not act on ("Don't let me forget to call the plumber",
        "Write to my sister that I'll bring dessert") is routed a second time in the plain words the gate read it
        as ("remind me to call the plumber", "message my sister that I'll bring dessert": :mod:`.phrasing`): the
        skills' own words are plain ones, so the plain request is scored against what they say. That route stands
        when it acts, by the gate read on the plain words and again on the request as written (a write reached
        through a rewrite passes every rule the request as written would meet: what it says not to do, out of
        scope, the threshold, the margin over a skill its words name), and when the first route found none, ended
        at the same skill, or was held back because its skill does not do what the request says or was unsure
        (:data:`MOVED_FROM`); never when the first route acted, nor to a skill that names none of the things the
        request names to write into ("the Johnson family list" is no email, whatever email.compose says). Both routes' decisions are about the request as
        written (the first set aside, :attr:`.gate.Verdict.set_aside`); the gate's result says what it was read as
        and where the route as written went. A request that says not to act, or that is out of scope, is not read
        again.
        """
        verdict, _ = await self._decide(text, text, yes)
        if verdict.acts or verdict.rule in (NEGATED, OUT_OF_SCOPE) or is_pinned(verdict.route):
            return verdict
        plain = read_request(text).plain
        if plain is None or plain.strip().lower() == text.strip().lower():
            return verdict
        second, routed = await self._decide(plain, text, yes)
        if not second.acts or second.gate is None:
            return verdict
        if verdict.skill not in (None, second.skill) and verdict.rule not in MOVED_FROM:
            return verdict
        if verdict.skill != second.skill and self._names_no_thing_of(text, second.skill):
            return verdict  # "Write to the Johnson family list: ..." names a list, which email.compose does not write
        _, as_written = gate_route(
            routed, text, self.tree, self.engine, threshold=await self.aact_threshold(), yes=yes, can_act=self.can_act
        )
        if as_written is None or not as_written.acts or as_written.skill != second.skill:
            return verdict  # the plain words pass where the request as written would not: it stays handed back
        gate = dataclasses.replace(
            second.gate,
            reason=f"{second.gate.reason}, read as {plain!r}",
            read_as=plain,
            as_written=f"{verdict.skill or 'none'}: {verdict.reason}",
        )
        return Verdict(second.route, gate, set_aside=verdict.route)

    def _names_no_thing_of(self, text: str, skill: str | None) -> bool:
        """Whether ``text`` names things to write into (a list, a calendar: :func:`.evidence.things_named`) and
        ``skill`` names none of them."""
        named = things_named(text)
        return skill is not None and bool(named) and not named & object_vocabulary(self.tree.get(skill))

    async def _decide(self, routed: str, text: str, yes: bool) -> tuple[Verdict, Route]:
        """The verdict on ``routed`` (``text``, or its plain reading), and the route before the gate read it; its
        decisions are about ``text`` as written. A request a person labelled (``text`` as written) goes where the
        label says (:mod:`~semif_agent.routing.pins`), whatever the strategy would say."""
        route = self.pins.route(self.tree, text) or await self.strategy.aroute(routed)
        if routed != text:
            decisions = [
                dataclasses.replace(d, request=dataclasses.replace(d.request, state=text)) for d in route.decisions
            ]
            route = dataclasses.replace(route, decisions=decisions)
        threshold = await self.aact_threshold()
        set_aside: list[str] = []
        while True:
            gated, gate = gate_route(
                route,
                routed,
                self.tree,
                self.engine,
                threshold=threshold,
                yes=yes,
                can_act=self.can_act,
                set_aside=set_aside,
            )
            if gate is None or gate.rule != OUT_OF_SCOPE or gate.nearest_none is None or gate.skill is None:
                return Verdict(gated, gate), route
            example = gate.nearest_none
            if example not in self._none_routes:
                self._none_routes[example] = await self.strategy.aroute(example)
            if not serves_none_example(self.tree.skills[gate.skill], self._none_routes[example], threshold):
                return Verdict(gated, gate), route
            set_aside.append(example)  # the chosen skill serves this none example: the next nearest is weighed

    async def aact_threshold(self) -> float:
        """How sure a route must be for a skill that writes to act: ``[routing] act_threshold`` (or the
        caller's), else the one measured on the workspace's examples and labels (:mod:`.act_threshold`)."""
        given = self.settings.act_threshold
        if given is not None:
            return float(given)
        if self._act_threshold is None:
            self._act_threshold = (await measured_act_threshold(self)).threshold
        return self._act_threshold

    def can_act(self, skill: SkillManifest) -> bool:
        """Whether ``skill`` can change anything in this runner: a code skill's body, or a SKILL.md skill followed."""
        if skill.is_skill_md:
            return self.allow_scripts or self.skill_md_executor is not show_instructions
        return not skill.is_stub


@dataclass
class _Acted:
    """What the skill changed while the run held the act lock."""

    changes: Changes = field(default_factory=Changes)
    refused: str | None = None  # the tree the block left that the host will not walk, when it was not there before


class _Run:
    """The state of one run: its id, step counter and logged rows."""

    def __init__(self, runner: SkillRunner, request: Request, *, client: str | None = None) -> None:
        self.runner = runner
        self.request = request
        self.tags: dict[str, Any] = {"client": client} if client else {}  # on every row: who asked for the run
        self.workspace = runner.workspace.at_run_start()  # the run's paths, each resolved once
        self.run_id = request.id
        self.rows: list[RunStepRow] = []
        self.skill: str | None = None
        self.gate: GateResult | None = None
        self.output: dict[str, str] = {}  # what a confined body printed, kept apart from the host's output

    def log(self, asked: DecisionRequest, answer: DecisionResult, *, kind: str, **extra: Any) -> None:
        row = DecisionRow.of(
            run_id=self.run_id,
            step=len(self.rows) + 1,
            kind=kind,
            skill=self.skill,
            request=asked,
            result=answer,
            request_id=self.request.id,
            **self.tags,
            **extra,
        )
        self._append(row)

    def _append(self, row: RunStepRow) -> None:
        self.runner.log.append(row)
        self.rows.append(row)
        if self.runner.on_row is not None:
            self.runner.on_row(row)

    async def execute(self, route: Route) -> RunResult:
        text = self.request.text
        if route.skill is None:
            action = ActionResult(action_log=f"No skill handled the request: {route.reason}.", new_state=text)
            reason = route.reason or "no skill fits the request"
            return self.finish(
                route, action, settled("unclear", reason, gather_evidence(text, action, Changes()), "no skill")
            )
        skill = route.skill
        self.skill = skill.name
        if self.gate is not None and self.gate.handed_back:
            action = ActionResult(action_log=f"{skill.name} did not act: {self.gate.reason}.", new_state=text)
            evidence = gather_evidence(text, action, Changes(), skill=skill)
            return self.finish(route, action, settled(HANDED_BACK, self.gate.reason, evidence, "gate"))
        try:  # a skill of an earlier run may have put a link on the way to a write dir
            self.workspace.check_write_dirs()
        except WorkspaceError as exc:
            action = ActionResult(action_log=f"{skill.name} did not run: {exc}", new_state=text)
            assessment = await self.assess(action, Changes(), error=str(exc), skill=skill)
            return self.finish(route, action, assessment, error=str(exc))
        if skill.is_skill_md:
            return await self.run_skill_md(route, skill)
        if skill.is_stub:
            action = ActionResult(
                action_log=f"{skill.name}: this skill is a stub (no body at {skill.body_path}); nothing was done.",
                new_state=text,
            )
            evidence = gather_evidence(text, action, Changes(), skill=skill)
            return self.finish(route, action, settled("failure", "the skill is a stub", evidence, "stub"))
        try:
            source = verify_body(self.workspace, skill)  # a body changed since it passed is checked again
        except SkillError as exc:
            action = ActionResult(action_log=f"{skill.name}: cannot load the skill: {exc}", new_state=text)
            assessment = await self.assess(action, Changes(), error=str(exc), skill=skill)
            return self.finish(route, action, assessment, error=str(exc))
        return await self.run_body(route, skill, source)

    async def run_body(self, route: Route, skill: SkillManifest, source: str) -> RunResult:
        """Run the body (``source``, as verified) in a confined child; its engine calls are answered, counted and logged here."""
        engine = BudgetedEngine(self.runner.engine, skill.cost_budget, skill.name)
        with traced_phase("predict", self.rows, skill=skill.name) as predict:
            async with self.acting() as acted:
                outcome = await run_confined(
                    skill,
                    source,
                    self.request,
                    workspace=self.workspace,
                    engine=engine,
                    run_id=self.run_id,
                    timeout=self.runner.body_timeout,
                    warm=self.runner.warm_processes,
                )
            logged = len(self.rows)
            for index, (asked, answer) in enumerate(engine.decisions):
                self.log(asked, answer, kind="predict" if index < outcome.predicted else "act")
            if outcome.predicted_ns is not None:  # else predict never returned: the whole body was its predict
                predict.kinds, predict.end_ns = ("predict",), outcome.predicted_ns
        if outcome.predicted_ns is not None:
            trace_phase("act", PhaseMark(outcome.predicted_ns, logged), self.rows, skill=skill.name, kinds=("act",))
        prediction = Prediction(outcome.prediction) if outcome.prediction is not None else None
        error = outcome.error or acted.refused
        if outcome.action is not None:
            action = ActionResult(action_log=outcome.action[0], new_state=outcome.action[1])
        else:
            action = ActionResult(action_log=f"{skill.name}: {error}", new_state=self.request.text)
        self.output = {k: v for k, v in (("stdout", outcome.stdout), ("stderr", outcome.stderr)) if v}
        if engine.overrun and error is None:
            error = f"exceeded its cost_budget of {skill.cost_budget} engine calls"
            action = ActionResult(action_log=f"{skill.name}: {error} ({action.action_log})", new_state=action.new_state)
        changes = acted.changes
        assessment = await self.assess(action, changes, error=error, skill=skill, decisions=engine.decisions)
        return self.finish(route, action, assessment, prediction=prediction, changes=changes, error=error)

    async def run_skill_md(self, route: Route, skill: SkillManifest) -> RunResult:
        """Follow a SKILL.md skill with the runner's executor, then observe and assess like any run."""
        run = SkillMdRun(
            self.request,
            skill,
            self.workspace,
            self.run_id,
            allow_scripts=self.runner.allow_scripts,
            log_decision=lambda asked, answer, kind: self.log(asked, answer, kind=kind),
        )
        error: str | None = None
        with traced_phase("act", self.rows, skill=skill.name) as act:
            async with self.acting() as acted:
                try:
                    outcome = await self.runner.skill_md_executor(run)
                except Exception as exc:  # noqa: BLE001 - a failure to follow the skill becomes a logged result, never a crash
                    error = f"following the skill failed: {type(exc).__name__}: {exc}"
                    outcome = SkillMdOutcome(ActionResult(f"{skill.name}: {error}", self.request.text))
            error = act.error = error or acted.refused
        changes = acted.changes
        if (
            outcome.instructions is not None and not error
        ):  # handed to the user: nobody acted, so there is nothing to judge yet
            evidence = gather_evidence(self.request.text, outcome.action, changes, skill=skill)
            assessment = settled(
                "unclear", "its instructions were handed back; nobody followed them yet", evidence, "instructions"
            )
        else:
            assessment = await self.assess(outcome.action, changes, error=error, skill=skill, judge=outcome.judge)
        return self.finish(
            route, outcome.action, assessment, changes=changes, error=error, instructions=outcome.instructions
        )

    @contextlib.asynccontextmanager
    async def acting(self) -> AsyncIterator[_Acted]:
        """Hold the act lock from a snapshot of the write dirs (with before-images) to the one after what the block
        did; then ``changes`` are the block's, and their before-images are kept for ``semif undo``."""
        acted = _Acted()
        ws = self.workspace
        async with self.runner.act_lock:
            before = self._observe()
            images = ImageStore.of(ws).keep(before)  # reads only the files changed since they were last kept
            try:
                yield acted
                after = self._observe(since=before)
                planted = [line for line in after.refused if line not in before.refused]
                if planted:  # this run's failure, not the next run's (which finds it there before it acts)
                    acted.refused = f"left a tree the host will not walk: {'; '.join(planted)}"
                acted.changes = diff(before, after, before_shas=images.shas, before_text=images.text_of)
                keep_before_images(ws, self.run_id, before, after, acted.changes, images)
            finally:
                images.release()

    def _observe(self, since: Observation | None = None) -> Observation:
        """The data dirs now, less the workspace's own records (the decision and model-call logs); after the run
        (``since`` the snapshot before), the texts and hashes of the files it changed."""
        ws = self.workspace
        return observe(
            ws.write_roots,
            ignore=(ws.resolve(os.path.abspath(self.runner.log.path)), ws.model_calls_path),
            base=ws.root,
            texts=since is not None,
            since=since,
        )

    async def assess(
        self,
        action: ActionResult,
        changes: Changes,
        *,
        error: str | None = None,
        skill: SkillManifest | None = None,
        decisions: Iterable[tuple[DecisionRequest, DecisionResult]] = (),
        judge: Engine | None = None,
    ) -> Assessment:
        """The run's label: the judge's verdict (``judge``, else the runner's) weighed against what the run did."""
        evidence = gather_evidence(self.request.text, action, changes, error=error, skill=skill, decisions=decisions)
        if not needs_judge(evidence):
            return weigh(evidence)
        asked = assessment_request(self.request.text, action.action_log, changes)
        with traced_phase("assess", self.rows, skill=self.skill) as assess:
            try:
                answer = await decide(judge or self.runner.judge, asked)
            except SemifError as exc:
                assess.error = str(exc)
                return weigh(evidence, judge_error=str(exc))
            self.log(asked, answer, kind=ASSESS_KIND)
        return weigh(evidence, (asked, answer))

    def finish(
        self,
        route: Route,
        action: ActionResult,
        assessment: Assessment,
        *,
        prediction: Prediction | None = None,
        changes: Changes | None = None,
        error: str | None = None,
        instructions: str | None = None,
    ) -> RunResult:
        changes = changes or Changes()
        if self.gate is not None:  # what the gate read and did rides with the evidence the assessment weighed
            assessment.evidence = {**assessment.evidence, "gate": self.gate.to_dict()}
        self._append(
            OutcomeRow(
                run_id=self.run_id,
                skill=self.skill,
                request_id=self.request.id,
                request=self.request.text,
                outcome=assessment.label,
                reason=assessment.reason,
                prediction=prediction.text if prediction is not None else None,
                action_log=action.action_log,
                new_state=action.new_state,
                changes=changes.to_dict(),
                diffs=changes.diffs or None,
                error=error,
                evidence=assessment.evidence,
                output={k: v[:OUTPUT_KEPT] for k, v in self.output.items()} or None,
                **self.tags,
            )
        )
        return RunResult(
            run_id=self.run_id,
            request=self.request,
            route=route,
            action=action,
            assessment=assessment,
            prediction=prediction,
            changes=changes,
            rows=self.rows,
            log_path=self.runner.log.path,
            error=error,
            instructions=instructions,
            gate=self.gate,
        )
